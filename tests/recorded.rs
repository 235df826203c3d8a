//! A tool that records its answer with its effect (`SqliteTransaction`), on SQLite: its
//! effect and its answer commit in one transaction of the application's, the reply is the
//! very bytes recorded, every replay gives them again, and a lease that passed before the
//! transaction began writes nothing, and the caller is told so with the key released.
#![cfg(feature = "sqlite")]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_tool_result::guarantee::{Answer, GuaranteeResult, Refusal, RefusalKind};
use agent_tool_result::replay::{
    Abandoned, Call, Done, EffectProbe, IdempotencyKey, Lease, ReplyKind, Sequence, SqliteLedger,
    SqliteTransaction, StoredAnswer,
};
use rusqlite::{Connection, params};
use serde_json::json;

/// A database file of its own, removed when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("atr-recorded-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn db(&self) -> PathBuf {
        self.0.join("app.db")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The application's probe: an abandoned key's call took effect if its note is there.
struct NoteWritten(PathBuf);

impl EffectProbe for NoteWritten {
    type Error = rusqlite::Error;

    async fn started(&self, abandoned: &Abandoned) -> Result<bool, rusqlite::Error> {
        effects(&self.0).query_row(
            "SELECT EXISTS (SELECT 1 FROM notes WHERE key = ?1)",
            [abandoned.lease().key().as_str()],
            |row| row.get(0),
        )
    }
}

fn call(key: &str) -> Call {
    Call::of(
        "send_note",
        "acct_1",
        IdempotencyKey::new(key).unwrap(),
        &json!({"to": "+15550100"}),
    )
}

/// The application's own table, in the ledger's file.
fn effects(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS notes (key TEXT NOT NULL, fence INTEGER NOT NULL)",
    )
    .unwrap();
    conn
}

fn notes(path: &Path) -> i64 {
    effects(path)
        .query_row("SELECT count(*) FROM notes", [], |row| row.get(0))
        .unwrap()
}

/// How the tool writes its note.
#[derive(Clone, Copy, Debug)]
enum Write {
    /// In a transaction begun with its fence checked, then the commit.
    Apart,
    /// With the record, in the one-write transaction (`commit_one`).
    One,
}

/// The tool: after `pause` (a stall before the effect), writes its note and records
/// `answer` under `lease` in one fenced transaction, as `write` says: both commit, or
/// neither.
fn send_note(path: &Path, lease: &Lease, answer: &Answer, pause: Duration, write: Write) -> Done {
    std::thread::sleep(pause);
    let mut conn = effects(path);
    let insert = "INSERT INTO notes (key, fence) VALUES (?1, ?2)";
    let note = params![lease.key().as_str(), lease.fence().as_i64()];
    let done = (|| match write {
        Write::Apart => {
            let tx = SqliteTransaction::begin(&mut conn, lease)?;
            tx.execute(insert, note)?;
            tx.commit(answer.clone())
        }
        Write::One => SqliteTransaction::commit_one(&mut conn, lease, insert, note, answer.clone()),
    })();
    done.unwrap_or_else(Done::from)
}

fn committed(id: &str) -> Answer {
    GuaranteeResult::committed()
        .with_fields(json!({"noteId": id}).as_object().unwrap().clone())
        .unwrap()
        .into()
}

#[tokio::test]
async fn a_recorded_answer_is_the_reply_and_every_replay_byte_for_byte() {
    for write in [Write::Apart, Write::One] {
        recorded_and_replayed(write).await;
    }
}

async fn recorded_and_replayed(write: Write) {
    let scratch = Scratch::new(&format!("replay-{write:?}"));
    let path = scratch.db();
    let sequence = Sequence::new(SqliteLedger::open(&path).unwrap());
    let runs = AtomicUsize::new(0);
    let tool = |lease: Lease| {
        runs.fetch_add(1, Ordering::SeqCst);
        let path = path.clone();
        async move { send_note(&path, &lease, &committed("note_1"), Duration::ZERO, write) }
    };

    let first = sequence.run_recording(call("k-1"), tool).await;
    assert_eq!(first.kind(), ReplyKind::Ran);
    assert_eq!(
        first.stored().json(),
        StoredAnswer::of(&committed("note_1")).unwrap().json()
    );
    assert_eq!(first.answer(), &committed("note_1"));

    for _ in 0..3 {
        let again = sequence.run_recording(call("k-1"), tool).await;
        assert_eq!(again.kind(), ReplyKind::Replayed);
        assert_eq!(again.stored().json(), first.stored().json());
        assert_eq!(again.answer(), first.answer());
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "replays run nothing");
    assert_eq!(notes(&path), 1, "one note, written with its answer");
}

#[tokio::test]
async fn a_lease_that_passed_records_nothing_and_its_effect_rolls_back() {
    for write in [Write::Apart, Write::One] {
        late(write).await;
    }
}

async fn late(write: Write) {
    let scratch = Scratch::new(&format!("late-{write:?}"));
    let path = scratch.db();
    let sequence = Sequence::new(
        SqliteLedger::open(&path)
            .unwrap()
            .with_lease(Duration::from_millis(50)),
    )
    .with_probe(NoteWritten(path.clone()));

    let late = sequence
        .run_recording(call("k-2"), |lease: Lease| {
            let path = path.clone();
            async move {
                send_note(
                    &path,
                    &lease,
                    &committed("note_2"),
                    Duration::from_millis(150),
                    write,
                )
            }
        })
        .await;
    assert_eq!(
        late.answer().refusal().map(Refusal::kind),
        Some(RefusalKind::Unavailable),
        "a passed lease writes nothing, and says so: {:?}",
        late.answer()
    );
    assert_eq!(
        notes(&path),
        0,
        "nothing was written under the passed lease"
    );

    // The key was released (the probe found no note): the same request runs, and records
    // under a new fence.
    let next = sequence
        .run_recording(call("k-2"), |lease: Lease| {
            let path = path.clone();
            async move { send_note(&path, &lease, &committed("note_2"), Duration::ZERO, write) }
        })
        .await;
    assert_eq!(next.answer(), &committed("note_2"));
    assert_eq!(notes(&path), 1);
}

/// A call whose effect is in the ledger's database begins its key in the effect's own
/// transaction: the reply is recorded with the effect, a replay gives it again, the same key
/// run meanwhile by another caller rolls back and replays the first's answer, and a
/// transaction that never commits leaves neither the effect nor the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_call_whose_effect_is_in_the_ledger_begins_its_key_in_that_transaction() {
    let scratch = Scratch::new("folded");
    let path = scratch.db();
    let sequence = std::sync::Arc::new(Sequence::new(SqliteLedger::open(&path).unwrap()));
    let folded = |key: &str| call(key).with_effect_in_ledger();

    let first = sequence
        .run_recording(folded("f-1"), |lease: Lease| {
            let path = path.clone();
            async move {
                send_note(
                    &path,
                    &lease,
                    &committed("note_f"),
                    Duration::ZERO,
                    Write::One,
                )
            }
        })
        .await;
    assert_eq!(first.kind(), ReplyKind::Ran);
    assert_eq!(first.answer(), &committed("note_f"));
    let again = sequence
        .run_recording(folded("f-1"), |lease: Lease| {
            let path = path.clone();
            async move {
                send_note(
                    &path,
                    &lease,
                    &committed("other"),
                    Duration::ZERO,
                    Write::One,
                )
            }
        })
        .await;
    assert_eq!(again.kind(), ReplyKind::Replayed);
    assert_eq!(again.stored(), first.stored());
    assert_eq!(notes(&path), 1);

    // Never committed (the process stopped inside its transaction): nothing is left, and the
    // same request runs.
    let stopped = sequence
        .run_recording(folded("f-2"), |lease: Lease| {
            let path = path.clone();
            async move {
                let mut conn = effects(&path);
                let tx = SqliteTransaction::begin(&mut conn, &lease).unwrap();
                tx.execute("INSERT INTO notes (key, fence) VALUES ('f-2', 0)", [])
                    .unwrap();
                drop(tx);
                Done::<agent_tool_result::JsonObject>::Answer(
                    Refusal::unavailable("stopped").into(),
                )
            }
        })
        .await;
    assert!(stopped.answer().refusal().is_some());
    assert_eq!(notes(&path), 1, "the effect rolled back with the key");
    let ran = sequence
        .run_recording(folded("f-2"), |lease: Lease| {
            let path = path.clone();
            async move {
                send_note(
                    &path,
                    &lease,
                    &committed("note_f2"),
                    Duration::ZERO,
                    Write::Apart,
                )
            }
        })
        .await;
    assert_eq!(ran.kind(), ReplyKind::Ran);

    // Two callers of one key at once: one effect, one answer for both.
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let (sequence, path) = (std::sync::Arc::clone(&sequence), path.clone());
            tokio::spawn(async move {
                sequence
                    .run_recording(folded("f-3"), move |lease: Lease| async move {
                        send_note(
                            &path,
                            &lease,
                            &committed("note_f3"),
                            Duration::from_millis(50),
                            Write::One,
                        )
                    })
                    .await
            })
        })
        .collect();
    let mut replies = Vec::new();
    for run in runs {
        replies.push(run.await.unwrap());
    }
    assert_eq!(replies[0].stored(), replies[1].stored());
    assert_eq!(notes(&path), 3, "one note for f-3");
}
