//! Answers the keyed-call tests give: a committed result of one effect, told apart by a field.
#![allow(dead_code)]

use agent_tool_result::JsonObject;
use agent_tool_result::guarantee::{Answer, GuaranteeResult};

/// A committed result of one effect, with `field` set to `value`, so two calls' answers
/// differ.
pub fn committed_with(field: &str, value: impl Into<serde_json::Value>) -> Answer {
    let mut fields = JsonObject::new();
    fields.insert(field.into(), value.into());
    GuaranteeResult::committed_one()
        .with_fields(fields)
        .expect("a field that is not the result's own")
        .into()
}
