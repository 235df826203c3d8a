//! The distribution's PgBouncer in front of a test's PostgreSQL server, in transaction pooling
//! mode (each transaction on whichever server connection is free, as managed PostgreSQL
//! offerings' poolers run): listening on 127.0.0.1 and a free port, killed and its directory
//! removed when dropped. As root, it runs as the unprivileged `postgres` user (PgBouncer
//! refuses to run as root).
//!
//! Include it beside `postgres.rs` (whose helpers it uses), as module `postgres`.

#![allow(dead_code, reason = "each test binary uses the part it needs")]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::postgres::{free_port, hand_to_postgres, is_root, program, scratch_dir};

const INSTALL: &str = "the pooler tests run PgBouncer: install the distribution's package \
    (`apt-get install pgbouncer`), or run the tests as root, where they install it themselves";

/// A running PgBouncer.
pub struct PgBouncer {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl PgBouncer {
    /// Starts PgBouncer in transaction mode before the server on `server_port` (127.0.0.1),
    /// every database passed through, at most `pool_size` server connections for each.
    ///
    /// # Panics
    ///
    /// When PgBouncer is missing (saying what to install), or does not start.
    pub fn transaction_mode(server_port: u16, pool_size: u32) -> PgBouncer {
        let dir = scratch_dir("pgbouncer");
        let port = free_port();
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
        let mut command = Command::new(program("pgbouncer", INSTALL));
        if is_root() {
            hand_to_postgres(&dir);
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
