//! The campaign service as a child process on 127.0.0.1 (a port it picks), a scratch
//! database, and a REST client that returns responses as they came over the wire.
#![allow(dead_code)]

#[path = "../../../../tests/support/built.rs"]
mod built;
pub mod keyed;
#[path = "../../../../tests/support/patroni.rs"]
pub mod patroni;
#[path = "../../../../tests/support/pgbouncer.rs"]
pub mod pgbouncer;
#[path = "../../../../tests/support/postgres.rs"]
pub mod postgres;
pub mod provider;
pub mod proxy;
pub mod python;
mod raw;
pub mod sdk;
pub mod typescript;
#[path = "../../../../tests/support/venv.rs"]
pub mod venv;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::{GuaranteeResult, SettlementState};
use agent_tool_result::http::{RestOutcome, classify};
use serde_json::Value;

#[allow(unused_imports, reason = "each test binary uses the part it needs")]
pub use raw::{Raw, raw};

/// The token the service is started with.
pub const TOKEN: &str = "test-token";

/// The lease of a service started without `--lease-ms`: longer than any call takes on a
/// loaded machine. A call that outlasts its lease is answered 503 (its hold on the key lost,
/// rightly), so a test whose subject is not the lease (agreement, counts, replays) must not
/// let a busy machine's slow call outlast it.
pub const AMPLE_LEASE: [&str; 2] = ["--lease-ms", "30000"];

/// A short lease, for the tests about a key a killed or stopped process held: answered soon.
pub const SHORT_LEASE: [&str; 2] = ["--lease-ms", "600"];

/// Statements bounded at 30 s, not the service's default 2, for the tests about counts and
/// agreement: on a loaded machine a longer wait (many connections queued on a pooler's few)
/// is answered 503, rightly, and such a test is not about latency.
pub const AMPLE_STATEMENTS: [&str; 2] = ["--db-timeout-ms", "30000"];

/// The fault tests' service: a lease of a second, statements bounded at `db_timeout_ms`, ten
/// milliseconds a send, and room for every recipient now (a batch of thirty takes about half
/// its lease).
pub const fn fault_flags(db_timeout_ms: &'static str) -> [&'static str; 10] {
    [
        "--cap",
        "100000",
        "--window-secs",
        "3600",
        "--provider-delay-ms",
        "10",
        "--lease-ms",
        "1000",
        "--db-timeout-ms",
        db_timeout_ms,
    ]
}

/// When this test binary's services start their send windows: a minute before a service is
/// first started, on a whole second, in milliseconds since 1970 (shared by every service of
/// the binary, so processes of one test agree on their windows). A window of an hour is then
/// well under way when the tests start, whatever the database's clock reads (SQLite's may be a
/// millisecond behind the system's), and none starts during them.
pub fn window_origin() -> i64 {
    static ORIGIN: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *ORIGIN.get_or_init(|| {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970");
        // On a whole second, as an HTTP date (`Retry-After`) names it.
        (i64::try_from(since.as_secs()).expect("a date this millennium") - 60) * 1000
    })
}

/// A scratch directory for one test's database, removed when dropped.
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "campaigns-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch { dir }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.join("campaigns.sqlite")
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A running service; dropping it kills the process.
pub struct Service {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Service {
    /// Starts the service on `db` (a SQLite path or a `postgres://` URL) with `extra`
    /// arguments, and waits until it listens.
    pub fn start(db: impl AsRef<std::ffi::OsStr>, extra: &[&str]) -> Self {
        Service::start_with(db, extra, Stdio::inherit())
    }

    /// [`Service::start`] with the service's stderr (its log) sent to `stderr`.
    pub fn start_with(db: impl AsRef<std::ffi::OsStr>, extra: &[&str], stderr: Stdio) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_campaigns"));
        command.arg("--db").arg(db).args(["--token", TOKEN]);
        if !extra.contains(&"--addr") {
            command.args(["--addr", "127.0.0.1:0"]);
        }
        if !extra.contains(&"--window-origin-ms") {
            // Windows start when the test binary did, so none of an hour starts mid-test,
            // whatever the time of day.
            command.args(["--window-origin-ms", &window_origin().to_string()]);
        }
        if !extra.contains(&"--lease-ms") {
            command.args(AMPLE_LEASE);
        }
        let mut child = command
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the service starts");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the first line names the address: {line:?}"))
            .to_owned();
        Service {
            base,
            child,
            stdout,
        }
    }

    /// The next line the service writes on stdout (after the first, which names its
    /// address): where it serves its metrics, say.
    pub fn next_line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line.trim().to_owned()
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends the process `signal` (`STOP` pauses it where it is, `CONT` resumes it).
    pub fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill(1) runs");
        assert!(sent.success(), "kill -{signal} {}", self.pid());
    }

    /// Kills the process at once (SIGKILL on Unix): no chance to finish anything.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Calls guarantee tool `tool` with `key` as its `Idempotency-Key`.
    pub fn call(&self, tool: &str, key: &str, arguments: &Value) -> http::Response<Vec<u8>> {
        self.call_as(TOKEN, tool, key, arguments)
    }

    /// [`Service::call`] with another bearer token.
    pub fn call_as(
        &self,
        token: &str,
        tool: &str,
        key: &str,
        arguments: &Value,
    ) -> http::Response<Vec<u8>> {
        let request = http::Request::post(format!("{}/v1/tools/{tool}", self.base))
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {token}"))
            .header("idempotency-key", format!("\"{key}\""))
            .body(serde_json::to_vec(arguments).unwrap())
            .unwrap();
        send(request)
    }

    /// Posts `send_campaign_batch` with `key` on a thread of its own: its status and body,
    /// or `None` when the connection died first (the service was killed: the caller never
    /// learns the outcome).
    pub fn batch_in_background(
        &self,
        key: &str,
        batch: &Value,
    ) -> std::thread::JoinHandle<Option<FirstReply>> {
        let request = http::Request::post(format!("{}/v1/tools/send_campaign_batch", self.base))
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("idempotency-key", format!("\"{key}\""))
            .body(serde_json::to_vec(batch).unwrap())
            .unwrap();
        std::thread::spawn(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into();
            let mut response = agent.run(request).ok()?;
            let status = response.status().as_u16();
            let body = response.body_mut().read_to_vec().ok()?;
            Some(FirstReply { status, body })
        })
    }

    /// [`Service::call`], again while the key is in flight (409) or the service unavailable
    /// (503): a key a killed process held answers once its lease has passed, and a service
    /// whose database was down once it is back, for at most 15 seconds.
    pub fn call_after_lease(
        &self,
        tool: &str,
        key: &str,
        arguments: &Value,
    ) -> http::Response<Vec<u8>> {
        self.call_until_answered(tool, key, arguments, Duration::from_secs(15))
    }

    /// [`Service::call_after_lease`] for at most `within` (a failover takes longer).
    pub fn call_until_answered(
        &self,
        tool: &str,
        key: &str,
        arguments: &Value,
        within: Duration,
    ) -> http::Response<Vec<u8>> {
        let deadline = Instant::now() + within;
        loop {
            let response = self.call(tool, key, arguments);
            if ![409, 503].contains(&response.status().as_u16()) {
                return response;
            }
            assert!(
                Instant::now() < deadline,
                "{key} stayed {}: {}",
                response.status(),
                String::from_utf8_lossy(response.body())
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Looks campaign `id` up over REST and returns its envelope.
    pub fn lookup(&self, id: &str) -> Value {
        self.lookup_as(TOKEN, "campaigns", id)
    }

    /// Looks `id` up in `what` (`campaigns` or `messages`) over REST with `token`, and
    /// returns its envelope.
    pub fn lookup_as(&self, token: &str, what: &str, id: &str) -> Value {
        let request = http::Request::get(format!("{}/v1/{what}/{id}", self.base))
            .header("authorization", format!("Bearer {token}"))
            .body(Vec::new())
            .unwrap();
        let response = send(request);
        assert_eq!(response.status(), 200);
        serde_json::from_slice(response.body()).unwrap()
    }

    /// Looks campaign `id` up until `done` holds for its result, for at most 30 seconds.
    pub fn lookup_until(&self, id: &str, done: impl Fn(&Value) -> bool) -> Value {
        self.lookup_until_as(TOKEN, id, done)
    }

    /// [`Service::lookup_until`], with `token`.
    pub fn lookup_until_as(&self, token: &str, id: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found = self.lookup_as(token, "campaigns", id);
            if done(&found["result"]) {
                return found["result"].clone();
            }
            assert!(Instant::now() < deadline, "never reached: {found}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[path = "../../../../tests/support/openapi.rs"]
mod openapi;

/// How many responses were held to the service's own OpenAPI document, in this test binary.
pub static CONFORMING: AtomicU32 = AtomicU32::new(0);

/// Sends `request`, with any status, and returns the response as it came, once it is held to
/// the service's own `/openapi.json` (status, content type, body schema, headers) when the
/// document describes its path: a response the document does not allow fails the test.
pub fn send(request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let (method, uri) = (request.method().clone(), request.uri().clone());
    let (parts, mut body) = agent.run(request).unwrap().into_parts();
    let response = http::Response::from_parts(parts, body.read_to_vec().unwrap());
    if let Some(origin) = uri.authority() {
        hold_to_document(
            &format!("http://{origin}"),
            method.as_str(),
            uri.path(),
            &response,
        );
    }
    response
}

/// Holds `response` to the `/openapi.json` of the service at `origin`, when the document
/// describes `method` and `path`; panics saying why when it breaks it.
fn hold_to_document(origin: &str, method: &str, path: &str, response: &http::Response<Vec<u8>>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let document = document(&agent, origin);
    match openapi::conforms(&document, method, path, response) {
        Ok(true) => {
            CONFORMING.fetch_add(1, Ordering::Relaxed);
        }
        Ok(false) => {}
        Err(why) => panic!(
            "the response breaks /openapi.json: {why}\n{}",
            String::from_utf8_lossy(response.body())
        ),
    }
}

/// The service's OpenAPI document, fetched once per origin.
fn document(agent: &ureq::Agent, origin: &str) -> Value {
    static DOCUMENTS: std::sync::Mutex<Vec<(String, Value)>> = std::sync::Mutex::new(Vec::new());
    let mut documents = DOCUMENTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, document)) = documents.iter().find(|(seen, _)| seen == origin) {
        return document.clone();
    }
    let mut response = agent
        .get(format!("{origin}/openapi.json"))
        .call()
        .expect("the service publishes /openapi.json");
    let document: Value = response.body_mut().read_json().expect("a JSON document");
    documents.push((origin.to_owned(), document.clone()));
    document
}

/// Sends by the provider: (campaign, phone) pairs, one per accepted send, duplicates kept.
pub fn provider_sends(db: &Path) -> Vec<(Option<String>, String)> {
    let connection = rusqlite::Connection::open(db).unwrap();
    connection.busy_timeout(Duration::from_secs(5)).unwrap();
    let mut rows = connection
        .prepare("SELECT campaign_id, phone FROM provider_sends ORDER BY seq")
        .unwrap();
    rows.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// How many rows `sql` (a `count(*)` with one parameter, `$1`) counts on `db`, SQLite or
/// PostgreSQL; none while the database cannot answer.
pub fn count(db: &str, sql: &str, parameter: &str) -> i64 {
    if db.starts_with("postgres") {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        return runtime.block_on(async {
            let Ok((client, connection)) = tokio_postgres::connect(db, tokio_postgres::NoTls).await
            else {
                return 0;
            };
            tokio::spawn(connection);
            client
                .query_one(sql, &[&parameter])
                .await
                .map_or(0, |row| row.get::<_, i64>(0))
        });
    }
    let connection = rusqlite::Connection::open(db).unwrap();
    connection
        .query_row(&sql.replace("$1", "?1"), [parameter], |row| row.get(0))
        .unwrap_or(0)
}

/// Whether `key` is in the idempotency ledger (begun, answered or not).
pub fn key_begun(db: &str, key: &str) -> bool {
    count(
        db,
        "SELECT count(*) FROM atr_idempotency WHERE key = $1",
        key,
    ) > 0
}

/// Waits (up to thirty seconds) until `done` holds: a call has reached the point a test
/// meets it at, however slowly the machine runs.
pub fn await_state(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "waited 30 s for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until `key` is begun: its call is under way.
pub fn await_begun(db: &str, key: &str) {
    await_state(&format!("{key} to be begun"), || key_begun(db, key));
}

/// The workspace's binary `name` (`atr`, or `examples/mcp_server`), as the README's test
/// command builds it.
pub fn workspace_binary(name: &str) -> PathBuf {
    built::binary(name)
}

/// `n` distinct numbers.
pub fn numbers(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("+1555010{i:04}")).collect()
}

/// The `campaignId` a batch's answer names.
pub fn campaign_id(response: &http::Response<Vec<u8>>) -> String {
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    body["campaignId"]
        .as_str()
        .unwrap_or_else(|| panic!("no campaignId: {body}"))
        .to_owned()
}

/// The id a result names in its own field `field` (`campaignId`, `messageId`).
pub fn named<T: serde::Serialize>(result: &GuaranteeResult<T>, field: &str) -> String {
    let fields = serde_json::to_value(result.fields()).unwrap();
    fields[field]
        .as_str()
        .unwrap_or_else(|| panic!("the result names no {field}: {fields}"))
        .to_owned()
}

/// The key answers, the same from every process: `committed` (held or not) or `unknown`,
/// with the campaign to look up. Returns the campaign and the settlement.
/// What the first caller of a key got: its status and body.
#[derive(Debug)]
pub struct FirstReply {
    /// The status.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

impl FirstReply {
    /// Whether the reply is a result whose settlement is `unknown`.
    pub fn is_unknown(&self) -> bool {
        serde_json::from_slice::<Value>(&self.body)
            .is_ok_and(|body| body["settlement"]["state"] == "unknown")
    }
}

pub fn answered_everywhere(
    services: &[Service],
    key: &str,
    batch: &Value,
    round: usize,
    first: Option<&FirstReply>,
) -> (String, SettlementState) {
    let answers: Vec<_> = services
        .iter()
        .map(|service| service.call_after_lease("send_campaign_batch", key, batch))
        .collect();
    for answer in &answers {
        assert_eq!(answer.body(), answers[0].body(), "round {round}");
    }
    // The first reply is the key's answer, byte for byte, unless it was a refusal (nothing
    // was done: the key was released) or `unknown` (which only the truth replaces).
    if let Some(first) = first
        && [200, 202].contains(&first.status)
        && !first.is_unknown()
    {
        assert_eq!(
            String::from_utf8_lossy(&first.body),
            String::from_utf8_lossy(answers[0].body()),
            "round {round}: the first caller's reply is the key's answer"
        );
    }
    let settlement = match classify(&answers[0]) {
        RestOutcome::Settled(result) | RestOutcome::Deferred { result, .. } => result.settlement(),
        other => panic!("round {round}: {other:?}"),
    };
    assert!(
        [SettlementState::Committed, SettlementState::Unknown].contains(&settlement),
        "round {round}: {settlement:?}"
    );
    (campaign_id(&answers[0]), settlement)
}

/// Checks that `response` is the `rate-limited` refusal under the policy `policy` (the
/// `RateLimit-Policy` field): a problem document, 429, the standing at no call left, and a
/// `Retry-After` (an HTTP-date) within `window`; returns how long it says to wait.
pub fn assert_rate_limited(
    response: &http::Response<Vec<u8>>,
    policy: &str,
    window: Duration,
) -> Duration {
    use agent_tool_result::guarantee::RefusalKind;
    assert_eq!(response.status(), 429);
    let RestOutcome::Refused { refusal, .. } = classify(response) else {
        panic!("a refusal: {response:?}")
    };
    assert_eq!(refusal.kind(), RefusalKind::RateLimited);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let at = httpdate::parse_http_date(response.headers()["retry-after"].to_str().unwrap())
        .expect("Retry-After is an HTTP-date");
    let wait = at
        .duration_since(std::time::SystemTime::now())
        .unwrap_or_default();
    assert!(wait <= window + Duration::from_secs(1), "{wait:?}");
    assert_eq!(response.headers()["ratelimit-policy"], policy);
    let standing = response.headers()["ratelimit"].to_str().unwrap();
    assert!(
        standing.starts_with(r#""per-account";r=0;t="#),
        "{standing}"
    );
    wait
}
