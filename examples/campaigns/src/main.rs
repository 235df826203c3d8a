//! `campaigns`: a small campaign service whose guarantee tools answer the second contract
//! (settlement, policy, impact, recovery) over REST and over MCP, on one database (a SQLite
//! file, or PostgreSQL, which any number of its processes share) that also holds the
//! idempotency ledger, sending through an outside provider (a stand-in it starts on loopback
//! unless `--provider-url` names another). See this package's README for the thin-continuity
//! walkthrough. This binary reads the command line and serves the library's service.

use std::io::Write;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use agent_tool_result::http::BearerGate;
use agent_tool_result::http::layers::{ProblemLayer, refuse_oversized_head};
use agent_tool_result::http::resource_metadata::ProtectedResourceMetadata;
use axum::extract::DefaultBodyLimit;
use clap::Parser;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower::limit::GlobalConcurrencyLimitLayer;

use campaigns::db::Target;
#[cfg(feature = "faults")]
use campaigns::faults;
use campaigns::provider::{Provider, stand_in};
use campaigns::rest::Access;
use campaigns::service::{Config, Service};
use campaigns::store::window::SendWindow;
use campaigns::{allowed_hosts, limits, mcp, rest, serve, telemetry, tools};

/// jemalloc, with its background threads: memory a burst of requests took goes back to the
/// system within seconds of being freed, where glibc's allocator keeps most of it while the
/// service is idle.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[cfg(not(target_env = "msvc"))]
/// How long freed pages stay with jemalloc before they go back to the system (its default,
/// 10 s, keeps a burst's memory that long and lets it go gradually).
const DIRTY_DECAY_MS: isize = 1_000;

/// Sets [`DIRTY_DECAY_MS`] for every arena, those made so far and those to come.
#[cfg(not(target_env = "msvc"))]
fn return_memory_promptly() {
    use tikv_jemalloc_ctl::{Access, AsName};
    // A setting jemalloc refuses (an arena not made yet) changes nothing: best effort.
    let _ = b"arenas.dirty_decay_ms\0".name().write(DIRTY_DECAY_MS);
    let arenas = tikv_jemalloc_ctl::arenas::narenas::read().unwrap_or(0);
    for arena in 0..arenas {
        let _ = format!("arena.{arena}.dirty_decay_ms\0")
            .name()
            .write(DIRTY_DECAY_MS);
    }
}

/// The largest request body the service reads, in bytes.
const BODY_LIMIT: usize = 1024 * 1024;

/// The principal of a `--token` given without a name.
const DEFAULT_PRINCIPAL: &str = "acct_demo";

/// An account's own setting, `NAME=COUNT`: `what` names it in errors (`an account cap`),
/// `count` its count (`SENDS`).
fn per_account<T: std::str::FromStr>(
    text: &str,
    what: &str,
    count: &str,
) -> Result<(String, T), String>
where
    T::Err: std::fmt::Display,
{
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{what} is NAME={count}"))?;
    let value = value
        .parse()
        .map_err(|err| format!("{what}'s {count} is a count: {err}"))?;
    if name.is_empty() {
        return Err(format!("{what} names its account: NAME={count}"));
    }
    Ok((name.to_owned(), value))
}

/// An `--account-cap`: `NAME=SENDS`.
fn account_cap(text: &str) -> Result<(String, u64), String> {
    per_account(text, "an account cap", "SENDS")
}

/// An `--account-rate`: `NAME=CALLS`, at least one.
fn account_rate(text: &str) -> Result<(String, NonZeroU32), String> {
    per_account(text, "an account rate", "CALLS")
}

/// A `--token`: `NAME=SECRET` (the principal `NAME`), or a bare `SECRET` for `acct_demo`.
fn token(text: &str) -> Result<(String, String), String> {
    let (name, secret) = text.split_once('=').unwrap_or((DEFAULT_PRINCIPAL, text));
    if name.is_empty() || secret.is_empty() {
        return Err("a token is NAME=SECRET, neither empty".to_owned());
    }
    Ok((secret.to_owned(), name.to_owned()))
}

/// Serve the campaign tools over REST (`/v1`) and MCP (`/mcp`) on one port.
#[derive(Parser)]
#[command(name = "campaigns", version)]
struct Args {
    /// Where campaigns, sends and the idempotency ledger are kept: a SQLite file (created if
    /// need be; processes on one machine may share it) or a `postgres://` URL (any number of
    /// processes on any number of machines share it).
    #[arg(long, value_name = "PATH|URL", value_parser = |text: &str| Ok::<_, String>(Target::parse(text)))]
    db: Target,
    /// Where to listen; port 0 picks a free one. The first line on stdout names it.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Campaign sends one account may make per window (each account has a window of its
    /// own: one account's sends never defer another's).
    #[arg(long, default_value_t = 20)]
    cap: u64,
    /// An account's own cap, as `NAME=SENDS` (repeat for more); the others have `--cap`.
    #[arg(long = "account-cap", value_name = "NAME=SENDS", value_parser = account_cap)]
    account_caps: Vec<(String, u64)>,
    /// Guarantee calls (`send_sms`, `send_campaign_batch`) one account may make per
    /// `--rate-window-secs`, counted in the database every process shares (one limit across
    /// processes); a call over it is refused (429 with `Retry-After` over REST, the same
    /// problem over MCP) and nothing runs. No limit without it (or `--account-rate`).
    #[arg(long, value_name = "CALLS")]
    rate_limit: Option<NonZeroU32>,
    /// An account's own rate limit, as `NAME=CALLS` (repeat for more); the others have
    /// `--rate-limit`.
    #[arg(long = "account-rate", value_name = "NAME=CALLS", value_parser = account_rate)]
    account_rates: Vec<(String, NonZeroU32)>,
    /// The rate limit's window, in seconds.
    #[arg(long, default_value_t = 1)]
    rate_window_secs: u64,
    /// The send window's length, in seconds.
    #[arg(long, default_value_t = 60)]
    window_secs: u64,
    /// When one send window starts, in milliseconds since 1970: windows start every
    /// `--window-secs` before and after it. By default they start at multiples of their length
    /// (on the hour, for windows of an hour).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    window_origin_ms: i64,
    /// The provider to send through (`http://host:port`): an HTTP service that takes
    /// `POST /sends` once per effect key. Without it, the service starts a stand-in of its own
    /// on loopback, whose log is the table `provider_sends` in `--db`.
    #[arg(long, value_name = "URL")]
    provider_url: Option<String>,
    /// How long the stand-in provider takes to accept one send, in milliseconds.
    #[arg(long, default_value_t = 0, conflicts_with = "provider_url")]
    provider_delay_ms: u64,
    /// How long one send through the provider may take, in milliseconds: a send it does not
    /// confirm in time is answered 503 (the same request sends it once, at most, again).
    #[arg(long, default_value_t = 10_000)]
    provider_timeout_ms: u64,
    /// A bearer token a call (REST and MCP) may carry, as `NAME=SECRET`: its principal (the
    /// account whose keys, campaigns and messages it sees) is `NAME`. Repeat for more
    /// accounts; a bare `SECRET` is the account `acct_demo`.
    #[arg(long = "token", value_name = "NAME=SECRET", value_parser = token, default_value = "acct_demo=demo-token")]
    tokens: Vec<(String, String)>,
    /// The protected resource metadata URL (RFC 9728) named in every 401 and 403 challenge,
    /// when it is published elsewhere. With `--authorization-server` and without this, the
    /// service's own metadata URL is named.
    #[arg(long, value_name = "URL")]
    resource_metadata: Option<String>,
    /// An authorization server that issues the service's tokens (repeat for more): the service
    /// then publishes its protected resource metadata (RFC 9728) at
    /// `/.well-known/oauth-protected-resource`, to anyone, and names it in every challenge.
    #[arg(long = "authorization-server", value_name = "URL")]
    authorization_servers: Vec<String>,
    /// The service's resource identifier in its metadata (`https://api.example`); by default
    /// `http://` and the `Host` a request names.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// A `Host` the MCP endpoint answers besides the loopback names (`localhost`, `127.0.0.1`,
    /// `::1`), repeat for more: DNS-rebinding protection. Name the service's public host when it
    /// has one.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// A browser `Origin` the MCP endpoint accepts (repeat for more, `http://localhost:*`
    /// style). A request with any other `Origin` is refused; one without passes.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// Fault injection (feature `faults`): after this many writes, the service's disk is full
    /// (every write of its own fails with `SQLITE_FULL`) for `--full-disk-ms`; the provider is
    /// unaffected. To watch it recover without a restart.
    #[cfg(feature = "faults")]
    #[arg(long, value_name = "WRITES", requires = "full_disk_ms")]
    full_disk_after: Option<usize>,
    /// How long the injected full disk lasts, in milliseconds.
    #[cfg(feature = "faults")]
    #[arg(long, value_name = "MS", requires = "full_disk_after")]
    full_disk_ms: Option<u64>,
    /// How long a call holds its idempotency key and a process its claims, in milliseconds: a
    /// key a stopped process held is answered `unknown`, and its claims settled by another
    /// process, once this has passed.
    #[arg(long, default_value_t = 30_000)]
    lease_ms: u64,
    /// How many PostgreSQL connections the process keeps at most (its tables and its
    /// idempotency ledger share one pool).
    #[arg(long, default_value_t = 8)]
    db_connections: usize,
    /// How long one database statement, or the wait for a connection, may take, in
    /// milliseconds: while the database is down or cut off, calls answer 503 within a few of
    /// these rather than hang.
    #[arg(long, default_value_t = 2_000)]
    db_timeout_ms: u64,
    /// How long a client may take to send a request's head (from the connection's start, or
    /// its previous response), in milliseconds: a slower one is disconnected.
    #[arg(long, default_value_t = 10_000)]
    header_timeout_ms: u64,
    /// How long a client may take to send a request's body once its head is in, in
    /// milliseconds: a slower one is answered 408.
    #[arg(long, default_value_t = 10_000)]
    body_timeout_ms: u64,
    /// Requests handled at once by the process; more wait their turn.
    #[arg(long, default_value_t = 256)]
    max_concurrent_requests: usize,
    /// Connections the process keeps open at once; more wait to be accepted.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Where to serve the metrics as Prometheus text (`GET /metrics`), apart from the API;
    /// port 0 picks a free one, named on stdout's second line. None without it.
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// The log's level on stderr: off, error, warn, info (a line per keyed call), debug (and
    /// the ledger's latency) or trace.
    #[arg(long, default_value = "warn", value_name = "LEVEL")]
    log: tracing_subscriber::filter::LevelFilter,
    /// A number that opted out of messages (repeat for more).
    #[arg(long = "opt-out", value_name = "NUMBER")]
    opt_outs: Vec<String>,
}

impl Args {
    /// The service's settings, from the arguments, sending through `provider`.
    fn config(&mut self, provider: Provider) -> Result<Config, std::num::TryFromIntError> {
        let length_ms = i64::try_from(self.window_secs.max(1).saturating_mul(1000))?;
        Ok(Config {
            window: SendWindow {
                cap: self.cap,
                length_ms,
                origin_ms: self.window_origin_ms,
            },
            caps: std::mem::take(&mut self.account_caps).into_iter().collect(),
            provider,
            #[cfg(feature = "faults")]
            full_disk: self
                .full_disk_after
                .zip(self.full_disk_ms)
                .map(|(after, ms)| faults::FullDisk {
                    after,
                    length: Duration::from_millis(ms),
                }),
            lease: Duration::from_millis(self.lease_ms.max(1)),
            connections: self.db_connections.max(1),
            db_timeout: Duration::from_millis(self.db_timeout_ms.max(1)),
            rates: limits::RateLimits::new(
                self.tokens.iter().map(|(_, principal)| principal.as_str()),
                self.rate_limit,
                &std::mem::take(&mut self.account_rates)
                    .into_iter()
                    .collect(),
                Duration::from_secs(self.rate_window_secs),
            ),
        })
    }
}

/// How long a thread the runtime started for blocking work (SQLite's statements, which run
/// off the async workers) stays idle before it ends: a burst's threads, and the memory they
/// hold, are gone a second after it (tokio keeps them 10 s by default).
const IDLE_THREAD: Duration = Duration::from_secs(1);

fn main() -> std::process::ExitCode {
    #[cfg(not(target_env = "msvc"))]
    return_memory_promptly();
    let ran = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_keep_alive(IDLE_THREAD)
        .build()
        .map_err(Into::into)
        .and_then(|runtime| runtime.block_on(run()));
    match ran {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("campaigns: {}", campaigns::db::error::chain(&*err));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The PostgreSQL connections the stand-in provider keeps for its log.
const STAND_IN_CONNECTIONS: usize = 4;

/// The provider: the one `--provider-url` names, or a stand-in on loopback, its log beside
/// the service's tables (every process's stand-in shares it, and its deduplication).
async fn provider(args: &mut Args) -> Result<Provider, Box<dyn std::error::Error>> {
    let url = match args.provider_url.take() {
        Some(url) => url,
        None => {
            stand_in::start(
                &args.db,
                Duration::from_millis(args.provider_delay_ms),
                STAND_IN_CONNECTIONS,
                Duration::from_millis(args.db_timeout_ms.max(1)),
            )
            .await?
        }
    };
    Ok(Provider::new(
        &url,
        Duration::from_millis(args.provider_timeout_ms.max(1)),
    )?)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = Args::parse();
    telemetry::log_to_stderr(args.log);
    let metrics = match args.metrics_addr {
        Some(addr) => Some(telemetry::serve_metrics(addr).await?),
        None => None,
    };
    let provider = provider(&mut args).await?;
    let config = args.config(provider)?;
    let service = Arc::new(Service::open(&args.db, config).await?);
    for number in &args.opt_outs {
        service.opt_out(number).await?;
    }
    let answered = service.settle().await?;
    if answered > 0 {
        eprintln!(
            "campaigns: {answered} call(s) left in flight by a stopped process now answer `unknown`"
        );
    }
    service.start_settling();
    service.watch_durability().await?;

    let mut gate = BearerGate::new("campaigns");
    if let Some(url) = args.resource_metadata {
        gate = gate.with_resource_metadata(url);
    }
    // Checked once at start: a bad identifier fails here, not on every request.
    for issuer in &args.authorization_servers {
        let resource = args.public_url.as_deref().unwrap_or("http://localhost");
        ProtectedResourceMetadata::new(resource)?.with_authorization_server(issuer.as_str())?;
    }
    let access = Arc::new(Access {
        gate,
        tokens: args.tokens,
        authorization_servers: args.authorization_servers,
        public_url: args.public_url,
    });
    // The service's tools, listed once: REST, MCP and the OpenAPI document all come from it.
    let tools = tools::registry(&service);
    let handler = mcp::Mcp::new(&tools);
    // Stateless Streamable HTTP: no session outlives its request, so sessions cost nothing
    // between calls and any process can answer any request.
    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(BODY_LIMIT)
        .enforce_origin_validation();
    let allowed = allowed_hosts::AllowedHosts {
        hosts: allowed_hosts::LOOPBACK_HOSTS
            .iter()
            .map(|host| (*host).to_owned())
            .chain(args.allowed_hosts)
            .collect(),
        origins: args.allowed_origins.into(),
    };
    mcp_config = mcp_config.with_allowed_hosts(allowed.hosts.iter().cloned());
    if !allowed.origins.is_empty() {
        mcp_config = mcp_config.with_allowed_origins(allowed.origins.iter().cloned());
    }
    let mcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        mcp_config,
    );
    let mcp =
        axum::Router::new()
            .nest_service("/mcp", mcp)
            .layer(axum::middleware::from_fn_with_state(
                allowed,
                allowed_hosts::name_refused,
            ));
    let bounds = serve::Bounds {
        header_timeout: Duration::from_millis(args.header_timeout_ms.max(1)),
        body_timeout: Duration::from_millis(args.body_timeout_ms.max(1)),
        body_limit: BODY_LIMIT,
        concurrent_requests: args.max_concurrent_requests.max(1),
        connections: args.max_connections.max(1),
    };
    let app = rest::router(&tools)
        .merge(mcp)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            bounds,
            serve::read_body,
        ))
        .layer(axum::middleware::from_fn_with_state(
            access,
            rest::authorize,
        ))
        .layer(axum::middleware::map_request(refuse_oversized_head))
        .layer(ProblemLayer)
        // One limit for every route: the layer's clones share its permits.
        .layer(GlobalConcurrencyLimitLayer::new(bounds.concurrent_requests));

    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on http://{}", listener.local_addr()?)?;
    if let Some(metrics) = metrics {
        writeln!(stdout, "metrics on http://{metrics}/metrics")?;
    }
    stdout.flush()?;
    serve::serve(listener, app, bounds, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}
