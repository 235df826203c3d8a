//! MCP 2026-07-28 over `/mcp`, as a stateless client speaks it, over raw HTTP (the TypeScript
//! SDK's own 2026-07-28 client is in `typescript.rs`; here each header and `_meta` member is
//! set, or left out, by hand): no `initialize`, each request carrying its revision and
//! capabilities in `_meta` and its method (and tool) in the `Mcp-Method` (and `Mcp-Name`)
//! headers. The listing and a guarantee tool's call answer, the call's replay by key is its
//! first answer, and what the transport refuses (a request without `Mcp-Method`, a tool that
//! does not exist) is a JSON-RPC error that says what to fix, never a problem a JSON-RPC
//! client cannot read.

use crate::support;

use serde_json::{Value, json};
use support::{Raw, Scratch, Service, TOKEN, raw};

const REVISION: &str = "2026-07-28";

/// A stateless request of `method` (`params` gets the revision's `_meta`), with `headers`.
fn request(id: u32, method: &str, mut params: Value, headers: &str) -> (String, Vec<u8>) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "1" },
    });
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    let head = format!(
        "POST /mcp HTTP/1.1\nContent-Type: application/json\nAccept: application/json, \
         text/event-stream\nAuthorization: Bearer {TOKEN}\nMCP-Protocol-Version: {REVISION}\
         {headers}"
    );
    (head, body.to_string().into_bytes())
}

/// The JSON-RPC message an answer carries: its JSON body, or its event stream's message.
fn message(response: &Raw) -> Value {
    let body = String::from_utf8_lossy(&response.body);
    let is_stream = response
        .header("content-type")
        .iter()
        .any(|value| value.starts_with("text/event-stream"));
    let text = if is_stream {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim_start)
            .find(|data| !data.is_empty())
            .unwrap_or_else(|| panic!("an event with data: {body}"))
            .to_owned()
    } else {
        body.into_owned()
    };
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{err}: {text}"))
}

fn send(service: &Service, (head, body): (String, Vec<u8>)) -> Raw {
    raw(&service.base, &head, &body)
}

#[test]
fn a_stateless_2026_07_28_client_lists_calls_and_replays_by_key() {
    let scratch = Scratch::new("stateless");
    let service = Service::start(scratch.db(), &[]);

    let listed = send(
        &service,
        request(1, "tools/list", json!({}), "\nMcp-Method: tools/list"),
    );
    assert_eq!(
        listed.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&listed.body)
    );
    let listed = message(&listed);
    let tools: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a listing: {listed}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"send_sms"), "{tools:?}");

    let sms = json!({
        "name": "send_sms",
        "arguments": { "to": "+15550100001", "body": "hi", "idempotencyKey": "stateless-1" },
    });
    let headers = "\nMcp-Method: tools/call\nMcp-Name: send_sms";
    let first = message(&send(
        &service,
        request(2, "tools/call", sms.clone(), headers),
    ));
    let result = &first["result"];
    assert_eq!(result["resultType"], "complete", "{first}");
    assert_eq!(result["isError"], false, "{first}");
    assert_eq!(
        result["structuredContent"]["settlement"]["state"], "committed",
        "{first}"
    );
    // The same key again: the first answer, and nobody sent twice.
    let again = message(&send(&service, request(3, "tools/call", sms, headers)));
    assert_eq!(again["result"], first["result"], "{again}");
    assert_eq!(support::provider_sends(&scratch.db()).len(), 1);

    // An unknown tool is a JSON-RPC error that names it.
    let unknown = json!({ "name": "delete_everything", "arguments": {} });
    let refused = message(&send(
        &service,
        request(
            4,
            "tools/call",
            unknown,
            "\nMcp-Method: tools/call\nMcp-Name: delete_everything",
        ),
    ));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|text| text.contains("delete_everything")),
        "{refused}"
    );
}

#[test]
fn a_stateless_call_without_its_method_header_is_told_what_is_missing() {
    let scratch = Scratch::new("stateless-headers");
    let service = Service::start(scratch.db(), &[]);
    let sms = json!({
        "name": "send_sms",
        "arguments": { "to": "+15550100001", "body": "hi", "idempotencyKey": "stateless-2" },
    });
    let response = send(&service, request(1, "tools/call", sms, ""));
    assert_eq!(response.status, 400);
    assert_eq!(
        response.header("content-type"),
        ["application/json"],
        "the transport's own answer, not a problem: {:?}",
        String::from_utf8_lossy(&response.body)
    );
    let refused = message(&response);
    assert_eq!(refused["jsonrpc"], "2.0", "{refused}");
    let text = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(text.contains("Mcp-Method"), "{refused}");
    // Nothing ran.
    assert!(support::provider_sends(&scratch.db()).is_empty());
}
