//! Captured streams: Server-Sent Events as the client received them.
//!
//! # Wire format
//!
//! OpenAI chat completions: `data: {chat.completion.chunk}` lines, a last
//! `data: [DONE]`, optionally a usage chunk with empty `choices`. Content
//! deltas are concatenated into `output` and kept as `chunks`; reasoning
//! deltas (`reasoning_content`/`reasoning`) into `reasoning`; tool-call deltas
//! are reassembled by `index` (id and name from the first fragment that has
//! them, `arguments` concatenated). A bare JSONL of chunk objects reads too.
//!
//! Anthropic Messages: `event:`/`data:` pairs — `message_start`,
//! `content_block_start`, `content_block_delta` (`text_delta`,
//! `thinking_delta`, `input_json_delta` accumulated per block `index`),
//! `message_delta` (`stop_reason`), `message_stop`.
//!
//! One file may hold several streams one after the other: `[DONE]` or
//! `message_stop` ends one. A stream's request (its tools) comes from a
//! companion `STEM.request.json` beside the file.

use super::{FailedGeneration, Kind, NoteKind, Record, add_note, anthropic, openai};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// (line, reason) of a stream line that could not be read.
pub(crate) type LineError = (Option<usize>, String);

/// One SSE payload: its line and the `data:` text (or a bare JSON line).
struct Payload<'a> {
    line: usize,
    data: &'a str,
}

fn payloads(text: &str) -> Vec<Payload<'_>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        let data = if let Some(rest) = line.strip_prefix("data:") {
            rest.strip_prefix(' ').unwrap_or(rest)
        } else if line.trim_start().starts_with('{') {
            line.trim()
        } else {
            // `event:`, `id:`, `retry:`, comments and blank lines carry no payload.
            continue;
        };
        out.push(Payload { line: i + 1, data });
    }
    out
}

/// OpenAI or Anthropic, from the first payload that says.
pub(crate) fn stream_kind(text: &str) -> Kind {
    for p in payloads(text).iter().take(8) {
        if p.data.trim() == "[DONE]" {
            return Kind::OpenaiStream;
        }
        if let Ok(v) = serde_json::from_str::<Value>(p.data) {
            if v.get("object").and_then(Value::as_str) == Some("chat.completion.chunk")
                || v.get("choices").is_some()
            {
                return Kind::OpenaiStream;
            }
            if matches!(
                v.get("type").and_then(Value::as_str),
                Some("message_start" | "content_block_start" | "content_block_delta" | "ping")
            ) {
                return Kind::AnthropicStream;
            }
        }
    }
    Kind::OpenaiStream
}

#[derive(Default)]
struct OpenaiChoice {
    content: String,
    chunks: Vec<String>,
    reasoning: Option<String>,
    calls: BTreeMap<i64, StreamedCall>,
    finish: Option<String>,
}

/// One tool call reassembled from its deltas.
#[derive(Default)]
struct StreamedCall {
    id: Option<String>,
    name: Option<String>,
    /// The concatenated `arguments` strings; `None` while every delta's
    /// `arguments` was null or absent.
    arguments: Option<String>,
}

#[derive(Default)]
struct OpenaiStream {
    first_line: Option<usize>,
    id: Option<String>,
    model: Option<String>,
    usage: Option<Value>,
    choices: BTreeMap<i64, OpenaiChoice>,
    /// The error that ended the stream carried the model's text.
    failed: Option<FailedGeneration>,
}

impl OpenaiStream {
    fn feed(&mut self, v: &Value) {
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            self.id.get_or_insert_with(|| id.to_string());
        }
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.model.get_or_insert_with(|| m.to_string());
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(choices) = v.get("choices").and_then(Value::as_array) else {
            return;
        };
        for (pos, c) in choices.iter().enumerate() {
            let index = c.get("index").and_then(Value::as_i64).unwrap_or(pos as i64);
            let acc = self.choices.entry(index).or_default();
            if let Some(f) = c.get("finish_reason").and_then(Value::as_str) {
                acc.finish = Some(f.to_string());
            }
            let Some(delta) = c.get("delta") else {
                continue;
            };
            if let Some(t) = delta.get("content").and_then(Value::as_str)
                && !t.is_empty()
            {
                acc.content.push_str(t);
                acc.chunks.push(t.to_string());
            }
            for key in ["reasoning_content", "reasoning"] {
                if let Some(t) = delta.get(key).and_then(Value::as_str) {
                    acc.reasoning.get_or_insert_with(String::new).push_str(t);
                    break;
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (k, call) in calls.iter().enumerate() {
                    let i = call
                        .get("index")
                        .and_then(Value::as_i64)
                        .unwrap_or(k as i64);
                    let entry = acc.calls.entry(i).or_default();
                    if let Some(id) = call.get("id").and_then(Value::as_str) {
                        entry.id.get_or_insert_with(|| id.to_string());
                    }
                    let f = call.get("function");
                    if let Some(name) = f.and_then(|f| f.get("name")).and_then(Value::as_str)
                        && !name.is_empty()
                    {
                        entry.name.get_or_insert_with(|| name.to_string());
                    }
                    if let Some(a) = f.and_then(|f| f.get("arguments")).and_then(Value::as_str) {
                        entry.arguments.get_or_insert_with(String::new).push_str(a);
                    }
                }
            }
        }
    }

    /// The equivalent non-streamed response, each choice's chunks, and the
    /// choices whose calls had no argument text at all but are complete.
    ///
    /// `ended`: the stream ended with `[DONE]`. A call whose every
    /// `arguments` delta was null or absent is a call without arguments
    /// (`"{}"`) when its choice is complete — `finish_reason` `tool_calls`,
    /// `function_call` or `stop`, or none in a stream that ended — and stays
    /// `""` (truncation, SPEC §9 `native`) when the stream was cut off or
    /// stopped at `length`.
    fn finish(self, ended: bool) -> (Value, BTreeMap<i64, Vec<String>>, Vec<i64>) {
        let mut chunks = BTreeMap::new();
        let mut choices = Vec::new();
        let mut without_arguments = Vec::new();
        let mut all = self.choices;
        if let Some(failed) = &self.failed {
            // The model's whole text: what was streamed before the error is
            // its beginning, or it is replaced (`chunks` still concatenate
            // to `output`, SPEC §2).
            let c = all.entry(0).or_default();
            match failed.text.strip_prefix(c.content.as_str()) {
                Some(rest) if !c.content.is_empty() => {
                    if !rest.is_empty() {
                        c.chunks.push(rest.to_string());
                    }
                }
                _ if failed.text.is_empty() => c.chunks.clear(),
                _ => c.chunks = vec![failed.text.clone()],
            }
            c.content = failed.text.clone();
        }
        for (index, c) in all {
            let complete = match c.finish.as_deref() {
                Some("tool_calls" | "function_call" | "stop") => true,
                None => ended,
                Some(_) => false,
            };
            let mut filled = false;
            let calls: Vec<Value> = c
                .calls
                .into_values()
                .map(|call| {
                    let arguments = match call.arguments {
                        Some(a) => a,
                        None if complete => {
                            filled = true;
                            "{}".to_string()
                        }
                        None => String::new(),
                    };
                    let mut out = Map::new();
                    if let Some(id) = call.id {
                        out.insert("id".into(), json!(id));
                    }
                    out.insert("type".into(), json!("function"));
                    out.insert(
                        "function".into(),
                        json!({"name": call.name.unwrap_or_default(), "arguments": arguments}),
                    );
                    Value::Object(out)
                })
                .collect();
            if filled {
                without_arguments.push(index);
            }
            let mut message = Map::new();
            message.insert("role".into(), json!("assistant"));
            message.insert("content".into(), json!(c.content));
            if let Some(r) = c.reasoning {
                message.insert("reasoning_content".into(), json!(r));
            }
            message.insert("tool_calls".into(), Value::Array(calls));
            choices.push(json!({"index": index, "message": Value::Object(message),
                "finish_reason": c.finish}));
            chunks.insert(index, c.chunks);
        }
        let mut response = Map::new();
        if let Some(id) = self.id {
            response.insert("id".into(), json!(id));
        }
        if let Some(m) = self.model {
            response.insert("model".into(), json!(m));
        }
        response.insert("choices".into(), Value::Array(choices));
        if let Some(u) = self.usage {
            response.insert("usage".into(), u);
        }
        (Value::Object(response), chunks, without_arguments)
    }
}

/// Every OpenAI stream of a capture file, converted.
pub(crate) fn openai_streams(
    text: &str,
    request: Option<&Value>,
) -> Vec<Result<Record, LineError>> {
    let mut out = Vec::new();
    let mut streams: Vec<OpenaiStream> = Vec::new();
    let mut current = OpenaiStream::default();
    for p in payloads(text) {
        if p.data.trim() == "[DONE]" {
            if current.first_line.is_some() {
                streams.push(std::mem::take(&mut current));
            }
            continue;
        }
        match serde_json::from_str::<Value>(p.data) {
            Ok(v) if v.is_object() => {
                if let Some(failed) = v.get("error").and_then(FailedGeneration::of) {
                    // The error ends the stream; the text it carries is the
                    // model's output (noted on the transcript).
                    current.first_line.get_or_insert(p.line);
                    current.failed = Some(failed);
                    streams.push(std::mem::take(&mut current));
                    continue;
                }
                if let Some(e) = v.get("error") {
                    out.push(Err((
                        Some(p.line),
                        format!("the stream reports an error: {e}"),
                    )));
                    continue;
                }
                current.first_line.get_or_insert(p.line);
                current.feed(&v);
            }
            Ok(_) => out.push(Err((Some(p.line), "the chunk is not a JSON object".into()))),
            Err(e) => out.push(Err((Some(p.line), format!("not valid JSON: {e}")))),
        }
    }
    let mut ended = true;
    if current.first_line.is_some() {
        ended = false;
        streams.push(current);
    }
    let count = streams.len();
    for (n, stream) in streams.into_iter().enumerate() {
        let line = stream.first_line;
        let unterminated = !ended && n + 1 == count;
        let suffix = if count > 1 {
            format!(":{}", line.unwrap_or(0))
        } else {
            String::new()
        };
        let failed = stream.failed.as_ref().map(|f| f.what.clone());
        let (response, chunks, without_arguments) = stream.finish(!unterminated);
        match openai::chat_records(request, &response, Map::new(), &suffix, Kind::OpenaiStream) {
            Ok(records) => {
                for (i, (id, mut object)) in records.into_iter().enumerate() {
                    let index = object
                        .get("sample")
                        .and_then(Value::as_i64)
                        .unwrap_or(i as i64);
                    let parts = chunks.get(&index).cloned().unwrap_or_default();
                    object.insert("chunks".into(), json!(parts));
                    if let Some(Value::Object(info)) = object.get_mut("import") {
                        if request.is_none() {
                            info.insert(
                                "note".into(),
                                json!("no STEM.request.json beside the stream: tools unknown"),
                            );
                        }
                        if unterminated {
                            info.insert("unterminated".into(), json!(true));
                        }
                        if let Some(what) = failed.as_ref().filter(|_| index == 0) {
                            add_note(info, NoteKind::FailedGeneration, FailedGeneration::note(what));
                        }
                        if without_arguments.contains(&index) {
                            add_note(info, NoteKind::ArgumentsAbsent, "a complete streamed call carried no `arguments` text (null or absent in every delta): read as `{}`".into());
                        }
                    }
                    out.push(Ok(Record { line, id, object }));
                }
            }
            Err(reason) => out.push(Err((line, reason))),
        }
    }
    out
}

#[derive(Default)]
struct AnthropicStream {
    first_line: Option<usize>,
    message: Map<String, Value>,
    blocks: BTreeMap<i64, (Map<String, Value>, String)>,
    chunks: Vec<String>,
    stop_reason: Option<Value>,
}

impl AnthropicStream {
    fn feed(&mut self, v: &Value) {
        let index = v.get("index").and_then(Value::as_i64).unwrap_or(0);
        match v.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                if let Some(Value::Object(m)) = v.get("message") {
                    self.message = m.clone();
                }
            }
            Some("content_block_start") => {
                if let Some(Value::Object(b)) = v.get("content_block") {
                    self.blocks.insert(index, (b.clone(), String::new()));
                }
            }
            Some("content_block_delta") => {
                let Some(delta) = v.get("delta") else { return };
                let entry = self.blocks.entry(index).or_default();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(t) = delta.get("text").and_then(Value::as_str) {
                            let prev = entry.0.get("text").and_then(Value::as_str).unwrap_or("");
                            let joined = format!("{prev}{t}");
                            entry.0.insert("text".into(), json!(joined));
                            entry.0.entry("type").or_insert(json!("text"));
                            if !t.is_empty() {
                                self.chunks.push(t.to_string());
                            }
                        }
                    }
                    Some("thinking_delta") => {
                        if let Some(t) = delta.get("thinking").and_then(Value::as_str) {
                            let prev = entry
                                .0
                                .get("thinking")
                                .and_then(Value::as_str)
                                .unwrap_or("");
                            let joined = format!("{prev}{t}");
                            entry.0.insert("thinking".into(), json!(joined));
                            entry.0.entry("type").or_insert(json!("thinking"));
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(t) = delta.get("partial_json").and_then(Value::as_str) {
                            entry.1.push_str(t);
                        }
                    }
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(r) = v.get("delta").and_then(|d| d.get("stop_reason")) {
                    self.stop_reason = Some(r.clone());
                }
                if let Some(Value::Object(u)) = v.get("usage") {
                    let usage = self.message.entry("usage").or_insert_with(|| json!({}));
                    if let Value::Object(m) = usage {
                        m.extend(u.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// The equivalent non-streamed message.
    fn finish(mut self) -> (Value, Vec<String>) {
        let mut content = Vec::new();
        for (_, (mut block, json)) in self.blocks {
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                // The accumulated partial JSON, kept as text so that a stream
                // cut off mid-call stays cut off; none at all means the
                // start event's (empty) input.
                let input = if json.is_empty() {
                    block.get("input").cloned().unwrap_or(json!({}))
                } else {
                    json!(json)
                };
                block.insert("input".into(), input);
            }
            content.push(Value::Object(block));
        }
        self.message.insert("type".into(), json!("message"));
        self.message.insert("content".into(), Value::Array(content));
        if let Some(r) = self.stop_reason {
            self.message.insert("stop_reason".into(), r);
        }
        (Value::Object(self.message), self.chunks)
    }
}

/// Every Anthropic stream of a capture file, converted.
pub(crate) fn anthropic_streams(
    text: &str,
    request: Option<&Value>,
) -> Vec<Result<Record, LineError>> {
    let mut out = Vec::new();
    let mut streams = Vec::new();
    let mut current = AnthropicStream::default();
    for p in payloads(text) {
        let v = match serde_json::from_str::<Value>(p.data) {
            Ok(v) if v.is_object() => v,
            Ok(_) => {
                out.push(Err((Some(p.line), "the event is not a JSON object".into())));
                continue;
            }
            Err(e) => {
                out.push(Err((Some(p.line), format!("not valid JSON: {e}"))));
                continue;
            }
        };
        match v.get("type").and_then(Value::as_str) {
            Some("error") => {
                let e = v.get("error").cloned().unwrap_or(Value::Null);
                out.push(Err((
                    Some(p.line),
                    format!("the stream reports an error: {e}"),
                )));
            }
            Some("message_stop") => {
                if current.first_line.is_some() {
                    streams.push(std::mem::take(&mut current));
                }
            }
            _ => {
                current.first_line.get_or_insert(p.line);
                current.feed(&v);
            }
        }
    }
    if current.first_line.is_some() {
        streams.push(current);
    }
    let count = streams.len();
    for stream in streams {
        let line = stream.first_line;
        let suffix = if count > 1 {
            format!(":{}", line.unwrap_or(0))
        } else {
            String::new()
        };
        let (message, chunks) = stream.finish();
        match anthropic::records(
            request,
            &message,
            Map::new(),
            &suffix,
            Kind::AnthropicStream,
        ) {
            Ok(records) => {
                for (id, mut object) in records {
                    object.insert("chunks".into(), json!(chunks));
                    out.push(Ok(Record { line, id, object }));
                }
            }
            Err(reason) => out.push(Err((line, reason))),
        }
    }
    out
}
