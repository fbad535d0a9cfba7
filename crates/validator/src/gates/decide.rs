//! The decision the gates lead to (SPEC §4, step 3): `execute` the
//! normalized calls when every gate passed, `no_call` when there is no live
//! candidate, else `reject` by the first failing gate — and the telemetry
//! record that says so.

use super::verdict::{GateCheck, Gated, Role};
use crate::labeler::Prepared;
use std::collections::BTreeSet;
use toolgate_core::{Candidate, Decision, Gate, Repair, SchemaValidation, Telemetry};

/// The union of the live candidates' repairs, in order.
pub(super) fn repairs(live: &[(usize, &Candidate)]) -> Vec<Repair> {
    // Strict extraction records no repair: no set to build then.
    if live.iter().all(|(_, c)| c.repairs.is_empty()) {
        Vec::new()
    } else {
        live.iter()
            .flat_map(|(_, c)| c.repairs.iter().copied())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

/// No live candidate: every gate passes (there is nothing to gate) and the
/// decision is `no_call`.
pub(super) fn no_candidates(repairs: Vec<Repair>) -> Gated {
    let gates = Gate::ALL
        .iter()
        .map(|&g| GateCheck {
            gate: g,
            passed: true,
            reason: "no candidates".into(),
        })
        .collect();
    Gated {
        gates,
        decision: Decision::NoCall,
        telemetry: Telemetry {
            parse_mode: "none".into(),
            fallback_used: false,
            candidate_count: 0,
            schema_validation: SchemaValidation::Skipped,
            schema_reason: None,
            gate: None,
            decision: "no_call".into(),
            repairs,
            tool_result_status: None,
        },
    }
}

/// The decision of `gates` (every gate, in order) for the prepared live
/// candidates of `mode` met in `role`: the first failure rejects (carrying
/// `reemit` when it is `single`, and `schema_problem` into the telemetry when
/// it is `schema`); none executes the calls.
pub(super) fn decide(
    gates: Vec<GateCheck>,
    role: Role,
    mode: &str,
    prepared: Prepared<'_>,
    reemit: Option<String>,
    schema_problem: Option<String>,
    repairs: Vec<Repair>,
) -> Gated {
    let live_count = prepared.live.len();
    let first_failure = gates.iter().find(|g| !g.passed);
    let (decision, schema_validation, schema_reason) = match first_failure {
        Some(g) => {
            let (sv, sr) = if g.gate == Gate::Schema {
                (SchemaValidation::Fail, schema_problem)
            } else {
                (SchemaValidation::Skipped, None)
            };
            let decision = Decision::Reject {
                gate: g.gate,
                reason: g.reason.to_string(),
                reemit: if g.gate == Gate::Single { reemit } else { None },
            };
            (decision, sv, sr)
        }
        None => (
            Decision::Execute {
                calls: prepared.into_calls(),
            },
            SchemaValidation::Pass,
            None,
        ),
    };
    let telemetry = Telemetry {
        parse_mode: match role {
            Role::Primary => "primary".into(),
            Role::Fallback => mode.to_string().into(),
        },
        fallback_used: role == Role::Fallback,
        candidate_count: live_count,
        schema_validation,
        schema_reason,
        gate: decision.gate(),
        decision: decision.kind().into(),
        repairs,
        tool_result_status: None,
    };
    Gated {
        gates,
        decision,
        telemetry,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::gates::verdict::{fail, pass};
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::Call;

    fn all_pass() -> Vec<GateCheck> {
        Gate::ALL.iter().map(|&g| pass(g, "ok")).collect()
    }

    #[test]
    fn every_gate_passed_executes_the_calls() {
        let c = [ok("json", "get_weather", json!({"city": "Antwerp"}))];
        let d = decide(
            all_pass(),
            Role::Fallback,
            "json",
            Prepared::new(&c),
            None,
            None,
            vec![],
        );
        assert_eq!(
            d.decision,
            Decision::Execute {
                calls: vec![Call::new("get_weather", json!({"city": "Antwerp"}))]
            }
        );
        // The executed call is the candidate's own arguments, not a copy.
        let (Decision::Execute { calls }, Ok(args)) = (&d.decision, &c[0].arguments) else {
            unreachable!("asserted above: an execute decision of a parsed candidate")
        };
        assert!(std::sync::Arc::ptr_eq(&calls[0].arguments, args));
        assert_eq!(d.telemetry.parse_mode, "json");
        assert!(d.telemetry.fallback_used);
        assert_eq!(d.telemetry.schema_validation, SchemaValidation::Pass);
        assert_eq!(d.telemetry.candidate_count, 1);
    }

    #[test]
    fn the_first_failure_rejects_and_carries_only_its_own_detail() {
        let c = [ok("tag", "get_weather", json!({"city": 3}))];
        let mut gates = all_pass();
        gates[1] = fail(Gate::Single, "two");
        gates[5] = fail(Gate::Schema, "bad type");
        // Both a re-emit message and a schema reason are at hand: only the
        // failing gate's own detail is kept.
        let with_details = |gates: Vec<GateCheck>| {
            decide(
                gates,
                Role::Primary,
                "tag",
                Prepared::new(&c),
                Some("re-emit".into()),
                Some("bad type".into()),
                vec![],
            )
        };
        let d = with_details(gates.clone());
        assert_eq!(
            d.decision,
            Decision::Reject {
                gate: Gate::Single,
                reason: "two".into(),
                reemit: Some("re-emit".into())
            }
        );
        assert_eq!(d.telemetry.schema_reason, None);
        assert_eq!(d.telemetry.parse_mode, "primary");
        gates[1] = pass(Gate::Single, "one");
        let d = with_details(gates);
        assert_eq!(d.decision.gate(), Some(Gate::Schema));
        assert_eq!(d.telemetry.schema_validation, SchemaValidation::Fail);
        assert_eq!(d.telemetry.schema_reason.as_deref(), Some("bad type"));
    }

    #[test]
    fn repairs_are_the_union_in_order_and_no_candidates_is_no_call() {
        use toolgate_core::Repair;
        let a = repaired(
            ok("tag", "f", json!({})),
            &[Repair::TrailingCommas, Repair::SingleQuotes],
        );
        let b = repaired(ok("tag", "f", json!({})), &[Repair::SingleQuotes]);
        let union = repairs(&[(0, &a), (1, &b)]);
        let mut sorted = union.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(union, sorted);
        assert_eq!(union.len(), 2);
        let none = no_candidates(Vec::new());
        assert_eq!(none.decision, Decision::NoCall);
        assert!(
            none.gates
                .iter()
                .all(|g| g.passed && g.reason == "no candidates")
        );
        assert_eq!(none.telemetry.decision, "no_call");
    }
}
