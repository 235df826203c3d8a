//! The README's category table is generated from the code's one table.

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
#[test]
fn the_category_table_matches_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let start = readme
        .find(START)
        .expect("README lacks the table start marker")
        + START.len();
    let end = readme.find(END).expect("README lacks the table end marker");
    let expected = table();
    if readme[start..end] != expected {
        if std::env::var_os("UPDATE_README").is_some() {
            let updated = format!("{}{expected}{}", &readme[..start], &readme[end..]);
            std::fs::write(path, updated).unwrap();
        } else {
            panic!(
                "README.md's category table is out of date; run \
                 `UPDATE_README=1 cargo test --test readme`. Expected:\n{expected}"
            );
        }
    }
}

#[test]
fn the_readme_starts_with_the_two_commands() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let head: String = readme.lines().take(20).collect::<Vec<_>>().join("\n");
    assert!(head.contains("`cargo run --release --bin atr -- validate examples/results`"));
    assert!(head.contains("`cargo test --workspace --all-features`"));
    let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")).unwrap();
    assert!(ci.contains("cargo test --workspace --all-features"));
}
