//! `atr classify`: what an answer means to an agent. A captured REST response (as `curl -i`
//! prints it, or every response in a HAR file), with whether it keeps the REST profile; a
//! result document or a `tools/call` result; or, with `--ndjson`, a document a line (a
//! recorded session's results). `--format json` prints the one outcome form of
//! [`agent_tool_result::decision::Reading`].

use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use agent_tool_result::decision::{Reading, Why};
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

/// What an input holds, one answer at a time.
enum Answer {
    /// A REST response.
    Response(Captured),
    /// A result document or a `tools/call` result.
    Document { origin: String, text: Vec<u8> },
}

/// What `atr classify` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Form {
    /// A line per answer saying what it means and what to do next, then a summary.
    Human,
    /// The one outcome form: a JSON object per answer, as the Python and TypeScript readers
    /// print it (`decision`, `kind`, and what the decision rests on), after its `source`.
    Json,
}

/// `atr classify [--openapi FILE] [--format F] [--ndjson] INPUT...`: prints each answer's
/// outcome and next step, by the producer's problem types as its OpenAPI document declares
/// them (the profile's own by default); `Invalid` when any REST response breaks the profile,
/// `Usage` when an input cannot be read or parsed as a response, or the document declares no
/// problem type of the profile.
pub fn classify(
    inputs: &[std::path::PathBuf],
    openapi: Option<&Path>,
    form: Form,
    ndjson: bool,
) -> Result<(), Failure> {
    let types = match openapi {
        Some(path) => problem_types(path)?,
        None => ProblemTypes::default(),
    };
    let mut report = String::new();
    let (mut breaking, mut responses, mut documents) = (0usize, 0usize, 0usize);
    for input in inputs {
        for answer in read_answers(input, ndjson)? {
            match answer {
                Answer::Response(captured) => {
                    responses += 1;
                    let (status, headers, body) =
                        (captured.status, &captured.headers, &captured.body);
                    let breaches = profile_breaches_with(&types, status, headers, body);
                    breaking += usize::from(!breaches.is_empty());
                    if form == Form::Json {
                        let reading = Reading::of_rest_parts(&types, status, headers, body);
                        line(&mut report, &captured.origin, &reading);
                        continue;
                    }
                    let outcome = classify_with(&types, status, headers, body);
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
                }
                Answer::Document { origin, text } => {
                    documents += 1;
                    let reading = match std::str::from_utf8(&text) {
                        Ok(text) => Reading::of_any(text),
                        Err(_) => Reading::not_contract(Why::NotJson),
                    };
                    if form == Form::Json {
                        line(&mut report, &origin, &reading);
                    } else {
                        let _ = writeln!(
                            report,
                            "{}: {}",
                            printable(&origin),
                            printable(&describe_reading(&reading))
                        );
                    }
                }
            }
        }
    }
    if form == Form::Human {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let _ = write!(
            report,
            "{responses} response{}, {breaking} breaking the REST profile",
            plural(responses)
        );
        if documents > 0 {
            let _ = write!(report, "; {documents} document{}", plural(documents));
        }
    }
    crate::commands::print(report.trim_end_matches('\n'))?;
    // The summary's last line says it all; nothing is repeated on stderr.
    if breaking > 0 {
        Err(Failure::Reported)
    } else {
        Ok(())
    }
}

/// One outcome line: the answer's source, then its reading's members.
fn line(report: &mut String, source: &str, reading: &Reading) {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        source: &'a str,
        #[serde(flatten)]
        reading: &'a Reading,
    }
    let text = serde_json::to_string(&Line { source, reading }).expect("a line serializes");
    let _ = writeln!(report, "{text}");
}

/// A document's reading, for a person.
fn describe_reading(reading: &Reading) -> String {
    let mut text = format!("{} ({})", reading.decision(), reading.kind());
    let facts = [
        reading.category().map(|c| format!("category {c}")),
        reading.code().map(|c| format!("code {c}")),
        reading.settlement().map(|s| format!("settlement {s}")),
        reading.policy().map(|p| format!("decision {p}")),
        reading.policy_code().map(|c| format!("policy code {c}")),
        reading.refusal().map(|r| format!("refusal {r}")),
        reading.retry_at().map(|at| format!("retry at {at}")),
        reading.next_tool().map(|t| format!("next tool {t}")),
        reading.why().map(|w| w.meaning().to_owned()),
    ];
    let facts: Vec<String> = facts.into_iter().flatten().collect();
    if !facts.is_empty() {
        let _ = write!(text, ": {}", facts.join(", "));
    }
    let _ = write!(text, ". {}", reading.decision().meaning());
    text
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

/// The answers in a file: with `ndjson`, a document a line (of a recorded session, each
/// response's `tools/call` result; other messages are passed over); otherwise a HAR (a JSON
/// object with `log`), one `curl -i` capture, or one document.
fn read_answers(path: &Path, ndjson: bool) -> Result<Vec<Answer>, Failure> {
    let bytes = read_bytes(path)?;
    let name = if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    };
    let unusable = |why: String| Failure::Usage(format!("{}: {why}", printable(&name)));
    if ndjson {
        return Ok(lines(&bytes, &name));
    }
    let start = bytes.trim_ascii_start();
    if start.starts_with(b"HTTP/") {
        let (status, headers, body) = curl_response(&bytes).map_err(unusable)?;
        return Ok(vec![Answer::Response(Captured {
            origin: name,
            status,
            headers,
            body,
        })]);
    }
    if start.starts_with(b"{")
        && let Ok(har) = serde_json::from_slice::<Value>(&bytes)
        && har.get("log").is_some()
    {
        let responses = har_responses(&har, &name).map_err(unusable)?;
        return Ok(responses.into_iter().map(Answer::Response).collect());
    }
    Ok(vec![Answer::Document {
        origin: name,
        text: bytes,
    }])
}

/// The documents of an NDJSON file, each named `FILE:LINE`: a JSON-RPC response carrying a
/// `tools/call` result gives its result, any other JSON-RPC message nothing.
fn lines(bytes: &[u8], name: &str) -> Vec<Answer> {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        jsonrpc: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow)]
        result: Option<&'a serde_json::value::RawValue>,
    }
    let mut answers = Vec::new();
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.trim_ascii().is_empty() {
            continue;
        }
        let message = std::str::from_utf8(line)
            .ok()
            .and_then(|text| serde_json::from_str::<Message<'_>>(text).ok())
            .filter(|message| message.jsonrpc.is_some());
        let text = match message {
            None => line,
            Some(Message {
                result: Some(result),
                ..
            }) if names_tool_result_member(result.get()) => result.get().as_bytes(),
            Some(_) => continue,
        };
        answers.push(Answer::Document {
            origin: format!("{name}:{}", index + 1),
            text: text.to_vec(),
        });
    }
    answers
}

/// Whether a JSON-RPC result names a member of a `tools/call` result at its top (`content`,
/// `structuredContent` or `isError`); one whose names cannot be read is left to its reader.
fn names_tool_result_member(result: &str) -> bool {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Names {
        content: Option<serde::de::IgnoredAny>,
        structured_content: Option<serde::de::IgnoredAny>,
        is_error: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Names>(result).map_or(true, |names| {
        names.content.is_some() || names.structured_content.is_some() || names.is_error.is_some()
    })
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
