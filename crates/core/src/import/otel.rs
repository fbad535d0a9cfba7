//! OpenTelemetry GenAI spans, OTLP JSON export.
//!
//! # Wire format
//!
//! `{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId", "name",
//! "attributes": [{"key", "value": {"stringValue"|"intValue"|…}}]}]}]}]}`
//! (the OTLP file exporter writes one such object per line). A span is an
//! exchange when it carries output messages:
//!
//! - current conventions: `gen_ai.output.messages` (JSON text or a value),
//!   each message `{"role", "parts": [{"type": "text", "content"},
//!   {"type": "reasoning", "content"}, {"type": "tool_call", "id", "name",
//!   "arguments"}], "finish_reason"}`; `gen_ai.tool.definitions`;
//!   `gen_ai.response.finish_reasons` (`tool_call`, singular, → `tool_calls`);
//! - older conventions: `gen_ai.completion.N.content`, `.finish_reason`,
//!   `.tool_calls.M.name`/`.arguments`/`.id` (or `.function_call.*`), tools
//!   in `llm.request.functions.N.name`/`.description`/`.parameters`.
//!
//! The model is `gen_ai.response.model`, else `gen_ai.request.model`. Each
//! output message is one transcript (`sample` = its position when there are
//! several). Instrumentation records parsed calls: only `native` judges these,
//! unless the span says its text is the raw generated text
//! (`toolgate.output.raw = true`, as toolgate's own proxy and runner spans
//! do): then every mode replays it, as it would the proxy's recording, and
//! such a span without `tool_call` parts has no `tool_calls` (a recording
//! whose server sent an empty list imports without it: its `native` row is
//! missing instead of `no_call`).
//! A model call (`gen_ai.operation.name` `chat`, …) or a span with a
//! completion event whose output is not in one of these conventions (the
//! event-based `gen_ai.content.completion`, `gen_ai.choice`; content
//! capture off) is an error naming the span, never skipped in silence.
//! `tools` is written only when the span holds the tool definitions (else
//! the transcript's tools are unknown, SPEC §4). A call recorded without
//! `arguments` (optional in the schema) or with null is `{}` after a clean
//! finish, `""` (truncation) otherwise ([`calls_of`]). A message whose
//! finish reason is a provider error (`error`, `abort`) is refused as the
//! chat importer refuses such a choice; one stopped at the token limit in
//! the provider's spelling (`max_tokens`, `MAX_TOKENS`, …) is `length`, its
//! last call cut as the Anthropic importer cuts it ([`message`]); so is a
//! `length` from a provider that parses calls server-side ([`parses_calls`]).
//! A span that dropped attributes (`droppedAttributesCount` > 0, an SDK's
//! attribute limit) and may be a model call is an error naming the span
//! ([`dropped`]), and so is one where a message's `tool_calls.M` indexes
//! have a gap ([`call_gap`]): a call may be lost, and what is left is not
//! judged as if whole.

use super::{
    Kind, NoteKind, add_note, import_info, json_or_value, native_call, openai, sse, str_of,
    tool_def,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const MAX_DEPTH: usize = 32;

/// An OTLP `AnyValue` as plain JSON.
fn any_value(v: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    let Some(obj) = v.as_object() else {
        return v.clone();
    };
    if let Some(s) = obj.get("stringValue") {
        return s.clone();
    }
    if let Some(b) = obj.get("boolValue") {
        return b.clone();
    }
    if let Some(i) = obj.get("intValue") {
        return match i {
            Value::String(s) => s
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| i.clone()),
            other => other.clone(),
        };
    }
    if let Some(d) = obj.get("doubleValue") {
        return d.clone();
    }
    if let Some(a) = obj.get("arrayValue") {
        let values = a.get("values").and_then(Value::as_array);
        return Value::Array(
            values
                .into_iter()
                .flatten()
                .map(|x| any_value(x, depth + 1))
                .collect(),
        );
    }
    if let Some(kv) = obj.get("kvlistValue") {
        let mut m = Map::new();
        for pair in kv
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(k) = str_of(pair, "key") {
                m.insert(
                    k.to_string(),
                    any_value(pair.get("value").unwrap_or(&Value::Null), depth + 1),
                );
            }
        }
        return Value::Object(m);
    }
    Value::Null
}

fn attributes(span: &Value) -> BTreeMap<String, Value> {
    span.get("attributes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let key = str_of(a, "key")?;
            Some((
                key.to_string(),
                any_value(a.get("value").unwrap_or(&Value::Null), 0),
            ))
        })
        .collect()
}

fn spans(doc: &Map<String, Value>) -> Vec<&Value> {
    let mut out = Vec::new();
    for rs in doc
        .get("resourceSpans")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["scopeSpans", "instrumentationLibrarySpans"] {
            for ss in rs.get(key).and_then(Value::as_array).into_iter().flatten() {
                out.extend(
                    ss.get("spans")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten(),
                );
            }
        }
    }
    out
}

/// A recorded finish reason as toolgate writes it: the conventions'
/// `tool_call` is `tool_calls`, and a stop at the token limit in the
/// provider's spelling ([`super::at_token_limit`]) is `length`.
/// Instrumentations record the provider's own spelling.
fn finish(reason: &str) -> String {
    match reason {
        "tool_call" | "tool_calls" => "tool_calls".into(),
        r if super::at_token_limit(r) => "length".into(),
        other => other.to_string(),
    }
}

/// Whether the span's provider (`gen_ai.provider.name`, or the older
/// `gen_ai.system`) parses calls server-side and returns each call's
/// arguments as an object it parsed, also from a call the token limit cut
/// (Anthropic, Bedrock, Gemini and Vertex AI, Cohere). The conventions'
/// finish reasons are OpenAI's words, so instrumentations that follow them
/// write such a provider's stop at the limit as `length`: for these
/// providers `length` cuts the last call as [`super::stopped_early`]'s reasons
/// do. OpenAI-style providers send the argument text as generated, so a
/// call cut there is incomplete JSON, and a `length` of theirs is left as
/// recorded.
fn parses_calls(attrs: &BTreeMap<String, Value>) -> bool {
    let provider = ["gen_ai.provider.name", "gen_ai.system"]
        .iter()
        .find_map(|k| attrs.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    matches!(
        provider.to_ascii_lowercase().as_str(),
        "anthropic"
            | "aws.bedrock"
            | "gcp.gemini"
            | "gcp.gen_ai"
            | "gcp.vertex_ai"
            | "gemini"
            | "vertex_ai"
            | "cohere"
    )
}

/// One output message as read, or why it is not an answer.
type Read = Result<Message, String>;

/// One output message.
struct Message {
    output: String,
    reasoning: Option<String>,
    calls: Vec<Value>,
    finish_reason: Option<String>,
    /// Whether a call without arguments was read as `{}` ([`calls_of`]).
    filled: bool,
    /// The arguments received of a last call cut because the provider
    /// stopped early ([`super::stopped_early`]), kept as
    /// `import.truncated_input`.
    truncated_input: Option<Value>,
}

/// One output message from its parts: `reason` as recorded, `ends_in_call`
/// whether its last part is a tool call, `parsed` whether the provider
/// parses calls server-side ([`parses_calls`]). A provider error's finish
/// reason (`error`, `abort`, as the chat importer refuses them:
/// [`openai::finish_error`]) is no answer; a stop by the provider cuts the
/// last call ([`super::stopped_early`]: the limit, a filter, Gemini's
/// `SAFETY` …, or `length` from such a provider).
fn message<'a>(
    output: String,
    reasoning: Option<String>,
    calls: Vec<(Option<&'a str>, &'a str, Option<&'a Value>)>,
    reason: Option<&str>,
    ends_in_call: bool,
    parsed: bool,
) -> Read {
    if let Some(why) = reason.and_then(openai::finish_error) {
        return Err(why);
    }
    let finish_reason = reason.map(finish);
    let (mut calls, filled) = calls_of(calls, finish_reason.as_deref());
    let early = reason.is_some_and(|r| super::stopped_early(r) || (parsed && r == "length"));
    let truncated_input = if early && ends_in_call {
        super::cut_last_call(&mut calls)
    } else {
        None
    };
    Ok(Message {
        output,
        reasoning,
        calls,
        finish_reason,
        filled,
        truncated_input,
    })
}

/// A message's calls, `(id, name, arguments)` each, as native calls.
///
/// `arguments` is optional in the GenAI output-message schema: a call
/// recorded without it (or with null) after a clean finish is a call
/// without arguments (`"{}"`), by the rule the streamed chat importer
/// applies to a call that carried no argument text
/// ([`sse::ends_on_its_own`]); after any other finish, or none, it stays
/// `""` (truncation, SPEC §9 `native`). The flag says whether one was read
/// as `{}` ([`NoteKind::ArgumentsAbsent`]).
fn calls_of<'a>(
    calls: impl IntoIterator<Item = (Option<&'a str>, &'a str, Option<&'a Value>)>,
    reason: Option<&str>,
) -> (Vec<Value>, bool) {
    let clean = reason.is_some_and(sse::ends_on_its_own);
    let mut filled = false;
    let empty = json!("{}");
    let native = calls
        .into_iter()
        .map(|(id, name, args)| match args {
            None | Some(Value::Null) if clean => {
                filled = true;
                native_call(id, name, &empty)
            }
            _ => native_call(id, name, args.unwrap_or(&Value::Null)),
        })
        .collect();
    (native, filled)
}

/// A call as recorded, for comparing the two conventions
/// ([`disagreement`]): its name and its arguments as a JSON value (JSON
/// text parsed; absent is null).
type Seen = (String, Value);

/// The calls of each output message as recorded ([`Seen`]).
type SeenCalls = Vec<Vec<Seen>>;

fn seen<'a>(calls: &[(Option<&'a str>, &'a str, Option<&'a Value>)]) -> Vec<Seen> {
    calls
        .iter()
        .map(|(_, name, args)| {
            (
                name.to_string(),
                args.map(json_or_value).unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn new_messages(attrs: &BTreeMap<String, Value>) -> Option<Result<(Vec<Read>, SeenCalls), String>> {
    let raw = attrs.get("gen_ai.output.messages")?;
    let value = json_or_value(raw);
    let Some(items) = value.as_array() else {
        return Some(Err("`gen_ai.output.messages` is not a JSON array".into()));
    };
    let reasons = attrs
        .get("gen_ai.response.finish_reasons")
        .map(json_or_value)
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut all_seen = Vec::new();
    for (i, m) in items.iter().enumerate() {
        let mut output = String::new();
        let mut reasoning: Option<String> = None;
        let mut calls: Vec<(Option<&str>, &str, Option<&Value>)> = Vec::new();
        let parts = match m.get("parts") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(parts)) => parts.as_slice(),
            Some(_) => {
                return Some(Err(format!(
                    "`gen_ai.output.messages[{i}].parts` is not a list"
                )));
            }
        };
        for (j, part) in parts.iter().enumerate() {
            match str_of(part, "type") {
                Some("text") => output.push_str(str_of(part, "content").unwrap_or("")),
                Some("reasoning") => reasoning
                    .get_or_insert_with(String::new)
                    .push_str(str_of(part, "content").unwrap_or("")),
                Some("tool_call") => calls.push((
                    str_of(part, "id"),
                    str_of(part, "name").unwrap_or(""),
                    part.get("arguments"),
                )),
                // `blob`, `uri`, `file`, or a part of a newer convention:
                // what the model sent that cannot be read (never dropped).
                other => {
                    return Some(Err(format!(
                        "`gen_ai.output.messages[{i}].parts[{j}]` is not a text, reasoning or tool_call part (type {})",
                        other.unwrap_or("missing")
                    )));
                }
            }
        }
        let reason = str_of(m, "finish_reason").or_else(|| reasons.get(i).and_then(Value::as_str));
        let ends_in_call = parts.last().and_then(|p| str_of(p, "type")) == Some("tool_call");
        all_seen.push(seen(&calls));
        out.push(message(
            output,
            reasoning,
            calls,
            reason,
            ends_in_call,
            parses_calls(attrs),
        ));
    }
    Some(Ok((out, all_seen)))
}

/// `prefix.N.rest` attributes grouped by N, each as `rest → value`.
fn indexed<'a>(
    attrs: &'a BTreeMap<String, Value>,
    prefix: &str,
) -> BTreeMap<usize, BTreeMap<&'a str, &'a Value>> {
    let mut out: BTreeMap<usize, BTreeMap<&str, &Value>> = BTreeMap::new();
    for (k, v) in attrs {
        let Some(rest) = k.strip_prefix(prefix) else {
            continue;
        };
        let Some((n, field)) = rest.split_once('.') else {
            continue;
        };
        if let Ok(n) = n.parse::<usize>() {
            out.entry(n).or_default().insert(field, v);
        }
    }
    out
}

/// Why the calls `gen_ai.completion.N.tool_calls.M.*` of message `n`
/// cannot be read whole, when they cannot: their indexes `M` are not
/// `0, 1, …` without a gap. A missing index is a call whose attributes
/// were lost (an SDK's attribute limit evicts them); read as the calls
/// around it, the message would pass with fewer calls than the model made.
/// The loss is the span's, as for [`dropped`]: the span is refused.
fn call_gap<T>(n: usize, calls: &BTreeMap<usize, T>) -> Option<String> {
    let (missing, next) = calls
        .keys()
        .enumerate()
        .find(|(i, m)| i != *m)
        .map(|(i, m)| (i, *m))?;
    Some(format!(
        "output message {n} has no tool call {missing} (`gen_ai.completion.{n}.tool_calls.{missing}.*`) but has call {next}: a call's attributes were lost (an SDK's attribute limit?), so the span's calls cannot be read whole: nothing of this span is imported"
    ))
}

fn old_messages(attrs: &BTreeMap<String, Value>) -> Result<(Vec<Read>, SeenCalls), String> {
    let mut out = Vec::new();
    let mut all_seen = Vec::new();
    for (n, fields) in indexed(attrs, "gen_ai.completion.") {
        let text = |k: &str| fields.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let mut calls: BTreeMap<usize, (Option<&str>, &str, Option<&Value>)> = BTreeMap::new();
        for (field, v) in &fields {
            let Some(rest) = field.strip_prefix("tool_calls.") else {
                continue;
            };
            let Some((m, key)) = rest.split_once('.') else {
                continue;
            };
            let Ok(m) = m.parse::<usize>() else { continue };
            let entry = calls.entry(m).or_insert((None, "", None));
            match key {
                "id" => entry.0 = v.as_str(),
                "name" => entry.1 = v.as_str().unwrap_or(""),
                "arguments" => entry.2 = Some(*v),
                _ => {}
            }
        }
        if let Some(why) = call_gap(n, &calls) {
            return Err(why);
        }
        let mut calls: Vec<_> = calls.into_values().collect();
        if calls.is_empty()
            && let Some(name) = fields.get("function_call.name").and_then(|v| v.as_str())
        {
            calls.push((None, name, fields.get("function_call.arguments").copied()));
        }
        // The older attributes keep the content apart from the calls, which
        // follow it in the message: a message with calls ends in one.
        let ends_in_call = !calls.is_empty();
        all_seen.push(seen(&calls));
        out.push(message(
            text("content").unwrap_or_default(),
            text("reasoning_content"),
            calls,
            fields.get("finish_reason").and_then(|v| v.as_str()),
            ends_in_call,
            parses_calls(attrs),
        ));
    }
    Ok((out, all_seen))
}

/// Why a span recording its output in both conventions is refused, when
/// it is: `gen_ai.output.messages` (`new`) and `gen_ai.completion.N.*`
/// (`old`) disagree on the calls of some message — a call's name or
/// arguments (JSON text and the value it spells are the same), or how many
/// calls there are. Read by one convention alone, the other's calls would
/// vanish without a word, and which one the instrumented client acted on
/// is not known. Messages are compared by position, a message one side
/// lacks as one without calls.
fn disagreement(new: &SeenCalls, old: &SeenCalls) -> Option<String> {
    let none = Vec::new();
    let shown = |calls: &[Seen]| -> String {
        let names: Vec<String> = calls
            .iter()
            .take(8)
            .map(|(name, _)| format!("{:?}", name.chars().take(64).collect::<String>()))
            .collect();
        let more = if calls.len() > 8 { ", …" } else { "" };
        format!("[{}{more}]", names.join(", "))
    };
    (0..new.len().max(old.len())).find_map(|n| {
        let (a, b) = (new.get(n).unwrap_or(&none), old.get(n).unwrap_or(&none));
        if a == b {
            return None;
        }
        let how = if a.len() != b.len() {
            format!("{} calls {} against {} {}", a.len(), shown(a), b.len(), shown(b))
        } else {
            let m = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0);
            let what = if a[m].0 == b[m].0 { "arguments" } else { "name" };
            format!("call {m} differs in its {what} ({} against {})", shown(&a[m..=m]), shown(&b[m..=m]))
        };
        Some(format!(
            "output message {n}: `gen_ai.output.messages` and `gen_ai.completion.{n}.*` disagree on the calls ({how}): read by one convention, the other's calls would vanish, so nothing of this span is imported"
        ))
    })
}

/// The span's tool definitions; `None` when the span records none (both
/// attributes are opt-in): the tool list is unknown, and no `tools` key is
/// written (SPEC §4).
///
/// Definitions that are not a JSON list are an error: read as unknown they
/// would hide that the capture recorded them, read as `[]` every call would
/// be blamed as `wrong_tool`. So is an element that is not a definition; an
/// element that is a definition's JSON text (a list attribute of strings)
/// is read as one.
fn tools(attrs: &BTreeMap<String, Value>) -> Result<Option<Vec<Value>>, String> {
    if let Some(defs) = attrs.get("gen_ai.tool.definitions") {
        return match json_or_value(defs) {
            // A list attribute holds strings (most SDKs take no maps): each
            // definition as its JSON text, read as the whole one is.
            Value::Array(list) => list
                .iter()
                .enumerate()
                .map(|(i, d)| match json_or_value(d) {
                    d @ Value::Object(_) => Ok(d),
                    _ => Err(format!(
                        "`gen_ai.tool.definitions[{i}]` is not a tool definition (an object, or one as JSON text): the tools cannot be read"
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            _ => {
                Err("`gen_ai.tool.definitions` is not a JSON list: the tools cannot be read".into())
            }
        };
    }
    let functions = indexed(attrs, "llm.request.functions.");
    if functions.is_empty() {
        return Ok(None);
    }
    let defs = functions
        .into_values()
        .filter_map(|f| {
            let name = f.get("name")?.as_str()?;
            let params = f.get("parameters").map(|p| json_or_value(p));
            Some(tool_def(
                name,
                f.get("description").copied(),
                params.as_ref(),
            ))
        })
        .collect();
    Ok(Some(defs))
}

/// Why a span that failed is not an answer: OTel status ERROR (`code` 2,
/// or `STATUS_CODE_ERROR` as some exporters spell it), with its message and
/// the `error.type` attribute; or an `error.type` without that status —
/// the semantic conventions set it only when the operation failed, and
/// some instrumentations leave the status unset (what such a span holds is
/// whatever arrived before the failure, never the model's answer).
///
/// toolgate's own proxy sets ERROR with `error.type` `toolgate.reject…` when
/// its gates rejected the answer: the server did answer, and that answer is
/// the recording (a verdict, not a failed call), so it is read.
///
/// Any `error.type` value counts, not only a string: instrumentations
/// record an HTTP status as an `intValue` (`500`), and a flag as a bool.
fn failed(span: &Value, attrs: &BTreeMap<String, Value>) -> Option<String> {
    let error_type: Option<String> = match attrs.get("error.type") {
        Some(Value::String(t)) if !t.is_empty() => Some(t.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(true)) => Some("true".into()),
        // An array or map (not what the conventions allow) still says so.
        Some(v @ (Value::Array(_) | Value::Object(_))) => Some(v.to_string()),
        _ => None,
    };
    let error_type = error_type.as_deref();
    if error_type.is_some_and(|t| t == "toolgate.reject" || t.starts_with("toolgate.reject.")) {
        return None;
    }
    let bound = |s: &str| -> String { s.chars().take(500).collect() };
    let status = span.get("status").unwrap_or(&Value::Null);
    let error = match status.get("code") {
        Some(Value::Number(n)) => n.as_u64() == Some(2),
        // The enum's number as a string ("2", as OTLP JSON writes 64-bit
        // integers), its name in any case ("Error" from some SDKs).
        Some(Value::String(s)) => {
            s.trim() == "2"
                || s.eq_ignore_ascii_case("STATUS_CODE_ERROR")
                || s.eq_ignore_ascii_case("ERROR")
        }
        _ => false,
    };
    if !error {
        return error_type.map(|t| {
            format!(
                "the span has `error.type` {} (set only when the operation failed): a failed call is not the model's answer",
                bound(t)
            )
        });
    }
    let mut what = Vec::new();
    if let Some(m) = str_of(status, "message").filter(|m| !m.is_empty()) {
        what.push(bound(m));
    }
    if let Some(t) = error_type {
        what.push(format!("error.type {}", bound(t)));
    }
    let what = if what.is_empty() {
        String::new()
    } else {
        format!(" ({})", what.join("; "))
    };
    Some(format!(
        "the span's status is ERROR{what}: a failed call is not the model's answer"
    ))
}

/// How many attributes the span dropped (`droppedAttributesCount`, a
/// number or, as some exporters write 32-bit integers, its text); 0 when
/// it does not say.
fn dropped_attributes(span: &Value) -> u64 {
    match span.get("droppedAttributesCount") {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// Why a span that dropped attributes is not read, when it may be a model
/// call: an exchange, a model call by its operation name, or — the name
/// itself may be what was dropped — a span without one that names a model.
///
/// An SDK drops the attributes past its limit (128 by default), and which
/// ones depends on the SDK (the oldest, or the newest): any `gen_ai.*`
/// attribute may be gone — a call's arguments (read as `{}` after a clean
/// finish), a whole call, a message, a finish reason, the tool
/// definitions. What is left cannot be trusted whole, and a call judged
/// from it may execute with less than the model sent; the span is refused
/// as an unreadable one is, the document's other spans still import.
fn dropped(span: &Value, attrs: &BTreeMap<String, Value>, exchange: bool) -> Option<String> {
    let count = dropped_attributes(span);
    let model_named = !attrs.contains_key("gen_ai.operation.name")
        && ["gen_ai.request.model", "gen_ai.response.model"]
            .iter()
            .any(|k| attrs.contains_key(*k));
    (count > 0 && (exchange || is_model_call(attrs) || model_named)).then(|| {
        format!(
            "the span dropped {count} attribute(s) (`droppedAttributesCount`, an SDK's attribute limit): any of its `gen_ai.*` attributes may be lost — a call's arguments, a whole call, a message — so its calls cannot be read whole: nothing of this span is imported (raise the limit, `OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`)"
        )
    })
}

/// Whether a span is a model call (`gen_ai.operation.name` of one), so
/// that its failure is reported even when it recorded no output.
fn is_model_call(attrs: &BTreeMap<String, Value>) -> bool {
    matches!(
        attrs.get("gen_ai.operation.name").and_then(Value::as_str),
        Some("chat" | "text_completion" | "generate_content")
    )
}

/// Span events that carry a model's completion in the event-based GenAI
/// conventions: the older `gen_ai.content.completion` (its
/// `gen_ai.completion` attribute) and the per-message `gen_ai.choice` and
/// `gen_ai.assistant.message`. Their shapes vary by instrumentation and
/// version, and they are not read.
const COMPLETION_EVENTS: [&str; 3] = [
    "gen_ai.content.completion",
    "gen_ai.choice",
    "gen_ai.assistant.message",
];

/// Why a span without output messages that this importer reads is still a
/// model call whose answer was not read (`None`: not a model call — a tool
/// execution, an agent step, an HTTP span).
///
/// A model call (`gen_ai.operation.name` of one), or any span with a
/// completion event, is never skipped in silence: beside the spans that
/// import it would go unnoticed, and the import would claim a whole trace
/// that it did not read.
fn unread(span: &Value, attrs: &BTreeMap<String, Value>) -> Option<String> {
    let events: Vec<&str> = span
        .get("events")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| str_of(e, "name"))
        .filter(|n| COMPLETION_EVENTS.contains(n))
        .collect();
    if let Some(first) = events.first() {
        return Some(format!(
            "its completion is in span events (`{first}`), a convention this importer does not read: nothing of this span is imported (export `gen_ai.output.messages` or `gen_ai.completion.N.*` attributes)"
        ));
    }
    if !is_model_call(attrs) {
        return None;
    }
    if let Some(why) = attrs.get("toolgate.content.omitted") {
        let why = why.as_str().map_or_else(|| why.to_string(), str::to_string);
        let why: String = why.chars().take(100).collect();
        return Some(format!(
            "a model call whose content was omitted (`toolgate.content.omitted` {why}): no output to import"
        ));
    }
    Some(
        "a model call that recorded no output messages (content capture is opt-in: `gen_ai.output.messages` or `gen_ai.completion.N.*`): no output to import"
            .into(),
    )
}

/// One span's transcripts, or why that span cannot be read.
pub(crate) type SpanResult = Result<(String, Map<String, Value>), String>;

/// One OTLP export document: one transcript per output message of each
/// GenAI span, and an error for each GenAI span that cannot be read (its
/// status is ERROR, it dropped attributes ([`dropped`]), its messages or tool definitions are unreadable, a
/// model call's output is not in a convention read here — [`unread`]) —
/// the other spans still import. A document without any GenAI span is one
/// error.
pub(crate) fn document(obj: &Map<String, Value>, base: &str) -> Vec<SpanResult> {
    let mut out = Vec::new();
    for span in spans(obj) {
        let attrs = attributes(span);
        let span_id = str_of(span, "spanId").unwrap_or("");
        let named = |why: String| -> SpanResult {
            let id: String = span_id.chars().take(64).collect();
            Err(format!("span `{id}`: {why}"))
        };
        let old_present = !indexed(&attrs, "gen_ai.completion.").is_empty();
        let messages = match new_messages(&attrs) {
            // Both conventions: their calls must agree (or the span is
            // refused, [`disagreement`]); the new one is read.
            Some(Ok((m, new))) if old_present => match old_messages(&attrs) {
                Ok((_, old)) => match disagreement(&new, &old) {
                    None => Ok((m, "gen_ai.output.messages")),
                    Some(why) => Err(why),
                },
                Err(e) => Err(e),
            },
            Some(Ok((m, _))) => Ok((m, "gen_ai.output.messages")),
            Some(Err(e)) => Err(e),
            None => old_messages(&attrs).map(|(m, _)| (m, "gen_ai.completion")),
        };
        let exchange = !matches!(&messages, Ok((m, _)) if m.is_empty());
        if let Some(why) = failed(span, &attrs).filter(|_| exchange || is_model_call(&attrs)) {
            out.push(named(why));
            continue;
        }
        if let Some(why) = dropped(span, &attrs, exchange) {
            out.push(named(why));
            continue;
        }
        let (messages, convention) = match messages {
            Ok(m) => m,
            Err(e) => {
                out.push(named(e));
                continue;
            }
        };
        if messages.is_empty() {
            if let Some(why) = unread(span, &attrs) {
                out.push(named(why));
            }
            continue;
        }
        let tools = match tools(&attrs) {
            Ok(t) => t,
            Err(e) => {
                out.push(named(e));
                continue;
            }
        };
        let model = attrs
            .get("gen_ai.response.model")
            .or_else(|| attrs.get("gen_ai.request.model"))
            .and_then(Value::as_str);
        let raw_text = attrs.get("toolgate.output.raw") == Some(&Value::Bool(true));
        let several = messages.len() > 1;
        let span_base = if span_id.is_empty() {
            base.to_string()
        } else {
            format!("{base}:{span_id}")
        };
        for (i, read) in messages.into_iter().enumerate() {
            // As the chat importer refuses one choice of several: this
            // message, not the span's others.
            let m = match read {
                Ok(m) => m,
                Err(why) if several => {
                    out.push(named(format!("output message {i} {why}")));
                    continue;
                }
                Err(why) => {
                    out.push(named(format!("the output message {why}")));
                    continue;
                }
            };
            let id = if several {
                format!("{span_base}#{i}")
            } else {
                span_base.clone()
            };
            let mut import = import_info(Kind::Otel);
            if raw_text {
                import.insert("raw_text".into(), json!(true));
                import.remove("note");
            }
            import.insert("convention".into(), json!(convention));
            if let Some(name) = str_of(span, "name") {
                import.insert("span".into(), json!(name));
            }
            if let Some(received) = m.truncated_input {
                import.insert("truncated_input".into(), received);
            }
            if m.filled {
                add_note(
                    &mut import,
                    NoteKind::ArgumentsAbsent,
                    "a tool call recorded without `arguments` (absent or null) in a message that finished cleanly: read as `{}`".into(),
                );
            }
            let mut rec = Map::new();
            rec.insert("id".into(), json!(id));
            if let Some(m) = model {
                rec.insert("model".into(), json!(m));
            }
            if several {
                rec.insert("sample".into(), json!(i));
            }
            if let Some(tools) = &tools {
                rec.insert("tools".into(), Value::Array(tools.clone()));
            }
            rec.insert("output".into(), json!(m.output));
            if let Some(r) = m.reasoning {
                rec.insert("reasoning".into(), json!(r));
            }
            // A raw-text span without calls is an answer whose server sent
            // none: no `tool_calls` (as the proxy records it), so `native`
            // is not replayed on an empty list.
            if !(raw_text && m.calls.is_empty()) {
                rec.insert("tool_calls".into(), Value::Array(m.calls));
            }
            if let Some(r) = m.finish_reason {
                rec.insert("finish_reason".into(), json!(r));
            }
            rec.insert(super::IMPORT_MEMBER.into(), Value::Object(import));
            out.push(Ok((id, rec)));
        }
    }
    if out.is_empty() {
        out.push(Err(
            "no GenAI span with output messages (gen_ai.output.messages or gen_ai.completion.N.*)"
                .into(),
        ));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn span(extra: Value) -> Map<String, Value> {
        let mut attrs = vec![
            json!({"key": "gen_ai.output.messages", "value": {"stringValue":
            "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"<tool_call>{}</tool_call>\"}]}]"}}),
        ];
        if !extra.is_null() {
            attrs.push(extra);
        }
        json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s", "attributes": attrs}]}]}]})
            .as_object()
            .unwrap()
            .clone()
    }

    fn document(obj: &Map<String, Value>, base: &str) -> Vec<(String, Map<String, Value>)> {
        super::document(obj, base)
            .into_iter()
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn a_span_without_tool_definitions_imports_with_tools_unknown() {
        let out = document(&span(Value::Null), "f");
        assert!(out[0].1.get("tools").is_none(), "{:?}", out[0].1);
        let defs = json!({"key": "gen_ai.tool.definitions", "value": {"stringValue": "[]"}});
        let out = document(&span(defs), "f");
        assert_eq!(out[0].1["tools"], json!([]), "declared: no tools");
    }

    #[test]
    fn toolgate_s_raw_output_spans_import_as_raw_text() {
        let out = document(&span(Value::Null), "f");
        assert_eq!(out[0].1["import"]["raw_text"], json!(false));
        let raw = json!({"key": "toolgate.output.raw", "value": {"boolValue": true}});
        let out = document(&span(raw), "f");
        assert_eq!(out[0].1["import"]["raw_text"], json!(true));
        assert!(out[0].1["import"].get("note").is_none());
        assert!(out[0].1.get("tool_calls").is_none(), "no calls, no list");
    }
}
