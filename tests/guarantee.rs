//! Guarantee results: the corpus, one verdict from the schema and the typed reader on every
//! fixture and on generated mutations, the invariants in the constructors, and wire snapshots.

use crate::mutations as differential;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use agent_tool_result::guarantee::{
    GuaranteeResult, Impact, PolicyCode, PolicyDecision, SettlementState,
};
use agent_tool_result::validate::Validator;
use agent_tool_result::{JsonObject, Rule};
use differential::{Rng, mutate};
use serde_json::{Value, json};

fn fixtures(kind: &str) -> Vec<(String, String)> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/fixtures/guarantee")
        .join(kind);
    let mut out: Vec<(String, String)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn reasons() -> BTreeMap<String, Rule> {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/fixtures/guarantee/invalid/reasons.tsv");
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split('\t');
            let name = parts.next().unwrap().to_owned();
            (name, parts.next().unwrap().parse().unwrap())
        })
        .collect()
}

/// Every reader's verdict on `text`: the typed reader, the validator's fast path, its full
/// report, and the schema (with the one invariant it cannot express) on the parsed value.
fn disagreement(text: &str) -> Option<String> {
    let validator = Validator::shared_guarantee();
    let typed = GuaranteeResult::<JsonObject>::from_json(text)
        .map_err(|e| (e.rule(), e.pointer().to_owned()));
    let fast = validator.is_valid_text(text);
    let report: Vec<(Rule, String)> = validator
        .validate_text(text)
        .violations()
        .iter()
        .map(|f| (f.rule(), f.pointer().to_owned()))
        .collect();
    let valid = typed.is_ok();
    if fast != valid || report.is_empty() != valid {
        return Some(format!(
            "verdicts differ: typed {typed:?}, fast {fast}, report {report:?}"
        ));
    }
    let merged = report
        .iter()
        .any(|(rule, _)| *rule == Rule::NoDuplicateKeys);
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let schema = validator.validate(&value).is_valid();
        if schema != valid && !merged {
            return Some(format!("the schema says {schema}, typed {typed:?}"));
        }
    } else if valid {
        return Some("valid to the typed reader but not a JSON value".to_owned());
    }
    if let Err(found) = &typed
        && !merged
        && !report.contains(found)
    {
        return Some(format!(
            "the report {report:?} lacks the typed reader's {found:?}"
        ));
    }
    None
}

#[test]
fn the_corpus_keeps_every_rule_and_every_reader_agrees() {
    let valid = fixtures("valid");
    let invalid = fixtures("invalid");
    assert!(
        valid.len() >= 15 && invalid.len() >= 40,
        "{} valid, {} invalid",
        valid.len(),
        invalid.len()
    );
    for (name, text) in &valid {
        assert_eq!(disagreement(text), None, "{name}");
        let read = GuaranteeResult::<JsonObject>::from_json(text).unwrap();
        // It writes back what it read, nulls of the tool's own fields and all.
        let again: Value = serde_json::from_str(&read.to_json().unwrap()).unwrap();
        let original: Value = serde_json::from_str(text).unwrap();
        assert_eq!(again, normalized(original), "{name}");
    }
    let reasons = reasons();
    for (name, text) in &invalid {
        assert_eq!(disagreement(text), None, "{name}");
        let err = GuaranteeResult::<JsonObject>::from_json(text).unwrap_err();
        assert_eq!(Some(&err.rule()), reasons.get(name), "{name}: {err}");
    }
    // Every rule of the second contract is broken by some fixture.
    for rule in Rule::ALL {
        if rule.as_str().starts_with("guarantee-")
            && rule.severity() == agent_tool_result::rule::Severity::Error
        {
            assert!(
                reasons.values().any(|r| *r == rule),
                "no fixture breaks {rule}"
            );
        }
    }
}

/// Numbers as the writer writes them (integral floats as integers).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small counts
fn normalized(value: Value) -> Value {
    match value {
        Value::Number(n)
            if n.as_f64().is_some_and(|f| f.fract() == 0.0) && !n.is_i64() && !n.is_u64() =>
        {
            json!(n.as_f64().unwrap() as u64)
        }
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| {
                    let v = if k == "retryAt" {
                        v.as_str()
                            .map_or(v.clone(), |s| json!(s.replace("+00:00", "Z")))
                    } else {
                        normalized(v)
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(normalized).collect()),
        other => other,
    }
}

#[test]
fn every_reader_agrees_on_ten_thousand_mutations() {
    let seeds: Vec<String> = fixtures("valid")
        .into_iter()
        .chain(fixtures("invalid"))
        .map(|(_, text)| text)
        .collect();
    let mut rng = Rng::new(0x6a);
    for _ in 0..12_000 {
        let mut text = rng.pick(&seeds).clone();
        for _ in 0..=rng.below(2) {
            text = mutate(&text, &mut rng);
        }
        if let Some(why) = disagreement(&text) {
            panic!("{why}\n{text}");
        }
    }
}

#[test]
fn every_builder_that_could_break_an_invariant_checks_it() {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_115_600);
    // retryAt rides on a deny or a defer, never on an allow.
    for allow in [
        GuaranteeResult::<JsonObject>::committed(),
        GuaranteeResult::unknown(),
    ] {
        let err = allow.with_retry_at(at).unwrap_err();
        assert_eq!(err.rule(), Rule::GuaranteeRetryAtOnDenyOrDefer);
    }
    for decided in [
        GuaranteeResult::<JsonObject>::denied(PolicyCode::CONTACT_POLICY),
        GuaranteeResult::deferred(PolicyCode::CAMPAIGN_HOLD),
    ] {
        assert_eq!(
            decided.with_retry_at(at).unwrap().policy().retry_at(),
            Some(at)
        );
    }
    // A deny counts what it refused, never a send.
    let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT)
        .with_impact(Impact::new().with_requested(1).with_denied(1))
        .unwrap();
    assert_eq!(denied.impact().and_then(Impact::denied), Some(1));
    let err = GuaranteeResult::<JsonObject>::denied(PolicyCode::CONTACT_OPTED_OUT)
        .with_impact(Impact::new().with_committed(1))
        .unwrap_err();
    assert_eq!(err.rule(), Rule::GuaranteeDenyBeforeProvider);
    // An unknown keeps what was counted before contact was lost, and stays unknown.
    let lost: GuaranteeResult = GuaranteeResult::unknown()
        .with_impact(Impact::new().with_requested(100).with_committed(40))
        .unwrap()
        .with_next_tool("lookup_marketing_campaigns");
    assert_eq!(lost.settlement(), SettlementState::Unknown);
    assert_eq!(lost.impact().and_then(Impact::committed), Some(40));
    assert_eq!(
        lost.suggested_next_tool(),
        Some("lookup_marketing_campaigns")
    );
    let wire = lost.to_json().unwrap();
    let read = GuaranteeResult::<serde_json::Value>::from_json(&wire).unwrap();
    assert_eq!(read.impact().and_then(Impact::requested), Some(100));
    // A defer's settlement follows its counts, set in any order with its retry time.
    let held: GuaranteeResult = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
        .with_retry_at(at)
        .unwrap()
        .with_impact(Impact::new().with_requested(2).with_deferred(2))
        .unwrap();
    assert_eq!(held.settlement(), SettlementState::Committed);
    let released = held.with_impact(Impact::new().with_requested(2)).unwrap();
    assert_eq!(released.settlement(), SettlementState::NotStarted);
    assert_eq!(released.suggested_next_tool(), None);
}

#[test]
fn constructors_cannot_build_a_broken_result() {
    let deny: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
    assert_eq!(deny.settlement(), SettlementState::NotStarted);
    assert!(deny.is_deny());
    let over = GuaranteeResult::<JsonObject>::committed()
        .with_impact(Impact::new().with_requested(2).with_committed(3));
    assert_eq!(
        over.unwrap_err().rule(),
        Rule::GuaranteeImpactWithinRequested
    );
    let held: GuaranteeResult = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
        .with_impact(
            Impact::new()
                .with_requested(10)
                .with_committed(4)
                .with_deferred(6),
        )
        .unwrap();
    assert_eq!(
        held.settlement(),
        SettlementState::Committed,
        "a partial send with a hold"
    );
    let waiting: GuaranteeResult = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_HOLD)
        .with_impact(Impact::new())
        .unwrap();
    assert_eq!(waiting.settlement(), SettlementState::NotStarted);
    let collision = GuaranteeResult::unknown().with_fields(json!({ "policy": 1 }));
    assert_eq!(collision.unwrap_err().rule(), Rule::ToolResultType);
    let not_object = GuaranteeResult::unknown().with_fields(json!([1]));
    assert!(not_object.is_err());
    assert!(PolicyCode::new("Contact Opted Out").is_err());
    assert!(PolicyCode::new("contact_opted-out").is_ok());
    // What each state and decision means, from the one table.
    for state in SettlementState::ALL {
        assert!(!state.meaning().is_empty() && !state.next_step().is_empty());
    }
    assert!(
        SettlementState::Unknown
            .next_step()
            .contains("Re-query by id")
    );
    assert!(PolicyDecision::Deny.next_step().contains("re-authenticate"));
}

#[test]
fn wire_forms_of_each_outcome() {
    let retry_at = UNIX_EPOCH + Duration::from_secs(1_796_115_600);
    let outcomes: Vec<(&str, String)> = vec![
        (
            "deny",
            GuaranteeResult::<JsonObject>::denied(PolicyCode::CONTACT_OPTED_OUT)
                .to_json()
                .unwrap(),
        ),
        (
            "deny-until",
            GuaranteeResult::<JsonObject>::denied(PolicyCode::CONTACT_POLICY)
                .with_retry_at(retry_at)
                .expect("a deny takes a retry time")
                .to_json()
                .unwrap(),
        ),
        (
            "partial-send-held",
            GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
                .with_impact(
                    Impact::new()
                        .with_requested(100)
                        .with_committed(40)
                        .with_deferred(60),
                )
                .and_then(|held| held.with_retry_at(retry_at))
                .unwrap()
                .with_next_tool("lookup_marketing_campaigns")
                .with_fields(json!({ "campaignId": "cmp_7f3a" }))
                .unwrap()
                .to_json()
                .unwrap(),
        ),
        (
            "committed",
            GuaranteeResult::committed()
                .with_impact(Impact::new().with_requested(1).with_committed(1))
                .unwrap()
                .with_fields(json!({ "messageId": "msg_1" }))
                .unwrap()
                .to_json()
                .unwrap(),
        ),
        (
            "unknown",
            GuaranteeResult::<JsonObject>::unknown()
                .with_next_tool("lookup_marketing_campaigns")
                .to_json()
                .unwrap(),
        ),
    ];
    for (name, json) in outcomes {
        let value: Value = serde_json::from_str(&json).unwrap();
        assert!(
            Validator::shared_guarantee().validate(&value).is_valid(),
            "{name}"
        );
        insta::assert_snapshot!(format!("guarantee-{name}"), json);
    }
}

/// Every instant the schema admits is read and written back, before 1970 too; the validator
/// and the typed reader agree on each.
#[test]
fn every_retry_at_the_schema_admits_is_read() {
    for at in [
        "1969-07-20T20:17:40Z",
        "1969-12-31T23:59:59.999Z",
        "0001-01-01T00:00:00Z",
        "1583-10-15T12:00:00Z",
        "9999-12-31T23:59:59Z",
    ] {
        let text = format!(
            r#"{{"schemaVersion":1,"settlement":{{"state":"not_started"}},"policy":{{"decision":"deny","code":"contact_policy","retryAt":"{at}"}}}}"#
        );
        let read =
            GuaranteeResult::<JsonObject>::from_json(&text).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(read.to_json().unwrap(), text);
        assert!(
            agent_tool_result::validate::Validator::shared_guarantee()
                .validate_text(&text)
                .is_valid(),
            "{at}"
        );
    }
}

#[test]
fn the_tool_fields_are_written_in_place_as_flatten_writes_them() {
    use serde::Serialize;
    use std::cell::Cell;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Campaign {
        name: String,
        campaign_id: String,
    }
    #[derive(Serialize)]
    enum Tagged {
        Batch { size: u32 },
        One(String),
    }
    struct Shifty(Cell<u32>);
    impl Serialize for Shifty {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let calls = self.0.get();
            self.0.set(calls + 1);
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry(if calls == 0 { "campaignId" } else { "policy" }, &1)?;
            map.end()
        }
    }
    fn base<T>() -> GuaranteeResult<T> {
        GuaranteeResult::committed()
    }
    // A struct's fields keep its order, after the contract's.
    let campaign = base()
        .with_fields(Campaign {
            name: "December".into(),
            campaign_id: "cmp_1".into(),
        })
        .unwrap();
    assert_eq!(
        campaign.to_json().unwrap(),
        r#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"name":"December","campaignId":"cmp_1"}"#
    );
    // Whatever serializes as an object's members is written as the value would be.
    let numbered: BTreeMap<u32, bool> = [(7, true)].into();
    let cases: Vec<(String, String)> = vec![
        (
            base().with_fields(numbered).unwrap().to_json().unwrap(),
            r#""7":true"#.into(),
        ),
        (
            base()
                .with_fields(Some(json!({ "a": 1 })))
                .unwrap()
                .to_json()
                .unwrap(),
            r#""a":1"#.into(),
        ),
        (
            base()
                .with_fields(Tagged::Batch { size: 3 })
                .unwrap()
                .to_json()
                .unwrap(),
            r#""Batch":{"size":3}"#.into(),
        ),
        (
            base()
                .with_fields(Tagged::One("x".into()))
                .unwrap()
                .to_json()
                .unwrap(),
            r#""One":"x""#.into(),
        ),
    ];
    for (wire, tail) in cases {
        assert!(
            wire.ends_with(&format!(r#""policy":{{"decision":"allow"}},{tail}}}"#)),
            "{wire}"
        );
        let value: serde_json::Value = serde_json::from_str(&wire).unwrap();
        assert!(GuaranteeResult::<serde_json::Value>::from_value(&value).is_ok());
    }

    // Fields whose serialization changes after they were checked are refused when written,
    // never written under a contract name.
    let shifty = base().with_fields(Shifty(Cell::new(0))).unwrap();
    let err = shifty.to_json().unwrap_err().to_string();
    assert!(err.contains("contract's field name `policy`"), "{err}");
}

/// The tool's own fields take no problem member's name, since a deny rides in an RFC 9457
/// problem over REST: the builder, the typed reader, the validator and the schema refuse each
/// of the five names on every decision, at the field; a near name passes all of them.
#[test]
fn no_reader_or_builder_takes_a_problem_members_name_as_a_tool_field() {
    let bases: [GuaranteeResult<JsonObject>; 3] = [
        GuaranteeResult::committed(),
        GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT),
        GuaranteeResult::deferred(PolicyCode::CAMPAIGN_HOLD),
    ];
    let validator = Validator::shared_guarantee();
    let rule = Rule::GuaranteeFieldsNotProblemMembers;
    for base in &bases {
        let wire: Value = serde_json::from_str(&base.to_json().unwrap()).unwrap();
        for name in ["type", "title", "status", "detail", "instance"] {
            let mut document = wire.clone();
            document[name] = json!("x");
            let text = document.to_string();
            assert_eq!(disagreement(&text), None, "{text}");
            let err = GuaranteeResult::<JsonObject>::from_json(&text).unwrap_err();
            assert_eq!(
                (err.rule(), err.pointer()),
                (rule, format!("/{name}").as_str())
            );
            let report = validator.validate_text(&text);
            assert!(
                report
                    .violations()
                    .iter()
                    .any(|f| f.rule() == rule && f.pointer() == format!("/{name}")),
                "{report:?}"
            );
            let fields = json!({ "campaignId": "c", name: 1 });
            let built = base
                .clone()
                .with_fields(fields.as_object().unwrap().clone());
            assert_eq!(built.unwrap_err().rule(), rule, "{name}");
        }
        for near in [
            "Detail",
            "details",
            "statusCode",
            "problemType",
            "instances",
        ] {
            let mut document = wire.clone();
            document[near] = json!("x");
            let text = document.to_string();
            assert_eq!(disagreement(&text), None, "{text}");
            assert!(
                GuaranteeResult::<JsonObject>::from_json(&text).is_ok(),
                "{text}"
            );
            let fields = json!({ near: 1 }).as_object().unwrap().clone();
            assert!(base.clone().with_fields(fields).is_ok(), "{near}");
        }
    }
}

/// Retry instants are checked where they are built: every builder of a `retryAt` (a deny's, a
/// defer's, a refusal's) takes exactly the instants of the years 0000 to 9999 that RFC 3339
/// writes, and what it takes is written in a form every reader reads back to the same instant;
/// the crate's own derived times (a delay from now, a far `Retry-After`) stay in range.
#[test]
fn every_retry_at_built_is_one_every_reader_reads_back() {
    use agent_tool_result::guarantee::Refusal;
    const FIRST: u64 = 62_167_219_200; // seconds from 0000-01-01 to 1970-01-01
    const PAST_LAST: u64 = 253_402_300_800; // seconds from 1970-01-01 to 10000-01-01
    let nano = Duration::from_nanos(1);
    let first = UNIX_EPOCH - Duration::from_secs(FIRST);
    let past_last = UNIX_EPOCH + Duration::from_secs(PAST_LAST);
    let cases = [
        (first, true),
        (first + nano, true),
        (first - nano, false),
        (first - Duration::from_secs(86_400 * 366 * 5_000), false),
        (UNIX_EPOCH, true),
        (UNIX_EPOCH - nano, true),
        (past_last - nano, true),
        (past_last - Duration::from_secs(1), true),
        (past_last, false),
        (
            past_last + Duration::from_secs(86_400 * 366 * 90_000),
            false,
        ),
    ];
    let validator = Validator::shared_guarantee();
    for (at, in_range) in cases {
        let refusal = Refusal::unavailable("down").with_retry_at(at);
        let deferred =
            GuaranteeResult::<JsonObject>::deferred(PolicyCode::CAMPAIGN_HOLD).with_retry_at(at);
        let denied =
            GuaranteeResult::<JsonObject>::denied(PolicyCode::CONTACT_POLICY).with_retry_at(at);
        assert_eq!(refusal.is_ok(), in_range, "{at:?}");
        assert_eq!(deferred.is_ok(), in_range, "{at:?}");
        assert_eq!(denied.is_ok(), in_range, "{at:?}");
        match (refusal, deferred, denied) {
            (Ok(refusal), Ok(deferred), Ok(denied)) => {
                let read = Refusal::from_json(&refusal.to_json()).unwrap();
                assert_eq!(read.retry_at(), Some(at));
                for result in [deferred, denied] {
                    let text = result.to_json().unwrap();
                    assert!(validator.is_valid_text(&text), "{text}");
                    let read = GuaranteeResult::<JsonObject>::from_json(&text).unwrap();
                    assert_eq!(read.policy().retry_at(), Some(at), "{text}");
                }
            }
            (Err(refusal), Err(deferred), Err(denied)) => {
                for err in [refusal, deferred, denied] {
                    assert_eq!(err.rule(), Rule::GuaranteeRetryAtForm, "{err}");
                    assert!(err.to_string().contains("0000 to 9999"), "{err}");
                }
            }
            other => panic!("the builders disagree on {at:?}: {other:?}"),
        }
    }
    // A delay from now is always in range, however long.
    for delay in [
        Duration::ZERO,
        Duration::from_secs(1),
        Duration::from_secs(u64::MAX),
        Duration::MAX,
    ] {
        let refusal = Refusal::unavailable("down").with_retry_after(delay);
        let read = Refusal::from_json(&refusal.to_json()).unwrap();
        assert_eq!(read.retry_at(), refusal.retry_at(), "{delay:?}");
    }
}
