//! Same-key replay on the memory ledger: fresh, replayed byte for byte, mismatch, in flight,
//! expiry, and one execution per key under concurrency.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use agent_tool_result::replay::{
    Begin, Fingerprint, IdempotencyKey, Ledger, MemoryLedger, StoredResponse,
};
use serde_json::json;

fn response(body: &str) -> StoredResponse {
    StoredResponse {
        status: 202,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("retry-after".into(), "Tue, 01 Dec 2026 09:00:00 GMT".into()),
        ],
        body: body.as_bytes().to_vec(),
    }
}

#[test]
fn a_key_runs_once_and_replays_its_first_response() {
    let ledger = MemoryLedger::default();
    let key = IdempotencyKey::new("batch-7f3a").unwrap();
    let args = json!({ "campaignId": "cmp_7f3a", "recipients": 100 });
    let same = json!({ "recipients": 100, "campaignId": "cmp_7f3a" });
    let print = Fingerprint::of("send_campaign_batch", "acct_1", &args);
    let now = SystemTime::now();
    assert_eq!(ledger.begin(&key, print, now).unwrap(), Begin::Fresh);
    assert_eq!(ledger.begin(&key, print, now).unwrap(), Begin::InFlight);
    assert_eq!(
        ledger.in_flight().unwrap().len(),
        1,
        "begun and not completed"
    );
    ledger.complete(&key, response("first")).unwrap();
    assert!(ledger.in_flight().unwrap().is_empty());
    // Key order and spacing do not make another request.
    let again = Fingerprint::of("send_campaign_batch", "acct_1", &same);
    assert_eq!(
        ledger.begin(&key, again, now).unwrap(),
        Begin::Replay(response("first"))
    );
    // A replay is frozen: completing again does not change it.
    ledger.complete(&key, response("second")).unwrap();
    assert_eq!(
        ledger.begin(&key, again, now).unwrap(),
        Begin::Replay(response("first"))
    );
    let other = Fingerprint::of(
        "send_campaign_batch",
        "acct_1",
        &json!({ "recipients": 99 }),
    );
    assert_eq!(ledger.begin(&key, other, now).unwrap(), Begin::Mismatch);
    let later = now + Duration::from_secs(25 * 60 * 60);
    assert_eq!(
        ledger.begin(&key, other, later).unwrap(),
        Begin::Fresh,
        "expired after 24 h"
    );
}

#[test]
fn sixteen_threads_and_fifty_keys_execute_each_key_once() {
    let ledger = Arc::new(MemoryLedger::default());
    let executed = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let (ledger, executed) = (Arc::clone(&ledger), Arc::clone(&executed));
            std::thread::spawn(move || {
                for k in 0..50 {
                    let key = IdempotencyKey::new(format!("key-{k}")).unwrap();
                    let print = Fingerprint::of("send_sms", "acct", &json!({ "k": k }));
                    if ledger.begin(&key, print, SystemTime::now()).unwrap() == Begin::Fresh {
                        executed.fetch_add(1, Ordering::SeqCst);
                        ledger.complete(&key, response(&k.to_string())).unwrap();
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(executed.load(Ordering::SeqCst), 50);
}

#[test]
fn keys_are_sf_strings_of_printable_ascii() {
    let key = IdempotencyKey::from_header(r#""a \"quoted\" \\ key""#).unwrap();
    assert_eq!(key.as_str(), r#"a "quoted" \ key"#);
    assert_eq!(IdempotencyKey::from_header(&key.to_header()).unwrap(), key);
    for bad in ["", "\"\"", "plain", "\"a\"b\"", "\"\\x\"", "\"caf\u{e9}\""] {
        assert!(IdempotencyKey::from_header(bad).is_err(), "{bad}");
    }
    assert!(IdempotencyKey::new("k".repeat(255)).is_ok());
    assert!(IdempotencyKey::new("k".repeat(256)).is_err());
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;
    use agent_tool_result::replay::SqliteLedger;

    fn file(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("atr-replay-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("ledger.sqlite")
    }

    #[test]
    fn the_sqlite_ledger_keeps_the_same_semantics_across_reopening() {
        let path = file("semantics");
        let key = IdempotencyKey::new("batch-1").unwrap();
        let print = Fingerprint::of("send_campaign_batch", "acct", &json!({ "n": 1 }));
        let now = SystemTime::now();
        {
            let ledger = SqliteLedger::open(&path).unwrap();
            assert_eq!(ledger.begin(&key, print, now).unwrap(), Begin::Fresh);
        }
        // The process stopped here: reopened, the key is still in flight.
        let ledger = SqliteLedger::open(&path).unwrap();
        let pending = ledger.in_flight().unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!((&pending[0].key, pending[0].fingerprint), (&key, print));
        assert_eq!(ledger.begin(&key, print, now).unwrap(), Begin::InFlight);
        ledger.complete(&key, response("first")).unwrap();
        ledger.complete(&key, response("second")).unwrap();
        assert_eq!(
            ledger.begin(&key, print, now).unwrap(),
            Begin::Replay(response("first"))
        );
        let other = Fingerprint::of("send_campaign_batch", "acct", &json!({ "n": 2 }));
        assert_eq!(ledger.begin(&key, other, now).unwrap(), Begin::Mismatch);
        let later = now + Duration::from_secs(25 * 60 * 60);
        assert_eq!(ledger.begin(&key, other, later).unwrap(), Begin::Fresh);
    }

    /// 16 threads, each with its own connection to one file, race over 50 keys.
    #[test]
    fn sixteen_connections_and_fifty_keys_execute_each_key_once() {
        let path = file("race");
        SqliteLedger::open(&path).unwrap();
        let executed = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (path, executed) = (path.clone(), Arc::clone(&executed));
                std::thread::spawn(move || {
                    let ledger = SqliteLedger::open(&path).unwrap();
                    for k in 0..50 {
                        let key = IdempotencyKey::new(format!("key-{k}")).unwrap();
                        let print = Fingerprint::of("send_sms", "acct", &json!({ "k": k }));
                        if ledger.begin(&key, print, SystemTime::now()).unwrap() == Begin::Fresh {
                            executed.fetch_add(1, Ordering::SeqCst);
                            ledger.complete(&key, response(&k.to_string())).unwrap();
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(executed.load(Ordering::SeqCst), 50);
        assert!(
            SqliteLedger::open(&path)
                .unwrap()
                .in_flight()
                .unwrap()
                .is_empty()
        );
    }
}
