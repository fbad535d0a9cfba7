//! Judging one finished output: the profile's pipeline on the raw `content`,
//! the `native` mode on the upstream's own `tool_calls`, and what the client
//! gets in `enforce` (SPEC §4, issue 12 §2).

use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use toolgate_core::{Call, Decision, Label, RetryAdvice, ToolDef};
use toolgate_formats::{Input, Strictness};
use toolgate_validator::pipeline::{Role, gate};
use toolgate_validator::stream::outside_candidates;
use toolgate_validator::{Engine, PipelineResult, Profile, label};

/// The native calls of one response, judged one by one.
#[derive(Clone, Debug)]
pub struct NativeJudged {
    /// The calls that pass every gate, exactly as the upstream sent them.
    pub kept: Vec<Value>,
    /// Why each removed call was removed (`name: reason`).
    pub removed: Vec<String>,
    /// The `native` mode's label for all of them.
    pub label: Label,
}

/// What the proxy decided for one output.
#[derive(Clone, Debug)]
pub struct Judged {
    /// The profile's pipeline on the raw text.
    pub result: PipelineResult,
    /// The upstream's native `tool_calls`, when it returned any.
    pub native: Option<NativeJudged>,
    /// The upstream's `finish_reason`.
    pub finish_reason: Option<String>,
    /// The calls executed from the text, with the ids they are sent under.
    calls: Vec<(String, Call)>,
}

/// What to do before the first byte is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Retry {
    /// Serve this answer.
    None,
    /// A sampling artifact (`malformed_json`, `truncation`,
    /// `escaping_error`): ask the same model again.
    Reroll,
    /// Several fallback candidates: send this re-emit message.
    Reemit(String),
}

static CALL_IDS: AtomicU64 = AtomicU64::new(0);

/// A fresh `call_…` id: 24 hex digits from the time and a counter (ids
/// only need to be unique within a conversation).
pub fn call_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let n = CALL_IDS.fetch_add(1, Ordering::Relaxed);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(n);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    h.write_u64(nanos);
    format!("call_{:016x}{:08x}", h.finish(), n as u32)
}

/// Runs the pipeline on `content` and the `native` mode on `native_calls`.
pub fn judge(
    engine: &Engine,
    tools: &[ToolDef],
    content: &str,
    reasoning: Option<&str>,
    native_calls: Option<&[Value]>,
    finish_reason: Option<&str>,
) -> Judged {
    let length = finish_reason == Some("length");
    let result = engine.parse_finished(content, tools, reasoning, length);
    let native = native_calls
        .filter(|c| !c.is_empty())
        .map(|calls| judge_native(engine, tools, content, calls, length));
    let calls = result
        .decision
        .calls()
        .iter()
        .map(|c| (call_id(), c.clone()))
        .collect();
    Judged {
        result,
        native,
        finish_reason: finish_reason.map(str::to_string),
        calls,
    }
}

/// Each native call through the gates of the `native` profile on its own: a
/// call that is not allowlisted, does not parse or fails its schema is
/// removed; the others are kept as sent.
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
    let extractor = engine
        .extractors
        .iter()
        .find(|e| e.name() == "native")
        .map(|e| e.extract(&input, Strictness::Strict))
        .or_else(|| {
            toolgate_formats::by_name("native").map(|e| e.extract(&input, Strictness::Strict))
        })
        .unwrap_or_default();
    let profile = Profile::builtin("native").unwrap_or_default();
    let mut kept = Vec::new();
    let mut removed = Vec::new();
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
        match gated.decision {
            Decision::Execute { .. } => {
                if let Some(call) = calls.get(c.span.start) {
                    kept.push(call.clone());
                }
            }
            Decision::Reject { reason, .. } => removed.push(format!(
                "{}: {reason}",
                c.name.as_deref().unwrap_or("(no name)")
            )),
            Decision::NoCall => {}
        }
    }
    let label = label(&extractor, None, toolset, length).label;
    NativeJudged {
        kept,
        removed,
        label,
    }
}

impl Judged {
    /// Whether the text's calls execute.
    pub fn executes(&self) -> bool {
        matches!(self.result.decision, Decision::Execute { .. })
    }

    /// The decision as the client is told: the text pipeline's, unless it
    /// found nothing and the upstream returned native calls (then `execute`
    /// when every native call passed, `reject` when one was removed).
    pub fn decision(&self) -> &'static str {
        match (&self.result.decision, &self.native) {
            (Decision::NoCall, Some(n)) if n.removed.is_empty() => "execute",
            (Decision::NoCall, Some(_)) => "reject",
            (d, _) => d.kind(),
        }
    }

    /// The label that goes with [`Judged::decision`].
    pub fn label(&self) -> Label {
        match (&self.result.decision, &self.native) {
            (Decision::NoCall, Some(n)) => n.label,
            _ => self.result.label,
        }
    }

    /// The first failing gate of the text pipeline.
    pub fn gate(&self) -> Option<&'static str> {
        self.result.decision.gate().map(|g| g.as_str())
    }

    /// Why it was rejected.
    pub fn reason(&self) -> Option<String> {
        match &self.result.decision {
            Decision::Reject { reason, .. } => Some(reason.clone()),
            _ => match &self.native {
                Some(n) if !n.removed.is_empty() => Some(n.removed.join("; ")),
                _ => None,
            },
        }
    }

    /// Retry advice for a rejected text output (SPEC §5): re-roll sampling
    /// artifacts, send the re-emit message for several fallback candidates.
    pub fn retry(&self) -> Retry {
        match &self.result.decision {
            Decision::Reject {
                reemit: Some(msg), ..
            } => Retry::Reemit(msg.clone()),
            Decision::Reject { .. } if self.result.label.retry_advice() == RetryAdvice::Reroll => {
                Retry::Reroll
            }
            _ => Retry::None,
        }
    }

    /// The `tool_calls` the client gets in `enforce`: the kept native calls,
    /// then the text's executed calls (arguments as a JSON string).
    pub fn tool_calls(&self) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .native
            .as_ref()
            .map(|n| n.kept.clone())
            .unwrap_or_default();
        for (id, call) in &self.calls {
            let args = serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into());
            out.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": call.name, "arguments": args},
            }));
        }
        out
    }

    /// The `finish_reason` the client gets in `enforce`.
    pub fn enforced_finish_reason(&self) -> Value {
        if !self.tool_calls().is_empty() {
            return json!("tool_calls");
        }
        match self.finish_reason.as_deref() {
            Some("tool_calls") | None => json!("stop"),
            Some(other) => json!(other),
        }
    }

    /// The content the client gets in `enforce`: on `execute`, the text
    /// outside the calls (from byte `from`: what streaming has not shown
    /// yet), `None` when only whitespace is left; otherwise the text as is.
    pub fn enforced_content(&self, content: &str, from: usize) -> Option<String> {
        if self.executes() {
            let rest = outside_candidates(content, &self.result.candidates, from);
            (!rest.trim().is_empty()).then_some(rest)
        } else {
            let rest = content.get(from..).unwrap_or("");
            (!rest.is_empty()).then(|| rest.to_string())
        }
    }

    /// Edits one `choices[i]` of a non-streamed response in place (`enforce`).
    /// Every other field is left untouched.
    pub fn enforce_choice(&self, choice: &mut Map<String, Value>) {
        let content = choice
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let calls = self.tool_calls();
        let finish = self.enforced_finish_reason();
        if let Some(Value::Object(message)) = choice.get_mut("message") {
            if self.executes() {
                let text = self.enforced_content(&content, 0);
                message.insert("content".into(), text.map_or(Value::Null, Value::String));
            }
            if calls.is_empty() {
                message.remove("tool_calls");
            } else {
                message.insert("tool_calls".into(), Value::Array(calls));
            }
        }
        choice.insert("finish_reason".into(), finish);
    }

    /// The `x-toolgate-*` response headers (values are made header-safe).
    pub fn headers(&self, attempts: usize) -> Vec<(&'static str, String)> {
        let mut h = vec![
            ("x-toolgate-decision", self.decision().to_string()),
            ("x-toolgate-label", self.label().as_str().to_string()),
            ("x-toolgate-profile", header_safe(&self.result.profile)),
            ("x-toolgate-attempts", attempts.to_string()),
        ];
        if let Some(g) = self.gate() {
            h.push(("x-toolgate-gate", g.to_string()));
        }
        if let Some(r) = self.reason() {
            h.push(("x-toolgate-reason", header_safe(&r)));
        }
        if let Some(n) = &self.native {
            let mut v = format!("kept={} removed={}", n.kept.len(), n.removed.len());
            if !n.removed.is_empty() {
                v.push_str(": ");
                v.push_str(&n.removed.join("; "));
            }
            h.push(("x-toolgate-native", header_safe(&v)));
        }
        h
    }

    /// The proxy's decision and telemetry, as recorded.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "profile": self.result.profile,
            "decision": self.decision(),
            "label": self.label().as_str(),
            "gate": self.gate(),
            "reason": self.reason(),
            "pipeline": {
                "decision": self.result.decision.kind(),
                "label": self.result.label.as_str(),
                "parse_mode": self.result.parse_mode,
                "calls": self.result.decision.calls().iter().map(Call::to_json).collect::<Vec<_>>(),
            },
            "telemetry": serde_json::to_value(&self.result.telemetry).unwrap_or(Value::Null),
        });
        if let Some(n) = &self.native {
            v["native"] = json!({
                "kept": n.kept.len(),
                "removed": n.removed,
                "label": n.label.as_str(),
            });
        }
        v
    }
}

/// `text` as a header value: printable ASCII only (anything else becomes
/// `?`), at most 300 bytes.
pub fn header_safe(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
        .take(300)
        .collect();
    if out.trim().is_empty() {
        out = "-".into();
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tools() -> Vec<ToolDef> {
        vec![ToolDef {
            name: "get_weather".into(),
            description: None,
            parameters: Some(json!({
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"]
            })),
        }]
    }

    fn native(name: &str, args: &str) -> Value {
        json!({"id": "call_x", "type": "function", "function": {"name": name, "arguments": args}})
    }

    #[test]
    fn native_calls_outside_the_allowlist_or_schema_are_removed() {
        let engine = Engine::new(Profile::builtin("hermes").unwrap());
        let calls = [
            native("get_weather", r#"{"city": "Antwerp"}"#),
            native("rm_rf", "{}"),
            native("get_weather", r#"{"city": 3}"#),
        ];
        let j = judge(
            &engine,
            &tools(),
            "",
            None,
            Some(&calls),
            Some("tool_calls"),
        );
        let n = j.native.as_ref().unwrap();
        assert_eq!(n.kept, [calls[0].clone()]);
        assert_eq!(n.removed.len(), 2);
        assert!(n.removed[0].starts_with("rm_rf: "), "{:?}", n.removed);
        assert_eq!(j.decision(), "reject");
        assert_eq!(j.tool_calls(), [calls[0].clone()]);
        let h = j.headers(1);
        assert!(
            h.iter()
                .any(|(k, v)| *k == "x-toolgate-native" && v.starts_with("kept=1 removed=2"))
        );
    }

    #[test]
    fn an_executed_text_call_becomes_tool_calls_and_leaves_the_prose() {
        let engine = Engine::new(Profile::builtin("hermes").unwrap());
        let text = "Checking.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>";
        let j = judge(&engine, &tools(), text, None, None, Some("stop"));
        let mut choice = json!({"index": 0, "message": {"role": "assistant", "content": text, "x": 1}, "finish_reason": "stop"});
        j.enforce_choice(choice.as_object_mut().unwrap());
        assert_eq!(choice["message"]["content"], "Checking.\n");
        assert_eq!(choice["message"]["x"], 1);
        assert_eq!(choice["finish_reason"], "tool_calls");
        let call = &choice["message"]["tool_calls"][0];
        assert!(call["id"].as_str().unwrap().starts_with("call_"));
        assert_eq!(call["function"]["arguments"], r#"{"city":"Antwerp"}"#);
    }

    #[test]
    fn retry_advice_follows_the_label() {
        let engine = Engine::new(Profile::builtin("hermes").unwrap());
        let cut = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ant";
        assert_eq!(
            judge(&engine, &tools(), cut, None, None, Some("length")).retry(),
            Retry::Reroll
        );
        let wrong = "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>";
        assert_eq!(
            judge(&engine, &tools(), wrong, None, None, None).retry(),
            Retry::None
        );
        let engine = Engine::new(Profile::default());
        let two = "need_tool: yes\n[get_weather(city=\"A\"), get_weather(city=\"B\")]";
        assert!(matches!(
            judge(&engine, &tools(), two, None, None, None).retry(),
            Retry::Reemit(_)
        ));
    }

    #[test]
    fn header_values_are_printable_ascii() {
        assert_eq!(header_safe("a\r\nb\u{1b}é"), "a??b??");
        assert_eq!(header_safe(""), "-");
    }
}
