//! Replay: every mode (strict and lenient), native, custom patterns, and the
//! profile pipeline, for one transcript (SPEC §6): the body of
//! [`Engine::judge`] at [`crate::Full`] depth, from the set-up every depth
//! shares (`engine::Case`).
//!
//! For each extractor of the [`Engine`] (built-ins, then custom patterns) and
//! each strictness, replay extracts once and reports the candidates, the
//! normalized calls, the label, and the gates, decision and telemetry this
//! mode's candidates would meet in the profile: primary rules when it is the
//! profile's primary mode, fallback rules otherwise. The profile pipeline then
//! reuses those same candidates (strict ones, or lenient ones when the profile
//! allows repairs): no extractor runs twice. `native` is replayed only when the
//! transcript has `tool_calls`.
//!
//! The [`Toolset`] and the [`ParamTypes`] are built once per distinct list of
//! tool definitions and cached in the [`Engine`] (a batch of transcripts
//! usually shares one tool list, and compiling the schemas dominated replay).
//! Replay is analysis: it emits no telemetry event (the live pipeline,
//! [`crate::pipeline::run`] and [`Engine::parse_output`], does).

use crate::engine::Case;
use crate::engine::Engine;
use crate::findings::{self, Finding};
use crate::labeler::label;
use crate::mode_result::ModeResult;
use crate::pipeline::PipelineResult;
use crate::pipeline::{Role, gate, profile_strictness, run_with};
use crate::profile::Profile;
use crate::toolset::Toolset;
use toolgate_core::{Candidate, Transcript};
use toolgate_formats::{Extractor, Input, Strictness, extract};

/// Everything replay knows about one transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// Strict results, one per mode, in engine order (`native` only when the
    /// transcript has `tool_calls`).
    pub strict: Vec<ModeResult>,
    /// Lenient results, same order.
    pub lenient: Vec<ModeResult>,
    /// The profile pipeline's result.
    pub profile: PipelineResult,
    /// Server findings ([`Finding`]), apart from the labels.
    pub findings: Vec<Finding>,
}

impl Replay {
    /// The strict result of `mode`.
    pub fn strict_mode(&self, mode: &str) -> Option<&ModeResult> {
        self.strict.iter().find(|m| m.mode == mode)
    }
    /// The lenient result of `mode`.
    pub fn lenient_mode(&self, mode: &str) -> Option<&ModeResult> {
        self.lenient.iter().find(|m| m.mode == mode)
    }
}

impl Engine {
    /// The full replay of `transcript` as `case` set it up: every mode
    /// extracted strict and lenient, then judged ([`Engine::judge_extracted`]).
    pub(crate) fn replay_case(&self, transcript: &Transcript, case: &Case<'_>) -> Replay {
        let input = case.input(transcript, self.max_candidates);
        let mut strict = Vec::with_capacity(self.extractors.len());
        let mut lenient = Vec::with_capacity(self.extractors.len());
        for extractor in &self.extractors {
            let mode = extractor.name();
            if mode == "native" && transcript.tool_calls.is_none() {
                continue;
            }
            strict.push((
                mode,
                extract(extractor.as_ref(), &input, Strictness::Strict),
            ));
            lenient.push((
                mode,
                extract(extractor.as_ref(), &input, Strictness::Lenient),
            ));
        }
        self.judge_extracted(transcript, case, &input, strict, lenient)
    }

    /// `replay` judged again as `case` set it up, without extracting again.
    pub(crate) fn rejudge_case(
        &self,
        transcript: &Transcript,
        case: &Case<'_>,
        replay: &Replay,
    ) -> Replay {
        let input = case.input(transcript, self.max_candidates);
        fn take(list: &[ModeResult]) -> Vec<(&str, Vec<Candidate>)> {
            list.iter()
                .map(|m| (m.mode.as_str(), m.candidates.clone()))
                .collect()
        }
        let (strict, lenient) = (take(&replay.strict), take(&replay.lenient));
        self.judge_extracted(transcript, case, &input, strict, lenient)
    }

    /// Labels, gates and the profile pipeline for extracted candidates.
    fn judge_extracted(
        &self,
        transcript: &Transcript,
        case: &Case<'_>,
        input: &Input<'_>,
        strict: Vec<(&str, Vec<Candidate>)>,
        lenient: Vec<(&str, Vec<Candidate>)>,
    ) -> Replay {
        let profile: &Profile = &case.profile;
        let (toolset, _) = &*case.compiled;
        let expect = transcript.expect.as_ref();
        let primary = self.primary_extractor(profile);
        let results = |list: Vec<(&str, Vec<Candidate>)>, strictness| -> Vec<ModeResult> {
            list.into_iter()
                .map(|(mode, candidates)| {
                    self.mode_result(
                        mode, strictness, candidates, input, toolset, transcript, profile, primary,
                    )
                })
                .collect()
        };
        let mut strict = results(strict, Strictness::Strict);
        let mut lenient = results(lenient, Strictness::Lenient);

        // A native `arguments: ""` for a parameterless tool whose raw call is
        // complete is the server's doing: read it as `{}` and report it.
        let mut found = Vec::new();
        if let Some((indices, finding)) =
            findings::empty_native_arguments(transcript, profile, &strict)
        {
            for results in [&mut strict, &mut lenient] {
                if let Some(pos) = results.iter().position(|m| m.mode == "native") {
                    let old = &results[pos];
                    let mut candidates = old.candidates.clone();
                    for &i in &indices {
                        if let Some(c) = candidates.get_mut(i) {
                            c.arguments = Ok(Default::default());
                        }
                    }
                    results[pos] = self.mode_result(
                        "native",
                        old.strictness,
                        candidates,
                        input,
                        toolset,
                        transcript,
                        profile,
                        primary,
                    );
                }
            }
            found.push(finding);
        }
        let mut found_rest = findings::findings(transcript, profile, &strict);
        found_rest.extend(found);
        found_rest.extend(findings::stream_divergence(
            crate::stream::replay_chunks_as(self, profile, transcript),
        ));
        found_rest.extend(findings::capture_findings(transcript));
        found_rest.sort_by_key(|f| f.kind);

        let cached = if profile_strictness(profile).is_lenient() {
            &lenient
        } else {
            &strict
        };
        let result = run_with(
            profile,
            input,
            toolset,
            expect,
            |mode| {
                cached
                    .iter()
                    .find(|m| m.mode == mode)
                    .map(|m| m.candidates.clone())
                    .unwrap_or_default()
            },
            primary,
        )
        .under_terms_of(transcript);
        Replay {
            strict,
            lenient,
            profile: result,
            findings: found_rest,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mode_result(
        &self,
        mode: &str,
        strictness: Strictness,
        candidates: Vec<Candidate>,
        input: &Input<'_>,
        toolset: &Toolset,
        transcript: &Transcript,
        profile: &Profile,
        primary: Option<&dyn Extractor>,
    ) -> ModeResult {
        let labeled = label(
            &candidates,
            transcript.expect.as_ref(),
            toolset,
            input.hit_length_limit,
        );
        let role = Role::of(profile, mode);
        let mut gated = gate(profile, role, mode, &candidates, input, toolset, primary);
        // The request's `parallel_tool_calls: false`, as for the profile.
        if transcript.one_call {
            crate::gates::at_most_one_call(
                &mut gated.gates,
                &mut gated.decision,
                &mut gated.telemetry,
            );
        }
        let calls = candidates
            .iter()
            .filter(|c| c.is_live())
            .filter_map(Candidate::call)
            .collect();
        ModeResult {
            mode: mode.to_string(),
            strictness,
            candidates,
            calls,
            label: labeled.label,
            reason: labeled.reason,
            gates: gated.gates,
            decision: gated.decision,
            telemetry: gated.telemetry,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::{Call, Decision, Gate, Label, Repair};

    #[test]
    fn every_mode_strict_and_lenient_with_profile() {
        let e = engine(seed_modes(
            vec![],
            vec![ok("json", "get_weather", json!({"city": "Antwerp"}))],
        ));
        let r = e.replay(&transcript(json!({})));
        let modes: Vec<&str> = r.strict.iter().map(|m| m.mode.as_str()).collect();
        // `native` only when the transcript has `tool_calls`.
        assert_eq!(modes, ["tag", "json", "bracket"]);
        assert_eq!(r.lenient.len(), 3);
        let tag = r.strict_mode("tag").unwrap();
        assert_eq!(
            (tag.label, tag.decision.clone()),
            (Label::NoCall, Decision::NoCall)
        );
        let json_ = r.strict_mode("json").unwrap();
        assert_eq!(json_.label, Label::Pass);
        assert_eq!(
            json_.calls,
            vec![Call::new("get_weather", json!({"city": "Antwerp"}))]
        );
        assert_eq!(json_.telemetry.parse_mode, "json");
        assert!(json_.telemetry.fallback_used);
        assert_eq!(json_.decision.kind(), "execute");
        assert_eq!(r.strict_mode("bracket").unwrap().label, Label::NoCall);
        assert_eq!(r.profile.parse_mode.as_deref(), Some("json"));
        assert_eq!(r.profile.label, Label::Pass);
        assert_eq!(r.profile.decision.kind(), "execute");
        assert_eq!(r.profile.profile, "default");
    }

    #[test]
    fn native_is_replayed_when_tool_calls_present() {
        let native = vec![ok("native", "get_weather", json!({"city": "Antwerp"}))];
        let mut ex = seed_modes(vec![], vec![]);
        ex[3] = Fixed::boxed("native", native);
        let e = engine(ex);
        let r = e.replay(&transcript(json!({"tool_calls": []})));
        let native = r.strict_mode("native").unwrap();
        assert_eq!(native.label, Label::Pass);
        // Neither primary nor fallback of the default profile: its gates
        // are met as if it were primary (no intent needed).
        assert_eq!(native.decision.kind(), "execute");
        assert_eq!(native.telemetry.parse_mode, "primary");
        // The default profile ignores `tool_calls`.
        assert_eq!(r.profile.parse_mode, None);
        assert_eq!(r.profile.label, Label::NoCall);
    }

    #[test]
    fn lenient_results_use_lenient_candidates_and_gate_repairs() {
        let broken = failed(
            "tag",
            Some("get_weather"),
            toolgate_core::FailureKind::Malformed,
            "single-quoted string",
        );
        let fixed = repaired(
            ok("tag", "get_weather", json!({"city": "Antwerp"})),
            &[Repair::SingleQuotes],
        );
        let tag = Box::new(Fixed {
            name: "tag".into(),
            strict: vec![broken],
            lenient: Some(vec![fixed]),
        });
        let e = engine(vec![
            tag,
            Fixed::boxed("json", vec![]),
            Fixed::boxed("bracket", vec![]),
        ]);
        let r = e.replay(&transcript(json!({})));
        assert_eq!(r.strict_mode("tag").unwrap().label, Label::MalformedJson);
        let l = r.lenient_mode("tag").unwrap();
        assert_eq!(l.label, Label::Pass);
        assert_eq!(l.decision.gate(), Some(Gate::Parse));
        assert_eq!(l.telemetry.repairs, vec![Repair::SingleQuotes]);
        // The profile uses strict candidates (repairs not allowed).
        assert_eq!(r.profile.label, Label::MalformedJson);
        assert_eq!(r.profile.decision.gate(), Some(Gate::Parse));
    }

    #[test]
    fn replay_as_and_rejudge_judge_by_the_given_profile() {
        let e = engine(seed_modes(
            vec![],
            vec![ok("json", "get_weather", json!({"city": "Antwerp"}))],
        ));
        let t = transcript(
            json!({"output": "{\"tool\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}"}),
        );
        // Default profile: json is a fallback without intent.
        let r = e.replay(&t);
        assert_eq!(r.profile.decision.gate(), Some(Gate::Intent));
        // `json` as a one-mode profile: its primary, no intent needed.
        let json_only = Profile::for_mode("json");
        let direct = e.replay_as(&t, &json_only);
        assert_eq!(direct.profile.profile, "json");
        assert_eq!(direct.profile.decision.kind(), "execute");
        assert_eq!(
            direct.strict_mode("json").unwrap().telemetry.parse_mode,
            "primary"
        );
        // Judging the first replay again gives the same result, labels unchanged.
        let again = e.rejudge(&t, &r, &json_only);
        assert_eq!(again, direct);
        assert_eq!(
            again.strict_mode("json").unwrap().label,
            r.strict_mode("json").unwrap().label
        );
    }

    /// Issue 7: a mode that is neither the profile's primary nor one of its
    /// fallbacks was described as a fallback needing `need_tool: yes`.
    #[test]
    fn modes_outside_the_profile_are_gated_as_if_primary() {
        let p = Profile::default();
        assert_eq!(Role::of(&p, "tag"), Role::Primary);
        assert_eq!(Role::of(&p, "json"), Role::Fallback);
        assert_eq!(Role::of(&p, "hermes"), Role::Primary);
        let off = Profile {
            fallbacks_enabled: false,
            ..Profile::default()
        };
        assert_eq!(Role::of(&off, "json"), Role::Primary);
        let e = engine(seed_modes(
            vec![],
            vec![ok("json", "get_weather", json!({"city": "Antwerp"}))],
        ));
        let no_intent = transcript(json!({"output": "{}"}));
        let r = e.replay_as(&no_intent, &Profile::for_mode("bracket"));
        let json_ = r.strict_mode("json").unwrap();
        assert_eq!(json_.decision.kind(), "execute", "{:?}", json_.gates);
    }
}
