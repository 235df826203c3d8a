// Codes that are not kebab-case name themselves in the error, in a `const` or not.
use agent_tool_result::{Classified, ErrorCode, classified, error_code, policy_code, warning_code};

const CACHE_COLD: ErrorCode = error_code!("Cache Cold");
const QUOTA: Classified = classified!("quota_spent", Internal);

fn main() {
    let _ = (CACHE_COLD, QUOTA);
    let _ = warning_code!("tree--clipped");
    let _ = policy_code!("Quiet Hours");
}
