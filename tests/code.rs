//! Open codes: validation, well-known constants and their categories.

use agent_tool_result::{
    ErrorCategory, ErrorCode, KnownCode, ToolError, WarningCode, is_kebab_case,
};

#[test]
fn the_documented_codes_are_constants_with_their_categories() {
    use ErrorCategory as C;
    let expected = [
        ("wait-condition-timeout", C::Timeout),
        ("element-stale", C::StaleElement),
        ("window-closed", C::StaleElement),
        ("window-not-found", C::NoTarget),
        ("element-not-found", C::NoTarget),
        ("region-too-large", C::InvalidArgument),
        ("action-unknown", C::InvalidArgument),
        ("pattern-unsupported", C::InvalidArgument),
        ("bad-arguments", C::InvalidArgument),
        ("launch-path-missing", C::InvalidArgument),
        ("recording-in-progress", C::InvalidArgument),
        ("no-recording", C::InvalidArgument),
        ("frame-all-black", C::CaptureBlank),
        ("frame-mostly-blank", C::CaptureBlank),
        ("frame-uniform", C::CaptureBlank),
        ("focus-not-confirmed", C::Focus),
        ("focus-not-set", C::Focus),
        ("target-elevated", C::Elevation),
        ("foreground-not-set", C::Foreground),
        ("unhandled-exception", C::Internal),
        ("uia-faulted", C::Internal),
        ("invoke-faulted", C::Internal),
        ("unhandled", C::Internal),
    ];
    let listed: Vec<(&str, ErrorCategory)> = ErrorCode::WELL_KNOWN
        .iter()
        .map(|k| (k.as_str(), k.category()))
        .collect();
    assert_eq!(listed, expected);
    for (name, category) in expected {
        let code: ErrorCode = name.parse().unwrap();
        assert_eq!(code.known_category(), Some(category), "{name}");
    }
}

#[test]
fn the_documented_warning_codes_are_constants() {
    let names: Vec<&str> = WarningCode::WELL_KNOWN
        .iter()
        .map(WarningCode::as_str)
        .collect();
    assert_eq!(
        names,
        [
            "minimized-window",
            "tree-truncated",
            "region-clamped",
            "capture-blank",
            "capture-fallback"
        ]
    );
}

#[test]
fn a_tool_error_takes_its_category_from_a_known_code() {
    for known in ErrorCode::WELL_KNOWN {
        let error = ToolError::new(known.clone(), "detail");
        assert_eq!(error.category(), known.category());
        assert_eq!(error.code(), known.code());
    }
    let ambiguous = ToolError::new(ErrorCode::selector_matched(7), "seven");
    assert_eq!(ambiguous.category(), ErrorCategory::AmbiguousSelector);
    assert_eq!(ambiguous.code().selector_match_count(), Some(7));
}

#[test]
fn a_custom_code_takes_an_explicit_category() {
    const CACHE_COLD: KnownCode = KnownCode::from_static("cache-cold", ErrorCategory::Timeout);
    assert_eq!(
        ToolError::new(CACHE_COLD, "x").category(),
        ErrorCategory::Timeout
    );

    let code = ErrorCode::new(String::from("license-expired")).unwrap();
    assert_eq!(code.known_category(), None);
    let error = ToolError::with_category(code, ErrorCategory::Elevation, "x");
    assert_eq!(error.category(), ErrorCategory::Elevation);
}

#[test]
fn invalid_codes_are_rejected_everywhere() {
    for bad in [
        "",
        "-",
        "Element",
        "element_not_found",
        "a--b",
        "a-",
        " a",
        "ä",
        "a\n",
    ] {
        assert!(!is_kebab_case(bad));
        let err = ErrorCode::new(bad).unwrap_err();
        assert!(err.to_string().starts_with("invalid code"), "{err}");
        assert!(bad.parse::<WarningCode>().is_err());
        let json = serde_json::to_string(bad).unwrap();
        let err = serde_json::from_str::<ErrorCode>(&json).unwrap_err();
        assert!(err.to_string().starts_with("invalid code"), "{err}");
    }
    assert_eq!(
        ErrorCode::new("").unwrap_err().to_string(),
        "invalid code: codes must not be empty"
    );
}

#[test]
fn codes_compare_with_strings_and_known_codes() {
    let code: ErrorCode = "element-not-found".parse().unwrap();
    assert_eq!(code, "element-not-found");
    assert_eq!(code, ErrorCode::ELEMENT_NOT_FOUND);
    assert_eq!(ErrorCode::ELEMENT_NOT_FOUND, code);
    assert_eq!(ErrorCode::from(ErrorCode::ELEMENT_NOT_FOUND), code);
    assert_eq!(format!("{code}"), "element-not-found");
    assert_eq!(format!("{code:?}"), "ErrorCode(\"element-not-found\")");
}

#[test]
fn selector_matched_builds_and_parses_the_family() {
    for n in [0, 1, 2, 3, 10, 4_294_967_295] {
        let known = ErrorCode::selector_matched(n);
        assert_eq!(known.as_str(), format!("selector-matched-{n}"));
        let parsed: ErrorCode = known.as_str().parse().unwrap();
        assert_eq!(parsed.selector_match_count(), Some(n));
        assert_eq!(
            parsed.known_category(),
            Some(ErrorCategory::AmbiguousSelector)
        );
    }
    for not_family in [
        "selector-matched",
        "selector-matched-",
        "selector-matched-01",
        "selector-matched-4294967296",
    ] {
        if let Ok(code) = not_family.parse::<ErrorCode>() {
            assert_eq!(code.selector_match_count(), None, "{not_family}");
            assert_eq!(code.known_category(), None, "{not_family}");
        }
    }
}
