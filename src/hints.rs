//! [`Hints`]: what a tool declares of its effect on the world, the MCP tool annotations
//! (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`) a client reads to
//! decide whether to ask before calling it.

/// What a tool declares of its effect, written once with the tool and shown by every
/// transport: MCP lists them as the tool's `annotations`, and the OpenAPI document carries
/// them on the tool's operation. They are hints, as MCP says: a client must not trust them
/// from a server it does not trust.
///
/// The defaults are MCP's: a tool may write (not read-only), may destroy what is there, is
/// not idempotent, and reaches an open world (other systems, people).
///
/// ```
/// use agent_tool_result::Hints;
///
/// // Sends a message: adds to the world, never destroys, reaches people outside.
/// const SEND: Hints = Hints::new().destructive(false);
/// assert!(!SEND.is_read_only() && !SEND.is_destructive() && SEND.is_open_world());
///
/// // Reads the service's own records.
/// assert!(Hints::READ_ONLY.is_read_only() && !Hints::READ_ONLY.is_open_world());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "MCP's four hints, each its own yes or no"
)]
pub struct Hints {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
}

impl Default for Hints {
    fn default() -> Self {
        Hints::new()
    }
}

impl Hints {
    /// A tool that reads its own service's records and changes nothing: read-only, in a
    /// closed world.
    pub const READ_ONLY: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    /// MCP's defaults: may write and destroy, not idempotent, an open world.
    #[must_use]
    pub const fn new() -> Self {
        Hints {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        }
    }

    /// Whether the tool may destroy or overwrite what is there (`false`: it only adds).
    #[must_use]
    pub const fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// Whether calling it again with the same arguments has no further effect. A guarantee
    /// tool is idempotent per key whatever it declares: its registry says so.
    #[must_use]
    pub const fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Whether it reaches beyond its own service (other systems, people).
    #[must_use]
    pub const fn open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }

    /// Whether it changes nothing.
    #[must_use]
    pub const fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether it may destroy or overwrite (meaningful only for a tool that writes).
    #[must_use]
    pub const fn is_destructive(&self) -> bool {
        self.destructive && !self.read_only
    }

    /// Whether calling it again has no further effect.
    #[must_use]
    pub const fn is_idempotent(&self) -> bool {
        self.idempotent || self.read_only
    }

    /// Whether it reaches beyond its own service.
    #[must_use]
    pub const fn is_open_world(&self) -> bool {
        self.open_world
    }

    /// The hints as MCP's `annotations` object writes them (`readOnlyHint`, ...): a read-only
    /// tool says so and whether its world is open; a tool that writes says all four.
    #[must_use]
    pub fn to_annotations(&self) -> crate::JsonObject {
        let mut object = crate::JsonObject::new();
        let mut put = |name: &str, value: bool| {
            object.insert(name.to_owned(), serde_json::Value::Bool(value));
        };
        put("readOnlyHint", self.read_only);
        if !self.read_only {
            put("destructiveHint", self.destructive);
            put("idempotentHint", self.idempotent);
        }
        put("openWorldHint", self.open_world);
        object
    }
}

#[cfg(test)]
mod tests {
    use super::Hints;
    use serde_json::json;

    #[test]
    fn a_read_only_tool_writes_no_hint_about_writing() {
        assert_eq!(
            serde_json::Value::Object(Hints::READ_ONLY.to_annotations()),
            json!({ "readOnlyHint": true, "openWorldHint": false })
        );
        let send = Hints::new().destructive(false).idempotent(true);
        assert_eq!(
            serde_json::Value::Object(send.to_annotations()),
            json!({
                "readOnlyHint": false,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": true,
            })
        );
    }
}
