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
    let (package, _building) = typescript_package();
    let dir = scratch("npm-tarball");
    npm(
        &["pack", "--pack-destination", dir.to_str().unwrap()],
        &package,
        "npm pack",
    );
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

/// A guarantee result that allows, with `rest` after its policy.
fn guarantee(rest: &str) -> String {
    format!(
        r#"{{"schemaVersion":1,"settlement":{{"state":"committed"}},"policy":{{"decision":"allow"}}{rest}}}"#
    )
}

/// An envelope failure, with `error` after its detail.
fn failure(error: &str) -> String {
    format!(r#"{{"ok":false,"error":{{"code":"a","category":"timeout","detail":"d"{error}}}}}"#)
}

/// A failure whose last observation is a capture summary of `bytes` bytes, with `field` too.
fn summary(bytes: &str, field: &str) -> String {
    failure(&format!(
        r#","lastObservation":{{"kind":"capture-summary","width":1,"height":1,"encoding":"png","bytes":{bytes},"blankCheck":{{"blank":false,"dominantFraction":0.5,"dominantIsDark":false}},"artifact":"a"{field}}}"#
    ))
}

/// Numbers (integral floats, integers past 2^53 and 2^64, beyond a double) in a status, a
/// count, a version, a capture summary's integers and a payload, directly and carried.
fn numbers() -> Vec<(String, String)> {
    let numbers = [
        "400",
        "400.0",
        "4e2",
        "-0",
        "1e400",
        "-1e400",
        "9007199254740993",
        "18446744073709551615",
        "18446744073709551616",
        "18446744073709551615.0",
        "9223372036854775808",
        "1.5",
        "0.0",
    ];
    let mut out = Vec::new();
    for (i, n) in numbers.iter().enumerate() {
        let unsigned = n.trim_start_matches('-');
        out.extend([
            (
                format!("status-{i}"),
                format!(r#"{{"type":"about:blank","title":"x","status":{n}}}"#),
            ),
            (
                format!("requested-{i}"),
                guarantee(&format!(r#","impact":{{"requested":{n}}}"#)),
            ),
            (
                format!("version-{i}"),
                guarantee("").replacen(
                    r#""schemaVersion":1"#,
                    &format!(r#""schemaVersion":{n}"#),
                    1,
                ),
            ),
            (format!("bytes-{i}"), summary(n, "")),
            (
                format!("handle-{i}"),
                summary("1", &format!(r#","handle":-{unsigned}"#)),
            ),
            (
                format!("payload-{i}"),
                format!(r#"{{"ok":true,"result":{{"n":{n}}}}}"#),
            ),
            (
                format!("carried-{i}"),
                format!(r#"{{"structuredContent":{{"ok":true,"result":{{"n":{n}}}}},"x":{n}}}"#),
            ),
        ]);
    }
    out
}

/// Names an object's prototype holds, as a member, a payload's name, a category and an own
/// field.
fn prototype_names() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for name in [
        "__proto__",
        "constructor",
        "toString",
        "hasOwnProperty",
        "valueOf",
    ] {
        out.extend([
            (
                format!("own-{name}"),
                format!(r#"{{"ok":true,"{name}":1}}"#),
            ),
            (
                format!("payload-{name}"),
                format!(r#"{{"ok":true,"result":{{"{name}":{{"a":1}}}}}}"#),
            ),
            (
                format!("category-{name}"),
                format!(
                    r#"{{"ok":false,"error":{{"code":"a","category":"{name}","detail":"d"}}}}"#
                ),
            ),
            (
                format!("guarantee-{name}"),
                guarantee(&format!(r#","{name}":1"#)),
            ),
        ]);
    }
    out
}

/// A name repeated in each contract object, at the top, in payloads and in a `tools/call`
/// result's parts.
fn repeated_names() -> Vec<(String, String)> {
    let many: Vec<String> = (0..5000).map(|i| format!(r#""k{i}":{i}"#)).collect();
    [
        ("top", r#"{"ok":true,"ok":true}"#.to_owned()),
        (
            "after-null",
            r#"{"ok":true,"sessionId":null,"sessionId":null}"#.to_owned(),
        ),
        ("escaped-name", r#"{"ok":true,"\u006fk":true}"#.to_owned()),
        (
            "error",
            r#"{"ok":false,"error":{"code":"a","code":"a","category":"timeout","detail":"d"}}"#
                .to_owned(),
        ),
        (
            "warning",
            r#"{"ok":true,"warnings":[{"code":"a","detail":"b","detail":"c"}]}"#.to_owned(),
        ),
        ("result", r#"{"ok":true,"result":{"a":1,"a":2}}"#.to_owned()),
        (
            "deep",
            r#"{"ok":true,"result":{"a":{"b":{"c":{"d":{"e":1,"e":2}}}}}}"#.to_owned(),
        ),
        (
            "observation",
            failure(r#","lastObservation":{"kind":"capture-summary","kind":"x"}"#),
        ),
        (
            "settlement",
            guarantee("").replace(
                r#""state":"committed""#,
                r#""state":"committed","state":"committed""#,
            ),
        ),
        ("own-field", guarantee(r#","x":1,"x":2"#)),
        (
            "refusal-type",
            r#"{"type":"about:blank","type":"about:blank","title":"x","status":400}"#.to_owned(),
        ),
        (
            "refusal-extension",
            r#"{"type":"about:blank","title":"x","status":400,"e":1,"e":2}"#.to_owned(),
        ),
        (
            "call-known",
            r#"{"isError":false,"isError":false,"structuredContent":{"ok":true}}"#.to_owned(),
        ),
        (
            "call-unknown",
            r#"{"x":1,"x":2,"structuredContent":{"ok":true}}"#.to_owned(),
        ),
        (
            "carried-warning",
            r#"{"structuredContent":{"ok":true,"warnings":[{"code":"a","detail":"b","code":"a"}]}}"#
                .to_owned(),
        ),
        (
            "block",
            r#"{"content":[{"type":"text","text":"x","text":"{\"ok\":true}"}]}"#.to_owned(),
        ),
        ("spaced", r#"{ "ok" : true , "ok" : true }"#.to_owned()),
        ("many", format!(r#"{{"ok":true,{},"ok":true}}"#, many.join(","))),
        ("alike", r#"{"ok":true,"abXc":1,"abYc":2}"#.to_owned()),
    ]
    .into_iter()
    .map(|(name, text)| (format!("repeated-{name}"), text))
    .collect()
}

/// Lone, paired and reversed surrogate escapes, in a value, a name and an unread member.
fn surrogates() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, escape) in [
        ("lone-high", r"\ud800"),
        ("lone-low", r"\udc00"),
        ("pair", r"\ud83d\ude00"),
        ("reversed", r"\ude00\ud83d"),
        ("upper", r"\uD83D\uDE00"),
    ] {
        out.extend([
            (
                format!("surrogate-{name}"),
                format!(r#"{{"ok":true,"result":{{"a":"{escape}"}}}}"#),
            ),
            (
                format!("surrogate-name-{name}"),
                format!(r#"{{"ok":true,"result":{{"{escape}":1}}}}"#),
            ),
            (
                format!("surrogate-unknown-{name}"),
                format!(r#"{{"x":"{escape}","structuredContent":{{"ok":true}}}}"#),
            ),
        ]);
    }
    out
}

/// Nesting at the limit and past it: in a document, in `structuredContent`, in a content
/// block and in a member no reader reads.
fn depths() -> Vec<(String, String)> {
    let arrays = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let mut out = Vec::new();
    for depth in 125..=129 {
        out.extend([
            (
                format!("depth-{depth}"),
                format!(r#"{{"ok":true,"result":{{"a":{}}}}}"#, arrays(depth - 2)),
            ),
            (
                format!("depth-carried-{depth}"),
                format!(
                    r#"{{"structuredContent":{{"ok":true,"result":{{"a":{}}}}}}}"#,
                    arrays(depth - 3)
                ),
            ),
            (
                format!("depth-block-{depth}"),
                format!(
                    r#"{{"content":[{{"type":"text","text":"{{\"ok\":true}}","n":{}}}]}}"#,
                    arrays(depth - 3)
                ),
            ),
            (
                format!("depth-unknown-{depth}"),
                format!(
                    r#"{{"x":{},"structuredContent":{{"ok":true}}}}"#,
                    arrays(depth)
                ),
            ),
        ]);
    }
    out
}

/// `retryAt` at the edges of its grammar, in a refusal and in a defer.
fn instants() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, at) in [
        ("long-fraction", "2026-12-01T09:00:00.000000000100Z"),
        ("leap-2100", "2100-02-29T00:00:00Z"),
        ("leap-2000", "2000-02-29T00:00:00Z"),
        ("year-0", "0000-01-01T00:00:00Z"),
        ("lower", "2026-01-01t00:00:00z"),
        ("minus-zero", "2026-01-01T00:00:00-00:00"),
        ("offset", "2026-01-01T00:00:00+01:00"),
        ("newline", "2026-01-01T00:00:00Z\n"),
        ("leap-second", "2026-06-30T23:59:60Z"),
    ] {
        let at = serde_json::to_string(at).unwrap();
        let defer = format!(r#""decision":"defer","code":"w","retryAt":{at}"#);
        out.extend([
            (
                format!("retry-{name}"),
                format!(r#"{{"type":"about:blank","title":"x","status":429,"retryAt":{at}}}"#),
            ),
            (
                format!("defer-{name}"),
                guarantee("").replace(r#""decision":"allow""#, &defer),
            ),
        ]);
    }
    out
}

/// The families of input where a reader in another language most easily reads otherwise than
/// `atr`, each in every place a contract reads it: numbers, repeated names, prototype names,
/// surrogates, nesting, `retryAt`'s grammar, base64 at the edge of its length, and bytes that
/// are not UTF-8.
fn edge_documents() -> Vec<(String, Vec<u8>)> {
    let mut out = [
        numbers(),
        prototype_names(),
        repeated_names(),
        surrogates(),
        depths(),
        instants(),
    ]
    .concat();
    for (name, length, unit) in [
        ("4096", 1024, "Ab1+"),
        ("4097", 1025, "Ab1+"),
        ("no-digit", 1100, "Abc+"),
        ("accented", 1100, "Ab1é"),
    ] {
        let observation = format!(r#","lastObservation":{{"s":"{}"}}"#, unit.repeat(length));
        out.push((format!("base64-{name}"), failure(&observation)));
    }
    let mut documents: Vec<(String, Vec<u8>)> = out
        .into_iter()
        .map(|(name, text)| (name, text.into_bytes()))
        .collect();
    for (name, bytes) in [
        ("bom", &b"\xef\xbb\xbf{\"ok\":true}"[..]),
        ("latin1", b"{\"ok\":true,\"result\":{\"a\":\"\xe9\"}}"),
        ("overlong", b"{\"ok\":true,\"result\":{\"a\":\"\xc0\xaf\"}}"),
        ("nul", b"{\"ok\":true}\x00"),
    ] {
        documents.push((format!("bytes-{name}"), bytes.to_vec()));
    }
    documents
}

#[test]
fn every_reader_reads_each_family_of_hard_input_as_atr_does() {
    let dir = scratch("edges");
    let mut files = Vec::new();
    for (name, bytes) in edge_documents() {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, bytes).unwrap();
        files.push(path.to_str().unwrap().to_owned());
    }
    let mut args = vec!["classify", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let expected = run(&args, None).stdout;
    assert_eq!(expected.lines().count(), files.len());
    let (package, _building) = typescript_package();
    npm(
        &["run", "build", "--silent"],
        &package,
        "building the npm package",
    );
    let mut python = Command::new(dev_python());
    python
        .args(["-m", "agent_tool_result"])
        .env("PYTHONPATH", python_dir().join("src"));
    let mut node = Command::new("node");
    node.arg(package.join("dist/cli.js"));
    for (what, mut command) in [("the Python package", python), ("the npm package", node)] {
        let out = command.args(&files).output().unwrap();
        let got = String::from_utf8(out.stdout).unwrap();
        for (want, line) in expected.lines().zip(got.lines()) {
            assert_eq!(line, want, "{what} reads it otherwise than atr");
        }
        assert_eq!(got.lines().count(), files.len(), "{what}");
    }
}
