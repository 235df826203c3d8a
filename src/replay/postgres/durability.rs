//! [`Durability`]: whether a write the PostgreSQL server acknowledged survives the loss of
//! that server, as its replication settings say.

use std::fmt;

/// What the server the ledger writes to does with a commit before it acknowledges it
/// ([`PostgresLedger::durability`](super::PostgresLedger::durability)). The promise that a key
/// answered `committed` replays that answer holds across a failover only when the commit
/// reached a standby before it was acknowledged: `synchronous_commit` at `on`,
/// `remote_write` or `remote_apply`, and a synchronous standby named in
/// `synchronous_standby_names` (Patroni's `synchronous_mode` names one). Without one, a
/// promoted standby may lack the last acknowledged commits: their keys are forgotten, and a
/// retry of such a key runs its tool again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Durability {
    synchronous_commit: String,
    standby_names: String,
    streaming: Option<u32>,
}

/// The `synchronous_commit` values that wait for a synchronous standby.
const WAITS_FOR_STANDBY: [&str; 3] = ["on", "remote_write", "remote_apply"];

impl Durability {
    pub(super) fn new(
        synchronous_commit: String,
        standby_names: String,
        streaming: Option<u32>,
    ) -> Self {
        Durability {
            synchronous_commit,
            standby_names,
            streaming,
        }
    }

    /// Whether an acknowledged commit waited for a synchronous standby: what a failover needs
    /// to lose none.
    #[must_use]
    pub fn survives_failover(&self) -> bool {
        WAITS_FOR_STANDBY.contains(&self.synchronous_commit.as_str())
            && !self.standby_names.trim().is_empty()
    }

    /// The server's `synchronous_commit`.
    #[must_use]
    pub fn synchronous_commit(&self) -> &str {
        &self.synchronous_commit
    }

    /// The server's `synchronous_standby_names` (empty: none).
    #[must_use]
    pub fn standby_names(&self) -> &str {
        &self.standby_names
    }

    /// How many standbys stream to the server synchronously now (`pg_stat_replication`), if
    /// the role may see it; with none, a commit waits until one connects.
    #[must_use]
    pub fn streaming_standbys(&self) -> Option<u32> {
        self.streaming
    }
}

impl fmt::Display for Durability {
    /// What the settings mean for an acknowledged commit, in a sentence for an operator.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.survives_failover() {
            write!(
                f,
                "commits wait for a synchronous standby (synchronous_standby_names = '{}', \
                 synchronous_commit = {})",
                self.standby_names, self.synchronous_commit
            )?;
            if self.streaming == Some(0) {
                f.write_str("; none streams now, so commits wait until one does")?;
            }
            Ok(())
        } else {
            let why = if WAITS_FOR_STANDBY.contains(&self.synchronous_commit.as_str()) {
                "synchronous_standby_names is empty".to_owned()
            } else {
                format!("synchronous_commit = {}", self.synchronous_commit)
            };
            write!(
                f,
                "commits are acknowledged without a synchronous standby ({why}): a failover \
                 may lose calls answered `committed`, and a retry of such a key runs its tool \
                 again; name a synchronous standby (Patroni: `synchronous_mode: true`, and \
                 `synchronous_mode_strict: true` to refuse writes while none is there)"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Durability;

    fn of(commit: &str, names: &str) -> Durability {
        Durability::new(commit.to_owned(), names.to_owned(), Some(1))
    }

    #[test]
    fn a_failover_keeps_commits_only_with_a_standby_waited_for() {
        for commit in ["on", "remote_write", "remote_apply"] {
            assert!(of(commit, "*").survives_failover(), "{commit}");
            assert!(of(commit, "ANY 1 (a, b)").survives_failover(), "{commit}");
            assert!(!of(commit, "").survives_failover(), "{commit}");
            assert!(!of(commit, "  ").survives_failover(), "{commit}");
        }
        for commit in ["local", "off"] {
            let durability = of(commit, "*");
            assert!(!durability.survives_failover(), "{commit}");
            assert!(
                durability
                    .to_string()
                    .contains(&format!("synchronous_commit = {commit}"))
            );
        }
        assert!(
            of("on", "")
                .to_string()
                .contains("synchronous_standby_names is empty")
        );
    }
}
