//! `retryAt`: an RFC 3339 instant in UTC (`2026-12-01T09:00:00Z`), held as a `SystemTime`.
//!
//! Written as `YYYY-MM-DDTHH:MM:SS[.fff]Z`; read from the same with `Z` or a zero offset
//! (`+00:00`, `-00:00`), fractions of any length, and no leap second. The schema's pattern for
//! the same language is tested against [`parse`].

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The schema pattern of a `retryAt`: every date it admits is a real one (leap years too).
/// The schema file carries the same pattern (tested).
#[cfg(test)]
pub(crate) const PATTERN: &str = concat!(
    "^(?:(?:[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8]))",
    "|(?:[0-9]{4}-(?:0[13-9]|1[0-2])-(?:29|30))",
    "|(?:[0-9]{4}-(?:0[13578]|1[02])-31)",
    "|(?:(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29))",
    "T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:Z|[+-]00:00)$"
);

/// Reads an RFC 3339 UTC instant, any year from 0000 to 9999 as the schema admits (before
/// 1970 too); `None` for anything else.
pub(crate) fn parse(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<u32> {
        let digits = &text.get(range)?;
        if digits.bytes().all(|d| d.is_ascii_digit()) {
            digits.parse().ok()
        } else {
            None
        }
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &text[19..];
    let mut nanos = 0u32;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        for (i, d) in fraction.bytes().take(digits).enumerate() {
            if i < 9 {
                nanos += u32::from(d - b'0') * 10u32.pow(8 - u32::try_from(i).ok()?);
            }
        }
        rest = &fraction[digits..];
    }
    if !matches!(rest, "Z" | "+00:00" | "-00:00") {
        return None;
    }
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, day);
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
    let whole = match u64::try_from(seconds) {
        Ok(after) => UNIX_EPOCH.checked_add(Duration::from_secs(after)),
        Err(_) => UNIX_EPOCH.checked_sub(Duration::from_secs(seconds.unsigned_abs())),
    };
    whole?.checked_add(Duration::from_nanos(u64::from(nanos)))
}

/// `0000-01-01T00:00:00Z`, the first instant RFC 3339 writes, in seconds since 1970.
const FIRST: i64 = -62_167_219_200;

/// `10000-01-01T00:00:00Z`, the first instant past those RFC 3339 writes.
const PAST_LAST: i64 = 253_402_300_800;

/// Whether `time` falls in the years 0000 to 9999, which RFC 3339 writes and every reader of
/// the contract reads back.
pub(crate) fn in_range(time: SystemTime) -> bool {
    let (seconds, _) = since_epoch(time);
    (FIRST..PAST_LAST).contains(&seconds)
}

/// `time`, or the nearest instant of the years 0000 to 9999 when it falls outside them: for
/// times the crate reads or derives itself (a far `Retry-After`, now plus a delay).
pub(crate) fn clamped(time: SystemTime) -> SystemTime {
    let (seconds, _) = since_epoch(time);
    let at = |seconds: i64| match u64::try_from(seconds) {
        Ok(after) => UNIX_EPOCH + Duration::from_secs(after),
        Err(_) => UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs()),
    };
    if seconds < FIRST {
        at(FIRST)
    } else if seconds >= PAST_LAST {
        last()
    } else {
        time
    }
}

/// `9999-12-31T23:59:59Z`, the last whole second RFC 3339 writes.
pub(crate) fn last() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(PAST_LAST.unsigned_abs() - 1)
}

/// Whole seconds since 1970 (negative before) and the nanoseconds past them.
fn since_epoch(time: SystemTime) -> (i64, u32) {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => (
            i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
            after.subsec_nanos(),
        ),
        Err(before) => {
            let before = before.duration();
            let seconds = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            match before.subsec_nanos() {
                0 => (-seconds, 0),
                nanos => (-seconds - 1, 1_000_000_000 - nanos),
            }
        }
    }
}

/// Writes `time` as RFC 3339 UTC, with milliseconds only when there are some.
pub(crate) struct Rfc3339(pub(crate) SystemTime);

impl fmt::Display for Rfc3339 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (seconds, nanos) = since_epoch(self.0);
        let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
        let rest = seconds.rem_euclid(86_400);
        let Ok(year) = u32::try_from(year) else {
            // Before year 0: no reader of the contract's form takes it; written all the same.
            return write!(
                f,
                "{year:05}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
                rest / 3600,
                rest % 3600 / 60,
                rest % 60
            );
        };
        if year > 9999 {
            return write!(
                f,
                "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
                rest / 3600,
                rest % 3600 / 60,
                rest % 60
            );
        }
        // `YYYY-MM-DDTHH:MM:SS.fffffffffZ`, filled digit by digit: one write, no formatting
        // machinery (a tool server writes one per deferred call).
        let mut text = *b"0000-00-00T00:00:00.000000000Z";
        let mut put = |at: usize, width: usize, mut value: u32| {
            for i in (at..at + width).rev() {
                text[i] = b'0' + u8::try_from(value % 10).unwrap_or(0);
                value /= 10;
            }
        };
        let rest = u32::try_from(rest).unwrap_or(0);
        put(0, 4, year);
        put(5, 2, month);
        put(8, 2, day);
        put(11, 2, rest / 3600);
        put(14, 2, rest % 3600 / 60);
        put(17, 2, rest % 60);
        let end = if nanos == 0 {
            19
        } else {
            put(20, 9, nanos);
            let mut end = 29;
            while text[end - 1] == b'0' {
                end -= 1;
            }
            end
        };
        text[end] = b'Z';
        f.write_str(std::str::from_utf8(&text[..=end]).map_err(|_| fmt::Error)?)
    }
}

/// Written as its text, straight into the output (no intermediate string).
impl serde::Serialize for Rfc3339 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Writes `time` as an HTTP-date in the preferred IMF-fixdate form (RFC 9110 section 5.6.7):
/// `Tue, 01 Dec 2026 09:00:00 GMT`, to the second.
#[cfg(any(test, feature = "http"))]
pub(crate) fn imf_fixdate(time: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (seconds, _) = since_epoch(time);
    let days = seconds.div_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let weekday = DAYS[usize::try_from(days.rem_euclid(7)).unwrap_or(0)];
    let month = MONTHS[(month as usize).saturating_sub(1).min(11)];
    let rest = seconds.rem_euclid(86_400);
    format!(
        "{weekday}, {day:02} {month} {year:04} {:02}:{:02}:{:02} GMT",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = u32::try_from(day_of_year - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_is_not_a_utc_instant() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2026-12-01T09:00:00Z",
            "2024-02-29T23:59:59Z",
            "2000-02-29T12:00:00.5Z",
            "2026-06-30T01:02:03.123Z",
            "1969-12-31T23:59:59Z",
            "1969-12-31T23:59:59.5Z",
            "1900-01-01T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "0004-02-29T12:00:00Z",
            "9999-12-31T23:59:59.999Z",
        ] {
            let time = parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(Rfc3339(time).to_string(), text);
        }
        assert_eq!(
            parse("2026-12-01T09:00:00+00:00"),
            parse("2026-12-01T09:00:00Z")
        );
        for bad in [
            "2026-12-01T09:00:00",
            "2026-12-01T09:00:00+01:00",
            "2026-12-01 09:00:00Z",
            "2026-13-01T09:00:00Z",
            "2025-02-29T09:00:00Z",
            "1900-02-29T09:00:00Z",
            "2026-04-31T09:00:00Z",
            "2026-12-01T24:00:00Z",
            "2026-12-01T23:59:60Z",
            "2026-12-01T09:00:00.Z",
            "tomorrow",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_writer_is_the_formatting_machinery_digit_for_digit() {
        let reference = |time: SystemTime| {
            let (seconds, nanos) = since_epoch(time);
            let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
            let rest = seconds.rem_euclid(86_400);
            let mut text = format!(
                "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
                rest / 3600,
                rest % 3600 / 60,
                rest % 60
            );
            if nanos != 0 {
                text.push('.');
                text.push_str(format!("{nanos:09}").trim_end_matches('0'));
            }
            text + "Z"
        };
        // A walk over years 0000 to 9999 in uneven steps, with every fraction length.
        let first = parse("0000-01-01T00:00:00Z").unwrap();
        let mut step = 0u64;
        for i in 0..20_000u64 {
            step = step
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let seconds = (step >> 20) % 315_537_897_600; // up to 9999-12-31
            let nanos = [0, 1, 10, 500_000_000, 123_456_789, 999_999_999][(i % 6) as usize];
            let time = first + Duration::new(seconds, nanos);
            let text = Rfc3339(time).to_string();
            assert_eq!(text, reference(time));
            assert_eq!(parse(&text), Some(time), "{text}");
        }
    }

    #[test]
    fn http_dates_are_imf_fixdate() {
        assert_eq!(imf_fixdate(UNIX_EPOCH), "Thu, 01 Jan 1970 00:00:00 GMT");
        let before = parse("1969-12-31T23:59:59.5Z").unwrap();
        assert_eq!(imf_fixdate(before), "Wed, 31 Dec 1969 23:59:59 GMT");
        let time = parse("2026-12-01T09:00:00Z").unwrap();
        assert_eq!(imf_fixdate(time), "Tue, 01 Dec 2026 09:00:00 GMT");
        let leap = parse("2028-02-29T23:59:59.9Z").unwrap();
        assert_eq!(imf_fixdate(leap), "Tue, 29 Feb 2028 23:59:59 GMT");
    }

    #[test]
    fn the_schema_pattern_is_the_parser() {
        let pattern = regex_lite(PATTERN);
        for year in [
            0, 4, 100, 1600, 1900, 1969, 1970, 1999, 2000, 2024, 2025, 2100, 2400, 9999,
        ] {
            for month in 1..=12 {
                for day in [1, 28, 29, 30, 31] {
                    let text = format!("{year:04}-{month:02}-{day:02}T10:20:30Z");
                    assert_eq!(pattern(&text), parse(&text).is_some(), "{text}");
                }
            }
        }
    }

    /// The pattern through `serde_json`-free means: the schema's own regex engine is tested in
    /// the validator's tests; here a tiny backtracking-free check suffices via `jsonschema`
    /// when it is built, and by the parser's own ranges otherwise.
    fn regex_lite(pattern: &'static str) -> impl Fn(&str) -> bool {
        #[cfg(feature = "validate")]
        {
            let schema = serde_json::json!({ "type": "string", "pattern": pattern });
            let validator = jsonschema::validator_for(&schema).expect("the pattern compiles");
            move |text: &str| validator.is_valid(&serde_json::Value::from(text))
        }
        #[cfg(not(feature = "validate"))]
        {
            let _ = pattern;
            |text: &str| parse(text).is_some()
        }
    }
}
