//! A PostgreSQL cluster managed by Patroni, from the distribution's packages: one etcd member
//! and two PostgreSQL nodes, each under its own Patroni, all on 127.0.0.1 and free ports, in
//! a scratch directory; every process killed and the directory removed when dropped. As
//! root, Patroni and its PostgreSQL run as the unprivileged `postgres` user. Failover is
//! quick: the leader's key lives 10 s, and Patroni looks every second.
//!
//! Include it beside `postgres.rs` (whose program lookup it uses), as module `postgres`.

#![allow(dead_code, reason = "each test binary uses the part it needs")]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::postgres::{free_port, hand_to_postgres, is_root, program, scratch_dir, server_bin};

const INSTALL: &str = "the failover tests run Patroni and etcd: install the distribution's \
    packages (`apt-get install patroni etcd-server postgresql`), or run the tests as root, where \
    they install them themselves";

/// How a commit is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replication {
    /// Patroni's `synchronous_mode`: a commit waits for the standby.
    Synchronous,
    /// Streaming only: a commit is acknowledged before the standby has it.
    Asynchronous,
}

/// One PostgreSQL node and its Patroni.
struct Node {
    name: String,
    patroni: Option<Child>,
    pg_port: u16,
    api_port: u16,
    data: PathBuf,
}

/// The running cluster.
pub struct Cluster {
    dir: PathBuf,
    etcd: Child,
    nodes: Vec<Node>,
}

/// The directory of every PostgreSQL program Patroni runs (`postgres`, `pg_ctl`,
/// `pg_controldata`, `pg_basebackup`): the one the server tests use, or the distribution's
/// versioned one.
fn bin_dir() -> PathBuf {
    let versioned = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin"));
    std::iter::once(server_bin())
        .chain(versioned)
        .find(|dir| {
            ["postgres", "pg_ctl", "pg_controldata", "pg_basebackup"]
                .iter()
                .all(|program| dir.join(program).is_file())
        })
        .unwrap_or_else(|| panic!("no directory holds every PostgreSQL program: {INSTALL}"))
}

/// `GET http://127.0.0.1:port/path`'s status, if anything answers.
fn status(port: u16, path: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

impl Cluster {
    /// Starts etcd and two nodes, and waits until the first leads and the second streams
    /// from it (as its synchronous standby in [`Replication::Synchronous`]).
    ///
    /// # Panics
    ///
    /// When a program is missing (saying what to install), or the cluster does not form
    /// within two minutes.
    pub fn start(replication: Replication) -> Cluster {
        let dir = scratch_dir("patroni");
        let (client, peer) = (free_port(), free_port());
        let etcd = Command::new(program("etcd", INSTALL))
            .args(["--name", "etcd0", "--data-dir"])
            .arg(dir.join("etcd"))
            .args([
                "--listen-client-urls",
                &format!("http://127.0.0.1:{client}"),
                "--advertise-client-urls",
                &format!("http://127.0.0.1:{client}"),
                "--listen-peer-urls",
                &format!("http://127.0.0.1:{peer}"),
                "--initial-advertise-peer-urls",
                &format!("http://127.0.0.1:{peer}"),
                "--initial-cluster",
                &format!("etcd0=http://127.0.0.1:{peer}"),
                "--log-level",
                "error",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("etcd: {err}: {INSTALL}"));
        let mut cluster = Cluster {
            dir,
            etcd,
            nodes: Vec::new(),
        };
        for n in 0..2 {
            cluster.add_node(n, client, replication);
            // The first bootstraps the cluster before the second copies it.
            let node = n;
            cluster.wait_for(&format!("node{node} to run"), |cluster| {
                let path = if node == 0 { "/primary" } else { "/replica" };
                status(cluster.nodes[node].api_port, path) == Some(200)
            });
        }
        if replication == Replication::Synchronous {
            cluster.wait_for("node1 to be the synchronous standby", |cluster| {
                cluster.sql(
                    0,
                    "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'",
                ) == "1"
            });
        }
        cluster
    }

    fn add_node(&mut self, n: usize, etcd_port: u16, replication: Replication) {
        let name = format!("node{n}");
        let (pg_port, api_port) = (free_port(), free_port());
        let data = self.dir.join(&name);
        let synchronous = replication == Replication::Synchronous;
        let config = format!(
            "scope: atr\n\
             namespace: /atr/\n\
             name: {name}\n\
             restapi:\n  listen: 127.0.0.1:{api_port}\n  connect_address: 127.0.0.1:{api_port}\n\
             etcd3:\n  hosts: 127.0.0.1:{etcd_port}\n\
             bootstrap:\n\
             \x20 dcs:\n\
             \x20   ttl: 10\n\
             \x20   loop_wait: 1\n\
             \x20   retry_timeout: 4\n\
             \x20   maximum_lag_on_failover: 104857600\n\
             \x20   synchronous_mode: {synchronous}\n\
             \x20   postgresql:\n\
             \x20     use_pg_rewind: false\n\
             \x20     parameters:\n\
             \x20       max_connections: 200\n\
             \x20       wal_level: replica\n\
             \x20       hot_standby: 'on'\n\
             \x20       max_wal_senders: 10\n\
             \x20       max_replication_slots: 10\n\
             \x20 initdb:\n  - encoding: UTF8\n  - auth: trust\n\
             postgresql:\n\
             \x20 listen: 127.0.0.1:{pg_port}\n\
             \x20 connect_address: 127.0.0.1:{pg_port}\n\
             \x20 data_dir: {data}\n\
             \x20 bin_dir: {bin}\n\
             \x20 pgpass: {dir}/pgpass-{name}\n\
             \x20 authentication:\n\
             \x20   superuser:\n      username: postgres\n      password: postgres\n\
             \x20   replication:\n      username: replicator\n      password: replicator\n\
             \x20 parameters:\n    unix_socket_directories: '{dir}'\n\
             \x20 pg_hba:\n\
             \x20 - local all all trust\n\
             \x20 - host all all 127.0.0.1/32 trust\n\
             \x20 - host replication all 127.0.0.1/32 trust\n",
            data = data.display(),
            bin = bin_dir().display(),
            dir = self.dir.display(),
        );
        let file = self.dir.join(format!("{name}.yml"));
        std::fs::write(&file, config).expect("the node's configuration");
        let log = std::fs::File::create(self.dir.join(format!("{name}.log"))).expect("a log");
        let mut command = if is_root() {
            hand_to_postgres(&self.dir);
            let mut command = Command::new("setpriv");
            command.args(["--reuid=postgres", "--regid=postgres", "--init-groups"]);
            command.arg(program("patroni", INSTALL));
            command
        } else {
            Command::new(program("patroni", INSTALL))
        };
        let patroni = command
            .arg(&file)
            .env("HOME", &self.dir)
            .stdout(log.try_clone().expect("the log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|err| panic!("patroni: {err}: {INSTALL}"));
        self.nodes.push(Node {
            name,
            patroni: Some(patroni),
            pg_port,
            api_port,
            data,
        });
    }

    fn wait_for(&mut self, what: &str, done: impl Fn(&Cluster) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done(self) {
            let exited = self.nodes.iter_mut().find_map(|node| {
                let status = node.patroni.as_mut()?.try_wait().ok()??;
                node.patroni = None;
                Some(format!("{}'s Patroni exited ({status})", node.name))
            });
            if let Some(exited) = exited {
                panic!("{exited} while waiting for {what}: {}", self.logs());
            }
            assert!(
                Instant::now() < deadline,
                "waited two minutes for {what}: {}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Every node's Patroni log.
    pub fn logs(&self) -> String {
        self.nodes
            .iter()
            .map(|node| {
                let log = std::fs::read_to_string(self.dir.join(format!("{}.log", node.name)))
                    .unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(40).collect();
                format!(
                    "--- {} ---\n{}",
                    node.name,
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A multi-host URL of `database` that follows the writable node.
    pub fn url(&self, database: &str) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|node| format!("127.0.0.1:{}", node.pg_port))
            .collect();
        format!(
            "postgres://postgres@{}/{database}?target_session_attrs=read-write",
            hosts.join(",")
        )
    }

    /// The URL of `database` on node `n` alone.
    pub fn node_url(&self, n: usize, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}",
            self.nodes[n].pg_port
        )
    }

    /// Runs SQL with `psql` on node `n`'s `postgres` database; what it printed, or empty if
    /// it failed.
    pub fn sql(&self, n: usize, sql: &str) -> String {
        let psql = bin_dir().join("psql");
        let psql = if psql.is_file() {
            psql
        } else {
            PathBuf::from("psql")
        };
        Command::new(psql)
            .args(["-h", "127.0.0.1", "-p", &self.nodes[n].pg_port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-X", "-q", "-A", "-t"])
            .args(["-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
            .unwrap_or_default()
    }

    /// Which node leads now, by Patroni's REST API.
    pub fn leader(&self) -> Option<usize> {
        (0..self.nodes.len()).find(|&n| status(self.nodes[n].api_port, "/primary") == Some(200))
    }

    /// Kills node `n`'s Patroni and its postmaster with SIGKILL, as a machine lost would.
    pub fn kill(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        if let Some(mut patroni) = node.patroni.take() {
            let _ = patroni.kill();
            let _ = patroni.wait();
        }
        if let Some(pid) = std::fs::read_to_string(node.data.join("postmaster.pid"))
            .ok()
            .and_then(|pid| pid.lines().next().map(str::to_owned))
        {
            let _ = Command::new("kill")
                .args(["-KILL", &pid])
                .stderr(Stdio::null())
                .status();
        }
    }

    /// Waits until node `n` leads and takes writes; how long that took.
    pub fn wait_for_leader(&mut self, n: usize) -> Duration {
        let started = Instant::now();
        self.wait_for(&format!("node{n} to lead"), |cluster| {
            cluster.sql(n, "SELECT pg_is_in_recovery()") == "f"
        });
        started.elapsed()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for n in 0..self.nodes.len() {
            self.kill(n);
        }
        let _ = self.etcd.kill();
        let _ = self.etcd.wait();
        // The postmasters' children end once they see their parent gone.
        std::thread::sleep(Duration::from_millis(200));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
