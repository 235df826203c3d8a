//! Open codes: validation, well-known constants and their categories.

use agent_tool_result::code::is_kebab_case;
use agent_tool_result::{
    Classified, ErrorCategory, ErrorCode, ToolError, WarningCode, classified, error_code,
};

/// The reference producer's table: each code with the categories it rides under.
fn reference_table() -> Vec<(&'static str, Vec<ErrorCategory>)> {
    use ErrorCategory as C;
    let mut table: Vec<(&str, Vec<ErrorCategory>)> = Vec::new();
    let mut add = |codes: &[&'static str], categories: &[ErrorCategory]| {
        for code in codes {
            table.push((code, categories.to_vec()));
        }
    };
    add(&["window-not-found", "element-not-found"], &[C::NoTarget]);
    add(&["window-closed", "element-stale"], &[C::StaleElement]);
    add(&["target-elevated"], &[C::Elevation]);
    add(&["focus-not-set", "focus-not-confirmed"], &[C::Focus]);
    add(&["foreground-not-set"], &[C::Foreground]);
    add(&["wait-condition-timeout"], &[C::Timeout]);
    add(
        &["frame-all-black", "frame-uniform"],
        &[C::CaptureBlank, C::OcrBlank],
    );
    add(&["ocr-no-text"], &[C::OcrNoText]);
    add(
        &[
            "unknown-session",
            "bad-arguments",
            "pattern-unsupported",
            "action-unknown",
            "region-too-large",
            "region-out-of-bounds",
            "ocr-image-too-large",
            "launch-path-missing",
            "record-action-unknown",
            "recording-in-progress",
            "no-recording",
            "clipboard-text-missing",
            "windows-unknown-condition",
            "windows-no-criteria",
            "invalid-argument",
        ],
        &[C::InvalidArgument],
    );
    add(
        &[
            "emergency-stopped",
            "bootstrap-only",
            "consent-pending",
            "agent-commands-disabled",
            "unknown-tool",
            "command-disabled",
            "engine-unavailable",
            "command-dropped",
            "send-command-timeout",
            "provisioning-not-authorized",
            "provisioning-failed",
            "session-token-invalid",
            "consent-unavailable",
            "consent-timeout",
            "consent-denied",
            "no-output",
            "uia-faulted",
            "invoke-faulted",
            "ocr-unavailable",
            "get-text-exception",
            "capture-exception",
            "launch-failed",
            "record-exception",
            "record-no-frames",
            "record-write-failed",
        ],
        &[C::Internal],
    );
    add(&["unknown-command"], &[C::Internal, C::InvalidArgument]);
    // The contract document's own examples, which the reference never emits.
    add(&["frame-mostly-blank"], &[C::CaptureBlank]);
    add(&["unhandled-exception"], &[C::Internal]);
    table
}

#[test]
fn the_reference_producers_codes_are_constants_with_their_categories() {
    let table = reference_table();
    for (name, categories) in &table {
        let code: ErrorCode = name.parse().unwrap();
        let mut known = code.categories().to_vec();
        known.sort();
        let mut expected = categories.clone();
        expected.sort();
        assert_eq!(known, expected, "{name}");
        let constant = ErrorCode::WELL_KNOWN
            .iter()
            .find(|k| k.as_str() == *name)
            .unwrap_or_else(|| panic!("{name} has no constant"));
        assert_eq!(constant.categories()[0], categories[0], "{name}");
        let single = (categories.len() == 1).then(|| categories[0]);
        assert_eq!(code.category(), single, "{name}");
    }
    // `unhandled` keeps whatever category the failure named.
    let unhandled: ErrorCode = "unhandled".parse().unwrap();
    assert_eq!(unhandled.categories().len(), ErrorCategory::ALL.len());
    assert_eq!(
        ErrorCode::UNHANDLED.categories()[0],
        ErrorCategory::Internal
    );
    assert_eq!(ErrorCode::WELL_KNOWN.len(), table.len() + 1);
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
            "capture-fallback",
            "ocr-fallback",
            "unfetched-recording-discarded",
        ]
    );
}

#[test]
fn a_well_known_code_with_one_category_is_a_constant_that_brings_it() {
    use agent_tool_result::code::KnownErrorCode;
    for known in KnownErrorCode::ALL {
        let code = known.code();
        match (known.classified(), known.category()) {
            (Some(classified), Some(category)) => {
                assert_eq!(classified.code(), &code);
                assert_eq!(classified.category(), category);
                let error = ToolError::new(&classified, "detail");
                assert_eq!((error.code(), error.category()), (&code, category));
            }
            (None, None) => assert!(code.categories().len() > 1, "{code}"),
            other => panic!("{code}: {other:?}"),
        }
        // At run time, a pair is allowed exactly when the code rides under the category.
        for category in ErrorCategory::ALL {
            assert_eq!(
                Classified::new(code.clone(), category).is_ok(),
                code.categories().contains(&category),
                "{code} {category}"
            );
        }
    }
    let ambiguous = ToolError::new(Classified::selector_matched(7).unwrap(), "seven");
    assert_eq!(ambiguous.category(), ErrorCategory::AmbiguousSelector);
    assert_eq!(ambiguous.code().selector_match_count(), Some(7));
    assert_eq!(Classified::selector_matched(1), None);
}

#[test]
fn a_code_with_several_categories_is_given_one_of_its_own() {
    let capture = ToolError::new(classified!("frame-all-black", CaptureBlank), "x");
    let ocr = ToolError::new(classified!(ErrorCode::FRAME_ALL_BLACK, OcrBlank), "x");
    assert_eq!(capture.code(), ocr.code());
    assert_eq!(
        (capture.category(), ocr.category()),
        (ErrorCategory::CaptureBlank, ErrorCategory::OcrBlank)
    );
    let unknown = ToolError::new(
        classified!(ErrorCode::UNKNOWN_COMMAND, InvalidArgument),
        "x",
    );
    assert_eq!(unknown.category(), ErrorCategory::InvalidArgument);
}

#[test]
fn a_tool_own_code_is_declared_with_its_category() {
    const CACHE_COLD: Classified = classified!("cache-cold", Timeout);
    let error = ToolError::new(CACHE_COLD, "x");
    assert_eq!(error.category(), ErrorCategory::Timeout);
    assert_eq!(error.code().as_str(), "cache-cold");

    // Known only at run time: checked at run time.
    let code = ErrorCode::new(String::from("license-expired")).unwrap();
    assert_eq!(code.category(), None);
    let error = ToolError::new(
        Classified::new(code, ErrorCategory::Elevation).unwrap(),
        "x",
    );
    assert_eq!(error.category(), ErrorCategory::Elevation);

    let err = Classified::new(ErrorCode::WINDOW_NOT_FOUND, ErrorCategory::Timeout).unwrap_err();
    assert_eq!(
        err.to_string(),
        "code `window-not-found` rides under `no-target`, not `timeout`"
    );
    // `unhandled` keeps any category, internal when none is given.
    assert_eq!(Classified::UNHANDLED.category(), ErrorCategory::Internal);
    assert_eq!(
        classified!("unhandled", Focus).category(),
        ErrorCategory::Focus
    );
}

/// Agents match the well-known codes; the constants are the type itself.
#[test]
fn codes_can_be_matched() {
    use agent_tool_result::code::KnownErrorCode;
    let c: ErrorCode = ErrorCode::WINDOW_NOT_FOUND;
    assert_eq!(c.known(), Some(KnownErrorCode::WindowNotFound));
    let branch = |code: &ErrorCode| match code.known() {
        Some(KnownErrorCode::WindowNotFound | KnownErrorCode::ElementNotFound) => "query",
        Some(KnownErrorCode::SelectorMatched(_)) => "narrow",
        Some(_) => "other known",
        None => "category",
    };
    assert_eq!(branch(&ErrorCode::ELEMENT_NOT_FOUND), "query");
    assert_eq!(branch(&ErrorCode::selector_matched(4).unwrap()), "narrow");
    assert_eq!(branch(&ErrorCode::UIA_FAULTED), "other known");
    assert_eq!(branch(&error_code!("cache-cold")), "category");
    for known in KnownErrorCode::ALL {
        assert_eq!(known.code().known(), Some(*known));
    }
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
    assert_eq!(format!("{code}"), "element-not-found");
    assert_eq!(format!("{code:?}"), "ErrorCode(\"element-not-found\")");
}

#[test]
fn selector_matched_builds_and_parses_the_family() {
    for n in [2, 3, 10, 4_294_967_295] {
        let code = ErrorCode::selector_matched(n).unwrap();
        assert_eq!(code.as_str(), format!("selector-matched-{n}"));
        let parsed: ErrorCode = code.as_str().parse().unwrap();
        assert_eq!(parsed.selector_match_count(), Some(n));
        assert_eq!(parsed.category(), Some(ErrorCategory::AmbiguousSelector));
    }
    // No match and one match are not ambiguous: refused when building, no category when read.
    for n in [0, 1] {
        assert_eq!(ErrorCode::selector_matched(n), None);
        let parsed: ErrorCode = format!("selector-matched-{n}").parse().unwrap();
        assert_eq!(parsed.selector_match_count(), Some(n));
        assert_eq!(parsed.category(), None);
    }
    for not_family in [
        "selector-matched",
        "selector-matched-",
        "selector-matched-01",
        "selector-matched-4294967296",
    ] {
        if let Ok(code) = not_family.parse::<ErrorCode>() {
            assert_eq!(code.selector_match_count(), None, "{not_family}");
            assert_eq!(code.category(), None, "{not_family}");
        }
    }
}
