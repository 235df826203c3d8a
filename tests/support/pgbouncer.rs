//! The distribution's PgBouncer in front of a test's PostgreSQL server, in transaction pooling
//! mode (each transaction on whichever server connection is free, as managed PostgreSQL
//! offerings' poolers run): listening on 127.0.0.1 and a free port, killed and its directory
//! removed when dropped. As root, it runs as the unprivileged `postgres` user (PgBouncer
//! refuses to run as root).

#![allow(dead_code, reason = "each test binary uses the part it needs")]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const INSTALL: &str = "the pooler tests run PgBouncer: install the distribution's package \
    (`apt-get install pgbouncer`)";

/// A running PgBouncer.
pub struct PgBouncer {
    child: Child,
    dir: PathBuf,
    port: u16,
}

/// Where `pgbouncer` is: on the `PATH`, or where the distribution puts it (`/usr/sbin`).
fn program() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join("pgbouncer"))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{INSTALL}"))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

impl PgBouncer {
    /// Starts PgBouncer in transaction mode before the server on `server_port` (127.0.0.1),
    /// every database passed through, at most `pool_size` server connections for each.
    ///
    /// # Panics
    ///
    /// When PgBouncer is missing (saying what to install), or does not start.
    pub fn transaction_mode(server_port: u16, pool_size: u32) -> PgBouncer {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "atr-pgbouncer-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        std::fs::write(dir.join("users.txt"), "\"postgres\" \"\"\n").expect("the users file");
        let ini = format!(
            "[databases]\n\
             * = host=127.0.0.1 port={server_port}\n\
             [pgbouncer]\n\
             listen_addr = 127.0.0.1\n\
             listen_port = {port}\n\
             unix_socket_dir =\n\
             auth_type = trust\n\
             auth_file = {dir}/users.txt\n\
             pool_mode = transaction\n\
             max_client_conn = 1000\n\
             default_pool_size = {pool_size}\n\
             max_db_connections = {pool_size}\n\
             server_login_retry = 1\n\
             logfile = {dir}/pgbouncer.log\n\
             pidfile = {dir}/pgbouncer.pid\n",
            dir = dir.display()
        );
        let config = dir.join("pgbouncer.ini");
        std::fs::write(&config, ini).expect("the configuration");
        let mut command = Command::new(program());
        if is_root() {
            let chown = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status();
            assert!(
                chown.is_ok_and(|s| s.success()),
                "as root, PgBouncer runs as the `postgres` user PostgreSQL's package creates"
            );
            command.args(["-u", "postgres"]);
        }
        let child = command
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("pgbouncer: {err}: {INSTALL}"));
        let mut bouncer = PgBouncer { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = bouncer.child.try_wait() {
                panic!("pgbouncer exited ({status}): {}", bouncer.log());
            }
            assert!(
                Instant::now() < deadline,
                "pgbouncer did not listen: {}",
                bouncer.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        bouncer
    }

    /// The URL of `database` through the pooler.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// What PgBouncer logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
