//! `atr`: validate, explain and project agent tool results.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Check and explore agent tool results against the agent-tool-result contract.
#[derive(Parser)]
#[command(name = "atr", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a contract schema (JSON Schema draft 2020-12).
    Schema {
        /// Which schema to print.
        #[arg(value_enum, default_value_t = SchemaKind::Envelope)]
        kind: SchemaKind,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaKind {
    /// The result envelope schema, exactly as shipped.
    Envelope,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Schema {
            kind: SchemaKind::Envelope,
        } => print(agent_tool_result::ENVELOPE_SCHEMA),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("atr: cannot write to standard output: {err}");
            ExitCode::from(2)
        }
    }
}

fn print(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()
}
