//! A recorded MCP session, read in order: each response paired with the request it answers by
//! id, so that a `tools/call` result is known as the result of its tool, held to the contract
//! and to the `outputSchema` the session's `tools/list` advertised for the tool (error results
//! too, as strict clients check them). The results of other methods are passed over by
//! method; a response whose request the input does not hold (a capture of one response) is a
//! tool result when it has the shape of one.
//!
//! Reading a message ([`read`]) is done on any thread; pairing ([`Session::resolve`]) in input
//! order, one session an input.

use std::collections::HashMap;

use agent_tool_result::Rule;
use agent_tool_result::rule::Finding;
use agent_tool_result::validate::{OutputSchema, Report, Validator};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::jsonrpc::{self, Id, Message};

/// A message, read for its session.
pub enum Read {
    /// A request.
    Request {
        /// Its id.
        id: Id,
        /// Its method.
        method: String,
        /// The tool a `tools/call` names.
        tool: Option<String>,
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
        text: String,
        /// Its findings as a `tools/call` result, placed in the document, read ahead when it
        /// has the shape of one (`content`, `structuredContent` or `isError`).
        report: Option<Report>,
    },
}

/// The call a finding is about: the request's id and the tool it named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// The id, as JSON.
    pub id: String,
    /// The tool.
    pub tool: String,
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

/// Reads the messages of `text` for its session: what pairing needs of each, and the
/// findings that need no pairing.
pub fn read(validator: &Validator, text: &str, messages: Vec<Message<'_>>) -> Vec<Read> {
    messages
        .into_iter()
        .map(|message| match message {
            Message::Request { id, method, tool } => Read::Request { id, method, tool },
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
                let value = match result.as_bytes().first() {
                    Some(b'{') => ResultValue::Object {
                        text: result.to_owned(),
                        report: has_tool_result_shape(result).then(|| {
                            jsonrpc::placed(&validator.validate_call_tool_result_text(result), base)
                        }),
                    },
                    Some(b'[') => ResultValue::NotObject("an array"),
                    Some(b'"') => ResultValue::NotObject("a string"),
                    Some(b'n') => ResultValue::NotObject("null"),
                    Some(b't' | b'f') => ResultValue::NotObject("a boolean"),
                    _ => ResultValue::NotObject("a number"),
                };
                Read::Result { id, base, value }
            }
        })
        .collect()
}

/// Whether a result has a member of a `tools/call` result (`content`, `structuredContent` or
/// `isError`), whatever its value (`null` too: a broken tool result is still one).
fn has_tool_result_shape(text: &str) -> bool {
    struct Names;
    impl<'de> serde::de::Visitor<'de> for Names {
        type Value = bool;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut found = false;
            while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                found |= matches!(name.as_ref(), "content" | "structuredContent" | "isError");
                map.next_value::<IgnoredAny>()?;
            }
            Ok(found)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde::Deserializer::deserialize_map(&mut deserializer, Names).unwrap_or(false)
}

/// What a request asked, kept until its response.
enum Asked {
    Call(Option<String>),
    List,
    Other,
}

/// One input's session: the requests not yet answered, and the schemas its `tools/list`
/// advertised.
#[derive(Default)]
pub struct Session {
    asked: HashMap<Id, Asked>,
    schemas: HashMap<String, OutputSchema>,
}

impl Session {
    /// Pairs `read` with what came before it in the session.
    pub fn resolve(&mut self, validator: &Validator, read: Read) -> Resolved {
        match read {
            Read::Request { id, method, tool } => {
                let asked = match method.as_str() {
                    "tools/call" => Asked::Call(tool),
                    "tools/list" => Asked::List,
                    _ => Asked::Other,
                };
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
                Some(Asked::Call(tool)) => self.call_result(validator, &id, tool, base, value),
                Some(Asked::List) => self.listed(base, &value),
                Some(Asked::Other) => Resolved::PassedOver,
                // No request in the input: a tool result by its shape.
                None => match value {
                    ResultValue::Object {
                        report: Some(report),
                        ..
                    } => Resolved::Checked { report, call: None },
                    _ => Resolved::PassedOver,
                },
            },
        }
    }

    /// A `tools/call` result: the contract, and the tool's advertised schema.
    fn call_result(
        &self,
        validator: &Validator,
        id: &Id,
        tool: Option<String>,
        base: (usize, usize),
        value: ResultValue,
    ) -> Resolved {
        let call = CallSite {
            id: id.to_string(),
            tool: tool.unwrap_or_default(),
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
            ResultValue::Object { text, report } => {
                let report = report.unwrap_or_else(|| {
                    jsonrpc::placed(&validator.validate_call_tool_result_text(&text), base)
                });
                match self.schemas.get(&call.tool) {
                    Some(schema) => {
                        let advertised = jsonrpc::placed(
                            &Report::new(schema.check_text(&text), Vec::new()),
                            base,
                        );
                        let mut violations = report.violations().to_vec();
                        violations.extend_from_slice(advertised.violations());
                        Report::new(violations, report.lints().to_vec())
                    }
                    None => report,
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
        let Ok(listed) = serde_json::from_str::<Listed>(text) else {
            return Resolved::PassedOver;
        };
        let mut findings = Vec::new();
        for (at, tool) in listed.tools.into_iter().enumerate() {
            self.schemas.remove(&tool.name);
            let Some(schema) = tool.output_schema else {
                continue;
            };
            match OutputSchema::new(tool.name.clone(), &schema) {
                Ok(schema) => {
                    self.schemas.insert(tool.name, schema);
                }
                Err(err) => findings.push(Finding::new(
                    Rule::OutputSchema,
                    format!("/tools/{at}/outputSchema"),
                    err.to_string(),
                )),
            }
        }
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
