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

/// One racer: begins keys 0 to 49, and executes and completes each it begins fresh.
fn run_fifty_keys<L: Ledger>(ledger: &L, executed: &AtomicUsize) {
    for k in 0..50 {
        let key = IdempotencyKey::new(format!("key-{k}")).unwrap();
        let print = Fingerprint::of("send_sms", "acct", &json!({ "k": k }));
        if ledger.begin(&key, print, SystemTime::now()).unwrap() == Begin::Fresh {
            executed.fetch_add(1, Ordering::SeqCst);
            ledger.complete(&key, response(&k.to_string())).unwrap();
        }
    }
}

#[test]
fn sixteen_threads_and_fifty_keys_execute_each_key_once() {
    let ledger = Arc::new(MemoryLedger::default());
    let executed = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let (ledger, executed) = (Arc::clone(&ledger), Arc::clone(&executed));
            std::thread::spawn(move || run_fifty_keys(&*ledger, &executed))
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

    /// A ledger file in a scratch directory, removed with the directory when dropped.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn path(&self) -> std::path::PathBuf {
            self.0.join("ledger.sqlite")
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn file(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("atr-replay-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    #[test]
    fn the_sqlite_ledger_keeps_the_same_semantics_across_reopening() {
        let scratch = file("semantics");
        let path = scratch.path();
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
        // On restart the key is answered once, and the answer is frozen.
        let restarted = SystemTime::now() + Duration::from_secs(1);
        let recovered =
            agent_tool_result::replay::recover(&ledger, restarted, |_| response("first")).unwrap();
        assert_eq!(recovered, pending);
        assert!(ledger.in_flight().unwrap().is_empty());
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
        let scratch = file("race");
        let path = scratch.path();
        SqliteLedger::open(&path).unwrap();
        let executed = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (path, executed) = (path.clone(), Arc::clone(&executed));
                std::thread::spawn(move || {
                    run_fifty_keys(&SqliteLedger::open(&path).unwrap(), &executed);
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

/// A key begun before a crash is answered once, by `recover`, with what the caller knows;
/// keys begun after the cutoff (another process's, running now) are left in flight.
#[test]
fn recover_completes_only_keys_begun_before_the_cutoff() {
    let ledger = MemoryLedger::default();
    let start = SystemTime::now();
    let old = IdempotencyKey::new("before-crash").unwrap();
    let new = IdempotencyKey::new("running-now").unwrap();
    let print = Fingerprint::of("send_campaign_batch", "acct_1", &json!({}));
    ledger.begin(&old, print, start).unwrap();
    let cutoff = start + Duration::from_secs(1);
    ledger
        .begin(&new, print, cutoff + Duration::from_secs(1))
        .unwrap();
    let recovered =
        agent_tool_result::replay::recover(&ledger, cutoff, |_| response("unknown")).unwrap();
    assert_eq!(recovered.len(), 1);
    assert_eq!(recovered[0].key, old);
    assert_eq!(
        ledger.begin(&old, print, cutoff).unwrap(),
        Begin::Replay(response("unknown"))
    );
    assert_eq!(ledger.begin(&new, print, cutoff).unwrap(), Begin::InFlight);
    let left = ledger.in_flight().unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].key, new);
}

/// Over MCP the key is the `idempotencyKey` argument, named in the tool's input schema, and
/// the schema admits exactly the keys the type admits.
#[test]
fn the_mcp_argument_and_its_schema_agree_with_the_key_type() {
    use agent_tool_result::replay::MCP_ARGUMENT;
    let mut schema = json!({ "type": "object", "properties": { "batch": { "type": "integer" } } })
        .as_object()
        .cloned()
        .unwrap();
    IdempotencyKey::add_to_input_schema(&mut schema);
    IdempotencyKey::add_to_input_schema(&mut schema);
    assert_eq!(schema["required"], json!([MCP_ARGUMENT]));
    assert!(schema["properties"]["batch"].is_object());
    let validator = jsonschema::validator_for(&serde_json::Value::Object(schema.clone()))
        .expect("the input schema compiles");
    let (long, too_long) = ("k".repeat(255), "k".repeat(256));
    let keys = [
        "k", "batch-7", " ~", &long, &too_long, "", "é", "a\tb", "a\u{7f}", "\"q\"",
    ];
    for key in keys {
        let arguments = json!({ "batch": 1, MCP_ARGUMENT: key });
        assert_eq!(
            IdempotencyKey::from_arguments(arguments.as_object().unwrap()).is_ok(),
            validator.is_valid(&arguments),
            "{key:?}"
        );
    }
    assert!(
        !validator.is_valid(&json!({ "batch": 1 })),
        "the key is required"
    );
    for (arguments, missing) in [
        (json!({}), true),
        (json!({ MCP_ARGUMENT: null }), true),
        (json!({ MCP_ARGUMENT: 7 }), false),
    ] {
        let err = IdempotencyKey::from_arguments(arguments.as_object().unwrap()).unwrap_err();
        assert_eq!(err.is_missing(), missing, "{arguments}");
    }
}

/// RFC 8785 section 3.2.2: the example's numbers, string escapes and literals.
#[test]
fn canonical_json_matches_rfc_8785_section_3_2_2() {
    let input = r#"{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }"#;
    let value: serde_json::Value = serde_json::from_str(input).unwrap();
    assert_eq!(
        agent_tool_result::replay::canonical_json(&value),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
}

/// RFC 8785 section 3.2.3: keys sort by their UTF-16 code units, not by UTF-8 bytes or chars.
#[test]
fn canonical_json_sorts_keys_as_rfc_8785_section_3_2_3() {
    let input = r#"{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }"#;
    let value: serde_json::Value = serde_json::from_str(input).unwrap();
    let canonical = agent_tool_result::replay::canonical_json(&value);
    let names = [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small",
        "Euro",
        "Emoji",
        "Hebrew",
    ];
    let at: Vec<usize> = names
        .iter()
        .map(|name| {
            canonical
                .find(name)
                .unwrap_or_else(|| panic!("{name}: {canonical}"))
        })
        .collect();
    assert!(at.is_sorted(), "{canonical}");
}

/// RFC 8785 appendix B: doubles as ECMAScript writes them.
#[test]
fn canonical_json_writes_numbers_as_rfc_8785_appendix_b() {
    for (bits, written) in [
        (0x0000_0000_0000_0000_u64, "0"),
        (0x8000_0000_0000_0000, "0"),
        (0x0000_0000_0000_0001, "5e-324"),
        (0x8000_0000_0000_0001, "-5e-324"),
        (0x7fef_ffff_ffff_ffff, "1.7976931348623157e+308"),
        (0xffef_ffff_ffff_ffff, "-1.7976931348623157e+308"),
        (0x4340_0000_0000_0000, "9007199254740992"),
        (0xc340_0000_0000_0000, "-9007199254740992"),
        (0x4430_0000_0000_0000, "295147905179352830000"),
        (0x44b5_2d02_c7e1_4af5, "9.999999999999997e+22"),
        (0x44b5_2d02_c7e1_4af6, "1e+23"),
        (0x44b5_2d02_c7e1_4af7, "1.0000000000000001e+23"),
        (0x444b_1ae4_d6e2_ef4e, "999999999999999700000"),
        (0x444b_1ae4_d6e2_ef4f, "999999999999999900000"),
        (0x444b_1ae4_d6e2_ef50, "1e+21"),
        (0x3eb0_c6f7_a0b5_ed8c, "9.999999999999997e-7"),
        (0x3eb0_c6f7_a0b5_ed8d, "0.000001"),
        (0x41b3_de43_5555_5553, "333333333.3333332"),
        (0x41b3_de43_5555_5554, "333333333.33333325"),
        (0x41b3_de43_5555_5555, "333333333.3333333"),
        (0x41b3_de43_5555_5556, "333333333.3333334"),
        (0x41b3_de43_5555_5557, "333333333.33333343"),
        (0xbecb_f647_612f_3696, "-0.0000033333333333333333"),
        (0x4314_3ff3_c1cb_0959, "1424953923781206.2"),
    ] {
        let value = json!([f64::from_bits(bits)]);
        assert_eq!(
            agent_tool_result::replay::canonical_json(&value),
            format!("[{written}]"),
            "{bits:#018x}"
        );
    }
}

/// The family of re-encodings a client's JSON library may make: every spelling of one number,
/// key order, spacing and escapes fingerprint alike; another value does not.
#[test]
fn re_encoded_arguments_fingerprint_alike() {
    let print = |text: &str| {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        Fingerprint::of("send_sms", "acct_1", &value)
    };
    for (a, b) in [
        (r#"{"n":0.0}"#, r#"{"n":-0.0}"#),
        (r#"{"n":0}"#, r#"{"n":-0}"#),
        (r#"{"n":1}"#, r#"{"n":1.0}"#),
        (r#"{"n":100}"#, r#"{"n":1e2}"#),
        (r#"{"n":100}"#, r#"{"n":1E+2}"#),
        (r#"{"n":0.5}"#, r#"{"n":5e-1}"#),
        (r#"{"n":4.50}"#, r#"{"n":4.5}"#),
        (r#"{"n":-7}"#, r#"{"n":-7.000}"#),
        (r#"{"a":1,"b":[1,2]}"#, r#"{ "b" : [ 1 , 2 ] , "a" : 1 }"#),
        (r#"{"s":"é/"}"#, r#"{"s":"\u00e9\/"}"#),
        (r#"{"n":9007199254740993}"#, r#"{"n":9007199254740992}"#),
    ] {
        assert_eq!(print(a), print(b), "{a} and {b}");
    }
    for (a, b) in [
        (r#"{"n":1}"#, r#"{"n":1.5}"#),
        (r#"{"n":1}"#, r#"{"n":"1"}"#),
        (r#"{"n":[1,2]}"#, r#"{"n":[2,1]}"#),
        (r#"{"n":null}"#, r"{}"),
    ] {
        assert_ne!(print(a), print(b), "{a} and {b}");
    }
}
