//! The registry for real: a guarantee tool and a lookup, each listed with one line, served over
//! REST (axum on a loopback port, a real HTTP client), over MCP (an rmcp client through the
//! full handshake, the registry's router added to a server's own `#[tool]` router) and in the
//! OpenAPI document, with their hints as annotations; one key answers one decision across both
//! transports; what the registry checks at registration panics there, naming the tool.
#![cfg(all(feature = "axum", feature = "rmcp", feature = "openapi"))]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, Refusal, RefusalKind, Tally};
use agent_tool_result::http::RestProfile;
use agent_tool_result::http::openapi::OpenApi;
use agent_tool_result::http::ratelimit::Quota;
use agent_tool_result::registry::{Admission, EnvelopeTool, Principal, Registry};
use agent_tool_result::replay::{
    Done, GuaranteeTool, MemoryLedger, Operation, OperationFields, Sequence,
};
use agent_tool_result::{Envelope, Hints};
use rmcp::ServiceExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoteArgs {
    to: String,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Noted {
    note_id: String,
}

impl OperationFields for Noted {
    fn of_operation(id: &str) -> Self {
        Noted {
            note_id: id.to_owned(),
        }
    }
}

/// A guarantee tool counting its effects, so a second run would show.
struct SendNote(Arc<AtomicUsize>);

impl GuaranteeTool for SendNote {
    const NAME: &'static str = "send_note";
    const DESCRIPTION: &'static str = "Sends a note.";
    const OPERATION: &'static str = "note";
    const LOOKUP: &'static str = LookupNote::NAME;
    const HINTS: Hints = Hints::new().destructive(false);
    type Arguments = NoteArgs;
    type Fields = Noted;

    async fn run(&self, args: NoteArgs, operation: Operation) -> Done<Noted> {
        if args.to == "+15550100" {
            return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into();
        }
        self.0.fetch_add(1, Ordering::SeqCst);
        GuaranteeResult::committed_with(Tally::sent(1), Noted::of_operation(operation.id())).into()
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct LookupArgs {
    note_id: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Found {
    id: String,
    by: String,
}

/// A lookup answering who asked, by the id in its path.
struct LookupNote;

impl EnvelopeTool for LookupNote {
    const NAME: &'static str = "lookup_note";
    const DESCRIPTION: &'static str = "A note, by id.";
    const HINTS: Hints = Hints::READ_ONLY;
    type Arguments = LookupArgs;
    type Output = Found;
    type Error = std::convert::Infallible;

    async fn run(
        &self,
        args: LookupArgs,
        principal: &Principal,
    ) -> Result<Envelope<Found>, Self::Error> {
        Ok(Envelope::success(Found {
            id: args.note_id,
            by: principal.as_str().to_owned(),
        }))
    }
}

/// The server's own tools, beside the registry's in one router.
#[derive(Clone)]
struct Server {
    tool_router: ToolRouter<Server>,
}

#[tool_router]
impl Server {
    fn new(tools: &Registry<MemoryLedger>) -> Self {
        Server {
            tool_router: Self::tool_router() + tools.tool_router(),
        }
    }

    #[allow(clippy::unused_self, reason = "an rmcp tool is a method of its server")]
    #[tool(description = "Says the server is up.")]
    fn ping(&self) -> String {
        "pong".to_owned()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// The admission of an account `over` its rate limit (refused, retry in 30 s) or under it,
/// with the quota's fields either way.
fn admission(quota: &Quota, over: bool) -> Admission {
    if over {
        let refusal = Refusal::new(RefusalKind::RateLimited, "over the limit")
            .with_retry_after(std::time::Duration::from_secs(30));
        Admission::refused(refusal).with_rate_limit(quota, 0, std::time::Duration::from_secs(30))
    } else {
        Admission::admitted().with_rate_limit(quota, 3, std::time::Duration::from_secs(15))
    }
}

/// Two tools, one line each; the account `limited` is over its rate limit.
fn tools(sent: &Arc<AtomicUsize>) -> Registry<MemoryLedger> {
    let quota = Quota::new("per-account", 4, std::time::Duration::from_secs(60)).unwrap();
    Registry::new(Sequence::new(MemoryLedger::new()))
        .with_tools_path("/v1/tools")
        .with_default_principal("acct_1")
        .with_admission(move |_tool, principal| {
            std::future::ready(admission(&quota, principal.as_str() == "limited"))
        })
        .guarantee(SendNote(Arc::clone(sent)))
        .lookup(LookupNote, "/v1/notes/{noteId}")
}

/// Serves `tools`' REST routes and their OpenAPI document on a loopback port; a request with
/// an `x-account` header runs as that account (as a server's authentication would put it).
async fn serve_rest(tools: &Registry<MemoryLedger>) -> String {
    let document = tools.openapi(OpenApi::new("notes", "1.0.0")).to_value();
    let app = tools
        .rest_routes(RestProfile::default())
        .route(
            "/openapi.json",
            axum::routing::get(move || {
                let document = document.clone();
                async move { axum::Json(document) }
            }),
        )
        .layer(axum::middleware::map_request(
            |mut request: axum::extract::Request| async move {
                let account = request
                    .headers()
                    .get("x-account")
                    .and_then(|value| value.to_str().ok())
                    .map(Principal::new);
                if let Some(account) = account {
                    request.extensions_mut().insert(account);
                }
                request
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// A blocking HTTP call, off the runtime's workers.
fn http(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> http::Response<Vec<u8>> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = tokio::task::block_in_place(|| {
        let response = if method == "GET" {
            let mut request = agent.get(url);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            request.call()
        } else {
            let mut request = agent.post(url).header("content-type", "application/json");
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            request.send(serde_json::to_vec(body.unwrap()).unwrap().as_slice())
        };
        response.unwrap()
    });
    let body = response.body_mut().read_to_vec().unwrap();
    let mut out = http::Response::builder().status(response.status().as_u16());
    for (name, value) in response.headers() {
        out = out.header(name.as_str(), value.as_bytes());
    }
    out.body(body).unwrap()
}

fn json_of(response: &http::Response<Vec<u8>>) -> Value {
    serde_json::from_slice(response.body()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_listed_once_is_served_over_rest_and_mcp_and_documented() {
    let sent = Arc::new(AtomicUsize::new(0));
    let tools = tools(&sent);
    let base = serve_rest(&tools).await;
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(Server::new(&tools).serve(server_io), ().serve(client_io));
    let (server, client) = (server.unwrap(), client.unwrap());

    // REST: the key in its header; a replay is the first answer's bytes.
    let url = format!("{base}/v1/tools/send_note");
    let key = [("idempotency-key", "\"k-1\"")];
    let first = http("POST", &url, &key, Some(&json!({ "to": "+15550199" })));
    assert_eq!(first.status(), 200, "{:?}", first.body());
    assert_eq!(first.headers()["ratelimit"], "\"per-account\";r=3;t=15");
    let again = http("POST", &url, &key, Some(&json!({ "to": "+15550199" })));
    assert_eq!(again.body(), first.body());
    assert_eq!(again.headers()["idempotent-replayed"], "true");

    // MCP: the same key, in its argument, answers the same decision: nothing runs again.
    let call = |arguments: Value| {
        client.call_tool(
            CallToolRequestParams::new("send_note")
                .with_arguments(arguments.as_object().unwrap().clone()),
        )
    };
    let over_mcp = call(json!({ "to": "+15550199", "idempotencyKey": "k-1" }))
        .await
        .unwrap();
    assert_eq!(over_mcp.structured_content, Some(json_of(&first)));
    assert_eq!(sent.load(Ordering::SeqCst), 1, "one key, one effect");
    let denied = call(json!({ "to": "+15550100", "idempotencyKey": "k-2" }))
        .await
        .unwrap();
    assert_eq!(denied.is_error, Some(true));
    let unkeyed = call(json!({ "to": "+15550199" })).await.unwrap();
    assert_eq!(unkeyed.structured_content.unwrap()["status"], 400);

    // The admission refuses before anything runs: 429 with the RateLimit fields over REST.
    let limited = http(
        "POST",
        &url,
        &[("idempotency-key", "\"k-3\""), ("x-account", "limited")],
        Some(&json!({ "to": "+15550199" })),
    );
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["ratelimit"], "\"per-account\";r=0;t=30");
    assert!(limited.headers().contains_key("retry-after"));
    assert_eq!(sent.load(Ordering::SeqCst), 1);

    // The lookup: its path's parameter is its argument, its principal the request's.
    let found = http(
        "GET",
        &format!("{base}/v1/notes/note_7"),
        &[("x-account", "acct_9")],
        None,
    );
    assert_eq!(found.status(), 200);
    assert_eq!(
        json_of(&found)["result"],
        json!({ "id": "note_7", "by": "acct_9" })
    );
    let found = client
        .call_tool(
            CallToolRequestParams::new("lookup_note")
                .with_arguments(json!({ "noteId": "note_8" }).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(
        found.structured_content.unwrap()["result"],
        json!({ "id": "note_8", "by": "acct_1" })
    );
    // Any other name under the tools path is no tool.
    let unknown = http(
        "POST",
        &format!("{base}/v1/tools/nope"),
        &key,
        Some(&json!({})),
    );
    assert_eq!(unknown.status(), 404);
    assert_eq!(json_of(&unknown)["status"], 404);

    // tools/list: the registry's tools beside the server's own, annotated from their hints.
    let listed = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|tool| &*tool.name).collect();
    assert_eq!(names, ["lookup_note", "ping", "send_note"]);
    let hints = |name: &str| {
        let tool = listed.iter().find(|tool| tool.name == name).unwrap();
        serde_json::to_value(tool.annotations.clone().unwrap()).unwrap()
    };
    assert_eq!(
        hints("send_note"),
        json!({
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": true,
        })
    );
    assert_eq!(
        hints("lookup_note"),
        json!({ "readOnlyHint": true, "openWorldHint": false })
    );

    // The OpenAPI document: both operations, where REST serves them, with the same hints.
    let document = json_of(&http("GET", &format!("{base}/openapi.json"), &[], None));
    let post = &document["paths"]["/v1/tools/send_note"]["post"];
    assert_eq!(post["operationId"], "send_note");
    assert_eq!(post["x-mcp-annotations"], hints("send_note"));
    let get = &document["paths"]["/v1/notes/{noteId}"]["get"];
    assert_eq!(get["operationId"], "lookup_note");
    assert_eq!(get["x-mcp-annotations"], hints("lookup_note"));

    client.cancel().await.unwrap();
    server.cancel().await.unwrap();
}

/// One order for a keyed call on both transports: a settled key's replay is answered before
/// the account's admission (it does no work and spends no quota), byte for byte, while a new
/// call at the limit is refused 429 with `Retry-After`; a key refused as malformed is never
/// counted against the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_at_the_accounts_limit_answers_its_stored_answer_on_rest_and_mcp() {
    let sent = Arc::new(AtomicUsize::new(0));
    let at_limit = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let asked = Arc::new(AtomicUsize::new(0));
    let quota = Quota::new("per-account", 4, std::time::Duration::from_secs(60)).unwrap();
    let tools = {
        let (at_limit, asked) = (Arc::clone(&at_limit), Arc::clone(&asked));
        Registry::new(Sequence::new(MemoryLedger::new()))
            .with_tools_path("/v1/tools")
            .with_default_principal("acct_1")
            .with_admission(move |_tool, _principal| {
                asked.fetch_add(1, Ordering::SeqCst);
                std::future::ready(admission(&quota, at_limit.load(Ordering::SeqCst)))
            })
            .guarantee(SendNote(Arc::clone(&sent)))
            .lookup(LookupNote, "/v1/notes/{noteId}")
    };
    let base = serve_rest(&tools).await;
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(Server::new(&tools).serve(server_io), ().serve(client_io));
    let (server, client) = (server.unwrap(), client.unwrap());
    let url = format!("{base}/v1/tools/send_note");
    let body = json!({ "to": "+15550199" });

    let first = http("POST", &url, &[("idempotency-key", "\"k-1\"")], Some(&body));
    assert_eq!(first.status(), 200);
    let over_mcp = |key: &str| {
        client.call_tool(
            CallToolRequestParams::new("send_note").with_arguments(
                json!({ "to": "+15550199", "idempotencyKey": key })
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
    };
    let first_mcp = over_mcp("k-2").await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 2);

    at_limit.store(true, Ordering::SeqCst);
    for _ in 0..3 {
        let again = http("POST", &url, &[("idempotency-key", "\"k-1\"")], Some(&body));
        assert_eq!(again.status(), 200);
        assert_eq!(
            again.body(),
            first.body(),
            "the stored answer, byte for byte"
        );
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        let again_mcp = over_mcp("k-2").await.unwrap();
        assert_eq!(again_mcp.structured_content, first_mcp.structured_content);
        assert_eq!(again_mcp.content, first_mcp.content);
    }
    assert_eq!(asked.load(Ordering::SeqCst), 2, "a replay spends no quota");
    assert_eq!(sent.load(Ordering::SeqCst), 2);

    // A new call at the limit: 429 with Retry-After and the RateLimit fields; the same
    // refusal over MCP. Its key stays free for later.
    let limited = http("POST", &url, &[("idempotency-key", "\"k-3\"")], Some(&body));
    assert_eq!(limited.status(), 429);
    assert!(limited.headers().contains_key("retry-after"));
    assert_eq!(limited.headers()["ratelimit"], "\"per-account\";r=0;t=30");
    let limited_mcp = over_mcp("k-4").await.unwrap();
    assert_eq!(limited_mcp.is_error, Some(true));
    assert_eq!(
        limited_mcp.structured_content.unwrap()["status"],
        429,
        "the rate-limited refusal"
    );
    assert_eq!(sent.load(Ordering::SeqCst), 2);
    at_limit.store(false, Ordering::SeqCst);
    let later = http("POST", &url, &[("idempotency-key", "\"k-3\"")], Some(&body));
    assert_eq!(later.status(), 200);
    assert_eq!(sent.load(Ordering::SeqCst), 3);

    // A malformed key is refused before the admission, on both transports.
    let asked_before = asked.load(Ordering::SeqCst);
    let bad = http("POST", &url, &[("idempotency-key", "k-5")], Some(&body));
    assert_eq!(bad.status(), 400);
    let missing = client
        .call_tool(
            CallToolRequestParams::new("send_note")
                .with_arguments(body.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(missing.structured_content.unwrap()["status"], 400);
    assert_eq!(asked.load(Ordering::SeqCst), asked_before);

    client.cancel().await.unwrap();
    server.cancel().await.unwrap();
}

#[tokio::test]
async fn a_call_no_authentication_reached_is_refused() {
    let tools = Registry::new(Sequence::new(MemoryLedger::new()))
        .guarantee(SendNote(Arc::new(AtomicUsize::new(0))));
    let app = tools.rest_routes::<()>(RestProfile::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let response = tokio::task::spawn_blocking(move || {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent()
            .post(format!("{base}/tools/send_note"))
            .header("idempotency-key", "\"k\"")
            .header("content-type", "application/json")
            .send(&b"{\"to\":\"+15550199\"}"[..])
            .unwrap()
            .status()
            .as_u16()
    })
    .await
    .unwrap();
    assert_eq!(response, 401);
}

#[derive(Serialize, JsonSchema)]
struct Clashing {
    settlement: String,
}

impl OperationFields for Clashing {
    fn of_operation(id: &str) -> Self {
        Clashing {
            settlement: id.to_owned(),
        }
    }
}

struct Clash;

impl GuaranteeTool for Clash {
    const NAME: &'static str = "clash";
    const DESCRIPTION: &'static str = "Names a contract field.";
    const OPERATION: &'static str = "c";
    const LOOKUP: &'static str = "lookup_clash";
    type Arguments = NoteArgs;
    type Fields = Clashing;

    async fn run(&self, _: NoteArgs, _: Operation) -> Done<Clashing> {
        Done::Answer(Refusal::unavailable("never runs").into())
    }
}

#[test]
#[should_panic(expected = "guarantee tool `clash`: its fields' type names `settlement`")]
fn a_fields_type_naming_a_contract_field_is_refused_at_registration() {
    let _ = Registry::new(Sequence::new(MemoryLedger::new())).guarantee(Clash);
}

#[test]
#[should_panic(expected = "two tools are named `send_note`")]
fn two_tools_of_one_name_are_refused_at_registration() {
    let sent = Arc::new(AtomicUsize::new(0));
    let _ = Registry::new(Sequence::new(MemoryLedger::new()))
        .guarantee(SendNote(Arc::clone(&sent)))
        .guarantee(SendNote(sent));
}

struct Writes;

impl EnvelopeTool for Writes {
    const NAME: &'static str = "writes";
    const DESCRIPTION: &'static str = "Changes something.";
    type Arguments = LookupArgs;
    type Output = Found;
    type Error = std::convert::Infallible;

    async fn run(&self, _: LookupArgs, _: &Principal) -> Result<Envelope<Found>, Self::Error> {
        Ok(Envelope::success_empty())
    }
}

#[test]
#[should_panic(expected = "lookup `writes` is served by GET")]
fn a_lookup_that_writes_is_refused_at_registration() {
    let _ = Registry::new(Sequence::new(MemoryLedger::new())).lookup(Writes, "/v1/x/{noteId}");
}

#[test]
fn a_guarantee_tool_and_its_lookup_are_one_registration() {
    let tools = Registry::new(Sequence::new(MemoryLedger::new())).guarantee_with_lookup(
        SendNote(Arc::new(AtomicUsize::new(0))),
        LookupNote,
        "/v1/notes/{noteId}",
    );
    assert_eq!(
        tools.names().collect::<Vec<_>>(),
        ["send_note", "lookup_note"]
    );
}

#[test]
#[should_panic(
    expected = "guarantee tool `send_note` names `lookup_note` as its lookup, not `writes`"
)]
fn a_guarantee_tool_registered_with_another_lookup_is_refused() {
    let _ = Registry::new(Sequence::new(MemoryLedger::new())).guarantee_with_lookup(
        SendNote(Arc::new(AtomicUsize::new(0))),
        Writes,
        "/v1/x/{noteId}",
    );
}
