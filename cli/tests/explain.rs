//! `atr explain` knows every name of the guarantee contract's tables: each well-known policy
//! code, each refusal kind by its name and by its problem type, the policy deny's problem
//! type; and says of an unknown policy code that codes are open.

use crate::common;

use agent_tool_result::guarantee::{POLICY_DENY_TYPE, PolicyCode, RefusalKind};
use common::run;

#[test]
fn every_well_known_policy_code_is_explained_with_its_decision() {
    for code in PolicyCode::WELL_KNOWN {
        let (decision, meaning) = code.describe().unwrap();
        let out = run(&["explain", code.as_str()], None);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.starts_with(&format!(
                "{code}: a policy code of a guarantee result, under a {decision}\n"
            )),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout.contains(&meaning.replace('`', "")),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains(decision.next_step()), "{}", out.stdout);
    }
    let open = run(&["explain", "quiet_hours"], None);
    assert_eq!(open.code, 0);
    assert!(
        open.stdout.contains("not a well-known one"),
        "{}",
        open.stdout
    );
    // A kebab-case name is an error code first: its explanation stands.
    let kebab = run(&["explain", "quiet-hours"], None);
    assert!(
        kebab.stdout.contains("not a well-known code"),
        "{}",
        kebab.stdout
    );
}

#[test]
fn every_refusal_is_explained_by_its_name_and_by_its_problem_type() {
    for kind in RefusalKind::ALL {
        for name in [kind.as_str(), kind.problem_type()] {
            let out = run(&["explain", name], None);
            assert_eq!(out.code, 0, "{}", out.stderr);
            let heading = format!(
                "{}: a refusal of a guarantee tool: nothing ran (RFC 9457 problem, status {})\n",
                kind.as_str(),
                kind.status()
            );
            assert!(out.stdout.contains(&heading), "{name}: {}", out.stdout);
            assert!(out.stdout.contains(kind.next_step()), "{}", out.stdout);
        }
    }
    let deny = run(&["explain", POLICY_DENY_TYPE], None);
    assert_eq!(deny.code, 0);
    assert!(
        deny.stdout.contains("deny over REST (422)"),
        "{}",
        deny.stdout
    );
}

#[test]
fn the_overview_lists_policy_codes_and_refusals_and_unknown_names_say_what_is_known() {
    let all = run(&["explain"], None);
    for code in PolicyCode::WELL_KNOWN {
        assert!(all.stdout.contains(code.as_str()), "{code}");
    }
    for kind in RefusalKind::ALL {
        assert!(all.stdout.contains(kind.as_str()), "{kind:?}");
    }
    let unknown = run(&["explain", "Quiet Hours"], None);
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("policy code"), "{}", unknown.stderr);
}
