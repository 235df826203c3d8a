//! Breaches of the contract's rules, as data: each [`Breach`] knows its [`Rule`], where it sits
//! relative to the object that found it, and its message. This is the one place that maps a
//! rule to its words; the typed reader and the validator both report through it.
//!
//! serde's error type carries only a message, so the typed reader records the rule of the
//! breach it raises in a per-thread slot beside the error ([`raise`], [`tag`]); whoever turns
//! the error into a [`ParseError`](crate::ParseError) takes it back ([`take`]). The innermost
//! breach wins: an outer reader that sees an inner error pass by only tags it when nothing more
//! specific was recorded. Nothing is ever recovered from message text.

use std::cell::RefCell;
use std::fmt;

use serde::de;

use crate::Rule;
use crate::pointer::push_token;

/// An object the contract defines and closes (`additionalProperties: false`), as data: each
/// object's module declares its own (with its field enum, `object::fields!`), so this module
/// knows no object and every object's reader can raise a breach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Object {
    noun: &'static str,
    fields: &'static [&'static str],
    required: &'static [&'static str],
}

impl Object {
    /// The object called `noun` (with its article, for messages), with its fields and the
    /// required ones among them, each in wire order.
    pub(crate) const fn new(
        noun: &'static str,
        fields: &'static [&'static str],
        required: &'static [&'static str],
    ) -> Object {
        Object {
            noun,
            fields,
            required,
        }
    }

    /// The object with its article, for messages.
    pub(crate) const fn noun(self) -> &'static str {
        self.noun
    }

    /// The fields the object allows, in wire order.
    pub(crate) const fn fields(self) -> &'static [&'static str] {
        self.fields
    }

    /// The fields the object requires, in wire order.
    pub(crate) const fn required(self) -> &'static [&'static str] {
        self.required
    }
}

/// One broken rule, with what its message needs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Breach<'a> {
    /// `ok` is false and `error` is missing.
    FailureWithoutError,
    /// `ok` is true and `error` is present.
    SuccessWithError,
    /// `ok` is false and `result` is not null.
    FailureWithResult,
    /// `lastObservation` holds base64 image data.
    Base64InObservation,
    /// A capture summary has both `artifact` and `artifactError`.
    BothArtifactFields,
    /// A capture summary has neither `artifact` nor `artifactError`.
    NoArtifactField,
    /// A key that `object` does not define.
    UnknownField { object: Object, key: &'a str },
    /// A required field of `object` is missing.
    MissingField { object: Object, field: &'a str },
    /// A key read twice in one object.
    DuplicateKey { key: &'a str },
    /// A field holds a value of the wrong type or range.
    WrongType { expected: &'a str, found: &'a str },
    /// The document nests deeper than readers follow.
    TooDeep,
    /// The document is the older `CommandResult` shape.
    #[cfg(feature = "validate")]
    LegacyCommandResult,
    /// The text starts with a byte order mark.
    ByteOrderMark,
    /// A guarantee result's `schemaVersion` is not 1.
    SchemaVersion,
    /// A deny after the provider.
    DenyAfterProvider,
    /// A deny or a defer without a code.
    DecisionWithoutCode,
    /// `retryAt` on an allow.
    RetryAtOnAllow,
    /// `retryAt` outside the years RFC 3339 writes.
    RetryAtOutOfRange,
    /// A partial send with a hold that is not committed.
    HoldNotCommitted,
    /// `not_started` with committed sends.
    NotStartedCommitted,
    /// Counts over `requested`.
    ImpactOverRequested,
    /// A tool's own field with a contract field's name, or fields that are not an object.
    ToolFields { problem: &'a str },
    /// A tool's own field with the name of a problem member.
    ProblemMemberField { key: &'a str },
}

impl Breach<'_> {
    /// The rule broken.
    pub(crate) const fn rule(self) -> Rule {
        match self {
            Breach::FailureWithoutError => Rule::FailureRequiresError,
            Breach::SuccessWithError => Rule::SuccessForbidsError,
            Breach::FailureWithResult => Rule::FailureForbidsResult,
            Breach::Base64InObservation => Rule::NoBase64InObservation,
            Breach::BothArtifactFields | Breach::NoArtifactField => Rule::CaptureArtifactExclusive,
            Breach::UnknownField { .. } => Rule::NoUnknownFields,
            Breach::MissingField { .. } => Rule::RequiredField,
            Breach::DuplicateKey { .. } => Rule::NoDuplicateKeys,
            Breach::WrongType { .. } => Rule::FieldType,
            Breach::TooDeep => Rule::NestingLimit,
            #[cfg(feature = "validate")]
            Breach::LegacyCommandResult => Rule::NotLegacyCommandResult,
            Breach::ByteOrderMark => Rule::WellFormedJson,
            Breach::SchemaVersion => Rule::GuaranteeSchemaVersion,
            Breach::DenyAfterProvider => Rule::GuaranteeDenyBeforeProvider,
            Breach::DecisionWithoutCode => Rule::GuaranteeDecisionNeedsCode,
            Breach::RetryAtOnAllow => Rule::GuaranteeRetryAtOnDenyOrDefer,
            Breach::RetryAtOutOfRange => Rule::GuaranteeRetryAtForm,
            Breach::HoldNotCommitted => Rule::GuaranteeHoldIsCommitted,
            Breach::NotStartedCommitted => Rule::GuaranteeNotStartedCommitsNothing,
            Breach::ImpactOverRequested => Rule::GuaranteeImpactWithinRequested,
            Breach::ToolFields { .. } => Rule::ToolResultType,
            Breach::ProblemMemberField { .. } => Rule::GuaranteeFieldsNotProblemMembers,
        }
    }

    /// Where the breach sits, as a JSON Pointer relative to the path a reader has recorded
    /// when it is raised (an unknown key is on that path already; a repeated one is not).
    pub(crate) fn at(self) -> String {
        let mut at = String::new();
        match self {
            Breach::SuccessWithError => at.push_str("/error"),
            Breach::FailureWithResult => at.push_str("/result"),
            Breach::DuplicateKey { key } | Breach::ProblemMemberField { key } => {
                push_token(&mut at, key);
            }
            _ => {}
        }
        at
    }
}

impl fmt::Display for Breach<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Breach::FailureWithoutError => f.write_str(
                "ok is false but error is missing: a failure must carry an error object",
            ),
            Breach::SuccessWithError => {
                f.write_str("ok is true but error is present: a success must not carry an error")
            }
            Breach::FailureWithResult => f.write_str(
                "ok is false but result is not null: a failure must omit result or set it to null",
            ),
            Breach::Base64InObservation => f.write_str(
                "lastObservation must not hold base64 image data: summarize the capture and \
                 write its PNG to the session's artifacts",
            ),
            Breach::BothArtifactFields => {
                f.write_str("a capture summary carries artifact or artifactError, not both")
            }
            Breach::NoArtifactField => f.write_str(
                "a capture summary needs artifact (where its PNG was written) or artifactError \
                 (why it was not)",
            ),
            Breach::UnknownField { object, key } => {
                write!(f, "unknown field `{key}`: {} has only ", object.noun())?;
                write_list(f, object.fields())
            }
            Breach::MissingField { object, field } => {
                write!(f, "missing field `{field}`: {} requires ", object.noun())?;
                write_list(f, object.required())
            }
            Breach::DuplicateKey { key } => write!(f, "duplicate field `{key}`"),
            Breach::WrongType { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            #[cfg(feature = "validate")]
            Breach::LegacyCommandResult => f.write_str(
                "this is the older CommandResult shape ({ success, command, error, data }), not \
                 an envelope: convert it with `atr migrate` (or `Migration` in code)",
            ),
            Breach::SchemaVersion => f.write_str("a guarantee result's schemaVersion is 1"),
            Breach::DenyAfterProvider => f.write_str(
                "a deny happens before the provider: its settlement is not_started and it \
                 commits nothing",
            ),
            Breach::DecisionWithoutCode => f.write_str("a deny or a defer names its policy.code"),
            Breach::RetryAtOnAllow => {
                f.write_str("policy.retryAt rides only on a deny or a defer, not on an allow")
            }
            Breach::RetryAtOutOfRange => f.write_str(
                "retryAt falls outside the years 0000 to 9999, which RFC 3339 writes and every \
                 reader reads back",
            ),
            Breach::HoldNotCommitted => f.write_str(
                "a defer that committed sends (a partial send with a durable hold) has a \
                 committed settlement",
            ),
            Breach::NotStartedCommitted => {
                f.write_str("a not_started settlement commits nothing (impact.committed is 0)")
            }
            Breach::ImpactOverRequested => f.write_str(
                "impact counts more recipients (committed + deferred + denied + failed) than \
                 requested",
            ),
            Breach::ToolFields { problem } => write!(f, "the tool's own fields {problem}"),
            Breach::ProblemMemberField { key } => write!(
                f,
                "the tool's own field `{key}` takes the name of a problem member (RFC 9457), \
                 which a deny's 422 problem keeps for itself: the field could not ride in it"
            ),
            Breach::ByteOrderMark => f.write_str(
                "the document starts with a byte order mark (U+FEFF), which JSON text must not \
                 (RFC 8259 section 8.1): save it as UTF-8 without a BOM",
            ),
            Breach::TooDeep => write!(
                f,
                "the document nests deeper than {} levels",
                crate::rule::MAX_DEPTH
            ),
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, names: &[&str]) -> fmt::Result {
    for (i, name) in names.iter().enumerate() {
        match i {
            0 => {}
            _ if i + 1 == names.len() => f.write_str(" and ")?,
            _ => f.write_str(", ")?,
        }
        f.write_str(name)?;
    }
    Ok(())
}

/// The rule and relative place of the breach behind an error on its way out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pending {
    pub(crate) rule: Rule,
    pub(crate) at: String,
}

thread_local! {
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

fn record(rule: Rule, at: String) {
    PENDING.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            *slot = Some(Pending { rule, at });
        }
    });
}

/// Records `breach` and returns the serde error that carries its message.
pub(crate) fn raise<E: de::Error>(breach: Breach<'_>) -> E {
    record(breach.rule(), breach.at());
    E::custom(breach)
}

/// Records `rule` for an error raised below (by serde or a primitive) unless a more specific
/// breach was recorded already.
pub(crate) fn tag<E>(rule: Rule, err: E) -> E {
    record(rule, String::new());
    err
}

/// Records `rule` for an error raised below, replacing whatever was recorded: for errors
/// inside the tool's own result type, which are the tool's, not the contract's.
pub(crate) fn retag<E>(rule: Rule, err: E) -> E {
    PENDING.with(|slot| {
        *slot.borrow_mut() = Some(Pending {
            rule,
            at: String::new(),
        });
    });
    err
}

/// Takes the recorded breach, leaving the slot empty.
pub(crate) fn take() -> Option<Pending> {
    PENDING.with(|slot| slot.borrow_mut().take())
}

/// Forgets any recorded breach: before a read whose errors will be explained, and after a read
/// whose error was handled.
pub(crate) fn clear() {
    PENDING.with(|slot| *slot.borrow_mut() = None);
}

/// Records a breach of `rule` found at `at` (relative to the reader that raises it) whose
/// message another type owns (a code's or a category's parse error, a nested read's).
pub(crate) fn raise_at<E: de::Error>(rule: Rule, at: String, message: impl fmt::Display) -> E {
    record(rule, at);
    E::custom(message)
}

/// [`raise_at`] the value being read.
pub(crate) fn fail<E: de::Error>(rule: Rule, message: impl fmt::Display) -> E {
    raise_at(rule, String::new(), message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_breach_wins_and_retag_overrides() {
        clear();
        let _: serde_json::Error = raise(Breach::DuplicateKey { key: "a/b" });
        let () = tag(Rule::FieldType, ());
        assert_eq!(
            take(),
            Some(Pending {
                rule: Rule::NoDuplicateKeys,
                at: "/a~1b".into()
            })
        );
        let () = tag(Rule::FieldType, ());
        let () = retag(Rule::ToolResultType, ());
        assert_eq!(take().map(|p| p.rule), Some(Rule::ToolResultType));
        assert_eq!(take(), None);
    }

    #[test]
    fn messages_name_the_object_and_its_fields() {
        const WARNING: Object = Object::new("a warning", &["code", "detail"], &["code"]);
        let unknown = Breach::UnknownField {
            object: WARNING,
            key: "x",
        };
        assert_eq!(
            unknown.to_string(),
            "unknown field `x`: a warning has only code and detail"
        );
        let missing = Breach::MissingField {
            object: WARNING,
            field: "code",
        };
        assert_eq!(
            missing.to_string(),
            "missing field `code`: a warning requires code"
        );
        for rule_breach in [Breach::TooDeep, Breach::NoArtifactField] {
            let text = rule_breach.to_string();
            assert!(text.starts_with(|c: char| c.is_lowercase()), "{text}");
            assert!(!text.ends_with('.'));
        }
    }
}
