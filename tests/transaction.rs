//! The typed transaction on PostgreSQL (`PostgresTransaction`), against a server the test
//! starts: a tool's writes and its answer commit together under its lease's fence, or, for a
//! call whose effect is in the ledger (`Call::with_effect_in_ledger`), with its key begun in
//! the same transaction; the same with the effect and its answer in one statement
//! (`PostgresTransaction::commit_one`); a replay runs nothing that stays, racing callers of one
//! key make one effect and get one answer, and a lease lost before the effect writes nothing.
#![cfg(feature = "postgres")]

use crate::postgres;

use crate::keyed_answers as answers;

use std::sync::Arc;
use std::time::Duration;

use agent_tool_result::guarantee::{Answer, RefusalKind};
use agent_tool_result::replay::{
    Call, Done, IdempotencyKey, Lease, PostgresLedger, PostgresTransaction, ReplyKind, Sequence,
    TransactionError,
};
use serde_json::json;
use tokio_postgres::types::Type;

fn call(key: &str) -> Call {
    Call::of(
        "send_note",
        "acct_tx",
        IdempotencyKey::new(key).unwrap(),
        &json!({ "note": key }),
    )
}

fn committed(note: &str) -> Answer {
    answers::committed_with("note", note)
}

/// How the tool writes its note.
#[derive(Clone, Copy, Debug)]
enum Write {
    /// A statement of its own in the transaction, then the commit.
    Apart,
    /// In the record's statement, at the commit (`commit_with`).
    Last,
    /// With the record, in one statement that is its own transaction (`commit_one`).
    One,
}

/// The tool: after `pause`, writes its note (`write`) and commits its answer, under `lease`.
async fn send_note(
    ledger: &PostgresLedger,
    lease: &Lease,
    note: &str,
    pause: Duration,
    write: Write,
) -> Done {
    tokio::time::sleep(pause).await;
    let written = async {
        let mut client = ledger
            .connections()
            .get()
            .await
            .map_err(|err| TransactionError::Failed(err.into()))?;
        let insert = "INSERT INTO notes (key, note) VALUES ($1, $2)";
        let key = lease.key().as_str().to_owned();
        let params: [(&(dyn tokio_postgres::types::ToSql + Sync), Type); 2] =
            [(&key, Type::TEXT), (&note, Type::TEXT)];
        if let Write::One = write {
            return PostgresTransaction::commit_one(
                &mut client,
                lease,
                insert,
                &params,
                committed(note),
            )
            .await;
        }
        let tx = PostgresTransaction::begin(&mut client, lease).await?;
        if let Write::Last = write {
            tx.commit_with(insert, &params, committed(note)).await
        } else {
            tx.execute_typed(insert, &params).await?;
            tx.commit(committed(note)).await
        }
    };
    written.await.unwrap_or_else(Done::from)
}

async fn notes(ledger: &PostgresLedger, key: &str) -> i64 {
    let client = ledger.connections().get().await.unwrap();
    client
        .query_one("SELECT count(*) FROM notes WHERE key = $1", &[&key])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_and_answers_commit_together_on_postgres() {
    let server = postgres::Postgres::start();
    let url = server.database("transactions");
    let ledger = PostgresLedger::connect(&url)
        .await
        .unwrap()
        .with_lease(Duration::from_millis(400));
    ledger
        .connections()
        .get()
        .await
        .unwrap()
        .batch_execute("CREATE TABLE notes (key text NOT NULL, note text NOT NULL)")
        .await
        .unwrap();
    let sequence = Arc::new(Sequence::new(ledger));

    for folded in [false, true] {
        for write in [Write::Apart, Write::Last, Write::One] {
            one_way(&sequence, folded, write).await;
        }
    }
    // A replay finds its key begun as its transaction begins, before the tool's writes: no
    // statement of its fails (the record's guard, a division by zero, is for a key begun
    // while the transaction was open), so the server logs no error and the connection is
    // kept.
    let log = std::fs::read_to_string(server.dir().join("server.log")).unwrap();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(errors.is_empty(), "{errors:#?}");

    for write in [Write::Apart, Write::One] {
        lease_passed(&sequence, write).await;
    }
}

/// A lease that passed before the tool's transaction began (or its one statement was sent):
/// nothing is written, and the caller is told so, with the key released.
async fn lease_passed(sequence: &Arc<Sequence<PostgresLedger>>, write: Write) {
    let ledger = || sequence.ledger();
    let key = format!("late-{write:?}");
    let late = sequence
        .run_recording(call(&key), |lease: Lease| async move {
            std::thread::sleep(Duration::from_millis(600));
            send_note(ledger(), &lease, "late", Duration::ZERO, write).await
        })
        .await;
    assert_eq!(
        late.answer()
            .refusal()
            .map(agent_tool_result::guarantee::Refusal::kind),
        Some(RefusalKind::Unavailable),
        "{:?}",
        late.answer()
    );
    assert_eq!(notes(ledger(), &key).await, 0, "{key}");
    let next = sequence
        .run_recording(call(&key), |lease: Lease| async move {
            send_note(ledger(), &lease, "late", Duration::ZERO, write).await
        })
        .await;
    assert_eq!(next.kind(), ReplyKind::Ran, "{key}");
    assert_eq!(notes(ledger(), &key).await, 1, "{key}");
}

/// A call, its replay and a race of six callers of one key, one way: fenced or with its key
/// begun in its transaction (`folded`), its note written as `write` says.
async fn one_way(sequence: &Arc<Sequence<PostgresLedger>>, folded: bool, write: Write) {
    let ledger = || sequence.ledger();
    let key = format!("k-{folded}-{write:?}");
    let make = || {
        let call = call(&key);
        if folded {
            call.with_effect_in_ledger()
        } else {
            call
        }
    };
    let first = sequence
        .run_recording(make(), |lease: Lease| async move {
            send_note(ledger(), &lease, "first", Duration::ZERO, write).await
        })
        .await;
    assert_eq!(first.kind(), ReplyKind::Ran, "{key}: {:?}", first.answer());
    assert_eq!(first.answer(), &committed("first"), "{key}");
    let again = sequence
        .run_recording(make(), |lease: Lease| async move {
            send_note(ledger(), &lease, "again", Duration::ZERO, write).await
        })
        .await;
    assert_eq!(again.kind(), ReplyKind::Replayed, "{key}");
    assert_eq!(again.stored(), first.stored(), "{key}");
    assert_eq!(
        notes(ledger(), &key).await,
        1,
        "{key}: one note, with its answer"
    );

    // Racing callers of a new key: one note, one answer for all.
    let race = format!("{key}-race");
    let runs: Vec<_> = (0..6)
        .map(|i| {
            let (sequence, call) = (Arc::clone(sequence), {
                let call = call(&race);
                if folded {
                    call.with_effect_in_ledger()
                } else {
                    call
                }
            });
            tokio::spawn(async move {
                let ledger = sequence.ledger();
                sequence
                    .run_recording(call, |lease: Lease| async move {
                        let note = format!("racer-{i}");
                        send_note(ledger, &lease, &note, Duration::from_millis(20), write).await
                    })
                    .await
            })
        })
        .collect();
    let mut answered = Vec::new();
    for run in runs {
        let reply = run.await.unwrap();
        if reply.answer().result().is_some() {
            answered.push(reply.stored().json().to_owned());
        } else {
            assert_eq!(
                reply
                    .answer()
                    .refusal()
                    .map(agent_tool_result::guarantee::Refusal::kind),
                Some(RefusalKind::KeyInFlight),
                "{race}: {:?}",
                reply.answer()
            );
        }
    }
    answered.dedup();
    assert_eq!(answered.len(), 1, "{race}: one answer for every caller");
    assert_eq!(notes(ledger(), &race).await, 1, "{race}: one note");
}
