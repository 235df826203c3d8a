//! Every answer a guarantee tool gives, read through the official TypeScript MCP SDK client
//! (`@modelcontextprotocol/sdk`, pinned in `tests/typescript/package-lock.json`), which validates
//! `structuredContent` against the tool's advertised `outputSchema` on error results too and
//! throws on the first mismatch: allow, defer, deny, unknown, every key refusal, bad
//! arguments and the service unable to answer all come back through `client.callTool` without
//! an exception, with `isError` and the structured content the contract says.
//!
//! Needs Node.js (18 or newer) and npm; the SDK is installed with `npm ci` from the committed
//! lockfile the first time.

use crate::support;

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use support::typescript::{
    KEY_IN_FLIGHT, KEY_INVALID, KEY_MISMATCH, KEY_MISSING, Sdk, assert_refused, client_dir,
    run_client, run_client_of, run_stdio_client, sms,
};
use support::{Scratch, Service, TOKEN, numbers};

const OPTED_OUT: &str = "+15550100000";

#[test]
fn the_typescript_sdk_reads_every_answer_of_a_guarantee_tool() {
    reads_every_answer(Sdk::V1);
}

#[test]
fn the_typescript_sdk_v2_reads_every_answer_of_a_guarantee_tool() {
    reads_every_answer(Sdk::V2);
}

/// MCP 2026-07-28 as the TypeScript SDK speaks it: `server/discover`, then every request
/// stateless (its revision in `_meta`, its method in `Mcp-Method`): every answer the same as
/// over the 2025 revision, the replay by key included.
#[test]
fn the_typescript_sdk_v2_reads_every_answer_of_a_guarantee_tool_over_2026_07_28() {
    reads_every_answer(Sdk::V2Stateless);
}

/// Every answer a guarantee tool gives, through `client.callTool` of `sdk`: none throws.
fn reads_every_answer(sdk: Sdk) {
    let scratch = Scratch::new("typescript");
    let flags = [
        "--cap",
        "2",
        "--window-secs",
        "3600",
        "--provider-delay-ms",
        "400",
        "--opt-out",
        OPTED_OUT,
    ];
    let service = Service::start(scratch.db(), &flags);
    let steps = json!([
        [
            sms("+15550100001", "ts-sms-1"),
            sms(OPTED_OUT, "ts-deny"),
            { "tool": "send_campaign_batch", "arguments": { "recipients": numbers(4), "message": "Winter sale", "idempotencyKey": "ts-batch" } },
            { "tool": "send_sms", "arguments": { "to": "+15550100003", "body": "hi" } },
            sms("+15550100003", ""),
            sms("+15550100003", 5),
            sms("+15550100003", "ключ"),
            sms("abc", "ts-bad-number"),
            sms("+1555010000300000000000000000000000000000", "ts-long-number"),
            { "tool": "send_campaign_batch", "arguments": { "recipients": [], "message": "x", "idempotencyKey": "ts-empty" } },
            { "tool": "send_sms", "arguments": { "to": "+15550100003", "idempotencyKey": "ts-no-body" } },
            sms("+15550100002", "ts-race"),
            sms("+15550100002", "ts-race"),
        ],
        [
            { "tool": "send_sms", "arguments": { "to": "+15550100001", "body": "Another text", "idempotencyKey": "ts-sms-1" } },
            sms("+15550100001", "ts-sms-1"),
            { "tool": "opt_out", "arguments": { "phone": "+15550100009", "idempotencyKey": "ts-opt-out" } },
            { "tool": "opt_out", "arguments": { "phone": OPTED_OUT, "idempotencyKey": "ts-opted-out" } },
        ],
    ]);
    let answers = run_client_of(sdk, &service, &steps);
    let first = &answers[0];

    // Allow: committed, with the message's id.
    assert_eq!(first[0]["isError"], false);
    let allowed = &first[0]["structuredContent"];
    assert_eq!(allowed["settlement"]["state"], "committed");
    assert_eq!(allowed["policy"]["decision"], "allow");
    assert!(allowed["messageId"].is_string());
    // Deny: isError, before the provider, no messageId (the schema requires none).
    assert_eq!(first[1]["isError"], true);
    let denied = &first[1]["structuredContent"];
    assert_eq!(denied["policy"]["decision"], "deny");
    assert_eq!(denied["settlement"]["state"], "not_started");
    assert!(denied.get("messageId").is_none());
    // Defer with a partial send: committed, not an error, the campaign to look up.
    assert_eq!(first[2]["isError"], false);
    let held = &first[2]["structuredContent"];
    assert_eq!(held["policy"]["decision"], "defer");
    assert_eq!(held["settlement"]["state"], "committed");
    assert_eq!(
        held["impact"],
        json!({ "requested": 4, "committed": 2, "deferred": 1, "denied": 1 }),
        "numbers(4) holds the opted-out number"
    );
    assert!(held["campaignId"].is_string());
    // Key refusals and bad arguments: problems the output schema admits.
    assert_refused(&first[3], KEY_MISSING, 400);
    for invalid in &first[4..7] {
        assert_refused(invalid, KEY_INVALID, 400);
    }
    for bad in &first[7..11] {
        assert_refused(bad, "about:blank", 400);
    }
    // One key, two calls at once: one runs, the other is told it is in flight.
    let race = &first[11..13];
    assert_eq!(
        race.iter().filter(|a| a["isError"] == false).count(),
        1,
        "{race:?}"
    );
    let busy = race.iter().find(|a| a["isError"] == true).unwrap();
    assert_refused(busy, KEY_IN_FLIGHT, 409);

    // The same key with other arguments is refused; with the same, the first answer replays.
    assert_refused(&answers[1][0], KEY_MISMATCH, 422);
    assert_eq!(answers[1][1], first[0]);
    // A tool with an operation of its own: an opt-out, confirmed once; a number opted out
    // already is sent no confirmation.
    for (answer, sent) in [(&answers[1][2], 1), (&answers[1][3], 0)] {
        assert_eq!(answer["isError"], false, "{answer}");
        let opted = &answer["structuredContent"];
        assert_eq!(opted["settlement"]["state"], "committed");
        assert_eq!(opted["impact"]["committed"], sent, "{opted}");
        assert!(opted["optOutId"].as_str().unwrap().starts_with("opt_"));
        assert_eq!(
            opted["recovery"]["suggestedNextTool"], "lookup_opt_out",
            "{opted}"
        );
    }
}

#[test]
fn the_typescript_sdk_reads_every_answer_of_the_keyed_example() {
    reads_the_keyed_example(Sdk::V1);
}

#[test]
fn the_typescript_sdk_v2_reads_every_answer_of_the_keyed_example() {
    reads_the_keyed_example(Sdk::V2);
}

/// The crate's keyed example over stdio (a registry's guarantee tool beside an ordinary
/// `#[tool]` in one rmcp router), through `client.callTool` of `sdk`: none throws.
fn reads_the_keyed_example(sdk: Sdk) {
    let scratch = Scratch::new("typescript-keyed");
    let ledger = scratch.db().with_extension("notes.db");
    let server = support::keyed::server();
    let (tools, answers) = run_stdio_client(
        sdk,
        &[server.to_str().unwrap()],
        &[("NOTES_LEDGER", ledger.to_str().unwrap())],
        &support::keyed::steps(),
    );
    support::keyed::check(&tools, &answers);
}

/// A call over the account's rate limit is the `rate-limited` refusal through
/// `client.callTool`: `isError`, the 429 problem with `retryAt`, which the output schema admits
/// (never a JSON-RPC error); nothing was sent, and another account's calls meanwhile run.
#[test]
fn the_typescript_sdk_reads_the_rate_limited_refusal() {
    let scratch = Scratch::new("typescript-rates");
    let flags = [
        "--account-rate",
        "acct_demo=2",
        "--rate-window-secs",
        "60",
        "--token",
        "acct_b=token-b",
    ];
    let service = Service::start(scratch.db(), &flags);
    let steps = json!([
        [sms("+15550100011", "ts-rate-1")],
        [sms("+15550100012", "ts-rate-2")],
        [sms("+15550100013", "ts-rate-3")],
        [{ "tool": "lookup_sms", "arguments": { "messageId": "msg_none" } }],
    ]);
    let answers = run_client(&service, &steps);
    for admitted in [&answers[0][0], &answers[1][0]] {
        assert_eq!(admitted["isError"], false, "{admitted}");
    }
    let limited = &answers[2][0];
    assert_refused(limited, "about:blank", 429);
    assert_eq!(limited["structuredContent"]["title"], "Too Many Requests");
    assert!(
        limited["structuredContent"]["retryAt"].is_string(),
        "{limited}"
    );
    // Lookups are not guarantee calls: not counted, not refused (this one reached the tool).
    let lookup = &answers[3][0]["structuredContent"];
    assert_eq!(lookup["error"]["code"], "message-not-found", "{lookup}");
    assert_eq!(support::provider_sends(&scratch.db()).len(), 2);
    // Another account is unaffected.
    let other = service.call_as(
        "token-b",
        "send_sms",
        "b-1",
        &json!({ "to": "+15550100014", "body": "Your code is 4411" }),
    );
    assert_eq!(other.status(), 200);
    assert_eq!(support::provider_sends(&scratch.db()).len(), 3);
}

/// Posts `tool` with `body` under `key` to `service` on a thread, and kills the service
/// `after` it was sent: the caller never learns the outcome.
/// A call to `tool` whose service is killed once `reached` holds.
fn cut_by_a_crash(service: Service, tool: &str, key: &str, body: &str, reached: impl Fn() -> bool) {
    let cut = std::thread::spawn({
        let request = http::Request::post(format!("{}/v1/tools/{tool}", service.base))
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("idempotency-key", format!("\"{key}\""))
            .body(body.as_bytes().to_vec())
            .unwrap();
        move || {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into();
            agent.run(request).is_err()
        }
    });
    support::await_state(&format!("{tool} to reach its cut"), reached);
    service.kill();
    assert!(cut.join().unwrap(), "the cut call got no answer");
}

#[test]
fn the_typescript_sdk_reads_the_recorded_answer_after_a_crash_and_unavailable_without_a_database() {
    let scratch = Scratch::new("typescript-faults");
    let flags = [
        "--provider-delay-ms",
        "400",
        support::SHORT_LEASE[0],
        support::SHORT_LEASE[1],
    ];
    // An SMS cut by a crash before the provider took it did nothing: once the killed call's
    // lease (600 ms) has passed, the same key runs it, and it is sent once.
    let service = Service::start(scratch.db(), &flags);
    let db = scratch.db().display().to_string();
    let sms_body = r#"{"to":"+15550100004","body":"Your code is 4411"}"#;
    cut_by_a_crash(service, "send_sms", "ts-cut-sms", sms_body, || {
        support::key_begun(&db, "ts-cut-sms")
    });
    let service = Service::start(scratch.db(), &flags);
    std::thread::sleep(Duration::from_secs(1));
    let answers = run_client(&service, &json!([[sms("+15550100004", "ts-cut-sms")]]));
    let sent = &answers[0][0];
    assert_eq!(sent["isError"], false, "{sent}");
    assert_eq!(
        sent["structuredContent"]["settlement"]["state"],
        "committed"
    );
    assert_eq!(support::provider_sends(&scratch.db()).len(), 1);

    // A batch cut by a crash after it created its campaign: its answer committed with the
    // campaign, so its key answers that (never `unknown`), naming the campaign to look up.
    let batch_body = r#"{"recipients":["+15550100006","+15550100007"],"message":"Sale"}"#;
    cut_by_a_crash(
        service,
        "send_campaign_batch",
        "ts-unknown",
        batch_body,
        || {
            support::count(
                &db,
                "SELECT count(*) FROM campaigns WHERE message = $1",
                "Sale",
            ) > 0
        },
    );
    let service = Service::start(scratch.db(), &flags);
    std::thread::sleep(Duration::from_secs(1));
    let batch = json!({
        "tool": "send_campaign_batch",
        "arguments": {
            "recipients": ["+15550100006", "+15550100007"],
            "message": "Sale",
            "idempotencyKey": "ts-unknown",
        }
    });
    let answers = run_client(&service, &json!([[batch]]));
    let recorded = &answers[0][0];
    assert_eq!(recorded["isError"], false, "{recorded}");
    assert_eq!(
        recorded["structuredContent"]["settlement"]["state"],
        "committed"
    );
    assert_eq!(recorded["structuredContent"]["impact"]["committed"], 2);
    assert!(
        recorded["structuredContent"]["campaignId"].is_string(),
        "{recorded}"
    );
    assert_eq!(
        recorded["structuredContent"]["recovery"]["suggestedNextTool"],
        "lookup_marketing_campaigns"
    );

    // The database deleted under the running service: it stops answering success.
    for suffix in ["", "-wal", "-shm"] {
        let mut path = scratch.db().into_os_string();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
    let answers = run_client(&service, &json!([[sms("+15550100005", "ts-gone")]]));
    assert_refused(&answers[0][0], "about:blank", 503);
}

/// Runs the MCP Inspector's `--strict` `tools/list` on the server `target` names (a URL and
/// its headers, or a command): it exits 0 and reports no portability problem.
fn assert_strict(target: &[&str], scratch: &Scratch) {
    let dir = client_dir();
    // A stdio server (the keyed example) keeps its ledger in the scratch directory, never in
    // the repository.
    let ledger = format!(
        "NOTES_LEDGER={}",
        scratch.db().with_extension("notes.db").display()
    );
    let out = Command::new(dir.join("node_modules/.bin/mcp-inspector"))
        .arg("--cli")
        .args(["-e", &ledger])
        .args(target)
        .args(["--method", "tools/list", "--strict"])
        .current_dir(&dir)
        .output()
        .expect("the MCP Inspector starts");
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the MCP Inspector's --strict exited {:?} on {target:?}:\n{report}",
        out.status.code()
    );
    assert!(
        !report.contains("Error:") && !report.contains("Warning:"),
        "{target:?}:\n{report}"
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = listed["tools"].as_array().unwrap();
    assert!(
        tools.iter().all(|tool| tool.get("outputSchema").is_some()),
        "every tool advertises an outputSchema: {listed}"
    );
}

/// Every example server's tool schemas pass the MCP Inspector's `--strict` (no type arrays,
/// no boolean subschemas where strict tooling refuses them): the campaign service over
/// Streamable HTTP, and the crate's two stdio example servers.
#[test]
fn the_mcp_inspector_strict_accepts_every_example_servers_tools() {
    let scratch = Scratch::new("inspector");
    let service = Service::start(scratch.db(), &[]);
    let url = format!("{}/mcp", service.base);
    let bearer = format!("Authorization: Bearer {TOKEN}");
    assert_strict(&[&url, "--header", &bearer], &scratch);
    for example in ["mcp_server", "keyed_mcp_server"] {
        let server = support::workspace_binary(&format!("examples/{example}"));
        assert_strict(&[server.to_str().unwrap()], &scratch);
    }
}
