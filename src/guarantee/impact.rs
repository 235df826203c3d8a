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

/// What a command did with its recipients now, in counts that always add up: how many were
/// handed to the provider and how many policy refused. The infallible result builders
/// ([`GuaranteeResult::committed_with`](super::GuaranteeResult::committed_with),
/// [`GuaranteeResult::deferred_with`](super::GuaranteeResult::deferred_with)) take it and
/// count `requested` as the sum, so no count can exceed it.
///
/// ```
/// use agent_tool_result::guarantee::{Impact, Tally};
///
/// let impact = Impact::from(Tally::sent(40).with_denied(2));
/// assert_eq!((impact.requested(), impact.committed(), impact.denied()), (Some(42), Some(40), Some(2)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    committed: u64,
    denied: u64,
}

impl Tally {
    /// `count` recipients handed to the provider, none refused.
    #[must_use]
    pub const fn sent(count: u64) -> Self {
        Tally {
            committed: count,
            denied: 0,
        }
    }

    /// Sets how many recipients policy refused (opted out, say).
    #[must_use]
    pub const fn with_denied(mut self, count: u64) -> Self {
        self.denied = count;
        self
    }

    /// How many recipients were handed to the provider.
    #[must_use]
    pub const fn committed(&self) -> u64 {
        self.committed
    }

    /// How many recipients policy refused.
    #[must_use]
    pub const fn denied(&self) -> u64 {
        self.denied
    }

    /// The impact of this tally and `held` recipients kept for later: `requested` their sum.
    /// Counts whose sum would pass `u64::MAX` are cut (held first, then denied) so that they
    /// still add up: no command has that many recipients.
    pub(super) fn with_held(self, held: u64) -> Impact {
        let committed = self.committed;
        let denied = self.denied.min(u64::MAX - committed);
        let held = held.min(u64::MAX - committed - denied);
        Impact {
            requested: Some(committed + denied + held),
            committed: Some(committed),
            deferred: (held > 0).then_some(held),
            denied: (denied > 0).then_some(denied),
            failed: None,
        }
    }
}

impl From<Tally> for Impact {
    fn from(tally: Tally) -> Impact {
        tally.with_held(0)
    }
}
