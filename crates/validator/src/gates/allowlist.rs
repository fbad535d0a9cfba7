//! The `allowlist` gate: every live candidate's tool name is allowlisted,
//! with the closest allowlisted name as a hint. Fail closed: a transcript
//! without a tool list allowlists nothing (SPEC §4).

use super::verdict::{GateCheck, fail, pass};
use crate::toolset::Toolset;
use crate::toolset::clip;
use toolgate_core::{Candidate, Gate};

/// The `allowlist` gate for live candidates.
pub(super) fn check(toolset: &Toolset, live: &[(usize, &Candidate)]) -> GateCheck {
    let not_allowed = live.iter().find_map(|(i, c)| {
        let name = c.name.as_deref()?;
        (!toolset.is_allowed(name)).then(|| {
            let hint = toolset
                .closest(name)
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            format!(
                "candidate #{i}: tool `{}` is not allowlisted{hint}",
                clip(name, 80)
            )
        })
    });
    match not_allowed {
        // Fail closed: nothing executes without an allowlist (SPEC §4).
        _ if !toolset.is_known() => fail(
            Gate::Allowlist,
            "tools unknown: the transcript has no tool list (`tools`), so nothing is allowlisted",
        ),
        Some(reason) => fail(Gate::Allowlist, reason),
        None => pass(Gate::Allowlist, "every tool name is allowlisted"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;

    #[test]
    fn unlisted_names_fail_with_a_hint_and_unknown_tools_allow_nothing() {
        let toolset = Toolset::new(&weather_tools());
        let good = ok("tag", "get_weather", json!({"city": "Antwerp"}));
        assert_eq!(
            check(&toolset, &[(0, &good)]),
            pass(Gate::Allowlist, "every tool name is allowlisted")
        );
        let typo = ok("tag", "get_wether", json!({"city": "Antwerp"}));
        assert_eq!(
            check(&toolset, &[(0, &good), (1, &typo)]),
            fail(
                Gate::Allowlist,
                "candidate #1: tool `get_wether` is not allowlisted (did you mean `get_weather`?)"
            )
        );
        assert_eq!(
            check(&Toolset::unknown(), &[(0, &good)]),
            fail(
                Gate::Allowlist,
                "tools unknown: the transcript has no tool list (`tools`), so nothing is allowlisted"
            )
        );
    }
}
