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
