//! A code constant that is not kebab-case does not compile; a valid one does.

#[test]
fn const_codes_are_checked_at_compile_time() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/valid_const_code.rs");
    cases.compile_fail("tests/ui/invalid_const_code.rs");
}
