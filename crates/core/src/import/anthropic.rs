//! Anthropic Messages.
//!
//! # Wire format
//!
//! A pair `{"request": {…}, "response": {…}}` or a bare response
//! (`"type": "message"`). Request: `tools[]` as `{"name", "description",
//! "input_schema"}` (server tools, which have no `input_schema`, are left
//! out), `tool_choice` `{"type": "auto"|"any"|"tool"|"none", "name"}`,
//! `max_tokens`. Response `content[]` blocks: `text` → `output`,
//! `thinking` → `reasoning` (`redacted_thinking` is noted), `tool_use`
//! (`id`, `name`, object `input`) → a native call whose `arguments` is the
//! input serialized. `stop_reason`: `end_turn`/`stop_sequence` → `stop`,
//! `max_tokens` → `length`, `tool_use` → `tool_calls`; others are kept.
//! Anthropic parses tool calls server-side: only `native` judges these.

use super::{
    Converted, Kind, Reply, expect_from_choice, import_info, model_of, native_call,
    note_usage_and_id, pair, str_of, tool_def,
};
use serde_json::{Map, Value, json};

/// One document: a pair or a bare message.
pub(crate) fn document(obj: &Map<String, Value>, base: &str) -> Converted {
    let p = pair(obj, base);
    records(p.request, &p.response, p.carry, &p.id, Kind::Anthropic)
}

/// The transcript object of one message.
pub(crate) fn records(
    request: Option<&Value>,
    message: &Value,
    carry: Map<String, Value>,
    base: &str,
    kind: Kind,
) -> Converted {
    let content = message
        .get("content")
        .and_then(Value::as_array)
        .ok_or("the message has no `content` array")?;
    let mut import = import_info(kind);
    let mut tools = Vec::new();
    let mut expect = None;
    if let Some(req) = request {
        if let Some(Value::Array(items)) = req.get("tools") {
            let mut skipped = Vec::new();
            for t in items {
                match (str_of(t, "name"), t.get("input_schema")) {
                    (Some(name), Some(schema)) => {
                        tools.push(tool_def(name, t.get("description"), Some(schema)))
                    }
                    (name, _) => skipped.push(json!(name.unwrap_or("?"))),
                }
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
    for (i, block) in content.iter().enumerate() {
        match str_of(block, "type") {
            Some("text") => output.push_str(str_of(block, "text").unwrap_or("")),
            Some("thinking") => reasoning
                .get_or_insert_with(String::new)
                .push_str(str_of(block, "thinking").unwrap_or("")),
            Some("redacted_thinking") => {
                import.insert("redacted_thinking".into(), json!(true));
            }
            Some("tool_use") => {
                let name = str_of(block, "name").unwrap_or("");
                let input = block.get("input").unwrap_or(&Value::Null);
                calls.push(native_call(str_of(block, "id"), name, input));
            }
            Some(_) => {}
            None => return Err(format!("`content[{i}]` has no `type`")),
        }
    }
    let finish_reason = str_of(message, "stop_reason").map(|r| match r {
        "end_turn" | "stop_sequence" => "stop".to_string(),
        "max_tokens" => "length".to_string(),
        "tool_use" => "tool_calls".to_string(),
        other => other.to_string(),
    });
    if let Some(r) = str_of(message, "stop_reason") {
        import.insert("stop_reason".into(), json!(r));
    }
    note_usage_and_id(&mut import, message);
    Reply {
        model: model_of(&carry, message, request),
        tools: request.map(|_| tools),
        output,
        reasoning,
        calls,
        finish_reason,
        expect,
        import,
    }
    .record(base.to_string(), carry)
}
