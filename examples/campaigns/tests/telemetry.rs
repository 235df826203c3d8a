//! What an operator watches: the metrics endpoint (`--metrics-addr`) counts keyed calls by
//! outcome and refusals by kind as they happen, with the ledger's latency and the sequence's
//! overhead; the log (`--log info`) has a line per call, inside the client's trace when its
//! MCP request's `_meta` carries a `traceparent`, and never the raw key or an argument.

use crate::support;

use std::process::Stdio;

use serde_json::{Value, json};
use support::{Scratch, Service, TOKEN};

/// The count of the sample `name{labels}` in Prometheus text (a counter, or a summary's
/// `_count`), 0 when absent.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> u64 {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.rsplit_once(' '))
        .find(|(series, _)| {
            series.starts_with(&format!("{name}{{"))
                && labels
                    .iter()
                    .all(|(label, value)| series.contains(&format!("{label}=\"{value}\"")))
        })
        .map_or(0, |(_, value)| value.parse().unwrap())
}

fn scrape(url: &str) -> String {
    let mut response = ureq::get(url).call().expect("the metrics endpoint answers");
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    response.body_mut().read_to_string().unwrap()
}

const SECRET_KEY: &str = "key-never-logged-51c2";
const NUMBER: &str = "+15550177001";

#[test]
fn the_metrics_endpoint_counts_each_outcome_and_the_log_keeps_the_trace() {
    let scratch = Scratch::new("telemetry");
    let log = scratch.path().join("service.log");
    let flags = [
        "--metrics-addr",
        "127.0.0.1:0",
        "--log",
        "info",
        "--account-rate",
        "acct_demo=1",
        "--rate-window-secs",
        "60",
    ];
    let stderr = std::fs::File::create(&log).unwrap();
    let mut service = Service::start_with(scratch.db(), &flags, Stdio::from(stderr));
    let metrics = service
        .next_line()
        .strip_prefix("metrics on ")
        .expect("the second line names the metrics endpoint")
        .to_owned();
    let calls = |text: &str, outcome: &str| {
        sample(
            text,
            "atr_keyed_calls_total",
            &[("tool", "send_sms"), ("outcome", outcome)],
        )
    };
    let refusals = |text: &str, kind: &str| {
        sample(
            text,
            "atr_keyed_refusals_total",
            &[("tool", "send_sms"), ("kind", kind)],
        )
    };
    let before = scrape(&metrics);
    assert_eq!(calls(&before, "fresh"), 0);

    let sms = json!({ "to": NUMBER, "body": "Your code is 4411" });
    assert_eq!(service.call("send_sms", SECRET_KEY, &sms).status(), 200);
    let text = scrape(&metrics);
    assert_eq!(calls(&text, "fresh"), 1, "{text}");
    // A replay, a key reused with other arguments, and the same call through MCP with the
    // client's trace context.
    assert_eq!(service.call("send_sms", SECRET_KEY, &sms).status(), 200);
    let other = json!({ "to": "+15550177002", "body": "Other" });
    assert_eq!(service.call("send_sms", SECRET_KEY, &other).status(), 422);
    let traced = mcp_call(&service.base, &sms);
    assert_eq!(traced["result"]["isError"], false, "{traced}");
    // The account's rate limit (1) was spent by its first call: the replays above were
    // answered all the same (a replay spends no quota), and a new call is refused before
    // anything runs.
    assert_eq!(
        service.call("send_sms", "over-the-limit", &sms).status(),
        429
    );
    // A call without its key is refused before anything else, and counted the same on both
    // transports.
    let unkeyed = ureq::post(format!("{}/v1/tools/send_sms", service.base))
        .header("authorization", format!("Bearer {TOKEN}"))
        .config()
        .http_status_as_error(false)
        .build()
        .send_json(&sms)
        .unwrap();
    assert_eq!(unkeyed.status(), 400);
    let unkeyed = mcp_call_with(&service.base, &sms);
    assert_eq!(unkeyed["result"]["isError"], true, "{unkeyed}");

    let text = scrape(&metrics);
    assert_eq!(refusals(&text, "key-missing"), 2, "{text}");
    assert_eq!(calls(&text, "fresh"), 1, "{text}");
    assert_eq!(calls(&text, "replayed"), 2, "{text}");
    assert_eq!(calls(&text, "refused"), 4, "{text}");
    assert_eq!(refusals(&text, "key-mismatch"), 1, "{text}");
    assert_eq!(refusals(&text, "rate-limited"), 1, "{text}");
    // Every latency is a histogram (buckets that add up across processes), not a summary.
    for latency in ["atr_ledger_seconds", "atr_sequence_overhead_seconds"] {
        assert!(
            text.contains(&format!("# TYPE {latency} histogram")),
            "{text}"
        );
        assert!(!text.contains(&format!("{latency}{{quantile")), "{text}");
    }
    assert!(
        text.contains("atr_ledger_seconds_bucket{op=\"begin\",le=\"0.0005\"}"),
        "{text}"
    );
    assert!(
        sample(
            &text,
            "atr_sequence_overhead_seconds_count",
            &[("tool", "send_sms")]
        ) >= 4,
        "{text}"
    );

    let logged = std::fs::read_to_string(&log).unwrap();
    let traced_line = logged
        .lines()
        .find(|line| line.contains(TRACE_ID))
        .unwrap_or_else(|| panic!("no line names the client's trace:\n{logged}"));
    assert!(
        traced_line.contains("outcome=\"replayed\""),
        "{traced_line}"
    );
    assert!(traced_line.contains("keyed_call{"), "{traced_line}");
    for secret in [SECRET_KEY, "over-the-limit", NUMBER, "Your code"] {
        assert!(
            !logged.contains(secret),
            "`{secret}` is in the log:\n{logged}"
        );
    }
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

/// `send_sms` over MCP under the same key as the REST calls, with a `traceparent`.
fn mcp_call(base: &str, arguments: &Value) -> Value {
    let mut arguments = arguments.clone();
    arguments["idempotencyKey"] = json!(SECRET_KEY);
    mcp_call_with(base, &arguments)
}

/// `send_sms` over MCP with `arguments` as they are, with a `traceparent`.
fn mcp_call_with(base: &str, arguments: &Value) -> Value {
    let mut response = ureq::post(format!("{base}/mcp"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .send_json(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": "send_sms",
                "arguments": arguments,
                "_meta": { "traceparent": format!("00-{TRACE_ID}-00f067aa0ba902b7-01") },
            }
        }))
        .expect("the service answers");
    response.body_mut().read_json().unwrap()
}

/// On PostgreSQL, as on SQLite, the ledger's latency is exported for each operation a keyed
/// call makes of it: `begin` for the call and its replay; no `complete`, since the service's
/// tools write their answer in their own transaction (the README's metrics table says so).
#[test]
fn the_ledger_latency_is_exported_on_postgres() {
    let server = support::postgres::Postgres::start();
    let db = server.database("telemetry");
    let scratch = Scratch::new("telemetry-postgres");
    let log = scratch.path().join("service.log");
    let flags = ["--metrics-addr", "127.0.0.1:0"];
    let stderr = std::fs::File::create(&log).unwrap();
    let mut service = Service::start_with(&db, &flags, Stdio::from(stderr));
    let metrics = service
        .next_line()
        .strip_prefix("metrics on ")
        .expect("the second line names the metrics endpoint")
        .to_owned();
    let sms = json!({ "to": NUMBER, "body": "Your code is 4411" });
    assert_eq!(service.call("send_sms", "pg-latency", &sms).status(), 200);
    assert_eq!(service.call("send_sms", "pg-latency", &sms).status(), 200);
    let text = scrape(&metrics);
    assert_eq!(
        sample(&text, "atr_ledger_seconds_count", &[("op", "begin")]),
        2,
        "{text}"
    );
    assert_eq!(
        sample(&text, "atr_ledger_seconds_count", &[("op", "complete")]),
        0,
        "{text}"
    );
}
