//! The pre-commit hooks in `.pre-commit-hooks.yaml`: each names an entry that runs
//! `atr validate` on the files pre-commit passes, for the file types it selects, and the
//! script hook's exit status is the validator's.

use crate::common;

use std::fs;
use std::process::Command;

use common::root;

/// The hooks as `(id, entry, language, files)`, read from the manifest's flat mappings.
fn hooks() -> Vec<[String; 4]> {
    let manifest = fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    let mut hooks: Vec<[String; 4]> = Vec::new();
    for line in manifest.lines() {
        if let Some(id) = line.strip_prefix("- id: ") {
            hooks.push([id.to_owned(), String::new(), String::new(), String::new()]);
        }
        let field = |name: &str| line.strip_prefix(&format!("  {name}: ")).map(str::to_owned);
        if let Some(hook) = hooks.last_mut() {
            for (slot, name) in [(1, "entry"), (2, "language"), (3, "files")] {
                if let Some(value) = field(name) {
                    hook[slot] = value;
                }
            }
        }
    }
    hooks
}

#[test]
fn the_manifest_names_both_hooks_for_result_files() {
    let hooks = hooks();
    let ids: Vec<&str> = hooks.iter().map(|h| h[0].as_str()).collect();
    assert_eq!(
        ids,
        ["atr-validate-python", "atr-validate", "atr-validate-system"]
    );
    for [id, entry, language, files] in &hooks {
        assert_eq!(files, r"\.(json|ndjson|jsonl)$", "{id}");
        match language.as_str() {
            "script" => {
                let script = root().join(entry);
                let mode = fs::metadata(&script).unwrap();
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    assert!(
                        mode.permissions().mode() & 0o111 != 0,
                        "{entry} is executable"
                    );
                }
                let _ = mode;
            }
            "system" | "python" => assert_eq!(entry, "atr validate"),
            other => panic!("{id}: unexpected language {other}"),
        }
    }
}

/// The Python hook installs the repository's `pyproject.toml`, which pins the wheel of this
/// very version of `atr`: the versions cannot drift apart. (`dist/check` runs the hook with
/// pre-commit, from the built wheel, with no Rust toolchain on PATH.)
#[test]
fn the_python_hooks_environment_pins_this_versions_wheel() {
    let pyproject = fs::read_to_string(root().join("pyproject.toml")).unwrap();
    let version = &common::cli_version();
    assert!(
        pyproject.contains(&format!("\nversion = \"{version}\"\n")),
        "{pyproject}"
    );
    assert!(
        pyproject.contains(&format!(
            "dependencies = [\"agent-tool-result-cli=={version}\"]"
        )),
        "{pyproject}"
    );
    let python = fs::read_to_string(root().join("dist/python/pyproject.toml")).unwrap();
    assert!(python.contains("name = \"agent-tool-result-cli\""));
}

/// Every `rev:` the README and the hooks manifest show is this version's tag, and every
/// pinned install of the prebuilt `atr` this version.
#[test]
fn revs_and_pins_name_this_version() {
    let version = &common::cli_version();
    let mut seen = 0;
    for file in [
        "README.md",
        ".pre-commit-hooks.yaml",
        "cli/README.md",
        "dist/README.md",
    ] {
        let text = fs::read_to_string(root().join(file)).unwrap();
        for line in text.lines() {
            if let Some((_, rev)) = line.split_once("rev: ") {
                assert_eq!(rev.trim(), format!("v{version}"), "{file}: {line}");
                seen += 1;
            }
            if let Some((_, pin)) = line.split_once("agent-tool-result-cli==") {
                let pinned: String = pin.chars().take_while(|c| !c.is_whitespace()).collect();
                assert_eq!(&pinned, version, "{file}: {line}");
                seen += 1;
            }
        }
    }
    assert!(
        seen >= 3,
        "the README's hook, the manifest's example and the workflow's pin"
    );
}

#[test]
fn the_script_hook_passes_clean_files_and_fails_broken_ones() {
    let hooks = hooks();
    let entry = &hooks.iter().find(|h| h[2] == "script").unwrap()[1];
    let hook = |files: &[&str]| {
        // As pre-commit runs it: the entry, then the staged files, from the repository root.
        Command::new(root().join(entry))
            .args(files)
            .current_dir(root())
            .env("ATR", common::atr_path())
            .output()
            .unwrap()
    };
    let clean = hook(&[
        "examples/results/capture.json",
        "examples/results/find-window.json",
    ]);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stdout)
    );
    let broken = hook(&[
        "examples/results/capture.json",
        "examples/results/broken/base64-in-last-observation.json",
    ]);
    assert_eq!(broken.status.code(), Some(1));
    let report = String::from_utf8(broken.stdout).unwrap();
    assert!(
        report.contains("examples/results/broken/base64-in-last-observation.json:12:17"),
        "{report}"
    );
}

/// Without `ATR`, the script hook builds `atr` with `--locked` and runs the binary cargo says
/// it built, wherever the target directory is (`CARGO_TARGET_DIR` here): a stand-in `cargo`
/// on `PATH` records its arguments and reports a binary outside `target/`.
#[cfg(unix)]
#[test]
fn the_script_hook_runs_the_atr_cargo_built_wherever_it_is() {
    use std::os::unix::fs::PermissionsExt;

    let scratch = std::env::temp_dir().join(format!("atr-hook-{}", std::process::id()));
    let bin = scratch.join("bin");
    let elsewhere = scratch.join("elsewhere");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&elsewhere).unwrap();
    let executable = |path: &std::path::Path, text: &str| {
        fs::write(path, text).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    };
    let atr = elsewhere.join("atr");
    executable(
        &atr,
        &format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nexit 3\n",
            scratch.join("atr-args").display()
        ),
    );
    let report = format!(
        r#"{{"reason":"compiler-artifact","target":{{"name":"atr","kind":["bin"]}},"executable":"{}","fresh":true}}"#,
        atr.display()
    );
    executable(
        &bin.join("cargo"),
        &format!(
            "#!/bin/sh\necho \"$@\" > '{}'\necho '{report}'\necho '{{\"reason\":\"build-finished\",\"success\":true}}'\n",
            scratch.join("cargo-args").display()
        ),
    );
    let hooks = hooks();
    let entry = &hooks.iter().find(|h| h[2] == "script").unwrap()[1];
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(root().join(entry))
        .arg("results/a.json")
        .current_dir(root())
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", &elsewhere)
        .env_remove("ATR")
        .output()
        .unwrap();
    // The validator's exit status is the hook's.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cargo_args = fs::read_to_string(scratch.join("cargo-args")).unwrap();
    for flag in ["build", "--release", "--locked", "--bin atr"] {
        assert!(cargo_args.contains(flag), "{cargo_args}");
    }
    assert_eq!(
        fs::read_to_string(scratch.join("atr-args")).unwrap().trim(),
        "validate results/a.json"
    );
    // A cargo that reports no binary leaves the hook to say so.
    executable(&bin.join("cargo"), "#!/bin/sh\nexit 0\n");
    let out = Command::new(root().join(entry))
        .arg("results/a.json")
        .current_dir(root())
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env_remove("ATR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("set ATR"));
    let _ = fs::remove_dir_all(&scratch);
}
