//! What a batch job keeps of a replay — each mode's label, whether it found
//! and parsed something, the profile's result and the findings — computed
//! without building what it does not keep (issue 11).
//!
//! [`Engine::outcome_as`] is the fast path the CLI's `label`, `matrix` and
//! `detect` run: one prefilter pass ([`toolgate_formats::prefilter`]) tells
//! which modes can find anything; every other mode gets the transcript's
//! empty-candidate label, computed once, and is not extracted at all; a
//! mode's lenient extraction runs only if its strict one read the
//! strictness ([`toolgate_formats::reads_strictness`]); no gates, reasons or
//! telemetry are built for a mode, only for the profile's pipeline.
//! [`Engine::outcome_plain`] derives the same from the full [`Replay`]: a
//! test replays the bundled and peer corpora through both and finds them
//! identical. A transcript with native `tool_calls` takes the
//! plain path (its findings compare every mode's candidates).

use crate::findings::{self, Finding};
use crate::pipeline::{profile_strictness, run_with};
use crate::{Engine, PipelineResult, Profile, Replay, label};
use toolgate_core::{Candidate, Label, Transcript};
use toolgate_formats::prefilter::Prefilter;
use toolgate_formats::{Input, Strictness, reads_strictness};

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
    /// Replays only these modes in [`Engine::outcome_as`] (`label --modes`):
    /// the others are neither extracted nor reported (the profile's own
    /// modes still run for its pipeline). Fails naming a mode the engine
    /// does not have.
    pub fn select_modes(&mut self, modes: &[String]) -> Result<(), String> {
        let names = self.mode_names();
        if let Some(bad) = modes.iter().find(|m| !names.contains(&m.as_str())) {
            return Err(format!(
                "unknown mode {bad:?} (known: {})",
                names.join(", ")
            ));
        }
        self.selected = Some(modes.to_vec());
        Ok(())
    }

    /// Whether [`Engine::outcome_as`] reports `mode`.
    fn reports(&self, mode: &str) -> bool {
        self.selected
            .as_ref()
            .is_none_or(|list| list.iter().any(|m| m == mode))
    }

    /// The prefilter of the engine's modes, built on first use; `None` (every
    /// mode runs) if the extractor list changed since.
    fn prefilter(&self) -> Option<&Prefilter> {
        let (built_for, p) = self.prefilter.get_or_init(|| {
            let names = self.mode_names();
            (
                names.iter().map(|s| s.to_string()).collect(),
                Prefilter::new(&names),
            )
        });
        let same = built_for.len() == self.extractors.len()
            && built_for
                .iter()
                .zip(&self.extractors)
                .all(|(name, e)| name == e.name());
        same.then_some(p)
    }

    /// The engine's own spelling of a mode name.
    fn name_of(&self, mode: &str) -> Option<&str> {
        self.extractors
            .iter()
            .map(|e| e.name())
            .find(|name| *name == mode)
    }

    /// The outcome of replaying `transcript` with `profile`, on the fast
    /// path (module docs). Equal to [`Engine::outcome_plain`].
    pub fn outcome_as(&self, transcript: &Transcript, profile: &Profile) -> Outcome<'_> {
        if transcript.tool_calls.is_some() {
            return self.outcome_plain(transcript, profile);
        }
        let compiled = self.compiled_of(transcript, profile);
        let (toolset, types) = &*compiled;
        let mut input = Input::from_transcript(transcript, types);
        input.max_candidates = self.max_candidates;
        let expect = transcript.expect.as_ref();
        let mut texts = vec![transcript.output.as_str()];
        texts.extend(transcript.reasoning.as_deref());
        let reach = match self.prefilter() {
            Some(p) => p.reachable(&texts),
            None => vec![true; self.extractors.len()],
        };
        let mut empty: Option<Label> = None;
        let for_profile = profile_strictness(profile);
        let mut kept: Vec<(&str, Vec<Candidate>)> = Vec::new();
        let mut strict = Vec::with_capacity(self.extractors.len());
        let mut lenient = Vec::with_capacity(self.extractors.len());
        for (i, extractor) in self.extractors.iter().enumerate() {
            let mode = extractor.name();
            // Without `tool_calls`, replay has no `native` result.
            if mode == "native" {
                continue;
            }
            let reported = self.reports(mode);
            let in_profile = profile.primary == mode || profile.fallbacks.iter().any(|f| f == mode);
            if !reported && !in_profile {
                continue;
            }
            if !reach.get(i).copied().unwrap_or(true) {
                if reported {
                    let l = *empty.get_or_insert_with(|| {
                        label(&[], expect, toolset, input.hit_length_limit).label
                    });
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
            let extract = |s| {
                let mut found = extractor.extract(&input, s);
                toolgate_formats::rules::cap_candidates(&mut found, input.max_candidates);
                found
            };
            // A strict extraction that never read its strictness is also
            // the lenient one (`reads_strictness`): lenient is extracted only
            // where the two can part.
            let (s, read) = reads_strictness(|| extract(Strictness::Strict));
            let l = read.then(|| extract(Strictness::Lenient));
            if reported {
                let ls = label(&s, expect, toolset, input.hit_length_limit).label;
                strict.push(ModeOutcome::of(mode, ls, &s));
                // The label is a function of the candidates: equal ones
                // (lenient mostly reads what strict read) are not judged twice.
                lenient.push(match &l {
                    Some(l) if *l != s => ModeOutcome::of(
                        mode,
                        label(l, expect, toolset, input.hit_length_limit).label,
                        l,
                    ),
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
        let primary = crate::pipeline::extractor_of(&self.extractors, &profile.primary);
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
        );
        let mut found: Vec<Finding> = findings::stream_divergence(self, transcript, profile)
            .into_iter()
            .chain(findings::capture_findings(transcript))
            .collect();
        found.sort_by_key(|f| f.kind);
        Outcome {
            strict,
            lenient,
            profile: result,
            findings: found,
        }
    }

    /// [`Engine::outcome_as`] from the full [`Engine::replay_as`]: every mode
    /// extracted and judged, then summarized (the reference the fast path is
    /// tested against).
    pub fn outcome_plain(&self, transcript: &Transcript, profile: &Profile) -> Outcome<'_> {
        let replay = self.replay_as(transcript, profile);
        self.outcome_of(replay)
    }

    /// The outcome a full replay gives.
    pub fn outcome_of(&self, replay: Replay) -> Outcome<'_> {
        let pick = |list: &[crate::ModeResult]| -> Vec<ModeOutcome<'_>> {
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
