//! The `parse` gate: every live candidate parsed and named its tool, and,
//! unless the profile allows repairs, none was repaired.

use super::verdict::{GateCheck, fail, pass};
use crate::profile::Profile;
use crate::toolset::clip;
use toolgate_core::{Candidate, Gate};

/// The `parse` gate for live candidates: the first problem found, if any.
pub(super) fn check(profile: &Profile, live: &[(usize, &Candidate)]) -> GateCheck {
    let parse_problem = live.iter().find_map(|(i, c)| {
        if let Some(f) = c.failure() {
            Some(format!(
                "candidate #{i} failed to parse ({}): {}",
                f.kind,
                clip(&f.message, 160)
            ))
        } else if c.name.is_none() {
            Some(format!("candidate #{i} has no readable tool name"))
        } else if !c.repairs.is_empty() && !profile.allow_repairs {
            let names: Vec<&str> = c.repairs.iter().map(|r| r.as_str()).collect();
            Some(format!(
                "candidate #{i} was repaired ({}) and this profile does not execute repaired calls",
                names.join(", ")
            ))
        } else {
            None
        }
    });
    match parse_problem {
        Some(reason) => fail(Gate::Parse, reason),
        None => pass(Gate::Parse, "every candidate parsed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::{FailureKind, Repair};

    #[test]
    fn failures_missing_names_and_repairs_fail_unless_repairs_are_allowed() {
        let profile = Profile::default();
        let good = ok("tag", "get_weather", json!({"city": "Antwerp"}));
        assert_eq!(
            check(&profile, &[(0, &good)]),
            pass(Gate::Parse, "every candidate parsed")
        );
        let broken = failed(
            "tag",
            Some("get_weather"),
            FailureKind::Malformed,
            "unexpected end",
        );
        assert_eq!(
            check(&profile, &[(0, &good), (1, &broken)]),
            fail(
                Gate::Parse,
                "candidate #1 failed to parse (malformed): unexpected end"
            )
        );
        let mut nameless = good.clone();
        nameless.name = None;
        assert_eq!(
            check(&profile, &[(2, &nameless)]),
            fail(Gate::Parse, "candidate #2 has no readable tool name")
        );
        let fixed = repaired(good.clone(), &[Repair::SingleQuotes]);
        assert_eq!(
            check(&profile, &[(0, &fixed)]),
            fail(
                Gate::Parse,
                "candidate #0 was repaired (single_quotes) and this profile does not execute repaired calls"
            )
        );
        let lenient = Profile {
            allow_repairs: true,
            ..Profile::default()
        };
        assert!(check(&lenient, &[(0, &fixed)]).passed);
    }
}
