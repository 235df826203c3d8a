// A tool's own code brings no category: the constructor asks for one.
use agent_tool_result::{ToolError, error_code};

fn main() {
    let _ = ToolError::new(error_code!("cache-cold"), "The index was still warming up.");
}
