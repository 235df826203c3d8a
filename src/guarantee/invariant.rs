//! [`InvariantError`]: why a guarantee result cannot be built.

use crate::breach::Breach;

/// Why a guarantee result cannot be built: the invariant it would break.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InvariantError {
    rule: crate::Rule,
    message: String,
}

impl InvariantError {
    /// The invariant's rule.
    #[must_use]
    pub fn rule(&self) -> crate::Rule {
        self.rule
    }

    pub(crate) fn of(breach: Breach<'_>) -> Self {
        InvariantError {
            rule: breach.rule(),
            message: breach.to_string(),
        }
    }
}
