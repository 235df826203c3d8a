//! A recorded MCP session, read in order: each response paired with the request it answers by
//! id, so that a `tools/call` result is known as the result of its tool, held to the contract
//! and to the `outputSchema` the session's `tools/list` advertised for the tool (error results
//! too, as strict clients check them). The results of other methods are passed over by
//! method; a response whose request the input does not hold (a capture of one response) is a
//! tool result when it has the shape of one.
//!
//! Reading a message ([`read`]) is done on any thread; pairing ([`Session::resolve`]) in input
//! order, one session an input. A reading thread checks a result against its tool's schema
//! ahead when the call's request is in the same chunk and the session has published its
//! schemas ([`Schemas`]); the pairing takes that check when the session's schemas are still
//! those the reader used, and checks the result itself otherwise.

use std::sync::Arc;

use agent_tool_result::Rule;
use agent_tool_result::mcp::McpRevision;
use agent_tool_result::rule::Finding;
use agent_tool_result::validate::{OutputSchema, Report, Validator};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

/// The maps of a session, keyed by ids and tool names from its input: a hasher both fast and
/// seeded per process.
type HashMap<K, V> = foldhash::HashMap<K, V>;

use crate::jsonrpc::{self, Id, Message, Request};

/// A message, read for its session.
pub enum Read {
    /// A request.
    Request {
        /// Its id.
        id: Id,
        /// What it asked.
        asked: Asked,
    },
    /// A notification.
    Notification,
    /// A response with a result.
    Result {
        /// The id of the request it answers.
        id: Id,
        /// Where the result starts in the document (line, column).
        base: (usize, usize),
        /// The result.
        value: ResultValue,
    },
    /// An error response.
    Error {
        /// The id of the request it answers.
        id: Id,
    },
    /// Not a JSON-RPC 2.0 message: its finding.
    Broken(Report),
}

/// A response's result.
pub enum ResultValue {
    /// Not an object: which JSON type it is.
    NotObject(&'static str),
    /// An object.
    Object {
        /// Its JSON text.
        text: Text,
        /// Its findings as a `tools/call` result, placed in the document.
        report: Report,
        /// Whether it has a member of a `tools/call` result.
        shaped: bool,
        /// Whether it names `resultType` at its top.
        result_type: bool,
        /// Its check against its tool's schema, made ahead by the reader.
        ahead: Option<Ahead>,
    },
}

/// The call a finding is about: the request's id and the tool it named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// The id.
    pub id: Id,
    /// The tool (empty when the request named none).
    pub tool: Arc<str>,
}

/// What a message comes to in its session.
pub enum Resolved {
    /// A verdict: a tool result (with its call, when its request is in the session) or a
    /// broken message.
    Checked {
        /// The findings.
        report: Report,
        /// The call.
        call: Option<CallSite>,
    },
    /// A message that holds no tool result.
    PassedOver,
}

/// The `outputSchema`s a session's listings advertised, as of its `generation`th listing.
#[derive(Clone, Default)]
pub struct Schemas {
    generation: u64,
    tools: Arc<HashMap<Arc<str>, Arc<OutputSchema>>>,
}

impl Schemas {
    /// Which listing these are as of.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A tool's name, shared with the listing's when the listing named it.
    fn tool_name(&self, name: &str) -> Arc<str> {
        self.tools
            .get_key_value(name)
            .map_or_else(|| Arc::from(name), |(listed, _)| Arc::clone(listed))
    }
}

/// A result checked ahead against its tool's schema: under which schemas, for which tool.
pub struct Ahead {
    generation: u64,
    tool: Arc<str>,
    report: Report,
}

/// What a reading thread knows of a chunk's session: the schemas published when it began,
/// the calls asked in the chunk so far (their tools, by id), and the chunk's bytes, which the
/// texts its results keep share.
pub struct Chunk<'a> {
    schemas: &'a Schemas,
    asked: HashMap<Id, Arc<str>>,
    source: Arc<Vec<u8>>,
}

impl<'a> Chunk<'a> {
    /// A chunk of `source` read under `schemas`.
    pub fn new(schemas: &'a Schemas, source: Arc<Vec<u8>>) -> Self {
        Chunk {
            schemas,
            asked: HashMap::default(),
            source,
        }
    }

    /// `part` of the chunk's text, kept without a copy (a copy when `part` is not the
    /// chunk's).
    fn keep(&self, part: &str) -> Text {
        let start = (part.as_ptr() as usize).checked_sub(self.source.as_ptr() as usize);
        match start.filter(|start| start + part.len() <= self.source.len()) {
            Some(start) => Text::Shared {
                source: Arc::clone(&self.source),
                range: start..start + part.len(),
            },
            None => Text::Owned(part.to_owned()),
        }
    }
}

/// A result's text, kept for the pairing: most often a range of its chunk's bytes, shared
/// with the chunk, so that keeping it neither copies it nor frees it on another thread.
pub enum Text {
    /// A range of a chunk's bytes.
    Shared {
        /// The chunk's bytes.
        source: Arc<Vec<u8>>,
        /// Where the text is in them.
        range: std::ops::Range<usize>,
    },
    /// A text of its own.
    Owned(String),
}

impl Text {
    /// The text.
    fn as_str(&self) -> &str {
        match self {
            // A range of text already read as UTF-8, at a JSON value's bounds.
            Text::Shared { source, range } => std::str::from_utf8(&source[range.clone()])
                .expect("a chunk's documents are UTF-8 before their messages are read"),
            Text::Owned(text) => text,
        }
    }
}

/// Reads `message`, one of `text`'s, for its session: what pairing needs of it, or the
/// findings that need no pairing. `None` when a result the framing did not read is not JSON:
/// then neither is `text`, and it is no message at all.
pub fn read(
    validator: &Validator,
    chunk: &mut Chunk<'_>,
    text: &str,
    message: Message<'_>,
) -> Option<Read> {
    Some(match message {
        Message::Request(Request {
            id,
            method,
            tool,
            revision,
        }) => {
            let asked = match method.as_ref() {
                "tools/call" => {
                    let tool = tool.map(|tool| chunk.schemas.tool_name(&tool));
                    if let Some(tool) = &tool {
                        chunk.asked.insert(id.clone(), Arc::clone(tool));
                    }
                    Asked::Call { tool, revision }
                }
                "tools/list" => Asked::List,
                "initialize" => Asked::Initialize,
                _ => Asked::Other,
            };
            Read::Request { id, asked }
        }
        Message::Notification => Read::Notification,
        Message::Error { id } => Read::Error { id },
        Message::Broken {
            pointer,
            message,
            offset,
        } => Read::Broken(jsonrpc::broken(text, &pointer, &message, offset)),
        Message::Result {
            id,
            text: result,
            offset,
        } => {
            let base = jsonrpc::position(text, offset);
            let tool = chunk.asked.get(&id).cloned();
            let value = match result.as_bytes().first() {
                Some(b'{') => object_result(validator, chunk, tool, result, base)?,
                Some(b'[') => ResultValue::NotObject("an array"),
                Some(b'"') => ResultValue::NotObject("a string"),
                Some(b'n') => ResultValue::NotObject("null"),
                Some(b't' | b'f') => ResultValue::NotObject("a boolean"),
                _ => ResultValue::NotObject("a number"),
            };
            // Its call is answered only once the result is known to be JSON: a text read
            // again keeps what the chunk knew.
            chunk.asked.remove(&id);
            Read::Result { id, base, value }
        }
    })
}

/// An object result, read ahead on the reading thread: checked as a `tools/call` result
/// (what the session makes of it is known only once it is paired), with its
/// `structuredContent` as the check parsed it, and whether it has a member of a tool result
/// (`content`, `structuredContent` or `isError`, whatever its value: a broken tool result is
/// still one). `None` when the text is not JSON (the framing only delimited it): a check that
/// finds nothing wrong read all of it, one that finds something may have stopped early, and
/// the text is then read for JSON alone.
fn object_result(
    validator: &Validator,
    chunk: &Chunk<'_>,
    tool: Option<Arc<str>>,
    text: &str,
    base: (usize, usize),
) -> Option<ResultValue> {
    let checked = validator.check_call_tool_result_text(text);
    if !checked.report().violations().is_empty()
        && serde_json::from_str::<IgnoredAny>(text).is_err()
    {
        return None;
    }
    // The call is in this chunk and its tool has a schema: checked here, on this thread.
    let ahead = tool.and_then(|tool| {
        let schema = chunk.schemas.tools.get(&*tool)?;
        let findings = checked.check_output_schema(schema, text);
        Some(Ahead {
            generation: chunk.schemas.generation,
            tool,
            report: jsonrpc::placed(&Report::new(findings, Vec::new()), base),
        })
    });
    let (shaped, result_type) = (
        checked.has_tool_result_members(),
        checked.names_result_type(),
    );
    let (report, _structured) = checked.into_parts();
    // The parsed structuredContent is freed here, on the thread that made it (a tree of
    // small allocations, costly to free on another); the pairing reads the text again in the
    // rare case it checks the result itself.
    Some(ResultValue::Object {
        text: chunk.keep(text),
        report: jsonrpc::placed(&report, base),
        shaped,
        result_type,
        ahead,
    })
}

/// The revision an `initialize` result names (`protocolVersion`), when it is one this crate
/// knows.
fn negotiated(value: &ResultValue) -> Option<McpRevision> {
    #[derive(Deserialize)]
    struct Initialized {
        #[serde(rename = "protocolVersion")]
        version: String,
    }
    let ResultValue::Object { text, .. } = value else {
        return None;
    };
    let initialized: Initialized = serde_json::from_str(text.as_str()).ok()?;
    initialized.version.parse().ok()
}

/// What a request asked, kept until its response.
pub enum Asked {
    /// `tools/call`: the tool it named, and the revision its `_meta` named.
    Call {
        /// The tool.
        tool: Option<Arc<str>>,
        /// The revision.
        revision: Option<McpRevision>,
    },
    /// `tools/list`.
    List,
    /// `initialize`, whose result names the revision the session negotiated.
    Initialize,
    /// Any other method.
    Other,
}

/// One input's session: the requests not yet answered, the schemas its `tools/list`
/// advertised, and the revision its `initialize` negotiated.
#[derive(Default)]
pub struct Session {
    asked: HashMap<Id, Asked>,
    schemas: Schemas,
    revision: Option<McpRevision>,
}

impl Session {
    /// The schemas the session's listings advertised so far.
    pub fn schemas(&self) -> &Schemas {
        &self.schemas
    }

    /// Pairs `read` with what came before it in the session.
    pub fn resolve(&mut self, read: Read) -> Resolved {
        match read {
            Read::Request { id, asked } => {
                self.asked.insert(id, asked);
                Resolved::PassedOver
            }
            Read::Notification => Resolved::PassedOver,
            Read::Error { id } => {
                self.asked.remove(&id);
                Resolved::PassedOver
            }
            Read::Broken(report) => Resolved::Checked { report, call: None },
            Read::Result { id, base, value } => match self.asked.remove(&id) {
                Some(Asked::Call { tool, revision }) => {
                    let revision = revision.or(self.revision);
                    self.call_result(id, tool, revision, base, value)
                }
                Some(Asked::List) => self.listed(base, &value),
                Some(Asked::Initialize) => {
                    self.revision = negotiated(&value);
                    Resolved::PassedOver
                }
                Some(Asked::Other) => Resolved::PassedOver,
                // No request in the input: a tool result by its shape.
                None => match value {
                    ResultValue::Object {
                        report,
                        shaped: true,
                        ..
                    } => Resolved::Checked { report, call: None },
                    _ => Resolved::PassedOver,
                },
            },
        }
    }

    /// A `tools/call` result: the contract, the revision it was asked under (its request's,
    /// else the session's), and the tool's advertised schema.
    fn call_result(
        &self,
        id: Id,
        tool: Option<Arc<str>>,
        revision: Option<McpRevision>,
        base: (usize, usize),
        value: ResultValue,
    ) -> Resolved {
        let call = CallSite {
            id,
            tool: tool.unwrap_or_else(|| Arc::from("")),
        };
        let report = match value {
            ResultValue::NotObject(kind) => {
                let (line, column) = base;
                let message = format!(
                    "the result of tools/call {} (tool `{}`) is {kind}: a tools/call result is \
                     an object with a content array",
                    call.id, call.tool
                );
                Report::new(
                    vec![Finding::new(Rule::McpResultShape, "/result", message).at(line, column)],
                    Vec::new(),
                )
            }
            ResultValue::Object {
                text,
                mut report,
                ahead,
                result_type,
                ..
            } => {
                if let Some(revision) = revision.filter(|r| r.has_result_type() && !result_type) {
                    let (line, column) = base;
                    let message = format!(
                        "the result of tools/call {} (tool `{}`) names no resultType: under MCP \
                         {revision}, which the session negotiated, a result says whether it is \
                         complete",
                        call.id, call.tool
                    );
                    let mut violations = report.violations().to_vec();
                    violations.push(
                        Finding::new(Rule::McpResultShape, "/result", message).at(line, column),
                    );
                    report = Report::new(violations, report.lints().to_vec());
                }
                let advertised = match (ahead, self.schemas.tools.get(&*call.tool)) {
                    // Checked ahead under the schemas that hold now, for this call's tool.
                    (Some(ahead), _)
                        if ahead.generation == self.schemas.generation
                            && ahead.tool == call.tool =>
                    {
                        Some(ahead.report)
                    }
                    (_, Some(schema)) => Some(jsonrpc::placed(
                        &Report::new(schema.check_text(text.as_str()), Vec::new()),
                        base,
                    )),
                    (_, None) => None,
                };
                match advertised {
                    Some(advertised) if !advertised.violations().is_empty() => {
                        let mut violations = report.violations().to_vec();
                        violations.extend_from_slice(advertised.violations());
                        Report::new(violations, report.lints().to_vec())
                    }
                    _ => report,
                }
            }
        };
        Resolved::Checked {
            report,
            call: Some(call),
        }
    }

    /// A `tools/list` result: each tool's `outputSchema`, compiled for its calls to come (a
    /// page adds its tools; a later listing replaces a tool's schema). A schema that does not
    /// compile is a finding of the listing.
    fn listed(&mut self, base: (usize, usize), value: &ResultValue) -> Resolved {
        #[derive(Deserialize)]
        struct Listed {
            tools: Vec<Tool>,
        }
        #[derive(Deserialize)]
        struct Tool {
            name: String,
            #[serde(rename = "outputSchema")]
            output_schema: Option<Value>,
        }
        let ResultValue::Object { text, .. } = value else {
            return Resolved::PassedOver;
        };
        let Ok(listed) = serde_json::from_str::<Listed>(text.as_str()) else {
            return Resolved::PassedOver;
        };
        let mut findings = Vec::new();
        let mut tools = HashMap::clone(&self.schemas.tools);
        for (at, tool) in listed.tools.into_iter().enumerate() {
            tools.remove(tool.name.as_str());
            let Some(schema) = tool.output_schema else {
                continue;
            };
            match OutputSchema::new(tool.name.clone(), &schema) {
                Ok(schema) => {
                    tools.insert(Arc::from(tool.name), Arc::new(schema));
                }
                Err(err) => findings.push(Finding::new(
                    Rule::OutputSchema,
                    format!("/tools/{at}/outputSchema"),
                    err.to_string(),
                )),
            }
        }
        self.schemas = Schemas {
            generation: self.schemas.generation + 1,
            tools: Arc::new(tools),
        };
        if findings.is_empty() {
            return Resolved::PassedOver;
        }
        let (line, column) = base;
        let findings = findings.into_iter().map(|f| f.at(1, 1)).collect();
        Resolved::Checked {
            report: jsonrpc::placed(&Report::new(findings, Vec::new()), (line, column)),
            call: None,
        }
    }
}

#[cfg(test)]
mod tests;
