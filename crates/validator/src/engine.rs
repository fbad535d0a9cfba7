//! The [`Engine`]: the extractors, the profile, and what is built once and
//! reused for every output it judges — each distinct tool list compiled
//! once (the [`Toolset`] and the [`ParamTypes`]), the prefilter of the
//! modes' opener tokens — and the live path: one output judged by the
//! profile's pipeline, as `toolgate parse`, the proxy and the streaming
//! parser ([`crate::stream`]) run it.
//!
//! How a stored transcript is judged, at each depth, is in [`crate::judge`].

use crate::pipeline::PipelineResult;
use crate::pipeline::{emit as emit_event, run_quiet_primary};
use crate::profile::Profile;
use crate::profile::ProfileError;
use crate::toolset::Toolset;
use crate::toolset::same_json;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use toolgate_core::{ToolDef, Transcript};
use toolgate_formats::{Extractor, Input, ParamTypes, Prefilter};

/// The extractors and the profile replay runs with. Build once, reuse.
pub struct Engine {
    /// Every mode, in order: built-ins then custom patterns.
    pub extractors: Vec<Box<dyn Extractor>>,
    /// The profile.
    pub profile: Profile,
    /// At most this many candidates per mode per output (issue 9; see
    /// [`toolgate_formats::extract`]).
    pub max_candidates: usize,
    /// Compiled tool lists, most recent last.
    tools: ToolCache,
    /// The modes [`Engine::outcome_as`] reports (`label --modes`); `None`: all.
    selected: Option<Vec<String>>,
    /// The compiled tools of a transcript whose tool list is unknown
    /// ([`Toolset::unknown`]), built on first use.
    unknown_tools: std::sync::OnceLock<Compiled>,
    /// The trigger tokens of `extractors`, built on first use.
    prefilter: std::sync::OnceLock<(Vec<String>, Prefilter)>,
    /// Where the profile's primary mode was last found in `extractors`
    /// (checked by name on each use: both fields are public).
    primary_at: std::sync::atomic::AtomicUsize,
}

/// How many distinct tool lists an [`Engine`] keeps compiled; past that the
/// oldest is dropped (a batch rarely has more than a handful of tool lists).
const TOOL_CACHE_LIMIT: usize = 64;

/// How much compiled schema an [`Engine`] keeps, in [`weight`] units (a
/// tool and each JSON value of its parameters schema count one, and each
/// KiB its patterns compiled to; a compiled tool takes a few KB): the
/// oldest lists are dropped past it, and a list
/// weighing more than a quarter of it is compiled for its use only. Without
/// it, 64 lists of 10,000 tools held gigabytes in a proxy (hostile-client
/// probe).
const TOOL_CACHE_WEIGHT: usize = 1 << 18;

/// A tool list's [`TOOL_CACHE_WEIGHT`] units: each tool, and each value of
/// its parameters schema (walked with a stack, not recursion).
fn weight(tools: &[ToolDef]) -> usize {
    let mut total = tools.len();
    let mut stack: Vec<&Value> = tools.iter().filter_map(|t| t.parameters.as_ref()).collect();
    while let Some(v) = stack.pop() {
        total += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    total
}

/// A tool list compiled once: the allowlist with its validators, and the
/// parameter types the XML-like modes read.
pub(crate) type Compiled = Arc<(Toolset, ParamTypes)>;

/// Compiled tool lists, looked up by the tool definitions themselves (name
/// and parameters schema, the only parts [`Toolset::new`] and
/// [`ParamTypes::from_tools`] read; schemas compared key order included). A
/// `Mutex` keeps the engine `Sync` (the CLI and the inspector replay on
/// worker threads); it is held to look up or insert, never while compiling.
#[derive(Default)]
struct ToolCache {
    list: Mutex<Vec<CachedTools>>,
    /// How many tool lists have been compiled ([`Engine::tool_compilations`]).
    compilations: std::sync::atomic::AtomicUsize,
}

/// A tool list (kept alive, so its address identifies it), the profile's
/// `assert_formats`, the list compiled, and its [`weight`].
type CachedTools = (Arc<Vec<ToolDef>>, bool, Compiled, usize);

/// Makes room for `entry` (oldest first) and keeps it, unless it weighs
/// more than a quarter of [`TOOL_CACHE_WEIGHT`].
fn keep(list: &mut Vec<CachedTools>, entry: CachedTools) {
    if entry.3 > TOOL_CACHE_WEIGHT / 4 {
        return;
    }
    let mut total: usize = list.iter().map(|e| e.3).sum();
    while !list.is_empty()
        && (list.len() >= TOOL_CACHE_LIMIT || total + entry.3 > TOOL_CACHE_WEIGHT)
    {
        total -= list.remove(0).3;
    }
    list.push(entry);
}

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
        if let Ok(mut list) = self.list.lock() {
            // The same memory is the same list: a cached `Arc` keeps its
            // list alive and unchanged (no `&mut` to it while the cache
            // holds a second reference, and a `ToolDef` has no interior
            // mutability), so a slice at its address and of its length is
            // that list, with no schema to compare. A caller holding a
            // list it shared ([`Engine::share_tools`], a transcript's
            // `tools`) is found this way, whichever entry point it uses.
            if let Some((_, _, found, _)) = list.iter().find(|(defs, f, _, _)| {
                *f == assert_formats
                    && std::ptr::eq(defs.as_ptr(), tools.as_ptr())
                    && defs.len() == tools.len()
            }) {
                return Arc::clone(found);
            }
            if let Some((_, _, found, w)) = list
                .iter()
                .rev()
                .find(|(defs, f, _, _)| *f == assert_formats && same_tools(defs, tools))
            {
                let (found, w) = (Arc::clone(found), *w);
                // Remembered under this address too, to be found by it next time.
                if let Some(shared) = shared {
                    keep(
                        &mut list,
                        (Arc::clone(shared), assert_formats, Arc::clone(&found), w),
                    );
                }
                return found;
            }
        }
        let compiled = Arc::new((
            Toolset::with_format_assertion(tools, assert_formats),
            ParamTypes::from_tools(tools),
        ));
        self.compilations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Compiled patterns weigh one unit per KiB: a list's JSON values
        // can be few and its patterns still hold up to `PATTERN_BUDGET`.
        let w = weight(tools) + compiled.0.pattern_bytes() / 1024;
        // Not copied (`to_vec`) when it would not be kept.
        if w <= TOOL_CACHE_WEIGHT / 4
            && let Ok(mut list) = self.list.lock()
        {
            let defs = shared.map_or_else(|| Arc::new(tools.to_vec()), Arc::clone);
            keep(&mut list, (defs, assert_formats, Arc::clone(&compiled), w));
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
        Engine::assemble(toolgate_formats::builtin(), profile)
    }

    /// The given extractors (built-ins plus custom patterns, in replay order)
    /// and profile. Fails when the profile names a mode none of them provides.
    pub fn with_extractors(
        extractors: Vec<Box<dyn Extractor>>,
        profile: Profile,
    ) -> Result<Engine, ProfileError> {
        let names: Vec<&str> = extractors.iter().map(|e| e.name()).collect();
        profile.check_modes(&names)?;
        Ok(Engine::assemble(extractors, profile))
    }

    /// The engine of `extractors` and `profile`, with empty caches.
    fn assemble(extractors: Vec<Box<dyn Extractor>>, profile: Profile) -> Engine {
        Engine {
            extractors,
            profile,
            max_candidates: toolgate_formats::DEFAULT_MAX_CANDIDATES,
            tools: ToolCache::default(),
            unknown_tools: std::sync::OnceLock::new(),
            selected: None,
            prefilter: std::sync::OnceLock::new(),
            primary_at: std::sync::atomic::AtomicUsize::new(usize::MAX),
        }
    }

    /// The extractor of `profile`'s primary mode. Its place in `extractors`
    /// is remembered (searching by name costs a dynamic call per mode
    /// before it, on every output) and checked by name on each use:
    /// `extractors` is a public field, and profiles vary per call.
    pub(crate) fn primary_extractor(&self, profile: &Profile) -> Option<&dyn Extractor> {
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

    /// The mode names, in replay order.
    pub fn mode_names(&self) -> Vec<&str> {
        self.extractors.iter().map(|e| e.name()).collect()
    }

    /// The set-up every depth shares ([`crate::judge`]).
    pub(crate) fn case<'p>(&self, transcript: &Transcript, profile: &'p Profile) -> Case<'p> {
        let profile = match post_parse_profile(transcript) {
            Some(native) => Cow::Owned(native),
            None => Cow::Borrowed(profile),
        };
        let compiled = self.compiled_of(transcript, &profile);
        Case { profile, compiled }
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
        self.judge_output(&self.profile, output, tools, reasoning, false, true)
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
        self.judge_output(
            &self.profile,
            output,
            tools,
            reasoning,
            hit_length_limit,
            true,
        )
    }

    /// The one path for a live output (no transcript): `profile`'s
    /// pipeline on `output` with `tools` as the allowlist, `reasoning` as
    /// the reasoning field, and `hit_length_limit` when `finish_reason` was
    /// `length`. No expectation. Emits the telemetry event only when `emit`
    /// (a replay of recorded chunks is not a served output).
    pub fn judge_output(
        &self,
        profile: &Profile,
        output: &str,
        tools: &[ToolDef],
        reasoning: Option<&str>,
        hit_length_limit: bool,
        emit: bool,
    ) -> PipelineResult {
        let compiled = self.tools.get(tools, profile.assert_formats);
        let how = (reasoning, hit_length_limit, emit);
        self.judge_compiled(profile, output, &compiled, how)
    }

    /// [`Engine::judge_output`] for an output whose tool list is unknown
    /// (SPEC §4: no tools given, as a transcript without `tools`): every
    /// call is rejected at `allowlist`, the label decided without tool
    /// definitions. `toolgate parse` without `--tools` and the Python
    /// package's `tools=None` judge this way.
    pub fn judge_output_unknown(
        &self,
        profile: &Profile,
        output: &str,
        reasoning: Option<&str>,
        hit_length_limit: bool,
        emit: bool,
    ) -> PipelineResult {
        let how = (reasoning, hit_length_limit, emit);
        self.judge_compiled(profile, output, &self.unknown_compiled(), how)
    }

    /// [`Toolset::unknown`] with no parameter types, compiled once.
    fn unknown_compiled(&self) -> Compiled {
        Arc::clone(
            self.unknown_tools
                .get_or_init(|| Arc::new((Toolset::unknown(), ParamTypes::from_tools(&[])))),
        )
    }

    /// The two above with the tools compiled; `how`: the reasoning text,
    /// whether the output hit the length limit, whether to emit telemetry.
    fn judge_compiled(
        &self,
        profile: &Profile,
        output: &str,
        compiled: &Compiled,
        how: (Option<&str>, bool, bool),
    ) -> PipelineResult {
        let (reasoning, hit_length_limit, emit) = how;
        let (toolset, types) = &**compiled;
        let mut input = Input::new(output);
        input.reasoning_field = reasoning;
        input.param_types = Some(types);
        input.hit_length_limit = hit_length_limit;
        // The same cap as replay: the stream's decision must be the batch one.
        input.max_candidates = self.max_candidates;
        let primary = self.primary_extractor(profile);
        let result = run_quiet_primary(profile, &self.extractors, primary, &input, toolset, None);
        if emit {
            emit_event(&result);
        }
        result
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
            return self.unknown_compiled();
        }
        self.tools
            .get_shared(&transcript.tools, profile.assert_formats)
    }

    /// The allowlist and validators compiled for `tools` (cached).
    pub fn toolset(&self, tools: &[ToolDef]) -> Arc<(Toolset, ParamTypes)> {
        self.tools.get(tools, self.profile.assert_formats)
    }

    /// [`Engine::toolset`] for a tool list the caller keeps and judges many
    /// outputs against (the Python `Guard`, a long-lived embedding): the
    /// cache holds this very list, not a copy, so [`Engine::parse_output`]
    /// and the other entry points given `&tools` find its compiled form by
    /// its address instead of comparing every schema on every output. A
    /// list dropped from the cache (more than 64 distinct lists since) is
    /// compared and compiled again as any other: sharing only saves time.
    pub fn share_tools(&self, tools: &Arc<Vec<ToolDef>>) -> Arc<(Toolset, ParamTypes)> {
        self.tools.get_shared(tools, self.profile.assert_formats)
    }

    /// [`Engine::parse_output`] with the tools already compiled
    /// ([`Engine::share_tools`] or [`Engine::toolset`]): for a caller that
    /// keeps the compiled list, so that a list too heavy for the cache
    /// ([`TOOL_CACHE_WEIGHT`]) is still compiled once, not on every output
    /// (the Python `Gate`). Emits the telemetry event.
    pub fn parse_compiled(
        &self,
        output: &str,
        compiled: &Arc<(Toolset, ParamTypes)>,
        reasoning: Option<&str>,
    ) -> PipelineResult {
        self.judge_compiled(&self.profile, output, compiled, (reasoning, false, true))
    }

    /// How many tool lists this engine has compiled (each one the cache did
    /// not hold): what shows that a kept list is not compiled again.
    pub fn tool_compilations(&self) -> usize {
        self.tools
            .compilations
            .load(std::sync::atomic::Ordering::Relaxed)
    }

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
    pub(crate) fn reports(&self, mode: &str) -> bool {
        self.selected
            .as_ref()
            .is_none_or(|list| list.iter().any(|m| m == mode))
    }

    /// The prefilter of the engine's modes, built on first use; `None` (every
    /// mode runs) if the extractor list changed since.
    pub(crate) fn prefilter(&self) -> Option<&Prefilter> {
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
    pub(crate) fn name_of(&self, mode: &str) -> Option<&str> {
        self.extractors
            .iter()
            .map(|e| e.name())
            .find(|name| *name == mode)
    }
}

/// What every judgement of one transcript starts from: the profile that
/// judges it and its compiled tool list.
pub(crate) struct Case<'p> {
    /// The judging profile: the one asked for, or the one-mode `native`
    /// profile for a post-parse import.
    pub(crate) profile: Cow<'p, Profile>,
    /// The allowlist, validators and parameter types of the transcript's tools.
    pub(crate) compiled: Compiled,
}

impl Case<'_> {
    /// The extraction input for `transcript`, capped at `max_candidates`
    /// per mode.
    pub(crate) fn input<'a>(
        &'a self,
        transcript: &'a Transcript,
        max_candidates: usize,
    ) -> Input<'a> {
        let mut input = Input::from_transcript(transcript, &self.compiled.1);
        input.max_candidates = max_candidates;
        input
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::replay::Replay;
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::{Gate, Label};

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
        assert_eq!(e.tools.list.lock().unwrap().len(), 2);
        // Key order inside a schema counts as a different list (reasons
        // can depend on it), and each list is compiled once.
        let reordered = transcript(json!({"tools": [{"type": "function", "function": {
        "name": "get_weather", "parameters": {
            "required": ["city"], "type": "object", "properties": {"city": {"type": "string"}}
        }}}]}));
        assert_eq!(json_label(&reordered), Label::Pass);
        assert_eq!(e.tools.list.lock().unwrap().len(), 3);
    }

    #[test]
    fn a_shared_tool_list_is_found_by_address_and_stays_unchanged() {
        let e = engine(seed_modes(
            vec![ok("tag", "get_weather", json!({"city": 3}))],
            vec![],
        ));
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        let mut shared = Arc::new(vec![tool("get_weather", schema.clone())]);
        let compiled = e.share_tools(&shared);
        // The cache holds this very list: no `&mut` to it while cached.
        assert!(Arc::get_mut(&mut shared).is_none());
        let by_address = e.toolset(&shared);
        assert!(Arc::ptr_eq(&compiled, &by_address));
        let r = e.parse_output("<tool …>", &shared, None);
        assert_eq!(r.label, Label::TypeCoercion);
        // An equal list elsewhere in memory is found by its schemas.
        let copy = vec![tool("get_weather", schema)];
        assert!(Arc::ptr_eq(&compiled, &e.toolset(&copy)));
        assert_eq!(e.tools.list.lock().unwrap().len(), 1);
        // A list that differs is compiled on its own, shared or not.
        let other = Arc::new(vec![tool(
            "get_weather",
            json!({"type": "object", "properties": {"city": {"type": "integer"}}}),
        )]);
        assert!(!Arc::ptr_eq(&compiled, &e.share_tools(&other)));
        assert_eq!(e.parse_output("<tool …>", &other, None).label, Label::Pass);
        assert_eq!(e.tools.list.lock().unwrap().len(), 2);
    }

    #[test]
    fn compiled_tool_lists_are_kept_within_a_weight() {
        let e = engine(seed_modes(vec![], vec![]));
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        // 1 + 5 values per tool.
        assert_eq!(weight(&[tool("t", schema.clone())]), 6);
        let list = |tag: usize, tools: usize| -> Vec<ToolDef> {
            (0..tools)
                .map(|i| tool(&format!("t{tag}_{i}"), schema.clone()))
                .collect()
        };
        // Heavier than a quarter of the budget: compiled, used, not kept.
        let heavy = list(0, TOOL_CACHE_WEIGHT / 4 / 6 + 1);
        assert!(weight(&heavy) > TOOL_CACHE_WEIGHT / 4);
        assert!(e.toolset(&heavy).0.is_allowed("t0_0"));
        assert_eq!(
            e.tools.list.lock().unwrap().len(),
            0,
            "a heavy list is not kept"
        );
        // Lists of just over a fifth of the budget each: at most four are
        // kept, the oldest dropped first.
        let fifth = TOOL_CACHE_WEIGHT / 5 / 6 + 1;
        let lists: Vec<Vec<ToolDef>> = (1..=6).map(|tag| list(tag, fifth)).collect();
        for l in &lists {
            e.toolset(l);
        }
        let kept = e.tools.list.lock().unwrap();
        assert_eq!(kept.len(), 4);
        assert!(kept.iter().map(|c| c.3).sum::<usize>() <= TOOL_CACHE_WEIGHT);
        assert_eq!(kept[0].0[0].name, "t3_0", "the two oldest were dropped");
    }

    /// A list of few JSON values can hold large compiled patterns (up to
    /// `PATTERN_BUDGET`): the cache weighs them, a unit per KiB.
    #[test]
    fn compiled_patterns_weigh_in_the_tool_cache() {
        let e = engine(seed_modes(vec![], vec![]));
        let tools = [tool(
            "t",
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^.{1,256}$"}}}),
        )];
        assert_eq!(weight(&tools), 7);
        let compiled = e.toolset(&tools);
        // `^.{1,256}$` compiles to some 270 KB.
        assert!(compiled.0.pattern_bytes() > 200 * 1024);
        let kept = e.tools.list.lock().unwrap();
        assert_eq!(kept[0].3, 7 + compiled.0.pattern_bytes() / 1024);
    }

    // A list too heavy for the cache was compiled again for every output
    // (220 ms per `Gate.parse` of 1,200 tools); its holder keeps it compiled.
    #[test]
    fn a_heavy_list_kept_compiled_is_not_compiled_again() {
        let e = engine(seed_modes(
            vec![ok("tag", "t0", json!({"city": "Gent"}))],
            vec![],
        ));
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        let heavy: Arc<Vec<ToolDef>> = Arc::new(
            (0..TOOL_CACHE_WEIGHT / 4 / 6 + 1)
                .map(|i| tool(&format!("t{i}"), schema.clone()))
                .collect(),
        );
        let compiled = e.share_tools(&heavy);
        assert_eq!(e.tool_compilations(), 1);
        for _ in 0..3 {
            let r = e.parse_compiled("<tool …>", &compiled, None);
            assert_eq!(r.label, e.parse_output("<tool …>", &heavy, None).label);
        }
        // Each `parse_output` compiled the uncached list; `parse_compiled` never did.
        assert_eq!(e.tool_compilations(), 1 + 3);
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
