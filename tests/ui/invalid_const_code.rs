use agent_tool_result::{ErrorCode, WarningCode};

const NOT_KEBAB: ErrorCode = ErrorCode::from_static("Element_Not_Found");
const EMPTY: WarningCode = WarningCode::from_static("");
const DOUBLE_HYPHEN: ErrorCode = ErrorCode::from_static("window--closed");

fn main() {
    let _ = (NOT_KEBAB, EMPTY, DOUBLE_HYPHEN);
}
