//! A PostgreSQL server of the test's own: `initdb` and `pg_ctl` on a scratch directory,
//! listening on 127.0.0.1 and a free port (and a socket in the directory), stopped and removed
//! when dropped. As root, the server runs as the unprivileged `postgres` user the
//! distribution's package creates, since `initdb` refuses to run as root.

#![allow(dead_code, reason = "each test binary uses the part it needs")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// A running server.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    as_user: bool,
    /// Whether the server syncs its writes to disk, as a deployed one does (the tests' own
    /// servers do not, which no deployment does: a benchmark's does).
    durable: bool,
}

const INSTALL: &str = "the PostgreSQL tests need the server's programs (initdb, pg_ctl): \
    install the distribution's package (`apt-get install postgresql`), or run the tests as \
    root, where they install it themselves";

/// Where `initdb` and `pg_ctl` are: on the `PATH`, or in the distribution's versioned
/// directory (`/usr/lib/postgresql/<version>/bin`), the newest first.
pub fn server_bin() -> PathBuf {
    let found = || {
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>());
        let mut versioned: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join("bin"))
            .collect();
        versioned.sort_by_key(|dir| {
            std::cmp::Reverse(
                dir.parent()
                    .and_then(|v| v.file_name())
                    .and_then(|v| v.to_str())
                    .and_then(|v| v.parse::<u32>().ok())
                    .unwrap_or(0),
            )
        });
        on_path
            .chain(versioned)
            .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
    };
    found()
        .or_else(|| {
            provision();
            found()
        })
        .unwrap_or_else(|| panic!("{INSTALL}"))
}

/// The distribution's packages the tests' servers come from, each with the program it is
/// found by.
const PACKAGES: [(&str, &str); 4] = [
    ("postgresql", "initdb"),
    ("pgbouncer", "pgbouncer"),
    ("patroni", "patroni"),
    ("etcd-server", "etcd"),
];

/// Installs those of [`PACKAGES`] that are missing, all at once: what runs under the lock,
/// so a process that waited on it finds them installed and does nothing.
const INSTALL_MISSING: &str = r#"
found() {
  command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ] \
    || ls /usr/lib/postgresql/*/bin/"$1" >/dev/null 2>&1
}
missing=""
for pair in "$@"; do found "${pair#*:}" || missing="$missing ${pair%%:*}"; done
[ -n "$missing" ] || exit 0
echo "installing the packages of the servers the tests start:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q && apt-get install -y -q $missing
"#;

/// Installs the servers' packages this machine lacks when the tests run as root where
/// `apt-get` is: one `apt-get update` and one install for the machine, under a lock every
/// test process takes in turn (`flock`), its output in the asking test's log. Elsewhere it
/// does nothing, and the test that needs a server says what to install.
///
/// # Panics
///
/// When the installation fails, with apt's output.
pub fn provision() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let has = |program: &str| {
            Command::new("sh")
                .args(["-c", &format!("command -v {program}")])
                .output()
                .is_ok_and(|out| out.status.success())
        };
        if !is_root() || !has("apt-get") {
            return;
        }
        let lock = std::env::temp_dir().join("agent-tool-result-packages.lock");
        let mut command = if has("flock") {
            let mut command = Command::new("flock");
            command.arg(&lock).arg("sh");
            command
        } else {
            Command::new("sh")
        };
        let pairs = PACKAGES.map(|(package, program)| format!("{package}:{program}"));
        let out = command
            .args(["-c", INSTALL_MISSING, "sh"])
            .args(pairs)
            .output()
            .expect("sh runs");
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprint!("{log}");
        assert!(
            out.status.success(),
            "installing the servers' packages failed: {log}"
        );
    });
}

/// A new, empty scratch directory for a server of `kind` (`atr-<kind>-<pid>-<n>`).
pub fn scratch_dir(kind: &str) -> PathBuf {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "atr-{kind}-{}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// A port free on 127.0.0.1 now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// Gives `dir` and all in it to the unprivileged `postgres` user the distribution's package
/// creates: as root, the servers (PostgreSQL, PgBouncer, Patroni) run as it.
pub fn hand_to_postgres(dir: &Path) {
    let chown = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(dir)
        .status();
    assert!(
        chown.is_ok_and(|s| s.success()),
        "as root, the servers run as the `postgres` user the package creates: {INSTALL}"
    );
}

/// Where the distribution's program `name` is: on the `PATH`, or in `/usr/sbin` or
/// `/usr/bin`, once [`provision`] has installed what it could; the panic says what to
/// `install` when it is nowhere.
pub fn program(name: &str, install: &str) -> PathBuf {
    let found = || {
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
            .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    };
    found()
        .or_else(|| {
            provision();
            found()
        })
        .unwrap_or_else(|| panic!("no {name}: {install}"))
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

impl Postgres {
    /// Starts a fresh server.
    ///
    /// # Panics
    ///
    /// When the programs are missing (saying what to install), or the server does not start.
    pub fn start() -> Postgres {
        Postgres::start_with(false)
    }

    /// Starts a fresh server as one is deployed: `fsync` and `synchronous_commit` on, every
    /// commit on disk before it is answered, and `pg_stat_statements` loaded (a bench counts
    /// the statements each call makes).
    ///
    /// # Panics
    ///
    /// As [`Postgres::start`].
    #[allow(dead_code)] // the benchmarks' (each test binary includes this file)
    pub fn start_as_deployed() -> Postgres {
        Postgres::start_with(true)
    }

    fn start_with(durable: bool) -> Postgres {
        let bin = server_bin();
        let dir = scratch_dir("postgres");
        let as_user = is_root();
        if as_user {
            hand_to_postgres(&dir);
        }
        let port = free_port();
        let server = Postgres {
            dir,
            bin,
            port,
            as_user,
            durable,
        };
        let data = server.data();
        server.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        server.pg_ctl("start");
        server
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    /// One of the server's programs, as `postgres` when the test runs as root.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_user {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&path);
            command
        } else {
            Command::new(&path)
        }
    }

    /// Runs one of the server's programs, and checks that it succeeded.
    fn run(&self, program: &str, args: &[&str]) -> Output {
        let out = self
            .command(program)
            .args(args)
            .current_dir(&self.dir)
            .output()
            .unwrap_or_else(|err| panic!("{program}: {err}: {INSTALL}"));
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn pg_ctl(&self, action: &str) {
        self.pg_ctl_mode(action, "fast");
    }

    fn pg_ctl_mode(&self, action: &str, mode: &str) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200 {}",
            self.port,
            self.dir.display(),
            if self.durable {
                "-c fsync=on -c shared_preload_libraries=pg_stat_statements"
            } else {
                "-c fsync=off"
            }
        );
        let log = self.dir.join("server.log").display().to_string();
        let data = self.data();
        let mut args = vec!["-D", &data, "-l", &log, "-w", "-t", "60"];
        if action != "stop" {
            args.extend(["-o", &options]);
        }
        if action != "start" {
            args.extend(["-m", mode]);
        }
        args.push(action);
        self.run("pg_ctl", &args);
    }

    /// The URL of the `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A new empty database, and its URL.
    pub fn database(&self, name: &str) -> String {
        self.sql(&format!("CREATE DATABASE {name}"));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs SQL with `psql` (from the same directory) against the `postgres` database, and
    /// returns what it printed (unaligned, tuples only).
    pub fn sql(&self, sql: &str) -> String {
        self.sql_in("postgres", sql)
    }

    /// Runs SQL with `psql` against `database`.
    pub fn sql_in(&self, database: &str, sql: &str) -> String {
        let port = self.port.to_string();
        let psql = if self.bin.join("psql").is_file() {
            self.bin.join("psql")
        } else {
            PathBuf::from("psql")
        };
        let out = Command::new(&psql)
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                database,
            ])
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .unwrap_or_else(|err| panic!("psql: {err}: {INSTALL}"));
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Restarts the server (every connection is dropped).
    pub fn restart(&self) {
        self.pg_ctl("restart");
    }

    /// Restarts the server as a crash would (`-m immediate`: no checkpoint, every backend
    /// killed, crash recovery at start).
    pub fn restart_immediate(&self) {
        self.pg_ctl_mode("restart", "immediate");
    }

    /// Ends every session on `database` but the one that asks (`pg_terminate_backend`);
    /// returns how many.
    pub fn terminate_backends(&self, database: &str) -> usize {
        self.sql(&format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = '{database}' AND pid <> pg_backend_pid()"
        ))
        .parse()
        .unwrap_or(0)
    }

    /// The port the server listens on, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The scratch directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
