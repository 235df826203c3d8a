//! `impact`: the counts of a command's recipients.

/// The counts of a command's recipients, each present only when known.
///
/// ```
/// use agent_tool_result::guarantee::Impact;
///
/// let impact = Impact::new().with_requested(100).with_committed(40).with_deferred(60);
/// assert_eq!(impact.committed(), Some(40));
/// assert_eq!(impact.failed(), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Impact {
    pub(super) requested: Option<u64>,
    pub(super) committed: Option<u64>,
    pub(super) deferred: Option<u64>,
    pub(super) denied: Option<u64>,
    pub(super) failed: Option<u64>,
}

macro_rules! counts {
    ($($field:ident, $setter:ident, $doc:literal;)+) => {
        impl Impact {
            $(
                #[doc = concat!("Sets how many recipients ", $doc, ".")]
                #[must_use]
                pub fn $setter(mut self, count: u64) -> Self {
                    self.$field = Some(count);
                    self
                }

                #[doc = concat!("How many recipients ", $doc, ", if known.")]
                #[must_use]
                pub fn $field(&self) -> Option<u64> {
                    self.$field
                }
            )+
        }
    };
}

counts! {
    requested, with_requested, "the command asked for";
    committed, with_committed, "were handed to the provider";
    deferred, with_deferred, "are held durably for later";
    denied, with_denied, "policy refused";
    failed, with_failed, "failed at the provider";
}

impl Impact {
    /// No counts known.
    #[must_use]
    pub fn new() -> Self {
        Impact::default()
    }

    pub(super) fn is_empty(&self) -> bool {
        *self == Impact::default()
    }

    /// Committed, deferred, denied and failed, added up (absent counts as 0).
    pub(super) fn accounted(&self) -> u128 {
        [self.committed, self.deferred, self.denied, self.failed]
            .iter()
            .map(|c| u128::from(c.unwrap_or(0)))
            .sum()
    }
}

/// What a command did with its recipients, in counts that always add up: how many were
/// handed to the provider, and, when the tool counts them, how many policy refused and how
/// many are held for later. The infallible result builders
/// ([`GuaranteeResult::committed_with`](super::GuaranteeResult::committed_with),
/// [`GuaranteeResult::deferred_with`](super::GuaranteeResult::deferred_with)) take it and
/// count `requested` as the sum, so no count can exceed it. A count set to 0 is written (the
/// tool knows there were none); a count not set is not.
///
/// ```
/// use agent_tool_result::guarantee::{Impact, Tally};
///
/// let impact = Impact::from(Tally::sent(40).with_denied(2).with_held(0));
/// assert_eq!(impact.requested(), Some(42));
/// assert_eq!((impact.committed(), impact.denied(), impact.deferred()), (Some(40), Some(2), Some(0)));
/// assert_eq!(Impact::from(Tally::sent(1)).denied(), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    committed: u64,
    denied: Option<u64>,
    held: Option<u64>,
}

impl Tally {
    /// `count` recipients handed to the provider.
    #[must_use]
    pub const fn sent(count: u64) -> Self {
        Tally {
            committed: count,
            denied: None,
            held: None,
        }
    }

    /// Sets how many recipients policy refused (opted out, say).
    #[must_use]
    pub const fn with_denied(mut self, count: u64) -> Self {
        self.denied = Some(count);
        self
    }

    /// Sets how many recipients are held durably for later (a send window's, say).
    #[must_use]
    pub const fn with_held(mut self, count: u64) -> Self {
        self.held = Some(count);
        self
    }

    /// How many recipients were handed to the provider.
    #[must_use]
    pub const fn committed(&self) -> u64 {
        self.committed
    }

    /// How many are held for later (0 when not counted).
    #[must_use]
    pub const fn held(&self) -> u64 {
        match self.held {
            Some(held) => held,
            None => 0,
        }
    }
}

impl From<Tally> for Impact {
    /// The tally's impact, `requested` the sum of its counts. Counts whose sum would pass
    /// `u64::MAX` are cut (held first, then denied) so that they still add up: no command
    /// has that many recipients.
    fn from(tally: Tally) -> Impact {
        let committed = tally.committed;
        let denied = tally.denied.map(|denied| denied.min(u64::MAX - committed));
        let room = u64::MAX - committed - denied.unwrap_or(0);
        let held = tally.held.map(|held| held.min(room));
        Impact {
            requested: Some(committed + denied.unwrap_or(0) + held.unwrap_or(0)),
            committed: Some(committed),
            deferred: held,
            denied,
            failed: None,
        }
    }
}
