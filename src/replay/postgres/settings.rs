//! [`TransactionSettings`]: what a PostgreSQL transaction sets for itself, so that a pooler in
//! transaction mode keeps it.

use std::fmt::Write as _;
use std::time::Duration;

/// Timeouts a transaction sets for itself (`SET LOCAL`), sent in the same message as its
/// `BEGIN`. A pooler in transaction mode (PgBouncer's `pool_mode = transaction`) hands each
/// transaction to whichever server connection is free, so a session's settings (a startup
/// `options=-c ...`, which PgBouncer refuses outright, or a `SET`) do not reach the next
/// transaction; a `SET LOCAL` lives exactly as long as its transaction, wherever it runs.
///
/// ```
/// use std::time::Duration;
/// use agent_tool_result::replay::TransactionSettings;
///
/// let settings = TransactionSettings::new()
///     .lock_timeout(Duration::from_secs(2))
///     .idle_timeout(Duration::from_secs(4));
/// assert_eq!(
///     settings.begin(),
///     "BEGIN; SET LOCAL lock_timeout = 2000; \
///      SET LOCAL idle_in_transaction_session_timeout = 4000"
/// );
/// assert_eq!(TransactionSettings::new().begin(), "BEGIN");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionSettings {
    lock: Option<Duration>,
    idle: Option<Duration>,
    statement: Option<Duration>,
    /// The `BEGIN` and its `SET LOCAL`s, made once.
    begin: String,
}

impl Default for TransactionSettings {
    fn default() -> Self {
        TransactionSettings::new()
    }
}

impl TransactionSettings {
    /// No setting: the server's own.
    #[must_use]
    pub fn new() -> Self {
        TransactionSettings {
            lock: None,
            idle: None,
            statement: None,
            begin: "BEGIN".to_owned(),
        }
    }

    /// How long a statement of the transaction waits for a lock (a row another transaction
    /// holds, an advisory lock) before it fails: `lock_timeout`.
    #[must_use]
    pub fn lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock = Some(timeout);
        self.rendered()
    }

    /// How long the transaction may sit open with nothing running before the server ends its
    /// session and rolls it back (a process that stopped mid-transaction holds its locks no
    /// longer): `idle_in_transaction_session_timeout`.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle = Some(timeout);
        self.rendered()
    }

    /// How long one statement of the transaction may run: `statement_timeout`.
    #[must_use]
    pub fn statement_timeout(mut self, timeout: Duration) -> Self {
        self.statement = Some(timeout);
        self.rendered()
    }

    /// What begins a transaction with these settings: `BEGIN` and a `SET LOCAL` for each, in
    /// one simple-protocol message (milliseconds, at least 1: PostgreSQL reads 0 as "no
    /// limit").
    #[must_use]
    pub fn begin(&self) -> &str {
        &self.begin
    }

    fn rendered(mut self) -> Self {
        let mut begin = String::from("BEGIN");
        for (name, value) in [
            ("lock_timeout", self.lock),
            ("idle_in_transaction_session_timeout", self.idle),
            ("statement_timeout", self.statement),
        ] {
            if let Some(value) = value {
                // PostgreSQL takes a 32-bit count of milliseconds.
                let ms = value.as_millis().clamp(1, 2_147_483_647);
                let _ = write!(begin, "; SET LOCAL {name} = {ms}");
            }
        }
        self.begin = begin;
        self
    }
}
