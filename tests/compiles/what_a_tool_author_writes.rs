// What a tool author writes compiles: a code of the tool's own declared with its category, a
// well-known code that brings its category, a code of two categories given one, and code
// literals that are kebab-case.
use agent_tool_result::guarantee::PolicyCode;
use agent_tool_result::{
    Classified, ErrorCategory, ErrorCode, ToolError, WarningCode, classified, error_code,
    policy_code, warning_code,
};

const CACHE_COLD: Classified = classified!("cache-cold", Timeout);
const QUOTA_SPENT: ErrorCode = error_code!("quota-spent");
const CACHE_WARMING: WarningCode = warning_code!("cache-warming");
const QUIET_HOURS: PolicyCode = policy_code!("quiet_hours");

fn main() {
    let own = ToolError::new(CACHE_COLD, "The index was still warming up.");
    let known = ToolError::new(Classified::WINDOW_NOT_FOUND, "No window titled 'Invoice'.");
    let picked = ToolError::new(classified!(ErrorCode::FRAME_ALL_BLACK, OcrBlank), "Blank.");
    let ambiguous = ToolError::new(Classified::selector_matched(3).unwrap(), "Three matched.");
    assert_eq!(own.category(), ErrorCategory::Timeout);
    assert_eq!(known.category(), ErrorCategory::NoTarget);
    assert_eq!(picked.category(), ErrorCategory::OcrBlank);
    assert_eq!(ambiguous.category(), ErrorCategory::AmbiguousSelector);
    let _ = (QUOTA_SPENT, CACHE_WARMING, QUIET_HOURS);
}
