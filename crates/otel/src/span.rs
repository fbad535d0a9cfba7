//! One finished exchange as a GenAI `chat {model}` span.
//!
//! # Span shape
//!
//! `chat {gen_ai.request.model}` (`chat` without a model; kind `CLIENT`), from the exchange's start
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
//! | `toolgate.content.omitted` | `too_large`: content capture is on but the content passes [`MAX_CONTENT`]; it is left out whole, never cut |
//! | `gen_ai.request.temperature`, `.top_p`, `.max_tokens`, `.seed`, … | the request's sampling settings |
//! | `server.address`, `server.port` | the upstream (proxy) or the endpoint (runner) |
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
//! `gen_ai.tool.type`, `gen_ai.tool.call.id`, `toolgate.tool.executed =
//! false` (toolgate decides; it never runs a tool) and, with content
//! capture, `gen_ai.tool.call.arguments` (left out, with
//! `toolgate.content.omitted`, when the chat span's content was).
//!
//! Identifiers (the models, the response id, the finish reason, tool names,
//! call ids, and the span names made of them) are made terminal-safe and
//! cut at [`MAX_NAME`] bytes ([`clip`]): they come from the client and the
//! upstream, and a span waits in the exporter's queue while the collector
//! is stuck.

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

impl Finished {
    /// Roughly the bytes it holds (for the queue's byte budget).
    pub fn approx_size(&self) -> usize {
        let opt = |v: &Option<Value>| v.as_ref().map_or(0, crate::json_size);
        512 + self.output.len()
            + self.reasoning.as_ref().map_or(0, String::len)
            + self.tool_calls.iter().map(crate::json_size).sum::<usize>()
            + opt(&self.tools)
            + opt(&self.response)
            + self
                .executed
                .iter()
                .map(|c| c.arguments.len() + c.name.len() + 64)
                .sum::<usize>()
            + 64 * self.extra.len()
    }
}

/// What a span needs of a response: its `model`, `id` and `usage`.
pub fn slim_response(response: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for k in ["model", "id", "usage"] {
        if let Some(v) = response.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// The most content (output messages plus tool definitions, JSON text) one
/// span carries; past it the span carries none (`toolgate.content.omitted`).
pub const MAX_CONTENT: usize = 256 << 10;

/// The most bytes of one identifier a span carries (a model's name, a
/// response id, a finish reason, a tool's name, a call id, and the span
/// names made of them); a longer one is cut at a character boundary and
/// ends in `…`. They come from the client and the upstream: uncut, a
/// 4 MB `model` per request grew a stuck collector's queue by gigabytes
/// (the content is bounded apart, [`MAX_CONTENT`]).
pub const MAX_NAME: usize = 256;

/// `s` within [`MAX_NAME`] bytes, on one line and terminal-safe
/// ([`toolgate_core::sanitize::one_line`], as `/metrics` labels): an
/// identifier comes from the client or the upstream, and span names and
/// identifiers are shown as they are by terminal viewers (the Collector's
/// `debug` exporter, TUI trace viewers), so a model named
/// `qwen\x1b]0;…\x07` retitled the terminal. Content (the output
/// messages, the arguments) is JSON text, kept as the model wrote it.
pub fn clip(s: &str) -> String {
    let s = toolgate_core::sanitize::one_line(s);
    if s.len() <= MAX_NAME {
        return s.into_owned();
    }
    let mut end = MAX_NAME - '…'.len_utf8();
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
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
        a.push(KeyValue::new("gen_ai.request.model", clip(m)));
    }
    if let Some(resp) = &f.response {
        if let Some(m) = resp.get("model").and_then(Value::as_str) {
            a.push(KeyValue::new("gen_ai.response.model", clip(m)));
        }
        if let Some(id) = resp.get("id").and_then(Value::as_str) {
            a.push(KeyValue::new("gen_ai.response.id", clip(id)));
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
            strings([clip(r)]),
        ));
    }
    if let Some(t) = f.time_to_first_chunk {
        a.push(KeyValue::new("gen_ai.response.time_to_first_chunk", t));
    }
    if capture {
        let messages = output_messages(f).to_string();
        let tools = f.tools.as_ref().map(|t| tool_definitions(t).to_string());
        let size = messages.len() + tools.as_ref().map_or(0, String::len);
        if size <= MAX_CONTENT {
            a.push(KeyValue::new("gen_ai.output.messages", messages));
            if let Some(tools) = tools {
                a.push(KeyValue::new("gen_ai.tool.definitions", tools));
            }
            a.push(KeyValue::new("toolgate.output.raw", true));
        } else {
            // Whole or not at all: a cut output would import as a different
            // answer.
            a.push(KeyValue::new("toolgate.content.omitted", "too_large"));
        }
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

/// The request's sampling settings as `gen_ai.request.*` (no content).
pub fn request_attributes(request: &Value) -> Vec<KeyValue> {
    let mut a = Vec::new();
    for (key, field) in [
        ("gen_ai.request.temperature", "temperature"),
        ("gen_ai.request.top_p", "top_p"),
        ("gen_ai.request.frequency_penalty", "frequency_penalty"),
        ("gen_ai.request.presence_penalty", "presence_penalty"),
    ] {
        if let Some(x) = request.get(field).and_then(Value::as_f64) {
            a.push(KeyValue::new(key, x));
        }
    }
    let max = request
        .get("max_completion_tokens")
        .or_else(|| request.get("max_tokens"))
        .and_then(Value::as_i64);
    if let Some(n) = max {
        a.push(KeyValue::new("gen_ai.request.max_tokens", n));
    }
    if let Some(n) = request.get("seed").and_then(Value::as_i64) {
        a.push(KeyValue::new("gen_ai.request.seed", n));
    }
    if let Some(n) = request.get("n").and_then(Value::as_i64).filter(|n| *n != 1) {
        a.push(KeyValue::new("gen_ai.request.choice.count", n));
    }
    a
}

/// `server.address` and `server.port` of an `http(s)://host[:port]/…` URL.
pub fn server_attributes(url: &str) -> Vec<KeyValue> {
    let (scheme, rest) = match url.split_once("://") {
        Some(p) => p,
        None => return Vec::new(),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // Never a user name or password.
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || host_port.starts_with('[') => match p.parse::<u16>() {
            Ok(p) => (h, Some(p)),
            Err(_) => (host_port, None),
        },
        _ => (host_port, None),
    };
    let port = port.or(match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    });
    if host.is_empty() {
        return Vec::new();
    }
    let mut a = vec![KeyValue::new(
        "server.address",
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
    )];
    if let Some(p) = port {
        a.push(KeyValue::new("server.port", i64::from(p)));
    }
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

/// Whether an exported span is a chat span (one per exchange or sample),
/// not an `execute_tool` child.
pub(crate) fn is_chat(s: &opentelemetry_sdk::trace::SpanData) -> bool {
    s.name == "chat" || s.name.starts_with("chat ")
}

/// `chat {model}`, or `chat` alone when the request named no model.
pub fn name(f: &Finished) -> String {
    match &f.request_model {
        Some(m) => format!("chat {}", clip(m)),
        None => "chat".to_string(),
    }
}

/// An `execute_tool` child's attributes; `omitted`: the chat span's
/// content was left out as too large, and so are the arguments.
pub fn call_attributes(call: &ToolCall, capture: bool, omitted: bool) -> Vec<KeyValue> {
    let mut attrs = vec![
        KeyValue::new("gen_ai.operation.name", "execute_tool"),
        KeyValue::new("gen_ai.tool.name", clip(&call.name)),
        KeyValue::new("gen_ai.tool.type", "function"),
        // toolgate decides; whoever receives the call runs it.
        KeyValue::new("toolgate.tool.executed", false),
    ];
    if let Some(id) = &call.id {
        attrs.push(KeyValue::new("gen_ai.tool.call.id", clip(id)));
    }
    if capture && omitted {
        attrs.push(KeyValue::new("toolgate.content.omitted", "too_large"));
    } else if capture {
        attrs.push(KeyValue::new(
            "gen_ai.tool.call.arguments",
            call.arguments.clone(),
        ));
    }
    attrs
}

/// Emits the chat span (and its `execute_tool` children) into `tracer`.
pub(crate) fn emit(tracer: &SdkTracer, f: &Finished, capture: bool) {
    let name = name(f);
    let attributes = attributes(f, capture);
    // The calls' arguments are part of the chat span's content: when that
    // was left out as too large, so are they (the children would carry it
    // all again, one call at a time).
    let omitted = attributes
        .iter()
        .any(|kv| kv.key.as_str() == "toolgate.content.omitted");
    let mut span = tracer
        .span_builder(name)
        .with_kind(SpanKind::Client)
        .with_start_time(f.start)
        .with_attributes(attributes)
        .start_with_context(tracer, &Context::new());
    if let Some(e) = error_type(f) {
        span.set_status(Status::error(e));
    }
    let parent = Context::new().with_remote_span_context(span.span_context().clone());
    for call in &f.executed {
        let attrs = call_attributes(call, capture, omitted);
        let mut child = tracer
            .span_builder(format!("execute_tool {}", clip(&call.name)))
            .with_kind(SpanKind::Internal)
            .with_start_time(f.end)
            .with_attributes(attrs)
            .start_with_context(tracer, &parent);
        child.end_with_timestamp(f.end);
    }
    span.end_with_timestamp(f.end);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn keys(a: &[KeyValue]) -> Vec<String> {
        a.iter()
            .map(|kv| format!("{}={}", kv.key, kv.value))
            .collect()
    }

    #[test]
    fn server_attributes_never_carry_credentials_and_default_the_port() {
        assert_eq!(
            keys(&server_attributes("http://user:pw@127.0.0.1:8000/v1")),
            ["server.address=127.0.0.1", "server.port=8000"]
        );
        assert_eq!(
            keys(&server_attributes("https://api.example.com/v1?x=1")),
            ["server.address=api.example.com", "server.port=443"]
        );
        assert_eq!(
            keys(&server_attributes("http://[::1]:9/v1")),
            ["server.address=::1", "server.port=9"]
        );
        assert!(server_attributes("not a url").is_empty());
        assert!(server_attributes("http:///v1").is_empty());
    }

    #[test]
    fn the_span_is_named_after_the_request_s_model() {
        let now = SystemTime::now();
        let mut f = Finished::new(now, now);
        assert_eq!(name(&f), "chat");
        f.request_model = Some("qwen3-8b".into());
        assert_eq!(name(&f), "chat qwen3-8b");
    }

    #[test]
    fn error_type_prefers_an_exchange_failure_then_the_rejecting_gate() {
        let now = SystemTime::now();
        let mut f = Finished::new(now, now);
        assert_eq!(error_type(&f), None);
        f.verdict = Some(Verdict {
            decision: "reject".into(),
            ..Verdict::default()
        });
        // Native calls removed: a reject without a text gate.
        assert_eq!(error_type(&f).as_deref(), Some("toolgate.reject"));
        f.verdict.as_mut().unwrap().gate = Some("schema".into());
        assert_eq!(error_type(&f).as_deref(), Some("toolgate.reject.schema"));
        f.failure = Some("503".into());
        assert_eq!(error_type(&f).as_deref(), Some("503"));
        f.failure = None;
        f.verdict.as_mut().unwrap().decision = "no_call".into();
        assert_eq!(error_type(&f), None);
    }

    #[test]
    fn content_past_the_cap_is_left_out_whole_never_cut() {
        let now = SystemTime::now();
        let mut f = Finished::new(now, now);
        f.output = "x".repeat(MAX_CONTENT + 1);
        let a = attributes(&f, true);
        let has = |k: &str| a.iter().any(|kv| kv.key.as_str() == k);
        assert!(!has("gen_ai.output.messages"));
        assert!(!has("toolgate.output.raw"));
        assert!(has("toolgate.content.omitted"));
        f.output = "x".repeat(1000);
        let a = attributes(&f, true);
        assert!(
            a.iter()
                .any(|kv| kv.key.as_str() == "gen_ai.output.messages")
        );
    }

    /// Probe (stop 43): identifiers came uncut from the client and the
    /// upstream; a 4 MB `model` per request (or an 8 MB response `id`) grew
    /// a stuck collector's span queue by gigabytes.
    #[test]
    fn identifiers_are_cut_at_max_name() {
        let now = SystemTime::now();
        let mut f = Finished::new(now, now);
        let long = "é".repeat(2 << 20);
        f.request_model = Some(long.clone());
        f.finish_reason = Some(long.clone());
        f.response = Some(serde_json::json!({"model": long, "id": long}));
        let a = attributes(&f, false);
        let mut seen = 0;
        for kv in &a {
            let text = match &kv.value {
                OtelValue::String(s) => s.as_str().to_string(),
                OtelValue::Array(Array::String(v)) => v[0].as_str().to_string(),
                _ => continue,
            };
            if kv.key.as_str().starts_with("gen_ai.re") {
                seen += 1;
                assert!(text.len() <= MAX_NAME, "{}: {}", kv.key, text.len());
                assert!(text.ends_with('…') && text.starts_with("éé"), "{}", kv.key);
            }
        }
        assert_eq!(seen, 4, "{a:?}");
        assert!(name(&f).len() <= MAX_NAME + "chat ".len());
        assert_eq!(clip("qwen3-8b"), "qwen3-8b");
        let call = ToolCall {
            id: Some(long.clone()),
            name: long,
            arguments: "{}".into(),
        };
        for kv in call_attributes(&call, false, false) {
            if let OtelValue::String(s) = &kv.value {
                assert!(s.as_str().len() <= MAX_NAME, "{}", kv.key);
            }
        }
    }

    /// Probe (stop 43): the `execute_tool` children carried every call's
    /// arguments when the chat span had left its content out as too large
    /// (40 calls of 60 KB: 2.4 MB past the cap). They leave them out too.
    #[test]
    fn the_calls_arguments_are_left_out_when_the_content_was() {
        let call = ToolCall {
            id: None,
            name: "f".into(),
            arguments: "{\"a\": 1}".into(),
        };
        let has = |a: &[KeyValue], k: &str| a.iter().any(|kv| kv.key.as_str() == k);
        let a = call_attributes(&call, true, false);
        assert!(has(&a, "gen_ai.tool.call.arguments"));
        let a = call_attributes(&call, true, true);
        assert!(!has(&a, "gen_ai.tool.call.arguments"));
        assert!(has(&a, "toolgate.content.omitted"));
        let a = call_attributes(&call, false, false);
        assert!(!has(&a, "gen_ai.tool.call.arguments") && !has(&a, "toolgate.content.omitted"));
    }

    /// Probe (p7): a model named with an OSC sequence (`ESC ] 0 ; x BEL`)
    /// went raw into the span name and `gen_ai.request.model`, and a C1
    /// CSI (U+009B) in `x-toolgate-task` into `toolgate.task`.
    #[test]
    fn identifiers_carry_no_terminal_escapes() {
        let now = SystemTime::now();
        let mut f = Finished::new(now, now);
        f.request_model = Some("qwen\u{1b}]0;x\u{7}".into());
        f.finish_reason = Some("stop\u{9b}31m".into());
        f.response = Some(serde_json::json!({"model": "m\u{1b}[2J", "id": "id\n2"}));
        assert_eq!(name(&f), "chat qwen\\x1b]0;x\\x07");
        let texts: Vec<String> = attributes(&f, false)
            .iter()
            .filter_map(|kv| match &kv.value {
                OtelValue::String(s) => Some(s.as_str().to_string()),
                OtelValue::Array(Array::String(v)) => Some(v[0].as_str().to_string()),
                _ => None,
            })
            .collect();
        for t in &texts {
            assert!(
                !t.chars()
                    .any(|c| toolgate_core::sanitize::is_unsafe(c) || c == '\n'),
                "{t:?}"
            );
        }
        assert!(
            texts.contains(&"qwen\\x1b]0;x\\x07".to_string()),
            "{texts:?}"
        );
        assert_eq!(clip("été"), "été");
    }

    #[test]
    fn request_attributes_are_the_sampling_settings_only() {
        let a = request_attributes(&serde_json::json!({
            "temperature": 0.2, "max_tokens": 64, "seed": 7, "n": 1,
            "messages": [{"role": "user", "content": "secret"}]}));
        assert_eq!(
            keys(&a),
            [
                "gen_ai.request.temperature=0.2",
                "gen_ai.request.max_tokens=64",
                "gen_ai.request.seed=7"
            ]
        );
    }
}
