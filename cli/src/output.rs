//! How `atr validate` reports: human, JSON lines, GitHub workflow annotations, or SARIF.

use std::io::{self, Write};

use agent_tool_result::rule::{Finding, Severity};

use crate::check::{Outcome, Summary};
use crate::printable::printable;
use crate::sarif;
use crate::session::CallSite;

/// The report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per finding, then a summary; colour on a terminal.
    Human,
    /// One JSON object per line per finding, then one summary object.
    Json,
    /// GitHub Actions workflow annotations (`::error file=...`), then a summary line.
    Github,
    /// One SARIF 2.1.0 log (for code scanning), the counts as the run's properties.
    Sarif,
}

/// Writes findings as they come, in input order, and the summary at the end. Counting never
/// depends on writing: once standard output is closed (`atr validate ... | head`), findings
/// are counted and not written, so the exit status still says what the README says.
pub struct Reporter<W: Write> {
    out: W,
    format: Format,
    colour: bool,
    /// The running counts.
    pub summary: Summary,
    /// Whether the reader went away; then nothing more is written.
    closed: bool,
    /// The first write error other than a closed pipe.
    error: Option<io::Error>,
    /// How far a SARIF log is written.
    sarif: SarifLog,
}

/// How far a SARIF log is written: its opening, then results (each after the first needs a
/// comma before it).
#[derive(Clone, Copy, PartialEq, Eq)]
enum SarifLog {
    Unopened,
    Opened,
    WithResults,
}

impl<W: Write> Reporter<W> {
    /// A reporter writing `format` to `out`, with ANSI colour when `colour`.
    pub fn new(out: W, format: Format, colour: bool) -> Self {
        Reporter {
            out,
            format,
            colour,
            summary: Summary::default(),
            closed: false,
            error: None,
            sarif: SarifLog::Unopened,
        }
    }

    /// Counts one outcome and writes its findings while the output is open.
    pub fn outcome(&mut self, outcome: Outcome) {
        let written = self.write_outcome(outcome);
        self.note(written);
    }

    /// Remembers a write error: a closed pipe stops the writing, anything else is reported.
    fn note(&mut self, written: io::Result<()>) {
        match written {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => self.closed = true,
            Err(err) => {
                self.closed = true;
                self.error.get_or_insert(err);
            }
        }
    }

    fn write_outcome(&mut self, outcome: Outcome) -> io::Result<()> {
        match outcome {
            Outcome::PassedOver => {
                self.summary.passed_over += 1;
                Ok(())
            }
            Outcome::IoError(message) => {
                self.summary.io_errors += 1;
                eprintln!("atr: {message}");
                Ok(())
            }
            Outcome::Checked {
                file,
                line,
                report,
                call,
            } => {
                self.summary.documents += 1;
                if report.is_valid() {
                    self.summary.valid += 1;
                } else {
                    self.summary.invalid += 1;
                }
                self.summary.lints += report.lints().len() as u64;
                if self.closed {
                    return Ok(());
                }
                self.open()?;
                let mut violations: Vec<&Finding> = report.violations().iter().collect();
                violations.sort_by_key(|f| (f.line(), f.column()));
                for finding in violations.into_iter().chain(report.lints()) {
                    // Positions are relative to the document; a document starts on `line`.
                    let at_line = if finding.line() == 0 {
                        line
                    } else {
                        line + finding.line() - 1
                    };
                    let at = (at_line, finding.column().max(1));
                    self.finding(&file, at, finding, call.as_ref())?;
                }
                Ok(())
            }
        }
    }

    /// Writes a SARIF log's opening, once.
    fn open(&mut self) -> io::Result<()> {
        if self.format == Format::Sarif && self.sarif == SarifLog::Unopened {
            self.sarif = SarifLog::Opened;
            sarif::header(&mut self.out)?;
        }
        Ok(())
    }

    fn finding(
        &mut self,
        file: &str,
        (line, column): (usize, usize),
        finding: &Finding,
        call: Option<&CallSite>,
    ) -> io::Result<()> {
        let severity = finding.severity().as_str();
        // The call a finding is about, in the human formats.
        let of_call = call.map_or_else(String::new, |call| {
            format!(" (tools/call id {}, tool {})", call.id, call.tool)
        });
        match self.format {
            Format::Human => {
                let (on, off) = match (self.colour, finding.severity()) {
                    (false, _) => ("", ""),
                    (true, Severity::Error) => ("\x1b[1;31m", "\x1b[0m"),
                    (true, Severity::Warning) => ("\x1b[1;33m", "\x1b[0m"),
                };
                let at = if finding.pointer().is_empty() {
                    "/"
                } else {
                    finding.pointer()
                };
                writeln!(
                    self.out,
                    "{}:{line}:{column}: {on}{severity}[{}]{off} {}: {}{}",
                    printable(file),
                    finding.rule(),
                    printable(at),
                    printable(finding.message()),
                    printable(&of_call)
                )
            }
            Format::Json => {
                let record = JsonFinding {
                    file,
                    line,
                    column,
                    pointer: finding.pointer(),
                    rule: finding.rule().as_str(),
                    message: finding.message(),
                    severity,
                    call_id: call.map(|call| call.id.to_string()),
                    tool: call.map(|call| &*call.tool),
                };
                serde_json::to_writer(&mut self.out, &record)?;
                writeln!(self.out)
            }
            Format::Sarif => {
                let first = self.sarif != SarifLog::WithResults;
                self.sarif = SarifLog::WithResults;
                sarif::result(&mut self.out, first, file, (line, column), finding, call)
            }
            Format::Github => writeln!(
                self.out,
                "::{severity} file={},line={line},col={column},title={}::{}{}{}",
                escape_property(&printable(file)),
                escape_property(finding.rule().as_str()),
                escape_data(&printable(finding.message())),
                escape_data(&printable(&of_call)),
                if finding.pointer().is_empty() {
                    String::new()
                } else {
                    escape_data(&format!(" (at {})", printable(finding.pointer())))
                },
            ),
        }
    }

    /// Writes the summary and flushes; the counts, and the first write error that was not a
    /// closed pipe.
    pub fn finish(mut self) -> (Summary, Option<io::Error>) {
        if !self.closed {
            let written = self.write_summary();
            self.note(written);
        }
        (self.summary, self.error)
    }

    fn write_summary(&mut self) -> io::Result<()> {
        self.open()?;
        let s = &self.summary;
        match self.format {
            Format::Sarif => sarif::footer(&mut self.out, s)?,
            Format::Json => {
                serde_json::to_writer(&mut self.out, &JsonSummary { summary: s })?;
                writeln!(self.out)?;
            }
            Format::Human | Format::Github => {
                let plural = |n: u64, one: &str, many: &str| {
                    format!("{n} {}", if n == 1 { one } else { many })
                };
                writeln!(
                    self.out,
                    "{} checked: {} valid, {} invalid, {}{}",
                    plural(s.documents, "document", "documents"),
                    s.valid,
                    s.invalid,
                    plural(s.lints, "lint", "lints"),
                    if s.io_errors > 0 {
                        format!(", {} unreadable", plural(s.io_errors, "input", "inputs"))
                    } else {
                        String::new()
                    }
                )?;
                if s.passed_over > 0 {
                    writeln!(
                        self.out,
                        "{} with no tool result passed over",
                        plural(s.passed_over, "JSON-RPC message", "JSON-RPC messages")
                    )?;
                }
            }
        }
        self.out.flush()
    }
}

/// One finding in `--format json`.
#[derive(serde::Serialize)]
struct JsonFinding<'a> {
    file: &'a str,
    line: usize,
    column: usize,
    pointer: &'a str,
    rule: &'a str,
    message: &'a str,
    severity: &'a str,
    /// The id of the `tools/call` a finding is about, as JSON.
    #[serde(rename = "callId", skip_serializing_if = "Option::is_none")]
    call_id: Option<String>,
    /// The tool that call named.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
}

/// The closing object of `--format json`.
#[derive(serde::Serialize)]
struct JsonSummary<'a> {
    summary: &'a Summary,
}

/// Escapes a workflow command's message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}
