use agent_tool_result::{ErrorCategory, ErrorCode, KnownCode, WarningCode};

const CACHE_COLD: ErrorCode = ErrorCode::from_static("cache-cold");
const DPI_SCALED: WarningCode = WarningCode::from_static("dpi-scaled-150");
const QUOTA: KnownCode = KnownCode::from_static("quota-exceeded", ErrorCategory::InvalidArgument);

fn main() {
    assert_eq!(CACHE_COLD.as_str(), "cache-cold");
    assert_eq!(DPI_SCALED.as_str(), "dpi-scaled-150");
    assert_eq!(QUOTA.category(), ErrorCategory::InvalidArgument);
}
