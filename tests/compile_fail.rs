//! What a tool author gets wrong fails to compile, with a message that says what to write:
//! a code without its category, a code of two categories without a choice, a category a
//! well-known code never rides under, a code literal that is not kebab-case, a guarantee tool
//! that answers another type than the fields it advertises. Each case is a
//! file in `tests/compile_fail/`, with the compiler's message beside it; what an author gets
//! right (`tests/compiles/`) builds and runs.
//!
//! The pass case also makes the cases build rather than only check: a code macro used inside
//! a function is evaluated when the crate is built (`cargo check` does not evaluate it; a
//! `const` item, both report it).

// Once, in the full build (the README's test command): each case builds the crate anew, and
// the feature matrix would build it once a feature.
#![cfg(all(feature = "replay", feature = "rmcp", feature = "axum"))]

#[test]
fn mistakes_fail_to_compile_and_name_the_fix() {
    let cases = trybuild::TestCases::new();
    cases.pass("compiles/*.rs");
    cases.compile_fail("compile_fail/*.rs");
    cases.compile_fail("compile_fail_replay/*.rs");
}
