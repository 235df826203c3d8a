//! The header names the profile adds to HTTP, as [`HeaderName`] constants (as the `http`
//! crate's own `header` module has them), quoting text for a header's quoted-string, and
//! reading the values an agent meets: `Retry-After` and `WWW-Authenticate` challenges.
//!
//! [`HeaderName`]: https://docs.rs/http/1/http/header/struct.HeaderName.html
//!
//! ```
//! use agent_tool_result::http::header::{IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED};
//!
//! let mut headers = http::HeaderMap::new();
//! headers.insert(IDEMPOTENCY_KEY, "\"order-7\"".parse()?);
//! headers.insert(IDEMPOTENT_REPLAYED, "true".parse()?);
//! assert_eq!(headers["idempotency-key"], "\"order-7\"");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::SystemTime;

use ::http::HeaderName;

/// `Idempotency-Key`: the key of a guarantee call (IETF httpapi Idempotency-Key draft), an
/// sf-string of at most 255 characters.
///
/// ```
/// use agent_tool_result::http::header::IDEMPOTENCY_KEY;
///
/// let request = http::Request::post("/tools/send_sms")
///     .header(IDEMPOTENCY_KEY, "\"k-7f3a\"")
///     .body(())?;
/// assert_eq!(request.headers()["idempotency-key"], "\"k-7f3a\"");
/// # Ok::<(), http::Error>(())
/// ```
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// `Idempotent-Replayed`: marks a response replayed from the ledger rather than produced anew;
/// its value is `true`.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// Text made safe for a quoted-string in a header: quotes and backslashes escaped, anything
/// that is not printable ASCII replaced.
pub(crate) fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.push('?'),
        }
    }
    out
}

/// `Retry-After`: delay-seconds, or an HTTP-date in any of its three forms (RFC 9110
/// section 10.2.3).
pub(crate) fn parse_retry_after(value: &str) -> Option<SystemTime> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // However many digits: a delay past what a clock holds waits until the last instant
        // the contract writes.
        let seconds: u64 = value.parse().unwrap_or(u64::MAX);
        return Some(
            SystemTime::now()
                .checked_add(std::time::Duration::from_secs(seconds))
                .unwrap_or_else(crate::guarantee::instant::last),
        );
    }
    httpdate::parse_http_date(value).ok()
}

/// One challenge of a `WWW-Authenticate` header: its scheme and its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) scheme: String,
    params: Vec<(String, String)>,
}

impl Challenge {
    pub(crate) fn param(&self, name: &str) -> Option<String> {
        self.params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    }
}

/// The challenges of one `WWW-Authenticate` value (RFC 9110 section 11.6.1): several may
/// share a line, parameters are tokens or quoted strings with `\` escapes.
pub(crate) fn parse_challenges(value: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let bytes = value.as_bytes();
    let mut i = 0;
    let skip = |i: &mut usize, what: &[u8]| {
        while *i < bytes.len() && what.contains(&bytes[*i]) {
            *i += 1;
        }
    };
    let token = |i: &mut usize| -> String {
        let start = *i;
        while *i < bytes.len() && !b" \t,=\"".contains(&bytes[*i]) {
            *i += 1;
        }
        value[start..*i].to_owned()
    };
    while i < bytes.len() {
        skip(&mut i, b" \t,");
        let word = token(&mut i);
        if word.is_empty() {
            if i < bytes.len() {
                i += 1; // a stray quote or `=`
            }
            continue;
        }
        skip(&mut i, b" \t");
        if i < bytes.len() && bytes[i] == b'=' {
            // A parameter of the current challenge (or token68 padding).
            i += 1;
            skip(&mut i, b" \t=");
            let param_value = if i < bytes.len() && bytes[i] == b'"' {
                i += 1;
                let mut text = String::new();
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' && i + 1 < bytes.len() {
                        i += 1;
                    }
                    let c = value[i..].chars().next().unwrap_or('?');
                    text.push(c);
                    i += c.len_utf8();
                }
                i += 1;
                text
            } else {
                token(&mut i)
            };
            if let Some(challenge) = out.last_mut() {
                challenge.params.push((word, param_value));
            }
        } else {
            out.push(Challenge {
                scheme: word,
                params: Vec::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_with_quotes_escapes_and_several_per_line() {
        let parsed = parse_challenges(
            r#"Basic realm="x", Bearer realm="tools \"main\"", error="insufficient_scope", scope="a b", resource_metadata="https://r.example/.well-known/oauth-protected-resource""#,
        );
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].scheme, "Basic");
        assert_eq!(parsed[1].param("realm").as_deref(), Some(r#"tools "main""#));
        assert_eq!(parsed[1].param("scope").as_deref(), Some("a b"));
        assert!(parsed[1].param("resource_metadata").is_some());
        assert_eq!(parse_challenges("Bearer").len(), 1);
        assert_eq!(
            parse_challenges("Bearer error=invalid_token")[0]
                .param("error")
                .as_deref(),
            Some("invalid_token")
        );
    }

    #[test]
    fn retry_after_in_every_form() {
        let imf = parse_retry_after("Tue, 01 Dec 2026 09:00:00 GMT").unwrap();
        let rfc850 = parse_retry_after("Tuesday, 01-Dec-26 09:00:00 GMT").unwrap();
        let asctime = parse_retry_after("Tue Dec  1 09:00:00 2026").unwrap();
        assert_eq!(imf, rfc850);
        assert_eq!(imf, asctime);
        assert!(parse_retry_after("120").is_some());
        assert!(parse_retry_after("soon").is_none());
    }
}
