//! Same-key replay beyond the ledger contract (`tests/ledger.rs`): fingerprints across
//! re-encodings and tools, keys and their errors, and one execution per key under concurrency.

use agent_tool_result::replay::{
    Begin, Completion, Fingerprint, IdempotencyKey, InvalidKeyKind, Ledger, MemoryLedger, Scope,
    StoredAnswer,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn response(text: &str) -> StoredAnswer {
    use agent_tool_result::guarantee::{Answer, GuaranteeResult};
    let result = GuaranteeResult::committed()
        .with_fields(serde_json::json!({ "note": text }))
        .expect("a note is no contract field");
    StoredAnswer::of(&Answer::from(result)).expect("an object")
}

#[tokio::test]
async fn re_encoded_arguments_replay_and_others_are_a_mismatch() {
    let ledger = MemoryLedger::new();
    let scope = Scope::principal("acct_1");
    let key = IdempotencyKey::new("batch-7f3a").unwrap();
    let args = json!({ "campaignId": "cmp_7f3a", "recipients": 100 });
    let same = json!({ "recipients": 100.0, "campaignId": "cmp_7f3a" });
    let print = Fingerprint::of("send_campaign_batch", "acct_1", &args);
    let Begin::Fresh(lease) = ledger.begin(&scope, &key, print, "cmp_7f3a").await.unwrap() else {
        panic!("fresh");
    };
    let _ = ledger.complete(&lease, &response("first")).await.unwrap();
    // Key order, spacing and number spelling do not make another request.
    let again = Fingerprint::of("send_campaign_batch", "acct_1", &same);
    assert_eq!(
        ledger.begin(&scope, &key, again, "").await.unwrap(),
        Begin::Replay(response("first"))
    );
    let other = Fingerprint::of(
        "send_campaign_batch",
        "acct_1",
        &json!({ "recipients": 99 }),
    );
    assert_eq!(
        ledger.begin(&scope, &key, other, "").await.unwrap(),
        Begin::Mismatch
    );
    // The same key and arguments to another tool: a mismatch, not a second execution.
    let elsewhere = Fingerprint::of("send_sms", "acct_1", &args);
    assert_eq!(
        ledger.begin(&scope, &key, elsewhere, "").await.unwrap(),
        Begin::Mismatch
    );
}

/// One racer: begins keys 0 to 49, and executes and completes each it begins fresh.
async fn run_fifty_keys<L: Ledger>(ledger: &L, executed: &AtomicUsize) {
    let scope = Scope::principal("acct");
    for k in 0..50 {
        let key = IdempotencyKey::new(format!("key-{k}")).unwrap();
        let print = Fingerprint::of("send_sms", "acct", &json!({ "k": k }));
        if let Begin::Fresh(lease) = ledger.begin(&scope, &key, print, "").await.unwrap() {
            executed.fetch_add(1, Ordering::SeqCst);
            let done = ledger
                .complete(&lease, &response(&k.to_string()))
                .await
                .unwrap();
            assert_eq!(done, Completion::Recorded);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_tasks_and_fifty_keys_execute_each_key_once() {
    let ledger = Arc::new(MemoryLedger::new());
    let executed = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (ledger, executed) = (Arc::clone(&ledger), Arc::clone(&executed));
            tokio::spawn(async move { run_fifty_keys(&*ledger, &executed).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(executed.load(Ordering::SeqCst), 50);
}

/// One reading of the key, whichever entry point: around the quoted string only spaces and
/// tabs are stripped (RFC 9651, RFC 9110), every other white space character (every `char`
/// Unicode calls white space, NBSP, VT, FF and EM SPACE among them) is refused, by
/// `from_header` and by `from_headers` alike wherever a header can carry it; and parameters
/// are refused, naming them.
#[cfg(feature = "http")]
#[test]
fn both_entry_points_read_a_key_one_way() {
    let from_headers = |value: &[u8]| {
        let value = http::HeaderValue::from_bytes(value).ok()?;
        let mut headers = http::HeaderMap::new();
        headers.insert("idempotency-key", value);
        Some(IdempotencyKey::from_headers(&headers))
    };
    let spaces: Vec<char> = (0..=0x10_FFFF_u32)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .collect();
    assert!(spaces.len() >= 25, "{}", spaces.len());
    for space in spaces {
        for value in [
            format!("{space}\"a\""),
            format!("\"a\"{space}"),
            format!("{space}{space}\"a\"{space}"),
        ] {
            let read = IdempotencyKey::from_header(&value);
            assert_eq!(read.is_ok(), space == ' ' || space == '\t', "{value:?}");
            if let Some(through_headers) = from_headers(value.as_bytes()) {
                assert_eq!(
                    through_headers.map_err(|e| e.kind()),
                    read.clone().map_err(|e| e.kind()),
                    "{value:?}"
                );
            }
        }
    }
    for with_parameters in [r#""a";p=1"#, r#""a";p"#, r#""a"; p="x""#] {
        let err = IdempotencyKey::from_header(with_parameters).unwrap_err();
        assert_eq!(err.kind(), InvalidKeyKind::Malformed);
        assert!(err.to_string().contains("takes no parameters"), "{err}");
        let through = from_headers(with_parameters.as_bytes())
            .unwrap()
            .unwrap_err();
        assert_eq!(through.to_string(), err.to_string());
    }
    for trailing in [r#""a" x"#, r#""a","b""#, r#""a"#] {
        assert!(IdempotencyKey::from_header(trailing).is_err(), "{trailing}");
    }
}

/// Integers beyond 2^53 are the doubles they round to (RFC 8785): every integer of the
/// 64-bit range that rounds to the same double as another has its fingerprint, at the edges
/// of each power of two above 2^53; below 2^53 every integer is its own; as strings, every
/// one is its own.
#[test]
fn integers_beyond_2_to_the_53_fingerprint_as_their_double() {
    use agent_tool_result::replay::Fingerprint;
    let print = |id: serde_json::Value| Fingerprint::of("refund", "acct_1", &json!({ "id": id }));
    for exponent in 53..64 {
        let base = 1_u64 << exponent;
        // Above 2^53 the doubles are 2^(e-52) apart: base + 1 rounds to base.
        assert_eq!(
            print(json!(base + 1)),
            print(json!(base)),
            "2^{exponent} + 1"
        );
        assert_ne!(
            print(json!((base + 1).to_string())),
            print(json!(base.to_string())),
            "as strings"
        );
    }
    let below = (1_u64 << 53) - 1;
    assert_ne!(print(json!(below)), print(json!(below - 1)));
    assert_ne!(
        print(json!(-(1_i64 << 52))),
        print(json!(-(1_i64 << 52) + 1))
    );
}

#[test]
fn keys_are_sf_strings_of_printable_ascii() {
    let key = IdempotencyKey::from_header(r#""a \"quoted\" \\ key""#).unwrap();
    assert_eq!(key.as_str(), r#"a "quoted" \ key"#);
    assert_eq!(IdempotencyKey::from_header(&key.to_header()).unwrap(), key);
    for bad in ["", "\"\"", "plain", "\"a\"b\"", "\"\\x\"", "\"caf\u{e9}\""] {
        let err = IdempotencyKey::from_header(bad).unwrap_err();
        assert_eq!(err.kind(), InvalidKeyKind::Malformed, "{bad}");
    }
    assert!(IdempotencyKey::new("k".repeat(255)).is_ok());
    assert!(IdempotencyKey::new("k".repeat(256)).is_err());
    // Its own text parses and round-trips through serde; a bad one is refused on reading.
    let parsed: IdempotencyKey = "batch-7".parse().unwrap();
    assert_eq!(serde_json::to_string(&parsed).unwrap(), r#""batch-7""#);
    assert_eq!(
        serde_json::from_str::<IdempotencyKey>(r#""batch-7""#).unwrap(),
        parsed
    );
    assert!(serde_json::from_str::<IdempotencyKey>(r#""""#).is_err());
    let missing = IdempotencyKey::from_arguments(&serde_json::Map::new()).unwrap_err();
    assert_eq!(missing.kind(), InvalidKeyKind::Missing);
    assert!(missing.is_missing());
}

#[test]
fn a_fingerprint_reads_back_and_says_why_it_does_not() {
    use agent_tool_result::replay::InvalidFingerprint;
    let print = Fingerprint::of("send_sms", "acct", &json!({ "to": "+1555" }));
    // What every ledger stores: SHA-256 over the name's and the principal's lengths (8 bytes,
    // big-endian) and bytes, then the arguments' canonical JSON, in lowercase hex.
    assert_eq!(
        print.to_hex(),
        "db4e8130a38510f5f70f9464e0bfbbb0d1832fad83f9cf45cb166d730b9c6443"
    );
    assert_eq!(Fingerprint::from_hex(&print.to_hex()), Ok(print));
    assert_eq!(
        Fingerprint::from_hex(""),
        Err(InvalidFingerprint::Length(0))
    );
    let mut bad = print.to_hex();
    bad.replace_range(10..11, "g");
    assert_eq!(
        Fingerprint::from_hex(&bad),
        Err(InvalidFingerprint::NotHex(10))
    );
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;
    use agent_tool_result::replay::SqliteLedger;

    /// 16 tasks, each with its own ledger (its own connection) on one file, race over 50 keys.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sixteen_connections_and_fifty_keys_execute_each_key_once() {
        let dir = std::env::temp_dir().join(format!("atr-replay-{}-race", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite");
        drop(SqliteLedger::open(&path).unwrap());
        let executed = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let (path, executed) = (path.clone(), Arc::clone(&executed));
                tokio::spawn(async move {
                    let ledger = SqliteLedger::open(&path).unwrap();
                    run_fifty_keys(&ledger, &executed).await;
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(executed.load(Ordering::SeqCst), 50);
        let _ = std::fs::remove_dir_all(&dir);
    }
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
