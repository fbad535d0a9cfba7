//! The `size` gate: each live candidate's payload (`raw`) within the
//! profile's primary or fallback limit, by the role its mode meets.

use super::verdict::{GateCheck, Role, fail, pass};
use crate::profile::Profile;
use std::borrow::Cow;
use toolgate_core::{Candidate, Gate};

/// The `size` gate for live candidates met in `role`.
pub(super) fn check(profile: &Profile, role: Role, live: &[(usize, &Candidate)]) -> GateCheck {
    let (limit, which) = match role {
        Role::Primary => (profile.primary_size_limit, "primary"),
        Role::Fallback => (profile.fallback_size_limit, "fallback"),
    };
    match live.iter().find(|(_, c)| c.raw.len() > limit) {
        Some((i, c)) => fail(
            Gate::Size,
            format!(
                "candidate #{i} payload is {} bytes, over the {limit}-byte {which} limit",
                c.raw.len()
            ),
        ),
        None => pass(Gate::Size, size_pass_reason(limit, which)),
    }
}

/// The `size` gate's pass reason: the default limits' wording is a
/// constant (no formatting per output), others are formatted.
fn size_pass_reason(limit: usize, which: &str) -> Cow<'static, str> {
    match (limit, which) {
        (65536, "primary") => Cow::Borrowed("every payload is within the 65536-byte primary limit"),
        (2048, "fallback") => Cow::Borrowed("every payload is within the 2048-byte fallback limit"),
        _ => Cow::Owned(format!(
            "every payload is within the {limit}-byte {which} limit"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;

    #[test]
    fn size_pass_reasons_read_as_the_formatted_ones() {
        for (limit, which) in [
            (65536, "primary"),
            (2048, "fallback"),
            (65536, "fallback"),
            (2048, "primary"),
            (7, "primary"),
        ] {
            assert_eq!(
                size_pass_reason(limit, which),
                format!("every payload is within the {limit}-byte {which} limit")
            );
        }
        let d = Profile::default();
        assert!(matches!(
            size_pass_reason(d.primary_size_limit, "primary"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            size_pass_reason(d.fallback_size_limit, "fallback"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn the_limit_is_the_roles_and_the_first_oversized_candidate_is_named() {
        let profile = Profile {
            primary_size_limit: 100,
            fallback_size_limit: 40,
            ..Profile::default()
        };
        let small = ok("json", "f", json!({}));
        let big = ok("json", "get_weather", json!({"city": "Antwerp, Belgium"}));
        assert!(
            big.raw.len() > 40 && big.raw.len() <= 100,
            "{}",
            big.raw.len()
        );
        let live = [(0, &small), (3, &big)];
        assert_eq!(
            check(&profile, Role::Primary, &live),
            pass(
                Gate::Size,
                "every payload is within the 100-byte primary limit"
            )
        );
        assert_eq!(
            check(&profile, Role::Fallback, &live),
            fail(
                Gate::Size,
                format!(
                    "candidate #3 payload is {} bytes, over the 40-byte fallback limit",
                    big.raw.len()
                )
            )
        );
    }
}
