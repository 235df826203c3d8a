//! [`Fence`], the token every lease carries, and [`EffectKey`], the deterministic name of one
//! side effect of one operation: what makes an effect safe where a lease alone cannot (see
//! [`crate::replay`], "What the ledger guarantees, and what it cannot").

/// A fencing token: a number the store hands out with every lease (a fresh key, an abandoned
/// key taken over), greater than every fence it handed out before, for any key. Of two leases
/// on one key, the later has the greater fence.
///
/// A fence guards the ledger's own transitions (only the current fence of a key whose lease
/// has not passed completes, renews or releases it) and, handed to the tool, the tool's own
/// writes: a write made conditional on the key's current fence, in the same statement or
/// transaction as the write, cannot land once another process has taken the key over, however
/// long its writer was paused or cut off. See [`crate::replay`], "What the ledger
/// guarantees, and what it cannot".
///
/// ```
/// use agent_tool_result::replay::Fence;
///
/// let (first, later) = (Fence::new(7), Fence::new(9));
/// assert!(later > first);
/// assert_eq!((later.get(), later.to_string()), (9, "9".to_owned()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fence(u64);

impl Fence {
    /// A fence as a store keeps it (to compare with one a lease carries, say).
    #[must_use]
    pub const fn new(value: u64) -> Self {
        Fence(value)
    }

    /// The number.
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The number as SQL stores keep it, a signed 64-bit integer (`bigint`); fences stay
    /// below `i64::MAX`, so nothing is lost.
    #[must_use]
    pub fn as_i64(self) -> i64 {
        i64::try_from(self.0).unwrap_or(i64::MAX)
    }

    /// A fence read back from a signed 64-bit column.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn from_i64(value: i64) -> Self {
        Fence(u64::try_from(value).unwrap_or(0))
    }
}

impl std::fmt::Display for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A deterministic key for one side effect of one operation: `atr-` and 32 hex digits of a
/// SHA-256 over the operation and the part, so it fits any provider's idempotency-key field
/// (Stripe takes 255 characters) and says nothing of what it names. Hand it to a provider
/// that deduplicates: however many processes ask it to perform the part, under whatever
/// fence, it performs it once.
///
/// ```
/// use agent_tool_result::replay::EffectKey;
///
/// let key = EffectKey::new("cmp_0123456789abcdef", "+15550100001");
/// assert_eq!(key, EffectKey::new("cmp_0123456789abcdef", "+15550100001"));
/// assert_ne!(key, EffectKey::new("cmp_0123456789abcdef", "+15550100002"));
/// assert!(key.as_str().starts_with("atr-") && key.as_str().len() == 36);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EffectKey(String);

impl EffectKey {
    /// The effect key of `part` of operation `operation` (an id the operation has wherever
    /// it runs: a campaign's id, say).
    #[must_use]
    pub fn new(operation: &str, part: &str) -> Self {
        EffectKey::of(&[operation], part)
    }

    pub(super) fn of(operation: &[&str], part: &str) -> Self {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for piece in operation.iter().chain([&part]) {
            hasher.update((piece.len() as u64).to_be_bytes());
            hasher.update(piece.as_bytes());
        }
        let digest = hasher.finalize();
        let mut text = String::with_capacity(36);
        text.push_str("atr-");
        super::fingerprint::push_hex(&mut text, &digest[..16]);
        EffectKey(text)
    }

    /// The key's text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for EffectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
