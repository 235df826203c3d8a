//! The two closed sets of a guarantee result, each from one table: [`SettlementState`] and
//! [`PolicyDecision`], with what each means and what an agent does next.

use std::fmt;
use std::str::FromStr;

use crate::Rule;

/// The error for a name that is not in a closed set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{input}`: expected one of {expected}")]
pub struct UnknownName {
    what: &'static str,
    input: String,
    expected: &'static str,
}

/// Declares a closed enum and its table: wire name, meaning, next step.
macro_rules! closed {
    (
        $(#[$meta:meta])* $name:ident, $what:literal, $rule:ident, $expected:literal {
            $( $(#[$doc:meta])* $variant:ident = $wire:literal,
                meaning: $meaning:literal, next: $next:literal; )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$doc])* $variant, )+
        }

        impl $name {
            /// Every value, in table order.
            pub const ALL: [$name; [$($wire),+].len()] = [$($name::$variant),+];

            /// The wire name.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $wire, )+ }
            }

            /// What it means.
            #[must_use]
            pub const fn meaning(self) -> &'static str {
                match self { $( $name::$variant => $meaning, )+ }
            }

            /// What an agent does next.
            #[must_use]
            pub const fn next_step(self) -> &'static str {
                match self { $( $name::$variant => $next, )+ }
            }

            /// The value of a wire name, exactly.
            #[must_use]
            pub fn from_wire(name: &str) -> Option<Self> {
                match name {
                    $( $wire => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<Self, UnknownName> {
                $name::from_wire(s).ok_or_else(|| UnknownName {
                    what: $what,
                    input: s.chars().take(64).collect(),
                    expected: $expected,
                })
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visitor;
                impl serde::de::Visitor<'_> for Visitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str(concat!("a ", $what, " string"))
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        v.parse()
                            .map_err(|err| crate::breach::fail(Rule::$rule, err))
                    }
                }
                deserializer.deserialize_str(Visitor)
            }
        }
    };
}

closed! {
    /// Whether the command took effect: `settlement.state`. An agent reads it first.
    ///
    /// ```
    /// use agent_tool_result::guarantee::SettlementState;
    ///
    /// let state: SettlementState = "unknown".parse()?;
    /// assert_eq!(state, SettlementState::Unknown);
    /// assert!(state.next_step().starts_with("Re-query by id"));
    /// assert!("Unknown".parse::<SettlementState>().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    SettlementState, "settlement state", GuaranteeStateClosedSet,
        "not_started, committed, unknown" {
        /// Nothing took effect: no provider was called.
        NotStarted = "not_started",
            meaning: "Nothing took effect: the command stopped before the provider.",
            next: "Act on the policy decision; sending again starts fresh.";
        /// The command took effect (some or all sent, or a durable hold recorded).
        Committed = "committed",
            meaning: "The command took effect: sends were handed to the provider or durably held.",
            next: "Do not send again; follow the impact counts and the policy decision.";
        /// Not known: the process stopped between the provider and the record.
        Unknown = "unknown",
            meaning: "Whether the command took effect is not known.",
            next: "Re-query by id before anything else; never resend blindly.";
    }
}

closed! {
    /// What policy decided: `policy.decision`.
    ///
    /// ```
    /// use agent_tool_result::guarantee::PolicyDecision;
    ///
    /// for decision in PolicyDecision::ALL {
    ///     assert_eq!(decision.as_str().parse::<PolicyDecision>()?, decision);
    /// }
    /// assert_eq!(PolicyDecision::Defer.to_string(), "defer");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    PolicyDecision, "policy decision", GuaranteeDecisionClosedSet, "allow, deny, defer" {
        /// Policy let the command through.
        Allow = "allow",
            meaning: "Policy allowed the command.",
            next: "Read the settlement and the impact; nothing to wait for.";
        /// Policy refused the command, before the provider.
        Deny = "deny",
            meaning: "Policy refused the command before any provider call.",
            next: "Do not re-authenticate or retry now: honour retryAt, or change the request.";
        /// Policy held the command (or its rest) for later.
        Defer = "defer",
            meaning: "Policy held the command, or what was not sent yet, for later.",
            next: "Wait until retryAt, then look the operation up by id; do not resend.";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_say_what_is_expected() {
        for state in SettlementState::ALL {
            assert_eq!(state.as_str().parse::<SettlementState>(), Ok(state));
        }
        for decision in PolicyDecision::ALL {
            assert_eq!(decision.as_str().parse::<PolicyDecision>(), Ok(decision));
        }
        let err = "Committed".parse::<SettlementState>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown settlement state `Committed`: expected one of not_started, committed, unknown"
        );
    }
}
