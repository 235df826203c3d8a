//! Reading a request's credentials and content type: [`credentials`], [`require_json`] and the
//! [`BearerGate`] that answers a missing or refused token with its challenge.
//!
//! ```
//! use agent_tool_result::http::auth::require_json;
//! use http::HeaderMap;
//!
//! let mut headers = HeaderMap::new();
//! headers.insert("content-type", "application/json; charset=utf-8".parse()?);
//! assert!(require_json(&headers).is_ok());
//! headers.insert("content-type", "text/plain".parse()?);
//! assert_eq!(require_json(&headers).unwrap_err().status(), 415);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ::http::HeaderMap;
use ::http::header::{AUTHORIZATION, CONTENT_TYPE};

use super::fault::Fault;
use super::header::quoted;

/// What a request's `Authorization` header carries.
///
/// ```
/// use agent_tool_result::http::auth::Credentials;
/// use agent_tool_result::http::credentials;
/// use http::HeaderMap;
///
/// let mut headers = HeaderMap::new();
/// headers.insert("authorization", "bearer tok_1".parse()?);
/// assert_eq!(credentials(&headers), Credentials::Bearer("tok_1"));
/// headers.insert("authorization", "Basic dXNlcg==".parse()?);
/// assert_eq!(credentials(&headers), Credentials::Other);
/// assert_eq!(credentials(&HeaderMap::new()), Credentials::None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Credentials<'a> {
    /// No `Authorization` header (or one that is not text).
    None,
    /// A bearer token (`Bearer <token>`, the scheme matched case-insensitively).
    Bearer(&'a str),
    /// Credentials of another scheme (`Basic ...`), or a `Bearer` without a token.
    Other,
}

/// Reads the `Authorization` header: the auth scheme is case-insensitive (RFC 9110 section
/// 11.1), so `bearer abc` and `BEARER abc` are bearer tokens like `Bearer abc`.
///
/// ```
/// use agent_tool_result::http::credentials;
/// use agent_tool_result::http::auth::Credentials;
/// use http::HeaderMap;
///
/// let mut headers = HeaderMap::new();
/// assert_eq!(credentials(&headers), Credentials::None);
/// headers.insert("authorization", "bearer t0k3n".parse().unwrap());
/// assert_eq!(credentials(&headers), Credentials::Bearer("t0k3n"));
/// headers.insert("authorization", "Basic dXNlcg==".parse().unwrap());
/// assert_eq!(credentials(&headers), Credentials::Other);
/// ```
#[must_use]
pub fn credentials(headers: &HeaderMap) -> Credentials<'_> {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return Credentials::None;
    };
    let Ok(value) = value.to_str() else {
        return Credentials::Other;
    };
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    let (scheme, rest) = value.split_once([' ', '\t']).unwrap_or((value, ""));
    let token = rest.trim_start_matches([' ', '\t']);
    if scheme.eq_ignore_ascii_case("bearer") && is_token68(token) {
        Credentials::Bearer(token)
    } else {
        Credentials::Other
    }
}

/// The bearer-token check of a resource server, the same on every route (REST and MCP's
/// Streamable HTTP endpoint alike): it answers the fault RFC 6750 and the MCP authorization
/// spec ask for, with the challenge and, when configured, the protected resource metadata
/// (RFC 9728) that MCP clients follow.
///
/// | request | answer |
/// |---|---|
/// | no `Authorization`, or another scheme | 401, `Bearer realm="..."` |
/// | two `Authorization` headers (ambiguous) | 400 |
/// | a bearer token `verify` refuses | the fault it returns: 401 `invalid_token` or 403 `insufficient_scope` |
/// | a bearer token `verify` accepts | what it returns (the principal) |
///
/// ```
/// use agent_tool_result::http::{BearerGate, Fault};
/// use http::HeaderMap;
///
/// let gate = BearerGate::new("campaigns")
///     .with_resource_metadata("https://api.example/.well-known/oauth-protected-resource");
/// let verify = |token: &str| match token {
///     "t0k3n" => Ok("acct_1"),
///     _ => Err(Fault::invalid_token("campaigns", "unknown token")),
/// };
/// let mut headers = HeaderMap::new();
/// let fault = gate.authorize(&headers, verify).unwrap_err();
/// assert_eq!(fault.status(), 401);
/// assert!(fault.www_authenticate().unwrap().contains("resource_metadata="));
/// headers.insert("authorization", "Bearer t0k3n".parse().unwrap());
/// assert_eq!(gate.authorize(&headers, verify), Ok("acct_1"));
/// headers.append("authorization", "Bearer other".parse().unwrap());
/// assert_eq!(gate.authorize(&headers, verify).unwrap_err().status(), 400);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BearerGate {
    realm: String,
    resource_metadata: Option<String>,
}

impl BearerGate {
    /// A gate for the protection space `realm`.
    #[must_use]
    pub fn new(realm: impl Into<String>) -> Self {
        BearerGate {
            realm: realm.into(),
            resource_metadata: None,
        }
    }

    /// Names the protected resource metadata URL in every challenge.
    #[must_use]
    pub fn with_resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata = Some(url.into());
        self
    }

    /// The realm.
    #[must_use]
    pub fn realm(&self) -> &str {
        &self.realm
    }

    /// The protected resource metadata URL every challenge names, if any.
    #[must_use]
    pub fn resource_metadata(&self) -> Option<&str> {
        self.resource_metadata.as_deref()
    }

    /// Checks a request's credentials: `verify` is asked about a bearer token and answers the
    /// principal, or the fault that refuses it.
    ///
    /// # Errors
    ///
    /// The [`Fault`] to answer with (see the table above), with this gate's resource metadata.
    pub fn authorize<P>(
        &self,
        headers: &HeaderMap,
        verify: impl FnOnce(&str) -> Result<P, Fault>,
    ) -> Result<P, Fault> {
        let with_metadata = |fault: Fault| match &self.resource_metadata {
            Some(url) => fault.with_resource_metadata(url.clone()),
            None => fault,
        };
        if headers.get_all(AUTHORIZATION).iter().nth(1).is_some() {
            return Err(Fault::malformed(
                "the request carries two Authorization headers: send one",
            ));
        }
        match credentials(headers) {
            Credentials::Bearer(token) => verify(token).map_err(with_metadata),
            Credentials::None | Credentials::Other => {
                Err(with_metadata(Fault::unauthenticated(self.realm.clone())))
            }
        }
    }
}

/// `token68` (RFC 9110 section 11.2): the form of a bearer token.
fn is_token68(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// Checks that the request body is JSON by its `Content-Type`: `application/json` or any
/// `application/*+json`, parameters (a charset) allowed, case-insensitive.
///
/// # Errors
///
/// [`Fault::UnsupportedMediaType`] (415) for any other media type, or none.
///
/// ```
/// use agent_tool_result::http::auth::require_json;
/// use http::HeaderMap;
///
/// let mut headers = HeaderMap::new();
/// assert_eq!(require_json(&headers).unwrap_err().status(), 415);
/// headers.insert("content-type", "Application/JSON; charset=utf-8".parse().unwrap());
/// assert!(require_json(&headers).is_ok());
/// headers.insert("content-type", "application/x-www-form-urlencoded".parse().unwrap());
/// assert!(require_json(&headers).is_err());
/// ```
pub fn require_json(headers: &HeaderMap) -> Result<(), Fault> {
    let value = headers.get(CONTENT_TYPE);
    let text = value.and_then(|v| v.to_str().ok());
    let essence = text
        .map(|t| {
            t.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let json = essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|subtype| subtype.len() > "+json".len() && subtype.ends_with("+json"));
    if json {
        Ok(())
    } else {
        let shown = value.map(|v| quoted(&String::from_utf8_lossy(v.as_bytes())));
        Err(Fault::unsupported_media_type(shown.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_schemes_in_any_case_and_spacing() {
        let read = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, value.parse().unwrap());
            match credentials(&headers) {
                Credentials::Bearer(token) => Some(token.to_owned()),
                _ => None,
            }
        };
        for value in [
            "Bearer abc",
            "bearer abc",
            "BEARER abc",
            "bEaReR  abc",
            "Bearer abc==",
        ] {
            assert!(read(value).is_some_and(|t| t.starts_with("abc")), "{value}");
        }
        for value in [
            "Basic abc",
            "Bearer",
            "Bearer ",
            "Bearerabc",
            "Bearer a b",
            "Bearer a\"b",
        ] {
            assert_eq!(read(value), None, "{value}");
        }
    }
}
