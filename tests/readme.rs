//! The README's generated parts: the category table from the code's one table, and the
//! feature table's crate counts from `cargo tree`.

use std::fmt::Write;

use agent_tool_result::ErrorCategory;

const START: &str = "<!-- category-table:start -->\n";
const END: &str = "<!-- category-table:end -->";

fn table() -> String {
    let mut table = String::from(
        "| category | when it applies | what the agent does | retry |\n|---|---|---|---|\n",
    );
    for category in ErrorCategory::ALL {
        writeln!(
            table,
            "| `{}` | {} | {} | `{}` |",
            category.as_str(),
            category.meaning(),
            category.recovery(),
            category.retry_class(),
        )
        .unwrap();
    }
    table
}

/// Fails when the README's table differs from the code's. Run with `UPDATE_README=1` to
/// rewrite it.
/// Checks that the README holds `expected` between the markers `start` and `end` (rewriting
/// it with `UPDATE_README=1`).
fn keep_generated(what: &str, start: &str, end: &str, expected: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let from = readme
        .find(start)
        .unwrap_or_else(|| panic!("README lacks the {what} start marker"))
        + start.len();
    let to = readme
        .find(end)
        .unwrap_or_else(|| panic!("README lacks the {what} end marker"));
    if readme[from..to] != *expected {
        if std::env::var_os("UPDATE_README").is_some() {
            let updated = format!("{}{expected}{}", &readme[..from], &readme[to..]);
            std::fs::write(path, updated).unwrap();
        } else {
            panic!(
                "README.md's {what} is out of date; run \
                 `UPDATE_README=1 cargo test -p agent-tool-result-tests --all-features --test \
                 integration readme::`. Expected:\n{expected}"
            );
        }
    }
}

#[test]
fn the_category_table_matches_the_code() {
    keep_generated("category table", START, END, &table());
}

/// The crates a build of the library with exactly `features` pulls in, itself left out, as
/// `cargo tree -e normal` lists them.
fn crates_with(features: &str) -> usize {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = std::process::Command::new(cargo);
    command
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["tree", "--quiet", "--locked", "-e", "normal"])
        .args([
            "--prefix",
            "none",
            "-p",
            "agent-tool-result",
            "--no-default-features",
        ]);
    if !features.is_empty() {
        command.args(["--features", features]);
    }
    let out = command.output().expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: std::collections::BTreeSet<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| line.trim_end_matches(" (*)").to_owned())
        .filter(|line| !line.is_empty())
        .collect();
    listed.len() - 1
}

/// The features, what each adds, in the table's order.
const FEATURES: &[(&str, &str)] = &[
    ("", "the types"),
    (
        "schemars",
        "`JsonSchema` for the wire types; tools' compact output schemas",
    ),
    (
        "validate",
        "`validate::Validator`: the compiled schema (the `jsonschema` crate, without its network \
         features) plus the lints",
    ),
    (
        "blank-check",
        "`frame::blank_check` and `SessionArtifacts::summarize_png`, decoding captures with the \
         `png` crate",
    ),
    (
        "http",
        "`http::envelope_response`, `Fault`, `Problem`, the REST profile, the classifier, \
         `BearerGate`: the HTTP side with the `http` crate",
    ),
    (
        "axum",
        "`IntoResponse` for envelopes, faults, problems and guarantee answers, the layers that \
         make every error a problem, and (with `replay` and `schemars`) a registry's REST routes \
         (`axum` without a server or runtime)",
    ),
    (
        "rmcp",
        "`rmcp` tools return envelopes and guarantee answers; conversions to and from `rmcp`'s \
         `CallToolResult`",
    ),
    (
        "replay",
        "same-key replay: keys, RFC 8785 fingerprints, the ledger trait, the memory ledger, the replay sequence (its keepalive on the application's Tokio timer)",
    ),
    ("sqlite", "the SQLite ledger (`rusqlite`, SQLite bundled)"),
    (
        "postgres",
        "the PostgreSQL ledger, shared by processes on many machines (`tokio-postgres` on a \
         `deadpool-postgres` pool, no TLS stack)",
    ),
    (
        "openapi",
        "`http::openapi`: the REST profile as an OpenAPI 3.1 document, and a producer's problem \
         types read back from one",
    ),
    (
        "tracing",
        "`replay::telemetry` through `tracing`: a span per keyed call (tool, scope, key digest), \
         an event for how it ended, the ledger's latency",
    ),
    (
        "metrics",
        "`replay::telemetry` through the `metrics` facade: calls by outcome, refusals by kind, \
         the ledger's latency and the sequence's overhead",
    ),
];

/// The feature table's crate counts are what `cargo tree` says, so they cannot drift.
#[test]
fn the_feature_table_counts_what_cargo_tree_lists() {
    let mut table = String::from(
        "| feature | what it adds | crates (`cargo tree -e normal`, that feature alone) |\n\
         |---|---|---:|\n",
    );
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml")).unwrap();
    let features = manifest
        .split("\n[features]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap_or_default();
    for line in features.lines() {
        if let Some((name, _)) = line.split_once(" = ")
            && name != "default"
        {
            assert!(
                FEATURES.iter().any(|(feature, _)| *feature == name),
                "the feature `{name}` is missing from the README's feature table"
            );
        }
    }
    for (feature, adds) in FEATURES {
        let name = if feature.is_empty() {
            "(none)".to_owned()
        } else {
            format!("`{feature}`")
        };
        writeln!(table, "| {name} | {adds} | {} |", crates_with(feature)).unwrap();
    }
    keep_generated(
        "feature table",
        "<!-- feature-table:start -->\n",
        "<!-- feature-table:end -->",
        &table,
    );
}

#[test]
fn the_readme_starts_with_the_two_commands() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let head: String = readme.lines().take(20).collect::<Vec<_>>().join("\n");
    assert!(head.contains("`cargo run --release --bin atr -- validate examples/results`"));
    assert!(head.contains("`cargo test --workspace --all-features`"));
    let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/run")).unwrap();
    assert!(ci.contains("cargo test --workspace --all-features"));
}

fn read(path: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(path),
    )
    .unwrap()
}

/// The crate's root docs name every public module under "Where things are" and every feature
/// of `Cargo.toml` once under "Features".
#[test]
fn the_root_docs_name_every_module_and_every_feature_once() {
    let lib = read("src/lib.rs");
    let docs: String = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let (where_things_are, features) = docs.split_once("# Features").expect("a Features section");
    for line in lib.lines() {
        if let Some(module) = line.trim().strip_prefix("pub mod ") {
            let module = module.trim_end_matches(';');
            assert!(
                where_things_are.contains(&format!("[`{module}`]"))
                    || where_things_are.contains(&format!("`{module}` (feature")),
                "the root docs do not say where `{module}` is"
            );
        }
    }
    let manifest = read("Cargo.toml");
    let table = manifest
        .split("[features]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap();
    for feature in table
        .lines()
        .filter_map(|line| line.split_once(" = "))
        .map(|(name, _)| name.trim())
        .filter(|name| !name.starts_with('#') && *name != "default")
    {
        let listed = features.matches(&format!("- `{feature}`:")).count();
        assert_eq!(
            listed, 1,
            "the feature `{feature}` is listed {listed} times"
        );
    }
}

/// The README says which of the library's features `atr` turns on, as its manifest does.
#[test]
fn the_readme_names_the_features_atr_turns_on() {
    let manifest = read("cli/Cargo.toml");
    let line = manifest
        .lines()
        .find(|line| line.starts_with("agent-tool-result = "))
        .unwrap();
    let features: Vec<&str> = line
        .split("features = [")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap()
        .split(',')
        .map(|f| f.trim().trim_matches('"'))
        .collect();
    let named = features
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>();
    let sentence = match named.as_slice() {
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => unreachable!("atr turns features on"),
    };
    let readme = read("README.md");
    assert!(
        readme.contains(&format!("The `atr` CLI turns on {sentence}.")),
        "the README should say: The `atr` CLI turns on {sentence}."
    );
}

/// The campaign walkthrough leaves nothing in the repository: in its shell commands, the
/// database (unless it is a PostgreSQL server's) and every capture go to a scratch directory.
#[test]
fn the_campaign_walkthrough_writes_to_a_scratch_directory() {
    let walkthrough = read("examples/campaigns/README.md");
    assert!(walkthrough.contains("W=$(mktemp -d)"));
    let mut in_shell = false;
    let mut checked = 0;
    for line in walkthrough.lines() {
        if line.starts_with("```") {
            in_shell = line == "```sh";
            continue;
        }
        if !in_shell {
            continue;
        }
        for writes in ["--db ", "tee ", "> "] {
            if let Some(at) = line.find(writes) {
                let target = line[at + writes.len()..].trim_start();
                // A database server is no file in the repository.
                let scratch = target.starts_with("\"$W/") || target.starts_with("$W/");
                assert!(
                    scratch || (writes == "--db " && target.starts_with("postgres://")),
                    "a file outside the scratch directory: {line}"
                );
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 2,
        "the walkthrough writes its database and a capture"
    );
}
