//! Quickstart: build a success and a failure, print their wire form, read them back and branch
//! the way an agent does.
//!
//! Run with `cargo run --release -p quickstart`.

use agent_tool_result::validate::Validator;
use agent_tool_result::{Classified, Envelope, ErrorCategory, ToolError, Warning, WarningCode};
use serde::{Deserialize, Serialize};

/// A tool's own result type: any struct that serializes to a JSON object.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FoundElement {
    automation_id: String,
    bounds: [i32; 4],
}

fn find_element(name: &str) -> Envelope<FoundElement> {
    let session = "s-4f2a";
    match name {
        "OK" => Envelope::success(FoundElement {
            automation_id: "btnOk".into(),
            bounds: [412, 310, 80, 24],
        })
        .with_session(session)
        .with_warning(Warning::new(
            WarningCode::MINIMIZED_WINDOW,
            "Target was minimized; restored before the search.",
        )),
        "Save" => Envelope::failure(ToolError::new(
            Classified::selector_matched(3).expect("3 matches are ambiguous"),
            "Selector name='Save' matched 3 elements; refine with automationId.",
        ))
        .with_session(session),
        other => Envelope::failure(ToolError::new(
            Classified::ELEMENT_NOT_FOUND,
            format!("No element named '{other}'."),
        ))
        .with_session(session),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let validator = Validator::shared();
    for name in ["OK", "Save", "Cancel"] {
        let wire = find_element(name).to_json()?;
        println!("find_element({name:?}) -> {wire}");

        // Any producer's output can be checked against the contract...
        let report = validator.validate(&serde_json::from_str(&wire)?);
        assert!(report.is_valid());

        // ...and an agent reads it back and branches on ok, then on the category.
        let envelope = Envelope::<FoundElement>::from_json(&wire)?;
        match envelope.into_result() {
            Ok(Some(found)) => {
                println!("  ok: click {} at {:?}", found.automation_id, found.bounds);
            }
            Ok(None) => println!("  ok, nothing to report"),
            Err(error) => {
                let category = error.category();
                let plan = match category {
                    ErrorCategory::AmbiguousSelector => "narrow the selector and retry",
                    ErrorCategory::NoTarget => "query what is on screen, then retry",
                    _ => category.recovery(),
                };
                println!("  failed [{category}, {}]: {plan}", category.retry_class());
            }
        }
    }
    Ok(())
}
