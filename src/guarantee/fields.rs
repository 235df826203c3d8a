//! The tool's own fields of a guarantee result: written at the top level beside the
//! contract's, so they may not take the contract's names, nor (to ride in a policy deny's
//! problem on every transport) a problem's.

use serde::Serialize;
use serde_json::Value;

use super::invariant::InvariantError;
use crate::JsonObject;
use crate::breach::Breach;

/// The contract's top-level fields, which the tool's own fields may not use.
pub(crate) const CONTRACT_FIELDS: &[&str] = &[
    "schemaVersion",
    "settlement",
    "policy",
    "impact",
    "recovery",
];

/// The members of an RFC 9457 problem, which a policy deny's 422 problem takes for itself:
/// a tool's own field of one of these names could not ride in it, so none may be built.
pub(crate) const PROBLEM_MEMBERS: &[&str] = &["type", "title", "status", "detail", "instance"];

/// Whether `key` is a problem member's name, which no tool field may take.
pub(crate) fn is_problem_member(key: &str) -> bool {
    PROBLEM_MEMBERS.contains(&key)
}

/// Checks that `fields` serialize to an object naming none of the contract's fields and none
/// of a problem's members.
pub(crate) fn check_fields<U: Serialize>(fields: &U) -> Result<JsonObject, InvariantError> {
    let problem = |problem: &str| InvariantError::of(Breach::ToolFields { problem });
    match serde_json::to_value(fields) {
        Ok(Value::Object(object)) => {
            if let Some(key) = object
                .keys()
                .find(|k| CONTRACT_FIELDS.contains(&k.as_str()))
            {
                return Err(problem(&format!("use the contract's field name `{key}`")));
            }
            match object.keys().find(|k| is_problem_member(k)) {
                Some(key) => Err(InvariantError::of(Breach::ProblemMemberField { key })),
                None => Ok(object),
            }
        }
        Ok(_) => Err(problem("do not serialize to a JSON object")),
        Err(err) => Err(problem(&format!("do not serialize: {err}"))),
    }
}
