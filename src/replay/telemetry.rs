//! What the replay sequence reports: with the `tracing` feature, a span per keyed call and an
//! event for how it ended; with `metrics`, counters and histograms through the `metrics`
//! facade. Without either feature every function here is empty and costs nothing.
//!
//! Nothing reported names the raw key or any argument: a call is named by its tool, its scope
//! and its key's digest (`key_` and 16 hex digits of SHA-256 over the scope and the key).
//!
//! | metric | kind | labels | what |
//! |---|---|---|---|
//! | `atr_keyed_calls_total` | counter | `tool`, `outcome` | calls answered, by [`CallOutcome`] |
//! | `atr_keyed_refusals_total` | counter | `tool`, `kind` | refusals, by [`RefusalKind`](crate::guarantee::RefusalKind) |
//! | `atr_ledger_seconds` | histogram | `op` (`begin`, `renew`, `complete`, `release`) | the ledger's latency |
//! | `atr_sequence_overhead_seconds` | histogram | `tool` | a call's time outside its tool |
//!
//! The `metrics` facade leaves a histogram's form to the exporter; Prometheus's exports a
//! summary unless given buckets, and the quantiles of summaries from several processes cannot
//! be added up. Give it [`LATENCY_BUCKETS`] (`PrometheusBuilder::set_buckets`) and each is a
//! Prometheus histogram, which adds up across every process of a service.

use std::time::Duration;

/// Bucket bounds, in seconds, for the latencies above: from half a millisecond (a ledger
/// write on a local database) to ten seconds (a statement waiting out its timeout), about
/// two to two and a half apart.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

use super::key::IdempotencyKey;
use super::reply::{Reply, ReplyKind};
use super::scope::Scope;
use crate::guarantee::Refusal;

/// How a keyed call ended, as telemetry names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallOutcome {
    /// The tool ran, and its answer is recorded.
    Fresh,
    /// The key's first answer, again; nothing ran.
    Replayed,
    /// Refused (a key problem, arguments, the store, a rate limit); nothing ran.
    Refused,
    /// A key a stopped call abandoned, answered `unknown`.
    AbandonedUnknown,
    /// The tool ran, and its answer is not recorded yet (the ledger failed).
    Unrecorded,
    /// The tool ran past its lease; another process answered the key.
    LeaseLost,
}

impl CallOutcome {
    /// Every outcome.
    pub const ALL: [CallOutcome; 6] = [
        CallOutcome::Fresh,
        CallOutcome::Replayed,
        CallOutcome::Refused,
        CallOutcome::AbandonedUnknown,
        CallOutcome::Unrecorded,
        CallOutcome::LeaseLost,
    ];

    /// The outcome's row: its label, its log message, and whether it is a warning.
    const fn row(self) -> (&'static str, &'static str, bool) {
        match self {
            CallOutcome::Fresh => ("fresh", "keyed call ran", false),
            CallOutcome::Replayed => ("replayed", "keyed call replayed", false),
            CallOutcome::Refused => ("refused", "keyed call refused", false),
            CallOutcome::AbandonedUnknown => {
                ("abandoned_unknown", "abandoned key answered unknown", true)
            }
            CallOutcome::Unrecorded => (
                "unrecorded",
                "answer not recorded yet: the ledger failed",
                true,
            ),
            CallOutcome::LeaseLost => (
                "lease_lost",
                "lease lost: the tool ran past its lease, and another process answered the key",
                true,
            ),
        }
    }

    /// The label value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        self.row().0
    }

    /// What the log says of it.
    #[must_use]
    pub const fn message(self) -> &'static str {
        self.row().1
    }

    /// Whether the log warns of it: something to look into, though the call was answered.
    #[must_use]
    pub const fn is_warning(self) -> bool {
        self.row().2
    }

    /// The outcome of `reply`.
    #[must_use]
    pub fn of(reply: &Reply) -> Self {
        if reply.answer().refusal().is_some() {
            return CallOutcome::Refused;
        }
        match reply.kind() {
            ReplyKind::Replayed => CallOutcome::Replayed,
            ReplyKind::Refused => CallOutcome::Refused,
            ReplyKind::Recovered => CallOutcome::AbandonedUnknown,
            ReplyKind::Unrecorded => CallOutcome::Unrecorded,
            ReplyKind::LeaseLost => CallOutcome::LeaseLost,
            ReplyKind::Ran => CallOutcome::Fresh,
        }
    }
}

impl std::str::FromStr for CallOutcome {
    type Err = UnknownOutcome;

    fn from_str(label: &str) -> Result<Self, UnknownOutcome> {
        CallOutcome::ALL
            .into_iter()
            .find(|outcome| outcome.as_str() == label)
            .ok_or_else(|| UnknownOutcome(label.chars().take(64).collect()))
    }
}

/// The error for a label that is not a [`CallOutcome`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown call outcome `{0}`: expected fresh, replayed, refused, abandoned_unknown, unrecorded or lease_lost"
)]
pub struct UnknownOutcome(String);

impl std::fmt::Display for CallOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `key_` and 16 hex digits of SHA-256 over `scope` and `key`: names a key in logs without
/// showing it.
///
/// ```
/// use agent_tool_result::replay::telemetry::key_digest;
/// use agent_tool_result::replay::{IdempotencyKey, Scope};
///
/// let key = IdempotencyKey::new("order-7f3a")?;
/// let digest = key_digest(&Scope::principal("acct_1"), &key);
/// assert!(digest.starts_with("key_") && !digest.contains("order"));
/// assert_ne!(digest, key_digest(&Scope::principal("acct_2"), &key));
/// # Ok::<(), agent_tool_result::replay::InvalidKey>(())
/// ```
#[must_use]
pub fn key_digest(scope: &Scope, key: &IdempotencyKey) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in [scope.as_str(), key.as_str()] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    let head = hasher.finalize()[..8]
        .iter()
        .fold(0u64, |head, byte| head << 8 | u64::from(*byte));
    format!("key_{head:016x}")
}

/// The span of a keyed call of `tool`: its tool, scope and key digest (computed only when a
/// subscriber wants the span).
#[cfg(feature = "tracing")]
pub(crate) fn span(tool: &str, scope: &Scope, key: &IdempotencyKey) -> tracing::Span {
    let span = tracing::info_span!(
        "keyed_call",
        tool,
        scope = scope.as_str(),
        key = tracing::field::Empty,
    );
    if !span.is_disabled() {
        span.record("key", key_digest(scope, key).as_str());
    }
    span
}

/// Where a keyed call's time went.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Timings {
    /// In the tool.
    pub(crate) tool: Duration,
}

/// A ledger operation `op` that took `took`.
#[allow(unused_variables, reason = "empty without the telemetry features")]
pub(crate) fn ledger(op: &'static str, took: Duration) {
    #[cfg(feature = "tracing")]
    tracing::debug!(op, took_us = took.as_micros(), "ledger");
    #[cfg(feature = "metrics")]
    metrics::histogram!("atr_ledger_seconds", "op" => op).record(took.as_secs_f64());
}

/// A call of `tool` answered with `reply` after `total`, of which `timings.tool` in the tool.
#[allow(unused_variables, reason = "empty without the telemetry features")]
pub(crate) fn answered(tool: &str, reply: &Reply, total: Duration, timings: Timings) {
    let outcome = CallOutcome::of(reply);
    let refusal = reply.answer().refusal();
    #[cfg(feature = "tracing")]
    {
        let overhead_us = total.saturating_sub(timings.tool).as_micros();
        let refusal = refusal.map(|refusal| refusal.kind().as_str());
        if outcome.is_warning() {
            tracing::warn!(
                outcome = outcome.as_str(),
                refusal,
                overhead_us,
                "{}",
                outcome.message()
            );
        } else {
            tracing::info!(
                outcome = outcome.as_str(),
                refusal,
                overhead_us,
                "{}",
                outcome.message()
            );
        }
    }
    #[cfg(feature = "metrics")]
    {
        let tool = tool.to_owned();
        metrics::counter!("atr_keyed_calls_total", "tool" => tool.clone(), "outcome" => outcome.as_str())
            .increment(1);
        if let Some(refusal) = refusal {
            metrics::counter!("atr_keyed_refusals_total", "tool" => tool.clone(), "kind" => refusal.kind().as_str())
                .increment(1);
        }
        metrics::histogram!("atr_sequence_overhead_seconds", "tool" => tool)
            .record(total.saturating_sub(timings.tool).as_secs_f64());
    }
}

/// `principal`'s call of `tool` refused before the sequence began it (its key missing or
/// malformed, its arguments not the tool's).
#[allow(unused_variables, reason = "empty without the telemetry features")]
pub(crate) fn refused_before(tool: &str, principal: &str, refusal: &Refusal) {
    #[cfg(feature = "tracing")]
    tracing::info!(
        tool,
        scope = principal,
        outcome = CallOutcome::Refused.as_str(),
        refusal = refusal.kind().as_str(),
        "keyed call refused before it began"
    );
    #[cfg(feature = "metrics")]
    {
        metrics::counter!("atr_keyed_calls_total", "tool" => tool.to_owned(), "outcome" => CallOutcome::Refused.as_str())
            .increment(1);
        metrics::counter!("atr_keyed_refusals_total", "tool" => tool.to_owned(), "kind" => refusal.kind().as_str())
            .increment(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_distinct_snake_case() {
        let labels: Vec<&str> = CallOutcome::ALL.iter().map(|o| o.as_str()).collect();
        for (i, label) in labels.iter().enumerate() {
            assert!(label.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
            assert!(!labels[..i].contains(label));
            assert_eq!(label.parse::<CallOutcome>().unwrap().as_str(), *label);
        }
        assert!("Fresh".parse::<CallOutcome>().is_err());
    }

    #[test]
    fn a_key_digest_is_fixed_length_and_tells_keys_apart() {
        let scope = Scope::principal("acct_1");
        let digest = key_digest(&scope, &IdempotencyKey::new("order-7f3a").unwrap());
        assert_eq!(digest.len(), 20, "{digest}");
        assert_ne!(
            digest,
            key_digest(&scope, &IdempotencyKey::new("order-7f3b").unwrap())
        );
    }
}
