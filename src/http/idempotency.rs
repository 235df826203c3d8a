//! How a producer refuses a guarantee call over its idempotency key, after the IETF httpapi
//! Idempotency-Key draft: one table of [`KeyProblem`]s, each a status, a problem type and a
//! title, and the header that marks a replayed response.
//!
//! | problem | status | when |
//! |---|---|---|
//! | [`KeyProblem::Missing`] | 400 | a guarantee call without `Idempotency-Key` |
//! | [`KeyProblem::Invalid`] | 400 | the key is not an sf-string of at most 255 characters |
//! | [`KeyProblem::Mismatch`] | 422 | the key was used before with another payload |
//! | [`KeyProblem::InFlight`] | 409 | the first request with the key is still running |
//!
//! A mismatch has its own problem type: it is never a policy deny, though both are 422.

use std::fmt;
use std::str::FromStr;

use ::http::StatusCode;

use super::Problem;

/// The header that marks a response replayed from the ledger rather than produced anew; its
/// value is `true`.
pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";

/// Declares the key problems and their table in one place.
macro_rules! key_problems {
    ($( $(#[$doc:meta])* $variant:ident = $wire:literal, $status:ident, $type_uri:literal, $title:literal; )+) => {
        /// Why a producer refuses a call over its idempotency key.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum KeyProblem {
            $( $(#[$doc])* $variant, )+
        }

        impl KeyProblem {
            /// Every key problem, in table order.
            pub const ALL: [KeyProblem; [$($wire),+].len()] = [$(KeyProblem::$variant),+];

            /// The short name, as `FromStr` reads it.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( KeyProblem::$variant => $wire, )+ }
            }

            /// The HTTP status.
            #[must_use]
            pub const fn status(self) -> StatusCode {
                match self { $( KeyProblem::$variant => StatusCode::$status, )+ }
            }

            /// The problem type URI.
            #[must_use]
            pub const fn problem_type(self) -> &'static str {
                match self { $( KeyProblem::$variant => $type_uri, )+ }
            }

            /// The problem title.
            #[must_use]
            pub const fn title(self) -> &'static str {
                match self { $( KeyProblem::$variant => $title, )+ }
            }

            /// The key problem a problem type URI names, exactly.
            #[must_use]
            pub fn from_problem_type(type_uri: &str) -> Option<Self> {
                match type_uri {
                    $( $type_uri => Some(KeyProblem::$variant), )+
                    _ => None,
                }
            }
        }

        impl FromStr for KeyProblem {
            type Err = UnknownKeyProblem;

            fn from_str(s: &str) -> Result<Self, UnknownKeyProblem> {
                match s {
                    $( $wire => Ok(KeyProblem::$variant), )+
                    _ => Err(UnknownKeyProblem(s.chars().take(64).collect())),
                }
            }
        }
    };
}

key_problems! {
    /// A guarantee call without an `Idempotency-Key`.
    Missing = "missing", BAD_REQUEST,
        "https://agentsfirst.ai/problems/idempotency-key-missing",
        "An Idempotency-Key is required";
    /// A key that is not an sf-string of at most 255 characters.
    Invalid = "invalid", BAD_REQUEST,
        "https://agentsfirst.ai/problems/idempotency-key-invalid",
        "The Idempotency-Key is malformed";
    /// The key was used before with another payload.
    Mismatch = "mismatch", UNPROCESSABLE_ENTITY,
        "https://agentsfirst.ai/problems/idempotency-key-mismatch",
        "The Idempotency-Key was used with another request";
    /// The first request with the key is still running.
    InFlight = "in-flight", CONFLICT,
        "https://agentsfirst.ai/problems/idempotency-key-in-flight",
        "A request with this Idempotency-Key is in progress";
}

/// The error for a name that is not a [`KeyProblem`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown key problem `{0}`: expected missing, invalid, mismatch or in-flight")]
pub struct UnknownKeyProblem(String);

impl KeyProblem {
    /// The problem: this status, type and title, with `detail` explaining the occurrence.
    ///
    /// ```
    /// use agent_tool_result::http::KeyProblem;
    ///
    /// let response = KeyProblem::Mismatch.problem("key k-1 was first used for another order").into_response();
    /// assert_eq!(response.status(), 422);
    /// let body: serde_json::Value = serde_json::from_slice(response.body())?;
    /// assert_eq!(body["type"], "https://agentsfirst.ai/problems/idempotency-key-mismatch");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    ///
    /// # Panics
    ///
    /// Never: every status in the table is an error status.
    #[must_use]
    pub fn problem(self, detail: impl Into<String>) -> Problem {
        Problem::typed(self.status(), self.problem_type(), self.title())
            .expect("every key problem status is an error status")
            .with_detail(detail)
    }
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for problem in KeyProblem::ALL {
            assert_eq!(problem.as_str().parse::<KeyProblem>(), Ok(problem));
            assert_eq!(
                KeyProblem::from_problem_type(problem.problem_type()),
                Some(problem)
            );
            let built = problem.problem("detail");
            assert_eq!(built.status(), problem.status());
            assert!(problem.status().is_client_error());
            assert_ne!(problem.problem_type(), super::super::POLICY_DENY_TYPE);
        }
        assert!("deny".parse::<KeyProblem>().is_err());
    }
}
