use agent_tool_result::{ErrorCategory, ErrorCode, KnownCode, WarningCode};

const NOT_KEBAB: ErrorCode = ErrorCode::from_static("Element_Not_Found");
const EMPTY: WarningCode = WarningCode::from_static("");
const DOUBLE_HYPHEN: KnownCode = KnownCode::from_static("window--closed", ErrorCategory::StaleElement);

fn main() {
    let _ = (NOT_KEBAB, EMPTY, DOUBLE_HYPHEN);
}
