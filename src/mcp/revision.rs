//! [`McpRevision`]: the MCP protocol revisions a result can be shaped for.

use std::fmt;
use std::str::FromStr;

/// Declares [`McpRevision`]: one row per revision, oldest first.
macro_rules! revisions {
    ($( $(#[$doc:meta])* $variant:ident = $wire:literal; )+) => {
        /// An MCP protocol revision, as negotiated in `initialize`.
        ///
        /// ```
        /// use agent_tool_result::mcp::McpRevision;
        ///
        /// let revision: McpRevision = "2025-06-18".parse()?;
        /// assert!(revision.has_structured_content());
        /// assert!(!revision.has_result_type());
        /// assert_eq!(McpRevision::LATEST.as_str(), "2026-07-28");
        /// # Ok::<(), agent_tool_result::mcp::ParseRevisionError>(())
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum McpRevision {
            $( $(#[$doc])* $variant, )+
        }

        impl McpRevision {
            /// Every revision, oldest first.
            pub const ALL: [McpRevision; [$($wire),+].len()] = [$(McpRevision::$variant),+];

            /// The revision's date string.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( McpRevision::$variant => $wire, )+ }
            }
        }

        impl FromStr for McpRevision {
            type Err = ParseRevisionError;

            fn from_str(s: &str) -> Result<Self, ParseRevisionError> {
                match s {
                    $( $wire => Ok(McpRevision::$variant), )+
                    _ => Err(ParseRevisionError(s.chars().take(32).collect())),
                }
            }
        }
    };
}

revisions! {
    /// 2024-11-05: the first dated revision.
    V2024_11_05 = "2024-11-05";
    /// 2025-03-26.
    V2025_03_26 = "2025-03-26";
    /// 2025-06-18: adds `structuredContent` and tool `outputSchema`.
    V2025_06_18 = "2025-06-18";
    /// 2025-11-25.
    V2025_11_25 = "2025-11-25";
    /// 2026-07-28: adds `resultType` (absent means `"complete"`).
    V2026_07_28 = "2026-07-28";
}

impl McpRevision {
    /// The current revision, the one results are shaped for by default.
    pub const LATEST: McpRevision = McpRevision::V2026_07_28;

    /// Whether results carry `structuredContent` (and tools an `outputSchema`).
    #[must_use]
    pub fn has_structured_content(self) -> bool {
        self >= McpRevision::V2025_06_18
    }

    /// Whether results carry `resultType`.
    #[must_use]
    pub fn has_result_type(self) -> bool {
        self >= McpRevision::V2026_07_28
    }
}

impl fmt::Display for McpRevision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a string that names no known MCP revision.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown MCP revision `{0}`: expected one of {known}", known = known_revisions())]
pub struct ParseRevisionError(String);

fn known_revisions() -> String {
    let names: Vec<&str> = McpRevision::ALL.iter().map(|r| r.as_str()).collect();
    names.join(", ")
}
