//! The checks of a guarantee call's arguments, made as they are read, before the key is begun
//! or any policy decides: numbers in E.164, texts not blank and not too long, a batch's size.

use serde::{Deserialize, Deserializer};

/// An E.164 number, as the arguments' schema says it: `+`, a non-zero digit, at most 15
/// digits in all ([`is_e164`]).
pub const E164: &str = r"^\+[1-9][0-9]{1,14}$";

/// The most recipients one batch takes.
pub const MAX_RECIPIENTS: usize = 10_000;

/// The longest text one message carries, in characters.
pub const MAX_TEXT: usize = 1_600;

/// Whether `phone` is an E.164 number: `+`, a non-zero digit, at most 15 digits in all.
pub fn is_e164(phone: &str) -> bool {
    phone.strip_prefix('+').is_some_and(|digits| {
        (2..=15).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.starts_with('0')
    })
}

/// Why `phone` is no number to send to, if it is not.
fn number_problem(phone: &str) -> Option<String> {
    (!is_e164(phone)).then(|| {
        let shown: String = phone.chars().take(32).collect();
        format!("`{shown}` is not an E.164 number (+ and 2 to 15 digits, as +15550100)")
    })
}

/// A recipient's number, checked as it is read.
pub fn phone<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let phone = String::deserialize(deserializer)?;
    match number_problem(&phone) {
        Some(problem) => Err(serde::de::Error::custom(problem)),
        None => Ok(phone),
    }
}

/// A text to send, checked as it is read: not blank, at most [`MAX_TEXT`] characters.
pub fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.trim().is_empty() {
        Err(serde::de::Error::custom("empty: there is nothing to send"))
    } else if text.chars().count() > MAX_TEXT {
        Err(serde::de::Error::custom(format!(
            "longer than {MAX_TEXT} characters"
        )))
    } else {
        Ok(text)
    }
}

/// A batch's recipients, checked as they are read: 1 to [`MAX_RECIPIENTS`] numbers, each
/// E.164 (the first that is not is named by its place).
pub fn recipients<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let recipients = Vec::<String>::deserialize(deserializer)?;
    let count = recipients.len();
    let problem = if count == 0 {
        Some("empty: a batch names at least one number".to_owned())
    } else if count > MAX_RECIPIENTS {
        Some(format!(
            "{count} numbers; a batch takes at most {MAX_RECIPIENTS}"
        ))
    } else {
        recipients
            .iter()
            .enumerate()
            .find_map(|(i, phone)| number_problem(phone).map(|problem| format!("[{i}]: {problem}")))
    };
    match problem {
        Some(problem) => Err(serde::de::Error::custom(problem)),
        None => Ok(recipients),
    }
}
