//! [`StoredAnswer`]: a guarantee tool's answer as a ledger keeps it, to give again.

/// An answer as a guarantee tool first gave it, kept to give again whatever the transport:
/// the guarantee result (or the refusal) as its compact JSON, and which of the two it is.
/// REST and MCP project the same stored answer, so a replay of one key over either is the
/// same decision, and the same bytes as the first answer over that transport.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult};
/// use agent_tool_result::replay::StoredAnswer;
///
/// let stored = StoredAnswer::of(&Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed()))?;
/// assert!(!stored.is_refusal());
/// assert_eq!(stored.answer()?.result().map(|r| r.is_deny()), Some(false));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAnswer {
    refused: bool,
    provisional: bool,
    json: String,
}

impl StoredAnswer {
    /// The answer to keep.
    ///
    /// # Errors
    ///
    /// When the result's own fields do not serialize to an object.
    pub fn of<T: serde::Serialize>(
        answer: &crate::guarantee::Answer<T>,
    ) -> Result<Self, serde_json::Error> {
        Ok(StoredAnswer {
            refused: answer.refusal().is_some(),
            provisional: false,
            json: answer.to_json()?,
        })
    }

    /// An answer as a store reads it back.
    pub(crate) fn from_stored(refused: bool, json: String) -> Self {
        StoredAnswer {
            refused,
            provisional: false,
            json,
        }
    }

    /// The same answer, marked provisional (or not), as a store reads it back.
    #[must_use]
    pub(crate) fn with_provisional(mut self, provisional: bool) -> Self {
        self.provisional = provisional;
        self
    }

    /// Whether the answer is provisional: the `unknown` the sequence answered a key with
    /// when the call that began it was found abandoned, which the truth may still replace
    /// ([`Ledger::resolve`](super::Ledger::resolve)). Every other answer is final.
    #[must_use]
    pub fn is_provisional(&self) -> bool {
        self.provisional
    }

    /// Whether the answer is a refusal (else a guarantee result).
    #[must_use]
    pub fn is_refusal(&self) -> bool {
        self.refused
    }

    /// The answer's compact JSON, as it was first written.
    #[must_use]
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The answer's compact JSON as an owned string, for a driver's parameter.
    #[cfg(feature = "postgres")]
    pub(crate) fn json_string(&self) -> &String {
        &self.json
    }

    /// The answer, read back.
    ///
    /// # Errors
    ///
    /// [`UnreadableAnswer`] when the store holds something no guarantee tool answered (it was
    /// written by something else).
    pub fn answer(&self) -> Result<crate::guarantee::Answer, UnreadableAnswer> {
        use crate::guarantee::{Answer, GuaranteeResult, Refusal};
        if self.refused {
            Refusal::from_json(&self.json)
                .map(Answer::Refused)
                .map_err(|err| UnreadableAnswer(err.to_string()))
        } else {
            GuaranteeResult::from_json(&self.json)
                .map(Answer::Result)
                .map_err(|err| UnreadableAnswer(err.to_string()))
        }
    }
}

/// A stored answer that is not a guarantee result or a refusal: the store was written by
/// something else.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the stored answer cannot be read: {0}")]
pub struct UnreadableAnswer(String);
