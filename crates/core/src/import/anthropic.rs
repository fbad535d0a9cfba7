//! Anthropic Messages.
//!
//! # Wire format
//!
//! A pair `{"request": {…}, "response": {…}}` or a bare response
//! (`"type": "message"`). Request: `tools[]` as `{"name", "description",
//! "input_schema"}`; Anthropic-defined client tools (`{"type":
//! "bash_20250124", "name": "bash"}`, `text_editor_*`, `computer_*`,
//! `memory_*`: no `input_schema`, run by the client) are kept with their
//! schema ([`anthropic_defined`]) and named in
//! `import.anthropic_defined_tools`; server tools (`web_search_*`,
//! `code_execution_*`, …: run by Anthropic) are left out, named in
//! `import.server_tools_skipped`. `tool_choice` `{"type":
//! "auto"|"any"|"tool"|"none", "name", "disable_parallel_tool_use"}`
//! (`true`: at most one call may execute, written as the transcript's
//! `parallel_tool_calls: false`, [`super::one_call_of_anthropic`]),
//! `max_tokens`. Response `content[]` blocks: `text` → `output`,
//! `thinking` → `reasoning` (`redacted_thinking` is noted), `tool_use`
//! (`id`, `name`, object `input`) → a native call whose `arguments` is the
//! input serialized (an `input` that is not an object is refused: the API
//! always sends one). Server tool blocks (`server_tool_use`, `mcp_tool_use`,
//! `*_tool_result`) are skipped with the note `items_skipped` beside a
//! `tool_use` or before a text answer; a message whose server tool calls
//! are neither (no `tool_use`, no text after them: text before them is a
//! preamble) is a load error naming them, and a `pause_turn` stop (the
//! answer is not there yet) is a load error
//! ([`super::server_calls_only`]); any other
//! block (`image`, …) makes the document unreadable. An error body
//! (`{"type": "error", "error"}`) is reported as the error it is. `stop_reason`: `end_turn`/`stop_sequence` → `stop`,
//! `max_tokens` and `model_context_window_exceeded` → `length`, `tool_use`
//! → `tool_calls`; others are kept. With `max_tokens` (or the context
//! window) and a `tool_use` as the last block, that call is cut off: its
//! `arguments` is `""` (`truncation`), its received input kept as
//! `import.truncated_input`. So is the last `tool_use` of a message without a
//! `stop_reason` (null or absent: not a finished message, but the snapshot
//! of a stream cut off), marked `import.stop_reason_missing`.
//! Anthropic parses tool calls server-side: only `native` judges these.

use super::{
    Converted, Kind, NoteKind, Reply, add_note, expect_from_choice, import_info, model_of,
    native_call, note_usage_and_id, pair, str_of, tool_def,
};
use serde_json::{Map, Value, json};

/// One document: a pair or a bare message.
pub(crate) fn document(obj: &Map<String, Value>, base: &str) -> Converted {
    let p = pair(obj, base)?;
    records(
        p.request.as_deref(),
        &p.response,
        p.carry,
        &p.id,
        Kind::Anthropic,
    )
}

/// The transcript object of one message.
pub(crate) fn records(
    request: Option<&Value>,
    message: &Value,
    carry: Map<String, Value>,
    base: &str,
    kind: Kind,
) -> Converted {
    if message.get("content").is_none()
        && let Some(why) = super::error_body(message)
    {
        return Err(why);
    }
    let content = message
        .get("content")
        .and_then(Value::as_array)
        .ok_or("the message has no `content` array")?;
    let mut import = import_info(kind);
    let mut tools = Vec::new();
    let mut expect = None;
    // `tool_choice.disable_parallel_tool_use: true` lets one call at most
    // execute: the transcript's `parallel_tool_calls: false`
    // ([`super::one_call_of_anthropic`]).
    let one_call = super::one_call_of_anthropic(request.and_then(|r| r.get("tool_choice")))?;
    if let Some(req) = request {
        if let Some(items) = super::tool_list(req, "tools")? {
            let mut skipped = Vec::new();
            let mut defined = Vec::new();
            for t in items {
                match (str_of(t, "name"), t.get("input_schema")) {
                    (Some(name), Some(schema)) => {
                        tools.push(tool_def(name, t.get("description"), Some(schema)))
                    }
                    (Some(name), None) if let Some(schema) = anthropic_defined(t) => {
                        tools.push(tool_def(name, None, Some(&schema)));
                        defined.push(json!({"name": name, "type": str_of(t, "type")}));
                    }
                    (name, _) => skipped.push(json!(name.unwrap_or("?"))),
                }
            }
            if !defined.is_empty() {
                import.insert("anthropic_defined_tools".into(), Value::Array(defined));
            }
            if !skipped.is_empty() {
                import.insert("server_tools_skipped".into(), Value::Array(skipped));
            }
        }
        if let Some(choice) = req.get("tool_choice") {
            let mut params = Map::new();
            params.insert("tool_choice".into(), choice.clone());
            let decided = match str_of(choice, "type") {
                Some("none") => Some(Err(())),
                Some("tool") => str_of(choice, "name").map(Ok),
                _ => None,
            };
            if matches!(decided, Some(Ok(_))) {
                import.insert("forced_tool".into(), json!(true));
            }
            expect = expect_from_choice(decided);
            if let Some(m) = req.get("max_tokens") {
                params.insert("max_tokens".into(), m.clone());
            }
            import.insert("request".into(), Value::Object(params));
        } else if let Some(m) = req.get("max_tokens") {
            import.insert("request".into(), json!({"max_tokens": m}));
        }
    }
    let mut output = String::new();
    let mut reasoning: Option<String> = None;
    let mut calls = Vec::new();
    let mut skipped: Vec<&str> = Vec::new();
    let mut server_calls = Vec::new();
    // `pause_turn`: Anthropic paused a long-running turn of its server
    // tools; the client sends the message back for the answer, which this
    // one does not hold. Read as an answer, the model would be `no_call`.
    if str_of(message, "stop_reason") == Some("pause_turn") {
        return Err(
            "the message stopped with `pause_turn`: Anthropic paused the turn (its server tools \
             were running) before the answer, which the capture does not hold; it is not \
             imported rather than read as `no_call`"
                .into(),
        );
    }
    // Whether a text answer follows the last server tool call.
    let mut answered = false;
    for (i, block) in content.iter().enumerate() {
        match str_of(block, "type") {
            Some("text") => {
                let text = str_of(block, "text").unwrap_or("");
                answered |= !text.trim().is_empty();
                output.push_str(text);
            }
            Some("thinking") => reasoning
                .get_or_insert_with(String::new)
                .push_str(str_of(block, "thinking").unwrap_or("")),
            Some("redacted_thinking") => {
                import.insert("redacted_thinking".into(), json!(true));
            }
            Some("tool_use") => {
                let name = str_of(block, "name").unwrap_or("");
                let input = block.get("input").unwrap_or(&Value::Null);
                // The API always sends an object; anything else means the
                // capture is not what it returned (a string would be decoded
                // and run as if the model wrote that object). A stream's
                // `input` is its accumulated `partial_json` text by design.
                if kind == Kind::Anthropic && !input.is_object() {
                    let name: String = name.chars().take(64).collect();
                    let got = match input {
                        Value::Null if block.get("input").is_none() => "missing",
                        Value::Null => "null",
                        Value::String(_) => "a string",
                        Value::Array(_) => "an array",
                        _ => "not an object",
                    };
                    return Err(format!(
                        "`content[{i}]` (tool_use {name:?}): `input` must be an object, as the Messages API sends it, and it is {got}: the capture is not what the API returned"
                    ));
                }
                calls.push(native_call(str_of(block, "id"), name, input));
            }
            // Server tools run by Anthropic (web search, code execution,
            // MCP): not the model's calls of the request's tools; named in
            // a note beside a `tool_use` or text, a load error alone.
            Some(t)
                if t == "server_tool_use"
                    || t == "mcp_tool_use"
                    || t == "container_upload"
                    || t.ends_with("_tool_result") =>
            {
                if t == "server_tool_use" || t == "mcp_tool_use" {
                    server_calls.push(super::server_call_name(t, block));
                    answered = false;
                }
                if !skipped.contains(&t) {
                    skipped.push(t);
                }
            }
            // An image, or a block of an API newer than this reader.
            Some(t) => {
                let t: String = t.chars().take(64).collect();
                return Err(format!(
                    "`content[{i}]` is a `{t}` block, neither text, thinking, a tool call nor a server tool's: the message cannot be read whole"
                ));
            }
            None => return Err(format!("`content[{i}]` has no `type`")),
        }
    }
    let stop_reason = str_of(message, "stop_reason");
    // Stopped by the provider (the limit, its classifiers' `refusal`) with
    // a `tool_use` last: that call is cut ([`super::stopped_early`]).
    if stop_reason.is_some_and(super::stopped_early)
        && content.last().and_then(|b| str_of(b, "type")) == Some("tool_use")
        && let Some(received) = super::cut_last_call(&mut calls)
    {
        import.insert("truncated_input".into(), received);
    }
    // A message without a stop reason is not a finished one: the API sends
    // `null` only in a stream's `message_start`. Such a capture is a
    // snapshot of a stream that was cut off (an SDK's snapshot parses the
    // partial input of its last `tool_use` into a whole-looking object), so
    // that call is cut, as an unterminated stream's is.
    if kind == Kind::Anthropic
        && stop_reason.is_none()
        && content.last().and_then(|b| str_of(b, "type")) == Some("tool_use")
    {
        if let Some(received) = super::cut_last_call(&mut calls) {
            import.insert("truncated_input".into(), received);
        }
        import.insert("stop_reason_missing".into(), json!(true));
    }
    let finish_reason = stop_reason.map(|r| match r {
        "end_turn" | "stop_sequence" => "stop".to_string(),
        r if super::at_token_limit(r) => "length".to_string(),
        "tool_use" => "tool_calls".to_string(),
        other => other.to_string(),
    });
    if let Some(r) = str_of(message, "stop_reason") {
        import.insert("stop_reason".into(), json!(r));
    }
    // Server calls are skipped only beside a `tool_use`, or before a text
    // answer: text before them is a preamble ("Let me search."), not one.
    if calls.is_empty() && !server_calls.is_empty() && !answered {
        return Err(super::server_calls_only(&server_calls));
    }
    if !skipped.is_empty() {
        add_note(
            &mut import,
            NoteKind::ItemsSkipped,
            format!(
                "server tool blocks not read as calls or text: {} (only `tool_use` blocks are native calls)",
                skipped.join(", ")
            ),
        );
    }
    note_usage_and_id(&mut import, message);
    Reply {
        model: model_of(message, request),
        tools: request.map(|_| tools),
        output,
        reasoning,
        calls,
        finish_reason,
        expect,
        one_call,
        import,
    }
    .record(base.to_string(), carry)
}

/// The input schema of an Anthropic-defined client tool (`bash_*`,
/// `text_editor_*`, `computer_*`, `memory_*`), when `tool` is one: a tool
/// whose schema Anthropic defines but which the client runs, so the
/// model's `tool_use` of it is a call of the request's tools, judged as
/// any other. Only the bash tool's schema is stated (`command`, `restart`,
/// as Anthropic publishes it); the others change from version to version
/// and get the permissive `{"type": "object"}`. Server tools
/// (`web_search_*`, `web_fetch_*`, `code_execution_*`, …), which Anthropic
/// runs itself, are not these: `None`.
fn anthropic_defined(tool: &Value) -> Option<Value> {
    let kind = str_of(tool, "type")?;
    if kind.starts_with("bash_") {
        return Some(json!({"type": "object", "properties": {
            "command": {"type": "string"},
            "restart": {"type": "boolean"}}}));
    }
    ["text_editor_", "computer_", "memory_"]
        .iter()
        .any(|p| kind.starts_with(p))
        .then(|| json!({"type": "object"}))
}
