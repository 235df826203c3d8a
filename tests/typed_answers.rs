//! Typed answers for every decision: one tool function returns a deny, a defer, an unknown
//! and a committed result as one `GuaranteeResult<F>`, with its typed fields where the
//! decision has them and none where it does not (a deny happens before anything is created);
//! each is written, read back as the same type, and keeps the constructors' invariants.

use std::time::{Duration, UNIX_EPOCH};

use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode, SettlementState};
use serde::{Deserialize, Serialize};

/// What `send_sms` creates: a message, named by its id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Sent {
    message_id: String,
}

/// Fields that name one of the contract's own.
#[derive(Serialize)]
struct Clash {
    policy: u8,
}

enum Case {
    OptedOut,
    QuietHours,
    Lost,
    Sent,
}

/// One tool, every decision, one type.
fn send_sms(case: &Case) -> GuaranteeResult<Sent> {
    let sent = Sent {
        message_id: "msg_1".to_owned(),
    };
    let one = Impact::new().with_requested(1);
    match case {
        Case::OptedOut => GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT),
        Case::QuietHours => GuaranteeResult::deferred(PolicyCode::CONTACT_POLICY)
            .with_retry_at(UNIX_EPOCH + Duration::from_secs(1_796_115_600))
            .expect("a defer takes a retry time"),
        Case::Lost => GuaranteeResult::unknown()
            .with_fields(sent)
            .expect("no contract field is named"),
        Case::Sent => GuaranteeResult::committed()
            .with_impact(one.with_committed(1))
            .and_then(|result| result.with_fields(sent))
            .expect("one of one, and no contract field named"),
    }
}

#[test]
fn one_tool_answers_every_decision_with_its_own_type() {
    let cases = [
        (Case::OptedOut, SettlementState::NotStarted, false),
        (Case::QuietHours, SettlementState::NotStarted, false),
        (Case::Lost, SettlementState::Unknown, true),
        (Case::Sent, SettlementState::Committed, true),
    ];
    for (case, settlement, has_fields) in cases {
        let result = send_sms(&case);
        assert_eq!(result.settlement(), settlement);
        assert_eq!(result.fields().is_some(), has_fields);

        let json = result.to_json().unwrap();
        assert_eq!(json.contains("messageId"), has_fields, "{json}");
        #[cfg(feature = "validate")]
        assert!(
            agent_tool_result::validate::Validator::shared_guarantee()
                .is_valid(&serde_json::from_str(&json).unwrap()),
            "{json}"
        );
        // Read back as the tool's own type: a deny without the message it never created
        // reads as well as a committed result with it.
        let read = GuaranteeResult::<Sent>::from_json(&json).unwrap();
        assert_eq!(read, result, "{json}");
    }
}

#[test]
fn typed_fields_keep_every_invariant_of_the_untyped_ones() {
    // A deny counts no send, whatever its fields' type.
    let err = GuaranteeResult::<Sent>::denied(PolicyCode::CONTACT_OPTED_OUT)
        .with_impact(Impact::new().with_committed(1))
        .unwrap_err();
    assert_eq!(err.rule().as_str(), "guarantee-deny-before-provider");
    // An allow takes no retry time.
    let at = UNIX_EPOCH + Duration::from_secs(1);
    assert!(
        GuaranteeResult::<Sent>::committed()
            .with_retry_at(at)
            .is_err()
    );
    // Fields that name a contract field are refused.
    assert!(
        GuaranteeResult::<Clash>::committed()
            .with_fields(Clash { policy: 1 })
            .is_err()
    );
    // A field of the tool's own that the typed reader does not know is refused as the
    // tool's type, not dropped.
    let stray = r#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"mesageId":"msg_1"}"#;
    let err = GuaranteeResult::<Sent>::from_json(stray).unwrap_err();
    assert_eq!(err.rule(), agent_tool_result::Rule::ToolResultType, "{err}");
}
