//! The pipeline for one output: extract, select, gate, decide (SPEC §4).
//!
//! 1. **Select.** The primary mode's live candidates (reasoning excluded) are
//!    the candidates when there are any. Otherwise, when the profile enables
//!    fallbacks, the first fallback mode with live candidates wins
//!    (`fallback_used`). With `allow_repairs` the lenient variant of each mode
//!    is used, otherwise the strict one.
//! 2. **Gate**, in the order of SPEC §9 (`intent`, `single`, `size`, `parse`,
//!    `allowlist`, `schema`; one unit each in `crate::gates`, whose docs
//!    say what each checks); the first failing gate decides. The
//!    expectation never gates execution.
//! 3. **Decide**: `execute` the normalized calls when every gate passes,
//!    `no_call` when no mode found a candidate, else `reject`.
//!
//! The label is computed separately (SPEC §5) from the selected mode's
//! candidates — or the primary mode's when no mode found any — and a gate
//! never changes it. Every gate is evaluated for display, even after the
//! first failure; only the first failure is the decision.
//!
//! Telemetry `parse_mode` uses seed 000's wording: `primary` when the primary
//! mode produced the candidates (whatever its name), the fallback mode's name
//! when a fallback did, `none` otherwise. [`run`] emits the record as a
//! `tracing` event with target `toolgate::telemetry`.

use crate::gates::gate_prepared;
pub use crate::gates::{
    GateCheck, Gated, Role, gate, one_call_refusal, reemit_example, reemit_message,
};
use crate::labeler::{Labeled, Prepared, label, label_prepared};
use crate::profile::Profile;
use crate::toolset::Toolset;
use toolgate_core::{Candidate, Decision, Expectation, Gate, Label, SchemaValidation, Telemetry};
use toolgate_formats::{Extractor, Input, Strictness, extract};

/// What the pipeline produced for one output under one profile.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineResult {
    /// The profile's name.
    pub profile: String,
    /// The mode whose candidates were selected, if any.
    pub parse_mode: Option<String>,
    /// Whether a fallback mode was used.
    pub fallback_used: bool,
    /// The selected candidates (live ones: reasoning excluded).
    pub candidates: Vec<Candidate>,
    /// Every gate, in check order.
    pub gates: Vec<GateCheck>,
    /// The decision.
    pub decision: Decision,
    /// The telemetry record.
    pub telemetry: Telemetry,
    /// The label of the selected candidates (SPEC §5: gates never change it).
    pub label: Label,
    /// Why that label.
    pub label_reason: String,
}

impl PipelineResult {
    /// The transcript's request terms applied to the result: with
    /// `parallel_tool_calls: false` ([`toolgate_core::Transcript::one_call`])
    /// a decision to execute more than one call is rejected at the `single`
    /// gate, as the proxy rejects the output it judged
    /// ([`crate::gates::at_most_one_call`]).
    pub(crate) fn under_terms_of(mut self, transcript: &toolgate_core::Transcript) -> Self {
        if transcript.one_call {
            crate::gates::at_most_one_call(
                &mut self.gates,
                &mut self.decision,
                &mut self.telemetry,
            );
        }
        self
    }
}

/// Runs the profile's pipeline on one output: extracts with the profile's
/// modes (from `extractors`; a mode with no extractor finds nothing), selects,
/// gates, decides, labels, and emits the telemetry event.
pub fn run(
    profile: &Profile,
    extractors: &[Box<dyn Extractor>],
    input: &Input<'_>,
    toolset: &Toolset,
    expect: Option<&Expectation>,
) -> PipelineResult {
    // Looked up once: the primary is both extracted and shown in re-emits.
    let primary = extractor_of(extractors, &profile.primary);
    let result = run_quiet_primary(profile, extractors, primary, input, toolset, expect);
    emit(&result);
    result
}

/// [`run`] without emitting the telemetry event, with the primary mode's
/// extractor already looked up (an [`crate::Engine`] remembers where it is:
/// the linear search by name costs a dynamic call per mode before it, on
/// every output).
pub(crate) fn run_quiet_primary(
    profile: &Profile,
    extractors: &[Box<dyn Extractor>],
    primary: Option<&dyn Extractor>,
    input: &Input<'_>,
    toolset: &Toolset,
    expect: Option<&Expectation>,
) -> PipelineResult {
    let strictness = profile_strictness(profile);
    run_with(
        profile,
        input,
        toolset,
        expect,
        |mode| {
            let found = if mode == profile.primary {
                primary
            } else {
                extractor_of(extractors, mode)
            };
            found
                .map(|e| extract(e, input, strictness))
                .unwrap_or_default()
        },
        primary,
    )
}

/// The strictness the profile's pipeline extracts with: lenient only when the
/// profile allows repaired calls to execute.
pub fn profile_strictness(profile: &Profile) -> Strictness {
    if profile.allow_repairs {
        Strictness::Lenient
    } else {
        Strictness::Strict
    }
}

/// [`run`] with extraction supplied by the caller (replay reuses the
/// candidates it already extracted) and without emitting the event.
/// `candidates_of(mode)` returns every candidate of that mode (reasoning ones
/// included); `primary` the primary mode's extractor, whose syntax the
/// re-emit message shows.
pub fn run_with<F>(
    profile: &Profile,
    input: &Input<'_>,
    toolset: &Toolset,
    expect: Option<&Expectation>,
    mut candidates_of: F,
    primary_mode: Option<&dyn Extractor>,
) -> PipelineResult
where
    F: FnMut(&str) -> Vec<Candidate>,
{
    let primary = candidates_of(&profile.primary);
    let mut selected: Option<(String, Role, Vec<Candidate>)> = None;
    // The primary's candidates are needed again only when no mode selects
    // any (for the label): kept here, moved when selected.
    let mut unselected = Some(primary);
    if unselected
        .as_ref()
        .is_some_and(|p| p.iter().any(Candidate::is_live))
    {
        selected = unselected
            .take()
            .map(|p| (profile.primary.clone(), Role::Primary, p));
    } else if profile.fallbacks_enabled {
        for mode in &profile.fallbacks {
            let found = candidates_of(mode);
            if found.iter().any(Candidate::is_live) {
                selected = Some((mode.clone(), Role::Fallback, found));
                break;
            }
        }
    }
    match selected {
        Some((mode, role, all)) => {
            // Label and gates share the live candidates, their calls and
            // each call's schema check.
            let prepared = Prepared::new(&all);
            let labeled = label_prepared(&prepared, expect, toolset, input.hit_length_limit);
            let gated = gate_prepared(profile, role, &mode, prepared, input, toolset, primary_mode);
            PipelineResult {
                profile: profile.name.clone(),
                parse_mode: Some(mode),
                fallback_used: role == Role::Fallback,
                candidates: all.into_iter().filter(Candidate::is_live).collect(),
                gates: gated.gates,
                decision: gated.decision,
                telemetry: gated.telemetry,
                label: labeled.label,
                label_reason: labeled.reason,
            }
        }
        None => {
            let primary = unselected.unwrap_or_default();
            let Labeled { label, reason } =
                label(&primary, expect, toolset, input.hit_length_limit);
            let gated = gate(
                profile,
                Role::Primary,
                &profile.primary,
                &[],
                input,
                toolset,
                None,
            );
            PipelineResult {
                profile: profile.name.clone(),
                parse_mode: None,
                fallback_used: false,
                candidates: Vec::new(),
                gates: gated.gates,
                decision: gated.decision,
                telemetry: gated.telemetry,
                label,
                label_reason: reason,
            }
        }
    }
}

/// The extractor of `mode` among `extractors`.
pub(crate) fn extractor_of<'e>(
    extractors: &'e [Box<dyn Extractor>],
    mode: &str,
) -> Option<&'e dyn Extractor> {
    extractors.iter().find(|e| e.name() == mode).map(|e| &**e)
}

/// Emits the telemetry record as a `tracing` event (target
/// `toolgate::telemetry`).
///
/// Text fields go through [`toolgate_core::sanitize::one_line`]: the reason
/// quotes model-chosen keys and tool names, and a subscriber writing to a
/// terminal (the CLI's stderr) must never receive raw control, bidi or
/// invisible characters from them.
pub fn emit(result: &PipelineResult) {
    use toolgate_core::sanitize::one_line;
    let t = &result.telemetry;
    // Text fields are recorded as `&str` (a `Display` field goes through
    // the formatter's `Debug` path: slower, the same text).
    let repairs: std::borrow::Cow<'_, str> = if t.repairs.is_empty() {
        "".into()
    } else {
        Repairs(&t.repairs).to_string().into()
    };
    let schema_reason = one_line(t.schema_reason.as_deref().unwrap_or(""));
    let profile = one_line(&result.profile);
    let parse_mode = one_line(&t.parse_mode);
    tracing::info!(
        target: "toolgate::telemetry",
        profile = &*profile,
        parse_mode = &*parse_mode,
        fallback_used = t.fallback_used,
        candidate_count = t.candidate_count as u64,
        schema_validation = schema_validation_str(t.schema_validation),
        schema_reason = &*schema_reason,
        gate = t.gate.map_or("null", Gate::as_str),
        decision = t.decision.as_str(),
        repairs = &*repairs,
        label = result.label.as_str(),
        "tool call decision"
    );
}

/// The repairs as the telemetry line writes them: comma-separated, with no
/// list built (and no string at all for an output without repairs).
struct Repairs<'a>(&'a [toolgate_core::Repair]);

impl std::fmt::Display for Repairs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(r.as_str())?;
        }
        Ok(())
    }
}

fn schema_validation_str(v: SchemaValidation) -> &'static str {
    match v {
        SchemaValidation::Pass => "pass",
        SchemaValidation::Fail => "fail",
        SchemaValidation::Skipped => "skipped",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::{Call, FailureKind, Repair};

    fn tools() -> Toolset {
        Toolset::new(&weather_tools())
    }

    fn weather(mode: &str, city: &str) -> Candidate {
        ok(mode, "get_weather", json!({"city": city}))
    }

    /// Runs the default profile with `tag`, `json`, `bracket` returning the given candidates.
    fn run_default(
        output: &str,
        tag: Vec<Candidate>,
        json_: Vec<Candidate>,
        bracket: Vec<Candidate>,
    ) -> PipelineResult {
        let extractors = vec![
            Fixed::boxed("tag", tag),
            Fixed::boxed("json", json_),
            Fixed::boxed("bracket", bracket),
        ];
        run(
            &Profile::default(),
            &extractors,
            &Input::new(output),
            &tools(),
            None,
        )
    }

    fn reject(gate: Gate, reason: &str) -> Decision {
        Decision::Reject {
            gate,
            reason: reason.into(),
            reemit: None,
        }
    }

    #[test]
    fn primary_candidates_execute() {
        let r = run_default("<tool …>", vec![weather("tag", "Antwerp")], vec![], vec![]);
        assert_eq!(
            r.decision,
            Decision::Execute {
                calls: vec![Call::new("get_weather", json!({"city": "Antwerp"}))]
            }
        );
        assert_eq!(r.parse_mode.as_deref(), Some("tag"));
        assert!(!r.fallback_used);
        assert_eq!(r.label, Label::Pass);
        let t = &r.telemetry;
        assert_eq!(t.parse_mode, "primary");
        assert_eq!((t.fallback_used, t.candidate_count), (false, 1));
        assert_eq!(t.schema_validation, SchemaValidation::Pass);
        assert_eq!((t.gate, t.decision.as_str()), (None, "execute"));
        assert_eq!(t.tool_result_status, None);
        assert_eq!(r.gates[0].reason, "not applicable to primary candidates");
        assert_eq!(r.gates[1].reason, "not applicable to primary candidates");
        assert!(r.gates.iter().all(|g| g.passed));
        assert_eq!(
            r.gates.iter().map(|g| g.gate).collect::<Vec<_>>(),
            Gate::ALL
        );
    }

    #[test]
    fn no_candidates_anywhere_is_no_call_with_the_primary_label() {
        let r = run_default("just prose", vec![], vec![], vec![]);
        assert_eq!(r.decision, Decision::NoCall);
        assert_eq!((r.parse_mode, r.fallback_used), (None, false));
        assert_eq!(r.telemetry.parse_mode, "none");
        assert_eq!(r.telemetry.schema_validation, SchemaValidation::Skipped);
        assert_eq!(r.telemetry.decision, "no_call");
        assert_eq!(r.label, Label::NoCall);
        // With `expect` saying no call, the primary label is pass.
        let extractors = vec![Fixed::boxed("tag", vec![])];
        let e = expect(&[]);
        let r = run(
            &Profile::default(),
            &extractors,
            &Input::new("hi"),
            &tools(),
            Some(&e),
        );
        assert_eq!((r.decision, r.label), (Decision::NoCall, Label::Pass));
    }

    #[test]
    fn first_fallback_with_candidates_wins() {
        let out = "need_tool: yes\n[get_weather(city=\"Ghent\")]";
        let r = run_default(out, vec![], vec![], vec![weather("bracket", "Ghent")]);
        assert_eq!(r.parse_mode.as_deref(), Some("bracket"));
        assert!(r.fallback_used);
        assert_eq!(r.telemetry.parse_mode, "bracket");
        assert!(r.telemetry.fallback_used);
        assert_eq!(r.decision.kind(), "execute");
        let r = run_default(
            out,
            vec![],
            vec![weather("json", "A")],
            vec![weather("bracket", "B")],
        );
        assert_eq!(r.parse_mode.as_deref(), Some("json"));
        assert_eq!(r.decision.calls()[0].arguments["city"], "A");
    }

    #[test]
    fn reasoning_only_primary_candidates_do_not_select_the_primary() {
        let r = run_default(
            "CALL_TOOL\n{…}",
            vec![in_reasoning(weather("tag", "X"))],
            vec![weather("json", "A")],
            vec![],
        );
        assert_eq!(r.parse_mode.as_deref(), Some("json"));
        assert_eq!(r.candidates.len(), 1);
    }

    #[test]
    fn fallbacks_disabled_means_primary_only() {
        let p = Profile {
            fallbacks_enabled: false,
            ..Profile::default()
        };
        let extractors = vec![
            Fixed::boxed("tag", vec![]),
            Fixed::boxed("json", vec![weather("json", "A")]),
        ];
        let r = run(
            &p,
            &extractors,
            &Input::new("CALL_TOOL\n{}"),
            &tools(),
            None,
        );
        assert_eq!(r.decision, Decision::NoCall);
        assert_eq!(r.label, Label::NoCall);
    }

    #[test]
    fn intent_gate_alone_label_pass_decision_reject() {
        let r = run_default("{\"tool\": …}", vec![], vec![weather("json", "A")], vec![]);
        assert_eq!(
            r.decision,
            reject(
                Gate::Intent,
                "fallback `json` candidates need explicit tool intent: a line that is exactly one of `need_tool: yes`, `CALL_TOOL`"
            )
        );
        // The label describes the output; the gate only changes the decision.
        assert_eq!(r.label, Label::Pass);
        assert_eq!(r.telemetry.gate, Some(Gate::Intent));
        assert_eq!(r.telemetry.schema_validation, SchemaValidation::Skipped);
        // Every other gate still passed (evaluated for display).
        assert!(r.gates[1..].iter().all(|g| g.passed));
    }

    #[test]
    fn intent_token_must_stand_alone_on_a_line_in_output_or_reasoning() {
        let c = || vec![weather("json", "A")];
        assert_eq!(
            run_default("  CALL_TOOL  \n{}", vec![], c(), vec![])
                .decision
                .kind(),
            "execute"
        );
        assert_eq!(
            run_default("I will CALL_TOOL now\n{}", vec![], c(), vec![])
                .decision
                .gate(),
            Some(Gate::Intent)
        );
        assert_eq!(
            run_default("need_tool: yes please", vec![], c(), vec![])
                .decision
                .gate(),
            Some(Gate::Intent)
        );
        let extractors = vec![Fixed::boxed("tag", vec![]), Fixed::boxed("json", c())];
        let mut input = Input::new("{}");
        input.reasoning_field = Some("thinking...\nneed_tool: yes\n");
        let r = run(&Profile::default(), &extractors, &input, &tools(), None);
        assert_eq!(r.decision.kind(), "execute");
    }

    #[test]
    fn single_gate_alone_rejects_with_a_reemit_message() {
        let r = run_default(
            "CALL_TOOL",
            vec![],
            vec![weather("json", "A"), weather("json", "B")],
            vec![],
        );
        let expected_reemit = "Your reply contained 2 tool calls in the `json` format, which cannot be executed. \
             Re-emit exactly one tool call, in the `tag` format, for example:\n\
             <tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>";
        assert_eq!(
            r.decision,
            Decision::Reject {
                gate: Gate::Single,
                reason: "2 fallback `json` candidates; a fallback may carry exactly one call"
                    .into(),
                reemit: Some(expected_reemit.into()),
            }
        );
        assert_eq!(r.telemetry.candidate_count, 2);
    }

    #[test]
    fn primary_candidates_may_be_several() {
        let r = run_default(
            "",
            vec![weather("tag", "A"), weather("tag", "B")],
            vec![],
            vec![],
        );
        assert_eq!(r.decision.calls().len(), 2);
    }

    #[test]
    fn size_gate_alone_per_call_and_per_role() {
        let mut big = weather("json", "A");
        big.raw = "x".repeat(2049);
        let r = run_default("CALL_TOOL", vec![], vec![big.clone()], vec![]);
        assert_eq!(
            r.decision,
            reject(
                Gate::Size,
                "candidate #0 payload is 2049 bytes, over the 2048-byte fallback limit"
            )
        );
        // The same payload is fine as a primary candidate (64 KiB limit)...
        big.mode = "tag".into();
        assert_eq!(
            run_default("", vec![big.clone()], vec![], vec![])
                .decision
                .kind(),
            "execute"
        );
        // ...until it exceeds that.
        big.raw = "x".repeat(65537);
        assert_eq!(
            run_default("", vec![big], vec![], vec![]).decision,
            reject(
                Gate::Size,
                "candidate #0 payload is 65537 bytes, over the 65536-byte primary limit"
            )
        );
    }

    #[test]
    fn parse_gate_alone_failed_or_repaired() {
        let bad = failed(
            "tag",
            Some("get_weather"),
            FailureKind::Malformed,
            "expected `}`",
        );
        let r = run_default("", vec![bad], vec![], vec![]);
        assert_eq!(
            r.decision,
            reject(
                Gate::Parse,
                "candidate #0 failed to parse (malformed): expected `}`"
            )
        );
        assert_eq!(r.label, Label::MalformedJson);
        let fixed = repaired(weather("tag", "A"), &[Repair::SingleQuotes]);
        let r = run_default("", vec![fixed.clone()], vec![], vec![]);
        assert_eq!(
            r.decision,
            reject(
                Gate::Parse,
                "candidate #0 was repaired (single_quotes) and this profile does not execute repaired calls"
            )
        );
        assert_eq!(r.telemetry.repairs, vec![Repair::SingleQuotes]);
        let lenient = Profile {
            allow_repairs: true,
            ..Profile::default()
        };
        let extractors = vec![Fixed::boxed("tag", vec![fixed])];
        let r = run(&lenient, &extractors, &Input::new(""), &tools(), None);
        assert_eq!(r.decision.kind(), "execute");
    }

    #[test]
    fn allowlist_gate_alone() {
        let r = run_default(
            "",
            vec![ok("tag", "get_wether", json!({"city": "A"}))],
            vec![],
            vec![],
        );
        assert_eq!(
            r.decision,
            reject(
                Gate::Allowlist,
                "candidate #0: tool `get_wether` is not allowlisted (did you mean `get_weather`?)"
            )
        );
        assert_eq!(r.label, Label::WrongTool);
    }

    #[test]
    fn schema_gate_alone_with_telemetry_reason() {
        let r = run_default(
            "",
            vec![ok("tag", "get_weather", json!({"city": "A", "days": "3"}))],
            vec![],
            vec![],
        );
        let Decision::Reject {
            gate,
            reason,
            reemit,
        } = &r.decision
        else {
            panic!("expected a rejection, got {:?}", r.decision)
        };
        assert_eq!((*gate, reemit), (Gate::Schema, &None));
        assert!(
            reason.starts_with("candidate #0: `get_weather`: wrong type at `/days`"),
            "{reason}"
        );
        assert_eq!(r.telemetry.schema_validation, SchemaValidation::Fail);
        assert_eq!(r.telemetry.schema_reason.as_deref(), Some(reason.as_str()));
        assert_eq!(r.label, Label::TypeCoercion);
    }

    #[test]
    fn expectation_never_gates_execution() {
        let extractors = vec![Fixed::boxed("tag", vec![weather("tag", "Ghent")])];
        let e = expect(&[(
            "get_weather",
            Some(json!({"properties": {"city": {"const": "Antwerp"}}})),
        )]);
        let r = run(
            &Profile::default(),
            &extractors,
            &Input::new(""),
            &tools(),
            Some(&e),
        );
        assert_eq!(r.decision.kind(), "execute");
        assert_eq!(r.label, Label::SchemaViolation);
    }

    #[test]
    fn gate_order_first_failure_is_reported() {
        // Fails intent, single, size, parse, allowlist and schema at once.
        let mut a = ok("json", "nope", json!({"x": 1}));
        a.raw = "x".repeat(5000);
        let b = failed("json", None, FailureKind::Malformed, "bad");
        let c = ok("json", "get_weather", json!({"days": "x"}));
        let all = vec![a, b, c];
        let order: Vec<Option<Gate>> = [
            ("{", all.clone()),
            ("CALL_TOOL", all.clone()),
            ("CALL_TOOL", vec![all[0].clone()]),
            ("CALL_TOOL", vec![all[1].clone()]),
            ("CALL_TOOL", vec![ok("json", "nope", json!({}))]),
            ("CALL_TOOL", vec![all[2].clone()]),
        ]
        .into_iter()
        .map(|(out, cands)| run_default(out, vec![], cands, vec![]).decision.gate())
        .collect();
        assert_eq!(
            order,
            Gate::ALL.iter().copied().map(Some).collect::<Vec<_>>()
        );
        let r = run_default("{", vec![], all, vec![]);
        let failed: Vec<Gate> = r
            .gates
            .iter()
            .filter(|g| !g.passed)
            .map(|g| g.gate)
            .collect();
        assert_eq!(failed, Gate::ALL);
    }

    #[test]
    fn repairs_are_written_comma_separated() {
        assert_eq!(Repairs(&[]).to_string(), "");
        assert_eq!(
            Repairs(&[Repair::SingleQuotes]).to_string(),
            "single_quotes"
        );
        assert_eq!(
            Repairs(&[Repair::SingleQuotes, Repair::TrailingCommas]).to_string(),
            "single_quotes,trailing_commas"
        );
    }

    #[test]
    fn repairs_in_telemetry_are_the_union() {
        let a = repaired(
            weather("tag", "A"),
            &[Repair::TrailingCommas, Repair::SingleQuotes],
        );
        let b = repaired(weather("tag", "B"), &[Repair::SingleQuotes]);
        let r = run_default("", vec![a, b], vec![], vec![]);
        assert_eq!(
            r.telemetry.repairs,
            vec![Repair::SingleQuotes, Repair::TrailingCommas]
        );
    }
}
