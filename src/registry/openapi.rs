//! The registry as OpenAPI operations (feature `openapi`).

use serde_json::Value;

use super::{ANNOTATIONS_EXTENSION, Method, Registry};
use crate::http::openapi::OpenApi;

impl<L, P> Registry<L, P> {
    /// `document` with the operation of every tool of the registry, at the paths
    /// [`rest_routes`](Registry::rest_routes) serves them, each carrying its tool's hints in
    /// [`ANNOTATIONS_EXTENSION`] (a guarantee tool's `idempotentHint: true`, a lookup's
    /// `readOnlyHint: true`).
    ///
    /// ```
    /// # use agent_tool_result::registry::Registry;
    /// # use agent_tool_result::replay::{MemoryLedger, Sequence};
    /// use agent_tool_result::http::openapi::OpenApi;
    ///
    /// let tools = Registry::new(Sequence::new(MemoryLedger::new()));
    /// let document = tools.openapi(OpenApi::new("notes", "1.0.0")).to_value();
    /// assert_eq!(document["openapi"], "3.1.0");
    /// ```
    #[must_use]
    pub fn openapi(&self, mut document: OpenApi) -> OpenApi {
        for entry in &self.entries {
            let (method, path) = match &entry.rest {
                None => ("post", self.keyed_path(entry.name)),
                Some((Method::Get, path)) => ("get", path.clone()),
                Some((Method::Post, path)) => ("post", path.clone()),
            };
            document = (entry.operation)(document, &path);
            document.extend_operation(
                &path,
                method,
                ANNOTATIONS_EXTENSION,
                Value::Object(entry.hints.to_annotations()),
            );
        }
        document
    }
}
