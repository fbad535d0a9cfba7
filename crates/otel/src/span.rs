//! One finished exchange as a GenAI `chat {model}` span.
//!
//! # Span shape
//!
//! `chat {gen_ai.request.model}` (kind `CLIENT`), from the exchange's start
//! to its end, with the GenAI semantic-convention attributes:
//!
//! | attribute | value |
//! |---|---|
//! | `gen_ai.operation.name` | `chat` |
//! | `gen_ai.provider.name` | `openai` (the OpenAI-compatible API) |
//! | `gen_ai.request.model` | the request's `model` |
//! | `gen_ai.response.model`, `gen_ai.response.id` | the response's `model` and `id` (non-streamed answers) |
//! | `gen_ai.response.finish_reasons` | `[finish_reason]` |
//! | `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` | the response's `usage` |
//! | `gen_ai.response.time_to_first_chunk` | seconds to the first byte the client got (streamed) |
//! | `gen_ai.output.messages` | content capture only: `[{"role": "assistant", "parts": [text, reasoning, tool_call…], "finish_reason"}]` as JSON text; the text part is the raw output, a `tool_call` part's `arguments` the upstream's string as sent |
//! | `gen_ai.tool.definitions` | content capture only: the request's tools |
//! | `error.type` | on a reject (`toolgate.reject.{gate}`), an upstream failure (`timeout`, the HTTP status, `upstream_error`) or a client that went away (`client_disconnected`) |
//!
//! and toolgate's verdict: `toolgate.decision`, `toolgate.label`,
//! `toolgate.gate`, `toolgate.profile`, `toolgate.profile.source`,
//! `toolgate.parse_mode`, plus what the caller adds (`toolgate.mode`,
//! `toolgate.task`, …). `toolgate.output.raw = true` says the text part is
//! the raw generated text (what `toolgate import` needs to replay every
//! mode, not only `native`).
//!
//! Children `execute_tool {name}` (kind `INTERNAL`): one per call the
//! verdict hands to the tool layer, with `gen_ai.tool.name`,
//! `gen_ai.tool.type`, `gen_ai.tool.call.id` and, with content capture,
//! `gen_ai.tool.call.arguments`.

use opentelemetry::trace::{
    Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value as OtelValue};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use serde_json::{Value, json};
use std::time::SystemTime;

/// What toolgate decided for the output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    /// `execute`, `no_call` or `reject`.
    pub decision: String,
    /// The label.
    pub label: String,
    /// The first failing gate.
    pub gate: Option<String>,
    /// The profile's name.
    pub profile: String,
    /// Why that profile (`given`, `configured`, `by name`, `default`, …).
    pub profile_source: Option<String>,
    /// The mode whose candidates were selected.
    pub parse_mode: Option<String>,
}

/// A call handed to the tool layer (an `execute_tool` child span).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The call id, when there is one.
    pub id: Option<String>,
    /// The tool.
    pub name: String,
    /// The arguments, JSON text.
    pub arguments: String,
}

/// A finished exchange, whoever finished it.
#[derive(Clone, Debug)]
pub struct Finished {
    /// The request's model.
    pub request_model: Option<String>,
    /// The response (non-streamed): `model`, `id` and `usage` are read from it.
    pub response: Option<Value>,
    /// The `finish_reason`.
    pub finish_reason: Option<String>,
    /// Seconds to the first chunk (streamed).
    pub time_to_first_chunk: Option<f64>,
    /// The raw output text.
    pub output: String,
    /// The separate reasoning.
    pub reasoning: Option<String>,
    /// The upstream's native calls (OpenAI shape).
    pub tool_calls: Vec<Value>,
    /// The request's tool definitions.
    pub tools: Option<Value>,
    /// toolgate's verdict.
    pub verdict: Option<Verdict>,
    /// Calls handed to the tool layer.
    pub executed: Vec<ToolCall>,
    /// Why the exchange failed (not a verdict): `error.type`.
    pub failure: Option<String>,
    /// Start and end.
    pub start: SystemTime,
    /// End.
    pub end: SystemTime,
    /// Further `toolgate.*` attributes.
    pub extra: Vec<KeyValue>,
}

impl Finished {
    /// An empty exchange from `start` to `end`.
    pub fn new(start: SystemTime, end: SystemTime) -> Finished {
        Finished {
            request_model: None,
            response: None,
            finish_reason: None,
            time_to_first_chunk: None,
            output: String::new(),
            reasoning: None,
            tool_calls: Vec::new(),
            tools: None,
            verdict: None,
            executed: Vec::new(),
            failure: None,
            start,
            end: end.max(start),
            extra: Vec::new(),
        }
    }
}

/// The instrumentation scope name.
pub const SCOPE: &str = "toolgate";

pub(crate) fn tracer(provider: &SdkTracerProvider) -> SdkTracer {
    provider.tracer(SCOPE)
}

fn strings(items: impl IntoIterator<Item = String>) -> OtelValue {
    OtelValue::Array(Array::String(
        items.into_iter().map(StringValue::from).collect(),
    ))
}

/// The `gen_ai.output.messages` value: one assistant message.
pub fn output_messages(f: &Finished) -> Value {
    let mut parts = Vec::new();
    if !f.output.is_empty() {
        parts.push(json!({"type": "text", "content": f.output}));
    }
    if let Some(r) = &f.reasoning {
        parts.push(json!({"type": "reasoning", "content": r}));
    }
    for call in &f.tool_calls {
        let function = call.get("function");
        let mut part = serde_json::Map::new();
        part.insert("type".into(), json!("tool_call"));
        if let Some(id) = call.get("id").filter(|v| v.is_string()) {
            part.insert("id".into(), id.clone());
        }
        part.insert(
            "name".into(),
            function
                .and_then(|f| f.get("name"))
                .cloned()
                .unwrap_or(Value::Null),
        );
        part.insert(
            "arguments".into(),
            function
                .and_then(|f| f.get("arguments"))
                .cloned()
                .unwrap_or(Value::Null),
        );
        parts.push(Value::Object(part));
    }
    let mut message = json!({"role": "assistant", "parts": parts});
    if let Some(r) = &f.finish_reason {
        message["finish_reason"] = json!(r);
    }
    json!([message])
}

/// The request's tools as `gen_ai.tool.definitions` (`{"type", "name",
/// "description", "parameters"}`; OpenAI's nested `function` flattened).
pub fn tool_definitions(tools: &Value) -> Value {
    let Some(list) = tools.as_array() else {
        return json!([]);
    };
    Value::Array(
        list.iter()
            .map(|t| {
                let f = t.get("function").unwrap_or(t);
                let mut d = serde_json::Map::new();
                d.insert("type".into(), json!("function"));
                for k in ["name", "description", "parameters"] {
                    if let Some(v) = f.get(k) {
                        d.insert(k.into(), v.clone());
                    }
                }
                Value::Object(d)
            })
            .collect(),
    )
}

/// The chat span's attributes.
pub fn attributes(f: &Finished, capture: bool) -> Vec<KeyValue> {
    let mut a = vec![
        KeyValue::new("gen_ai.operation.name", "chat"),
        KeyValue::new("gen_ai.provider.name", "openai"),
    ];
    if let Some(m) = &f.request_model {
        a.push(KeyValue::new("gen_ai.request.model", m.clone()));
    }
    if let Some(resp) = &f.response {
        if let Some(m) = resp.get("model").and_then(Value::as_str) {
            a.push(KeyValue::new("gen_ai.response.model", m.to_string()));
        }
        if let Some(id) = resp.get("id").and_then(Value::as_str) {
            a.push(KeyValue::new("gen_ai.response.id", id.to_string()));
        }
        let usage = resp.get("usage");
        for (key, field) in [
            ("gen_ai.usage.input_tokens", "prompt_tokens"),
            ("gen_ai.usage.output_tokens", "completion_tokens"),
        ] {
            if let Some(n) = usage.and_then(|u| u.get(field)).and_then(Value::as_i64) {
                a.push(KeyValue::new(key, n));
            }
        }
    }
    if let Some(r) = &f.finish_reason {
        a.push(KeyValue::new(
            "gen_ai.response.finish_reasons",
            strings([r.clone()]),
        ));
    }
    if let Some(t) = f.time_to_first_chunk {
        a.push(KeyValue::new("gen_ai.response.time_to_first_chunk", t));
    }
    if capture {
        a.push(KeyValue::new(
            "gen_ai.output.messages",
            output_messages(f).to_string(),
        ));
        if let Some(tools) = &f.tools {
            a.push(KeyValue::new(
                "gen_ai.tool.definitions",
                tool_definitions(tools).to_string(),
            ));
        }
        a.push(KeyValue::new("toolgate.output.raw", true));
    }
    if let Some(v) = &f.verdict {
        a.push(KeyValue::new("toolgate.decision", v.decision.clone()));
        a.push(KeyValue::new("toolgate.label", v.label.clone()));
        if let Some(g) = &v.gate {
            a.push(KeyValue::new("toolgate.gate", g.clone()));
        }
        a.push(KeyValue::new("toolgate.profile", v.profile.clone()));
        if let Some(s) = &v.profile_source {
            a.push(KeyValue::new("toolgate.profile.source", s.clone()));
        }
        if let Some(m) = &v.parse_mode {
            a.push(KeyValue::new("toolgate.parse_mode", m.clone()));
        }
    }
    if let Some(e) = error_type(f) {
        a.push(KeyValue::new("error.type", e));
    }
    a.extend(f.extra.iter().cloned());
    a
}

/// `error.type`: an exchange failure first, then a reject.
pub fn error_type(f: &Finished) -> Option<String> {
    if let Some(e) = &f.failure {
        return Some(e.clone());
    }
    let v = f.verdict.as_ref()?;
    (v.decision == "reject").then(|| match &v.gate {
        Some(g) => format!("toolgate.reject.{g}"),
        None => "toolgate.reject".to_string(),
    })
}

/// Emits the chat span (and its `execute_tool` children) into `tracer`.
pub(crate) fn emit(tracer: &SdkTracer, f: &Finished, capture: bool) {
    let name = format!("chat {}", f.request_model.as_deref().unwrap_or("unknown"));
    let mut span = tracer
        .span_builder(name)
        .with_kind(SpanKind::Client)
        .with_start_time(f.start)
        .with_attributes(attributes(f, capture))
        .start_with_context(tracer, &Context::new());
    if let Some(e) = error_type(f) {
        span.set_status(Status::error(e));
    }
    let parent = Context::new().with_remote_span_context(span.span_context().clone());
    for call in &f.executed {
        let mut attrs = vec![
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", call.name.clone()),
            KeyValue::new("gen_ai.tool.type", "function"),
        ];
        if let Some(id) = &call.id {
            attrs.push(KeyValue::new("gen_ai.tool.call.id", id.clone()));
        }
        if capture {
            attrs.push(KeyValue::new(
                "gen_ai.tool.call.arguments",
                call.arguments.clone(),
            ));
        }
        let mut child = tracer
            .span_builder(format!("execute_tool {}", call.name))
            .with_kind(SpanKind::Internal)
            .with_start_time(f.end)
            .with_attributes(attrs)
            .start_with_context(tracer, &parent);
        child.end_with_timestamp(f.end);
    }
    span.end_with_timestamp(f.end);
}
