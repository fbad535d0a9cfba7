//! One output judged whole (SPEC §4): the profile's pipeline on the text,
//! the `native` mode's gates on the upstream's own `tool_calls` and legacy
//! `function_call`, and one decision on all of them as one set — one
//! failing call, raw or native, rejects them all. What a client is served
//! from it (`tool_calls`, `function_call`, `finish_reason`, content) is
//! decided here too: `toolgate proxy --mode enforce` and the Python
//! package's LiteLLM guardrail both serve what this says.

use crate::engine::Engine;
use crate::labeler::label;
use crate::pipeline::{PipelineResult, Role, gate};
use crate::profile::Profile;
use crate::stream::{first_opener, markup_start};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use toolgate_core::{Call, Decision, Gate, Label, ToolDef};
use toolgate_formats::{Input, Strictness};

/// The native calls of one response (`tool_calls` and the legacy
/// `function_call`), judged as one set: every call goes through the gates
/// of the `native` profile, and one failing call rejects them all (SPEC §4).
#[derive(Clone, Debug)]
pub struct NativeJudged {
    /// How many native calls the upstream sent.
    pub count: usize,
    /// Why each failing call fails (`name: reason`); empty when the set
    /// executes.
    pub failed: Vec<String>,
    /// The first gate a call failed, in check order (`parse` for a call
    /// that could not be read); `None` when the set passes.
    pub gate: Option<Gate>,
    /// The `native` mode's label for all of them.
    pub label: Label,
}

impl NativeJudged {
    /// Whether the whole set passed.
    pub fn passes(&self) -> bool {
        self.failed.is_empty()
    }
}

/// One output's judgment: the text pipeline's result, the native set's,
/// and the calls that are served when the whole output executes.
#[derive(Clone, Debug)]
pub struct Judged {
    /// The profile's pipeline on the raw text.
    pub result: PipelineResult,
    /// The upstream's native calls, when it returned any.
    pub native: Option<NativeJudged>,
    /// The upstream's `finish_reason`.
    pub finish_reason: Option<String>,
    /// The upstream's native `tool_calls` as sent.
    native_calls: Vec<Value>,
    /// The upstream's legacy `function_call` as sent.
    legacy: Option<Value>,
    /// The calls executed from the text, with the ids they are sent under.
    calls: Vec<(String, Call)>,
    /// Where the text's call markup begins when its calls execute
    /// ([`crate::stream::markup_start`]); the text's length otherwise.
    markup_at: usize,
    /// Why the request's own terms reject an output that would otherwise
    /// execute ([`Judged::one_call_at_most`]).
    refused: Option<String>,
}

static CALL_IDS: AtomicU64 = AtomicU64::new(0);

/// A fresh `call_…` id: 24 hex digits, a counter mixed with a key drawn
/// once per process (from the OS's randomness and the start time), then
/// the counter itself (ids only need to be unique within a conversation;
/// the key keeps two runs of the proxy from giving the same ids).
pub fn call_id() -> String {
    static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let key = *KEY.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        h.write_u64(nanos);
        h.finish()
    });
    call_id_of(key, CALL_IDS.fetch_add(1, Ordering::Relaxed))
}

/// The id of counter `n` under `key`: `call_`, `n` mixed with `key` as 16
/// hex digits, the low 32 bits of `n` as 8.
fn call_id_of(key: u64, n: u64) -> String {
    // splitmix64's finalizer: every bit of the counter moves every bit.
    let mut z = key ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    // Written digit by digit: `format!` cost more than the rest of the id.
    let mut id = String::with_capacity(29);
    id.push_str("call_");
    for (v, digits) in [(z, 16), (n & 0xffff_ffff, 8)] {
        for i in (0..digits).rev() {
            id.push(char::from(
                b"0123456789abcdef"[((v >> (4 * i)) & 0xf) as usize],
            ));
        }
    }
    id
}

/// The legacy `function_call` as a native call, so that one set of gates
/// judges both shapes.
pub fn legacy_as_call(function_call: &Value) -> Value {
    json!({"id": "function_call", "type": "function", "function": function_call})
}

/// Runs the pipeline on `content` and the `native` mode on the upstream's
/// `native_calls` and legacy `function_call`, as one set.
pub fn judge(
    engine: &Engine,
    tools: &[ToolDef],
    content: &str,
    reasoning: Option<&str>,
    native_calls: Option<&[Value]>,
    legacy: Option<&Value>,
    finish_reason: Option<&str>,
) -> Judged {
    let length = finish_reason == Some("length");
    let result = engine.parse_finished(content, tools, reasoning, length);
    let native_calls: Vec<Value> = native_calls.map(<[Value]>::to_vec).unwrap_or_default();
    let legacy = legacy.filter(|l| !l.is_null()).cloned();
    let mut set = native_calls.clone();
    set.extend(legacy.as_ref().map(legacy_as_call));
    let native = (!set.is_empty()).then(|| judge_native(engine, tools, content, &set, length));
    let calls: Vec<(String, Call)> = result
        .decision
        .calls()
        .iter()
        .map(|c| (call_id(), c.clone()))
        .collect();
    let markup_at = match calls.is_empty() {
        true => content.len(),
        false => {
            let opener = first_opener(&engine.profile, &engine.extractors, content);
            markup_start(content, &result.candidates, opener)
        }
    };
    Judged {
        result,
        native,
        finish_reason: finish_reason.map(str::to_string),
        native_calls,
        legacy,
        calls,
        markup_at,
        refused: None,
    }
}

/// Each native call through the gates of the `native` profile; the set
/// passes only when every call does (a call the extractor could not even
/// read fails too).
fn judge_native(
    engine: &Engine,
    tools: &[ToolDef],
    content: &str,
    calls: &[Value],
    length: bool,
) -> NativeJudged {
    let compiled = engine.toolset(tools);
    let (toolset, types) = &*compiled;
    let mut input = Input::new(content);
    input.tool_calls = Some(calls);
    input.param_types = Some(types);
    input.hit_length_limit = length;
    // The profile's native extractor, else the built-in one.
    let builtin;
    let native = match engine.extractors.iter().find(|e| e.name() == "native") {
        Some(e) => Some(e.as_ref()),
        None => {
            builtin = toolgate_formats::by_name("native");
            builtin.as_deref()
        }
    };
    // Through the one funnel every other path uses (`extract`), so the
    // candidate cap holds here too: a response with more native calls than
    // the cap is judged as `label` and replay judge its transcript.
    let extractor = native
        .map(|e| toolgate_formats::extract(e, &input, Strictness::Strict))
        .unwrap_or_default();
    let profile = Profile::builtin("native").unwrap_or_default();
    let mut passed = 0;
    let mut failed = Vec::new();
    let mut first_gate: Option<Gate> = None;
    for c in &extractor {
        let gated = gate(
            &profile,
            Role::Primary,
            "native",
            std::slice::from_ref(c),
            &input,
            toolset,
            None,
        );
        let failed_at = gated.decision.gate();
        match gated.decision {
            Decision::Execute { .. } => passed += 1,
            Decision::Reject { reason, .. } => {
                // The earliest gate in check order (SPEC §9) any call failed.
                first_gate = match (first_gate, failed_at) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                failed.push(format!(
                    "{}: {reason}",
                    c.name.as_deref().unwrap_or("(no name)")
                ))
            }
            Decision::NoCall => {}
        }
    }
    if failed.is_empty() && passed != calls.len() {
        // A call the extractor could not read failed to parse.
        first_gate = Some(Gate::Parse);
        failed.push(format!(
            "{} of {} native calls could not be read",
            calls.len() - passed.min(calls.len()),
            calls.len()
        ));
    }
    let label = label(&extractor, None, toolset, length).label;
    NativeJudged {
        count: calls.len(),
        failed,
        gate: first_gate,
        label,
    }
}

impl Judged {
    /// How many calls the output would execute: native, legacy and text.
    pub fn call_count(&self) -> usize {
        self.native_calls.len() + usize::from(self.legacy.is_some()) + self.calls.len()
    }

    /// The request said `parallel_tool_calls: false`: an output that would
    /// execute more than one call is rejected whole at the `single` gate
    /// (a client that asked for one call may run only the first), its
    /// label unchanged. The proxy and the LiteLLM guardrail apply it;
    /// replay applies the same rule to a transcript whose request set it
    /// ([`toolgate_core::Transcript::one_call`]).
    pub fn one_call_at_most(&mut self) {
        let n = self.call_count();
        if n > 1 && !self.rejects() {
            self.refused = Some(crate::gates::one_call_refusal(n));
        }
    }

    /// Whether the text's calls execute.
    pub fn executes(&self) -> bool {
        matches!(self.result.decision, Decision::Execute { .. })
    }

    /// Whether the output as a whole is rejected: the text pipeline rejects
    /// it, or one native call fails (SPEC §4: one failing call rejects the
    /// whole set, native or raw).
    pub fn rejects(&self) -> bool {
        matches!(self.result.decision, Decision::Reject { .. })
            || self.native.as_ref().is_some_and(|n| !n.passes())
            || self.refused.is_some()
    }

    /// Whether any call goes to the client.
    pub fn releases_calls(&self) -> bool {
        !self.rejects() && (self.executes() || self.native.is_some())
    }

    /// The decision on the whole output, as the client is told.
    pub fn decision(&self) -> &'static str {
        if self.rejects() {
            "reject"
        } else if self.releases_calls() {
            "execute"
        } else {
            "no_call"
        }
    }

    /// The label that goes with [`Judged::decision`]: the text pipeline's,
    /// unless the text found nothing and native calls decided.
    pub fn label(&self) -> Label {
        match (&self.result.decision, &self.native) {
            (Decision::NoCall, Some(n)) => n.label,
            (Decision::Execute { .. }, Some(n)) if !n.passes() => n.label,
            _ => self.result.label,
        }
    }

    /// The first failing gate (SPEC §4): the text pipeline's, else the
    /// native set's (`parse`, `allowlist` or `schema` of the first gate a
    /// native call failed, in check order).
    pub fn gate(&self) -> Option<&'static str> {
        self.result
            .decision
            .gate()
            .or_else(|| self.native.as_ref().and_then(|n| n.gate))
            .or_else(|| self.refused.as_ref().map(|_| Gate::Single))
            .map(Gate::as_str)
    }

    /// Why it was rejected.
    pub fn reason(&self) -> Option<String> {
        let text = match &self.result.decision {
            Decision::Reject { reason, .. } => Some(reason.clone()),
            _ => None,
        };
        let native = self
            .native
            .as_ref()
            .filter(|n| !n.passes())
            .map(|n| format!("native: {}", n.failed.join("; ")));
        match (text, native) {
            (Some(t), Some(n)) => Some(format!("{t}; {n}")),
            (t, n) => t.or(n).or_else(|| self.refused.clone()),
        }
    }

    /// The upstream's native `tool_calls` as sent (served first when the
    /// output executes).
    pub fn native_calls(&self) -> &[Value] {
        &self.native_calls
    }

    /// The text's executed calls with the ids they are served under (after
    /// the native ones); served only when [`Judged::sends_calls`].
    pub fn text_calls(&self) -> &[(String, Call)] {
        &self.calls
    }

    /// The `tool_calls` the client gets in `enforce`: none when the output
    /// is rejected; otherwise the upstream's native calls as sent, then the
    /// text's executed calls (arguments as a JSON string).
    pub fn tool_calls(&self) -> Vec<Value> {
        if !self.sends_calls() {
            return Vec::new();
        }
        let text = self.calls.iter().map(|(id, call)| {
            json!({
                "id": id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into()),
                },
            })
        });
        self.native_calls.iter().cloned().chain(text).collect()
    }

    /// Whether [`Judged::tool_calls`] sends any call.
    pub fn sends_calls(&self) -> bool {
        !self.rejects() && (!self.native_calls.is_empty() || !self.calls.is_empty())
    }

    /// The legacy `function_call` the client gets in `enforce`: the
    /// upstream's, when the whole output executes.
    pub fn function_call(&self) -> Option<&Value> {
        self.legacy.as_ref().filter(|_| !self.rejects())
    }

    /// The `finish_reason` the client gets in `enforce`.
    pub fn enforced_finish_reason(&self) -> Value {
        self.finish_reason_for(self.sends_calls())
    }

    /// [`Judged::enforced_finish_reason`] when whether `tool_calls` are
    /// sent is known.
    pub fn finish_reason_for(&self, sends_calls: bool) -> Value {
        if sends_calls {
            return json!("tool_calls");
        }
        if self.function_call().is_some() {
            return json!("function_call");
        }
        match self.finish_reason.as_deref() {
            Some("tool_calls") | Some("function_call") | None => json!("stop"),
            Some(other) => json!(other),
        }
    }

    /// Whether the served content is the text before the executed calls
    /// (the text's calls execute and nothing rejects the output).
    pub fn serves_text_calls(&self) -> bool {
        self.executes() && !self.rejects()
    }

    /// The content the client gets in `enforce`: on `execute`, the text
    /// before the call markup ([`crate::stream::markup_start`], as a
    /// stream's end shows it; from byte `from`: what streaming has not shown
    /// yet), `None` when only whitespace is left; otherwise the text as is.
    pub fn enforced_content(&self, content: &str, from: usize) -> Option<String> {
        if self.serves_text_calls() {
            let end = self.markup_at.min(content.len()).max(from);
            let rest = content.get(from..end).unwrap_or("");
            (!rest.trim().is_empty()).then(|| rest.to_string())
        } else {
            let rest = content.get(from..).unwrap_or("");
            (!rest.is_empty()).then(|| rest.to_string())
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_are_fresh() {
        let ids: std::collections::HashSet<String> = (0..10_000).map(|_| call_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(50) {
            let hex = id.strip_prefix("call_").unwrap();
            assert_eq!(hex.len(), 24, "{id}");
            assert!(hex.bytes().all(|c| c.is_ascii_hexdigit()), "{id}");
        }
        // Lowercase, the mixed counter then its low 32 bits.
        for (key, n) in [
            (0, 0),
            (1, 1),
            (u64::MAX, u64::MAX),
            (0x0123_4567_89ab_cdef, 7 << 32 | 9),
        ] {
            let mut z = key ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            assert_eq!(call_id_of(key, n), format!("call_{z:016x}{:08x}", n as u32));
        }
        assert_eq!(&call_id_of(5, 0x1_0000_00ab)[21..], "000000ab");
    }

    /// What `enforce` (and the guardrails) serve beside executed text calls
    /// is what a stream's end shows: the text before the call markup, in
    /// every format. Serving the text outside the calls' spans leaked the
    /// section tokens around them (`<|tool_calls_section_begin|>…`,
    /// `[TOOL_CALLS][]`) into content.
    #[test]
    fn content_beside_executed_calls_is_the_text_before_the_markup_in_every_format() {
        use crate::{Engine, Profile, stream::StreamParser};
        let tools = crate::testutil::weather_tools();
        for (profile, text) in [
            (
                "kimi",
                "Sure. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Gent\"}<|tool_call_end|><|tool_calls_section_end|> Done.",
            ),
            (
                "mistral",
                "Sure. [TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Gent\"}}] after",
            ),
            (
                "hermes",
                "Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Gent\"}}</tool_call> after",
            ),
        ] {
            let engine = Engine::new(Profile::builtin(profile).unwrap());
            let j = judge(&engine, &tools, text, None, None, None, Some("stop"));
            assert!(j.serves_text_calls(), "{profile}: {:?}", j.result.decision);
            assert_eq!(
                j.enforced_content(text, 0).as_deref(),
                Some("Sure. "),
                "{profile}"
            );
            let mut stream = StreamParser::new(&engine, tools.clone());
            let shown = stream.push(text).to_string();
            let end = stream.finish(None, false);
            assert_eq!(format!("{shown}{}", end.tail), "Sure. ", "{profile}");
        }
    }
}
