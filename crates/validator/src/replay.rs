//! Replay: every mode (strict and lenient), native, custom patterns, and the
//! profile pipeline, for one transcript (SPEC §6).
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

use crate::findings::{self, Finding};
pub use crate::mode_result::ModeResult;
use crate::pipeline::{Role, gate, profile_strictness, run_with};
use crate::profile::ProfileError;
use crate::toolset::same_json;
use crate::{PipelineResult, Profile, Toolset, label};
use std::sync::{Arc, Mutex};
use toolgate_core::{Candidate, ToolDef, Transcript};
use toolgate_formats::{Extractor, Input, ParamTypes, Strictness};

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
    /// Server findings ([`crate::findings`]), apart from the labels.
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

/// The extractors and the profile replay runs with. Build once, reuse.
pub struct Engine {
    /// Every mode, in order: built-ins then custom patterns.
    pub extractors: Vec<Box<dyn Extractor>>,
    /// The profile.
    pub profile: Profile,
    /// At most this many candidates per mode per output (issue 9; see
    /// `toolgate_formats::rules::cap_candidates`).
    pub max_candidates: usize,
    /// Compiled tool lists, most recent last.
    tools: ToolCache,
    /// The modes [`Engine::outcome_as`] reports (`label --modes`); `None`: all.
    pub(crate) selected: Option<Vec<String>>,
    /// The compiled tools of a transcript whose tool list is unknown
    /// ([`Toolset::unknown`]), built on first use.
    unknown_tools: std::sync::OnceLock<Compiled>,
    /// The trigger tokens of `extractors`, built on first use.
    pub(crate) prefilter:
        std::sync::OnceLock<(Vec<String>, toolgate_formats::prefilter::Prefilter)>,
    /// Where the profile's primary mode was last found in `extractors`
    /// (checked by name on each use: both fields are public).
    primary_at: std::sync::atomic::AtomicUsize,
}

/// How many distinct tool lists an [`Engine`] keeps compiled; past that the
/// oldest is dropped (a batch rarely has more than a handful of tool lists).
const TOOL_CACHE_LIMIT: usize = 64;

/// A tool list compiled once: the allowlist with its validators, and the
/// parameter types the XML-like modes read.
pub(crate) type Compiled = Arc<(Toolset, ParamTypes)>;

/// Compiled tool lists, looked up by the tool definitions themselves (name
/// and parameters schema, the only parts [`Toolset::new`] and
/// [`ParamTypes::from_tools`] read; schemas compared key order included). A
/// `Mutex` keeps the engine `Sync` (the CLI and the inspector replay on
/// worker threads); it is held to look up or insert, never while compiling.
#[derive(Default)]
struct ToolCache(Mutex<Vec<CachedTools>>);

/// A tool list (kept alive, so its address identifies it), the profile's
/// `assert_formats`, and the list compiled.
type CachedTools = (Arc<Vec<ToolDef>>, bool, Compiled);

impl ToolCache {
    /// The compiled tool list; `assert_formats`: the profile's setting.
    fn get(&self, tools: &[ToolDef], assert_formats: bool) -> Compiled {
        self.lookup(tools, None, assert_formats)
    }

    /// [`ToolCache::get`] for a transcript's shared list: found by its
    /// address first (the loader shares equal lists, so a batch's
    /// transcripts mostly hold one of a few), without comparing schemas.
    fn get_shared(&self, tools: &Arc<Vec<ToolDef>>, assert_formats: bool) -> Compiled {
        self.lookup(tools, Some(tools), assert_formats)
    }

    fn lookup(
        &self,
        tools: &[ToolDef],
        shared: Option<&Arc<Vec<ToolDef>>>,
        assert_formats: bool,
    ) -> Compiled {
        // A poisoned lock (a panic elsewhere mid-insert) only disables the cache.
        if let Ok(mut list) = self.0.lock() {
            // The same address is the same list: a cached `Arc` keeps it
            // alive, so its memory cannot have been reused.
            if let Some(shared) = shared
                && let Some((_, _, found)) = list
                    .iter()
                    .find(|(defs, f, _)| *f == assert_formats && Arc::ptr_eq(defs, shared))
            {
                return Arc::clone(found);
            }
            if let Some((_, _, found)) = list
                .iter()
                .rev()
                .find(|(defs, f, _)| *f == assert_formats && same_tools(defs, tools))
            {
                let found = Arc::clone(found);
                // Remembered under this address too, to be found by it next time.
                if let Some(shared) = shared {
                    if list.len() >= TOOL_CACHE_LIMIT {
                        list.remove(0);
                    }
                    list.push((Arc::clone(shared), assert_formats, Arc::clone(&found)));
                }
                return found;
            }
        }
        let compiled = Arc::new((
            Toolset::with_format_assertion(tools, assert_formats),
            ParamTypes::from_tools(tools),
        ));
        if let Ok(mut list) = self.0.lock() {
            if list.len() >= TOOL_CACHE_LIMIT {
                list.remove(0);
            }
            let defs = shared.map_or_else(|| Arc::new(tools.to_vec()), Arc::clone);
            list.push((defs, assert_formats, Arc::clone(&compiled)));
        }
        compiled
    }
}

/// The one-mode `native` profile for a post-parse import (no raw text for a
/// text mode to read), else `None`.
pub(crate) fn post_parse_profile(transcript: &Transcript) -> Option<Profile> {
    (transcript.tool_calls.is_some() && !transcript.has_raw_text())
        .then(|| Profile::builtin("native"))
        .flatten()
}

/// Whether two tool lists compile to the same [`Toolset`] and [`ParamTypes`].
fn same_tools(a: &[ToolDef], b: &[ToolDef]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.name == y.name
                && match (&x.parameters, &y.parameters) {
                    (Some(p), Some(q)) => same_json(p, q),
                    (None, None) => true,
                    _ => false,
                }
        })
}

impl Engine {
    /// The built-in modes and the given profile. The profile's modes are not
    /// checked (a mode without an extractor finds nothing); use
    /// [`Engine::with_extractors`] to have them checked.
    pub fn new(profile: Profile) -> Engine {
        Engine {
            extractors: toolgate_formats::builtin(),
            profile,
            max_candidates: toolgate_formats::rules::DEFAULT_MAX_CANDIDATES,
            tools: ToolCache::default(),
            unknown_tools: std::sync::OnceLock::new(),
            selected: None,
            prefilter: std::sync::OnceLock::new(),
            primary_at: std::sync::atomic::AtomicUsize::new(usize::MAX),
        }
    }

    /// The given extractors (built-ins plus custom patterns, in replay order)
    /// and profile. Fails when the profile names a mode none of them provides.
    pub fn with_extractors(
        extractors: Vec<Box<dyn Extractor>>,
        profile: Profile,
    ) -> Result<Engine, ProfileError> {
        let names: Vec<&str> = extractors.iter().map(|e| e.name()).collect();
        profile.check_modes(&names)?;
        Ok(Engine {
            extractors,
            profile,
            max_candidates: toolgate_formats::rules::DEFAULT_MAX_CANDIDATES,
            tools: ToolCache::default(),
            unknown_tools: std::sync::OnceLock::new(),
            selected: None,
            prefilter: std::sync::OnceLock::new(),
            primary_at: std::sync::atomic::AtomicUsize::new(usize::MAX),
        })
    }

    /// The mode names, in replay order.
    pub fn mode_names(&self) -> Vec<&str> {
        self.extractors.iter().map(|e| e.name()).collect()
    }

    /// Replays one transcript with the engine's profile.
    ///
    /// A post-parse import (`"import": {"raw_text": false}`: Responses,
    /// Anthropic, OTel, FC-mode BFCL) has no raw text for a text mode to
    /// read, so the one-mode `native` profile judges it, whatever profile is
    /// given (here and in [`Engine::replay_as`]).
    pub fn replay(&self, transcript: &Transcript) -> Replay {
        self.replay_as(transcript, &self.profile)
    }

    /// Replays one transcript with `profile` (an `auto` choice, a profile
    /// picked in the inspector): its primary mode meets the primary rules,
    /// every other mode the fallback rules, and its pipeline is the
    /// replay's `profile` result.
    pub fn replay_as(&self, transcript: &Transcript, profile: &Profile) -> Replay {
        let native_profile;
        let profile = match post_parse_profile(transcript) {
            Some(native) => {
                native_profile = native;
                &native_profile
            }
            None => profile,
        };
        let compiled = self.compiled_of(transcript, profile);
        let (_, types) = &*compiled;
        let mut input = Input::from_transcript(transcript, types);
        input.max_candidates = self.max_candidates;
        let mut strict = Vec::with_capacity(self.extractors.len());
        let mut lenient = Vec::with_capacity(self.extractors.len());
        for extractor in &self.extractors {
            let mode = extractor.name();
            if mode == "native" && transcript.tool_calls.is_none() {
                continue;
            }
            let mut s = extractor.extract(&input, Strictness::Strict);
            toolgate_formats::rules::cap_candidates(&mut s, input.max_candidates);
            strict.push((mode, s));
            let mut l = extractor.extract(&input, Strictness::Lenient);
            toolgate_formats::rules::cap_candidates(&mut l, input.max_candidates);
            lenient.push((mode, l));
        }
        self.judge(transcript, &compiled, &input, profile, strict, lenient)
    }

    /// `replay` judged again by another profile without extracting again:
    /// labels are the same (they do not depend on the profile); gates,
    /// decisions and the profile result are `profile`'s.
    pub fn rejudge(&self, transcript: &Transcript, replay: &Replay, profile: &Profile) -> Replay {
        let native_profile;
        let profile = match post_parse_profile(transcript) {
            Some(native) => {
                native_profile = native;
                &native_profile
            }
            None => profile,
        };
        let compiled = self.compiled_of(transcript, profile);
        let (_, types) = &*compiled;
        let mut input = Input::from_transcript(transcript, types);
        input.max_candidates = self.max_candidates;
        fn take(list: &[ModeResult]) -> Vec<(&str, Vec<Candidate>)> {
            list.iter()
                .map(|m| (m.mode.as_str(), m.candidates.clone()))
                .collect()
        }
        let (strict, lenient) = (take(&replay.strict), take(&replay.lenient));
        self.judge(transcript, &compiled, &input, profile, strict, lenient)
    }

    /// Labels, gates and the profile pipeline for extracted candidates.
    fn judge(
        &self,
        transcript: &Transcript,
        compiled: &Compiled,
        input: &Input<'_>,
        profile: &Profile,
        strict: Vec<(&str, Vec<Candidate>)>,
        lenient: Vec<(&str, Vec<Candidate>)>,
    ) -> Replay {
        let (toolset, _) = &**compiled;
        let expect = transcript.expect.as_ref();
        let primary = crate::pipeline::extractor_of(&self.extractors, &profile.primary);
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
                            c.arguments = Ok(serde_json::Map::new());
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
        found_rest.extend(findings::stream_divergence(self, transcript, profile));
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
        );
        Replay {
            strict,
            lenient,
            profile: result,
            findings: found_rest,
        }
    }

    /// Runs the profile's pipeline on one output (`toolgate parse`), with
    /// `tools` as the allowlist and `reasoning` as the reasoning field. No
    /// expectation: the label is decided as if "one or more calls of any
    /// allowlisted tool" were expected. Emits the telemetry event.
    pub fn parse_output(
        &self,
        output: &str,
        tools: &[ToolDef],
        reasoning: Option<&str>,
    ) -> PipelineResult {
        let compiled = self.tools.get(tools, self.profile.assert_formats);
        let (toolset, types) = &*compiled;
        let mut input = Input::new(output);
        input.reasoning_field = reasoning;
        input.param_types = Some(types);
        input.max_candidates = self.max_candidates;
        let primary = self.primary_extractor(&self.profile);
        crate::pipeline::run_primary(
            &self.profile,
            &self.extractors,
            primary,
            &input,
            toolset,
            None,
        )
    }

    /// [`Engine::parse_output`] for a finished response whose
    /// `finish_reason` is known: `hit_length_limit` (`finish_reason:
    /// length`) makes a still-open call `truncation`, as in replay. What the
    /// proxy and the streaming parser ([`crate::stream`]) run at the end of
    /// an output. Emits the telemetry event.
    pub fn parse_finished(
        &self,
        output: &str,
        tools: &[ToolDef],
        reasoning: Option<&str>,
        hit_length_limit: bool,
    ) -> PipelineResult {
        self.finish_as(
            &self.profile,
            output,
            tools,
            reasoning,
            hit_length_limit,
            true,
        )
    }

    /// [`Engine::parse_finished`] with `profile` instead of the engine's,
    /// emitting the telemetry event only when `emit` (a replay of recorded
    /// chunks is not a served output).
    pub(crate) fn finish_as(
        &self,
        profile: &Profile,
        output: &str,
        tools: &[ToolDef],
        reasoning: Option<&str>,
        hit_length_limit: bool,
        emit: bool,
    ) -> PipelineResult {
        let compiled = self.tools.get(tools, profile.assert_formats);
        let (toolset, types) = &*compiled;
        let mut input = Input::new(output);
        input.reasoning_field = reasoning;
        input.param_types = Some(types);
        input.hit_length_limit = hit_length_limit;
        // As in `parse_output`: the stream's decision must be the batch one.
        input.max_candidates = self.max_candidates;
        let primary = self.primary_extractor(profile);
        let result = crate::pipeline::run_with(
            profile,
            &input,
            toolset,
            None,
            |mode| {
                let found = if mode == profile.primary {
                    primary
                } else {
                    crate::pipeline::extractor_of(&self.extractors, mode)
                };
                found
                    .map(|e| {
                        let mut found = e.extract(&input, profile_strictness(profile));
                        toolgate_formats::rules::cap_candidates(&mut found, input.max_candidates);
                        found
                    })
                    .unwrap_or_default()
            },
            primary,
        );
        if emit {
            crate::pipeline::emit(&result);
        }
        result
    }

    /// The extractor of `profile`'s primary mode. Its place in `extractors`
    /// is remembered (searching by name costs a dynamic call per mode
    /// before it, on every output) and checked by name on each use:
    /// `extractors` is a public field, and profiles vary per call.
    fn primary_extractor(&self, profile: &Profile) -> Option<&dyn Extractor> {
        use std::sync::atomic::Ordering::Relaxed;
        let mode = profile.primary.as_str();
        match self.extractors.get(self.primary_at.load(Relaxed)) {
            Some(e) if e.name() == mode => Some(&**e),
            _ => {
                let at = self.extractors.iter().position(|e| e.name() == mode);
                self.primary_at.store(at.unwrap_or(usize::MAX), Relaxed);
                at.map(|i| &*self.extractors[i])
            }
        }
    }

    /// The allowlist and validators compiled for a transcript's tools
    /// (cached), as the profile `profile` asserts formats; for a transcript
    /// whose tool list is unknown, [`Toolset::unknown`] (SPEC §4).
    pub(crate) fn compiled_of(&self, transcript: &Transcript, profile: &Profile) -> Compiled {
        if transcript.tools_unknown() {
            // The expectation's argument schemas are the only schemas known:
            // they type XML-like values as they are checked (rules 9–12).
            let mut defs: Vec<ToolDef> = Vec::new();
            let expected = transcript.expect.iter().flat_map(|e| &e.calls);
            for call in expected.filter(|c| c.arguments.is_some()) {
                if !defs.iter().any(|d| d.name == call.name) {
                    defs.push(ToolDef {
                        name: call.name.clone(),
                        description: None,
                        parameters: call.arguments.clone(),
                    });
                }
            }
            if !defs.is_empty() {
                return Arc::new((Toolset::unknown(), ParamTypes::from_tools(&defs)));
            }
            return Arc::clone(
                self.unknown_tools
                    .get_or_init(|| Arc::new((Toolset::unknown(), ParamTypes::from_tools(&[])))),
            );
        }
        self.tools
            .get_shared(&transcript.tools, profile.assert_formats)
    }

    /// The allowlist and validators compiled for `tools` (cached).
    pub fn toolset(&self, tools: &[ToolDef]) -> Arc<(Toolset, ParamTypes)> {
        self.tools.get(tools, self.profile.assert_formats)
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
        let gated = gate(profile, role, mode, &candidates, input, toolset, primary);
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

    fn transcript(extra: serde_json::Value) -> Transcript {
        let mut obj = json!({
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
                "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]
            }}}],
            "output": "need_tool: yes\n{\"tool\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}",
            "expect": {"calls": [{"name": "get_weather"}]}
        });
        for (k, v) in extra.as_object().unwrap() {
            obj[k] = v.clone();
        }
        toolgate_core::load::parse_transcript(
            &obj.to_string(),
            std::path::Path::new("t.json"),
            None,
            "t",
        )
        .unwrap()
    }

    fn engine(extractors: Vec<Box<dyn Extractor>>) -> Engine {
        Engine::with_extractors(extractors, Profile::default()).unwrap()
    }

    fn seed_modes(tag: Vec<Candidate>, json_: Vec<Candidate>) -> Vec<Box<dyn Extractor>> {
        vec![
            Fixed::boxed("tag", tag),
            Fixed::boxed("json", json_),
            Fixed::boxed("bracket", vec![]),
            Fixed::boxed("native", vec![]),
        ]
    }

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
    fn tool_lists_are_compiled_once_per_distinct_list() {
        let e = engine(seed_modes(
            vec![],
            vec![ok("json", "get_weather", json!({"city": "Antwerp"}))],
        ));
        let string_city = transcript(json!({}));
        // Same tool name, another schema: must not reuse the first toolset.
        let integer_city = transcript(json!({"tools": [{"type": "function", "function": {
        "name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "integer"}}, "required": ["city"]
        }}}]}));
        let json_label = |t: &Transcript| e.replay(t).strict_mode("json").unwrap().label;
        assert_eq!(json_label(&string_city), Label::Pass);
        assert_eq!(json_label(&integer_city), Label::TypeCoercion);
        assert_eq!(json_label(&string_city), Label::Pass);
        assert_eq!(json_label(&integer_city), Label::TypeCoercion);
        assert_eq!(e.tools.0.lock().unwrap().len(), 2);
        // Key order inside a schema counts as a different list (reasons
        // can depend on it), and each list is compiled once.
        let reordered = transcript(json!({"tools": [{"type": "function", "function": {
        "name": "get_weather", "parameters": {
            "required": ["city"], "type": "object", "properties": {"city": {"type": "string"}}
        }}}]}));
        assert_eq!(json_label(&reordered), Label::Pass);
        assert_eq!(e.tools.0.lock().unwrap().len(), 3);
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
    fn profile_naming_an_unknown_mode_is_an_error() {
        let Err(e) = Engine::with_extractors(
            seed_modes(vec![], vec![]),
            Profile::builtin("hermes").unwrap(),
        ) else {
            panic!("expected an error")
        };
        assert_eq!(
            e.to_string(),
            "profile `hermes` names the unknown mode `hermes`"
        );
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

    #[test]
    fn engine_is_shared_across_worker_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Engine>();
        assert_send_sync::<Replay>();
    }

    #[test]
    fn parse_output_runs_the_profile() {
        let e = engine(seed_modes(
            vec![ok("tag", "get_weather", json!({"city": 3}))],
            vec![],
        ));
        let tools = [tool(
            "get_weather",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        )];
        let r = e.parse_output(
            "<tool name=\"get_weather\">{\"city\": 3}</tool>",
            &tools,
            None,
        );
        assert_eq!(r.decision.gate(), Some(Gate::Schema));
        assert_eq!(r.label, Label::TypeCoercion);
        assert_eq!(r.telemetry.parse_mode, "primary");
    }
}
