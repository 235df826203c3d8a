//! `atr validate` on sessions recorded over Streamable HTTP: each SDK's client (TypeScript 1.x
//! and 2.x, Python) with the campaign service, through `atr record --http`
//! (`fixtures/sessions/http-*.ndjson`), whole and with results broken on purpose.

use crate::common;

use std::collections::BTreeSet;

use common::sessions::{
    call_id, calls, ndjson, nth_call_with, response, restructure, rules_by_call, session,
    validates_whole, verdict,
};
use serde_json::{Value, json};

const SESSIONS: [&str; 3] = [
    "cli/tests/fixtures/sessions/http-typescript-v1.ndjson",
    "cli/tests/fixtures/sessions/http-typescript-v2.ndjson",
    "cli/tests/fixtures/sessions/http-python.ndjson",
];

#[test]
fn each_http_session_validates_with_every_result_held_to_its_advertised_schema() {
    for path in SESSIONS {
        // A send, a deny, a batch, a call refused for its missing key, the send's replay.
        validates_whole(path, 5);
    }
}

/// In each HTTP session, five results broken on purpose: a send and a batch whose
/// structuredContent breaks only their tool's outputSchema (an id that is not a string), a
/// deny with a decision no schema has, the refusal (an error result, which strict clients
/// check too) with a title that is not a string, and the replay's result made null. `atr
/// validate` finds those five calls and no other, each with its id and tool.
#[test]
fn results_broken_on_purpose_in_an_http_session_are_found_exactly_with_their_calls() {
    for path in SESSIONS {
        let mut messages = session(path);
        let tools = calls(&messages);
        let sent = call_id(&messages, "send_sms", "-1\"");
        let denied = call_id(&messages, "send_sms", "-deny");
        let batch = call_id(&messages, "send_campaign_batch", "-batch");
        let refused = call_id(&messages, "send_sms", "\"hi\"");
        let replayed = nth_call_with(&messages, "-1\"", 1);
        restructure(&mut response(&mut messages, &sent)["result"], |s| {
            s["messageId"] = json!(42);
        });
        restructure(&mut response(&mut messages, &batch)["result"], |s| {
            s["campaignId"] = json!(42);
        });
        restructure(&mut response(&mut messages, &denied)["result"], |s| {
            s["policy"]["decision"] = json!("refuse");
        });
        restructure(&mut response(&mut messages, &refused)["result"], |s| {
            s["title"] = json!(5);
        });
        response(&mut messages, &replayed)["result"] = Value::Null;

        let (code, findings, summary) = verdict(&["--ndjson", "-"], &ndjson(&messages));
        assert_eq!(code, 1, "{path}");
        assert_eq!(summary["invalid"], 5, "{path}: {summary}");
        let found = rules_by_call(&findings, &tools);
        let broken: BTreeSet<&String> = [&sent, &batch, &denied, &refused, &replayed].into();
        assert_eq!(
            found.keys().collect::<BTreeSet<_>>(),
            broken,
            "{path}: {findings:?}"
        );
        for id in [&sent, &batch] {
            assert_eq!(
                found[id],
                BTreeSet::from(["output-schema".to_owned()]),
                "{path} {id}"
            );
        }
        for id in [&denied, &refused] {
            assert!(
                found[id].contains("output-schema"),
                "{path} {id}: {found:?}"
            );
        }
        assert_eq!(
            found[&replayed],
            BTreeSet::from(["mcp-result-shape".to_owned()])
        );
        let at: Vec<&Value> = findings
            .iter()
            .filter(|f| f["callId"] == sent.as_str())
            .map(|f| &f["pointer"])
            .collect();
        assert_eq!(at, ["/result/structuredContent/messageId"], "{path}");
    }
}
