// A well-known code under a category it never rides under.
use agent_tool_result::{ErrorCode, classified};

fn main() {
    let _ = classified!("window-not-found", Timeout);
    let _ = classified!(ErrorCode::FRAME_ALL_BLACK, Focus);
    let _ = classified!("selector-matched-3", NoTarget);
}
