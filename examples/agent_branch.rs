//! An agent reading `tools/call` results: branch on `ok`, then exhaustively on
//! `error.category`, taking the recovery each calls for.
//!
//! Run with `cargo run --example agent_branch`.

use agent_tool_result::mcp::CallToolResult;
use agent_tool_result::{Classified, Envelope, ErrorCategory, ToolError};
use serde_json::{Value, json};

/// What the agent does next.
enum Next {
    Continue(Value),
    RetryLater,
    Reobserve(&'static str),
    ChangeRequest(&'static str),
    AskOperator(String),
}

/// The agent's policy: every category handled, so a new one would not compile unnoticed.
fn decide(result_json: &str) -> Next {
    let envelope = match Envelope::<Value>::from_call_tool_result(result_json) {
        Ok(envelope) => envelope,
        Err(err) => return Next::AskOperator(format!("unreadable tool result: {err}")),
    };
    let error = match envelope.into_result() {
        Ok(result) => return Next::Continue(result.unwrap_or(Value::Null)),
        Err(error) => error,
    };
    match error.category() {
        ErrorCategory::Timeout | ErrorCategory::Foreground => Next::RetryLater,
        ErrorCategory::StaleElement | ErrorCategory::NoTarget => {
            Next::Reobserve("query, then find again")
        }
        ErrorCategory::CaptureBlank | ErrorCategory::OcrBlank => {
            Next::Reobserve("restore the window and capture again")
        }
        ErrorCategory::Focus => Next::Reobserve("click the control to focus it"),
        ErrorCategory::AmbiguousSelector => Next::ChangeRequest("narrow the selector"),
        ErrorCategory::InvalidArgument | ErrorCategory::OcrNoText => {
            Next::ChangeRequest("fix the arguments")
        }
        ErrorCategory::Elevation | ErrorCategory::Internal => {
            Next::AskOperator(format!("{}: {}", error.code(), error.detail()))
        }
    }
}

impl std::fmt::Display for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Next::Continue(result) => write!(f, "continue with {result}"),
            Next::RetryLater => f.write_str("wait, then retry the same call"),
            Next::Reobserve(how) => write!(f, "re-observe ({how}), then retry"),
            Next::ChangeRequest(how) => write!(f, "change the request ({how})"),
            Next::AskOperator(why) => write!(f, "ask the operator: {why}"),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let results = [
        CallToolResult::from_envelope(&Envelope::success(json!({ "automationId": "btnOk" })))?
            .to_json(),
        CallToolResult::from_envelope(&Envelope::<Value>::failure(ToolError::new(
            Classified::selector_matched(3).expect("3 matches are ambiguous"),
            "Selector title='Save' matched 3 windows.",
        )))?
        .to_json(),
        CallToolResult::from_envelope(&Envelope::<Value>::failure(ToolError::new(
            Classified::WAIT_CONDITION_TIMEOUT,
            "The dialog did not appear within 5 s.",
        )))?
        .to_json(),
        CallToolResult::from_envelope(&Envelope::<Value>::failure(ToolError::new(
            Classified::TARGET_ELEVATED,
            "The installer runs elevated.",
        )))?
        .to_json(),
        // A server that set isError wrongly: the agent does not trust the result.
        json!({ "content": [{ "type": "text", "text": "{\"ok\":true}" }], "isError": true })
            .to_string(),
    ];
    for result in results {
        println!("{}", decide(&result));
    }
    Ok(())
}
