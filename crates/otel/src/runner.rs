//! A runner sample as a chat span, judged here: the runner only asks and
//! writes transcripts, so the verdict attributes come from replaying the
//! sample's transcript with the profile `auto` chooses for its model
//! (`--profile`, the `[models]` table, the built-in family table, else the
//! default), as `toolgate label` would; the label takes the task's
//! expectation into account. When the text holds no call and the server
//! returned native `tool_calls`, those are judged as one set by the `native`
//! profile, as the proxy does.
//!
//! The runner never runs a tool. Each call the verdict would hand to the
//! tool layer (`decision = execute`) becomes an `execute_tool {name}` child
//! span with `toolgate.tool.executed = false`: where a harness would run
//! it, and what it would get.
//!
//! Beyond [`crate::span`]'s attributes: `toolgate.task`, `toolgate.sample`,
//! `toolgate.attempts` (HTTP attempts, retries included).

use crate::span::{Finished, ToolCall, Verdict};
use crate::{Job, Traces};
use opentelemetry::KeyValue;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use toolgate_core::Decision;
use toolgate_proxy::{Sample, SampleHook};
use toolgate_validator::{Auto, Engine, Profile};

/// One sample waiting for the worker.
pub struct SampleJob {
    transcript: Value,
    started: SystemTime,
    elapsed: Duration,
    judge: Arc<Judge>,
}

/// The profile chooser and the engine that judge samples.
pub struct Judge {
    auto: Auto,
    engine: Engine,
}

impl Judge {
    /// Judges with `auto`'s choice per model and the built-in modes.
    pub fn new(auto: Auto) -> Judge {
        Judge {
            auto,
            engine: Engine::new(Profile::default()),
        }
    }
}

impl Traces {
    /// The runner's hook: each answered sample becomes a chat span.
    pub fn sample_hook(&self, judge: Judge) -> SampleHook {
        let me = self.clone();
        let judge = Arc::new(judge);
        SampleHook::new(move |s: &Sample<'_>| {
            let transcript = slim(s.transcript);
            let bytes = 512 + crate::json_size(&transcript);
            me.submit(
                Job::Sample(Box::new(SampleJob {
                    transcript,
                    started: s.started,
                    elapsed: s.elapsed,
                    judge: Arc::clone(&judge),
                })),
                bytes,
            );
        })
    }
}

/// What the span and the verdict need of a sample's transcript: not the
/// request's messages nor the whole response.
fn slim(t: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for k in [
        "model",
        "task",
        "sample",
        "tools",
        "expect",
        "output",
        "reasoning",
        "tool_calls",
        "finish_reason",
    ] {
        if let Some(v) = t.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    if let Some(r) = t.get("response") {
        out.insert("response".into(), crate::span::slim_response(r));
    }
    if let Some(Value::Object(req)) = t.get("request") {
        let keep: serde_json::Map<String, Value> = req
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "messages" | "tools" | "tool_choice"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.insert("request".into(), Value::Object(keep));
    }
    if let Some(run) = t.get("run") {
        let mut r = serde_json::Map::new();
        for k in ["base_url", "attempts"] {
            if let Some(v) = run.get(k) {
                r.insert(k.into(), v.clone());
            }
        }
        out.insert("run".into(), Value::Object(r));
    }
    Value::Object(out)
}

/// The verdict on one transcript and the calls it hands over.
pub fn judge(judge: &Judge, transcript: &Value) -> Option<(Verdict, Vec<ToolCall>)> {
    let obj = transcript.as_object()?.clone();
    let t =
        toolgate_core::load::from_object(obj, Path::new("<run>"), None, "sample".into()).ok()?;
    let chosen = judge.auto.choose(t.model.as_deref(), None);
    let replay = judge.engine.replay_as(&t, &chosen.profile);
    let mut result = replay.profile.clone();
    let has_native = t.tool_calls.as_ref().is_some_and(|c| !c.is_empty());
    let native = matches!(result.decision, Decision::NoCall) && has_native;
    if native && let Some(p) = Profile::builtin("native") {
        result = judge.engine.rejudge(&t, &replay, &p).profile;
    }
    let ids: Vec<Option<String>> = if native {
        t.tool_calls
            .iter()
            .flatten()
            .map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
            .collect()
    } else {
        Vec::new()
    };
    let calls = result
        .decision
        .calls()
        .iter()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: ids.get(i).cloned().flatten(),
            name: c.name.clone(),
            arguments: Value::Object((*c.arguments).clone()).to_string(),
        })
        .collect();
    let verdict = Verdict {
        decision: result.decision.kind().to_string(),
        label: result.label.as_str().to_string(),
        gate: result.decision.gate().map(|g| g.as_str().to_string()),
        profile: result.profile.clone(),
        profile_source: Some(chosen.source.kind().to_string()),
        parse_mode: result.parse_mode.clone(),
    };
    Some((verdict, calls))
}

/// The sample as a finished chat.
pub fn finished(s: &SampleJob) -> Finished {
    let t = &s.transcript;
    let mut f = Finished::new(s.started, s.started + s.elapsed);
    let text = |k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
    f.request_model = text("model");
    f.response = t.get("response").map(crate::span::slim_response);
    f.finish_reason = text("finish_reason");
    f.output = text("output").unwrap_or_default();
    f.reasoning = text("reasoning");
    f.tool_calls = t
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    f.tools = t.get("tools").filter(|v| v.is_array()).cloned();
    if let Some((verdict, calls)) = judge(&s.judge, t) {
        f.executed = if verdict.decision == "execute" {
            calls
        } else {
            Vec::new()
        };
        f.verdict = Some(verdict);
    }
    if let Some(r) = t.get("request") {
        f.extra.extend(crate::span::request_attributes(r));
    }
    if let Some(u) = t.pointer("/run/base_url").and_then(Value::as_str) {
        f.extra.extend(crate::span::server_attributes(u));
    }
    if let Some(task) = text("task") {
        f.extra.push(KeyValue::new("toolgate.task", task));
    }
    if let Some(n) = t.get("sample").and_then(Value::as_i64) {
        f.extra.push(KeyValue::new("toolgate.sample", n));
    }
    if let Some(n) = t.pointer("/run/attempts").and_then(Value::as_i64) {
        f.extra.push(KeyValue::new("toolgate.attempts", n));
    }
    f
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Value {
        json!([{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])
    }

    #[test]
    fn an_executable_call_becomes_an_execute_tool_child_and_a_wrong_one_a_reject() {
        let j = Judge::new(Auto::new(Vec::new()));
        let ok = json!({"model": "hermes-3", "tools": tools(), "expect": {"calls": [{"name": "get_weather"}]},
            "output": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>"});
        let (v, calls) = judge(&j, &ok).unwrap();
        assert_eq!((v.decision.as_str(), v.label.as_str()), ("execute", "pass"));
        assert_eq!(v.profile_source.as_deref(), Some("by name"));
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].arguments, r#"{"city":"Antwerp"}"#);
        let bad = json!({"model": "hermes-3", "tools": tools(), "expect": {"calls": [{"name": "get_weather"}]},
            "output": "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>"});
        let (v, _) = judge(&j, &bad).unwrap();
        assert_eq!(v.decision, "reject");
        assert_eq!(v.gate.as_deref(), Some("allowlist"));
    }

    #[test]
    fn native_calls_are_judged_as_one_set_with_their_ids() {
        let j = Judge::new(Auto::new(Vec::new()));
        let t = json!({"model": "m", "tools": tools(), "output": "", "finish_reason": "tool_calls",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Gent\"}"}}]});
        let (v, calls) = judge(&j, &t).unwrap();
        assert_eq!(v.decision, "execute");
        assert_eq!(v.profile, "native");
        assert_eq!(calls[0].id.as_deref(), Some("c1"));
    }

    #[test]
    fn a_transcript_that_does_not_load_has_no_verdict() {
        let j = Judge::new(Auto::new(Vec::new()));
        assert!(judge(&j, &json!("text")).is_none());
        assert!(judge(&j, &json!({"no_output": 1})).is_none());
    }
}
