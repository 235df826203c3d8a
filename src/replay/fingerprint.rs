//! [`Fingerprint`]: what a request is, for telling a replay from a mismatch, over its
//! arguments in the JSON Canonicalization Scheme ([`canonical_json`]).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// What a request is, for telling a replay from a mismatch: SHA-256 over the tool's name,
/// the principal and the arguments in the JSON Canonicalization Scheme (RFC 8785): keys
/// sorted by their UTF-16 code units, no insignificant whitespace, strings escaped one way and
/// numbers written as ECMAScript writes a double. Key order, spacing and how a client's JSON
/// library prints numbers (`1`, `1.0`, `1e0`; `0.0`, `-0.0`) do not matter: a client that
/// re-encodes its arguments still replays.
///
/// Integers beyond 2^53 compare as the doubles they round to, as RFC 8785 (and I-JSON, RFC
/// 7493) have it: two calls that differ only in such a number, a 64-bit id say, have one
/// fingerprint, so the second replays the first instead of being refused as a mismatch. A tool
/// whose arguments carry ids that large takes them as strings, as JSON APIs do:
///
/// ```
/// use agent_tool_result::replay::Fingerprint;
/// use serde_json::json;
///
/// let print = |id| Fingerprint::of("refund", "acct_1", &json!({ "orderId": id }));
/// // 2^53 + 1 rounds to 2^53: one fingerprint, one call.
/// assert_eq!(print(json!(9_007_199_254_740_993_u64)), print(json!(9_007_199_254_740_992_u64)));
/// // As strings, they are two calls.
/// assert_ne!(print(json!("9007199254740993")), print(json!("9007199254740992")));
/// ```
///
/// ```
/// use agent_tool_result::replay::Fingerprint;
/// use serde_json::json;
///
/// let a = Fingerprint::of("send_sms", "acct_1", &json!({ "to": "+1555", "body": "hi" }));
/// let b = Fingerprint::of("send_sms", "acct_1", &json!({ "body": "hi", "to": "+1555" }));
/// assert_eq!(a, b);
/// assert_ne!(a, Fingerprint::of("send_sms", "acct_2", &json!({ "to": "+1555", "body": "hi" })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of a call.
    #[must_use]
    pub fn of(tool: &str, principal: &str, arguments: &Value) -> Self {
        let mut hasher = Sha256::new();
        for part in [tool, principal] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.update(canonical_json(arguments).as_bytes());
        Fingerprint(hasher.finalize().into())
    }

    /// A fingerprint read back from [`Fingerprint::to_hex`].
    ///
    /// ```
    /// use agent_tool_result::replay::Fingerprint;
    ///
    /// let print = Fingerprint::of("send_sms", "acct_1", &serde_json::json!({}));
    /// assert_eq!(Fingerprint::from_hex(&print.to_hex()), Ok(print));
    /// let err = Fingerprint::from_hex("abc").unwrap_err();
    /// assert_eq!(err.to_string(), "not a fingerprint: 3 characters, not 64 hex digits");
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidFingerprint`] saying why: the wrong length, or a character that is not a
    /// hex digit (and where).
    pub fn from_hex(hex: &str) -> Result<Self, InvalidFingerprint> {
        if hex.len() != 64 {
            return Err(InvalidFingerprint::Length(hex.chars().count()));
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            let digits = &hex.as_bytes()[2 * i..2 * i + 2];
            let value = |at: usize| {
                char::from(digits[at])
                    .to_digit(16)
                    .ok_or(InvalidFingerprint::NotHex(2 * i + at))
            };
            *byte = u8::try_from(value(0)? * 16 + value(1)?).unwrap_or(0);
        }
        Ok(Fingerprint(bytes))
    }

    /// The fingerprint as 64 lowercase hex digits, for storage.
    #[must_use]
    pub fn to_hex(&self) -> String {
        let mut hex = String::with_capacity(64);
        push_hex(&mut hex, &self.0);
        hex
    }
}

/// Appends `bytes` to `text` as lowercase hex digits, two a byte.
pub(super) fn push_hex(text: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
}

/// Why a text is not a fingerprint written by [`Fingerprint::to_hex`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidFingerprint {
    /// It does not have 64 characters (it has this many).
    #[error("not a fingerprint: {0} characters, not 64 hex digits")]
    Length(usize),
    /// The character at this byte offset is not a hex digit.
    #[error("not a fingerprint: the character at {0} is not a hex digit")]
    NotHex(usize),
}

/// `value` in the JSON Canonicalization Scheme (RFC 8785): the text a [`Fingerprint`] hashes
/// after the tool's name and the principal. Print it to see why two calls' arguments differ.
///
/// ```
/// use agent_tool_result::replay::canonical_json;
/// use serde_json::json;
///
/// let args: serde_json::Value = serde_json::from_str(r#"{ "n": 1.0e2, "b": [-0.0, 4.50] }"#)?;
/// assert_eq!(canonical_json(&args), r#"{"b":[0,4.5],"n":100}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Panics
///
/// Never: a `Value` holds no NaN, no infinity and no raw text, the only inputs the scheme
/// refuses.
#[must_use]
pub fn canonical_json(value: &Value) -> String {
    serde_json_canonicalizer::to_string(value).expect("every JSON value has a canonical form")
}
