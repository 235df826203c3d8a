//! The header names the profile adds to HTTP, as [`HeaderName`] constants (as the `http`
//! crate's own `header` module has them), and quoting text for a header's quoted-string.

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
