//! The schema's rule annotations: `$comment: "rule: <name>"` on the locations that enforce
//! one named rule, and the findings of errors found there.

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::lints::guarantee_message;
use crate::Rule;
use crate::breach::Breach;
use crate::pointer::push_token;
use crate::rule::Finding;

/// The finding of a schema error at a location annotated with `rule`, when the rule's own
/// words say it better than the keyword's; `false` to describe it by its keyword.
pub(super) fn annotated_finding(
    rule: Rule,
    error: &jsonschema::ValidationError<'_>,
    out: &mut Vec<Finding>,
) -> bool {
    let pointer = error.instance_path().as_str();
    if rule == Rule::GuaranteeFieldsNotProblemMembers
        && let ValidationErrorKind::PropertyNames { error: name } = error.kind()
        && let Some(key) = name.instance().as_str()
    {
        let mut at = pointer.to_owned();
        push_token(&mut at, key);
        let breach = Breach::ProblemMemberField { key };
        out.push(Finding::new(breach.rule(), at, breach.to_string()));
        return true;
    }
    let breach = match rule {
        Rule::FailureRequiresError => Some(Breach::FailureWithoutError),
        Rule::SuccessForbidsError => Some(Breach::SuccessWithError),
        Rule::FailureForbidsResult => Some(Breach::FailureWithResult),
        Rule::NoBase64InObservation => Some(Breach::Base64InObservation),
        Rule::GuaranteeDenyBeforeProvider => Some(Breach::DenyAfterProvider),
        Rule::GuaranteeDecisionNeedsCode => Some(Breach::DecisionWithoutCode),
        Rule::GuaranteeRetryAtOnDenyOrDefer => Some(Breach::RetryAtOnAllow),
        Rule::GuaranteeHoldIsCommitted => Some(Breach::HoldNotCommitted),
        Rule::GuaranteeNotStartedCommitsNothing => Some(Breach::NotStartedCommitted),
        Rule::CaptureArtifactExclusive => {
            let instance = error.instance();
            let both =
                instance.get("artifact").is_some() && instance.get("artifactError").is_some();
            Some(if both {
                Breach::BothArtifactFields
            } else {
                Breach::NoArtifactField
            })
        }
        _ => None,
    };
    if let Some(breach) = breach {
        let at = match breach {
            // These two are found at the envelope and name their own member.
            Breach::SuccessWithError | Breach::FailureWithResult => breach.at(),
            // A guarantee result's invariants are about the whole result.
            Breach::DenyAfterProvider
            | Breach::DecisionWithoutCode
            | Breach::RetryAtOnAllow
            | Breach::HoldNotCommitted
            | Breach::NotStartedCommitted => String::new(),
            Breach::Base64InObservation
                if matches!(error.kind(), ValidationErrorKind::PropertyNames { .. }) =>
            {
                format!("{pointer}/base64")
            }
            _ => pointer.to_owned(),
        };
        let finding = Finding::new(breach.rule(), at, breach.to_string());
        if !out.contains(&finding) {
            out.push(finding);
        }
        return true;
    }
    // A value outside a closed set or a form, where the schema names the rule.
    if matches!(
        error.kind(),
        ValidationErrorKind::Enum { .. }
            | ValidationErrorKind::Pattern { .. }
            | ValidationErrorKind::Constant { .. }
    ) && let Some(message) = self::guarantee_message(rule, error.instance())
    {
        out.push(Finding::new(rule, pointer, message));
        return true;
    }

    false
}

/// Collects every schema location whose `$comment` reads `rule: <name>`.
pub(super) fn annotated_rules(
    schema: &Value,
    location: &mut String,
    out: &mut Vec<(String, Rule)>,
) {
    match schema {
        Value::Object(object) => {
            let rule = object
                .get("$comment")
                .and_then(Value::as_str)
                .and_then(|c| c.strip_prefix("rule: "))
                .and_then(|name| name.parse().ok());
            if let Some(rule) = rule {
                out.push((location.clone(), rule));
            }
            for (key, value) in object {
                let len = location.len();
                push_token(location, key);
                annotated_rules(value, location, out);
                location.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = location.len();
                push_token(location, &i.to_string());
                annotated_rules(item, location, out);
                location.truncate(len);
            }
        }
        _ => {}
    }
}
