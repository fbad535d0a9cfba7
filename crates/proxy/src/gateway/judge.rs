//! Judging one finished output: the profile's pipeline on the raw `content`,
//! the `native` mode on the upstream's own `tool_calls`, and what the client
//! gets in `enforce` (SPEC §4, issue 12 §2).

use super::check::{ChoiceRead, Has};
use super::members::{Members, own};
use super::record::{Judgment, NativeJudgment, PipelineJudgment};
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use toolgate_core::{Decision, RetryAdvice, ToolDef};
use toolgate_validator::{Engine, output};

pub use toolgate_validator::output::legacy_as_call;

/// What the proxy decided for one output: the validator's judgment of the
/// whole output ([`output::Judged`], read through `Deref`), with the ways
/// the proxy serves it (an edit of the answer, headers, the record).
#[derive(Clone, Debug)]
pub struct Judged(output::Judged);

impl std::ops::Deref for Judged {
    type Target = output::Judged;
    fn deref(&self) -> &output::Judged {
        &self.0
    }
}

impl Judged {
    /// Applies the request's own terms to the judgment: with
    /// `parallel_tool_calls: false`, more than one call rejects the output
    /// ([`output::Judged::one_call_at_most`]). `request` is read only when
    /// there is more than one call.
    pub(crate) fn under_terms_of(mut self, request: impl FnOnce() -> bool) -> Judged {
        if self.0.call_count() > 1 && request() {
            self.0.one_call_at_most();
        }
        self
    }
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

/// What `enforce` serves in one choice: the one rule
/// [`Judged::enforce_choice`] applies to a `Value` and
/// `splice::edited` to the answer's bytes.
pub(crate) struct Served<'a> {
    /// `message.content`, when the text's calls execute (`None`: left
    /// as it came).
    pub content: Option<Value>,
    /// `message.tool_calls` (empty: the key is removed).
    pub tool_calls: Vec<ServedCall<'a>>,
    /// `message.function_call` (`None`: the key is removed).
    pub function_call: Option<&'a Value>,
    /// `finish_reason` (always a string).
    pub finish_reason: Value,
}

/// One of the `tool_calls` `enforce` serves: a native call as the
/// upstream sent it, or a call executed from the text (its arguments as a
/// JSON string). Written ([`ServedCall::write`]) and compared as it
/// stands, not built into a `Value` on the request path:
/// [`ServedCall::to_value`] is the object it stands for, and the tests
/// hold the three together.
pub(crate) enum ServedCall<'a> {
    /// A native call, as sent.
    Native(&'a Value),
    /// A call from the text, under the id it is sent with.
    Text {
        /// `id`.
        id: &'a str,
        /// `function.name`.
        name: &'a str,
        /// `function.arguments`: the arguments object as JSON text.
        arguments: String,
    },
}

impl ServedCall<'_> {
    /// The call as a `Value`: `{"id", "type": "function", "function":
    /// {"name", "arguments"}}` for a text's call.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            ServedCall::Native(v) => (*v).clone(),
            ServedCall::Text {
                id,
                name,
                arguments,
            } => json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }),
        }
    }

    /// Whether `v` equals [`ServedCall::to_value`] (as `Value`s compare:
    /// objects as maps, whatever their key order).
    fn is(&self, v: &Value) -> bool {
        match self {
            ServedCall::Native(n) => *n == v,
            ServedCall::Text {
                id,
                name,
                arguments,
            } => {
                fn text<'v>(o: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
                    o.get(key).and_then(Value::as_str)
                }
                let Some(o) = v.as_object() else {
                    return false;
                };
                o.len() == 3
                    && text(o, "id") == Some(id)
                    && text(o, "type") == Some("function")
                    && o.get("function")
                        .and_then(Value::as_object)
                        .is_some_and(|f| {
                            f.len() == 2
                                && text(f, "name") == Some(name)
                                && text(f, "arguments") == Some(arguments.as_str())
                        })
            }
        }
    }

    /// Appends the call as serde_json writes [`ServedCall::to_value`]
    /// (the same bytes: a text call's keys are literals, its strings
    /// written by `jsonstr`).
    pub(crate) fn write(&self, out: &mut Vec<u8>) -> Option<()> {
        match self {
            ServedCall::Native(v) => serde_json::to_writer(&mut *out, v).ok(),
            ServedCall::Text {
                id,
                name,
                arguments,
            } => {
                let mut o = Members::open(out);
                o.str(own!("id"), id);
                o.raw(own!("type"), "\"function\"");
                let mut f = Members::open(o.key(own!("function")));
                f.str(own!("name"), name);
                f.str(own!("arguments"), arguments);
                f.close();
                o.close();
                Some(())
            }
        }
    }
}

/// Runs the pipeline on `content` and the `native` mode on the upstream's
/// `native_calls` and legacy `function_call`, as one set
/// ([`output::judge`]).
pub fn judge(
    engine: &Engine,
    tools: &[ToolDef],
    content: &str,
    reasoning: Option<&str>,
    native_calls: Option<&[Value]>,
    legacy: Option<&Value>,
    finish_reason: Option<&str>,
) -> Judged {
    Judged(output::judge(
        engine,
        tools,
        content,
        reasoning,
        native_calls,
        legacy,
        finish_reason,
    ))
}

/// [`judge`] on one choice as the borrowed read of the answer holds it;
/// its text is judged for calls only when `text_calls` (see
/// `Ctx::text_may_call`).
pub(crate) fn judge_choice(
    engine: &Engine,
    tools: &[ToolDef],
    c: &ChoiceRead<'_>,
    text_calls: bool,
) -> Judged {
    judge(
        engine,
        tools,
        if text_calls { &c.content } else { "" },
        c.reasoning.as_deref(),
        c.tool_calls
            .as_deref()
            .and_then(Value::as_array)
            .map(Vec::as_slice),
        c.function_call.as_deref(),
        c.finish_reason.as_deref(),
    )
}

impl Judged {
    /// Retry advice for a rejected output (SPEC §5): re-roll sampling
    /// artifacts (by the whole output's label, native calls included), send
    /// the re-emit message for several fallback candidates in the text.
    pub fn retry(&self) -> Retry {
        match &self.result.decision {
            Decision::Reject {
                reemit: Some(msg), ..
            } => Retry::Reemit(msg.clone()),
            // The whole output's label: a native call cut off or
            // malformed is a sampling artifact too (`--retries` says so).
            _ if self.rejects() && self.label().retry_advice() == RetryAdvice::Reroll => {
                Retry::Reroll
            }
            _ => Retry::None,
        }
    }

    /// [`Judged::tool_calls`] as they stand (see [`ServedCall`]).
    fn served_calls(&self) -> Vec<ServedCall<'_>> {
        if !self.sends_calls() {
            return Vec::new();
        }
        let native = self.native_calls().iter().map(ServedCall::Native);
        let text = self.text_calls().iter().map(|(id, call)| ServedCall::Text {
            id,
            name: &call.name,
            arguments: serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into()),
        });
        native.chain(text).collect()
    }

    /// What `enforce` serves in one choice whose `message.content` is
    /// `content`: the one rule [`Judged::enforce_choice`] applies and
    /// [`Judged::edit_of`] compares with.
    fn served(&self, content: &str) -> Served<'_> {
        let tool_calls = self.served_calls();
        let finish_reason = self.finish_reason_for(!tool_calls.is_empty());
        Served {
            content: self.serves_text_calls().then(|| {
                self.enforced_content(content, 0)
                    .map_or(Value::Null, Value::String)
            }),
            tool_calls,
            function_call: self.function_call(),
            finish_reason,
        }
    }

    /// Edits one `choices[i]` of a non-streamed response in place (`enforce`).
    /// Every other field is left untouched. Returns whether anything
    /// changed (each edited field compared with what it replaced), so that
    /// an answer with nothing to change is served as its bytes.
    pub fn enforce_choice(&self, choice: &mut Map<String, Value>) -> bool {
        let content = choice
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let served = self.served(content);
        /// Sets `key` to `v` unless it holds that already; whether it did.
        fn set(m: &mut Map<String, Value>, key: &str, v: Value) -> bool {
            let differs = m.get(key) != Some(&v);
            if differs {
                m.insert(key.into(), v);
            }
            differs
        }
        let mut changed = false;
        if let Some(Value::Object(message)) = choice.get_mut("message") {
            if let Some(text) = served.content {
                changed |= set(message, "content", text);
            }
            if served.tool_calls.is_empty() {
                changed |= message.shift_remove("tool_calls").is_some();
            } else {
                let calls = served.tool_calls.iter().map(ServedCall::to_value);
                changed |= set(message, "tool_calls", Value::Array(calls.collect()));
            }
            match served.function_call {
                Some(f) => changed |= set(message, "function_call", f.clone()),
                None => changed |= message.shift_remove("function_call").is_some(),
            }
        }
        changed |= set(choice, "finish_reason", served.finish_reason);
        changed
    }

    /// What `enforce` serves for the choice `read` was read from, when
    /// [`Judged::enforce_choice`] would change it: `None` only when it
    /// certainly would not, so that an answer is served as its bytes
    /// without an edit. Never `None` where an edit is due (that would serve
    /// a call the gates did not pass); a `Some` with nothing to change
    /// costs only the edit.
    pub(crate) fn edit_of(&self, read: &ChoiceRead<'_>) -> Option<Served<'_>> {
        let served = self.served(&read.content);
        self.differs(read, &served)
            .contains(&true)
            .then_some(served)
    }

    /// Which of `message.content`, `message.tool_calls`,
    /// `message.function_call` and `finish_reason` [`Judged::edit_of`]
    /// finds `enforce` changing, in that order.
    fn differs(&self, read: &ChoiceRead<'_>, served: &Served<'_>) -> [bool; 4] {
        let content = match &served.content {
            None => false,
            Some(Value::String(t)) => read.content_is != Has::Text || read.content != t.as_str(),
            Some(_) => read.content_is != Has::Null,
        };
        let tool_calls = if served.tool_calls.is_empty() {
            read.tool_calls.is_some()
        } else {
            match read.tool_calls.as_deref() {
                Some(Value::Array(sent)) => {
                    sent.len() != served.tool_calls.len()
                        || !served.tool_calls.iter().zip(sent).all(|(c, v)| c.is(v))
                }
                _ => true,
            }
        };
        let function_call = match served.function_call {
            Some(f) => read.function_call.as_deref() != Some(f),
            None => read.function_call.is_some(),
        };
        let finish_reason = match served.finish_reason.as_str() {
            Some(f) => read.finish_reason.as_deref() != Some(f),
            None => true,
        };
        [content, tool_calls, function_call, finish_reason]
    }

    /// Sets the `x-toolgate-*` response headers (values made header-safe;
    /// the decision, label and gate are toolgate's own ASCII names).
    pub fn insert_headers(&self, h: &mut HeaderMap, attempts: usize) {
        h.insert(names::DECISION, HeaderValue::from_static(self.decision()));
        h.insert(
            names::LABEL,
            HeaderValue::from_static(self.label().as_str()),
        );
        insert_safe(h, names::PROFILE, &self.result.profile);
        h.insert(names::ATTEMPTS, HeaderValue::from(attempts));
        if let Some(g) = self.gate() {
            h.insert(names::GATE, HeaderValue::from_static(g));
        }
        if let Some(r) = self.reason() {
            insert_safe(h, names::REASON, &r);
        }
        if let Some(n) = &self.native {
            let mut v = format!("calls={} failed={}", n.count, n.failed.len());
            if !n.failed.is_empty() {
                v.push_str(": ");
                v.push_str(&n.failed.join("; "));
            }
            insert_safe(h, names::NATIVE, &v);
        }
    }

    /// The decision, label and gate, as [`Judged::judgment`] records them.
    pub fn verdict(&self) -> super::Verdict {
        super::Verdict {
            decision: self.decision(),
            label: self.label().as_str(),
            gate: self.gate(),
        }
    }

    /// The proxy's decision and telemetry, as recorded (written from
    /// these values, never built into a `Value` on the request path: see
    /// [`Judged::to_json`] for the object it stands for).
    pub fn judgment(&self) -> Judgment {
        Judgment {
            profile: self.result.profile.clone(),
            decision: self.decision(),
            label: self.label().as_str(),
            gate: self.gate(),
            reason: self.reason(),
            pipeline: PipelineJudgment {
                decision: self.result.decision.kind(),
                label: self.result.label.as_str(),
                parse_mode: self.result.parse_mode.clone(),
                calls: self.result.decision.calls().to_vec(),
            },
            telemetry: self.result.telemetry.clone(),
            native: self.native.as_ref().map(|n| NativeJudgment {
                calls: n.count,
                failed: n.failed.clone(),
                label: n.label.as_str(),
            }),
            choices: None,
        }
    }

    /// The proxy's decision and telemetry as the object the record held
    /// before [`Judged::judgment`] was written directly: the reference its
    /// bytes are tested against.
    #[cfg(test)]
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
                "calls": self.result.decision.calls().iter().map(toolgate_core::Call::to_json).collect::<Vec<_>>(),
            },
            "telemetry": serde_json::to_value(&self.result.telemetry).unwrap_or(Value::Null),
        });
        if let Some(n) = &self.native {
            v["native"] = json!({
                "calls": n.count,
                "failed": n.failed,
                "label": n.label.as_str(),
            });
        }
        v
    }
}

/// The judgment that speaks for an answer of several choices (its
/// `x-toolgate-*` headers, shadow's decision comment): the first that
/// rejects, else the first that executes, else the first — so that a
/// choice holding a refused call is never hidden behind one that passed.
/// With one choice, that choice's.
pub(crate) fn speaks_for<'a>(judged: impl IntoIterator<Item = &'a Judged>) -> Option<&'a Judged> {
    let mut best: Option<&Judged> = None;
    let rank = |j: &Judged| match j.decision() {
        "reject" => 2,
        "execute" => 1,
        _ => 0,
    };
    for j in judged {
        if best.is_none_or(|b| rank(j) > rank(b)) {
            best = Some(j);
        }
    }
    best
}

/// One choice's entry in [`Judgment::choices`]: its index and decision.
pub(crate) fn choice_entry(index: u64, j: &Judged) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("index".into(), json!(index));
    m.insert("decision".into(), json!(j.decision()));
    m.insert("label".into(), json!(j.label().as_str()));
    m.insert("gate".into(), json!(j.gate()));
    m
}

/// Sets `name` to [`header_safe`] `text`.
pub fn insert_safe(h: &mut HeaderMap, name: HeaderName, text: &str) {
    if let Ok(v) = HeaderValue::from_str(&header_safe(text)) {
        h.insert(name, v);
    }
}

/// The `x-toolgate-*` response headers' names, made once rather than
/// parsed from a string on every insert.
pub mod names {
    use axum::http::HeaderName;
    pub const DECISION: HeaderName = HeaderName::from_static("x-toolgate-decision");
    pub const LABEL: HeaderName = HeaderName::from_static("x-toolgate-label");
    pub const PROFILE: HeaderName = HeaderName::from_static("x-toolgate-profile");
    pub const PROFILE_SOURCE: HeaderName = HeaderName::from_static("x-toolgate-profile-source");
    pub const ATTEMPTS: HeaderName = HeaderName::from_static("x-toolgate-attempts");
    pub const GATE: HeaderName = HeaderName::from_static("x-toolgate-gate");
    pub const REASON: HeaderName = HeaderName::from_static("x-toolgate-reason");
    pub const NATIVE: HeaderName = HeaderName::from_static("x-toolgate-native");
    pub const USAGE_TOTAL: HeaderName = HeaderName::from_static("x-toolgate-usage-total");
}

/// `text` as a header value: printable ASCII only (anything else becomes
/// `?`), at most 300 bytes, `-` when blank. Text that is all that already
/// (a profile's name, most reasons) is borrowed, not copied.
pub fn header_safe(text: &str) -> Cow<'_, str> {
    let printable = |c: char| (' '..='~').contains(&c);
    if text.len() <= 300 && text.chars().all(printable) && !text.trim().is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out: String = text
        .chars()
        .map(|c| if printable(c) { c } else { '?' })
        .take(300)
        .collect();
    if out.trim().is_empty() {
        out = "-".into();
    }
    Cow::Owned(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(super) mod tests {
    use super::*;
    use toolgate_core::Label;
    use toolgate_validator::Profile;

    pub(crate) fn tools() -> Vec<ToolDef> {
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
    fn one_failing_native_call_rejects_the_whole_set() {
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
            None,
            Some("tool_calls"),
        );
        let n = j.native.as_ref().unwrap();
        assert_eq!(n.count, 3);
        assert_eq!(n.failed.len(), 2);
        assert!(n.failed[0].starts_with("rm_rf: "), "{:?}", n.failed);
        assert_eq!(j.decision(), "reject");
        assert!(j.tool_calls().is_empty(), "no part of a rejected set");
        assert_eq!(j.enforced_finish_reason(), json!("stop"));
        let mut h = HeaderMap::new();
        j.insert_headers(&mut h, 1);
        let native = h["x-toolgate-native"].to_str().unwrap();
        assert!(native.starts_with("calls=3 failed=2"), "{native}");
        assert_eq!(h["x-toolgate-decision"], "reject");
        assert_eq!(
            h["x-toolgate-gate"], "allowlist",
            "the first gate a call failed"
        );
        assert_eq!(h["x-toolgate-attempts"], "1");
        let mut choice = json!({"message": {"content": null, "tool_calls": calls}, "finish_reason": "tool_calls"});
        j.enforce_choice(choice.as_object_mut().unwrap());
        assert!(choice["message"].get("tool_calls").is_none());
        assert_eq!(choice["finish_reason"], "stop");

        let ok = [calls[0].clone()];
        let j = judge(&engine, &tools(), "", None, Some(&ok), None, None);
        assert_eq!(j.decision(), "execute");
        assert_eq!(j.tool_calls(), ok);
    }

    #[test]
    fn more_native_calls_than_the_candidate_cap_reject_the_set() {
        let engine = Engine::new(Profile::builtin("hermes").unwrap());
        let cap = toolgate_formats::DEFAULT_MAX_CANDIDATES;
        let at_cap = vec![native("get_weather", r#"{"city": "Antwerp"}"#); cap];
        let j = judge(&engine, &tools(), "", None, Some(&at_cap), None, None);
        assert_eq!(j.decision(), "execute");
        assert_eq!(j.tool_calls().len(), cap);

        let over = vec![native("get_weather", r#"{"city": "Antwerp"}"#); cap + 1];
        let j = judge(&engine, &tools(), "", None, Some(&over), None, None);
        assert_eq!(j.decision(), "reject");
        assert_eq!(j.label(), Label::MalformedJson);
        let n = j.native.as_ref().unwrap();
        assert_eq!(n.count, cap + 1);
        assert_eq!(n.failed.len(), 1, "{:?}", n.failed);
        assert!(n.failed[0].contains("cap"), "{:?}", n.failed);
        assert!(j.tool_calls().is_empty());
    }

    #[test]
    fn a_failing_text_call_rejects_passing_native_calls_and_the_reverse() {
        let engine = Engine::new(Profile::builtin("hermes").unwrap());
        let ok = [native("get_weather", r#"{"city": "Ghent"}"#)];
        let wrong = "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>";
        let j = judge(&engine, &tools(), wrong, None, Some(&ok), None, None);
        assert_eq!(j.decision(), "reject");
        assert!(j.tool_calls().is_empty());
        let good =
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"A\"}}</tool_call>";
        let bad = [native("rm_rf", "{}")];
        let j = judge(&engine, &tools(), good, None, Some(&bad), None, None);
        assert_eq!(j.decision(), "reject");
        assert_eq!(j.label(), Label::WrongTool);
        assert_eq!(j.gate(), Some("allowlist"));
        assert!(j.tool_calls().is_empty());
        assert_eq!(j.enforced_content(good, 0).as_deref(), Some(good));
    }

    #[test]
    fn the_legacy_function_call_is_judged_with_the_native_set() {
        let engine = Engine::new(Profile::builtin("hermes").unwrap());
        let bad = json!({"name": "rm_rf", "arguments": "{}"});
        let j = judge(
            &engine,
            &tools(),
            "",
            None,
            None,
            Some(&bad),
            Some("function_call"),
        );
        assert_eq!(j.decision(), "reject");
        let mut choice = json!({"message": {"content": null, "function_call": bad}, "finish_reason": "function_call"});
        j.enforce_choice(choice.as_object_mut().unwrap());
        assert!(choice["message"].get("function_call").is_none());
        assert_eq!(choice["finish_reason"], "stop");
        let good = json!({"name": "get_weather", "arguments": "{\"city\": \"A\"}"});
        let j = judge(
            &engine,
            &tools(),
            "",
            None,
            None,
            Some(&good),
            Some("function_call"),
        );
        assert_eq!(j.decision(), "execute");
        assert_eq!(j.function_call(), Some(&good));
        assert_eq!(j.enforced_finish_reason(), json!("function_call"));
    }

    #[test]
    fn an_executed_text_call_becomes_tool_calls_and_leaves_the_prose() {
        let engine = Engine::new(Profile::builtin("hermes").unwrap());
        let text = "Checking.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>";
        let j = judge(&engine, &tools(), text, None, None, None, Some("stop"));
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
            judge(&engine, &tools(), cut, None, None, None, Some("length")).retry(),
            Retry::Reroll
        );
        let wrong = "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>";
        assert_eq!(
            judge(&engine, &tools(), wrong, None, None, None, None).retry(),
            Retry::None
        );
        let engine = Engine::new(Profile::default());
        let two = "need_tool: yes\n[get_weather(city=\"A\"), get_weather(city=\"B\")]";
        assert!(matches!(
            judge(&engine, &tools(), two, None, None, None, None).retry(),
            Retry::Reemit(_)
        ));
    }

    /// The judgment written straight into the record is, byte for byte
    /// and as the hook's `Value`, the object `to_json` built: executed,
    /// no-call, rejected (schema, wrong tool, truncation, a fallback with a
    /// re-emit, repairs), native sets passing and failing, the legacy call.
    #[test]
    fn the_judgment_is_the_bytes_of_the_object_it_replaced() {
        let hermes = Engine::new(Profile::builtin("hermes").unwrap());
        let default = Engine::new(Profile::default());
        let good = "Checking.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwérp \\\"😀\\\"\", \"n\": [1.5, -0.0, 1e300, 12345678901234567890]}}</tool_call>";
        /// Engine, text, native calls, legacy call, finish reason.
        type Case<'a> = (
            &'a Engine,
            &'a str,
            Vec<Value>,
            Option<Value>,
            Option<&'a str>,
        );
        let cases: Vec<Case> = vec![
            (&hermes, good, vec![], None, Some("stop")),
            (&hermes, "just prose", vec![], None, None),
            (
                &hermes,
                "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>",
                vec![],
                None,
                None,
            ),
            (
                &hermes,
                "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": 3}}</tool_call>",
                vec![],
                None,
                None,
            ),
            (
                &hermes,
                "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ant",
                vec![],
                None,
                Some("length"),
            ),
            (
                &hermes,
                "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'A'}}</tool_call>",
                vec![],
                None,
                None,
            ),
            (
                &default,
                "need_tool: yes\n[get_weather(city=\"A\"), get_weather(city=\"B\")]",
                vec![],
                None,
                None,
            ),
            (
                &hermes,
                "",
                vec![native("get_weather", r#"{"city": "Antwerp"}"#)],
                None,
                Some("tool_calls"),
            ),
            (
                &hermes,
                good,
                vec![
                    native("rm_rf", "{}"),
                    native("get_weather", r#"{"city": 3}"#),
                ],
                None,
                None,
            ),
            (
                &hermes,
                "",
                vec![],
                Some(json!({"name": "rm_rf", "arguments": "{}"})),
                Some("function_call"),
            ),
        ];
        for (engine, text, natives, legacy, finish) in cases {
            let natives = (!natives.is_empty()).then_some(natives.as_slice());
            let j = judge(
                engine,
                &tools(),
                text,
                None,
                natives,
                legacy.as_ref(),
                finish,
            );
            let judgment = j.judgment();
            assert_eq!(
                serde_json::to_string(&judgment).unwrap(),
                serde_json::to_string(&j.to_json()).unwrap(),
                "{text}"
            );
            assert_eq!(serde_json::to_value(&judgment).unwrap(), j.to_json());
        }
    }

    /// Ids are `call_` and 24 hex digits, and do not repeat.
    #[test]
    fn header_values_are_printable_ascii() {
        assert_eq!(header_safe("a\r\nb\u{1b}é"), "a??b??");
        assert_eq!(header_safe(""), "-");
        // Borrowed when already safe, made safe otherwise; the header set
        // is that text.
        let long = "x".repeat(301);
        for (text, safe, borrowed) in [
            ("hermes", "hermes", true),
            ("~ok ~", "~ok ~", true),
            ("a\r\nb\u{1b}é", "a??b??", false),
            ("", "-", false),
            ("  ", "-", false),
            (long.as_str(), &long[..300], false),
        ] {
            let got = header_safe(text);
            assert_eq!(got, safe, "{text:?}");
            assert_eq!(matches!(got, Cow::Borrowed(_)), borrowed, "{text:?}");
            let mut h = HeaderMap::new();
            insert_safe(&mut h, names::REASON, text);
            assert_eq!(h[names::REASON], safe, "{text:?}");
        }
    }

    /// An answer with what `enforce` looks at, in every state it can be in
    /// (text calls that pass and fail, native calls that pass and fail,
    /// each field absent, null, a string or something else).
    pub(crate) fn enforce_answer() -> impl Strategy<Value = String> {
        let pick = |v: &[&'static str]| prop::sample::select(v.to_vec()).prop_map(str::to_string);
        let content = pick(&[
            "",
            "null",
            "\"\"",
            "\"  \"",
            "\"It is mild.\"",
            r#""<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>""#,
            r#""Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Gent\"}}</tool_call> Done.""#,
            r#""<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>""#,
            r#""<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": 3}}</tool_call>""#,
            r#""<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\""#,
            "3",
        ]);
        let tool_calls = pick(&[
            "",
            "null",
            "[]",
            r#"[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Lier\"}"}}]"#,
            r#"[{"id":"call_b","type":"function","function":{"name":"rm_rf","arguments":"{}"}}]"#,
        ]);
        let function_call = pick(&[
            "",
            "null",
            r#"{"name":"get_weather","arguments":"{\"city\": \"Mol\"}"}"#,
            r#"{"name":"get_weather","arguments":"{\"town\": 1}"}"#,
        ]);
        let finish = pick(&[
            "",
            "null",
            "\"stop\"",
            "\"tool_calls\"",
            "\"function_call\"",
            "\"length\"",
            "\"content_filter\"",
            "7",
        ]);
        let choice = (content, tool_calls, function_call, finish, 0..8u8).prop_map(
            |(content, tool_calls, function_call, finish, shape)| {
                let field = |k: &str, v: &str| (!v.is_empty()).then(|| format!("\"{k}\":{v}"));
                let mut message: Vec<String> = [
                    Some("\"role\":\"assistant\"".to_string()),
                    field("content", &content),
                    field("tool_calls", &tool_calls),
                    field("function_call", &function_call),
                ]
                .into_iter()
                .flatten()
                .collect();
                // Fields in any place.
                let n = message.len();
                message.rotate_left(usize::from(shape) % n);
                let message = match shape {
                    // A message that is not an object, or none.
                    0 => Some("\"text\"".to_string()),
                    1 => None,
                    _ => Some(format!("{{{}}}", message.join(","))),
                };
                let mut fields: Vec<String> = [
                    Some("\"index\":0".to_string()),
                    message.map(|m| format!("\"message\":{m}")),
                    field("finish_reason", &finish),
                    (shape % 3 == 0).then(|| "\"logprobs\":{\"content\":[1.50,-0e0]}".to_string()),
                ]
                .into_iter()
                .flatten()
                .collect();
                let n = fields.len();
                fields.rotate_left(usize::from(shape / 2) % n);
                format!("{{{}}}", fields.join(","))
            },
        );
        (prop::collection::vec(choice, 1..3), 0..3u8).prop_map(|(choices, spacing)| {
            let t = format!(
                r#"{{"id":"x","choices":[{}],"usage":{{"total_tokens":3}},"note":"\u00e9"}}"#,
                choices.join(",")
            );
            match spacing {
                0 => t,
                1 => t.replace("\":", "\": "),
                // Whitespace around every token outside strings.
                _ => {
                    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
                    for c in t.chars() {
                        if in_string {
                            out.push(c);
                            in_string = escaped || c != '"';
                            escaped = !escaped && c == '\\';
                            continue;
                        }
                        match c {
                            '"' => {
                                in_string = true;
                                out.push(c);
                            }
                            '}' | ']' => {
                                out.push_str(" \n");
                                out.push(c);
                            }
                            ',' | ':' | '{' | '[' => {
                                out.push_str(" \t");
                                out.push(c);
                                out.push_str("\r\n ");
                            }
                            _ => out.push(c),
                        }
                    }
                    out
                }
            }
        })
    }

    use proptest::prelude::*;

    /// The object of a text's call, changed in one of the ways that make
    /// it another object (or, `0`, the same object with its keys in
    /// another order).
    fn changed(v: &Value, how: u8, text: &str) -> Value {
        let mut v = v.clone();
        let o = v.as_object_mut().unwrap();
        let f = |o: &mut Map<String, Value>| o["function"].as_object_mut().unwrap().clone();
        match how % 10 {
            0 => {
                let mut r = Map::new();
                let fun: Map<String, Value> = f(o).into_iter().rev().collect();
                r.insert("function".into(), Value::Object(fun));
                r.insert("type".into(), o["type"].clone());
                r.insert("id".into(), o["id"].clone());
                return Value::Object(r);
            }
            1 => o["id"] = json!(text),
            2 => o["type"] = json!(text),
            3 => o["function"]["name"] = json!(text),
            4 => o["function"]["arguments"] = json!(text),
            5 => o["function"]["arguments"] = json!({"a": text}),
            6 => {
                o.insert(text.into(), json!(1));
            }
            7 => {
                o["function"]
                    .as_object_mut()
                    .unwrap()
                    .insert(text.into(), json!(null));
            }
            8 => {
                o.shift_remove("type");
            }
            _ => o["function"] = json!([text]),
        }
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1500))]
        /// A text's served call is written as the `Value` it stands for,
        /// byte for byte, and compares with any object as that `Value`
        /// does (key order aside, which `Value`s ignore too).
        #[test]
        fn a_served_call_is_the_value_it_stands_for(
            id in "[a-z_0-9\"\\\u{1}é]{0,12}",
            name in "[a-z_\"\\\u{1f}é]{0,12}",
            arguments in "[{}\":a-z0-9\\\n]{0,24}",
            how in any::<u8>(),
            text in "[a-z\"]{0,6}",
        ) {
            let call = ServedCall::Text { id: &id, name: &name, arguments: arguments.clone() };
            let v = call.to_value();
            let written = |c: &ServedCall<'_>| {
                let mut out = Vec::new();
                c.write(&mut out).unwrap();
                String::from_utf8(out).unwrap()
            };
            prop_assert_eq!(written(&call), serde_json::to_string(&v).unwrap());
            prop_assert!(call.is(&v));
            let other = changed(&v, how, &text);
            prop_assert_eq!(call.is(&other), other == v, "{} against {}", v, other);
            let native = ServedCall::Native(&other);
            prop_assert_eq!(written(&native), serde_json::to_string(&other).unwrap());
            prop_assert_eq!(native.is(&v), other == v);
        }

        /// `edits` is the rule `enforce_choice` applies: where it says
        /// nothing changes, nothing does (else an answer would be served
        /// unedited, its calls ungated); with a message object it is
        /// exact. Held for the borrowed read and for the `Value` path.
        #[test]
        fn edits_says_what_enforce_choice_does(t in enforce_answer()) {
            let engine = Engine::new(Profile::builtin("hermes").unwrap());
            let tools = tools();
            let ct = Some("application/json");
            let Ok(v) = super::super::check::parse_completion(ct, t.as_bytes()) else {
                return Ok(());
            };
            let mut parsed = None;
            let borrowed = super::super::check::read_completion(ct, t.as_bytes(), &mut parsed, true, super::super::check::DEFAULT_MAX_RESPONSE_NODES).unwrap();
            let of_value = super::super::check::Read::of(&v);
            for read in [&borrowed, &of_value] {
                let choices = v["choices"].as_array().unwrap();
                prop_assert_eq!(read.choices.len(), choices.len());
                for (c, value) in read.choices.iter().zip(choices) {
                    let j = judge_choice(&engine, &tools, c, true);
                    let before = value.as_object().unwrap();
                    let mut edited = before.clone();
                    let changed = j.enforce_choice(&mut edited);
                    let predicted = j.differs(c, &j.served(&c.content));
                    prop_assert_eq!(j.edit_of(c).is_some(), predicted.contains(&true));
                    prop_assert!(j.edit_of(c).is_some() || !changed, "an edit went unpredicted: {}", t);
                    if value["message"].is_object() {
                        let field = |m: &Map<String, Value>, k: &str| {
                            m.get("message").and_then(|m| m.get(k)).cloned()
                        };
                        let did = [
                            field(before, "content") != field(&edited, "content"),
                            field(before, "tool_calls") != field(&edited, "tool_calls"),
                            field(before, "function_call") != field(&edited, "function_call"),
                            before.get("finish_reason") != edited.get("finish_reason"),
                        ];
                        prop_assert_eq!(predicted, did, "{}", t);
                        prop_assert_eq!(changed, did.contains(&true));
                    }
                }
            }
        }
    }
}
