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

use std::io::Write;
use std::process::Command;
use std::sync::Mutex;
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
    let flags = ["--provider-delay-ms", "400"];
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

/// A stand-in authorization server on loopback: it serves its metadata (RFC 8414) and
/// nothing else, and records every path asked of it.
struct AuthorizationServer {
    issuer: String,
    asked: std::sync::Arc<Mutex<Vec<String>>>,
}

impl AuthorizationServer {
    fn start() -> Self {
        use std::io::{BufRead, BufReader};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let asked = std::sync::Arc::new(Mutex::new(Vec::new()));
        let (metadata, log) = (
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
            })
            .to_string(),
            std::sync::Arc::clone(&asked),
        );
        // Serves until the test process ends; one request per connection.
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) <= 2 {
                        break;
                    }
                }
                let (status, body) = if path == "/.well-known/oauth-authorization-server" {
                    ("200 OK", metadata.as_str())
                } else {
                    ("404 Not Found", "{}")
                };
                log.lock().unwrap().push(path);
                let _ = write!(
                    &stream,
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        AuthorizationServer { issuer, asked }
    }
}

/// OAuth discovery as the TypeScript SDK runs it, with nothing configured but the service's
/// `--authorization-server`: the 401 names the service's own protected resource metadata
/// (RFC 9728), which answers without a token and names the authorization server, whose
/// metadata the SDK reads, and the authorization starts with the metadata's resource. Four
/// steps of four.
#[test]
fn the_typescript_sdk_discovers_the_authorization_server_from_the_challenge() {
    discovers(None);
}

/// The same with the usual MCP resource identifier, a URL with a path
/// (`--public-url http://127.0.0.1:PORT/mcp`): the metadata is published where the
/// challenge names it, with the path after the well-known one (RFC 9728 section 3.1).
#[test]
fn the_typescript_sdk_discovers_the_authorization_server_of_a_resource_with_a_path() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    discovers(Some((addr, "/mcp")));
}

/// OAuth discovery, four steps of four, of a service with `--authorization-server` and, when
/// given, its address and the path of its `--public-url`.
fn discovers(public: Option<(std::net::SocketAddr, &str)>) {
    let issuer = AuthorizationServer::start();
    let scratch = Scratch::new("ts-oauth");
    let mut flags = vec!["--authorization-server".to_owned(), issuer.issuer.clone()];
    if let Some((addr, path)) = public {
        flags.extend([
            "--addr".to_owned(),
            addr.to_string(),
            "--public-url".to_owned(),
            format!("http://{addr}{path}"),
        ]);
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let service = Service::start(scratch.db(), &flags);
    let path = public.map_or("", |(_, path)| path);
    let resource = format!("{}{path}", service.base);
    let dir = client_dir();
    let out = Command::new("node")
        .arg(dir.join("auth.mjs"))
        .arg(format!("{}/mcp", service.base))
        .current_dir(&dir)
        .output()
        .expect("node starts");
    assert!(
        out.status.success(),
        "the TypeScript client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let requests = report["requests"].as_array().unwrap();
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource{path}",
        service.base
    );
    // 1. The MCP endpoint answers 401 and names the metadata.
    let challenged = requests
        .iter()
        .find(|r| r["url"] == format!("{}/mcp", service.base) && r["status"] == 401)
        .unwrap_or_else(|| panic!("no 401 from the MCP endpoint: {report}"));
    let challenge = challenged["wwwAuthenticate"].as_str().unwrap();
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    // 2. The metadata answers 200 without a token and names the authorization server.
    let metadata = requests
        .iter()
        .find(|r| r["url"] == metadata_url)
        .unwrap_or_else(|| panic!("the metadata was never read: {report}"));
    assert_eq!(metadata["status"], 200, "{report}");
    assert_eq!(metadata["sentAuthorization"], false);
    assert_eq!(metadata["body"]["resource"], resource);
    assert_eq!(
        metadata["body"]["authorization_servers"],
        json!([issuer.issuer])
    );
    assert_eq!(
        metadata["body"]["bearer_methods_supported"],
        json!(["header"])
    );
    // 3. The authorization server's metadata is read.
    assert!(
        issuer
            .asked
            .lock()
            .unwrap()
            .iter()
            .any(|path| path == "/.well-known/oauth-authorization-server"),
        "{report}"
    );
    // 4. The authorization starts at the server's endpoint, for the metadata's resource,
    //    with PKCE.
    let authorization = report["authorizationUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("the authorization never started: {report}"));
    assert!(
        authorization.starts_with(&format!("{}/authorize?", issuer.issuer)),
        "{authorization}"
    );
    let query = query_of(authorization);
    let param = |name: &str| {
        query
            .iter()
            .find(|(each, _)| each == name)
            .map(|(_, value)| value.as_str())
    };
    assert_eq!(
        param("resource"),
        Some(resource.as_str()),
        "{authorization}"
    );
    assert_eq!(
        param("code_challenge_method"),
        Some("S256"),
        "{authorization}"
    );
    assert_eq!(param("client_id"), Some("campaigns-auth-test"));
}

/// Without `--authorization-server` there is nothing public at the well-known path, and no
/// challenge names it.
#[test]
fn without_an_authorization_server_no_metadata_is_published() {
    let scratch = Scratch::new("ts-oauth-plain");
    let plain = Service::start(scratch.db(), &[]);
    let hidden = support::send(
        http::Request::get(format!(
            "{}/.well-known/oauth-protected-resource",
            plain.base
        ))
        .body(Vec::new())
        .unwrap(),
    );
    assert_eq!(hidden.status(), 401);
    assert!(
        !hidden.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("resource_metadata")
    );
}

/// The query parameters of `url`, decoded.
fn query_of(url: &str) -> Vec<(String, String)> {
    url.split_once('?')
        .map_or("", |(_, query)| query)
        .split('&')
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (name.to_owned(), percent_decoded(value))
        })
        .collect()
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
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
        let server =
            support::workspace_binary(&["--example", example], &format!("examples/{example}"));
        assert_strict(&[server.to_str().unwrap()], &scratch);
    }
}
