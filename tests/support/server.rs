//! An axum router served on an ephemeral loopback port, on its own thread, until dropped.

use std::sync::mpsc;
use std::thread;

/// A running server; dropping it shuts the server down gracefully and joins its thread.
pub struct Server {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Server {
    /// Serves `router` on 127.0.0.1 at a port the system picks.
    pub fn start(router: axum::Router) -> Self {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready_tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, router)
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let address = ready_rx.recv().unwrap();
        Server {
            base: format!("http://{address}"),
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }
}

impl Server {
    /// Sends `method path` with `headers` and `body` to the server and reads the whole
    /// response, whatever its status.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> http::Response<Vec<u8>> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = agent.run(request.body(body.to_vec()).unwrap()).unwrap();
        let (parts, mut body) = response.into_parts();
        http::Response::from_parts(parts, body.read_to_vec().unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}
