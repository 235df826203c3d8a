//! `atr classify`: what a captured REST response means to an agent, and whether it keeps the
//! REST profile. Reads a response as `curl -i` prints it, or every response in a HAR file.

use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use agent_tool_result::guarantee::{GuaranteeResult, SettlementState};
use agent_tool_result::http::RestOutcome;
use agent_tool_result::http::classify::{classify_with, profile_breaches_with};
use agent_tool_result::http::rest::ProblemTypes;
use base64::Engine as _;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::Value;

use crate::commands::Failure;
use crate::printable::printable;

/// One captured response.
struct Captured {
    /// Where it came from: the file, and its entry in a HAR.
    origin: String,
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// `atr classify [--openapi FILE] INPUT...`: prints each response's outcome and next step, by
/// the producer's problem types as its OpenAPI document declares them (the profile's own by
/// default); `Invalid` when any breaks the profile, `Usage` when an input cannot be read or
/// parsed as a response, or the document declares no problem type of the profile.
pub fn classify(inputs: &[std::path::PathBuf], openapi: Option<&Path>) -> Result<(), Failure> {
    let types = match openapi {
        Some(path) => problem_types(path)?,
        None => ProblemTypes::default(),
    };
    let mut report = String::new();
    let mut breaking = 0usize;
    let mut total = 0usize;
    for input in inputs {
        for captured in read_responses(input)? {
            total += 1;
            let (status, headers, body) = (captured.status, &captured.headers, &captured.body);
            let outcome = classify_with(&types, status, headers, body);
            let breaches = profile_breaches_with(&types, status, headers, body);
            let _ = writeln!(
                report,
                "{}: {} {}",
                printable(&captured.origin),
                captured.status.as_u16(),
                printable(&describe(&outcome))
            );
            for breach in &breaches {
                let _ = writeln!(
                    report,
                    "  breaks the REST profile: {}",
                    printable(&breach.to_string())
                );
            }
            breaking += usize::from(!breaches.is_empty());
        }
    }
    let _ = write!(
        report,
        "{total} response{}, {breaking} breaking the REST profile",
        if total == 1 { "" } else { "s" }
    );
    crate::commands::print(&report)?;
    // The summary's last line says it all; nothing is repeated on stderr.
    if breaking > 0 {
        Err(Failure::Reported)
    } else {
        Ok(())
    }
}

/// The problem types a producer's OpenAPI document declares.
fn problem_types(path: &Path) -> Result<ProblemTypes, Failure> {
    let display = path.display().to_string();
    let shown = printable(&display);
    let text =
        std::fs::read_to_string(path).map_err(|err| Failure::Usage(format!("{shown}: {err}")))?;
    let document: Value = serde_json::from_str(&text)
        .map_err(|err| Failure::Usage(format!("{shown}: not JSON: {err}")))?;
    ProblemTypes::from_openapi(&document)
        .map_err(|err| Failure::Usage(format!("{shown}: {}", printable(&err.to_string()))))
}

/// The outcome, and what the agent does next: from the contract's tables, not made up here.
fn describe(outcome: &RestOutcome) -> String {
    let result_line = |what: &str, result: &GuaranteeResult, retry_at: Option<SystemTime>| {
        let mut line = format!(
            "{what}: settlement {}, decision {}",
            result.settlement(),
            result.policy().decision()
        );
        if let Some(code) = result.policy().code() {
            let _ = write!(line, " ({code})");
        }
        if let Some(at) = retry_at {
            let _ = write!(
                line,
                ", retry at {}",
                agent_tool_result::guarantee::format_instant(at)
            );
        }
        let _ = write!(
            line,
            ". {} {}",
            result.settlement().next_step(),
            result.policy().decision().next_step()
        );
        if let Some(tool) = result.suggested_next_tool() {
            let _ = write!(line, " Next tool: {tool}.");
        }
        line
    };
    match outcome {
        RestOutcome::Settled(result) if result.settlement() == SettlementState::Unknown => {
            result_line("outcome unknown", result, None)
        }
        RestOutcome::Settled(result) => result_line("settled", result, None),
        RestOutcome::Deferred { result, retry_at } => result_line("deferred", result, *retry_at),
        RestOutcome::PolicyDenied { result, retry_at } => {
            result_line("policy denied", result, *retry_at)
        }
        RestOutcome::Unauthorized { error, .. } => format!(
            "unauthorized{}: re-authenticate, then call again",
            error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ),
        RestOutcome::InsufficientScope { scopes } => {
            format!(
                "insufficient scope: step up to `{}`, then call again",
                scopes.join(" ")
            )
        }
        RestOutcome::Refused { refusal, .. } => {
            let kind = refusal.kind();
            let mut line = format!("refused ({kind}): {}", kind.title());
            if !refusal.detail().is_empty() {
                let _ = write!(line, ", {}", refusal.detail());
            }
            if let Some(at) = refusal.retry_at() {
                let _ = write!(
                    line,
                    ", retry at {}",
                    agent_tool_result::guarantee::format_instant(at)
                );
            }
            let _ = write!(line, ". Nothing was run: {}.", kind.next_step());
            line
        }
        RestOutcome::Fault {
            problem_type,
            detail,
            ..
        } => format!(
            "transport fault ({problem_type}){}: the call reached no tool; fix the request",
            detail
                .as_deref()
                .map(|d| format!(", {d}"))
                .unwrap_or_default()
        ),
        RestOutcome::Envelope(envelope) => match envelope.error() {
            None => "an envelope tool's success (ok: true): read its result".to_owned(),
            Some(error) => {
                let category = error.category();
                format!(
                    "an envelope tool's failure (ok: false): {} ({}): {}. {}",
                    error.code(),
                    category.as_str(),
                    error.detail(),
                    category.recovery()
                )
            }
        },
        RestOutcome::NotContract { why } => format!("not a REST profile response: {why}"),
        _ => "an outcome this atr does not know".to_owned(),
    }
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes))
    };
    read.map_err(|err| {
        Failure::Usage(format!(
            "cannot read {}: {err}",
            printable(&path.display().to_string())
        ))
    })?;
    Ok(bytes)
}

/// The responses in a file: a HAR (a JSON object) or one `curl -i` capture.
fn read_responses(path: &Path) -> Result<Vec<Captured>, Failure> {
    let bytes = read_bytes(path)?;
    let name = if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    };
    let unusable = |why: String| Failure::Usage(format!("{}: {why}", printable(&name)));
    if bytes.trim_ascii_start().starts_with(b"{") {
        let har: Value = serde_json::from_slice(&bytes)
            .map_err(|err| unusable(format!("not a HAR file: {err}")))?;
        har_responses(&har, &name).map_err(unusable)
    } else {
        let (status, headers, body) = curl_response(&bytes).map_err(unusable)?;
        Ok(vec![Captured {
            origin: name,
            status,
            headers,
            body,
        }])
    }
}

/// Every response of a HAR 1.2 log: `log.entries[].response`.
fn har_responses(har: &Value, name: &str) -> Result<Vec<Captured>, String> {
    let entries = har
        .pointer("/log/entries")
        .and_then(Value::as_array)
        .ok_or("a HAR file has log.entries")?;
    entries
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let at = format!("entry {index}");
            let response = entry
                .get("response")
                .ok_or_else(|| format!("{at} has no response"))?;
            let status = response
                .get("status")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok())
                .and_then(|s| StatusCode::from_u16(s).ok())
                .ok_or_else(|| format!("{at}: the response status is not an HTTP status"))?;
            let mut headers = HeaderMap::new();
            for header in response
                .get("headers")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
            {
                let (Some(name), Some(value)) = (
                    header.get("name").and_then(Value::as_str),
                    header.get("value").and_then(Value::as_str),
                ) else {
                    return Err(format!("{at}: a header without a name or a value"));
                };
                append(&mut headers, name, value.as_bytes())
                    .map_err(|why| format!("{at}: {why}"))?;
            }
            let content = response.get("content");
            let text = content
                .and_then(|c| c.get("text"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let body = if content
                .and_then(|c| c.get("encoding"))
                .and_then(Value::as_str)
                == Some("base64")
            {
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .map_err(|err| format!("{at}: the base64 body does not decode: {err}"))?
            } else {
                text.as_bytes().to_vec()
            };
            let url = entry
                .pointer("/request/url")
                .and_then(Value::as_str)
                .map(|url| format!(" {url}"))
                .unwrap_or_default();
            Ok(Captured {
                origin: format!("{name} #{index}{url}"),
                status,
                headers,
                body,
            })
        })
        .collect()
}

fn append(headers: &mut HeaderMap, name: &str, value: &[u8]) -> Result<(), String> {
    let header = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("`{name}` is not a header name"))?;
    let value = HeaderValue::from_bytes(value.trim_ascii())
        .map_err(|_| format!("the value of `{name}` is not a header value"))?;
    headers.append(header, value);
    Ok(())
}

/// A response as `curl -i` prints it: status line, headers, a blank line, the body. Interim
/// (1xx) responses and a proxy's `CONNECT` answer before it are skipped.
fn curl_response(mut bytes: &[u8]) -> Result<(StatusCode, HeaderMap, Vec<u8>), String> {
    loop {
        let (head, body) = split_head(bytes).ok_or("no blank line after the headers")?;
        let mut lines = head
            .split(|&b| b == b'\n')
            .map(|line| line.strip_suffix(b"\r").unwrap_or(line));
        let status_line = lines.next().unwrap_or_default();
        let status = parse_status_line(status_line)?;
        let mut headers = HeaderMap::new();
        for line in lines {
            let colon = line
                .iter()
                .position(|&b| b == b':')
                .ok_or("a header line without a colon")?;
            let name = std::str::from_utf8(&line[..colon])
                .map_err(|_| "a header name that is not ASCII")?;
            append(&mut headers, name, &line[colon + 1..])?;
        }
        let another = body.starts_with(b"HTTP/");
        if another && (status.is_informational() || status == StatusCode::OK && headers.is_empty())
        {
            bytes = body;
            continue;
        }
        return Ok((status, headers, body.to_vec()));
    }
}

/// The header block and what follows its blank line (CRLF or LF).
fn split_head(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let (at, len) = match (crlf, lf) {
        (Some(a), Some(b)) => {
            if a.0 <= b.0 {
                a
            } else {
                b
            }
        }
        (a, b) => a.or(b)?,
    };
    Some((&bytes[..at], &bytes[at + len..]))
}

/// `HTTP/1.1 202 Accepted`, `HTTP/2 202`.
fn parse_status_line(line: &[u8]) -> Result<StatusCode, String> {
    let line = std::str::from_utf8(line).map_err(|_| "a status line that is not text")?;
    let mut parts = line.split_ascii_whitespace();
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/") {
        return Err(format!(
            "`{}` is not an HTTP status line (capture with `curl -i`)",
            line.chars().take(40).collect::<String>()
        ));
    }
    parts
        .next()
        .filter(|code| code.len() == 3)
        .and_then(|code| code.parse::<u16>().ok())
        .and_then(|code| StatusCode::from_u16(code).ok())
        .ok_or_else(|| format!("`{line}` has no status code"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_captures_skip_interim_responses_and_keep_the_body() {
        let capture = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/2 202\r\ncontent-type: application/json\r\nretry-after: 120\r\n\r\n{\"a\":1}\r\n\r\n";
        let (status, headers, body) = curl_response(capture).unwrap();
        assert_eq!(status, 202);
        assert_eq!(headers["retry-after"], "120");
        assert_eq!(body, b"{\"a\":1}\r\n\r\n");
        let lf = b"HTTP/1.1 401 Unauthorized\nwww-authenticate: Bearer realm=\"api\"\n\n";
        assert_eq!(curl_response(lf).unwrap().0, 401);
        for broken in [
            &b"{}"[..],
            b"HTTP/1.1\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nnocolon\r\n\r\n",
            b"hello",
        ] {
            assert!(curl_response(broken).is_err(), "{broken:?}");
        }
    }
}
