//! The service's HTTP edge, with requests sent as they are over TCP: the bearer token is
//! checked on `/mcp` exactly as on REST (401 with the `Bearer` challenge, `resource_metadata`
//! when configured; a repeated `Authorization` refused), the MCP endpoint validates `Host`
//! and `Origin` (DNS rebinding) with configurable lists and keeps no session, and every
//! non-2xx answer of the service, whoever produced it, is an RFC 9457 problem.

use crate::support;

use serde_json::Value;
use support::{Raw, Scratch, Service, TOKEN, provider_sends, raw};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn mcp_post(extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\nContent-Type: application/json\nAccept: application/json, text/event-stream{extra}"
    )
}

fn auth() -> String {
    format!("\nAuthorization: Bearer {TOKEN}")
}

/// A problem: its content type, and a `status` member that repeats the HTTP status.
fn assert_problem(response: &Raw, status: u16, what: &str) {
    assert_eq!(
        response.status,
        status,
        "{what}: {}",
        String::from_utf8_lossy(&response.body)
    );
    assert_eq!(
        response.header("content-type"),
        ["application/problem+json"],
        "{what}"
    );
    let body: Value = serde_json::from_slice(&response.body)
        .unwrap_or_else(|err| panic!("{what}: {err}: {:?}", response.body));
    assert_eq!(body["status"], status, "{what}: {body}");
    assert!(
        body["type"].is_string() && body["title"].is_string(),
        "{what}: {body}"
    );
}

#[test]
fn mcp_takes_the_same_bearer_token_as_rest() {
    let scratch = Scratch::new("mcp-auth");
    let metadata = "https://campaigns.example/.well-known/oauth-protected-resource";
    let service = Service::start(scratch.db(), &["--resource-metadata", metadata]);
    let sms = br#"{"to":"+15550100001","body":"hi"}"#;
    let sms_call = |extra: &str| {
        raw(
            &service.base,
            &format!(
                "POST /v1/tools/send_sms HTTP/1.1\nContent-Type: application/json\nIdempotency-Key: \"k-1\"{extra}"
            ),
            sms,
        )
    };
    for (name, extra) in [
        ("no token", String::new()),
        (
            "another scheme",
            "\nAuthorization: Basic dXNlcg==".to_owned(),
        ),
    ] {
        for response in [
            raw(&service.base, &mcp_post(&extra), INITIALIZE.as_bytes()),
            sms_call(&extra),
        ] {
            assert_problem(&response, 401, name);
            assert_eq!(
                response.header("www-authenticate"),
                [format!(
                    r#"Bearer realm="campaigns", resource_metadata="{metadata}""#
                )],
                "{name}"
            );
        }
    }
    let forged = "\nAuthorization: Bearer forged".to_owned();
    for response in [
        raw(&service.base, &mcp_post(&forged), INITIALIZE.as_bytes()),
        sms_call(&forged),
    ] {
        assert_problem(&response, 401, "a wrong token");
        let challenge = response.header("www-authenticate").join(" ");
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{challenge}"
        );
        assert!(challenge.contains("resource_metadata="), "{challenge}");
    }
    // Two Authorization headers are ambiguous: refused, whichever comes first.
    let twice = format!("{}\nAuthorization: Bearer forged", auth());
    for response in [
        raw(&service.base, &mcp_post(&twice), INITIALIZE.as_bytes()),
        sms_call(&twice),
    ] {
        assert_problem(&response, 400, "two Authorization headers");
    }
    assert!(provider_sends(&scratch.db()).is_empty(), "nothing was sent");
    // The right token passes on both.
    let initialized = raw(&service.base, &mcp_post(&auth()), INITIALIZE.as_bytes());
    assert_eq!(
        initialized.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&initialized.body)
    );
    assert!(
        initialized.header("mcp-session-id").is_empty(),
        "the endpoint is stateless: no session is kept"
    );
    assert_eq!(sms_call(&auth()).status, 200);
}

#[test]
fn mcp_validates_host_and_origin_and_both_lists_are_configurable() {
    let scratch = Scratch::new("mcp-hosts");
    let strict = Service::start(scratch.db(), &[]);
    let with = |extra: &str, service: &Service| {
        raw(
            &service.base,
            &mcp_post(&format!("{}{extra}", auth())),
            INITIALIZE.as_bytes(),
        )
    };
    // Each refusal names the header, the value refused, and what is admitted.
    let names = |response: &Raw, said: &[&str]| {
        let body: Value = serde_json::from_slice(&response.body).unwrap();
        let detail = body["detail"].as_str().unwrap_or_default();
        for part in said {
            assert!(detail.contains(part), "{part:?} in {detail:?}");
        }
    };
    let host = with("\nHost: campaigns.example", &strict);
    assert_problem(&host, 403, "a Host that is not allowed");
    names(
        &host,
        &[
            "Host",
            "`campaigns.example`",
            "localhost, 127.0.0.1, ::1",
            "--allowed-host",
        ],
    );
    let origin = with("\nOrigin: http://evil.example", &strict);
    assert_problem(&origin, 403, "an Origin that is not allowed");
    names(
        &origin,
        &["Origin", "`http://evil.example`", "--allowed-origin"],
    );
    assert_eq!(with("", &strict).status, 200, "no Origin passes");
    drop(strict);
    let open = Service::start(
        scratch.db(),
        &[
            "--allowed-host",
            "campaigns.example",
            "--allowed-origin",
            "https://app.campaigns.example",
        ],
    );
    assert_eq!(with("\nHost: campaigns.example", &open).status, 200);
    // A host added keeps the loopback names.
    for host in ["localhost", "127.0.0.1"] {
        assert_eq!(
            with(&format!("\nHost: {host}"), &open).status,
            200,
            "{host}"
        );
    }
    assert_eq!(
        with(
            "\nHost: campaigns.example\nOrigin: https://app.campaigns.example",
            &open
        )
        .status,
        200
    );
    let outside = with(
        "\nHost: campaigns.example\nOrigin: http://evil.example",
        &open,
    );
    assert_problem(&outside, 403, "an Origin outside the configured list");
    names(
        &outside,
        &["`http://evil.example`", "https://app.campaigns.example"],
    );
}

#[test]
fn every_non_2xx_answer_is_a_problem() {
    let scratch = Scratch::new("problems");
    let service = Service::start(scratch.db(), &[]);
    let get = |target: &str, extra: &str| {
        raw(
            &service.base,
            &format!("GET {target} HTTP/1.1{}{extra}", auth()),
            b"",
        )
    };
    assert_problem(&get("/no/such/route", ""), 404, "an unknown route");
    let wrong_method = get("/v1/tools/send_sms", "");
    assert_problem(&wrong_method, 405, "a method the route does not serve");
    assert!(
        !wrong_method.header("allow").is_empty(),
        "405 names the methods"
    );
    assert_problem(
        &get("/v1/campaigns/%ff%fe", ""),
        400,
        "a percent-escape that is not UTF-8",
    );
    assert_problem(
        &raw(&service.base, "GET /v1/campaigns/%ff%fe HTTP/1.1", b""),
        401,
        "a percent-escape that is not UTF-8 without a token: the token is checked first",
    );
    let long = format!("/v1/campaigns/{}", "c".repeat(10_000));
    assert_problem(&get(&long, ""), 414, "a request target over the limit");
    let big_header = format!("\nX-Padding: {}", "p".repeat(20_000));
    assert_problem(
        &get("/v1/campaigns/c", &big_header),
        431,
        "header fields over the limit",
    );
    let big_body = vec![b' '; 2 * 1024 * 1024];
    let too_large = raw(
        &service.base,
        &format!(
            "POST /v1/tools/send_sms HTTP/1.1\nContent-Type: application/json\nIdempotency-Key: \"big\"{}",
            auth()
        ),
        &big_body,
    );
    assert_problem(&too_large, 413, "a body over the limit");
    let too_large_mcp = raw(&service.base, &mcp_post(&auth()), &big_body);
    assert_problem(&too_large_mcp, 413, "an MCP body over the limit");
    let not_json = raw(
        &service.base,
        &format!(
            "POST /v1/tools/send_sms HTTP/1.1\nContent-Type: text/plain\nIdempotency-Key: \"t\"{}",
            auth()
        ),
        b"hi",
    );
    assert_problem(&not_json, 415, "a body that is not JSON");
    let unknown_tool = raw(
        &service.base,
        &format!(
            "POST /v1/tools/delete_everything HTTP/1.1\nContent-Type: application/json\nIdempotency-Key: \"t\"{}",
            auth()
        ),
        b"{}",
    );
    assert_problem(&unknown_tool, 404, "an unknown tool");
}

/// A thousand MCP initializations leave nothing behind: the endpoint keeps no session, so
/// its memory does not grow with the sessions opened.
#[cfg(target_os = "linux")]
#[test]
fn opening_a_thousand_sessions_keeps_nothing_resident() {
    let scratch = Scratch::new("sessions");
    let service = Service::start(scratch.db(), &[]);
    let resident_kib = || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", service.pid())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .unwrap()
    };
    // Warm up: the first requests grow the allocator's pools.
    for _ in 0..100 {
        assert_eq!(
            raw(&service.base, &mcp_post(&auth()), INITIALIZE.as_bytes()).status,
            200
        );
    }
    let before = resident_kib();
    for _ in 0..1_000 {
        let response = raw(&service.base, &mcp_post(&auth()), INITIALIZE.as_bytes());
        assert_eq!(response.status, 200);
        assert!(response.header("mcp-session-id").is_empty());
    }
    let grown = resident_kib().saturating_sub(before);
    assert!(grown < 8 * 1024, "1,000 sessions left {grown} KiB resident");
}
