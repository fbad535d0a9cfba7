//! OpenAI chat completions: request/response pairs, bare responses, and
//! Batch output lines joined with their input lines.
//!
//! # Wire format
//!
//! A pair is `{"request": {…}, "response": {…}}` (other members — `id`,
//! `task`, `expect`, `labels`, … — are kept beside what was read, never
//! over it, credentials redacted: [`super::carry_over`]); a bare response is the
//! `chat.completion` object itself. From the request: `tools` (or the
//! legacy `functions`), `tool_choice` (→ `expect`), `parallel_tool_calls`,
//! `max_tokens`/`max_completion_tokens`. From each `choices[i]`: `message.
//! content` (a string, null, or an array of `{"type": "text", "text": …}`
//! parts; null beside `audio`: its `transcript`), `reasoning_content`/
//! `reasoning`, `tool_calls` and the legacy `function_call` (one set,
//! native calls first), `finish_reason`. With more than one choice, each
//! is a transcript of its own with `sample` = its `index` and id
//! `BASE#index`.
//!
//! A Batch output line is joined with its input line and its choices read
//! as a pair's. One whose body is a Responses object (a `/v1/responses`
//! batch) is read by [`super::responses`], joined the same way.

use super::{
    Companions, Converted, FailedGeneration, Kind, NoteKind, add_note, error_what,
    expect_from_choice, import_info, native_call, pair, str_of, tool_def,
};
use serde_json::{Map, Value, json};

/// Most choices one chat completion may have, streamed or not
/// ([`crate::MAX_CHOICES`]); a response with more is not read, and a
/// stream's later indexes are not read; the file says so.
pub(crate) const MAX_STREAM_CHOICES: usize = crate::MAX_CHOICES;

/// One document of a chat file: a pair or a bare response. The reasons of
/// choices refused beside good ones (`n` > 1) go to `refused`.
pub(crate) fn chat_document(
    obj: &Map<String, Value>,
    base: &str,
    refused: &mut Vec<String>,
) -> Converted {
    let p = pair(obj, base)?;
    if let Some(why) = logged_failure(obj, &p.response) {
        return Err(why);
    }
    let logged = logged_request(obj, p.paired);
    let request = p.request.as_deref().or(logged);
    if p.paired
        && p.response.get("choices").is_none()
        && let Some(failed) = p.response.get("error").and_then(FailedGeneration::of)
    {
        let mut records = failed_generation(request, &failed, p.carry, &p.id)?;
        mark_logged(&mut records, logged);
        return Ok(records);
    }
    // Checked with `choices` too: a gateway that reports an upstream
    // failure beside the text it had (`choices` and a top-level `error`)
    // sent no answer; read as one, its missing call would be the model's
    // `no_call`, or a call it cut would run.
    if let Some(why) = super::error_body(&p.response) {
        return Err(why);
    }
    // A line of another provider's format in a chat file (a mixed JSONL):
    // say what it is rather than that it lacks `choices`.
    if p.response.get("choices").is_none() {
        let other = match super::response_kind(&p.response) {
            Some(Kind::Anthropic) => Some(("an Anthropic message", "anthropic")),
            Some(Kind::Responses) => Some(("a Responses API response", "openai-responses")),
            _ => None,
        };
        if other.is_none()
            && let Some(what) = super::foreign_format(&p.response)
        {
            return Err(super::foreign_error(&format!("the response is {what}")));
        }
        if let Some((what, from)) = other {
            return Err(format!(
                "{what}, not a chat completion: import it on its own (--from {from})"
            ));
        }
    }
    let mut records = chat_choices(
        request,
        &p.response,
        p.carry,
        &p.id,
        Kind::OpenaiChat,
        refused,
    )?;
    mark_logged(&mut records, logged);
    Ok(records)
}

/// Why a logged exchange holds no answer, when its `response` is null or
/// has no `choices`: a logger's record of a failed call (LiteLLM's
/// `StandardLoggingPayload` with `status: "failure"` and `error_str`), or
/// a response that was not captured. Said as such rather than as a
/// response that lacks `choices`, or (null) read as a request companion
/// that yields nothing.
fn logged_failure(obj: &Map<String, Value>, response: &Value) -> Option<String> {
    if !obj.contains_key("response") || response.get("choices").is_some() {
        return None;
    }
    let failed = obj.get("status").and_then(Value::as_str) == Some("failure");
    // The logger's text: bounded, a credential in it (a URL's `?key=`, a
    // header) masked.
    let error = ["error_str", "error"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    let error: String = crate::sanitize::credential_text(error)
        .unwrap_or_else(|| error.to_string())
        .chars()
        .take(500)
        .collect();
    match (failed, response.is_null()) {
        (true, _) => Some(format!(
            "the logged call failed (`status`: \"failure\"){}: it holds no answer, and a failure never becomes a transcript",
            if error.is_empty() {
                String::new()
            } else {
                format!(": {error}")
            }
        )),
        (false, true) => {
            Some("the `response` is null: no answer was captured, and nothing is imported".into())
        }
        (false, false) => None,
    }
}

/// Says in `import.tools_from` that the tools were read from a logger's
/// `model_parameters` ([`logged_request`]), when they were.
fn mark_logged(records: &mut [(String, Map<String, Value>)], logged: Option<&Value>) {
    if logged.is_none() {
        return;
    }
    for (_, rec) in records {
        if let Some(Value::Object(info)) = rec.get_mut(super::IMPORT_MEMBER) {
            info.insert("tools_from".into(), json!("model_parameters"));
        }
    }
}

/// The request of a logged exchange that has no `request` member:
/// LiteLLM's `StandardLoggingPayload` keeps the request's parameters —
/// `tools`, `tool_choice`, `max_tokens`, … as the caller sent them — in
/// `model_parameters` beside `messages` and `response`. Read as a request
/// only when it holds `tools` (or `functions`): without them it may be a
/// payload whose tools were left out, and a known, empty allowlist would
/// blame every call as `wrong_tool`; the tools stay unknown. A `request`
/// member, even `null` (not captured), is the request as always.
fn logged_request(obj: &Map<String, Value>, paired: bool) -> Option<&Value> {
    if !paired || obj.contains_key("request") {
        return None;
    }
    obj.get("model_parameters").filter(|m| {
        ["tools", "functions"]
            .iter()
            .any(|k| m.get(*k).is_some_and(|t| !t.is_null()))
    })
}

/// A response that is an error carrying the model's text (Groq's
/// `tool_use_failed` with `failed_generation`): that text is the output,
/// the server returned no call, and a note says so.
fn failed_generation(
    request: Option<&Value>,
    failed: &FailedGeneration,
    carry: Map<String, Value>,
    id: &str,
) -> Converted {
    let response = json!({"choices": [{"index": 0, "message":
        {"role": "assistant", "content": failed.text, "tool_calls": []}}]});
    let mut records = chat_records(request, &response, carry, id, Kind::OpenaiChat)?;
    for (_, rec) in &mut records {
        if let Some(Value::Object(info)) = rec.get_mut(super::IMPORT_MEMBER) {
            add_note(
                info,
                NoteKind::FailedGeneration,
                FailedGeneration::note(&failed.what),
            );
        }
    }
    Ok(records)
}

/// One line of a Batch output file, joined with its input line. Its
/// choices are read as a pair's ([`chat_choices`]): the reasons of choices
/// refused beside good ones (`n` > 1) go to `refused`.
pub(crate) fn batch_output(
    obj: &Map<String, Value>,
    companions: &Companions,
    refused: &mut Vec<String>,
) -> Converted {
    let custom_id = obj
        .get("custom_id")
        .and_then(Value::as_str)
        .ok_or("Batch output line has no `custom_id` string")?;
    if let Some(error) = obj.get("error").filter(|e| !e.is_null()) {
        let code = str_of(error, "code").unwrap_or("error");
        let message = str_of(error, "message").unwrap_or("");
        return Err(format!(
            "Batch request `{custom_id}` failed: {code}: {message}"
        ));
    }
    let response =
        obj.get("response").filter(|r| r.is_object()).ok_or_else(
            || match super::foreign_format(&Value::Object(obj.clone())) {
                Some(what) => {
                    super::foreign_error(&format!("Batch output line `{custom_id}` is {what}"))
                }
                None => format!("Batch output line `{custom_id}` has no `response`"),
            },
        )?;
    // OpenAI wraps the completion in `body` with a `status_code`; vLLM's
    // run-batch writes the completion as `response` itself.
    let body = match response.get("body") {
        Some(body) => {
            let status = response
                .get("status_code")
                .and_then(Value::as_u64)
                .unwrap_or(200);
            if status >= 400 {
                let message = body
                    .get("error")
                    .and_then(|e| str_of(e, "message"))
                    .unwrap_or("");
                return Err(format!(
                    "Batch request `{custom_id}` failed with status {status}: {message}"
                ));
            }
            body
        }
        None => response,
    };
    // A `/v1/responses` request's body is a Responses object, read as the
    // Responses importer reads one (its failure, `status: "failed"`, is
    // said as such, with or without the input line).
    let responses_body = body.get("choices").is_none()
        && (str_of(body, "object") == Some("response") || body.get("output").is_some());
    if responses_body && let Some(why) = super::responses::not_an_answer(body) {
        return Err(format!(
            "Batch request `{custom_id}` (a Responses body): {why}"
        ));
    }
    // As for a chat document: an error in the body, beside `choices` or
    // not, is the provider's, not an answer.
    if !responses_body && let Some(why) = super::error_body(body) {
        return Err(format!("Batch request `{custom_id}`: {why}"));
    }
    if companions.batch_ambiguous.contains(custom_id) {
        return Err(format!(
            "custom_id `{custom_id}` names different requests in the Batch input files given (two batches?): which one this line answers is a guess; import each batch's output with its own input"
        ));
    }
    let request = companions.batch.get(custom_id).ok_or_else(|| {
        format!(
            "no Batch input line with custom_id `{custom_id}` among the files given (tools unknown): pass the input JSONL too"
        )
    })?;
    let mut carry = Map::new();
    carry.insert("id".into(), json!(custom_id));
    let mut records = if responses_body {
        let mut doc = carry;
        doc.insert("request".into(), request.clone());
        doc.insert("response".into(), body.clone());
        super::responses::document(&doc, custom_id)
            .map_err(|e| format!("Batch request `{custom_id}` (a Responses body): {e}"))?
    } else {
        chat_choices(
            Some(request),
            body,
            carry,
            custom_id,
            Kind::BatchOutput,
            refused,
        )?
    };
    for (_, rec) in &mut records {
        if let Some(Value::Object(info)) = rec.get_mut(super::IMPORT_MEMBER) {
            info.insert("custom_id".into(), json!(custom_id));
        }
    }
    Ok(records)
}

/// What the request says about tools and limits.
pub(crate) struct RequestInfo {
    /// The request's tool list; `None` without a request (tools unknown,
    /// SPEC §4: no `tools` key is written).
    pub tools: Option<Value>,
    pub expect: Option<Value>,
    pub params: Map<String, Value>,
    pub max_tokens: Option<u64>,
    pub forced_tool: bool,
    /// The request's tools a `tool_choice` of type `allowed_tools` did not
    /// allow, left out of `tools` ([`crate::choice::narrowing`]), by name.
    pub not_allowed: Vec<Value>,
    /// The request set `parallel_tool_calls: false`: written as the
    /// transcript's own member ([`super::one_call_of`]).
    pub one_call: bool,
}

/// Reads `tools`, `tool_choice`, `parallel_tool_calls` and `max_tokens` of a
/// chat-completions request.
/// A `tools` (or `functions`) member that is not a list is an error, and so
/// are a `tool_choice` and a `parallel_tool_calls` that cannot be read.
pub(crate) fn request_info(request: Option<&Value>) -> Result<RequestInfo, String> {
    let mut params = Map::new();
    let mut tools = Vec::new();
    let mut expect = None;
    let mut max_tokens = None;
    let mut forced_tool = false;
    let mut not_allowed = Vec::new();
    let one_call = super::one_call_of(request.and_then(|r| r.get("parallel_tool_calls")))?;
    if let Some(req) = request {
        match super::tool_list(req, "tools")? {
            Some(items) => tools.extend(items.iter().cloned()),
            None => {
                if let Some(fs) = super::tool_list(req, "functions")? {
                    tools.extend(
                        fs.iter()
                            .map(|f| json!({"type": "function", "function": f})),
                    );
                }
            }
        }
        let choice = req.get("tool_choice").or_else(|| req.get("function_call"));
        if let Some(choice) = choice {
            params.insert("tool_choice".into(), choice.clone());
            let named = choice
                .get("function")
                .and_then(|f| str_of(f, "name"))
                .or_else(|| str_of(choice, "name"));
            let decided = match (choice.as_str(), named) {
                (Some("none"), _) => Some(Err(())),
                (_, Some(name)) => Some(Ok(name)),
                _ => None,
            };
            forced_tool = matches!(decided, Some(Ok(_)));
            expect = expect_from_choice(decided);
            if let Some(allowed) = crate::choice::narrowing(Some(choice))? {
                not_allowed = super::keep_allowed_tools(&mut tools, &allowed);
            }
        }
        for key in ["parallel_tool_calls", "n"] {
            if let Some(v) = req.get(key) {
                params.insert(key.into(), v.clone());
            }
        }
        max_tokens = req
            .get("max_completion_tokens")
            .or_else(|| req.get("max_tokens"))
            .and_then(Value::as_u64);
        if let Some(m) = max_tokens {
            params.insert("max_tokens".into(), json!(m));
        }
    }
    Ok(RequestInfo {
        tools: request.map(|_| Value::Array(tools)),
        expect,
        params,
        max_tokens,
        forced_tool,
        not_allowed,
        one_call,
    })
}

/// The text of a message `content`: a string, null, or text parts.
/// `toolgate run` reads an answer's content parts through this too.
pub fn content_text(content: Option<&Value>) -> Result<String, String> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut out = String::new();
            for (i, part) in parts.iter().enumerate() {
                match (str_of(part, "type"), str_of(part, "text")) {
                    (Some("text" | "output_text"), Some(t)) => out.push_str(t),
                    // Citations and refusals hold no model text.
                    (Some("refusal" | "reference"), _) => {}
                    // Reasoning, read by `thinking_text`; one without text
                    // is reported, not read as empty.
                    (Some("thinking"), _) => {
                        if !matches!(
                            part.get("thinking"),
                            Some(Value::String(_) | Value::Array(_))
                        ) {
                            return Err(format!(
                                "`content[{i}]` is a thinking part without `thinking` text"
                            ));
                        }
                    }
                    (kind, _) => {
                        return Err(format!(
                            "`content[{i}]` is not a text part (type {})",
                            kind.unwrap_or("missing")
                        ));
                    }
                }
            }
            Ok(out)
        }
        Some(_) => Err("`message.content` must be a string, null or an array of text parts".into()),
    }
}

/// The reasoning in `thinking` parts of a message `content` (Mistral's
/// Magistral: `{"type": "thinking", "thinking": [{"type": "text", "text"}]}`,
/// or `thinking` a string), when there is any.
pub(crate) fn thinking_text(content: Option<&Value>) -> Option<String> {
    let parts = content?.as_array()?;
    let mut out: Option<String> = None;
    for part in parts
        .iter()
        .filter(|p| str_of(p, "type") == Some("thinking"))
    {
        let text = out.get_or_insert_with(String::new);
        match part.get("thinking") {
            Some(Value::String(t)) => text.push_str(t),
            Some(Value::Array(inner)) => {
                for t in inner.iter().filter_map(|i| str_of(i, "text")) {
                    text.push_str(t);
                }
            }
            _ => {}
        }
    }
    out
}

/// One transcript object per choice of `response`; a choice that ended in
/// a provider error ([`choice_error`]) fails the whole response.
pub(crate) fn chat_records(
    request: Option<&Value>,
    response: &Value,
    carry: Map<String, Value>,
    base: &str,
    kind: Kind,
) -> Converted {
    let mut refused = Vec::new();
    let records = chat_choices(request, response, carry, base, kind, &mut refused)?;
    match refused.into_iter().next() {
        Some(why) => Err(why),
        None => Ok(records),
    }
}

/// One transcript object per choice of `response`, but a choice that ended
/// in a provider error ([`choice_error`]) is refused on its own, its reason
/// pushed to `refused`: the other choices (`n` > 1) are the model's
/// answers, each a transcript as always. When every choice is refused the
/// response is an error.
pub(crate) fn chat_choices(
    request: Option<&Value>,
    response: &Value,
    carry: Map<String, Value>,
    base: &str,
    kind: Kind,
    refused: &mut Vec<String>,
) -> Converted {
    let info = request_info(request)?;
    let choices = response
        .get("choices")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
        .ok_or("the response has no `choices`")?;
    let most = MAX_STREAM_CHOICES;
    if choices.len() > most {
        // As for streams: a transcript per choice must not grow without bound.
        return Err(format!(
            "the response has {} choices, more than {most} (OpenAI's `n` is at most 128): not read",
            choices.len()
        ));
    }
    let model = super::model_of(response, request);
    let completion_tokens = response
        .get("usage")
        .and_then(|u| u.get("completion_tokens"))
        .and_then(Value::as_u64);
    // A lone choice at an index other than 0 is one sample of several
    // (the others were refused, here or before).
    let several = choices.len() > 1
        || choices.iter().any(|c| {
            c.get("index")
                .and_then(Value::as_i64)
                .is_some_and(|i| i != 0)
        });
    let mut out = Vec::with_capacity(choices.len());
    let mut errors = Vec::new();
    for (pos, choice) in choices.iter().enumerate() {
        let index = choice
            .get("index")
            .and_then(Value::as_i64)
            .unwrap_or(pos as i64);
        if let Some(why) = choice_error(choice) {
            errors.push(format!("`choices[{pos}]` {why}"));
            continue;
        }
        let message = choice
            .get("message")
            .ok_or_else(|| format!("`choices[{pos}]` has no `message`"))?;
        let mut output = content_text(message.get("content"))
            .map_err(|e| format!("`choices[{pos}].message`: {e}"))?;
        // An audio answer (gpt-4o-audio) has no `content`: the text the
        // model spoke is `message.audio.transcript`. Read as `""`, it was
        // lost without a word (a text call in it never judged).
        // An empty `content` (`""`, `[]`: a client or logger that writes
        // no text so) holds no text either: the transcript is still the
        // answer, not lost.
        let no_text = match message.get("content") {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Array(parts)) => parts.is_empty(),
            Some(_) => false,
        };
        let transcript = match no_text {
            true => message
                .get("audio")
                .and_then(|a| str_of(a, "transcript"))
                .filter(|t| !t.is_empty()),
            false => None,
        };
        if let Some(t) = transcript {
            output = t.to_string();
        }
        let reasoning = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|k| str_of(message, k))
            .map(str::to_string)
            .or_else(|| thinking_text(message.get("content")));
        let mut tool_calls = match message.get("tool_calls") {
            Some(Value::Array(a)) => {
                if let Some((j, call)) = a.iter().enumerate().find(|(_, c)| is_custom_call(c)) {
                    return Err(custom_call(
                        &format!("`choices[{pos}].message.tool_calls[{j}]`"),
                        call,
                    ));
                }
                Some(a.clone())
            }
            Some(Value::Null) => Some(Vec::new()),
            Some(_) => {
                return Err(format!(
                    "`choices[{pos}].message.tool_calls` must be an array"
                ));
            }
            None => None,
        };
        // The legacy `function_call` whatever `tool_calls` holds: the
        // OpenAI SDK's `model_dump()` (and loggers that store it) writes
        // `tool_calls: null` beside it, and a message may carry both.
        // Native calls and a legacy call are one set, native first, as the
        // proxy gates them (DECISIONS) and a stream reads them: read only
        // without `tool_calls`, the legacy call was dropped and its choice
        // judged `no_call`, or passed with only its native calls.
        if let Some(Value::Array(legacy)) = legacy_function_call(message) {
            tool_calls.get_or_insert_with(Vec::new).extend(legacy);
        }
        let mut rec = Map::new();
        let mut import = import_info(kind);
        let mut finish_reason = match choice.get("finish_reason") {
            None | Some(Value::Null) => None,
            Some(Value::String(f)) => Some(f.clone()),
            // Dropped, a missing reason could be derived as one the server
            // never gave.
            Some(_) => {
                return Err(format!(
                    "`choices[{pos}].finish_reason` must be a string or null"
                ));
            }
        };
        if finish_reason.is_none()
            && let (Some(max), Some(used)) = (info.max_tokens, completion_tokens)
            && used >= max
            && !several
        {
            finish_reason = Some("length".into());
            import.insert("finish_reason_derived".into(), json!(true));
        }
        // The provider stopped the generation (a content filter, its limit
        // in a spelling other than `length`): the last call is cut whatever
        // its text holds, which may be whole JSON ([`super::stopped_early`]).
        if finish_reason.as_deref().is_some_and(super::stopped_early)
            && let Some(calls) = tool_calls.as_mut()
        {
            super::cut_last_call_into(calls, &mut import);
        }
        let id = if several {
            format!("{base}#{index}")
        } else {
            base.to_string()
        };
        rec.insert("id".into(), json!(id));
        if let Some(m) = &model {
            rec.insert("model".into(), json!(m));
        }
        if several {
            rec.insert("sample".into(), json!(index));
        }
        if let Some(tools) = &info.tools {
            rec.insert("tools".into(), tools.clone());
        }
        if info.one_call {
            rec.insert("parallel_tool_calls".into(), json!(false));
        }
        rec.insert("output".into(), json!(output));
        if let Some(r) = reasoning {
            rec.insert("reasoning".into(), json!(r));
        }
        if let Some(tc) = tool_calls {
            rec.insert("tool_calls".into(), Value::Array(tc));
        }
        if let Some(f) = finish_reason {
            rec.insert("finish_reason".into(), json!(f));
        }
        if let Some(e) = &info.expect {
            rec.insert("expect".into(), e.clone());
        }
        if !info.params.is_empty() {
            import.insert("request".into(), Value::Object(info.params.clone()));
        }
        if info.forced_tool {
            import.insert("forced_tool".into(), json!(true));
        }
        if !info.not_allowed.is_empty() {
            import.insert(
                "tools_not_allowed".into(),
                Value::Array(info.not_allowed.clone()),
            );
        }
        if let Some(r) = str_of(message, "refusal") {
            import.insert("refusal".into(), json!(r));
        }
        if transcript.is_some() {
            add_note(
                &mut import,
                NoteKind::AudioTranscript,
                "the answer was audio: `output` is its `message.audio.transcript`".into(),
            );
        }
        super::note_usage_and_id(&mut import, response);
        rec.insert(super::IMPORT_MEMBER.into(), Value::Object(import));
        // Members of the pair document (id, task, expect, labels, …), beside
        // what was read from the capture, never over it; not the id of a
        // split choice.
        super::carry_over(&mut rec, &carry, several);
        out.push((id, rec));
    }
    if out.is_empty()
        && let Some(first) = errors.first()
    {
        return Err(first.clone());
    }
    refused.extend(errors);
    Ok(out)
}

/// The legacy `function_call` of a message (one call, no id), as
/// `tool_calls`; `None` when it has none. The importer adds it after the
/// message's `tool_calls`, whatever those hold (one set, DECISIONS).
/// `toolgate run` reads an answer's legacy call through this too, so a run
/// keeps the call an import of the same exchange keeps.
pub fn legacy_function_call(message: &Value) -> Option<Value> {
    message
        .get("function_call")
        .filter(|f| f.is_object())
        .map(|f| {
            json!([native_call(
                None,
                str_of(f, "name").unwrap_or(""),
                f.get("arguments").unwrap_or(&Value::Null)
            )])
        })
}

/// Why a choice is a provider's error rather than the model's answer, when
/// it is one: an `error` member (OpenRouter reports a mid-generation
/// upstream failure on the choice), or `finish_reason` `error` (OpenRouter)
/// or `abort` (vLLM, SGLang: the request was aborted). What such a choice
/// holds is whatever arrived before the failure: read as an answer, its
/// missing call would be the model's `no_call`, or a call cut before its
/// arguments would run with none (ARCHITECTURE: a run error is never an
/// answer). `toolgate run` refuses such a choice through this too.
pub fn choice_error(choice: &Value) -> Option<String> {
    let error = choice.get("error").filter(|e| !e.is_null());
    let finish = str_of(choice, "finish_reason").filter(|f| is_error_finish(f));
    let what = match (error, finish) {
        (None, None) => return None,
        (Some(e), _) => error_what(e),
        (None, Some(f)) => format!("`finish_reason` {f:?}"),
    };
    Some(provider_error(&what))
}

/// Whether a finish reason is a provider's error rather than the end of an
/// answer ([`choice_error`]): `error` (OpenRouter) or `abort` (vLLM,
/// SGLang). The one list every importer that reads a finish reason asks.
pub fn is_error_finish(reason: &str) -> bool {
    matches!(reason, "error" | "abort")
}

/// Why a finish reason is refused ([`is_error_finish`]), as
/// [`choice_error`] says it: for importers whose answers are not choices.
pub(crate) fn finish_error(reason: &str) -> Option<String> {
    is_error_finish(reason).then(|| provider_error(&format!("`finish_reason` {reason:?}")))
}

fn provider_error(what: &str) -> String {
    format!(
        "ended in a provider error, not an answer: {what} (a provider error never becomes a transcript)"
    )
}

/// Whether a chat tool call is a call of a `custom` tool (`{"type":
/// "custom", "custom": {"name", "input"}}`) rather than a function call.
pub(crate) fn is_custom_call(call: &Value) -> bool {
    str_of(call, "type") == Some("custom") || call.get("custom").is_some()
}

/// The reason a response holding a custom tool call (at `at`) is not
/// imported: as for the Responses API's `custom_tool_call`, its `input` is
/// free text, not a JSON arguments object (SPEC §1). Read as arguments it
/// would blame the model with `malformed_json` for text it was asked to
/// write; wrapped it would gain a key the model never wrote; skipped, the
/// model's call would become a `no_call`.
pub(crate) fn custom_call(at: &str, call: &Value) -> String {
    // The name is the model's (untrusted): bounded, shown quoted.
    let name: String = call
        .get("custom")
        .and_then(|c| str_of(c, "name"))
        .unwrap_or("")
        .chars()
        .take(64)
        .collect();
    let id = str_of(call, "id")
        .map(|id| {
            let id: String = id.chars().take(64).collect();
            format!(" (`{id}`)")
        })
        .unwrap_or_default();
    format!(
        "{at} is a call of the custom tool {name:?}{id}: a custom tool's input is free text, \
         not a JSON arguments object (SPEC §1): the call cannot be judged, and the response is not \
         imported rather than read as `malformed_json` or `no_call`"
    )
}

/// A tool definition from a bare `{"name", "description", "parameters"}`.
#[allow(dead_code)]
pub(crate) fn bare_tool(t: &Value) -> Option<Value> {
    let name = str_of(t, "name")?;
    Some(tool_def(name, t.get("description"), t.get("parameters")))
}
