//! A TCP proxy on 127.0.0.1 that the test can freeze: while frozen it moves no byte in
//! either direction (what was sent waits in the proxy, as in a network partition that heals),
//! and on thawing it lets everything through. Dropping it closes every connection.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The proxy; its threads stop when it is dropped.
pub struct Proxy {
    port: u16,
    frozen: Arc<AtomicBool>,
    stopped: Arc<AtomicBool>,
}

impl Proxy {
    /// A proxy to `target`, listening on a free port.
    pub fn to(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (frozen, stopped) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (frozen_, stopped_) = (Arc::clone(&frozen), Arc::clone(&stopped));
        std::thread::spawn(move || {
            while !stopped_.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let Ok(server) = TcpStream::connect(target) else {
                            continue;
                        };
                        for (from, to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server, client),
                        ] {
                            let (frozen, stopped) = (Arc::clone(&frozen_), Arc::clone(&stopped_));
                            std::thread::spawn(move || pump(from, to, &frozen, &stopped));
                        }
                    }
                    Err(err) if err.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => break,
                }
            }
        });
        Proxy {
            port,
            frozen,
            stopped,
        }
    }

    /// The port to connect to instead of the target's.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops moving bytes, both directions.
    pub fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }

    /// Moves bytes again, what waited first.
    pub fn thaw(&self) {
        self.frozen.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until either end closes or the proxy stops, holding every byte while
/// the proxy is frozen.
fn pump(mut from: TcpStream, mut to: TcpStream, frozen: &AtomicBool, stopped: &AtomicBool) {
    from.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut buffer = [0u8; 16 * 1024];
    let hold = || {
        while frozen.load(Ordering::SeqCst) && !stopped.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    while !stopped.load(Ordering::SeqCst) {
        hold();
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                hold();
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}
