//! The closed taxonomy and its one table.

use std::collections::HashSet;

use agent_tool_result::ErrorCategory;
use agent_tool_result::category::RetryClass;

#[test]
fn there_are_twelve_categories_with_unique_wire_names() {
    assert_eq!(ErrorCategory::ALL.len(), 12);
    let names: HashSet<&str> = ErrorCategory::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(names.len(), 12);
}

#[test]
fn every_category_round_trips_through_str_display_and_serde() {
    for category in ErrorCategory::ALL {
        let name = category.as_str();
        assert_eq!(category.to_string(), name);
        assert_eq!(name.parse::<ErrorCategory>(), Ok(category));
        assert_eq!(ErrorCategory::from_wire(name), Some(category));
        let json = serde_json::to_string(&category).unwrap();
        assert_eq!(json, format!("\"{name}\""));
        assert_eq!(
            serde_json::from_str::<ErrorCategory>(&json).unwrap(),
            category
        );
    }
}

#[test]
fn every_category_has_meaning_recovery_and_retry_class() {
    for category in ErrorCategory::ALL {
        for text in [category.meaning(), category.recovery()] {
            assert!(text.len() > 20, "{category}: {text}");
            assert!(
                text.chars().next().unwrap().is_uppercase(),
                "{category}: {text}"
            );
            assert!(text.ends_with('.'), "{category}: {text}");
        }
        assert!(RetryClass::ALL.contains(&category.retry_class()));
    }
}

#[test]
fn retry_classes_follow_the_contract() {
    use ErrorCategory as C;
    use RetryClass as R;
    // The contract keeps focus, foreground and elevation apart because their recoveries differ.
    assert_eq!(C::Focus.retry_class(), R::AfterReobserving);
    assert_eq!(C::Foreground.retry_class(), R::AfterWaiting);
    assert_eq!(C::Elevation.retry_class(), R::NotRecoverable);
    // invalid-argument: the same request keeps failing until it changes.
    assert_eq!(C::InvalidArgument.retry_class(), R::AfterChangingRequest);
    assert_eq!(C::Internal.retry_class(), R::NotRecoverable);
    assert_eq!(C::Timeout.retry_class(), R::AfterWaiting);
    let not_recoverable: Vec<_> = C::ALL
        .into_iter()
        .filter(|c| !c.retry_class().is_retryable())
        .collect();
    assert_eq!(not_recoverable, [C::Elevation, C::Internal]);
}

#[test]
fn wrong_case_and_unknown_names_are_rejected_with_help() {
    for (input, suggestion) in [
        ("Timeout", Some(ErrorCategory::Timeout)),
        ("no_target", Some(ErrorCategory::NoTarget)),
        ("AMBIGUOUS-SELECTOR", Some(ErrorCategory::AmbiguousSelector)),
        ("ocr blank", Some(ErrorCategory::OcrBlank)),
        ("network", None),
        ("", None),
    ] {
        let err = input.parse::<ErrorCategory>().unwrap_err();
        assert_eq!(err.suggestion(), suggestion, "{input}");
        let message = err.to_string();
        assert!(message.starts_with("unknown error category"), "{message}");
        assert!(
            message.contains("internal"),
            "lists the accepted names: {message}"
        );
        assert!(serde_json::from_str::<ErrorCategory>(&format!("{input:?}")).is_err());
    }
}

#[test]
fn retry_class_names_are_distinct() {
    let names: HashSet<&str> = RetryClass::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(names.len(), RetryClass::ALL.len());
    for class in RetryClass::ALL {
        assert_eq!(class.to_string(), class.as_str());
        assert!(!class.description().is_empty());
    }
}
