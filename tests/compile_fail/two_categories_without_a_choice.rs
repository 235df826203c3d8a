// `frame-all-black` rides under `capture-blank` and `ocr-blank`: the tool must pick one.
use agent_tool_result::{Classified, ToolError};

fn main() {
    let _ = ToolError::new(Classified::FRAME_ALL_BLACK, "Nothing to read.");
}
