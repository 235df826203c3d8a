//! The built `atr` binary: `--version` and `schema`.

use std::process::Command;

fn atr(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_atr"))
        .args(args)
        .output()
        .expect("atr runs")
}

#[test]
fn version_prints_the_package_version() {
    let out = atr(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("atr {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn schema_prints_the_envelope_schema_exactly() {
    for args in [&["schema"][..], &["schema", "envelope"][..]] {
        let out = atr(args);
        assert!(out.status.success(), "{args:?}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            agent_tool_result::ENVELOPE_SCHEMA
        );
    }
}

#[test]
fn an_unknown_schema_is_a_usage_error() {
    let out = atr(&["schema", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'bogus'"));
}
