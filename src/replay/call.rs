//! [`Call`]: one keyed call, as the replay sequence begins it.

use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::scope::Scope;

/// One keyed call, as the sequence begins it: whose (the [`Scope`]), under which key, the
/// request's [`Fingerprint`], and the context stored with the key (the id of the operation
/// the call creates, say), which names the lookup if the call is ever found abandoned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    tool: String,
    scope: Scope,
    key: IdempotencyKey,
    fingerprint: Fingerprint,
    context: String,
    effect_in_ledger: bool,
}

impl Call {
    /// A call with an empty context.
    #[must_use]
    pub fn new(scope: Scope, key: IdempotencyKey, fingerprint: Fingerprint) -> Self {
        Call {
            tool: String::new(),
            scope,
            key,
            fingerprint,
            context: String::new(),
            effect_in_ledger: false,
        }
    }

    /// `principal`'s call of `tool` with `arguments` under `key`: scoped to the principal,
    /// fingerprinted over the tool, the principal and the canonical arguments.
    #[must_use]
    pub fn of(
        tool: &str,
        principal: &str,
        key: IdempotencyKey,
        arguments: &serde_json::Value,
    ) -> Self {
        Call {
            tool: tool.to_owned(),
            ..Call::new(
                Scope::principal(principal),
                key,
                Fingerprint::of(tool, principal, arguments),
            )
        }
    }

    /// The tool called: named by [`Call::of`], empty for [`Call::new`]. Telemetry names the
    /// call by it.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The same call, storing `context` with its key.
    #[must_use]
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = context.into();
        self
    }

    /// The same call, for a tool whose every effect is a write in the typed transaction on
    /// the ledger's own database (`PostgresTransaction`, `SqliteTransaction`): the key is
    /// then begun inside that transaction and recorded with the answer at its commit, one
    /// round trip and one commit fewer than beginning it on its own. A crash leaves neither
    /// the effect nor the key. While the transaction is open, a second call with the same key
    /// is refused as in flight (PostgreSQL: an advisory lock on the key) or waits for it
    /// (SQLite: the file's write lock); after it, a second call replays its answer (on
    /// PostgreSQL its tool runs, and its writes roll back at its commit, which finds the key
    /// answered). The tool holds no lease while it runs, so it keeps the work it must not do
    /// twice inside that transaction, and makes no effect outside it.
    #[must_use]
    pub fn with_effect_in_ledger(mut self) -> Self {
        self.effect_in_ledger = true;
        self
    }

    /// Whether the call's effect is in the ledger's database ([`Call::with_effect_in_ledger`]).
    #[must_use]
    pub fn effect_in_ledger(&self) -> bool {
        self.effect_in_ledger
    }

    /// The scope.
    #[must_use]
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The key.
    #[must_use]
    pub fn key(&self) -> &IdempotencyKey {
        &self.key
    }

    /// The fingerprint.
    #[must_use]
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// The context.
    #[must_use]
    pub fn context(&self) -> &str {
        &self.context
    }

    /// An id for the operation this call creates, `{prefix}_` and 16 hex digits: the same
    /// for the same scope, key and request, so a call found abandoned names it from its
    /// context alone, and different for any other.
    ///
    /// ```
    /// use agent_tool_result::replay::{Call, IdempotencyKey};
    ///
    /// let key = || IdempotencyKey::new("k").unwrap();
    /// let a = Call::of("send_sms", "acct_1", key(), &serde_json::json!({ "to": "1" }));
    /// let b = Call::of("send_sms", "acct_2", key(), &serde_json::json!({ "to": "1" }));
    /// assert_eq!(a.operation_id("msg"), a.clone().operation_id("msg"));
    /// assert_ne!(a.operation_id("msg"), b.operation_id("msg"));
    /// assert!(a.operation_id("msg").starts_with("msg_"));
    /// ```
    #[must_use]
    pub fn operation_id(&self, prefix: &str) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for part in [self.scope.as_str(), self.key.as_str()] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.update(self.fingerprint.to_hex());
        let head = hasher.finalize()[..8]
            .iter()
            .fold(0u64, |head, byte| head << 8 | u64::from(*byte));
        format!("{prefix}_{head:016x}")
    }
}
