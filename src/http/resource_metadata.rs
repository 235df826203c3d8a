//! Protected resource metadata (RFC 9728): the public document that tells an OAuth client
//! which authorization servers issue tokens for a resource, and where it is published. MCP
//! clients (the TypeScript SDK among them) follow the `resource_metadata` URL of a 401
//! challenge to it, then the authorization server it names.
//!
//! ```
//! use agent_tool_result::http::BearerGate;
//! use agent_tool_result::http::resource_metadata::ProtectedResourceMetadata;
//!
//! let metadata = ProtectedResourceMetadata::new("https://api.example")?
//!     .with_authorization_server("https://auth.example")?;
//! assert_eq!(
//!     metadata.well_known_url(),
//!     "https://api.example/.well-known/oauth-protected-resource"
//! );
//! // Every challenge names it, so a client finds it with no other configuration.
//! let gate = BearerGate::new("api").with_resource_metadata(metadata.well_known_url());
//! let response = metadata.response();
//! assert_eq!(response.status(), 200);
//! let body: serde_json::Value = serde_json::from_slice(response.body())?;
//! assert_eq!(body["resource"], "https://api.example");
//! assert_eq!(body["authorization_servers"][0], "https://auth.example");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ::http::header::{CACHE_CONTROL, HeaderValue};
use ::http::{Response, StatusCode};
use serde::Serialize;

use super::media::{APPLICATION_JSON, json_response};

/// The well-known path of protected resource metadata (RFC 9728 section 3), which a
/// resource's own path, if any, follows.
pub const WELL_KNOWN_PATH: &str = "/.well-known/oauth-protected-resource";

/// Why a URL cannot be a resource or an authorization server identifier.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{url}` is not {what}: {why}")]
pub struct NotAnIdentifier {
    url: String,
    what: &'static str,
    why: &'static str,
}

/// A resource server's metadata (RFC 9728 section 2): its identifier, the authorization
/// servers that issue its tokens, how it takes them (the `Authorization` header), and the
/// scopes it knows.
///
/// ```
/// use agent_tool_result::http::resource_metadata::ProtectedResourceMetadata;
///
/// // RFC 9728 section 3.1: a resource with a path has its metadata under the well-known
/// // prefix, before the path.
/// let metadata = ProtectedResourceMetadata::new("https://api.example/mcp")?
///     .with_authorization_server("https://auth.example")?
///     .with_scopes(["sms:send"]);
/// assert_eq!(metadata.well_known_path(), "/.well-known/oauth-protected-resource/mcp");
/// assert!(ProtectedResourceMetadata::new("https://api.example/#fragment").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProtectedResourceMetadata {
    resource: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    authorization_servers: Vec<String>,
    bearer_methods_supported: [&'static str; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scopes_supported: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_name: Option<String>,
}

/// Checks an identifier: an `http` or `https` URL with a host and no query or fragment
/// (RFC 9728 section 1.2 for resources; RFC 8414 section 2 for authorization servers).
fn identifier(url: String, what: &'static str) -> Result<String, NotAnIdentifier> {
    let refuse = |why| NotAnIdentifier {
        url: url.chars().take(256).collect(),
        what,
        why,
    };
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return Err(refuse("it is an https (or http) URL"));
    };
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() || host.contains('@') {
        return Err(refuse("it names a host, and no user"));
    }
    if url.contains(['?', '#']) {
        return Err(refuse("it has no query and no fragment"));
    }
    if url.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err(refuse("it is printable ASCII with no spaces"));
    }
    Ok(url)
}

impl ProtectedResourceMetadata {
    /// The metadata of the resource `resource` (`https://api.example`, or with a path:
    /// `https://api.example/mcp`), taking tokens in the `Authorization` header.
    ///
    /// # Errors
    ///
    /// [`NotAnIdentifier`] when `resource` is not an `https` or `http` URL with a host and
    /// without a query or fragment.
    pub fn new(resource: impl Into<String>) -> Result<Self, NotAnIdentifier> {
        Ok(ProtectedResourceMetadata {
            resource: identifier(resource.into(), "a resource identifier")?,
            authorization_servers: Vec::new(),
            bearer_methods_supported: ["header"],
            scopes_supported: Vec::new(),
            resource_name: None,
        })
    }

    /// The metadata with one more authorization server (its issuer identifier).
    ///
    /// # Errors
    ///
    /// [`NotAnIdentifier`] when `issuer` is not an `https` or `http` URL with a host and
    /// without a query or fragment.
    pub fn with_authorization_server(
        mut self,
        issuer: impl Into<String>,
    ) -> Result<Self, NotAnIdentifier> {
        let issuer = identifier(issuer.into(), "an authorization server identifier")?;
        if !self.authorization_servers.contains(&issuer) {
            self.authorization_servers.push(issuer);
        }
        Ok(self)
    }

    /// The metadata with the scopes the resource knows.
    #[must_use]
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The metadata with a name for people.
    #[must_use]
    pub fn with_resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The resource identifier.
    #[must_use]
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The authorization servers, in the order given.
    #[must_use]
    pub fn authorization_servers(&self) -> &[String] {
        &self.authorization_servers
    }

    /// The path this metadata is published at (RFC 9728 section 3.1): the well-known path,
    /// followed by the resource's own path when it has one (`/.well-known/oauth-protected-resource/mcp`
    /// for `https://api.example/mcp`).
    #[must_use]
    pub fn well_known_path(&self) -> String {
        let after_scheme = self.resource.split_once("://").map_or("", |(_, rest)| rest);
        let path = after_scheme
            .find('/')
            .map_or("", |at| &after_scheme[at..])
            .trim_end_matches('/');
        format!("{WELL_KNOWN_PATH}{path}")
    }

    /// The URL this metadata is published at: the resource's origin and
    /// [`well_known_path`](Self::well_known_path). A [`BearerGate`](super::BearerGate) names
    /// it in every challenge.
    #[must_use]
    pub fn well_known_url(&self) -> String {
        let after_scheme = self.resource.find("://").map_or(0, |at| at + 3);
        let origin_end = self.resource[after_scheme..]
            .find('/')
            .map_or(self.resource.len(), |at| after_scheme + at);
        format!("{}{}", &self.resource[..origin_end], self.well_known_path())
    }

    /// The JSON document.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The response that publishes it: 200 `application/json`, cacheable for an hour.
    #[must_use]
    pub fn response(&self) -> Response<Vec<u8>> {
        let mut response = json_response(
            StatusCode::OK,
            APPLICATION_JSON,
            self.to_json().into_bytes(),
        );
        response.headers_mut().insert(
            CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=3600"),
        );
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_where_rfc_9728_puts_it() {
        for (resource, url) in [
            (
                "https://api.example",
                "https://api.example/.well-known/oauth-protected-resource",
            ),
            (
                "https://api.example/",
                "https://api.example/.well-known/oauth-protected-resource",
            ),
            (
                "http://127.0.0.1:8080/mcp",
                "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
            ),
        ] {
            let metadata = ProtectedResourceMetadata::new(resource).unwrap();
            assert_eq!(metadata.well_known_url(), url);
        }
        for bad in [
            "api.example",
            "ftp://x",
            "https://",
            "https://a/?q",
            "https://u@h",
            "https://a b",
        ] {
            assert!(ProtectedResourceMetadata::new(bad).is_err(), "{bad}");
        }
    }
}
