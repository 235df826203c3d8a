// A bare well-known code of two categories, passed where a code and its category belong.
use agent_tool_result::{ErrorCode, ToolError};

fn main() {
    let _ = ToolError::new(ErrorCode::FRAME_UNIFORM, "Nothing to read.");
}
