//! The PostgreSQL ledger shared by several processes (child processes, not threads) on one
//! real server the test starts: each key runs once however many processes it is sent to at
//! once; the keys a killed process held are answered `unknown` exactly once, by whichever
//! process is asked, and never run again; a server restart or a terminated connection in the
//! middle of a call never runs a key twice.
//!
//! One binary plays both parts (`harness = false`): run with `--worker URL LEASE_MS` it is a
//! worker, reading one command per line on standard input and answering one line each on
//! standard output; run plainly it is the test, which starts the server and the workers.

#[path = "support/postgres.rs"]
mod postgres;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use agent_tool_result::replay::{
    Begin, Completion, Fingerprint, IdempotencyKey, Ledger, PostgresLedger, Scope, StoredAnswer,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--worker") {
        worker(&args[2], args[3].parse().expect("a lease in ms"));
        return;
    }
    // `cargo test` may pass filters and flags; this binary runs its checks whatever they are.
    let server = postgres::Postgres::start();
    let started = Instant::now();
    sixteen_clients_send_each_key_to_two_processes_and_each_runs_once(&server);
    a_killed_process_leaves_its_keys_to_the_others_answered_unknown_once(&server);
    a_restart_or_a_terminated_connection_never_runs_a_key_twice(&server);
    println!(
        "ledger_processes: 3 checks passed in {:.1?}",
        started.elapsed()
    );
}

// ---- The worker -------------------------------------------------------------------------

/// Reads commands until standard input closes, each run on its own task:
/// `call SCOPE KEY` (begin; run if fresh, answer unknown if abandoned), `hold SCOPE KEY`
/// (begin and never complete), `slow SCOPE KEY MS` (begin, wait, then complete).
fn worker(url: &str, lease_ms: u64) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ledger = Arc::new(
            PostgresLedger::connect(url)
                .await
                .expect("the worker connects")
                .with_lease(Duration::from_millis(lease_ms)),
        );
        // Connected: the test may cut connections from now on.
        println!("ready");
        std::io::stdout().flush().unwrap();
        let (lines, mut commands) = tokio::sync::mpsc::unbounded_channel::<String>();
        thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                if lines.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        let mut tasks = Vec::new();
        while let Some(line) = commands.recv().await {
            let ledger = Arc::clone(&ledger);
            tasks.push(tokio::spawn(async move {
                let answer = command(&ledger, &line).await;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{answer}");
                let _ = out.flush();
            }));
        }
        for task in tasks {
            let _ = task.await;
        }
    });
}

fn print(key: &str) -> Fingerprint {
    Fingerprint::of("send_sms", "acct", &serde_json::json!({ "key": key }))
}

fn stored(text: &str) -> StoredAnswer {
    use agent_tool_result::guarantee::{Answer, GuaranteeResult};
    let result = GuaranteeResult::committed()
        .with_fields(serde_json::json!({ "note": text }))
        .expect("a note is no contract field");
    StoredAnswer::of(&Answer::from(result)).expect("an object")
}

/// Runs one command; the answer names the key first, then what happened.
async fn command(ledger: &PostgresLedger, line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (verb, scope, key) = (words[0], Scope::principal(words[1]), words[2]);
    let id = IdempotencyKey::new(key).unwrap();
    let begun = match ledger
        .begin(&scope, &id, print(key), &format!("ctx-{key}"))
        .await
    {
        Ok(begun) => begun,
        Err(err) => return format!("{key} error {}", err.is_connection_lost()),
    };
    match begun {
        Begin::Fresh(_) if verb == "hold" => format!("{key} held"),
        Begin::Fresh(lease) => {
            let wait = words.get(3).map_or(20, |ms| ms.parse().unwrap());
            tokio::time::sleep(Duration::from_millis(wait)).await;
            match ledger.complete(&lease, &stored("ran")).await {
                Ok(Completion::Recorded) => format!("{key} ran recorded"),
                Ok(Completion::LeaseLost) => format!("{key} ran lost"),
                Err(err) => format!("{key} ran error {}", err.is_connection_lost()),
            }
        }
        Begin::Abandoned(abandoned) => {
            let unknown = stored(&format!("unknown {}", abandoned.context()));
            match ledger.complete(abandoned.lease(), &unknown).await {
                Ok(Completion::Recorded) => format!("{key} abandoned {}", abandoned.context()),
                other => format!("{key} abandoned-unrecorded {other:?}"),
            }
        }
        Begin::Replay(answer) => {
            let read = answer.answer().expect("an answer reads back");
            let note = &read.result().expect("a result").field("note").unwrap();
            format!("{key} replay {}", note.as_str().unwrap_or_default())
        }
        Begin::InFlight { .. } => format!("{key} inflight"),
        Begin::Mismatch => format!("{key} mismatch"),
        other => format!("{key} other {other:?}"),
    }
}

// ---- The test's side --------------------------------------------------------------------

/// A worker process and its answers.
struct Worker {
    child: Child,
    stdin: Mutex<ChildStdin>,
    answers: Mutex<Receiver<String>>,
}

impl Worker {
    fn start(url: &str, lease_ms: u64) -> Worker {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--worker", url, &lease_ms.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("a worker starts");
        let stdin = Mutex::new(child.stdin.take().unwrap());
        let stdout = child.stdout.take().unwrap();
        let (send, answers): (Sender<String>, _) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let worker = Worker {
            child,
            stdin,
            answers: Mutex::new(answers),
        };
        assert_eq!(worker.answers(1), ["ready"], "the worker connects");
        worker
    }

    fn send(&self, line: &str) {
        let mut stdin = self.stdin.lock().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next `n` answers, within a minute.
    fn answers(&self, n: usize) -> Vec<String> {
        let answers = self.answers.lock().unwrap();
        (0..n)
            .map(|_| {
                answers
                    .recv_timeout(Duration::from_secs(60))
                    .expect("a worker answers")
            })
            .collect()
    }

    fn kill(mut self) {
        // SIGKILL: nothing of the process runs after it.
        self.child.kill().unwrap();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What each answer says, by key.
fn by_key(answers: &[String]) -> HashMap<String, Vec<String>> {
    let mut found: HashMap<String, Vec<String>> = HashMap::new();
    for answer in answers {
        let (key, what) = answer.split_once(' ').unwrap();
        found
            .entry(key.to_owned())
            .or_default()
            .push(what.to_owned());
    }
    found
}

fn sixteen_clients_send_each_key_to_two_processes_and_each_runs_once(server: &postgres::Postgres) {
    let url = server.database("processes");
    let workers: Arc<Vec<Worker>> = Arc::new((0..4).map(|_| Worker::start(&url, 30_000)).collect());
    let clients: Vec<_> = (0..16)
        .map(|client| {
            let workers = Arc::clone(&workers);
            thread::spawn(move || {
                for k in 0..50 {
                    let key = format!("c{client}-k{k}");
                    // The same key to two different processes at once.
                    let first = (client + k) % 4;
                    workers[first].send(&format!("call acct {key}"));
                    workers[(first + 1) % 4].send(&format!("call acct {key}"));
                }
            })
        })
        .collect();
    for client in clients {
        client.join().unwrap();
    }
    let answers: Vec<String> = workers.iter().flat_map(|w| w.answers(400)).collect();
    let found = by_key(&answers);
    assert_eq!(found.len(), 800, "16 clients x 50 keys");
    for (key, whats) in &found {
        let ran = whats.iter().filter(|w| w.starts_with("ran")).count();
        assert_eq!(ran, 1, "{key} ran {ran} times: {whats:?}");
        assert!(
            whats.contains(&"ran recorded".to_owned()),
            "{key}: {whats:?}"
        );
        for other in whats.iter().filter(|w| !w.starts_with("ran")) {
            assert!(
                other == "inflight" || other == "replay ran",
                "{key}: {whats:?}"
            );
        }
    }
    let executions: usize = found
        .values()
        .flatten()
        .filter(|w| w.starts_with("ran"))
        .count();
    assert_eq!(executions, 800, "exactly one execution per key");
    println!("ledger_processes: 4 processes, 16 clients x 50 keys sent twice: 800 executions");
}

fn a_killed_process_leaves_its_keys_to_the_others_answered_unknown_once(
    server: &postgres::Postgres,
) {
    let url = server.database("killed");
    let lease_ms = 3_000;
    let doomed = Worker::start(&url, lease_ms);
    for k in 0..10 {
        doomed.send(&format!("hold acct held-{k}"));
    }
    let held = doomed.answers(10);
    assert!(held.iter().all(|a| a.ends_with(" held")), "{held:?}");
    doomed.kill();
    let survivors: Vec<Worker> = (0..3).map(|_| Worker::start(&url, lease_ms)).collect();
    // Before the lease has passed: in flight everywhere, never run.
    for survivor in &survivors {
        survivor.send("call acct held-0");
    }
    let early: Vec<String> = survivors.iter().flat_map(|w| w.answers(1)).collect();
    assert!(early.iter().all(|a| a == "held-0 inflight"), "{early:?}");
    thread::sleep(Duration::from_millis(lease_ms + 400));
    // Each key asked of all three survivors at once: answered unknown exactly once.
    for k in 0..10 {
        for survivor in &survivors {
            survivor.send(&format!("call acct held-{k}"));
        }
    }
    let answers: Vec<String> = survivors.iter().flat_map(|w| w.answers(10)).collect();
    let found = by_key(&answers);
    for k in 0..10 {
        let key = format!("held-{k}");
        let whats = &found[&key];
        let abandoned = whats.iter().filter(|w| w.starts_with("abandoned")).count();
        assert_eq!(abandoned, 1, "{key}: {whats:?}");
        assert!(
            whats.contains(&format!("abandoned ctx-{key}")),
            "{key}: {whats:?}"
        );
        assert!(
            !whats.iter().any(|w| w.starts_with("ran")),
            "never run again: {whats:?}"
        );
    }
    // Every later request, from any process, replays the unknown answer.
    for (n, survivor) in survivors.iter().enumerate() {
        survivor.send(&format!("call acct held-{n}"));
        let later = survivor.answers(1);
        assert_eq!(later, [format!("held-{n} replay unknown ctx-held-{n}")]);
    }
    println!("ledger_processes: a process killed holding 10 leases: each answered unknown once");
}

/// Waits until `key` is begun (leased, no answer yet) in the `faults` database.
fn began(server: &postgres::Postgres, key: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let leased = format!(
        "SELECT count(*) FROM atr_idempotency WHERE key = '{key}' AND completed_at IS NULL"
    );
    while server.sql_in("faults", &leased) != "1" {
        assert!(Instant::now() < deadline, "{key} was never begun");
        thread::sleep(Duration::from_millis(10));
    }
}

fn a_restart_or_a_terminated_connection_never_runs_a_key_twice(server: &postgres::Postgres) {
    let url = server.database("faults");
    let worker = Worker::start(&url, 2_000);
    // The connection is terminated while the call runs: its answer is recorded on a new one.
    worker.send("slow acct cut-1 600");
    began(server, "cut-1");
    server.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = 'faults' AND pid <> pg_backend_pid()",
    );
    let cut = worker.answers(1);
    assert!(
        cut == ["cut-1 ran recorded"] || cut[0].starts_with("cut-1 ran error"),
        "{cut:?}"
    );
    // The server restarts while a call runs: recorded after it, or failed; never run twice.
    worker.send("slow acct restart-1 1500");
    began(server, "restart-1");
    server.restart();
    let restarted = worker.answers(1);
    assert!(restarted[0].starts_with("restart-1 ran"), "{restarted:?}");
    for key in ["cut-1", "restart-1"] {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            worker.send(&format!("call acct {key}"));
            let answer = worker.answers(1).pop().unwrap();
            let what = answer.split(' ').nth(1).unwrap_or_default();
            assert_ne!(what, "ran", "{key} ran twice: {answer}");
            if what == "replay" {
                break;
            }
            // In flight until its lease passes (when its answer was lost), or the server not
            // yet back: ask again.
            assert!(Instant::now() < deadline, "{key}: {answer}");
            thread::sleep(Duration::from_millis(200));
        }
    }
    println!(
        "ledger_processes: terminated mid-call: {:?}; restarted mid-call: {:?}; no key ran twice",
        cut[0], restarted[0]
    );
}
