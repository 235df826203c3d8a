//! The agent side's packages, installed as a user installs them, read every fixture as `atr`
//! does: the Python package from the wheel its ordinary build makes, in a fresh virtual
//! environment, and the npm package from the tarball `npm pack` makes, in a fresh project.
//! Each prints the one outcome form, a line per answer, and the lines must be `atr classify
//! --format json`'s exactly ([`crate::outcomes::corpus`]: valid and broken documents, REST
//! captures, `tools/call` results and the recorded sessions). Their own tests run here too
//! (pytest; `node --test`), and the npm package's examples type-check against the installed
//! package under `tsc --strict`.
//!
//! Needs Python 3.10 or newer with venv and pip, and Node.js 20 or newer with npm; what they
//! install comes from the package indexes the first time.

use crate::common;

mod hard_input;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{root, run, scratch};

/// `atr classify --format json` over the corpus: the documents' lines, then the sessions'.
fn reference() -> (Vec<String>, Vec<String>, String, String) {
    let (documents, sessions) = crate::outcomes::corpus();
    let mut args = vec!["classify", "--format", "json"];
    args.extend(documents.iter().map(String::as_str));
    let first = run(&args, None).stdout;
    let mut args = vec!["classify", "--format", "json", "--ndjson"];
    args.extend(sessions.iter().map(String::as_str));
    let second = run(&args, None).stdout;
    (documents, sessions, first, second)
}

/// Runs `command` (a reader's command line) from the repository root on the corpus, as
/// [`reference`] ran `atr`, and requires the same lines.
fn reads_as_atr_does(what: &str, command: impl Fn() -> Command) {
    let (documents, sessions, first, second) = reference();
    let lines = |mut command: Command, ndjson: bool, files: &[String]| {
        if ndjson {
            command.arg("--ndjson");
        }
        let out = command.args(files).current_dir(root()).output().unwrap();
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let ours = lines(command(), false, &documents);
    let theirs = lines(command(), true, &sessions);
    for (expected, got) in [(&first, &ours), (&second, &theirs)] {
        let (expected, got): (Vec<&str>, Vec<&str>) =
            (expected.lines().collect(), got.lines().collect());
        for (want, line) in expected.iter().zip(&got) {
            assert_eq!(line, want, "{what} reads an answer otherwise than atr");
        }
        assert_eq!(got.len(), expected.len(), "{what}: a line per answer");
    }
    assert!(first.lines().count() + second.lines().count() > 250);
}

fn succeeds(command: &mut Command, what: &str) {
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("{what}: {err}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn python_dir() -> PathBuf {
    root().join("agents/python")
}

/// The Python of the package's development environment (its checkers, pytest, the
/// frameworks its adapters serve), made once under the target directory.
fn dev_python() -> PathBuf {
    common::venv::python_with(
        &python_dir().join("requirements-dev.txt"),
        &root().join("target/agents"),
    )
}

#[test]
fn the_python_package_from_its_wheel_reads_every_answer_as_atr_does() {
    let dir = scratch("python-wheel");
    let dev = dev_python();
    succeeds(
        Command::new(&dev)
            .args(["-m", "build", "--wheel", "--no-isolation", "--outdir"])
            .arg(dir.join("dist"))
            .arg(python_dir()),
        "building the wheel",
    );
    let wheel = std::fs::read_dir(dir.join("dist"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "whl"))
        .expect("a wheel");
    succeeds(
        Command::new("python3")
            .args(["-m", "venv"])
            .arg(dir.join("fresh")),
        "making a fresh environment",
    );
    let fresh = dir.join("fresh/bin");
    succeeds(
        Command::new(fresh.join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .arg(&wheel),
        "installing the wheel",
    );
    // The module and the console script the wheel installs.
    let python = fresh.join("python");
    reads_as_atr_does("python -m agent_tool_result", || {
        let mut command = Command::new(&python);
        command.args(["-m", "agent_tool_result"]);
        command
    });
    let script = fresh.join("agent-tool-result");
    reads_as_atr_does("the agent-tool-result script", || Command::new(&script));
}

#[test]
fn the_python_package_passes_its_tests() {
    succeeds(
        Command::new(dev_python())
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .env("PYTHONPATH", python_dir().join("src"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(python_dir()),
        "pytest",
    );
}

fn typescript_dir() -> PathBuf {
    root().join("agents/typescript")
}

fn npm(args: &[&str], dir: &Path, what: &str) {
    succeeds(
        Command::new("npm")
            .args(args)
            .args(["--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(dir),
        what,
    );
}

/// The npm package's directory, its development dependencies installed from its lockfile,
/// and the right to build in it: the tests that build, pack or test the package (each writes
/// its `dist` or `build`) hold it while they do, one at a time.
fn typescript_package() -> (PathBuf, std::sync::MutexGuard<'static, ()>) {
    static PACKAGE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let held = PACKAGE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = typescript_dir();
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|out| out.status.success()),
        "this test installs the npm package: install Node.js 20 or newer and npm (on Debian: \
         apt-get install nodejs npm)"
    );
    if !dir.join("node_modules/typescript/package.json").exists() {
        npm(
            &["ci"],
            &dir,
            "npm ci (the npm registry must be reachable the first time)",
        );
    }
    (dir, held)
}

#[test]
fn the_npm_package_from_its_tarball_reads_every_answer_as_atr_does() {
    let (package, building) = typescript_package();
    let dir = scratch("npm-tarball");
    npm(
        &["pack", "--pack-destination", dir.to_str().unwrap()],
        &package,
        "npm pack",
    );
    // Packed: what follows reads the package's sources and lockfile, and writes nothing there.
    drop(building);
    let tarball = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "tgz"))
        .expect("a tarball");
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{ "name": "agent", "private": true, "type": "module" }"#,
    )
    .unwrap();
    // The package, and what its examples import (pinned as the package's own lockfile pins them).
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(package.join("package-lock.json")).unwrap())
            .unwrap();
    let pinned = |name: &str| {
        let version = lock["packages"][format!("node_modules/{name}")]["version"]
            .as_str()
            .unwrap_or_else(|| panic!("{name} is in the lockfile"))
            .to_owned();
        format!("{name}@{version}")
    };
    let mut install = vec!["install".to_owned(), tarball.to_str().unwrap().to_owned()];
    install.extend(
        [
            "typescript",
            "@types/node",
            "@modelcontextprotocol/sdk",
            "ai",
            "zod",
            "@openai/agents",
        ]
        .map(pinned),
    );
    let install: Vec<&str> = install.iter().map(String::as_str).collect();
    npm(&install, &project, "npm install of the tarball");
    let bin = project.join("node_modules/.bin/agent-tool-result");
    reads_as_atr_does("the npm package's agent-tool-result", || Command::new(&bin));
    // Its examples type-check against the installed package, strictly.
    let examples = project.join("examples");
    std::fs::create_dir_all(&examples).unwrap();
    for entry in std::fs::read_dir(package.join("examples")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, examples.join(path.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        project.join("tsconfig.json"),
        r#"{ "compilerOptions": { "strict": true, "noEmit": true, "module": "NodeNext",
             "moduleResolution": "NodeNext", "target": "ES2022", "skipLibCheck": true,
             "lib": ["ES2023", "DOM"], "types": ["node"] }, "include": ["examples"] }"#,
    )
    .unwrap();
    succeeds(
        Command::new(project.join("node_modules/.bin/tsc"))
            .args(["-p", "."])
            .current_dir(&project),
        "tsc --strict on the examples",
    );
}

#[test]
fn the_npm_package_passes_its_tests() {
    let (package, _building) = typescript_package();
    npm(&["test"], &package, "npm test (tsc --strict, node --test)");
}
