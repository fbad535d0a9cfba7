//! The `schema` gate: every allowlisted call passes its tool's schema,
//! strictly ([`Toolset::check`]); calls that did not parse cannot be
//! checked (the `parse` gate reports them). The expectation never gates
//! execution.

use super::verdict::{GateCheck, fail, pass};
use crate::labeler::Prepared;
use crate::toolset::Toolset;
use toolgate_core::Gate;

/// The `schema` gate for prepared candidates, and the failing call's reason
/// for the telemetry record. Each call's check is the one the label reads
/// (`Prepared::check`), computed once.
pub(super) fn check(toolset: &Toolset, prepared: &Prepared<'_>) -> (GateCheck, Option<String>) {
    let calls = &prepared.calls;
    let schema_problem = calls
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| toolset.is_allowed(c.name))
        .find_map(|(k, (i, _))| {
            prepared
                .check(toolset, k)
                .as_ref()
                .err()
                .map(|v| format!("candidate #{i}: {}", v.reason))
        });
    let all_parsed = calls.len() == prepared.live.len();
    let gate = match &schema_problem {
        None if !toolset.is_known() => {
            pass(Gate::Schema, "not checked: tools unknown (no tool schemas)")
        }
        Some(reason) => fail(Gate::Schema, reason.clone()),
        None if all_parsed => pass(Gate::Schema, "every call passes its tool's schema"),
        None => pass(
            Gate::Schema,
            "every call that parsed passes its tool's schema (the others cannot be checked)",
        ),
    };
    (gate, schema_problem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::FailureKind;

    #[test]
    fn allowlisted_calls_are_checked_and_the_reason_is_kept() {
        let toolset = Toolset::new(&weather_tools());
        let good = [ok("tag", "get_weather", json!({"city": "Antwerp"}))];
        let (gate, problem) = check(&toolset, &Prepared::new(&good));
        assert_eq!(
            (gate, problem),
            (
                pass(Gate::Schema, "every call passes its tool's schema"),
                None
            )
        );

        let typed = [
            ok("tag", "get_weather", json!({"city": "Antwerp"})),
            ok("tag", "get_weather", json!({"city": 3})),
        ];
        let (gate, problem) = check(&toolset, &Prepared::new(&typed));
        assert!(!gate.passed);
        assert!(gate.reason.starts_with("candidate #1: "), "{}", gate.reason);
        assert_eq!(problem.as_deref(), Some(&*gate.reason));

        // A call of a tool that is not allowlisted is the allowlist's to reject.
        let unlisted = [ok("tag", "nope", json!({"x": 1}))];
        assert!(check(&toolset, &Prepared::new(&unlisted)).0.passed);

        let broken = [
            ok("tag", "get_weather", json!({"city": "Antwerp"})),
            failed("tag", Some("get_weather"), FailureKind::Malformed, "bad"),
        ];
        assert_eq!(
            check(&toolset, &Prepared::new(&broken)).0.reason,
            "every call that parsed passes its tool's schema (the others cannot be checked)"
        );
        assert_eq!(
            check(&Toolset::unknown(), &Prepared::new(&good)).0,
            pass(Gate::Schema, "not checked: tools unknown (no tool schemas)")
        );
    }
}
