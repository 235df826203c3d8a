//! Serving with every wait bounded, from maintained parts: hyper's own header-read timeout
//! (a client that has not sent its request's head in time is disconnected, however slowly it
//! trickles), a deadline on reading a request's body (tokio's timer over http-body-util's
//! `Limited`, so a trickle is cut too: tower-http's body timeout only bounds the gap between
//! two chunks), tower's concurrency limit on the requests in progress, a cap on open
//! connections, and hyper-util's graceful shutdown.

use std::sync::Arc;
use std::time::Duration;

use agent_tool_result::http::Fault;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How long a client may take over each part of a request, and how many it may have at once.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// From a connection's start (or its previous response) to the end of a request's head.
    pub header_timeout: Duration,
    /// From the end of the head to the end of the body.
    pub body_timeout: Duration,
    /// The largest body read, in bytes.
    pub body_limit: usize,
    /// Requests handled at once in this process; more wait their turn.
    pub concurrent_requests: usize,
    /// Connections open at once in this process; more wait in the listen backlog.
    pub connections: usize,
}

/// Reads the request's body in full within the deadline, or answers 408 (too slow) or 413
/// (too large) without calling the route.
pub async fn read_body(State(bounds): State<Bounds>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(
        bounds.body_timeout,
        Limited::new(body, bounds.body_limit).collect(),
    )
    .await;
    match read {
        Ok(Ok(body)) => {
            next.run(Request::from_parts(parts, Body::from(body.to_bytes())))
                .await
        }
        Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => {
            Fault::too_large(bounds.body_limit).into_response()
        }
        Ok(Err(err)) => {
            Fault::malformed(format!("the request body broke off: {err}")).into_response()
        }
        Err(_) => Fault::slow_body(bounds.body_timeout).into_response(),
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets the requests in progress
/// finish.
///
/// # Errors
///
/// None but the listener's: a failed accept (out of descriptors, say) is waited out.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    bounds: Bounds,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let open = Arc::new(Semaphore::new(bounds.connections.max(1)));
    let service = TowerToHyperService::new(app);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(bounds.header_timeout);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&open).acquire_owned() => permit.expect("the semaphore stays open"),
            () = &mut shutdown => break,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let Ok((stream, _)) = accepted else {
            // Out of descriptors or the like: wait rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let connection = http.serve_connection(TokioIo::new(stream), service.clone());
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A connection cut or timed out ends here; nothing to report.
            let _ = connection.await;
            drop(permit);
        });
    }
    graceful.shutdown().await;
    Ok(())
}
