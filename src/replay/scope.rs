//! [`Scope`]: whose idempotency keys these are.

/// Whose keys these are: the principal (the account a token authenticates). The same key
/// under two scopes is two independent keys; nothing of one scope's keys is seen from another.
///
/// The tool is not part of the scope: it is part of the [`Fingerprint`](super::Fingerprint), so the same key sent
/// by one principal to two tools is a mismatch (a client bug that reuses keys), as Stripe has
/// it, and never a second execution.
///
/// ```
/// use agent_tool_result::replay::Scope;
///
/// // The same key under two accounts is two keys.
/// assert_ne!(Scope::principal("acct_1"), Scope::principal("acct_2"));
/// assert_eq!(Scope::principal("acct_1").as_str(), "acct_1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope(String);

impl Scope {
    /// The scope of `principal`'s keys.
    #[must_use]
    pub fn principal(principal: impl Into<String>) -> Self {
        Scope(principal.into())
    }

    /// The principal.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
