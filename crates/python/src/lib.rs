//! # toolgate-python: the `toolgate._native` extension module
//!
//! The Rust half of the Python package `toolgate` (python/toolgate): the
//! pure-Python package wraps these functions in typed objects. Every
//! function runs toolgate's library crates — the same code the `toolgate`
//! binary runs — and gives back the JSON the binary prints (as text; the
//! Python side reads it), so that `toolgate.parse`, `toolgate.label` and
//! `toolgate.StreamParser` agree with `toolgate parse`, `toolgate label
//! --format json` and `toolgate parse --stream` (python/tests walk the
//! bundled corpus and compare).
//!
//! Errors are `toolgate.ToolgateError` (a `ValueError`) with the binary's
//! messages. No panic crosses the boundary: replay runs under
//! `catch_unwind`, and a panic becomes that error ("internal error: …").
//! The Rust work of every call on an output or a batch (`parse`,
//! `Gate.parse`, `StreamParser.feed`/`finish`, `relabel_columns`,
//! `detect_columns`) runs with the GIL released.
//!
//! Tools given as `None` are unknown (SPEC §4), not `[]`: nothing is
//! allowlisted, labels are decided without the tool definitions
//! (`Toolset::unknown`, as `label` judges a transcript without `tools`),
//! and the report carries the finding `tools_unknown`.
//!
//! ## Place in the dependency order
//!
//! core → formats → validator → batch → **python**, beside the `toolgate`
//! binary: both are front ends over the same libraries, and neither is
//! imported by anything. pyo3 lives only in this crate.
//!
//! ## Invariants
//!
//! - **Same records as the binary.** Every function returns the JSON the
//!   binary prints for the same input, written by `toolgate_core::jsonout`
//!   (terminal-safe, `schema_version` last); the Python side only reads it.
//! - **Fail closed across the boundary.** A bad input is a
//!   `ToolgateError`, a panic the internal error; nothing executes a call.
//! - **Bounded work per call.** Long work releases the GIL; the batch
//!   functions judge through `toolgate_batch` with its memory bounds.
//!
//! ## The public surface
//!
//! The `#[pymodule]` `_native` and its functions are the surface; the Rust
//! modules (`batch`, `engines`) are private.

mod batch;
mod engines;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use toolgate_core::load::{self, Loaded};
use toolgate_core::{ToolDef, jsonout};
use toolgate_validator::auto::Source;
use toolgate_validator::report as records;
use toolgate_validator::stream::StreamParser as Stream;
use toolgate_validator::{Engine, PipelineResult};

/// mimalloc for the module's own allocations, as the binary uses it:
/// replay allocates many small, short-lived values (BENCHMARKS.md, "Replay
/// at scale"), and the same work should cost the same from Python.
#[global_allocator]
static GLOBAL: toolgate_alloc::Mimalloc = toolgate_alloc::Mimalloc;

create_exception!(
    _native,
    ToolgateError,
    PyValueError,
    "An input toolgate cannot use (bad tools, an unknown profile, a transcript that is not JSON); the message is the toolgate binary's."
);

fn err(message: impl Into<String>) -> PyErr {
    ToolgateError::new_err(message.into())
}

/// The UTF-8 text of the argument `what`: a str holding a lone surrogate
/// (which UTF-8 cannot hold, so no model output can contain one) is a
/// `ToolgateError` saying which argument and where, not a bare
/// `UnicodeEncodeError`.
fn utf8<'a>(s: &'a Bound<'_, PyString>, what: &str) -> PyResult<&'a str> {
    s.to_str().map_err(|e| {
        let at = e
            .value(s.py())
            .getattr("start")
            .ok()
            .and_then(|v| v.extract::<usize>().ok());
        err(match at {
            Some(i) => format!(
                "{what} is not valid Unicode: a lone surrogate at index {i} cannot be encoded as UTF-8"
            ),
            None => format!(
                "{what} is not valid Unicode: a lone surrogate cannot be encoded as UTF-8"
            ),
        })
    })
}

/// [`utf8`] of an optional argument.
fn utf8_opt<'a>(s: Option<&'a Bound<'_, PyString>>, what: &str) -> PyResult<Option<&'a str>> {
    s.map(|s| utf8(s, what)).transpose()
}

/// The message of an internal error (a panic caught at the boundary).
const INTERNAL: &str = "internal error: the pipeline failed on this input";

/// Runs `work`, a panic in it (a bug, never expected) becoming the
/// internal error: no panic reaches Python.
fn guarded<T>(work: impl FnOnce() -> Result<T, String>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result.map_err(err),
        Err(_) => Err(err(INTERNAL)),
    }
}

/// The `tools` of `tools_json`: a JSON array of tool definitions, or a
/// transcript object with a `tools` array (as `toolgate parse --tools`);
/// `None` when no tools were given (unknown, SPEC §4).
fn read_tools(tools_json: Option<&str>) -> Result<Option<Value>, String> {
    let Some(text) = tools_json else {
        return Ok(None);
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("tools are not valid JSON: {e}"))?;
    load::tools_member(value)
        .map(Some)
        .map_err(|why| format!("tools: {why}"))
}

/// The tool definitions read the way transcripts read them (OpenAI or bare
/// style), `None` when the tools are unknown, and the problems found in
/// them (the binary prints those on stderr as `toolgate: tools: …`).
fn tool_defs(tools_json: Option<&str>) -> Result<(Option<Vec<ToolDef>>, Vec<String>), String> {
    let Some(tools) = read_tools(tools_json)? else {
        return Ok((None, Vec::new()));
    };
    let t = load::with_tools(String::new(), tools, Path::new("<tools>"))?;
    let problems = t
        .tool_problems
        .iter()
        .map(|p| toolgate_core::sanitize::one_line(p).into_owned())
        .collect();
    Ok((Some(t.tools.to_vec()), problems))
}

/// The profile's pipeline on a live output whose tool list is unknown
/// (SPEC §4): what `label` decides for a transcript without `tools`, and
/// `toolgate parse` without `--tools` ([`Engine::judge_output_unknown`]).
/// Emits the telemetry event, as `parse_output` does.
fn judge_unknown(
    engine: &Engine,
    output: &str,
    reasoning: Option<&str>,
    hit_length_limit: bool,
) -> PipelineResult {
    engine.judge_output_unknown(&engine.profile, output, reasoning, hit_length_limit, true)
}

/// `report` (a `parse` report) with the findings of unknown tools before
/// `schema_version`, when `unknown`: as `toolgate parse` prints it.
fn with_findings(report: Value, unknown: bool) -> Value {
    if unknown {
        records::with_tools_unknown(report)
    } else {
        report
    }
}

/// The pipeline on one live output: with `tools`, or with the tool list
/// unknown (`None`).
fn judge(
    engine: &Engine,
    output: &str,
    tools: Option<&[ToolDef]>,
    reasoning: Option<&str>,
) -> PipelineResult {
    match tools {
        Some(tools) => engine.parse_output(output, tools, reasoning),
        None => judge_unknown(engine, output, reasoning, false),
    }
}

/// The engine and, with a model, why its profile was chosen: `profile`
/// `None` or `"auto"` is the binary without `--profile` (the default
/// profile, or `--model`'s choice); a model together with another profile
/// is refused, as the binary refuses `--profile` with `--model`.
fn engine_for(
    profile: Option<&str>,
    model: Option<&str>,
) -> Result<(&'static Engine, Option<Source>), String> {
    match (profile, model) {
        (Some(p), Some(_)) if p != engines::AUTO => Err(
            "the argument '--model <NAME>' cannot be used with '--profile <P>' (give profile=\"auto\" with a model)"
                .into(),
        ),
        (_, Some(model)) => {
            let chosen = toolgate_validator::Auto::default().choose(Some(model), None);
            Ok((engines::engine(&chosen.profile)?, Some(chosen.source)))
        }
        (None | Some(engines::AUTO), None) => {
            Ok((engines::engine(&toolgate_validator::Profile::default())?, None))
        }
        (Some(p), None) => Ok((engines::engine(&engines::resolve_profile(Some(p))?)?, None)),
    }
}

/// One choice judged whole, as `toolgate proxy --mode enforce` judges it
/// ([`toolgate_validator::output`]): the pipeline on `content` and the
/// `native` mode on `tool_calls` (a JSON list) and the legacy
/// `function_call` (a JSON object), as one set. The LiteLLM guardrail
/// serves what this returns (JSON text): `decision`, `label`, `gate`,
/// `reason`, `native` (`{calls, failed, label}` or null), `native_calls`
/// and `text_calls` (the `tool_calls` served, native ones as given, the
/// text's with fresh ids; both empty unless calls are sent),
/// `function_call`, `finish_reason`, `text_calls_execute`, and `content`:
/// what is left to show from the `forwarded`-th character on (on execute
/// the text before the call markup, null when only whitespace is left).
/// `one_call`: the request set `parallel_tool_calls: false` (more than one
/// call rejects the output at `single`).
/// `tools_json` is the allowlist (required: the guardrail always has one).
/// Also returns the problems found in the tools.
#[pyfunction]
#[pyo3(signature = (content, tools_json, tool_calls_json=None, function_call_json=None, profile=None, model=None, reasoning=None, finish_reason=None, forwarded=0, one_call=false))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, one per field of a choice
fn judge_choice(
    py: Python<'_>,
    content: &Bound<'_, PyString>,
    tools_json: &Bound<'_, PyString>,
    tool_calls_json: Option<&Bound<'_, PyString>>,
    function_call_json: Option<&Bound<'_, PyString>>,
    profile: Option<&Bound<'_, PyString>>,
    model: Option<&Bound<'_, PyString>>,
    reasoning: Option<&Bound<'_, PyString>>,
    finish_reason: Option<&Bound<'_, PyString>>,
    forwarded: usize,
    one_call: bool,
) -> PyResult<(String, Vec<String>)> {
    let profile = utf8_opt(profile, "profile")?;
    let model = utf8_opt(model, "model")?;
    let finish_reason = utf8_opt(finish_reason, "finish_reason")?;
    let content = utf8(content, "content")?;
    let tools_json = utf8(tools_json, "tools")?;
    let tool_calls_json = utf8_opt(tool_calls_json, "tool_calls")?;
    let function_call_json = utf8_opt(function_call_json, "function_call")?;
    let reasoning = utf8_opt(reasoning, "reasoning")?;
    py.detach(|| {
        guarded(|| {
            let model = if profile.is_none_or(|p| p == engines::AUTO) {
                model
            } else {
                None
            };
            let (engine, _) = engine_for(profile, model)?;
            let (tools, problems) = tool_defs(Some(tools_json))?;
            let tools = tools.unwrap_or_default();
            let calls: Option<Vec<Value>> = match tool_calls_json {
                None => None,
                Some(text) => match serde_json::from_str(text) {
                    Ok(Value::Array(calls)) => Some(calls),
                    Ok(_) => return Err("tool_calls: not a JSON list".into()),
                    Err(e) => return Err(format!("tool_calls: not JSON: {e}")),
                },
            };
            let legacy: Option<Value> = function_call_json
                .map(|text| {
                    serde_json::from_str(text).map_err(|e| format!("function_call: not JSON: {e}"))
                })
                .transpose()?;
            let mut j = toolgate_validator::output::judge(
                engine,
                &tools,
                content,
                reasoning,
                calls.as_deref(),
                legacy.as_ref(),
                finish_reason,
            );
            // The request set `parallel_tool_calls: false`, as the proxy
            // applies it.
            if one_call {
                j.one_call_at_most();
            }
            let from = content
                .char_indices()
                .nth(forwarded)
                .map_or(content.len(), |(i, _)| i);
            let sends = j.sends_calls();
            let native_calls = if sends {
                j.native_calls().to_vec()
            } else {
                Vec::new()
            };
            let served = j.tool_calls();
            let text_calls = served
                .get(native_calls.len()..)
                .unwrap_or_default()
                .to_vec();
            let native = j.native.as_ref().map(|n| {
                serde_json::json!({"calls": n.count, "failed": n.failed, "label": n.label.as_str()})
            });
            let out = serde_json::json!({
                "decision": j.decision(),
                "label": j.label().as_str(),
                "gate": j.gate(),
                "reason": j.reason(),
                "native": native,
                "native_calls": native_calls,
                "text_calls": text_calls,
                "function_call": j.function_call(),
                "finish_reason": j.enforced_finish_reason(),
                "text_calls_execute": j.serves_text_calls(),
                "content": j.enforced_content(content, from),
            });
            Ok((jsonout::line(&jsonout::versioned(out)), problems))
        })
    })
}

/// Reads `json_text` as an answer for [`check_answer`] / [`check_chunk`]:
/// JSON that cannot be read is a reason too, never passed.
fn answer_shape(
    json_text: &Bound<'_, PyString>,
    check: fn(&Value) -> Result<(), String>,
) -> PyResult<Option<String>> {
    let text = utf8(json_text, "the answer")?;
    guarded(|| {
        Ok(match serde_json::from_str::<Value>(text) {
            Ok(v) => check(&v).err(),
            Err(e) => Some(format!("the answer is not valid JSON: {e}")),
        })
    })
}

/// `toolgate proxy --mode enforce`'s shape check of a non-streamed chat
/// completion (`toolgate_core::answer::check_completion`) on its JSON
/// text: `None` when every field that can carry a call can be read, else
/// why not (the proxy answers 502 "unchecked: …" then). The guardrails run
/// it before judging, so that they refuse what the proxy refuses.
#[pyfunction]
fn check_answer(json_text: &Bound<'_, PyString>) -> PyResult<Option<String>> {
    answer_shape(json_text, toolgate_core::answer::check_completion)
}

/// [`check_answer`] for one stream chunk
/// (`toolgate_core::answer::check_chunk`), as the proxy checks every event.
#[pyfunction]
fn check_chunk(json_text: &Bound<'_, PyString>) -> PyResult<Option<String>> {
    answer_shape(json_text, toolgate_core::answer::check_chunk)
}

/// `toolgate parse`: the profile's pipeline on one output. Returns the
/// report the binary prints (JSON text) and the problems found in the tools.
#[pyfunction]
#[pyo3(signature = (output, tools_json=None, profile=None, model=None, reasoning=None))]
fn parse(
    py: Python<'_>,
    output: &Bound<'_, PyString>,
    tools_json: Option<&Bound<'_, PyString>>,
    profile: Option<&Bound<'_, PyString>>,
    model: Option<&Bound<'_, PyString>>,
    reasoning: Option<&Bound<'_, PyString>>,
) -> PyResult<(String, Vec<String>)> {
    let output = utf8(output, "output")?;
    let tools_json = utf8_opt(tools_json, "tools")?;
    let reasoning = utf8_opt(reasoning, "reasoning")?;
    let profile = utf8_opt(profile, "profile")?;
    let model = utf8_opt(model, "model")?;
    py.detach(|| {
        guarded(|| {
            let (engine, source) = engine_for(profile, model)?;
            let (tools, problems) = tool_defs(tools_json)?;
            let result = judge(engine, output, tools.as_deref(), reasoning);
            let report = records::parse_report(&result, &engine.profile.name, source.as_ref());
            let report = with_findings(report, tools.is_none());
            Ok((jsonout::line(&report), problems))
        })
    })
}

/// A profile and a tool list made ready once, for deciding many outputs:
/// the hot path from Python (`toolgate.Gate`). Its verdicts are the values
/// of `parse`, built from the pipeline's result only when read.
#[pyclass(module = "toolgate._native", frozen)]
struct Gate {
    engine: &'static Engine,
    source: Option<Source>,
    /// The tools compiled once ([`Engine::share_tools`]) and kept here:
    /// each `parse` uses them ([`Engine::parse_compiled`]), so a list too
    /// heavy for the engine's cache is not compiled again for every output.
    /// `None`: unknown.
    compiled: Option<std::sync::Arc<(toolgate_validator::Toolset, toolgate_formats::ParamTypes)>>,
    #[pyo3(get)]
    tool_problems: Vec<String>,
}

#[pymethods]
impl Gate {
    /// Reads and compiles the tools with the GIL released: a long list
    /// (hundreds of tools, many `pattern`s) takes long enough to stall
    /// every other Python thread.
    #[new]
    #[pyo3(signature = (tools_json=None, profile=None, model=None))]
    fn new(
        py: Python<'_>,
        tools_json: Option<&Bound<'_, PyString>>,
        profile: Option<&Bound<'_, PyString>>,
        model: Option<&Bound<'_, PyString>>,
    ) -> PyResult<Self> {
        let tools_json = utf8_opt(tools_json, "tools")?;
        let profile = utf8_opt(profile, "profile")?;
        let model = utf8_opt(model, "model")?;
        py.detach(|| {
            guarded(|| {
                let (engine, source) = engine_for(profile, model)?;
                let (tools, tool_problems) = tool_defs(tools_json)?;
                let compiled = tools.map(|tools| engine.share_tools(&std::sync::Arc::new(tools)));
                Ok(Gate {
                    engine,
                    source,
                    compiled,
                    tool_problems,
                })
            })
        })
    }

    /// The pipeline on one output (the GIL released while it runs).
    #[pyo3(signature = (output, reasoning=None))]
    fn parse(
        &self,
        py: Python<'_>,
        output: &Bound<'_, PyString>,
        reasoning: Option<&Bound<'_, PyString>>,
    ) -> PyResult<Verdict> {
        let output = utf8(output, "output")?;
        let reasoning = utf8_opt(reasoning, "reasoning")?;
        let result = py.detach(|| {
            guarded(|| {
                Ok(match &self.compiled {
                    Some(compiled) => self.engine.parse_compiled(output, compiled, reasoning),
                    None => judge_unknown(self.engine, output, reasoning, false),
                })
            })
        })?;
        Ok(Verdict {
            result,
            profile: self.engine.profile.name.clone(),
            source: self.source.clone(),
            tools_unknown: self.compiled.is_none(),
        })
    }
}

/// One output's verdict, read lazily from the pipeline's result.
#[pyclass(module = "toolgate._native", frozen)]
struct Verdict {
    result: toolgate_validator::PipelineResult,
    profile: String,
    source: Option<Source>,
    /// Judged with the tool list unknown: the report carries the finding.
    tools_unknown: bool,
}

#[pymethods]
impl Verdict {
    /// `execute`, `no_call` or `reject`.
    #[getter]
    fn decision(&self) -> &'static str {
        self.result.decision.kind()
    }
    /// The label of the selected candidates.
    #[getter]
    fn label(&self) -> &'static str {
        self.result.label.as_str()
    }
    /// The first gate that failed.
    #[getter]
    fn gate(&self) -> Option<&'static str> {
        self.result.decision.gate().map(|g| g.as_str())
    }
    /// Why it was rejected.
    #[getter]
    fn reason(&self) -> Option<&str> {
        match &self.result.decision {
            toolgate_core::Decision::Reject { reason, .. } => Some(reason),
            _ => None,
        }
    }
    /// Whether the calls may run.
    #[getter]
    fn executed(&self) -> bool {
        matches!(
            self.result.decision,
            toolgate_core::Decision::Execute { .. }
        )
    }
    /// The calls to run (`[{"name", "arguments"}]`): empty unless executed.
    #[getter]
    fn calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (self.calls_json(),))
    }
    /// The report `toolgate parse` prints, as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (self.report_json(),))
    }
    /// Python's spelling: `Verdict(decision='reject', label='wrong_tool',
    /// gate='allowlist')`, `gate=None` when no gate failed.
    fn __repr__(&self) -> String {
        let gate = self
            .gate()
            .map_or_else(|| "None".to_string(), |g| format!("'{g}'"));
        format!(
            "Verdict(decision='{}', label='{}', gate={gate})",
            self.decision(),
            self.label(),
        )
    }
    /// The calls as JSON text (`[{"name", "arguments"}]`).
    fn calls_json(&self) -> String {
        let calls: Vec<Value> = self
            .result
            .decision
            .calls()
            .iter()
            .map(|c| c.to_json())
            .collect();
        jsonout::line(&calls)
    }
    /// The whole report `toolgate parse` prints, as JSON text.
    fn report_json(&self) -> String {
        jsonout::line(&with_findings(
            records::parse_report(&self.result, &self.profile, self.source.as_ref()),
            self.tools_unknown,
        ))
    }
}

/// Which streamed call a `tool_calls` fragment belongs to, decided as
/// `toolgate proxy` and `toolgate import` decide it
/// ([`toolgate_core::delta::CallSlots`]): the LiteLLM guardrail assembles
/// its calls with it, so all three read a stream as the same calls.
#[pyclass(module = "toolgate._native")]
struct CallSlots {
    slots: Mutex<toolgate_core::delta::CallSlots>,
}

#[pymethods]
impl CallSlots {
    #[new]
    fn new() -> Self {
        CallSlots {
            slots: Mutex::new(toolgate_core::delta::CallSlots::default()),
        }
    }

    /// Places one fragment: `index` (a non-negative integer, else None),
    /// its `position` in its chunk's list, its non-empty `id` and `name`,
    /// its `arguments` text. Returns `(index, reuse, n)` of its call: the
    /// place it is listed at, how many calls at that place came before it,
    /// and its number (for [`CallSlots::name`]). Raises `ToolgateError` when the fragment
    /// cannot be placed, or would begin a call past `cap`. `index_filled`:
    /// the index may be LiteLLM's filler for a missing one
    /// ([`toolgate_core::delta::Fragment::index_filled`]).
    #[pyo3(signature = (index, position, id=None, name=None, arguments=None, cap=usize::MAX, index_filled=false))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments, one per field of a fragment
    fn place(
        &self,
        index: Option<u64>,
        position: u64,
        id: Option<&Bound<'_, PyString>>,
        name: Option<&Bound<'_, PyString>>,
        arguments: Option<&Bound<'_, PyString>>,
        cap: usize,
        index_filled: bool,
    ) -> PyResult<(u64, u32, usize)> {
        use toolgate_core::delta::{Fragment, Placed, UNPLACEABLE};
        let fragment = Fragment {
            index,
            index_filled: index_filled && index.is_some(),
            position,
            id: utf8_opt(id, "id")?.filter(|s| !s.is_empty()),
            name: utf8_opt(name, "name")?.filter(|s| !s.is_empty()),
            arguments: utf8_opt(arguments, "arguments")?,
        };
        let mut slots = self.slots.lock().map_err(|_| err(INTERNAL))?;
        match slots.place(&fragment, cap) {
            Placed::Call { n, .. } => {
                let (place, reuse) = slots.key(n);
                Ok((place, reuse, n))
            }
            Placed::Capped => Err(err(format!("more than {cap} tool calls"))),
            Placed::Unplaceable => Err(err(UNPLACEABLE)),
        }
    }

    /// Places one streamed legacy `function_call` delta (its non-empty
    /// `name`, its `arguments` text) as its choice's one call
    /// ([`toolgate_core::delta::Fragment::legacy`]): call 0, its name by
    /// [`CallSlots::name`]. Use a `CallSlots` of its own for it.
    #[pyo3(signature = (name=None, arguments=None))]
    fn place_legacy(
        &self,
        name: Option<&Bound<'_, PyString>>,
        arguments: Option<&Bound<'_, PyString>>,
    ) -> PyResult<()> {
        use toolgate_core::delta::{Fragment, Placed, UNPLACEABLE};
        let fragment = Fragment::legacy(utf8_opt(name, "name")?, utf8_opt(arguments, "arguments")?);
        let mut slots = self.slots.lock().map_err(|_| err(INTERNAL))?;
        match slots.place(&fragment, 1) {
            Placed::Call { n: 0, .. } => Ok(()),
            // Never: at index 0 without an id every delta is call 0.
            _ => Err(err(UNPLACEABLE)),
        }
    }

    /// Call `n`'s name: its first name piece and every later one that is
    /// not that name repeated, joined.
    fn name(&self, n: usize) -> PyResult<String> {
        let slots = self.slots.lock().map_err(|_| err(INTERNAL))?;
        Ok(slots.name(n).to_string())
    }
}

/// The state of one streamed output.
struct StreamState {
    parser: Stream<'static>,
    engine: &'static Engine,
    source: Option<Source>,
    announced: bool,
    /// The tool list is unknown: the parser holds back with no tools and
    /// the end is judged by [`judge_unknown`].
    unknown: bool,
}

/// `toolgate parse --stream` on deltas given one at a time.
#[pyclass(module = "toolgate._native")]
struct StreamParser {
    /// `None` once finished.
    state: Mutex<Option<StreamState>>,
    /// Problems found in the tools.
    #[pyo3(get)]
    tool_problems: Vec<String>,
}

#[pymethods]
impl StreamParser {
    /// Reads and compiles the tools with the GIL released, as
    /// [`Gate::new`] does (the vLLM plugin builds one per request).
    #[new]
    #[pyo3(signature = (profile=None, tools_json=None, model=None))]
    fn new(
        py: Python<'_>,
        profile: Option<&Bound<'_, PyString>>,
        tools_json: Option<&Bound<'_, PyString>>,
        model: Option<&Bound<'_, PyString>>,
    ) -> PyResult<Self> {
        let tools_json = utf8_opt(tools_json, "tools")?;
        let profile = utf8_opt(profile, "profile")?;
        let model = utf8_opt(model, "model")?;
        py.detach(|| {
            let (engine, source, tools, problems) = guarded(|| {
                let (engine, source) = engine_for(profile, model)?;
                let (tools, problems) = tool_defs(tools_json)?;
                Ok((engine, source, tools, problems))
            })?;
            Ok(StreamParser {
                state: Mutex::new(Some(StreamState {
                    unknown: tools.is_none(),
                    parser: match tools {
                        Some(tools) => Stream::new(engine, tools),
                        None => Stream::with_tools_unknown(engine),
                    },
                    engine,
                    source,
                    announced: false,
                })),
                tool_problems: problems,
            })
        })
    }

    /// Pushes a delta; returns the events (JSON text) `parse --stream`
    /// prints for it: `text` (forwardable now) and, once, `open`. The GIL
    /// is released while the delta is scanned.
    fn feed(&self, py: Python<'_>, delta: &Bound<'_, PyString>) -> PyResult<Vec<String>> {
        let delta = utf8(delta, "delta")?;
        py.detach(|| self.feed_detached(delta))
    }

    /// Ends the stream: the `call` events, the held text still to show, and
    /// the `end` event; returns (events, the report `toolgate parse` prints).
    /// The GIL is released while the output is judged.
    #[pyo3(signature = (reasoning=None, hit_length_limit=false))]
    fn finish(
        &self,
        py: Python<'_>,
        reasoning: Option<&Bound<'_, PyString>>,
        hit_length_limit: bool,
    ) -> PyResult<(Vec<String>, String)> {
        let reasoning = utf8_opt(reasoning, "reasoning")?;
        py.detach(|| self.finish_detached(reasoning, hit_length_limit))
    }

    /// The text pushed so far that has not been forwarded.
    fn held(&self) -> PyResult<String> {
        let guard = self.state.lock().map_err(|_| err(INTERNAL))?;
        Ok(guard.as_ref().map_or_else(String::new, |s| {
            let h = s.parser.holdback();
            h.text()
                .get(h.forwarded()..)
                .unwrap_or_default()
                .to_string()
        }))
    }
}

impl StreamParser {
    /// [`StreamParser::feed`] without the GIL.
    fn feed_detached(&self, delta: &str) -> PyResult<Vec<String>> {
        let mut guard = self.state.lock().map_err(|_| err(INTERNAL))?;
        let state = guard
            .as_mut()
            .ok_or_else(|| err("the stream is finished: feed() after finish()"))?;
        let forward = catch_unwind(AssertUnwindSafe(|| state.parser.push(delta).to_string()))
            .map_err(|_| err(INTERNAL))?;
        let mut events = Vec::new();
        if !forward.is_empty() {
            events.push(event_line(
                serde_json::json!({"event": "text", "text": forward}),
            ));
        }
        if !state.announced
            && let Some((offset, token)) = state.parser.holdback().opener()
        {
            state.announced = true;
            events.push(event_line(records::open_event(state.engine, offset, token)));
        }
        Ok(events)
    }

    /// [`StreamParser::finish`] without the GIL.
    fn finish_detached(
        &self,
        reasoning: Option<&str>,
        hit_length_limit: bool,
    ) -> PyResult<(Vec<String>, String)> {
        let state = self
            .state
            .lock()
            .map_err(|_| err(INTERNAL))?
            .take()
            .ok_or_else(|| err("the stream is finished: finish() called twice"))?;
        let StreamState {
            parser,
            engine,
            source,
            unknown,
            ..
        } = state;
        let (result, tail) = catch_unwind(AssertUnwindSafe(|| {
            let end = parser.finish(reasoning, hit_length_limit);
            (end.result, end.tail)
        }))
        .map_err(|_| err(INTERNAL))?;
        let mut events: Vec<String> = records::call_events(&result)
            .into_iter()
            .map(event_line)
            .collect();
        if !tail.is_empty() {
            events.push(event_line(
                serde_json::json!({"event": "text", "text": tail}),
            ));
        }
        let report = with_findings(
            records::parse_report(&result, &engine.profile.name, source.as_ref()),
            unknown,
        );
        let mut with_event = report.clone();
        if let Some(obj) = with_event.as_object_mut() {
            obj.insert("event".into(), Value::from("end"));
        }
        events.push(event_line(with_event));
        Ok((events, jsonout::line(&report)))
    }
}

/// `toolgate label --format jsonl` on the text of one file read from
/// `path` (`line`: the text is that line of a JSONL file). Returns, per
/// transcript, its record (JSON text) and, for an unreadable one, the
/// binary's message.
#[pyfunction]
#[pyo3(signature = (text, path, line=None, profile=None))]
fn label_text(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    path: &Bound<'_, PyString>,
    line: Option<usize>,
    profile: Option<&Bound<'_, PyString>>,
) -> PyResult<Vec<(String, Option<String>)>> {
    let text = utf8(text, "the transcript")?;
    let path = utf8(path, "path")?;
    let profile = utf8_opt(profile, "profile")?;
    py.detach(|| {
        let path = PathBuf::from(path);
        label_records(profile, || match line {
            Some(_) => vec![batch::load_one(text, &path, line)],
            None => load::load_str(&path, text),
        })
    })
}

/// [`label_text`] on the bytes of one file read from `path`, as the binary
/// reads a file ([`batch::load_bytes`]): a JSONL line that is not UTF-8 is
/// an error record of its own, and the other lines are labeled.
#[pyfunction]
#[pyo3(signature = (data, path, profile=None))]
fn label_bytes(
    py: Python<'_>,
    data: &[u8],
    path: &Bound<'_, PyString>,
    profile: Option<&Bound<'_, PyString>>,
) -> PyResult<Vec<(String, Option<String>)>> {
    let path = utf8(path, "path")?;
    let profile = utf8_opt(profile, "profile")?;
    py.detach(|| {
        let path = PathBuf::from(path);
        label_records(profile, || batch::load_bytes(data, &path))
    })
}

/// The records of what `load` reads, labeled by `profile`: per transcript
/// its record (JSON text) and, for an unreadable one, the binary's message.
fn label_records(
    profile: Option<&str>,
    load: impl FnOnce() -> Vec<Loaded>,
) -> PyResult<Vec<(String, Option<String>)>> {
    let (engine, auto) = engines::batch(profile).map_err(err)?;
    let loaded = catch_unwind(AssertUnwindSafe(load)).map_err(|_| err(INTERNAL))?;
    let errors: Vec<Option<String>> = loaded
        .iter()
        .map(|l| l.as_ref().err().map(|e| e.to_string()))
        .collect();
    let records = batch::label_all(loaded, engine, &auto, None);
    Ok(records
        .into_iter()
        .zip(errors)
        .map(|(record, error)| {
            let error = error.or_else(|| {
                // A replay that panicked.
                record.labels.is_none().then(|| INTERNAL.to_string())
            });
            (jsonout::into_string(record.line), error)
        })
        .collect())
}

/// The rows of an Arrow `large_string` or `large_binary` array (the same
/// layout): its data buffer, its offsets buffer (little-endian i64), the
/// array's offset and length. Each row's bytes, read by [`load_rows`].
fn rows<'a>(
    data: &'a [u8],
    offsets: &[u8],
    start: usize,
    n: usize,
) -> Result<Vec<&'a [u8]>, String> {
    let bad = || "not an Arrow large_string array (offsets out of range)".to_string();
    let offset_at = |i: usize| -> Result<usize, String> {
        let at = start
            .checked_add(i)
            .and_then(|row| row.checked_mul(8))
            .ok_or_else(bad)?;
        let bytes: [u8; 8] = offsets
            .get(at..at.checked_add(8).ok_or_else(bad)?)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(bad)?;
        usize::try_from(i64::from_le_bytes(bytes)).map_err(|_| bad())
    };
    // The last offset first: `n` is only trusted (to size `out`) once the
    // offsets buffer is known to hold n + 1 of them.
    offset_at(n)?;
    let mut out = Vec::with_capacity(n);
    let mut from = offset_at(0)?;
    for i in 0..n {
        let to = offset_at(i + 1)?;
        out.push(data.get(from..to).ok_or_else(bad)?);
        from = to;
    }
    Ok(out)
}

/// Where the rows of an Arrow column were read, per row (each `None`
/// when the batch has no such column). A null is read as a row without
/// the column: `paths[i]` null is `default_path`, `lines[i]` null a whole
/// `.json` transcript, `ends[i]` null not the file's end; `ends[i]` true:
/// the file's last line, with no newline after it.
struct Origins {
    paths: Option<Vec<Option<String>>>,
    lines: Option<Vec<Option<i64>>>,
    ends: Option<Vec<Option<bool>>>,
}

/// The transcripts of an Arrow column (see [`rows`]), row `i` read as
/// the binary reads that line of its file ([`batch::load_row`]): a row
/// that is not UTF-8 gets the binary's reason for such a line (`not valid
/// UTF-8 (first bad byte at offset K)`), not a failure of the whole batch.
fn load_rows(
    data: &[u8],
    offsets: &[u8],
    start: usize,
    n: usize,
    origins: &Origins,
    default_path: &str,
) -> Result<Vec<Loaded>, String> {
    let texts = rows(data, offsets, start, n)?;
    let default = PathBuf::from(default_path);
    Ok(texts
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| {
            let path = origins
                .paths
                .as_ref()
                .and_then(|p| p.get(i))
                .and_then(Option::as_deref)
                .map_or_else(|| default.clone(), PathBuf::from);
            let line = origins
                .lines
                .as_ref()
                .and_then(|l| l.get(i).copied().flatten())
                .and_then(|l| usize::try_from(l).ok());
            let ends = origins
                .ends
                .as_ref()
                .and_then(|e| e.get(i).copied().flatten())
                .unwrap_or(false);
            batch::load_row(bytes, &path, line, ends)
        })
        .collect())
}

/// One output column of [`relabel_columns`]: name, data, i64 offsets and
/// validity bitmap (Arrow's `large_string` layout).
type Column<'py> = (
    &'static str,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);

/// Builds one Arrow `large_string` column from optional strings.
struct ColumnBuilder {
    data: Vec<u8>,
    offsets: Vec<u8>,
    valid: Vec<u8>,
    n: usize,
}

impl ColumnBuilder {
    fn new(n: usize, room: usize) -> ColumnBuilder {
        let mut offsets = Vec::with_capacity((n + 1) * 8);
        offsets.extend_from_slice(&0i64.to_le_bytes());
        ColumnBuilder {
            data: Vec::with_capacity(room),
            offsets,
            valid: vec![0; n.div_ceil(8)],
            n: 0,
        }
    }

    fn push(&mut self, s: Option<&[u8]>) {
        if let Some(s) = s {
            self.data.extend_from_slice(s);
            if let Some(byte) = self.valid.get_mut(self.n / 8) {
                *byte |= 1 << (self.n % 8);
            }
        }
        // A Vec's length always fits in i64.
        let end = i64::try_from(self.data.len()).unwrap_or(i64::MAX);
        self.offsets.extend_from_slice(&end.to_le_bytes());
        self.n += 1;
    }
}

/// The column names of [`relabel_columns`], in order.
const COLUMNS: [&str; 7] = ["record", "id", "model", "task", "label", "decision", "gate"];

/// `relabel_batch`: labels every transcript of an Arrow `large_string`
/// column (see [`rows`]), as `toolgate label --format jsonl` labels
/// them, with the GIL released. `choices` (from `choose`) fixes each
/// model's profile; without it the choices are made from this batch.
/// Returns the columns `record` (the JSONL line), `id`, `model`, `task`,
/// `label` (the profile's), `decision` and `gate` (null where absent).
#[pyfunction]
#[pyo3(signature = (data, offsets, start, n, paths=None, lines=None, default_path="<batch>", profile=None, choices=None, ends=None))]
#[allow(clippy::too_many_arguments)]
fn relabel_columns<'py>(
    py: Python<'py>,
    data: &[u8],
    offsets: &[u8],
    start: usize,
    n: usize,
    paths: Option<Vec<Option<String>>>,
    lines: Option<Vec<Option<i64>>>,
    default_path: &str,
    profile: Option<&str>,
    choices: Option<&str>,
    ends: Option<Vec<Option<bool>>>,
) -> PyResult<Vec<Column<'py>>> {
    let origins = Origins { paths, lines, ends };
    let cols = py.detach(|| {
        guarded(|| -> Result<Vec<ColumnBuilder>, String> {
            let (engine, auto) = engines::batch(profile)?;
            let choices = match choices {
                Some(text) => {
                    let value: Value =
                        serde_json::from_str(text).map_err(|e| format!("choices: {e}"))?;
                    Some(batch::Choices::from_json(&value, &auto, engine)?)
                }
                None => None,
            };
            let loaded = load_rows(data, offsets, start, n, &origins, default_path)?;
            let records = batch::label_all(loaded, engine, &auto, choices.as_ref());
            let mut cols: Vec<ColumnBuilder> = COLUMNS
                .iter()
                .enumerate()
                .map(|(i, _)| {
                    // Room for typical records, at most 64 MiB up front.
                    let room = if i == 0 {
                        n.saturating_mul(1024)
                    } else {
                        n.saturating_mul(16)
                    };
                    ColumnBuilder::new(n, room.min(1 << 26))
                })
                .collect();
            for record in &records {
                let t = &record.transcript;
                let labels = record.labels.as_ref();
                let values: [Option<&[u8]>; 7] = [
                    Some(&record.line),
                    t.as_ref().map(|t| t.id.as_bytes()),
                    t.as_ref()
                        .and_then(|t| t.model.as_deref())
                        .map(str::as_bytes),
                    t.as_ref()
                        .and_then(|t| t.task.as_deref())
                        .map(str::as_bytes),
                    labels.map(|l| l.profile_label.as_str().as_bytes()),
                    labels.map(|l| l.profile.decision().as_bytes()),
                    labels.and_then(|l| l.profile.gate()).map(str::as_bytes),
                ];
                for (col, value) in cols.iter_mut().zip(values) {
                    col.push(value);
                }
            }
            Ok(cols)
        })
    })?;
    Ok(COLUMNS
        .iter()
        .zip(cols)
        .map(|(name, c)| {
            (
                *name,
                PyBytes::new(py, &c.data),
                PyBytes::new(py, &c.offsets),
                PyBytes::new(py, &c.valid),
            )
        })
        .collect())
}

/// Detection's counts for the transcripts of an Arrow column (as
/// [`relabel_columns`] reads it), as JSON text: add them up with
/// `merge_counts`, then `choose`.
#[pyfunction]
#[pyo3(signature = (data, offsets, start, n, paths=None, lines=None, default_path="<batch>", ends=None))]
#[allow(clippy::too_many_arguments)]
fn detect_columns(
    py: Python<'_>,
    data: &[u8],
    offsets: &[u8],
    start: usize,
    n: usize,
    paths: Option<Vec<Option<String>>>,
    lines: Option<Vec<Option<i64>>>,
    default_path: &str,
    ends: Option<Vec<Option<bool>>>,
) -> PyResult<String> {
    let origins = Origins { paths, lines, ends };
    py.detach(|| {
        guarded(|| {
            let (engine, _) = engines::batch(None)?;
            let loaded = load_rows(data, offsets, start, n, &origins, default_path)?;
            Ok::<_, String>(jsonout::line(&batch::detect(&loaded, engine).to_json()))
        })
    })
}

/// The record `toolgate label --format jsonl` prints for a path it could
/// not read (`{"path", "error", "schema_version"}`, by the binary's own
/// writer): the Ray relabel writes it for a named file that is missing or
/// is not a file, as the binary does, instead of leaving it out.
/// `line`: the line of a JSONL file the error is on (the record's error
/// then says `line N: ...`, as the binary's does).
#[pyfunction]
#[pyo3(signature = (path, reason, line=None))]
fn error_record(path: &str, reason: &str, line: Option<usize>) -> String {
    let e = toolgate_core::LoadError {
        path: PathBuf::from(path),
        line,
        reason: reason.to_string(),
    };
    jsonout::line(&jsonout::versioned(toolgate_batch::error_record(&e)))
}

/// Why a directory walk names the file at `path` though it reads nothing
/// of it (a compressed transcript file, `x.jsonl.gz`: `load::named_unread`),
/// `None` for any other file. The Ray relabel's walk asks this.
#[pyfunction]
fn named_unread(path: &str) -> Option<String> {
    load::named_unread(Path::new(path)).map(|e| e.reason)
}

/// Why the binary refuses a file that starts with `head` as no UTF-8 text
/// at all (UTF-16/32, compressed: `core::file::not_text`, which looks at
/// its first bytes only), `None` when it does not. The Python readers of
/// files' bytes (`label`, the Ray relabel) ask this rather than decoding.
#[pyfunction]
fn not_text(head: &[u8]) -> Option<String> {
    load::not_text(&head[..head.len().min(load::SNIFF_BYTES)])
}

/// Adds up counts made by `detect_columns`.
#[pyfunction]
fn merge_counts(py: Python<'_>, counts: Vec<String>) -> PyResult<String> {
    py.detach(|| {
        guarded(|| {
            let (engine, _) = engines::batch(None)?;
            let mut total = batch::Counts::default();
            for text in &counts {
                let value: Value =
                    serde_json::from_str(text).map_err(|e| format!("counts: {e}"))?;
                total.merge(&batch::Counts::from_json(&value, engine)?);
            }
            Ok::<_, String>(jsonout::line(&total.to_json()))
        })
    })
}

/// The final `auto` choice per model from the counts of the whole dataset
/// (JSON text for `relabel_columns`' `choices`).
#[pyfunction]
fn choose(counts: &str) -> PyResult<String> {
    let (engine, auto) = engines::batch(None).map_err(err)?;
    let value: Value = serde_json::from_str(counts).map_err(|e| err(format!("counts: {e}")))?;
    let counts = batch::Counts::from_json(&value, engine).map_err(err)?;
    Ok(jsonout::line(&counts.choose(&auto).to_json()))
}

/// Times the Rust pipeline in-process, without Python in the loop: `reps`
/// passes of `engine.parse_output` over `items` (output, tools JSON), the
/// tools read once. Returns the seconds taken. The baseline of the binding
/// overhead in BENCHMARKS.md (`python/bench/bench.py`).
#[pyfunction]
#[pyo3(signature = (items, reps, profile=None))]
fn bench_parse(
    py: Python<'_>,
    items: Vec<(String, Option<String>)>,
    reps: usize,
    profile: Option<&str>,
) -> PyResult<f64> {
    py.detach(|| {
        let (engine, _) = engine_for(profile, None)?;
        let mut prepared = Vec::with_capacity(items.len());
        for (output, tools) in &items {
            prepared.push((
                output.as_str(),
                tool_defs(tools.as_deref())?.0.unwrap_or_default(),
            ));
        }
        let began = std::time::Instant::now();
        for _ in 0..reps {
            for (output, tools) in &prepared {
                std::hint::black_box(engine.parse_output(output, tools, None));
            }
        }
        Ok::<_, String>(began.elapsed().as_secs_f64())
    })
    .map_err(err)
}

/// Which tools a request (its JSON text) lets the model call, by its
/// `tool_choice` and legacy `function_call` (`toolgate_core::choice`, the
/// rule `toolgate proxy` narrows its allowlist by): the names, or `None`
/// when it does not narrow the list (`auto`, `required`, `none`, no
/// choice). Raises `ValueError` saying why when the choice cannot be read.
#[pyfunction]
fn allowed_names(request_json: &str) -> PyResult<Option<Vec<String>>> {
    use toolgate_core::choice::Allowed;
    let request: Value = serde_json::from_str(request_json)
        .map_err(|e| PyValueError::new_err(format!("the request is not JSON: {e}")))?;
    match toolgate_core::choice::allowed(&request) {
        Ok(Allowed::Any | Allowed::NoCall) => Ok(None),
        Ok(Allowed::Only(names)) => Ok(Some(names)),
        Err(why) => Err(PyValueError::new_err(why)),
    }
}

/// `text` made safe for one line of a log or a terminal, by the rule
/// everything toolgate shows follows (`toolgate_core::sanitize::one_line`):
/// control characters (an ANSI escape), bidi overrides and invisible
/// characters become visible escapes (`\x1b`, `\u{202e}`), and so do
/// `\n` and `\t`. A verdict's `reason` quotes the model's text (a tool name
/// it made up): the integrations log it through this, since the JSON the
/// native functions return is terminal-safe only until it is read back.
#[pyfunction]
fn one_line(text: &str) -> String {
    toolgate_core::sanitize::one_line(text).into_owned()
}

/// The names of the built-in modes, in replay order.
#[pyfunction]
fn modes() -> Vec<String> {
    toolgate_formats::builtin()
        .iter()
        .map(|e| e.name().to_string())
        .collect()
}

/// The names of the built-in profiles.
#[pyfunction]
fn profiles() -> Vec<String> {
    toolgate_validator::Profile::builtin_names()
        .into_iter()
        .map(String::from)
        .collect()
}

/// How many tool lists the engine of `profile` has compiled in this
/// process ([`Engine::tool_compilations`]): lets the tests show that a
/// `Gate` compiles its list once, without timing it. Private.
#[pyfunction]
#[pyo3(signature = (profile=None))]
fn _tool_compilations(profile: Option<&str>) -> PyResult<usize> {
    guarded(|| Ok(engine_for(profile, None)?.0.tool_compilations()))
}

/// The module `toolgate._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ToolgateError", m.py().get_type::<ToolgateError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The most choices one answer may hold: the proxy's and importers' cap.
    m.add("MAX_CHOICES", toolgate_core::MAX_CHOICES)?;
    // The most native calls a streamed choice holds, as in the proxy.
    m.add(
        "MAX_STREAMED_CALLS",
        toolgate_formats::DEFAULT_MAX_CANDIDATES,
    )?;
    m.add_class::<CallSlots>()?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(judge_choice, m)?)?;
    m.add_function(wrap_pyfunction!(check_answer, m)?)?;
    m.add_function(wrap_pyfunction!(check_chunk, m)?)?;
    m.add_function(wrap_pyfunction!(label_text, m)?)?;
    m.add_function(wrap_pyfunction!(label_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(relabel_columns, m)?)?;
    m.add_function(wrap_pyfunction!(detect_columns, m)?)?;
    m.add_function(wrap_pyfunction!(merge_counts, m)?)?;
    m.add_function(wrap_pyfunction!(error_record, m)?)?;
    m.add_function(wrap_pyfunction!(not_text, m)?)?;
    m.add_function(wrap_pyfunction!(named_unread, m)?)?;
    m.add_function(wrap_pyfunction!(choose, m)?)?;
    m.add_function(wrap_pyfunction!(modes, m)?)?;
    m.add_function(wrap_pyfunction!(one_line, m)?)?;
    m.add_function(wrap_pyfunction!(allowed_names, m)?)?;
    m.add_function(wrap_pyfunction!(bench_parse, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(_tool_compilations, m)?)?;
    m.add_class::<StreamParser>()?;
    m.add_class::<Gate>()?;
    m.add_class::<Verdict>()?;
    Ok(())
}

/// One event of the stream as `parse --stream` prints it: every event ends
/// with `schema_version`.
fn event_line(event: Value) -> String {
    jsonout::line(&jsonout::versioned(event))
}
