//! One error shape: every error type derives `Display` and `Error` (with `thiserror`), speaks
//! in lowercase without a trailing period, and names its cause through `source()` rather than
//! printing it again. And the public types cross threads.

use std::error::Error;

use agent_tool_result::artifact::{CaptureError, SessionArtifacts};
use agent_tool_result::mcp::{CallToolResult, McpErrorKind};
use agent_tool_result::{Classified, Envelope, ErrorCategory, ErrorCode, ToolError};
use serde_json::json;

fn assert_style(err: &dyn Error) {
    let text = err.to_string();
    assert!(!text.is_empty());
    assert!(!text.ends_with('.'), "{text}");
    let first = text.chars().next().unwrap();
    assert!(!first.is_uppercase(), "{text}");
    // A cause is named once: through source(), not repeated in the message.
    if let Some(source) = err.source() {
        assert!(
            !text.contains(&source.to_string()),
            "{text} repeats {source}"
        );
        assert_style(source);
    }
}

#[test]
fn errors_name_their_cause_once() {
    let call = json!({ "content": [{ "type": "text", "text": r#"{"ok":false}"# }] }).to_string();
    let err = Envelope::<serde_json::Value>::from_call_tool_result(&call).unwrap_err();
    assert_eq!(err.kind(), McpErrorKind::NotAnEnvelope);
    assert!(
        err.source().is_some(),
        "the envelope's breach is the source"
    );
    assert_style(&err);

    let root = std::env::temp_dir().join(format!("atr-errors-{}", std::process::id()));
    let artifacts = SessionArtifacts::new(&root, "s-1", std::time::SystemTime::now()).unwrap();
    let capture = json!({ "base64": "not base64!" });
    let err = artifacts.observe(capture.as_object().unwrap()).unwrap_err();
    assert!(matches!(err, CaptureError::Frame(_)));
    assert_style(&err);

    let image = CallToolResult::from_json(
        &json!({ "content": [{ "type": "image", "data": "AAAA", "mimeType": "image/png" }] })
            .to_string(),
    )
    .unwrap();
    assert!(image.content().len() == 1);

    let errors: Vec<Box<dyn Error>> = vec![
        Box::new(ErrorCode::new("Bad Code").unwrap_err()),
        Box::new("Timeout".parse::<ErrorCategory>().unwrap_err()),
        Box::new(Classified::new(ErrorCode::WINDOW_NOT_FOUND, ErrorCategory::Focus).unwrap_err()),
        Box::new(Envelope::<serde_json::Value>::from_json("{").unwrap_err()),
        Box::new(agent_tool_result::observation::ArtifactOutcome::failed("").unwrap_err()),
        Box::new(SessionArtifacts::new(&root, "../x", std::time::SystemTime::now()).unwrap_err()),
        Box::new(
            "1999-01-01"
                .parse::<agent_tool_result::mcp::McpRevision>()
                .unwrap_err(),
        ),
        Box::new(
            agent_tool_result::legacy::Migration::new()
                .migrate(&json!([]))
                .unwrap_err(),
        ),
    ];
    for err in &errors {
        assert_style(err.as_ref());
    }
}

#[test]
fn public_types_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Envelope>();
    both::<Envelope<agent_tool_result::JsonObject>>();
    both::<ToolError>();
    both::<agent_tool_result::Warning>();
    both::<agent_tool_result::Observation>();
    both::<agent_tool_result::ParseError>();
    both::<agent_tool_result::code::CategoryMismatch>();
    both::<agent_tool_result::code::InvalidCode>();
    both::<SessionArtifacts>();
    both::<CaptureError>();
    both::<agent_tool_result::frame::FrameError>();
    both::<agent_tool_result::legacy::Migration>();
    both::<CallToolResult>();
    both::<agent_tool_result::mcp::McpError>();
    both::<agent_tool_result::mcp::InvalidImageData>();
    both::<agent_tool_result::rule::Finding>();
}

#[cfg(feature = "validate")]
#[test]
fn the_validator_is_shared_across_threads() {
    fn both<T: Send + Sync>() {}
    both::<agent_tool_result::validate::Validator>();
    both::<agent_tool_result::validate::Report>();
}
