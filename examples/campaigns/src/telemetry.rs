//! What an operator watches: the log (the crate's `tracing` spans and events, and the
//! service's own, on stderr at `--log`'s level) and the metrics (the crate's counters and
//! histograms through the `metrics` facade, the service's own beside them), exported as
//! Prometheus text at `GET /metrics` on an address of their own (`--metrics-addr`), apart
//! from the API so that it is never exposed with it.

use std::io::IsTerminal;
use std::net::SocketAddr;

use agent_tool_result::replay::telemetry::LATENCY_BUCKETS;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::filter::LevelFilter;

/// Writes the log to stderr, at `level` and above (in colour on a terminal).
pub fn log_to_stderr(level: LevelFilter) {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_max_level(level)
        .init();
}

/// Records the metrics, and serves them as Prometheus text at `GET /metrics` on `addr`:
/// where it listens.
///
/// # Errors
///
/// When the recorder cannot be installed (one already is) or `addr` cannot be bound.
pub async fn serve_metrics(addr: SocketAddr) -> Result<SocketAddr, Box<dyn std::error::Error>> {
    // Every latency is a histogram, whose buckets add up across the service's processes (a
    // summary's quantiles do not).
    let handle = PrometheusBuilder::new()
        .set_buckets(LATENCY_BUCKETS)?
        .install_recorder()?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let handle = handle.clone();
            async move { render(&handle) }
        }),
    );
    tokio::spawn(async move {
        if let Err(err) = axum::serve(listener, app).await {
            tracing::error!(%err, "the metrics endpoint stopped");
        }
    });
    Ok(bound)
}

/// The metrics as Prometheus text.
fn render(handle: &PrometheusHandle) -> axum::response::Response {
    use axum::response::IntoResponse;
    handle.run_upkeep();
    (
        [(
            http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
        .into_response()
}
