//! What the schema cannot say: the contract lints, the legacy shape, and a guarantee
//! result's counts and messages.

use serde_json::Value;

use crate::breach::Breach;
use crate::rule::Finding;
use crate::{ErrorCategory, ErrorCode, Rule};

/// The typed reader's message for a value outside one of a guarantee result's closed sets or
/// forms; `None` for any other rule.
pub(super) fn guarantee_message(rule: Rule, instance: &Value) -> Option<String> {
    use crate::guarantee::{PolicyCode, PolicyDecision, SettlementState};
    let text = instance.as_str().unwrap_or_default();
    let message = match rule {
        Rule::GuaranteeSchemaVersion => format!("{}, not {instance}", Breach::SchemaVersion),
        Rule::GuaranteeStateClosedSet => text.parse::<SettlementState>().err()?.to_string(),
        Rule::GuaranteeDecisionClosedSet => text.parse::<PolicyDecision>().err()?.to_string(),
        Rule::GuaranteePolicyCodeForm => PolicyCode::new(text.to_owned()).err()?.to_string(),
        Rule::GuaranteeRetryAtForm => {
            let shown: String = text.chars().take(64).collect();
            format!("retryAt `{shown}` is not an RFC 3339 instant in UTC (2026-12-01T09:00:00Z)")
        }
        _ => return None,
    };
    Some(message)
}

/// Whether `document` is the older `CommandResult` shape: `success` and `command`, no `ok`.
pub(super) fn is_legacy_command_result(document: &Value) -> bool {
    document.as_object().is_some_and(|object| {
        object.get("success").is_some_and(Value::is_boolean)
            && object.contains_key("command")
            && !object.contains_key("ok")
    })
}

/// Whether a guarantee result's counts exceed `requested` (an invariant), and whether a
/// committed one leaves requested recipients unaccounted for (a lint).
pub(super) fn guarantee_counts(document: &Value) -> (bool, bool) {
    let Some(impact) = document.get("impact") else {
        return (false, false);
    };
    let count = |name: &str| impact.get(name).and_then(Value::as_f64);
    let Some(requested) = count("requested") else {
        return (false, false);
    };
    let accounted: f64 = ["committed", "deferred", "denied", "failed"]
        .iter()
        .filter_map(|name| count(name))
        .sum();
    let committed = document
        .pointer("/settlement/state")
        .and_then(Value::as_str)
        == Some("committed");
    (accounted > requested, committed && accounted < requested)
}

pub(super) fn unaccounted_lint() -> Finding {
    Finding::new(
        Rule::GuaranteeImpactAccounted,
        "/impact",
        "the counts leave requested recipients unaccounted for under a committed settlement",
    )
}

/// The contract lints: rules the schema cannot express.
pub(super) fn lints(document: &Value) -> Vec<Finding> {
    let Some(error) = document.get("error") else {
        return Vec::new();
    };
    let Some(code) = error
        .get("code")
        .and_then(Value::as_str)
        .and_then(|c| c.parse::<ErrorCode>().ok())
    else {
        return Vec::new();
    };
    let category = error
        .get("category")
        .and_then(Value::as_str)
        .and_then(ErrorCategory::from_wire);
    lints_for(&code, category)
}

/// The lints of an error's code under its category.
pub(super) fn lints_for(code: &ErrorCode, category: Option<ErrorCategory>) -> Vec<Finding> {
    let mut lints = Vec::new();
    let known = code.categories();
    if let Some(category) = category
        && !known.is_empty()
        && !known.contains(&category)
    {
        let rides = known
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(" or ");
        lints.push(Finding::new(
            Rule::CodeCategoryMismatch,
            "/error/category",
            format!("code `{code}` rides under {rides}, not `{category}`"),
        ));
    }
    if let Some(count) = code.selector_match_count().filter(|&n| n < 2) {
        lints.push(Finding::new(
            Rule::SelectorMatchCount,
            "/error/code",
            format!(
                "`{code}` reports {count} match(es), which is not ambiguous: \
                 use a no-target code for none, and succeed for one"
            ),
        ));
    }
    lints
}
