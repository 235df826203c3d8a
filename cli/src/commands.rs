//! `atr schema`, `atr mcp` and `atr migrate`.

use std::io::{Read, Write};
use std::path::Path;

use crate::ordered::Ordered;
use agent_tool_result::document::{self, Document};
use agent_tool_result::guarantee::{GuaranteeResult, Refusal};
use agent_tool_result::legacy::Migration;
use agent_tool_result::mcp::{CallToolResult, Content, McpRevision};
use agent_tool_result::{Envelope, JsonObject, Observation};
use serde_json::Value;

/// Why a command did not succeed.
pub enum Failure {
    /// The input breaks the contract (exit 1).
    Invalid(String),
    /// The input breaks the contract and the report on stdout already says how (exit 1,
    /// nothing more on stderr).
    Reported,
    /// A usage or I/O error (exit 2).
    Usage(String),
}

/// The schemas `atr schema` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaKind {
    /// The result envelope schema, exactly as shipped.
    Envelope,
    /// The guarantee result schema, exactly as shipped.
    Guarantee,
    /// A tool's MCP outputSchema, for the result schema given with --result-schema.
    Output,
}

pub(crate) fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(text.as_bytes())
        .and_then(|()| {
            if text.ends_with('\n') {
                Ok(())
            } else {
                out.write_all(b"\n")
            }
        })
        .and_then(|()| out.flush());
    match written {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::Usage(format!(
            "cannot write to standard output: {err}"
        ))),
        _ => Ok(()),
    }
}

/// An error and every `source()` under it, joined: what the user needs to read, once each.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Reads a document: an I/O error is a usage error (exit 2); bytes that are not UTF-8 are an
/// invalid document (exit 1), as they are to `atr validate`.
fn read(path: &Path) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes))
    };
    let shown = crate::printable::printable(&path.display().to_string()).into_owned();
    read.map_err(|err| Failure::Usage(format!("cannot read {shown}: {err}")))?;
    String::from_utf8(bytes).map_err(|err| {
        Failure::Invalid(format!(
            "{shown}: {}",
            crate::check::not_utf8(&err.utf8_error())
        ))
    })
}

fn read_json(path: &Path) -> Result<Value, Failure> {
    serde_json::from_str(&read(path)?)
        .map_err(|err| Failure::Invalid(format!("{} is not JSON: {err}", path.display())))
}

/// `atr schema [envelope|output --result-schema FILE]`.
pub fn schema(kind: SchemaKind, result_schema: Option<&Path>) -> Result<(), Failure> {
    if kind != SchemaKind::Output && result_schema.is_some() {
        return Err(Failure::Usage(
            "--result-schema applies to `atr schema output` only (a tool's outputSchema)"
                .to_owned(),
        ));
    }
    match kind {
        SchemaKind::Envelope => print(agent_tool_result::schema::ENVELOPE_SCHEMA),
        SchemaKind::Guarantee => print(agent_tool_result::schema::GUARANTEE_SCHEMA),
        SchemaKind::Output => {
            let path = result_schema.ok_or_else(|| {
                Failure::Usage("`atr schema output` needs --result-schema FILE".to_owned())
            })?;
            let result = read_json(path)?;
            let schema = agent_tool_result::schema::output_schema_for(&result)
                .map_err(|err| Failure::Invalid(format!("{}: {}", path.display(), chain(&err))))?;
            let text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
            print(&text)
        }
    }
}

/// `atr mcp FILE|-` and `atr mcp --read FILE|-`.
pub fn mcp(input: &Path, read_back: bool, revision: &str) -> Result<(), Failure> {
    let revision: McpRevision = revision
        .parse()
        .map_err(|err| Failure::Usage(format!("{err}")))?;
    let text = read(input)?;
    let invalid = |err: &dyn std::error::Error| {
        Failure::Invalid(format!("{}: {}", input.display(), chain(err)))
    };
    if read_back {
        let result = CallToolResult::from_json(&text).map_err(|err| invalid(&err))?;
        let carried = result.structured_content().or_else(|| {
            result.content().iter().find_map(|block| match block {
                Content::Text(text) => Some(text.text()),
                _ => None,
            })
        });
        let json = match carried.map(|text| (text, document::of(text))) {
            Some((text, Document::Guarantee | Document::Refusal)) => {
                // Checked as the contract says, then written as carried, members in order.
                result.answer::<JsonObject>().map_err(|err| invalid(&err))?;
                let ordered: Ordered =
                    serde_json::from_str(text).expect("a checked answer is JSON");
                serde_json::to_string(&ordered).expect("JSON writes")
            }
            _ => result
                .envelope::<Ordered>()
                .map_err(|err| invalid(&err))?
                .to_json()
                .expect("an envelope that was read writes back"),
        };
        return print(&json);
    }
    let result = match document::of(&text) {
        Document::Guarantee => {
            let read =
                GuaranteeResult::<JsonObject>::from_json(&text).map_err(|err| invalid(&err))?;
            return print(&guarantee_in_order(&text, &read, revision));
        }
        Document::Refusal => {
            let read = Refusal::from_json(&text).map_err(|err| invalid(&err))?;
            CallToolResult::from_refusal_for(&read, revision)
        }
        Document::Envelope => {
            // Checked as the contract says, then projected with the payload's members in the
            // order the tool wrote them.
            Envelope::<Value>::from_json(&text).map_err(|err| invalid(&err))?;
            let read = Envelope::<Ordered>::from_json(&text).map_err(|err| invalid(&err))?;
            CallToolResult::from_envelope_for(&read, revision)
                .expect("an envelope that was read writes back")
        }
    };
    print(&result.to_json())
}

/// The `tools/call` result of a guarantee result, as the library projects it (the contract's
/// members as it writes them, `isError` for a deny), with the tool's own fields in the order
/// the tool wrote them: the library's reader keeps them in a sorted map.
fn guarantee_in_order(
    text: &str,
    read: &GuaranteeResult<JsonObject>,
    revision: McpRevision,
) -> String {
    let contract = read
        .clone()
        .with_fields(JsonObject::new())
        .map(|bare| bare.to_json().expect("a result that was read writes back"))
        .expect("no fields break no invariant");
    let (Ok(Ordered::Object(mut members)), Ok(Ordered::Object(written))) = (
        serde_json::from_str::<Ordered>(&contract),
        serde_json::from_str::<Ordered>(text),
    ) else {
        unreachable!("a guarantee result is an object")
    };
    let names: Vec<String> = members.iter().map(|(name, _)| name.clone()).collect();
    members.extend(
        written.into_iter().filter(|(name, _)| {
            !GUARANTEE_MEMBERS.contains(&name.as_str()) && !names.contains(name)
        }),
    );
    let structured = Ordered::Object(members);
    let json = serde_json::to_string(&structured).expect("JSON writes");
    let mut call = Vec::new();
    if revision.has_result_type() {
        call.push((
            "resultType".to_owned(),
            Ordered::String("complete".to_owned()),
        ));
    }
    let block = Ordered::Object(vec![
        ("type".to_owned(), Ordered::String("text".to_owned())),
        ("text".to_owned(), Ordered::String(json)),
    ]);
    call.push(("content".to_owned(), Ordered::Array(vec![block])));
    if revision.has_structured_content() {
        call.push(("structuredContent".to_owned(), structured));
    }
    call.push(("isError".to_owned(), Ordered::Bool(read.is_deny())));
    serde_json::to_string(&Ordered::Object(call)).expect("JSON writes")
}

/// The guarantee result's own members, which the contract writes.
const GUARANTEE_MEMBERS: &[&str] = &[
    "schemaVersion",
    "settlement",
    "policy",
    "impact",
    "recovery",
];

/// `atr migrate [--tool NAME] [--session ID] [--last-observation FILE] FILE|-`.
pub fn migrate(
    input: &Path,
    tool: Option<String>,
    session: Option<String>,
    last_observation: Option<&Path>,
) -> Result<(), Failure> {
    let legacy = read_json(input)?;
    let mut migration = Migration::new();
    if let Some(tool) = tool {
        migration = migration.with_tool(tool);
    }
    if let Some(session) = session {
        migration = migration.with_session(session);
    }
    if let Some(path) = last_observation {
        let observation = Observation::try_from(read_json(path)?)
            .map_err(|err| Failure::Invalid(format!("{}: {}", path.display(), chain(&err))))?;
        migration = migration.with_last_observation(observation);
    }
    if legacy
        .get("data")
        .is_some_and(|data| !data.is_object() && !data.is_null())
    {
        eprintln!("atr: note: `data` is not a JSON object, so the envelope leaves it out");
    }
    let envelope = migration
        .migrate(&legacy)
        .map_err(|err| Failure::Invalid(format!("{}: {}", input.display(), chain(&err))))?;
    print(&envelope.to_json().expect("a migrated envelope serializes"))
}
