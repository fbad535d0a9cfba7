//! What a batch job keeps of a replay — each mode's label, whether it found
//! and parsed something, the profile's result and the findings — computed
//! without building what it does not keep (issue 11): the body of
//! [`Engine::judge`] at [`crate::Labels`] depth, and, with nothing reported,
//! at [`crate::Row`] depth (the profile's result alone).
//!
//! [`Engine::outcome_as`] is the fast path the CLI's `label`, `matrix` and
//! `detect` run: one prefilter pass ([`toolgate_formats::Prefilter`]) tells
//! which modes can find anything; every other mode gets the transcript's
//! empty-candidate label, computed once, and is not extracted at all; a
//! mode's lenient extraction runs only if its strict one read the
//! strictness ([`toolgate_formats::reads_strictness`]); no gates, reasons or
//! telemetry are built for a mode, only for the profile's pipeline.
//! [`Engine::outcome_plain`] derives the same from the full [`Replay`]: a
//! test replays the bundled and peer corpora through both and finds them
//! identical. A transcript with native `tool_calls` takes the
//! plain path (its findings compare every mode's candidates).

use crate::engine::Case;
use crate::engine::Engine;
use crate::findings::{self, Finding};
use crate::labeler::label_only;
use crate::pipeline::PipelineResult;
use crate::pipeline::{profile_strictness, run_with};
use crate::profile::Profile;
use crate::replay::Replay;
use toolgate_core::{Candidate, Label, Transcript};
use toolgate_formats::{Strictness, reads_strictness};

/// One mode's outcome for one transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeOutcome<'e> {
    /// The mode name (the engine's).
    pub mode: &'e str,
    /// The label.
    pub label: Label,
    /// Whether a live candidate was found.
    pub found: bool,
    /// Whether every live candidate parsed and named its tool (and there was one).
    pub parsed: bool,
}

impl<'e> ModeOutcome<'e> {
    fn of(mode: &'e str, label: Label, candidates: &[Candidate]) -> ModeOutcome<'e> {
        let (found, parsed) = found_and_parsed(candidates);
        ModeOutcome {
            mode,
            label,
            found,
            parsed,
        }
    }
}

/// Whether a mode's candidates hold a live one, and whether every live one
/// parsed and named its tool (and there was one): what `auto`'s detection
/// counts.
pub(crate) fn found_and_parsed(candidates: &[Candidate]) -> (bool, bool) {
    let mut live = candidates.iter().filter(|c| c.is_live()).peekable();
    let found = live.peek().is_some();
    let parsed = found && live.all(|c| c.failure().is_none() && c.name.is_some());
    (found, parsed)
}

/// What a batch job keeps of one transcript's replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome<'e> {
    /// Strict outcome per reported mode, engine order.
    pub strict: Vec<ModeOutcome<'e>>,
    /// Lenient outcome, same order.
    pub lenient: Vec<ModeOutcome<'e>>,
    /// The profile pipeline's result.
    pub profile: PipelineResult,
    /// Server findings.
    pub findings: Vec<Finding>,
}

impl Engine {
    /// The outcome of judging `transcript` as `case` set it up, on the fast
    /// path (module docs); a transcript with native `tool_calls` from the
    /// full replay. Equal to [`Engine::outcome_plain`]. With `reporting`
    /// off, only the profile's result is worth anything: no mode is
    /// reported and no finding is looked for ([`crate::Row`]).
    pub(crate) fn outcome_case(
        &self,
        transcript: &Transcript,
        case: &Case<'_>,
        reporting: bool,
    ) -> Outcome<'_> {
        if transcript.tool_calls.is_some() {
            return self.outcome_of(self.replay_case(transcript, case));
        }
        let profile: &Profile = &case.profile;
        let (toolset, _) = &*case.compiled;
        let input = case.input(transcript, self.max_candidates);
        let expect = transcript.expect.as_ref();
        let mut texts = vec![transcript.output.as_str()];
        texts.extend(transcript.reasoning.as_deref());
        let reach = match self.prefilter() {
            Some(p) => p.reachable(&texts),
            None => vec![true; self.extractors.len()],
        };
        // The label of a set without a live candidate is the empty set's
        // (the rules read only live candidates): computed once.
        let mut empty: Option<Label> = None;
        let mut label_of = |candidates: &[Candidate]| {
            if candidates.iter().any(Candidate::is_live) {
                label_only(candidates, expect, toolset, input.hit_length_limit)
            } else {
                *empty
                    .get_or_insert_with(|| label_only(&[], expect, toolset, input.hit_length_limit))
            }
        };
        let for_profile = profile_strictness(profile);
        let mut kept: Vec<(&str, Vec<Candidate>)> = Vec::new();
        let mut strict = Vec::with_capacity(self.extractors.len());
        let mut lenient = Vec::with_capacity(self.extractors.len());
        // The primary mode's extractor, found in this walk over the modes
        // (the first of its name, as `Engine::primary_extractor` finds it)
        // instead of through the engine's shared last-found index, which
        // two workers replaying models of different primaries rewrote in
        // turn for every transcript (a cache line bouncing between cores).
        let mut primary: Option<&dyn toolgate_formats::Extractor> = None;
        for (i, extractor) in self.extractors.iter().enumerate() {
            let mode = extractor.name();
            if primary.is_none() && profile.primary == mode {
                primary = Some(extractor.as_ref());
            }
            // Without `tool_calls`, replay has no `native` result.
            if mode == "native" {
                continue;
            }
            let reported = reporting && self.reports(mode);
            let in_profile = profile.primary == mode || profile.fallbacks.iter().any(|f| f == mode);
            if !reported && !in_profile {
                continue;
            }
            if !reach.get(i).copied().unwrap_or(true) {
                if reported {
                    let l = label_of(&[]);
                    let o = ModeOutcome {
                        mode,
                        label: l,
                        found: false,
                        parsed: false,
                    };
                    strict.push(o);
                    lenient.push(o);
                }
                continue;
            }
            let extract = |s| toolgate_formats::extract(extractor.as_ref(), &input, s);
            // A strict extraction that never read its strictness is also
            // the lenient one (`reads_strictness`): lenient is extracted only
            // where the two can part.
            let (s, read) = reads_strictness(|| extract(Strictness::Strict));
            let l = read.then(|| extract(Strictness::Lenient));
            if reported {
                let ls = label_of(&s);
                strict.push(ModeOutcome::of(mode, ls, &s));
                // The label is a function of the candidates: equal ones
                // (lenient mostly reads what strict read) are not judged twice.
                lenient.push(match &l {
                    Some(l) if *l != s => ModeOutcome::of(mode, label_of(l), l),
                    _ => ModeOutcome::of(mode, ls, &s),
                });
            }
            if in_profile {
                kept.push((
                    mode,
                    match l {
                        Some(l) if for_profile.is_lenient() => l,
                        _ => s,
                    },
                ));
            }
        }
        let result = run_with(
            profile,
            &input,
            toolset,
            expect,
            |mode| {
                // `run_with` asks for the primary, then the fallbacks in
                // order: a mode named once is asked for once, and its
                // candidates move; one named twice is cloned.
                let asked = std::iter::once(&profile.primary)
                    .chain(&profile.fallbacks)
                    .filter(|m| *m == mode)
                    .count();
                kept.iter_mut()
                    .find(|(m, _)| *m == mode)
                    .map(|(_, c)| {
                        if asked > 1 {
                            c.clone()
                        } else {
                            std::mem::take(c)
                        }
                    })
                    .unwrap_or_default()
            },
            primary,
        )
        .under_terms_of(transcript);
        let mut found: Vec<Finding> = Vec::new();
        if reporting {
            found.extend(findings::stream_divergence(
                crate::stream::replay_chunks_as(self, profile, transcript),
            ));
            found.extend(findings::capture_findings(transcript));
            found.sort_by_key(|f| f.kind);
        }
        Outcome {
            strict,
            lenient,
            profile: result,
            findings: found,
        }
    }

    /// The outcome a full replay gives.
    pub fn outcome_of(&self, replay: Replay) -> Outcome<'_> {
        let pick = |list: &[crate::mode_result::ModeResult]| -> Vec<ModeOutcome<'_>> {
            list.iter()
                .filter(|m| self.reports(&m.mode))
                .filter_map(|m| {
                    let mode = self.name_of(&m.mode)?;
                    Some(ModeOutcome::of(mode, m.label, &m.candidates))
                })
                .collect()
        };
        Outcome {
            strict: pick(&replay.strict),
            lenient: pick(&replay.lenient),
            profile: replay.profile,
            findings: replay.findings,
        }
    }
}
