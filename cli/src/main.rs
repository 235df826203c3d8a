//! `atr`: validate, explain and project agent tool results.

mod check;
mod classify;
mod commands;
mod explain;
mod jsonrpc;
mod ordered;
mod output;
mod pipeline;
mod printable;
mod record;
mod sarif;
mod session;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use agent_tool_result::mcp::McpRevision;
use clap::{Parser, Subcommand};

use crate::check::Contract;
use crate::output::Format;

/// Check and explore agent tool results against the agent-tool-result contract.
#[derive(Parser)]
#[command(name = "atr", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate envelopes or MCP tool results in files, directories or standard input.
    ///
    /// Exit status: 0 when every document is valid, 1 when any is invalid (or has lints, with
    /// --deny-lints), 2 on a usage or I/O error, or when no document was checked at all (a
    /// path that matches nothing: pass --allow-empty to accept that).
    Validate {
        /// Files, directories (walked for *.json, *.ndjson, *.jsonl) or `-` for standard input.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        options: Options,
    },
    /// Explain the error categories, one category, or an error or warning code.
    Explain {
        /// A category (`no-target`) or a code (`element-not-found`, `selector-matched-3`).
        name: Option<String>,
    },
    /// Print a contract schema (JSON Schema draft 2020-12).
    Schema {
        /// `envelope` (the default), or `output` for a tool's MCP outputSchema.
        #[arg(value_enum, default_value_t = commands::SchemaKind::Envelope)]
        kind: commands::SchemaKind,
        /// With `output`: the JSON Schema of the tool's result.
        #[arg(long, required_if_eq("kind", "output"))]
        result_schema: Option<PathBuf>,
    },
    /// Project an envelope to its MCP tools/call result, or read one back with --read.
    Mcp {
        /// A file, or `-` for standard input.
        input: PathBuf,
        /// Read a tools/call result and print its envelope.
        #[arg(long)]
        read: bool,
        /// The MCP revision the client negotiated (default: the latest this crate knows).
        #[arg(long, default_value_t = McpRevision::LATEST.as_str().to_owned())]
        revision: String,
    },
    /// Classify answers: what each means to an agent, and what it does next.
    ///
    /// Reads a REST response as `curl -i` prints it, or every response in a HAR file; a
    /// result document or a `tools/call` result; or, with --ndjson, one a line (a recorded
    /// session's `tools/call` results). Exit status: 0 when every REST response keeps the
    /// REST profile, 1 when any breaks it, 2 on a usage or I/O error.
    Classify {
        /// Files with a `curl -i` capture, a HAR log or a document, or `-` for standard input.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// `json`: the one outcome form, an object a line, as the Python and TypeScript
        /// readers print it.
        #[arg(long, value_enum, default_value_t = classify::Form::Human)]
        format: classify::Form,
        /// Each line of each input is a document (or a JSON-RPC message of a recorded
        /// session, whose `tools/call` results are read and the rest passed over).
        #[arg(long)]
        ndjson: bool,
        /// The producer's OpenAPI document: its own problem types (policy deny, each refusal)
        /// are read as it declares them, for a producer with other type URIs.
        #[arg(long, value_name = "FILE")]
        openapi: Option<PathBuf>,
    },
    /// Record an MCP server's session as NDJSON, for `atr validate`: over stdio, give a
    /// client `atr record --out session.ndjson -- SERVER [ARGS...]` as its server's command;
    /// over Streamable HTTP, run `atr record --out session.ndjson --http http://HOST:PORT`
    /// and point the client at the address it prints.
    ///
    /// Every message passes each way unchanged, and each is appended to the file in the order
    /// it passed. Exit status: the server's (over HTTP, `atr` records until it is stopped).
    Record {
        /// The file to write the session to.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Record a Streamable HTTP server at this origin (plain HTTP), as a proxy.
        #[arg(long, value_name = "ORIGIN", conflicts_with = "server")]
        http: Option<String>,
        /// Where the proxy listens (with --http; `127.0.0.1:0` when not given): port 0 picks a
        /// free one, and the address is printed on standard error.
        #[arg(
            long,
            value_name = "ADDRESS",
            requires = "http",
            conflicts_with = "server"
        )]
        listen: Option<String>,
        /// The stdio server's command and its arguments.
        #[arg(last = true, required_unless_present = "http")]
        server: Vec<String>,
    },
    /// Migrate a legacy `CommandResult` to an envelope.
    Migrate {
        /// A file, or `-` for standard input.
        input: PathBuf,
        /// The tool that produced it (`wait-for` turns a `found: false` success into a timeout).
        #[arg(long)]
        tool: Option<String>,
        /// The session the result belongs to.
        #[arg(long)]
        session: Option<String>,
        /// A file with the session's last good observation (a JSON object).
        #[arg(long)]
        last_observation: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate { paths, options } => return validate(&paths, &options),
        Command::Record {
            out,
            http,
            listen,
            server,
        } => {
            let recorded = match http {
                Some(upstream) => {
                    record::record_http(&out, listen.as_deref().unwrap_or("127.0.0.1:0"), &upstream)
                }
                None => record::record(&out, &server),
            };
            return recorded.unwrap_or_else(|err| {
                eprintln!("atr: {err}");
                ExitCode::from(2)
            });
        }
        Command::Explain { name } => explain::explain(name.as_deref()),
        Command::Schema {
            kind,
            result_schema,
        } => commands::schema(kind, result_schema.as_deref()),
        Command::Mcp {
            input,
            read,
            revision,
        } => commands::mcp(&input, read, &revision),
        Command::Classify {
            inputs,
            openapi,
            format,
            ndjson,
        } => classify::classify(&inputs, openapi.as_deref(), format, ndjson),
        Command::Migrate {
            input,
            tool,
            session,
            last_observation,
        } => commands::migrate(&input, tool, session, last_observation.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(commands::Failure::Invalid(message)) => {
            eprintln!("atr: {}", printable::printable(&message));
            ExitCode::from(1)
        }
        Err(commands::Failure::Reported) => ExitCode::from(1),
        Err(commands::Failure::Usage(message)) => {
            eprintln!("atr: {}", printable::printable(&message));
            ExitCode::from(2)
        }
    }
}

/// Whether to colour the report: human format, on a terminal, and no `NO_COLOR` (any
/// non-empty value turns colour off, as <https://no-color.org> asks).
/// Colour for the human format: never with a non-empty `NO_COLOR`; always with a
/// `CLICOLOR_FORCE` other than `0` (a CI log that renders colour); else on a terminal.
fn colour_wanted(
    format: Format,
    terminal: bool,
    no_color: Option<std::ffi::OsString>,
    force: Option<std::ffi::OsString>,
) -> bool {
    let refused = no_color.is_some_and(|value| !value.is_empty());
    let forced = force.is_some_and(|value| !value.is_empty() && value != "0");
    format == Format::Human && !refused && (terminal || forced)
}

/// `atr validate`'s options.
#[derive(clap::Args)]
#[allow(clippy::struct_excessive_bools, reason = "each is a command-line flag")]
struct Options {
    /// Read every input as one document per line.
    #[arg(long)]
    ndjson: bool,
    /// What the documents are.
    #[arg(long, value_enum, default_value_t = Contract::Auto)]
    contract: Contract,
    /// How to report.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Fail on lints too.
    #[arg(long)]
    deny_lints: bool,
    /// Threads checking documents, 1 to 256 (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
    /// Succeed when the paths hold no document (by default that fails, as a typo would).
    #[arg(long)]
    allow_empty: bool,
    /// Walk directories whole: hidden entries too, and what `.gitignore` and `.ignore` files
    /// exclude (by default they are skipped, as `git` and `ripgrep` skip them).
    #[arg(long)]
    no_ignore: bool,
}

/// Inputs larger than this in all get a progress bar (on a terminal).
const PROGRESS_BYTES: u64 = 4 << 20;

fn validate(paths: &[PathBuf], options: &Options) -> ExitCode {
    let Options {
        ndjson,
        contract,
        format,
        deny_lints,
        jobs,
        allow_empty,
        no_ignore,
    } = *options;
    let sources = check::sources(paths, ndjson, !no_ignore);
    let total: u64 = sources
        .iter()
        .map(|s| match s {
            check::Source::Input(input) => input.size,
            check::Source::Error(_) => 0,
        })
        .sum();
    let bar = (total > PROGRESS_BYTES && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {eta}",
            )
            .expect("a valid template"),
        );
        bar
    });
    let progress = |bytes: u64| {
        if let Some(bar) = &bar {
            bar.inc(bytes);
        }
    };
    let workers = jobs
        .map(usize::from)
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
        .max(1);
    let stdout = std::io::stdout();
    let colour = colour_wanted(
        format,
        stdout.is_terminal(),
        std::env::var_os("NO_COLOR"),
        std::env::var_os("CLICOLOR_FORCE"),
    );
    let mut reporter =
        output::Reporter::new(std::io::BufWriter::new(stdout.lock()), format, colour);
    pipeline::run(sources, contract, workers, &progress, &mut |outcome| {
        reporter.outcome(outcome);
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let (summary, write_error) = reporter.finish();
    if let Some(err) = write_error {
        eprintln!("atr: cannot write the report: {err}");
        return ExitCode::from(2);
    }
    if summary.io_errors > 0 {
        ExitCode::from(2)
    } else if summary.documents == 0 && !allow_empty {
        eprintln!(
            "atr: no document was checked: the paths hold no .json, .ndjson or .jsonl file \
             (a typo?); pass --allow-empty to accept that"
        );
        ExitCode::from(2)
    } else if summary.invalid > 0 || (deny_lints && summary.lints > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_turns_colour_off_and_clicolor_force_on() {
        assert!(colour_wanted(Format::Human, true, None, None));
        assert!(colour_wanted(Format::Human, true, Some("".into()), None));
        assert!(!colour_wanted(Format::Human, true, Some("1".into()), None));
        assert!(!colour_wanted(Format::Human, false, None, None));
        assert!(!colour_wanted(Format::Json, true, None, None));
        assert!(colour_wanted(Format::Human, false, None, Some("1".into())));
        assert!(!colour_wanted(Format::Human, false, None, Some("0".into())));
        assert!(!colour_wanted(Format::Human, false, None, Some("".into())));
        assert!(!colour_wanted(
            Format::Human,
            false,
            Some("1".into()),
            Some("1".into())
        ));
        assert!(!colour_wanted(Format::Json, false, None, Some("1".into())));
    }

    #[test]
    fn the_revision_default_is_the_latest() {
        use clap::CommandFactory;
        let command = Cli::command();
        let mcp = command.find_subcommand("mcp").unwrap();
        let revision = mcp
            .get_arguments()
            .find(|a| a.get_id() == "revision")
            .unwrap();
        assert_eq!(
            revision.get_default_values(),
            [McpRevision::LATEST.as_str()]
        );
    }
}
