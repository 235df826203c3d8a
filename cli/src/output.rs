//! How `atr validate` reports: human, JSON lines, or GitHub workflow annotations.

use std::io::{self, Write};

use agent_tool_result::{Finding, Severity};

use crate::check::Outcome;

/// The report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per finding, then a summary; colour on a terminal.
    Human,
    /// One JSON object per line per finding, then one summary object.
    Json,
    /// GitHub Actions workflow annotations (`::error file=...`), then a summary line.
    Github,
}

/// Counts for the summary.
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Documents checked.
    pub documents: u64,
    /// Documents that keep the contract.
    pub valid: u64,
    /// Documents that break it.
    pub invalid: u64,
    /// Lints reported.
    pub lints: u64,
    /// Inputs that could not be read.
    pub io_errors: u64,
}

/// Writes findings as they come, in input order, and the summary at the end.
pub struct Reporter<W: Write> {
    out: W,
    format: Format,
    colour: bool,
    /// The running counts.
    pub summary: Summary,
}

impl<W: Write> Reporter<W> {
    /// A reporter writing `format` to `out`, with ANSI colour when `colour`.
    pub fn new(out: W, format: Format, colour: bool) -> Self {
        Reporter {
            out,
            format,
            colour,
            summary: Summary::default(),
        }
    }

    /// Reports one outcome.
    pub fn outcome(&mut self, outcome: Outcome) -> io::Result<()> {
        match outcome {
            Outcome::IoError(message) => {
                self.summary.io_errors += 1;
                eprintln!("atr: {message}");
                Ok(())
            }
            Outcome::Checked { file, line, report } => {
                self.summary.documents += 1;
                if report.is_valid() {
                    self.summary.valid += 1;
                } else {
                    self.summary.invalid += 1;
                }
                self.summary.lints += report.lints().len() as u64;
                let mut violations: Vec<&Finding> = report.violations().iter().collect();
                violations.sort_by_key(|f| (f.line(), f.column()));
                for finding in violations.into_iter().chain(report.lints()) {
                    // Positions are relative to the document; a document starts on `line`.
                    let at_line = if finding.line() == 0 {
                        line
                    } else {
                        line + finding.line() - 1
                    };
                    self.finding(&file, at_line, finding.column().max(1), finding)?;
                }
                Ok(())
            }
        }
    }

    fn finding(
        &mut self,
        file: &str,
        line: usize,
        column: usize,
        finding: &Finding,
    ) -> io::Result<()> {
        let severity = finding.severity().as_str();
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
                    "{file}:{line}:{column}: {on}{severity}[{}]{off} {at}: {}",
                    finding.rule(),
                    finding.message()
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
                };
                serde_json::to_writer(&mut self.out, &record)?;
                writeln!(self.out)
            }
            Format::Github => writeln!(
                self.out,
                "::{severity} file={},line={line},col={column},title={}::{}{}",
                escape_property(file),
                escape_property(finding.rule().as_str()),
                escape_data(finding.message()),
                if finding.pointer().is_empty() {
                    String::new()
                } else {
                    escape_data(&format!(" (at {})", finding.pointer()))
                },
            ),
        }
    }

    /// Writes the summary and flushes.
    pub fn finish(mut self) -> io::Result<Summary> {
        let s = &self.summary;
        match self.format {
            Format::Json => {
                serde_json::to_writer(&mut self.out, &JsonSummary { summary: s })?;
                writeln!(self.out)?;
            }
            Format::Human | Format::Github => {
                writeln!(
                    self.out,
                    "{} documents checked: {} valid, {} invalid, {} lints{}",
                    s.documents,
                    s.valid,
                    s.invalid,
                    s.lints,
                    if s.io_errors > 0 {
                        format!(", {} inputs unreadable", s.io_errors)
                    } else {
                        String::new()
                    }
                )?;
            }
        }
        self.out.flush()?;
        Ok(self.summary)
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
