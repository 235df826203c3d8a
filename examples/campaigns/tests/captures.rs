//! `atr classify` on the service's own responses: one capture (as `curl -i` prints it) of
//! every response `/openapi.json` documents that the service can give, each held to the
//! document as it is captured, all classified by the real `atr` with `--openapi`: every one
//! exits 0, and a response that really breaks the profile still exits 1.
//!
//! The document also lists 403 for every route: this service has no scopes, so no 403 is
//! ever answered, and none is captured.

use crate::support;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use support::{Raw, Scratch, Service, TOKEN, raw};

const OPTED_OUT: &str = "+15550109999";

/// The `atr` binary of this workspace, built if need be.
fn atr() -> PathBuf {
    support::workspace_binary("atr")
}

/// The response as `curl -i` prints it.
fn curl_i(response: &Raw) -> Vec<u8> {
    let mut text = format!("HTTP/1.1 {}\r\n", response.status);
    for (name, value) in &response.headers {
        let _ = write!(text, "{name}: {value}\r\n");
    }
    text.push_str("\r\n");
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(&response.body);
    bytes
}

fn post(base: &str, tool: &str, key: Option<&str>, body: &Value) -> Raw {
    let mut head = format!(
        "POST /v1/tools/{tool} HTTP/1.1\nAuthorization: Bearer {TOKEN}\nContent-Type: application/json"
    );
    if let Some(key) = key {
        let _ = write!(head, "\nIdempotency-Key: {key}");
    }
    raw(base, &head, body.to_string().as_bytes())
}

fn get(base: &str, path: &str, extra: &str) -> Raw {
    raw(
        base,
        &format!("GET {path} HTTP/1.1\nAuthorization: Bearer {TOKEN}{extra}"),
        b"",
    )
}

/// Every tool of the registry is an operation of the document, carrying its hints: the
/// guarantee tools idempotent (per key), the lookups read-only.
fn assert_every_tool_documented(document: &[u8]) {
    let openapi: Value = serde_json::from_slice(document).unwrap();
    for (path, method, read_only) in [
        ("/v1/tools/send_sms", "post", false),
        ("/v1/tools/send_campaign_batch", "post", false),
        ("/v1/campaigns/{campaignId}", "get", true),
        ("/v1/messages/{messageId}", "get", true),
    ] {
        let hints = &openapi["paths"][path][method]["x-mcp-annotations"];
        assert_eq!(hints["readOnlyHint"], read_only, "{path}: {hints}");
        if !read_only {
            assert_eq!(hints["idempotentHint"], true, "{path}: {hints}");
        }
    }
}

fn sms(to: &str) -> Value {
    json!({ "to": to, "body": "Your code is 4411" })
}

/// The responses captured so far, by name.
#[derive(Default)]
struct Captured(Vec<(&'static str, Raw)>);

impl Captured {
    fn keep(&mut self, name: &'static str, response: Raw, status: u16) {
        assert_eq!(
            response.status,
            status,
            "{name}: {}",
            String::from_utf8_lossy(&response.body)
        );
        self.0.push((name, response));
    }
}

/// The guarantee tools' answers: (the message sent, the campaign held).
fn tool_calls(captured: &mut Captured, base: &str) -> (String, String) {
    let allowed = post(base, "send_sms", Some("\"k-1\""), &sms("+15550100001"));
    let sent: Value = serde_json::from_slice(&allowed.body).unwrap();
    let message = sent["messageId"]
        .as_str()
        .unwrap_or_else(|| panic!("{sent}"))
        .to_owned();
    captured.keep("sms-allowed", allowed, 200);
    captured.keep(
        "sms-replayed",
        post(base, "send_sms", Some("\"k-1\""), &sms("+15550100001")),
        200,
    );
    captured.keep(
        "sms-denied",
        post(base, "send_sms", Some("\"k-2\""), &sms(OPTED_OUT)),
        422,
    );
    captured.keep(
        "key-missing",
        post(base, "send_sms", None, &sms("+15550100002")),
        400,
    );
    captured.keep(
        "key-invalid",
        post(base, "send_sms", Some("k-3"), &sms("+15550100002")),
        400,
    );
    captured.keep(
        "invalid-arguments",
        post(
            base,
            "send_sms",
            Some("\"k-4\""),
            &json!({ "to": "nope", "body": "x" }),
        ),
        400,
    );
    captured.keep(
        "key-mismatch",
        post(base, "send_sms", Some("\"k-1\""), &sms("+15550100003")),
        422,
    );
    // A batch over the window's cap of 1: one sent, the rest held.
    let batch = json!({ "recipients": ["+15550100011", "+15550100012", "+15550100013"], "message": "Sale" });
    let held = post(base, "send_campaign_batch", Some("\"b-1\""), &batch);
    let campaign: Value = serde_json::from_slice(&held.body).unwrap();
    let campaign = campaign["campaignId"].as_str().unwrap().to_owned();
    captured.keep("batch-held", held, 202);
    (message, campaign)
}

/// The lookups, found or not, and the auth faults.
fn lookups(captured: &mut Captured, base: &str, message: &str, campaign: &str) {
    // Found or not, a lookup answers 200 with its envelope.
    for (name, path) in [
        ("campaign-found", format!("/v1/campaigns/{campaign}")),
        ("campaign-not-found", "/v1/campaigns/cmp_none".to_owned()),
        ("message-found", format!("/v1/messages/{message}")),
        ("message-not-found", "/v1/messages/msg_none".to_owned()),
    ] {
        captured.keep(name, get(base, &path, ""), 200);
    }
    captured.keep(
        "unauthenticated",
        raw(base, "GET /v1/messages/msg_none HTTP/1.1", b""),
        401,
    );
    captured.keep(
        "invalid-token",
        raw(
            base,
            "GET /v1/messages/msg_none HTTP/1.1\nAuthorization: Bearer nope",
            b"",
        ),
        401,
    );
    captured.keep(
        "two-authorizations",
        get(
            base,
            "/v1/messages/msg_none",
            &format!("\nAuthorization: Bearer {TOKEN}"),
        ),
        400,
    );
}

/// The transport faults, a key in flight, and a store that cannot answer.
fn faults(captured: &mut Captured, base: &str, db: &str, unavailable_base: &str) {
    captured.keep("no-route", get(base, "/v1/nothing", ""), 404);
    captured.keep(
        "unknown-tool",
        post(
            base,
            "delete_everything",
            Some("\"k-5\""),
            &sms("+15550100004"),
        ),
        404,
    );
    captured.keep(
        "not-json",
        raw(
            base,
            &format!(
                "POST /v1/tools/send_sms HTTP/1.1\nAuthorization: Bearer {TOKEN}\nContent-Type: text/plain\nIdempotency-Key: \"k-6\""
            ),
            b"hello",
        ),
        415,
    );
    let large = json!({ "to": "+15550100005", "body": "x".repeat(2 * 1024 * 1024) });
    captured.keep(
        "too-large",
        post(base, "send_sms", Some("\"k-7\""), &large),
        413,
    );
    captured.keep(
        "uri-too-long",
        get(base, &format!("/v1/messages/{}", "m".repeat(10_000)), ""),
        414,
    );
    captured.keep(
        "headers-too-large",
        get(
            base,
            "/v1/messages/msg_none",
            &format!("\nX-Filler: {}", "f".repeat(20_000)),
        ),
        431,
    );
    // The same key while its first call is still with the provider (begun, and 1.2 s there).
    let slow = sms("+15550100006");
    std::thread::scope(|scope| {
        let first = scope.spawn(|| post(base, "send_sms", Some("\"k-8\""), &slow));
        support::await_begun(db, "k-8");
        captured.keep(
            "key-in-flight",
            post(base, "send_sms", Some("\"k-8\""), &slow),
            409,
        );
        assert_eq!(first.join().unwrap().status, 200);
    });
    // A service whose store cannot write: nothing sent, the same key later.
    captured.keep(
        "unavailable",
        post(
            unavailable_base,
            "send_sms",
            Some("\"k-9\""),
            &sms("+15550100007"),
        ),
        503,
    );
}

/// Every documented response the service gives, by name.
fn capture_all(base: &str, db: &str, unavailable_base: &str) -> Vec<(&'static str, Raw)> {
    let mut captured = Captured::default();
    let (message, campaign) = tool_calls(&mut captured, base);
    lookups(&mut captured, base, &message, &campaign);
    faults(&mut captured, base, db, unavailable_base);
    captured.0
}

#[test]
fn atr_classify_reads_every_documented_response_of_the_service() {
    let scratch = Scratch::new("captures");
    let service = Service::start(
        scratch.db(),
        &[
            "--cap",
            "1",
            "--opt-out",
            OPTED_OUT,
            "--provider-delay-ms",
            "1200",
            "--lease-ms",
            "10000",
        ],
    );
    // A second service whose database is deleted under it: its store cannot answer.
    let gone = Scratch::new("captures-gone");
    let full = Service::start(gone.db(), &[]);
    for suffix in ["", "-wal", "-shm"] {
        let mut path = gone.db().into_os_string();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
    let db = scratch.db().display().to_string();
    let captured = capture_all(&service.base, &db, &full.base);
    let dir = scratch.path().join("captures");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for (name, response) in &captured {
        let file = dir.join(format!("{name}.http"));
        std::fs::write(&file, curl_i(response)).unwrap();
        files.push(file);
    }
    let document = scratch.path().join("openapi.json");
    let published = get(&service.base, "/openapi.json", "");
    std::fs::write(&document, &published.body).unwrap();
    assert_every_tool_documented(&published.body);
    let atr = atr();
    let out = Command::new(&atr)
        .arg("classify")
        .arg("--openapi")
        .arg(&document)
        .args(&files)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "atr classify exited {:?}:\n{report}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        report.contains(&format!(
            "{} responses, 0 breaking the REST profile",
            files.len()
        )),
        "{report}"
    );
    for (name, expected) in [
        ("sms-allowed", "settled"),
        ("sms-denied", "policy denied"),
        ("batch-held", "deferred"),
        ("campaign-found", "envelope tool's success"),
        ("message-not-found", "envelope tool's failure"),
        ("key-in-flight", "refused (key-in-flight)"),
        ("unavailable", "refused (unavailable)"),
        ("unauthenticated", "unauthorized"),
        ("no-route", "transport fault"),
    ] {
        let line = report
            .lines()
            .find(|line| line.contains(&format!("{name}.http:")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{report}"));
        assert!(line.contains(expected), "{line}");
    }
    // A real breach still fails: the allow's result served as a problem, and a 200 whose
    // envelope breaks the first contract.
    let mut served_as_problem = captured[0].1.clone();
    for (name, value) in &mut served_as_problem.headers {
        if name == "content-type" {
            *value = "application/problem+json".to_owned();
        }
    }
    let mut bad_envelope = captured[0].1.clone();
    bad_envelope.body =
        br#"{"ok":false,"error":{"code":"Bad Code","category":"nope","detail":"x"}}"#.to_vec();
    for (name, breach) in [("problem", served_as_problem), ("envelope", bad_envelope)] {
        let file = dir.join(format!("breach-{name}.http"));
        std::fs::write(&file, curl_i(&breach)).unwrap();
        let out = Command::new(&atr)
            .arg("classify")
            .arg("--openapi")
            .arg(&document)
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
