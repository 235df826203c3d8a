//! The built `atr` binary: every subcommand, format and exit status, and bad input.

use crate::common;

use std::fs;

use common::{root, run, scratch};
use serde_json::{Value, json};

#[test]
fn version_prints_the_package_version() {
    let out = run(&["--version"], None);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, format!("atr {}\n", common::cli_version()));
}

#[test]
fn validate_the_bundled_examples_in_every_format() {
    let human = run(&["validate", "examples/results"], None);
    assert_eq!(human.code, 1, "{}", human.stderr);
    insta::assert_snapshot!("validate-examples-human", human.stdout);

    let json = run(&["validate", "--format", "json", "examples/results"], None);
    assert_eq!(json.code, 1);
    insta::assert_snapshot!("validate-examples-json", json.stdout);
    let lines: Vec<Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for finding in &lines[..lines.len() - 1] {
        for field in [
            "file", "line", "column", "pointer", "rule", "message", "severity",
        ] {
            assert!(finding.get(field).is_some(), "{field} missing in {finding}");
        }
    }
    assert_eq!(
        lines.last().unwrap()["summary"],
        json!({ "documents": 30, "valid": 23, "invalid": 7, "lints": 1, "ioErrors": 0 })
    );

    let github = run(
        &["validate", "--format", "github", "examples/results"],
        None,
    );
    assert_eq!(github.code, 1);
    let annotations: Vec<&str> = github
        .stdout
        .lines()
        .filter(|l| l.starts_with("::"))
        .collect();
    assert_eq!(annotations.len(), 13);
    assert!(
        annotations
            .iter()
            .all(|l| l.starts_with("::error file=examples/results/")
                || l.starts_with("::warning file=examples/results/"))
    );
    assert!(
        github
            .stdout
            .ends_with("30 documents checked: 23 valid, 7 invalid, 1 lint\n")
    );
}

#[test]
fn exit_status_follows_validity_lints_and_io_errors() {
    let valid = run(&["validate", "tests/fixtures/valid"], None);
    assert_eq!(valid.code, 0, "{}", valid.stdout);
    assert!(
        valid
            .stdout
            .ends_with("55 documents checked: 55 valid, 0 invalid, 0 lints\n")
    );

    let dir = scratch("lints");
    let lint = dir.join("lint.json");
    fs::write(&lint, r#"{"ok":false,"error":{"code":"selector-matched-1","category":"ambiguous-selector","detail":""}}"#).unwrap();
    let lint = lint.to_str().unwrap();
    assert_eq!(run(&["validate", lint], None).code, 0);
    assert_eq!(run(&["validate", "--deny-lints", lint], None).code, 1);

    let missing = run(
        &["validate", "no/such/path.json", "tests/fixtures/valid"],
        None,
    );
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("no/such/path.json"),
        "{}",
        missing.stderr
    );
    assert!(
        missing.stdout.contains("55 documents checked"),
        "the rest is still checked"
    );

    assert_eq!(run(&["validate"], None).code, 2, "no path is a usage error");
    assert_eq!(run(&["validate", "--format", "xml", "x"], None).code, 2);
}

#[test]
fn standard_input_and_contracts() {
    let ndjson = b"{\"ok\":true}\n\n{\"ok\":false}\n";
    let out = run(&["validate", "--ndjson", "-"], Some(ndjson));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .starts_with("-:3:1: error[failure-requires-error]"),
        "{}",
        out.stdout
    );

    let ctr =
        fs::read_to_string(root().join("examples/results/mcp/find-element.call-tool-result.json"))
            .unwrap();
    assert_eq!(run(&["validate", "-"], Some(ctr.as_bytes())).code, 0);
    assert_eq!(
        run(
            &["validate", "--contract", "call-tool-result", "-"],
            Some(ctr.as_bytes())
        )
        .code,
        0
    );
    let as_envelope = run(
        &["validate", "--contract", "envelope", "-"],
        Some(ctr.as_bytes()),
    );
    assert_eq!(as_envelope.code, 1);
    assert!(as_envelope.stdout.contains("no-unknown-fields"));
    let envelope = br#"{"ok":true}"#;
    let as_ctr = run(
        &["validate", "--contract", "call-tool-result", "-"],
        Some(envelope),
    );
    assert_eq!(as_ctr.code, 1);
    assert!(
        as_ctr.stdout.contains("mcp-envelope-present"),
        "{}",
        as_ctr.stdout
    );
}

#[test]
fn bad_input_gives_findings_or_io_errors_never_a_panic() {
    let dir = scratch("bad");
    fs::write(dir.join("binary.json"), [0u8, 159, 146, 150, 0xFF, 0, 1, 2]).unwrap();
    fs::write(dir.join("latin1.json"), b"{\"ok\":false,\"error\":{\"code\":\"x\",\"category\":\"internal\",\"detail\":\"caf\xe9\"}}").unwrap();
    fs::write(
        dir.join("truncated.json"),
        br#"{"ok":false,"error":{"code":"x","#,
    )
    .unwrap();
    fs::write(dir.join("empty.json"), b"").unwrap();
    fs::write(
        dir.join("deep.json"),
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .unwrap();
    let deep_result = format!(
        r#"{{"ok":true,"result":{{"a":{}{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    fs::write(dir.join("deep-result.json"), deep_result).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere.json"), dir.join("dangling.json")).unwrap();
    fs::write(dir.join("zz-valid.json"), br#"{"ok":true}"#).unwrap();
    let out = run(
        &["validate", "--format", "json", dir.to_str().unwrap()],
        None,
    );
    assert_eq!(out.code, 2, "an unreadable entry is an I/O error");
    assert!(out.stderr.contains("dangling.json"), "{}", out.stderr);
    let findings: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rule_of = |file: &str| {
        findings
            .iter()
            .find(|f| f["file"].as_str().is_some_and(|p| p.ends_with(file)))
            .map(|f| f["rule"].as_str().unwrap().to_owned())
    };
    assert_eq!(rule_of("binary.json").as_deref(), Some("well-formed-json"));
    assert_eq!(rule_of("latin1.json").as_deref(), Some("well-formed-json"));
    assert_eq!(
        rule_of("truncated.json").as_deref(),
        Some("well-formed-json")
    );
    assert_eq!(rule_of("empty.json").as_deref(), Some("well-formed-json"));
    assert_eq!(rule_of("deep.json").as_deref(), Some("envelope-is-object"));
    assert!(rule_of("zz-valid.json").is_none());
    let summary = &findings.last().unwrap()["summary"];
    assert_eq!(summary["documents"], 7, "{summary}");
    assert_eq!(summary["ioErrors"], 1);
}

#[test]
fn a_hundred_megabyte_line_is_checked() {
    let dir = scratch("huge");
    let path = dir.join("huge.ndjson");
    let detail = "d".repeat(100 << 20);
    let line = format!(
        r#"{{"ok":false,"error":{{"code":"unhandled","category":"internal","detail":"{detail}"}}}}"#
    );
    fs::write(&path, format!("{line}\n{{\"ok\":1}}\n")).unwrap();
    let out = run(&["validate", path.to_str().unwrap()], None);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("huge.ndjson:2:7: error[field-type] /ok"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("2 documents checked: 1 valid, 1 invalid, 0 lints\n")
    );
}

#[test]
fn explain_categories_and_codes() {
    let all = run(&["explain"], None);
    assert_eq!(all.code, 0);
    insta::assert_snapshot!("explain", all.stdout);
    let category = run(&["explain", "no-target"], None);
    assert!(
        category.stdout.starts_with("no-target\n  when:"),
        "{}",
        category.stdout
    );
    let code = run(&["explain", "selector-matched-3"], None);
    assert!(
        code.stdout
            .starts_with("selector-matched-3: an error code of category ambiguous-selector")
    );
    let warning = run(&["explain", "tree-truncated"], None);
    assert!(warning.stdout.contains("a warning code"));
    let unknown = run(&["explain", "license-expired"], None);
    assert!(unknown.stdout.contains("not a well-known code"));
    // A category and a warning code of the same name: both are explained.
    let both = run(&["explain", "capture-blank"], None);
    assert!(
        both.stdout.starts_with("capture-blank\n  when:"),
        "{}",
        both.stdout
    );
    assert!(
        both.stdout.contains("capture-blank: a warning code"),
        "{}",
        both.stdout
    );
    // A code that rides under two categories names both.
    let shared = run(&["explain", "frame-all-black"], None);
    assert!(
        shared
            .stdout
            .starts_with("frame-all-black: an error code of categories capture-blank or ocr-blank"),
        "{}",
        shared.stdout
    );
    let any = run(&["explain", "unhandled"], None);
    assert!(
        any.stdout.contains("keeps whatever category"),
        "{}",
        any.stdout
    );
    let invalid = run(&["explain", "No_Target"], None);
    assert_eq!(invalid.code, 2);
    assert!(
        invalid
            .stderr
            .contains("did you mean the category `no-target`"),
        "{}",
        invalid.stderr
    );
}

#[test]
fn schema_prints_the_envelope_schema_and_output_schemas() {
    for args in [&["schema"][..], &["schema", "envelope"][..]] {
        let out = run(args, None);
        assert_eq!(out.code, 0, "{args:?}");
        assert_eq!(out.stdout, agent_tool_result::schema::ENVELOPE_SCHEMA);
    }
    let dir = scratch("schema");
    let result_schema = dir.join("find.json");
    fs::write(
        &result_schema,
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "required": ["element"],
            "properties": { "element": { "$ref": "#/definitions/Element" } },
            "definitions": { "Element": { "type": "object", "required": ["automationId"],
                "properties": { "automationId": { "type": "string" } } } }
        })
        .to_string(),
    )
    .unwrap();
    let out = run(
        &[
            "schema",
            "output",
            "--result-schema",
            result_schema.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let schema: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        keeps_definitions_in_the_result(&schema),
        "the result's definitions stay with it and its refs point there"
    );
    assert_eq!(run(&["schema", "output"], None).code, 2);
    assert_eq!(run(&["schema", "bogus"], None).code, 2);
}

/// The output schema keeps the result's definitions under `$defs/result` and points there.
fn keeps_definitions_in_the_result(schema: &Value) -> bool {
    schema["$defs"]["result"]["definitions"]["Element"].is_object()
        && schema
            .to_string()
            .contains("\"#/$defs/result/definitions/Element\"")
        && !schema.to_string().contains("\"#/definitions/")
}

#[test]
fn mcp_projects_and_reads_back() {
    let envelope = br#"{"ok":false,"error":{"code":"window-not-found","category":"no-target","detail":"No window."}}"#;
    let projected = run(&["mcp", "-"], Some(envelope));
    assert_eq!(projected.code, 0);
    let result: Value = serde_json::from_str(&projected.stdout).unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(result["resultType"], "complete");
    let old = run(&["mcp", "--revision", "2025-03-26", "-"], Some(envelope));
    assert!(!old.stdout.contains("structuredContent"));
    let back = run(&["mcp", "--read", "-"], Some(projected.stdout.as_bytes()));
    assert_eq!(back.code, 0);
    assert_eq!(back.stdout.trim_end().as_bytes(), envelope);
    let broken = run(&["mcp", "-"], Some(br#"{"ok":false}"#));
    assert_eq!(broken.code, 1);
    assert!(broken.stderr.contains("failure-requires-error"));
    assert_eq!(
        run(&["mcp", "--revision", "1999-01-01", "-"], Some(envelope)).code,
        2
    );
}

#[test]
fn migrate_applies_the_legacy_rules() {
    let dir = scratch("migrate");
    let observation = dir.join("last.json");
    fs::write(&observation, r#"{"kind":"find","matches":0}"#).unwrap();
    let legacy = br#"{"success":true,"command":"wait-for","data":{"found":false}}"#;
    let out = run(
        &[
            "migrate",
            "--tool",
            "WAIT-FOR",
            "--session",
            "s-1",
            "--last-observation",
            observation.to_str().unwrap(),
            "-",
        ],
        Some(legacy),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "{\"ok\":false,\"sessionId\":\"s-1\",\"error\":{\"code\":\"wait-condition-timeout\",\"category\":\"timeout\",\"detail\":\"wait-for exhausted its timeout before the element appeared.\",\"lastObservation\":{\"kind\":\"find\",\"matches\":0}}}\n"
    );
    let plain = run(&["migrate", "-"], Some(legacy));
    assert_eq!(plain.stdout, "{\"ok\":true,\"result\":{\"found\":false}}\n");
    let not_legacy = run(&["migrate", "-"], Some(b"[1]"));
    assert_eq!(not_legacy.code, 1);
    let not_json = run(&["migrate", "-"], Some(b"nope"));
    assert_eq!(not_json.code, 1);
}

#[test]
fn migrate_reproduces_every_fixture_pair() {
    let dir = root().join("tests/fixtures/legacy");
    let scratch = scratch("migrate-pairs");
    let mut pairs = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".legacy.json") else {
            continue;
        };
        let mut args = vec!["migrate".to_owned()];
        let options = dir.join(format!("{stem}.options.json"));
        if options.exists() {
            let options: Value =
                serde_json::from_str(&fs::read_to_string(options).unwrap()).unwrap();
            if let Some(tool) = options["tool"].as_str() {
                args.extend(["--tool".to_owned(), tool.to_owned()]);
            }
            if let Some(session) = options["sessionId"].as_str() {
                args.extend(["--session".to_owned(), session.to_owned()]);
            }
            if let Some(observation) = options.get("lastObservation") {
                let path = scratch.join(format!("{stem}.observation.json"));
                fs::write(&path, observation.to_string()).unwrap();
                args.extend([
                    "--last-observation".to_owned(),
                    path.to_str().unwrap().to_owned(),
                ]);
            }
        }
        args.push(dir.join(&name).to_str().unwrap().to_owned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args, None);
        assert_eq!(out.code, 0, "{stem}: {}", out.stderr);
        let written: Value = serde_json::from_str(&out.stdout).unwrap();
        let expected: Value = serde_json::from_str(
            &fs::read_to_string(dir.join(format!("{stem}.envelope.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(written, expected, "{stem}");
        pairs += 1;
    }
    assert!(pairs >= 20, "{pairs} pairs");
}

/// Guarantee results: their own contract, recognized by `auto`, their schema and names.
#[test]
fn guarantee_results_are_validated_explained_and_printed() {
    let denied = r#"{"schemaVersion":1,"settlement":{"state":"not_started"},"policy":{"decision":"deny","code":"contact_opted_out"}}"#;
    for contract in ["guarantee", "auto"] {
        let out = run(
            &["validate", "--contract", contract, "-"],
            Some(denied.as_bytes()),
        );
        assert_eq!(out.code, 0, "{contract}: {}", out.stdout);
    }
    let broken = denied.replace("not_started", "committed");
    let out = run(&["validate", "-"], Some(broken.as_bytes()));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("guarantee-deny-before-provider"),
        "{}",
        out.stdout
    );
    let out = run(&["schema", "guarantee"], None);
    assert_eq!(out.stdout, agent_tool_result::schema::GUARANTEE_SCHEMA);
    let out = run(&["explain", "unknown"], None);
    assert!(out.stdout.contains("Re-query by id"), "{}", out.stdout);
    let out = run(&["explain", "defer"], None);
    assert!(
        out.stdout.starts_with("defer: a policy decision"),
        "{}",
        out.stdout
    );
}

#[test]
fn classify_reads_curl_captures_and_har_logs_and_exits_on_profile_breaches() {
    let good = run(
        &[
            "classify",
            "examples/responses/campaign-held.http",
            "examples/responses/sms-denied.http",
            "examples/responses/session.har",
        ],
        None,
    );
    assert_eq!(good.code, 0, "{}", good.stderr);
    assert!(
        good.stdout
            .ends_with("5 responses, 0 breaking the REST profile\n")
    );
    assert!(
        good.stdout
            .contains("campaign-held.http: 202 deferred: settlement committed")
    );
    assert!(good.stdout.contains(
        "#1 http://127.0.0.1:8080/tools/send_campaign_batch: 409 refused (key-in-flight)"
    ));
    // The HAR's third body is base64: decoded, it is an `unknown` settlement.
    assert!(
        good.stdout
            .contains("200 outcome unknown: settlement unknown")
    );
    assert!(!good.stdout.contains("settled: settlement unknown"));

    let broken = run(&["classify", "examples/responses/broken"], None);
    assert_eq!(broken.code, 2, "a directory is not a capture");
    let broken = run(
        &[
            "classify",
            "examples/responses/broken/held-with-location.http",
            "examples/responses/broken/sms-denied-as-403.http",
        ],
        None,
    );
    assert_eq!(broken.code, 1, "{}", broken.stderr);
    assert!(
        broken
            .stdout
            .contains("a policy deny answered 403, not 422")
    );
    assert!(broken.stdout.contains("a 202 with Location"));
    assert!(
        broken
            .stdout
            .ends_with("2 responses, 2 breaking the REST profile\n")
    );

    // Standard input, LF line ends, a 401 without a challenge.
    let stdin = run(
        &["classify", "-"],
        Some(b"HTTP/1.1 401 Unauthorized\ncontent-length: 0\n\n"),
    );
    assert_eq!(stdin.code, 1);
    assert!(
        stdin
            .stdout
            .contains("a 401 without a Bearer WWW-Authenticate challenge")
    );

    for garbage in [&b"{\"log\": {}}"[..], b"HTTP/1.1 abc\r\n\r\n"] {
        let out = run(&["classify", "-"], Some(garbage));
        assert_eq!(out.code, 2, "{}", String::from_utf8_lossy(garbage));
        assert!(out.stderr.starts_with("atr: <stdin>: "), "{}", out.stderr);
    }
    // Neither a response nor JSON: a document that is no result, which says so.
    let text = run(&["classify", "-"], Some(b"not a response"));
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout
            .starts_with("<stdin>: stop (not-contract): The text is not JSON.")
    );
    let missing = run(&["classify", "no/such/file.http"], None);
    assert_eq!(missing.code, 2);
}

/// A transport fault that keeps RFC 9457 (the façade's and the service's own 400, 404, 415)
/// and a server error are outcomes, not breaches: exit 0. A policy-deny problem served as
/// `application/json` is a breach, and the message blames the content type.
#[test]
fn classify_accepts_legitimate_faults_and_blames_the_content_type() {
    let problem = |status: u16, title: &str| {
        format!(
            "HTTP/1.1 {status} {title}\ncontent-type: application/problem+json\n\n\
             {{\"type\":\"about:blank\",\"title\":\"{title}\",\"status\":{status},\"detail\":\"d\"}}"
        )
    };
    for (capture, outcome) in [
        (
            problem(400, "Bad Request"),
            "400 refused (invalid-arguments)",
        ),
        (
            problem(404, "Not Found"),
            "404 transport fault (about:blank), d",
        ),
        (
            problem(415, "Unsupported Media Type"),
            "415 transport fault",
        ),
        (
            problem(503, "Service Unavailable"),
            "503 refused (unavailable)",
        ),
        (
            "HTTP/1.1 502 Bad Gateway\ncontent-type: text/html\n\n<h1>bad gateway</h1>".to_owned(),
            "502 refused (unavailable)",
        ),
    ] {
        let out = run(&["classify", "-"], Some(capture.as_bytes()));
        assert_eq!(out.code, 0, "{capture}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.contains(outcome), "{capture}: {}", out.stdout);
    }
    let out = run(&["classify", "-"], Some(b"HTTP/1.1 502 Bad Gateway\n\n"));
    assert!(
        out.stdout.contains("the same request with the same key"),
        "{}",
        out.stdout
    );
    let as_json =
        std::fs::read_to_string(common::root().join("examples/responses/sms-denied.http"))
            .unwrap()
            .replace("application/problem+json", "application/json");
    let out = run(&["classify", "-"], Some(as_json.as_bytes()));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("served as application/json, not application/problem+json"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("status 422"), "{}", out.stdout);
}

/// A CI job with a typo must not pass: nothing checked is a failure (exit 2) unless
/// `--allow-empty` says it is expected.
#[test]
fn validate_fails_when_nothing_was_checked() {
    let dir = scratch("nothing");
    let empty = dir.join("empty");
    let texts = dir.join("texts");
    fs::create_dir_all(&empty).unwrap();
    fs::create_dir_all(&texts).unwrap();
    fs::write(texts.join("notes.txt"), "{\"ok\":true}").unwrap();
    let typo = dir.join("no-such-dir-*");
    for path in [&empty, &texts] {
        let out = run(&["validate", path.to_str().unwrap()], None);
        assert_eq!(out.code, 2, "{}", path.display());
        assert!(
            out.stderr.contains("no document was checked") && out.stderr.contains("--allow-empty"),
            "{}",
            out.stderr
        );
        assert!(
            out.stdout
                .ends_with("0 documents checked: 0 valid, 0 invalid, 0 lints\n")
        );
        let allowed = run(&["validate", "--allow-empty", path.to_str().unwrap()], None);
        assert_eq!(allowed.code, 0, "{}", allowed.stderr);
    }
    assert_eq!(run(&["validate", typo.to_str().unwrap()], None).code, 2);
}

/// Counts read as English: one document, one lint, one input.
#[test]
fn summaries_use_singulars_for_one() {
    let dir = scratch("plurals");
    let file = dir.join("one.json");
    fs::write(
        &file,
        r#"{"ok":false,"error":{"code":"selector-matched-1","category":"ambiguous-selector","detail":"d"}}"#,
    )
    .unwrap();
    let out = run(&["validate", file.to_str().unwrap()], None);
    assert!(
        out.stdout
            .ends_with("1 document checked: 1 valid, 0 invalid, 1 lint\n"),
        "{}",
        out.stdout
    );
    let missing = dir.join("missing.json");
    let out = run(
        &[
            "validate",
            file.to_str().unwrap(),
            missing.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        out.stdout.contains(", 1 input unreadable"),
        "{}",
        out.stdout
    );
}

/// `explain` says of `selector-matched-0` and `-1` what the lint says, not "not well-known".
#[test]
fn explain_says_what_the_selector_lint_says() {
    for (code, count) in [
        ("selector-matched-1", "1 match"),
        ("selector-matched-0", "0 matches"),
    ] {
        let out = run(&["explain", code], None);
        assert_eq!(out.code, 0);
        assert!(
            out.stdout.contains("selector-match-count"),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains(count), "{}", out.stdout);
        assert!(
            !out.stdout.contains("not a well-known code"),
            "{}",
            out.stdout
        );
    }
}

/// A flag that does not apply is a usage error, not silently ignored.
#[test]
fn result_schema_without_output_is_a_usage_error() {
    let dir = scratch("result-schema");
    let file = dir.join("r.json");
    fs::write(&file, r#"{"type":"object"}"#).unwrap();
    for kind in [&[][..], &["envelope"][..], &["guarantee"][..]] {
        let mut args = vec!["schema"];
        args.extend_from_slice(kind);
        args.extend(["--result-schema", file.to_str().unwrap()]);
        let out = run(&args, None);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.contains("atr schema output"), "{}", out.stderr);
    }
}

/// A lone surrogate is named as such, wherever it stands.
#[test]
fn a_lone_surrogate_is_named() {
    for text in [
        r#"{"ok":true,"sessionId":"\ud800"}"#,
        r#"{"ok":true,"sessionId":"\ud800x"}"#,
        r#"{"ok":true,"sessionId":"\udc00"}"#,
    ] {
        let out = run(&["validate", "-"], Some(text.as_bytes()));
        assert_eq!(out.code, 1, "{text}");
        assert!(
            out.stdout.contains("lone surrogate"),
            "{text}: {}",
            out.stdout
        );
    }
}

/// `atr mcp` projects guarantee results and refusals too, and reads them back; `--contract
/// guarantee` checks a tools/call result carrying one, `isError` included; a failing classify
/// prints its summary once.
#[test]
fn mcp_and_validate_take_guarantee_results_in_tools_call_results() {
    let dir = scratch("mcp-guarantee");
    let denied = dir.join("denied.json");
    fs::write(
        &denied,
        r#"{"schemaVersion":1,"settlement":{"state":"not_started"},"policy":{"decision":"deny","code":"contact_opted_out"}}"#,
    )
    .unwrap();
    let out = run(&["mcp", denied.to_str().unwrap()], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let projected: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(projected["isError"], true);
    assert_eq!(projected["structuredContent"]["policy"]["decision"], "deny");
    let call = dir.join("denied.call-tool-result.json");
    fs::write(&call, &out.stdout).unwrap();
    let read = run(&["mcp", "--read", call.to_str().unwrap()], None);
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(&read.stdout).unwrap(),
        serde_json::from_str::<Value>(&fs::read_to_string(&denied).unwrap()).unwrap()
    );
    let checked = run(
        &[
            "validate",
            "--contract",
            "guarantee",
            call.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(checked.code, 0, "{}{}", checked.stdout, checked.stderr);
    let flipped = dir.join("flipped.call-tool-result.json");
    fs::write(
        &flipped,
        out.stdout.replace("\"isError\":true", "\"isError\":false"),
    )
    .unwrap();
    let checked = run(
        &[
            "validate",
            "--contract",
            "guarantee",
            flipped.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(checked.code, 1);
    assert!(
        checked.stdout.contains("mcp-is-error-mirror"),
        "{}",
        checked.stdout
    );

    let refusal = dir.join("refusal.json");
    fs::write(
        &refusal,
        r#"{"type":"https://agentsfirst.ai/problems/idempotency-key-missing","title":"An Idempotency-Key is required","status":400,"detail":"send one"}"#,
    )
    .unwrap();
    let out = run(&["mcp", refusal.to_str().unwrap()], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let projected: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(projected["isError"], true);
    assert_eq!(projected["structuredContent"]["status"], 400);

    let broken = run(
        &[
            "classify",
            "examples/responses/broken/held-with-location.http",
        ],
        None,
    );
    assert_eq!(broken.code, 1);
    assert!(
        broken.stderr.is_empty(),
        "the summary is printed once: {}",
        broken.stderr
    );
}

/// A projection keeps the payload's key order, both ways.
#[test]
fn mcp_keeps_the_payloads_key_order() {
    let dir = scratch("mcp-order");
    let envelope = dir.join("find.json");
    let text = r#"{"ok":true,"result":{"handle":1,"className":"Button","bounds":{"y":2,"x":1}}}"#;
    fs::write(&envelope, text).unwrap();
    let out = run(&["mcp", envelope.to_str().unwrap()], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(r#""structuredContent":{"ok":true,"result":{"handle":1,"className":"Button","bounds":{"y":2,"x":1}}}"#),
        "{}",
        out.stdout
    );
    let call = dir.join("find.call-tool-result.json");
    fs::write(&call, &out.stdout).unwrap();
    let read = run(&["mcp", "--read", call.to_str().unwrap()], None);
    assert_eq!(read.stdout.trim_end(), text);

    // A guarantee result's own fields too, and the projection is the library's otherwise.
    let guarantee = dir.join("sms.json");
    let text = r#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"messageId":"m1","attempts":2,"carrier":{"z":1,"a":2}}"#;
    fs::write(&guarantee, text).unwrap();
    for revision in ["2026-07-28", "2025-06-18", "2025-03-26"] {
        let out = run(
            &["mcp", "--revision", revision, guarantee.to_str().unwrap()],
            None,
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        let read = agent_tool_result::guarantee::GuaranteeResult::<Value>::from_json(text).unwrap();
        let library = agent_tool_result::mcp::CallToolResult::from_guarantee_for(
            &read,
            revision.parse().unwrap(),
        )
        .unwrap()
        .to_json();
        // Equal as JSON, the text block's JSON compared as JSON too.
        let normal = |text: &str| {
            let mut value: Value = serde_json::from_str(text).unwrap();
            let block = value["content"][0]["text"].as_str().unwrap().to_owned();
            value["content"][0]["text"] = serde_json::from_str(&block).unwrap();
            value
        };
        assert_eq!(normal(&out.stdout), normal(&library), "{revision}");
        // In the text block (every revision has one), the tool's order.
        let escaped = r#"\"messageId\":\"m1\",\"attempts\":2,\"carrier\":{\"z\":1,\"a\":2}"#;
        assert!(out.stdout.contains(escaped), "{}", out.stdout);
    }
    let out = run(&["mcp", guarantee.to_str().unwrap()], None);
    let call = dir.join("sms.call-tool-result.json");
    fs::write(&call, &out.stdout).unwrap();
    let read = run(&["mcp", "--read", call.to_str().unwrap()], None);
    assert_eq!(read.stdout.trim_end(), text);
}

/// A producer with problem types of its own: without its published document its deny reads
/// as a transport fault; with `--openapi` it is the deny it is, and its key refusal the
/// refusal it is. A document that declares nothing of the profile is a usage error.
#[test]
fn classify_reads_a_producers_problem_types_from_its_openapi_document() {
    use agent_tool_result::guarantee::RefusalKind;
    use agent_tool_result::http::openapi::OpenApi;
    use agent_tool_result::http::rest::ProblemTypes;

    let dir = scratch("openapi");
    let types = ProblemTypes::default()
        .with_policy_deny("https://api.example/problems/denied")
        .unwrap()
        .with_refusal(
            RefusalKind::KeyMismatch,
            "https://api.example/problems/reused",
        )
        .unwrap();
    let document = OpenApi::new("theirs", "1")
        .with_problem_types(types)
        .to_json();
    fs::write(dir.join("openapi.json"), document).unwrap();
    fs::write(dir.join("not-profile.json"), r#"{"openapi":"3.1.0"}"#).unwrap();
    fs::write(
        dir.join("deny.http"),
        "HTTP/1.1 422 Unprocessable Entity\ncontent-type: application/problem+json\n\n\
         {\"type\":\"https://api.example/problems/denied\",\"title\":\"Denied\",\"status\":422,\
         \"schemaVersion\":1,\"settlement\":{\"state\":\"not_started\"},\
         \"policy\":{\"decision\":\"deny\",\"code\":\"contact_opted_out\"}}",
    )
    .unwrap();
    fs::write(
        dir.join("reused.http"),
        "HTTP/1.1 422 Unprocessable Entity\ncontent-type: application/problem+json\n\n\
         {\"type\":\"https://api.example/problems/reused\",\"title\":\"Reused\",\"status\":422}",
    )
    .unwrap();
    let path = |name: &str| dir.join(name).display().to_string();
    let (deny, reused) = (path("deny.http"), path("reused.http"));

    let blind = run(&["classify", &deny], None);
    assert!(
        blind.stdout.contains("422 transport fault"),
        "{}",
        blind.stdout
    );
    let read = run(
        &[
            "classify",
            "--openapi",
            &path("openapi.json"),
            &deny,
            &reused,
        ],
        None,
    );
    assert_eq!(read.code, 0, "{}{}", read.stdout, read.stderr);
    assert!(
        read.stdout.contains("deny.http: 422 policy denied"),
        "{}",
        read.stdout
    );
    assert!(
        read.stdout
            .contains("reused.http: 422 refused (key-mismatch)"),
        "{}",
        read.stdout
    );
    let unusable = run(
        &["classify", "--openapi", &path("not-profile.json"), &deny],
        None,
    );
    assert_eq!(unusable.code, 2);
    assert!(
        unusable.stderr.contains("components.schemas"),
        "{}",
        unusable.stderr
    );
}
