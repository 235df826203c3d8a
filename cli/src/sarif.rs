//! `--format sarif`: one SARIF 2.1.0 log, written as findings come (memory stays flat). The
//! tool's rules are the contract's rules, in their table order, each with its description and
//! its page on docs.rs (what a code-scanning alert shows and links to); each finding is one result
//! with its rule, level, message, the file's line and column, and the JSON Pointer as a
//! logical location. A severity's name is its SARIF level (`error`, `warning`).

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::session::CallSite;
use agent_tool_result::rule::{Finding, Rule};
use serde_json::json;

use crate::check::Summary;

/// The SARIF version written.
pub const VERSION: &str = "2.1.0";

/// The schema a SARIF 2.1.0 log names.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Writes the log's opening: the version, the tool and its rules, and the start of `results`.
pub fn header(out: &mut impl Write) -> io::Result<()> {
    let rules: Vec<_> = Rule::ALL
        .iter()
        .map(|rule| {
            json!({
                "id": rule.as_str(),
                "name": rule.as_str(),
                "shortDescription": { "text": rule.summary() },
                "fullDescription": {
                    "text": rule.description().replace('`', ""),
                    "markdown": rule.description(),
                },
                "help": {
                    "text": format!("{} (atr explain {rule})", rule.summary()),
                    "markdown": format!("{}\n\n`atr explain {rule}` says more.", rule.description()),
                },
                "helpUri": rule.help_url(),
                "defaultConfiguration": { "level": rule.severity().as_str() },
            })
        })
        .collect();
    let driver = json!({
        "name": "atr",
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "informationUri": env!("CARGO_PKG_REPOSITORY"),
        "rules": rules,
    });
    write!(
        out,
        r#"{{"$schema":"{SCHEMA}","version":"{VERSION}","runs":[{{"tool":{{"driver":{driver}}},"results":["#
    )
}

/// Writes one result; `first` says whether it is the first (no comma before it).
pub fn result(
    out: &mut impl Write,
    first: bool,
    file: &str,
    (line, column): (usize, usize),
    finding: &Finding,
    call: Option<&CallSite>,
) -> io::Result<()> {
    let rule = finding.rule();
    let index = Rule::ALL.iter().position(|r| *r == rule).unwrap_or(0);
    let mut location = json!({
        "physicalLocation": {
            "artifactLocation": { "uri": uri(file) },
            "region": { "startLine": line, "startColumn": column },
        },
    });
    if !finding.pointer().is_empty() {
        location["logicalLocations"] = json!([{
            "fullyQualifiedName": finding.pointer(),
            "kind": "object",
        }]);
    }
    let mut result = json!({
        "ruleId": rule.as_str(),
        "ruleIndex": index,
        "level": finding.severity().as_str(),
        "message": { "text": finding.message() },
        "locations": [location],
    });
    // A finding in a recorded session names the call it is about.
    if let Some(call) = call {
        result["properties"] = json!({ "callId": call.id.to_string(), "tool": &*call.tool });
    }
    if !first {
        out.write_all(b",")?;
    }
    serde_json::to_writer(&mut *out, &result)?;
    Ok(())
}

/// Closes the log: whether every input could be read, and the counts as run properties.
pub fn footer(out: &mut impl Write, summary: &Summary) -> io::Result<()> {
    let invocation = json!({ "executionSuccessful": summary.io_errors == 0 });
    let properties = serde_json::to_value(summary)?;
    writeln!(
        out,
        r#"],"invocations":[{invocation}],"properties":{properties}}}]}}"#
    )
}

/// A file label as a URI reference: a relative path stays relative (to the directory the
/// tool ran in, as code-scanning uploads expect), an absolute one becomes a `file:` URI, and
/// every byte outside the unreserved set and `/` is percent-encoded.
fn uri(file: &str) -> String {
    let mut out = String::with_capacity(file.len() + 8);
    if file.starts_with('/') {
        out.push_str("file://");
    }
    for byte in file.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::uri;

    #[test]
    fn file_labels_become_uri_references() {
        assert_eq!(uri("results/a.json"), "results/a.json");
        assert_eq!(uri("my results/ü.json"), "my%20results/%C3%BC.json");
        assert_eq!(uri("/tmp/a b.ndjson"), "file:///tmp/a%20b.ndjson");
        assert_eq!(uri("50%.json"), "50%25.json");
    }
}
