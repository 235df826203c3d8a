//! `atr explain [NAME]`: what a name of either contract means and what to do about it: an
//! error category or code, a warning code, a settlement state or policy decision, a policy
//! code, a refusal kind or problem type, or a rule `atr validate` reports.

use agent_tool_result::Rule;
use agent_tool_result::category::RetryClass;
use agent_tool_result::guarantee::{
    POLICY_DENY_TYPE, PolicyCode, PolicyDecision, RefusalKind, SettlementState, is_policy_code,
};
use agent_tool_result::{ErrorCategory, ErrorCode, WarningCode};

use crate::commands::{Failure, print};

/// `atr explain [NAME]`.
pub fn explain(name: Option<&str>) -> Result<(), Failure> {
    let mut text = String::new();
    let Some(name) = name else {
        return print(&overview());
    };
    let warning = WarningCode::WELL_KNOWN.iter().any(|w| w == name);
    let warning_text = |text: &mut String| {
        line(
            text,
            format_args!(
                "{name}: a warning code. The call went on; something was adjusted, degraded or \
                 assumed."
            ),
        );
    };
    if let Some(text) = explain_guarantee_name(name)
        .or_else(|| explain_rule(name))
        .or_else(|| explain_refusal(name))
        .or_else(|| explain_policy_code(name))
    {
        return print(&text);
    }
    if let Some(category) = ErrorCategory::from_wire(name) {
        text.push_str(&describe_category(category));
        if warning {
            // `capture-blank` is both: a category, and the warning a blank region capture earns.
            text.push('\n');
            warning_text(&mut text);
        }
        return print(&text);
    }
    let code: ErrorCode = name.parse().map_err(|err| {
        let hint = name
            .parse::<ErrorCategory>()
            .err()
            .and_then(|e| e.suggestion())
            .map(|c| format!(" (did you mean the category `{c}`?)"))
            .unwrap_or_default();
        Failure::Usage(format!(
            "`{name}` names nothing atr knows (a category, an error, warning or policy code, a \
             settlement state, a decision, a refusal, a problem type or a rule): {err}{hint}"
        ))
    })?;
    let categories = code.categories();
    if categories.len() == ErrorCategory::ALL.len() {
        line(
            &mut text,
            format_args!(
                "{code}: an error code that keeps whatever category the failure named \
                 (internal when none). Branch on the category."
            ),
        );
    } else if !categories.is_empty() {
        let matched = code
            .selector_match_count()
            .map(|n| format!(" (the selector matched {n} candidates)"))
            .unwrap_or_default();
        let names: Vec<&str> = categories.iter().map(|c| c.as_str()).collect();
        let kind = if names.len() == 1 {
            "category"
        } else {
            "categories"
        };
        line(
            &mut text,
            format_args!(
                "{code}: an error code of {kind} {}{matched}.\n",
                names.join(" or ")
            ),
        );
        for category in categories {
            text.push_str(&describe_category(*category));
        }
    } else if warning {
        warning_text(&mut text);
    } else if let Some(count) = code.selector_match_count() {
        // `selector-matched-0` and `-1` parse, and `atr validate` lints them: say what the
        // lint says rather than call them unknown.
        line(
            &mut text,
            format_args!(
                "{code}: a selector-matched-N code with N = {count}, which `atr validate` lints \
                 ({}): {}. {count} {} is not ambiguous: use a no-target code such as \
                 element-not-found for none, and succeed for one.",
                Rule::SelectorMatchCount,
                Rule::SelectorMatchCount.summary(),
                if count == 1 { "match" } else { "matches" },
            ),
        );
    } else {
        line(
            &mut text,
            format_args!(
                "{code}: not a well-known code. Codes are open: an agent that does not know one \
                 falls back to the error's category."
            ),
        );
    }
    print(&text)
}

/// Every category with its recovery, the retry classes, and the guarantee states and
/// decisions.
fn overview() -> String {
    let mut text = String::new();
    for category in ErrorCategory::ALL {
        text.push_str(&describe_category(category));
        text.push('\n');
    }
    text.push_str("retry classes:\n");
    for class in RetryClass::ALL {
        line(
            &mut text,
            format_args!("  {:<24} {}", class.as_str(), class.description()),
        );
    }
    text.push_str("guarantee results: settlement states, then policy decisions:\n");
    for (name, next) in SettlementState::ALL
        .iter()
        .map(|s| (s.as_str(), s.next_step()))
        .chain(
            PolicyDecision::ALL
                .iter()
                .map(|d| (d.as_str(), d.next_step())),
        )
    {
        line(&mut text, format_args!("  {name:<24} {next}"));
    }
    text.push_str("well-known policy codes (open: an unknown one falls back to its decision):\n");
    for code in PolicyCode::WELL_KNOWN {
        if let Some((decision, _)) = code.describe() {
            line(
                &mut text,
                format_args!("  {:<24} {decision}", code.as_str()),
            );
        }
    }
    text.push_str("refusals of a guarantee tool (nothing ran), with their HTTP status:\n");
    for kind in RefusalKind::ALL {
        line(
            &mut text,
            format_args!(
                "  {:<24} {} {}",
                kind.as_str(),
                kind.status(),
                kind.next_step()
            ),
        );
    }
    text.push_str(
        "atr explain NAME says more of any of these, of a code, of a problem type, and of a \
         rule atr validate reports.\n",
    );
    text
}

/// A guarantee result's settlement state or policy decision, explained; `None` for any other
/// name.
fn explain_guarantee_name(name: &str) -> Option<String> {
    let (what, meaning, next) = if let Some(state) = SettlementState::from_wire(name) {
        ("a settlement state", state.meaning(), state.next_step())
    } else {
        let decision = PolicyDecision::from_wire(name)?;
        (
            "a policy decision",
            decision.meaning(),
            decision.next_step(),
        )
    };
    let mut text = String::new();
    line(
        &mut text,
        format_args!("{name}: {what} of a guarantee result"),
    );
    line(&mut text, format_args!("  means: {meaning}"));
    line(&mut text, format_args!("  next:  {next}"));
    Some(text)
}

/// Appends one formatted line.
fn line(text: &mut String, args: std::fmt::Arguments<'_>) {
    use std::fmt::Write;
    writeln!(text, "{args}").expect("writing to a String cannot fail");
}

fn describe_category(category: ErrorCategory) -> String {
    let class = category.retry_class();
    format!(
        "{}\n  when:     {}\n  recovery: {}\n  retry:    {} ({})\n",
        category.as_str(),
        category.meaning(),
        category.recovery(),
        class.as_str(),
        class.description()
    )
}

/// A rule `atr validate` reports, explained; `None` for any other name.
fn explain_rule(name: &str) -> Option<String> {
    let rule: Rule = name.parse().ok()?;
    let mut text = String::new();
    line(
        &mut text,
        format_args!(
            "{rule}: a rule of the contract, checked by atr validate ({})",
            rule.severity()
        ),
    );
    line(&mut text, format_args!("  rule:   {}", rule.summary()));
    line(
        &mut text,
        format_args!("  breach: {}", rule.description().replace('`', "")),
    );
    line(&mut text, format_args!("  see:    {}", rule.help_url()));
    Some(text)
}

/// A refusal of a guarantee tool, by its kind's name or its problem type, or the policy deny's
/// problem type, explained; `None` for any other name. Two kinds share `about:blank`, told
/// apart by their status.
fn explain_refusal(name: &str) -> Option<String> {
    let mut text = String::new();
    if name == POLICY_DENY_TYPE {
        line(
            &mut text,
            format_args!(
                "{name}: the problem type of a guarantee result's deny over REST (422), the \
                 result's members beside the problem's"
            ),
        );
        let next = PolicyDecision::Deny.next_step();
        line(&mut text, format_args!("  next:  {next}"));
        return Some(text);
    }
    let kinds: Vec<RefusalKind> = RefusalKind::ALL
        .into_iter()
        .filter(|kind| kind.as_str() == name || kind.problem_type() == name)
        .collect();
    for kind in &kinds {
        line(
            &mut text,
            format_args!(
                "{}: a refusal of a guarantee tool: nothing ran (RFC 9457 problem, status {})",
                kind.as_str(),
                kind.status()
            ),
        );
        line(&mut text, format_args!("  type:  {}", kind.problem_type()));
        line(&mut text, format_args!("  title: {}", kind.title()));
        let class = kind.retry_class();
        line(
            &mut text,
            format_args!("  retry: {} ({})", class.as_str(), class.description()),
        );
        line(&mut text, format_args!("  next:  {}", kind.next_step()));
    }
    (!kinds.is_empty()).then_some(text)
}

/// A policy code, well-known or not, explained; `None` for a name that is no policy code, or
/// that reads as an error code too (kebab-case and not well-known: the error code's
/// explanation stands).
fn explain_policy_code(name: &str) -> Option<String> {
    let code = PolicyCode::new(name.to_owned()).ok()?;
    let mut text = String::new();
    if let Some((decision, meaning)) = code.describe() {
        line(
            &mut text,
            format_args!("{code}: a policy code of a guarantee result, under a {decision}"),
        );
        line(
            &mut text,
            format_args!("  means: {}", meaning.replace('`', "")),
        );
        line(&mut text, format_args!("  next:  {}", decision.next_step()));
        return Some(text);
    }
    if !is_policy_code(name) || !name.contains('_') {
        return None;
    }
    line(
        &mut text,
        format_args!(
            "{code}: a policy code, not a well-known one. Policy codes are open: an agent that \
             does not know one acts on the policy decision (deny: do not retry as is; defer: \
             wait until retryAt)."
        ),
    );
    Some(text)
}
