//! OpenAI Responses API.
//!
//! # Wire format
//!
//! A pair `{"request": {…}, "response": {…}}` or a bare response
//! (`"object": "response"`). Request: flat `tools[]` (`{"type": "function",
//! "name", "description", "parameters"}`; built-in tools such as
//! `web_search` are left out), `tool_choice` (`"none"`, `"auto"`,
//! `"required"`, `{"type": "function", "name"}`), `parallel_tool_calls`,
//! `max_output_tokens`. Without a request's `tools`, or with `tools: []`
//! (a stored `prompt`, or no request), the response's own echoed `tools`,
//! when not empty, are the tool list (`import.tools_from: "response"`). Response `output[]` items: `reasoning` (`summary[]`
//! and `content[]` texts → `reasoning`), `message` (`output_text` parts →
//! `output`; `refusal` noted), `function_call` (`call_id`, `name`,
//! `arguments` string → a native call; an item whose own `status` is
//! `incomplete` was cut off: its `arguments` is `""` (`truncation`), what
//! was received kept as `import.truncated_input`, as for Anthropic),
//! `custom_tool_call` (refused, see below). The Responses API has no
//! `finish_reason`: it is derived — `length` when `incomplete_details.reason`
//! is `max_output_tokens`, `content_filter` when the response is otherwise
//! `incomplete`, `tool_calls` when a function call exists, else `stop` —
//! and marked `finish_reason_derived`. An `incomplete` response was stopped
//! by the provider: a function call that ends its output is cut
//! (`truncation`, [`super::stopped_early`]) whatever the item's status.
//!
//! A `custom_tool_call` item (a call of a `custom` tool: `name` and an
//! `input` that is free text, often grammar-constrained) makes the document
//! a load error naming the call: SPEC §1 normalizes every call to an
//! arguments *object*, and no label says "cannot be judged". Reading the
//! input as JSON would label the model `malformed_json` for text it was
//! asked to write; wrapping it (`{"input": …}`) would add a key the model
//! never wrote; skipping it would make a call the model made a `no_call`.
//! The built-in tools the client runs (`computer_call`, `shell_call`,
//! `local_shell_call`, `apply_patch_call`) are refused the same way, for
//! the same reason: their `action` is not a function's arguments object.
//! Other items that are not text, reasoning or `function_call` (server-side
//! built-in tool calls such as `web_search_call` and `mcp_call`, their
//! outputs, MCP tool lists) are skipped with the note `items_skipped` — but
//! a response whose server-side calls are neither beside a `function_call`
//! nor followed by message text is a load error naming them
//! ([`super::server_calls_only`]), for the same reason: skipped, the
//! model's calls would read as its `no_call`. With a text answer after
//! them, that text is the answer; text before them is a preamble.

use super::{
    Converted, Kind, NoteKind, Pair, Reply, add_note, error_what, expect_from_choice, import_info,
    model_of, native_call, note_usage_and_id, pair, str_of, tool_def,
};
use serde_json::{Map, Value, json};

/// One document: a pair or a bare response.
pub(crate) fn document(obj: &Map<String, Value>, base: &str) -> Converted {
    let Pair {
        request,
        response,
        carry,
        id,
        ..
    } = pair(obj, base)?;
    let request = request.as_deref();
    if let Some(why) = not_an_answer(&response) {
        return Err(why);
    }
    let items = response
        .get("output")
        .and_then(Value::as_array)
        .ok_or("the response has no `output` array")?;
    let mut import = import_info(Kind::Responses);
    let mut tools = Vec::new();
    let mut expect = None;
    // The request's tools; without them (a stored `prompt` holds them, or
    // no request was captured) the ones the response echoes, which are the
    // tools the run had. An empty echo is not read: servers echo `[]` for
    // a request they were given no tool list in. An empty declared list
    // does not hide a non-empty echo: a client sends `tools: []` beside a
    // stored `prompt` whose tools the run had, and the echo names them
    // (read as `[]`, every call would be `wrong_tool`).
    let declared = match request {
        Some(req) => super::tool_list(req, "tools")?,
        None => None,
    };
    let echoed = response
        .get("tools")
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty() && declared.is_none_or(<[Value]>::is_empty));
    if echoed.is_some() {
        import.insert("tools_from".into(), json!("response"));
    }
    let tools_known = request.is_some() || echoed.is_some();
    if let Some(defs) = echoed.map(Vec::as_slice).or(declared) {
        let mut skipped = Vec::new();
        for t in defs {
            match (str_of(t, "type"), str_of(t, "name")) {
                (Some("function") | None, Some(name)) => {
                    tools.push(tool_def(name, t.get("description"), t.get("parameters")))
                }
                (kind, _) => skipped.push(json!(kind.unwrap_or("?"))),
            }
        }
        if !skipped.is_empty() {
            import.insert("builtin_tools_skipped".into(), Value::Array(skipped));
        }
    }
    // A named tool or `allowed_tools` narrows the allowlist
    // ([`crate::choice::narrowing`]): the request's choice, else the one
    // the response echoes (the run's).
    let choice = request
        .and_then(|r| r.get("tool_choice"))
        .or_else(|| response.get("tool_choice"));
    if let Some(allowed) = crate::choice::narrowing(choice)? {
        let left_out = super::keep_allowed_tools(&mut tools, &allowed);
        if !left_out.is_empty() {
            import.insert("tools_not_allowed".into(), Value::Array(left_out));
        }
    }
    // `parallel_tool_calls: false` lets one call at most execute
    // ([`super::one_call_of`]): the request's, else the response's echo
    // (the run's), as for the choice.
    let one_call = super::one_call_of(
        request
            .and_then(|r| r.get("parallel_tool_calls"))
            .or_else(|| response.get("parallel_tool_calls")),
    )?;
    if let Some(req) = request {
        let mut params = Map::new();
        if let Some(choice) = req.get("tool_choice") {
            params.insert("tool_choice".into(), choice.clone());
            let decided = match (choice.as_str(), str_of(choice, "name")) {
                (Some("none"), _) => Some(Err(())),
                (_, Some(name)) => Some(Ok(name)),
                _ => None,
            };
            if matches!(decided, Some(Ok(_))) {
                import.insert("forced_tool".into(), json!(true));
            }
            expect = expect_from_choice(decided);
        }
        for key in ["parallel_tool_calls", "max_output_tokens"] {
            if let Some(v) = req.get(key) {
                params.insert(key.into(), v.clone());
            }
        }
        if !params.is_empty() {
            import.insert("request".into(), Value::Object(params));
        }
    }
    let mut output = String::new();
    let mut reasoning: Option<String> = None;
    let mut calls = Vec::new();
    let mut skipped: Vec<&str> = Vec::new();
    let mut server_calls = Vec::new();
    // Whether a text answer follows the last server-side call.
    let mut answered = false;
    for (i, item) in items.iter().enumerate() {
        match str_of(item, "type") {
            Some("reasoning") => {
                for key in ["summary", "content"] {
                    for part in item
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(t) = str_of(part, "text") {
                            let r = reasoning.get_or_insert_with(String::new);
                            if !r.is_empty() {
                                r.push('\n');
                            }
                            r.push_str(t);
                        }
                    }
                }
            }
            Some("message") => {
                let parts = match item.get("content") {
                    None | Some(Value::Null) => &[][..],
                    Some(Value::Array(parts)) => parts.as_slice(),
                    Some(_) => {
                        return Err(format!("`output[{i}].content` must be a list of parts"));
                    }
                };
                for (j, part) in parts.iter().enumerate() {
                    match str_of(part, "type") {
                        Some("output_text") => {
                            let text = str_of(part, "text").unwrap_or("");
                            answered |= !text.trim().is_empty();
                            output.push_str(text);
                        }
                        Some("refusal") => {
                            import.insert(
                                "refusal".into(),
                                part.get("refusal").cloned().unwrap_or(Value::Null),
                            );
                        }
                        // Audio, or a part of an API newer than this
                        // reader: text the model sent that cannot be read.
                        other => {
                            return Err(format!(
                                "`output[{i}].content[{j}]` is not a text part (type {}): the message cannot be read whole",
                                other.unwrap_or("missing")
                            ));
                        }
                    }
                }
            }
            Some("function_call") => {
                let name = str_of(item, "name").unwrap_or("");
                let id = str_of(item, "call_id").or_else(|| str_of(item, "id"));
                let mut call = native_call(id, name, item.get("arguments").unwrap_or(&Value::Null));
                // The item says it was cut (the output token limit, or a
                // filter, ended it): its arguments, even when they parse,
                // are not what the model meant to send. As for Anthropic's
                // cut `tool_use`, they become `""`, which SPEC §5 rule 5
                // labels `truncation` for a native call, so nothing
                // executes; what was received is kept in
                // `import.truncated_input` (the API cuts one item, the last
                // being generated: with several, the last one's is kept).
                // Only `completed` is a finished call: `incomplete`, and
                // `in_progress` in a response that stopped while the call
                // was generated, are cut; an item without `status` is read
                // as finished, as older servers send it.
                if item
                    .get("status")
                    .is_some_and(|s| s.as_str() != Some("completed"))
                    && let Some(Value::Object(function)) = call.get_mut("function")
                    && let Some(received) = function.insert("arguments".into(), json!(""))
                {
                    import.insert("truncated_input".into(), received);
                }
                calls.push(call);
            }
            Some("custom_tool_call") => return Err(custom_tool_call(i, item)),
            Some(t) if CLIENT_RUN_CALLS.contains(&t) => return Err(client_run_call(i, t, item)),
            Some(other) => {
                // A built-in tool's call (`web_search_call`, `mcp_call`, …),
                // or an MCP call awaiting approval; not their outputs or an
                // MCP tool list.
                if other.ends_with("_call") || other == "mcp_approval_request" {
                    server_calls.push(super::server_call_name(other, item));
                    answered = false;
                }
                if !skipped.contains(&other) {
                    skipped.push(other);
                }
            }
            None => return Err(format!("`output[{i}]` has no `type`")),
        }
    }
    // Server calls are skipped only beside a function call, or before a
    // text answer (the model searched, then answered): text before them is
    // a preamble, and the model's turn was the call.
    if calls.is_empty() && !server_calls.is_empty() && !answered {
        return Err(super::server_calls_only(&server_calls));
    }
    if !skipped.is_empty() {
        add_note(
            &mut import,
            NoteKind::ItemsSkipped,
            format!(
                "output items not read as calls or text: {} (only `function_call` items are native calls)",
                skipped.join(", ")
            ),
        );
    }
    // An `incomplete` response was stopped by the provider (its output
    // limit, a content filter), whatever else it holds: its reason is the
    // finish reason even beside function calls, and a function call that
    // ends the output is cut whatever its status says, as every importer
    // cuts one after a stop by the provider ([`super::stopped_early`]).
    let reason = response
        .get("incomplete_details")
        .and_then(|d| str_of(d, "reason"));
    let incomplete = reason.is_some() || str_of(&response, "status") == Some("incomplete");
    let finish_reason = if reason == Some("max_output_tokens") {
        "length"
    } else if incomplete {
        "content_filter"
    } else if !calls.is_empty() {
        "tool_calls"
    } else {
        "stop"
    };
    if incomplete && items.last().and_then(|i| str_of(i, "type")) == Some("function_call") {
        super::cut_last_call_into(&mut calls, &mut import);
    }
    import.insert("finish_reason_derived".into(), json!(true));
    if let Some(s) = str_of(&response, "status") {
        import.insert("status".into(), json!(s));
    }
    note_usage_and_id(&mut import, &response);
    Reply {
        model: model_of(&response, request),
        tools: tools_known.then_some(tools),
        output,
        reasoning,
        calls,
        finish_reason: Some(finish_reason.to_string()),
        expect,
        one_call,
        import,
    }
    .record(id, carry)
}

/// Why a Responses object is not an answer to judge, when it is not: a
/// `status` other than `completed` or `incomplete` (`failed`,
/// `in_progress`, `queued`, `cancelled`: the run did not finish, or it
/// errored), or a non-null `error` whatever the status. A provider error
/// never becomes a transcript (its `no_call` would be blamed on the model).
/// An absent `status` is not said, and is read.
pub(crate) fn not_an_answer(response: &Value) -> Option<String> {
    let error = response.get("error").filter(|e| !e.is_null());
    let what = error
        .map(|e| format!(": {}", error_what(e)))
        .unwrap_or_default();
    match response.get("status") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "completed" || s == "incomplete" => {}
        Some(Value::String(s)) if s == "failed" => {
            return Some(format!("the response failed{what}"));
        }
        Some(Value::String(s)) => {
            let s: String = s.chars().take(64).collect();
            return Some(format!(
                "the response's status is {s:?}, not a finished answer (`completed` or `incomplete`){what}"
            ));
        }
        Some(_) => return Some("the response's `status` must be a string".into()),
    }
    error.map(|_| format!("the response carries an error{what}"))
}

/// Built-in tools whose calls the client runs, not OpenAI: the computer
/// use, shell, local shell and apply-patch tools. Their calls are the
/// model's answer to the client, never server-side.
const CLIENT_RUN_CALLS: &[&str] = &[
    "computer_call",
    "shell_call",
    "local_shell_call",
    "apply_patch_call",
];

/// Whether an output item of type `kind` is a call the client runs (and a
/// streaming client may have run as the events arrived): a `function_call`,
/// a `custom_tool_call`, or a client-run built-in call
/// ([`CLIENT_RUN_CALLS`]). Server-side built-in calls are not: the provider
/// ran them.
pub(crate) fn is_client_call(kind: &str) -> bool {
    matches!(kind, "function_call" | "custom_tool_call") || CLIENT_RUN_CALLS.contains(&kind)
}

/// The reason a document with a client-run built-in call ([`CLIENT_RUN_CALLS`])
/// of type `kind` at `output[i]` is not imported: the model called a tool
/// the client runs, but its `action` is the built-in tool's, not a function
/// tool's arguments object, and no label says "cannot be judged"; skipped,
/// the call would be the model's `no_call` (module docs).
fn client_run_call(i: usize, kind: &str, item: &Value) -> String {
    let call = call_id_shown(item);
    format!(
        "`output[{i}]` is a `{kind}`{call}: a call of a built-in tool the client runs (not the \
         provider), whose action is not a function tool's arguments object: the call cannot be \
         judged, and the response is not imported rather than read as `no_call`"
    )
}

/// ` (`ID`)` of an output item's `call_id` (else `id`), bounded: for a
/// message that names the item; empty without one.
pub(crate) fn call_id_shown(item: &Value) -> String {
    str_of(item, "call_id")
        .or_else(|| str_of(item, "id"))
        .map(|id| {
            let id: String = id.chars().take(64).collect();
            format!(" (`{id}`)")
        })
        .unwrap_or_default()
}

/// The reason a document with a `custom_tool_call` at `output[i]` is not
/// imported (module docs).
fn custom_tool_call(i: usize, item: &Value) -> String {
    // The name is the model's (untrusted): bounded, shown quoted.
    let name: String = str_of(item, "name")
        .unwrap_or("")
        .chars()
        .take(64)
        .collect();
    let call = call_id_shown(item);
    format!(
        "`output[{i}]` is a `custom_tool_call` of {name:?}{call}: a custom tool's input is free text, \
         not a JSON arguments object (SPEC §1): the call cannot be judged, and the response is not \
         imported rather than read as `no_call`"
    )
}
