use agent_tool_result::{ErrorCategory, ErrorCode, WarningCode};

const CACHE_COLD: ErrorCode = ErrorCode::from_static("cache-cold");
const DPI_SCALED: WarningCode = WarningCode::from_static("dpi-scaled-150");
const NOT_FOUND: ErrorCode = ErrorCode::WINDOW_NOT_FOUND;

fn main() {
    assert_eq!(CACHE_COLD.as_str(), "cache-cold");
    assert_eq!(DPI_SCALED.as_str(), "dpi-scaled-150");
    assert_eq!(NOT_FOUND.category(), Some(ErrorCategory::NoTarget));
}
