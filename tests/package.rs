//! What each package ships, and what its README names. The library ships its sources, schemas,
//! README, licence and examples, and nothing generated, cached or of the repository's own;
//! the CLI its sources, README and licence.
//!
//! The README is the crate's page on crates.io, read with the package and without the
//! repository: it names no file, command, example or feature the package does not hold, and
//! its examples are shown whole (no lines hidden for the doctests). The two commands the
//! repository's set-up rests on stand in a marked block that says it is for a clone.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The files `cargo package` puts in `package`.
fn packaged(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "package",
            "--list",
            "--allow-dirty",
            "--offline",
            "-p",
            package,
        ])
        .current_dir(ROOT)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The names of the repository's top-level entries: a token that starts with one of them
/// names a file or folder of the repository.
fn top_level() -> BTreeSet<String> {
    fs::read_dir(ROOT)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !matches!(name.as_str(), "target" | ".git"))
        .collect()
}

/// The README without the block marked for a clone of the repository.
fn readme_for_package_readers() -> String {
    let readme = fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let (before, rest) = readme
        .split_once("<!-- repository:start -->")
        .expect("the two commands stand in a marked block");
    let (_, after) = rest
        .split_once("<!-- repository:end -->")
        .expect("the block ends");
    format!("{before}{after}")
}

/// The problems with `text` as a package's README: every name in it of a repository file
/// that the package lacks, every `cargo` command naming a binary, another package, an
/// example or a feature the package does not have, and every hidden doctest line.
fn problems(text: &str, packaged: &BTreeSet<String>, features: &BTreeSet<String>) -> Vec<String> {
    let top = top_level();
    let holds = |path: &str| {
        let path = path.trim_end_matches('/');
        packaged.contains(path)
            || packaged
                .iter()
                .any(|file| file.starts_with(&format!("{path}/")))
    };
    let mut found = Vec::new();
    let mut fence: Option<String> = None;
    for (number, line) in text.lines().enumerate() {
        let at = number + 1;
        if let Some(info) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(info.to_owned()),
            };
            continue;
        }
        let code = fence.as_deref();
        if code.is_some_and(|info| info.starts_with("rust")) {
            let trimmed = line.trim_start();
            if trimmed == "#" || trimmed.starts_with("# ") {
                found.push(format!("line {at}: a hidden doctest line: {line}"));
            }
        }
        // Names of the repository's files, in prose and link targets (a path in an
        // example's shell or YAML is the user's own).
        if code.is_none() {
            let mut names: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
            names.extend(
                line.split("](")
                    .skip(1)
                    .filter_map(|rest| rest.split(')').next()),
            );
            for name in names {
                for word in name.split_whitespace() {
                    if word.contains("://") || word.starts_with('#') {
                        continue;
                    }
                    let first = word.split('/').next().unwrap_or(word);
                    if top.contains(first) && !holds(word) {
                        found.push(format!("line {at}: `{word}` is not in the package"));
                    }
                }
            }
        }
        // Cargo commands, wherever they are.
        if let Some((_, command)) = line.split_once("cargo ") {
            let command = command.split('`').next().unwrap_or(command);
            let words: Vec<&str> = command.split_whitespace().collect();
            for (i, word) in words.iter().enumerate() {
                let value = words.get(i + 1).copied().unwrap_or("");
                match *word {
                    "--bin" => {
                        found.push(format!(
                            "line {at}: `--bin {value}`: the package has no binary"
                        ));
                    }
                    "-p" | "--package" if value != "agent-tool-result" => {
                        found.push(format!("line {at}: `{word} {value}` names another package"));
                    }
                    "--example" if !packaged.contains(&format!("examples/{value}.rs")) => {
                        found.push(format!(
                            "line {at}: the example `{value}` is not in the package"
                        ));
                    }
                    "--features" | "-F" => {
                        for feature in value.split(',').filter(|f| !f.is_empty()) {
                            if !features.contains(feature) {
                                found.push(format!("line {at}: no feature `{feature}`"));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    found
}

fn features() -> BTreeSet<String> {
    let manifest = fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let table = manifest
        .split("[features]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap();
    table
        .lines()
        .filter_map(|line| line.split_once(" = "))
        .map(|(name, _)| name.trim().to_owned())
        .filter(|name| !name.starts_with('#'))
        .collect()
}

#[test]
fn the_readme_names_nothing_the_package_lacks() {
    let found = problems(
        &readme_for_package_readers(),
        &packaged("agent-tool-result"),
        &features(),
    );
    assert!(found.is_empty(), "README.md:\n{}", found.join("\n"));
}

/// The check finds each kind of name a package's README must not hold, so a README that
/// passes it passes for a reason.
#[test]
fn the_check_finds_each_kind_of_missing_name() {
    let packaged = packaged("agent-tool-result");
    let features = features();
    for (text, what) in [
        (
            "Run `cargo run --release --bin atr -- validate`.",
            "--bin atr",
        ),
        (
            "`cargo run --release -p quickstart` builds it",
            "-p quickstart",
        ),
        ("`cargo run --example differential`", "`differential`"),
        (
            "`cargo add agent-tool-result --features rmcp,grpc`",
            "`grpc`",
        ),
        ("`examples/campaigns` is a service", "`examples/campaigns`"),
        (
            "one suite (`tests/ledger.rs`) holds them",
            "`tests/ledger.rs`",
        ),
        (
            "`.pre-commit-hooks.yaml` offers hooks",
            "`.pre-commit-hooks.yaml`",
        ),
        (
            "see [the scripts](bench/compare-peers.sh)",
            "`bench/compare-peers.sh`",
        ),
        ("```rust\n# let hidden = 1;\n```", "hidden doctest line"),
    ] {
        let found = problems(text, &packaged, &features);
        assert!(
            found.iter().any(|problem| problem.contains(what)),
            "{text:?} gave {found:?}"
        );
    }
    for fine in [
        "`examples/results/capture.json` and `schema/` ship",
        "`cargo add agent-tool-result --features rmcp,replay`",
        "`cargo run --example mcp_server --features rmcp`",
        "```yaml\n- run: atr validate tests/results\n```",
        "[the docs](https://docs.rs/agent-tool-result)",
        "```rust\n#[derive(Debug)]\nstruct A;\n```",
    ] {
        let found = problems(fine, &packaged, &features);
        assert!(found.is_empty(), "{fine:?} gave {found:?}");
    }
}

/// What `cargo package` ships: the library without its tests (which need the workspace),
/// benchmarks or tooling; the CLI with a README and the licence.
#[test]
fn packages_ship_what_a_user_needs() {
    let library = packaged("agent-tool-result");
    for shipped in [
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "src/lib.rs",
        "schema/agent-tool-result.schema.json",
        "examples/results/capture.json",
    ] {
        assert!(library.contains(shipped), "the library lacks {shipped}");
    }
    for kept in [
        "tests/",
        "bench/",
        "benches/",
        "clippy.toml",
        ".pre-commit-hooks.yaml",
        ".ci/",
        "examples/campaigns/",
        "examples/differential.rs",
        ".schemathesis",
        "dist/",
        "pyproject.toml",
        "node_modules",
    ] {
        assert!(
            !library.iter().any(|l| l.starts_with(kept)),
            "the library ships {kept}"
        );
    }
    let cli = packaged("agent-tool-result-cli");
    for shipped in ["README.md", "LICENSE", "src/main.rs"] {
        assert!(cli.contains(shipped), "the CLI lacks {shipped}");
    }
    assert!(!cli.iter().any(|l| l.starts_with("tests/")));
    let manifest = fs::read_to_string(Path::new(ROOT).join("cli/Cargo.toml")).unwrap();
    for field in ["readme = ", "keywords = ", "categories = "] {
        assert!(manifest.contains(field), "the CLI's manifest lacks {field}");
    }
}
