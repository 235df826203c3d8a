//! `campaigns`: a small campaign service whose guarantee tools answer the second contract
//! (settlement, policy, impact, recovery) over REST and over MCP, on one SQLite file that also
//! holds the idempotency ledger. The "provider" is a table of sends, so a second send to
//! anyone would show. See this package's README for the thin-continuity walkthrough.

mod mcp;
mod rest;
mod service;
mod store;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::Parser;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::service::{Config, Service};
use crate::store::SendWindow;

/// The principal every call runs as: the service has one account.
const PRINCIPAL: &str = "acct_demo";

/// Serve the campaign tools over REST (`/v1`) and MCP (`/mcp`) on one port.
#[derive(Parser)]
#[command(name = "campaigns", version)]
struct Args {
    /// The SQLite file: campaigns, sends and the idempotency ledger (created if need be).
    #[arg(long)]
    db: PathBuf,
    /// Where to listen; port 0 picks a free one. The first line on stdout names it.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Campaign sends allowed per window.
    #[arg(long, default_value_t = 20)]
    cap: u64,
    /// The send window's length, in seconds.
    #[arg(long, default_value_t = 60)]
    window_secs: u64,
    /// How long the provider takes to accept one send, in milliseconds.
    #[arg(long, default_value_t = 0)]
    provider_delay_ms: u64,
    /// The bearer token REST calls must carry.
    #[arg(long, default_value = "demo-token")]
    token: String,
    /// A number that opted out of messages (repeat for more).
    #[arg(long = "opt-out", value_name = "NUMBER")]
    opt_outs: Vec<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let started = SystemTime::now();
    let length_ms = i64::try_from(args.window_secs.max(1).saturating_mul(1000))?;
    let config = Config {
        window: SendWindow {
            cap: args.cap,
            length_ms,
        },
        provider_delay: Duration::from_millis(args.provider_delay_ms),
    };
    let service = Arc::new(Service::open(&args.db, config)?);
    for number in &args.opt_outs {
        service.opt_out(number)?;
    }
    let recovered = service.recover(started)?;
    if !recovered.is_empty() {
        eprintln!(
            "campaigns: {} call(s) left in flight by a stopped process now answer `unknown`",
            recovered.len()
        );
    }
    service.start_releasing();

    let rest = rest::router(Arc::new(rest::Rest {
        service: Arc::clone(&service),
        token: args.token,
        principal: PRINCIPAL.to_owned(),
    }));
    let handler = mcp::Mcp {
        service,
        principal: PRINCIPAL.to_owned(),
    };
    let mcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = rest.nest_service("/mcp", mcp);

    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on http://{}", listener.local_addr()?)?;
    stdout.flush()?;
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
