//! The pre-commit hooks in `.pre-commit-hooks.yaml`: each names an entry that runs
//! `atr validate` on the files pre-commit passes, for the file types it selects, and the
//! script hook's exit status is the validator's.

mod common;

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
    assert_eq!(ids, ["atr-validate", "atr-validate-system"]);
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
            "system" => assert_eq!(entry, "atr validate"),
            other => panic!("{id}: unexpected language {other}"),
        }
    }
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
            .env("ATR", assert_cmd::cargo::cargo_bin("atr"))
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
