//! The shape a chat completion (or one stream chunk of it) must have before
//! its tool calls can be judged: one rule for everything that judges an
//! answer — `toolgate proxy --mode enforce` (an answer refused here is its
//! 502 "unchecked") and the Python guardrails (`toolgate._native.check_answer`
//! / `check_chunk`, which the LiteLLM guardrail runs on every response and
//! chunk), so that no answer one of them refuses passes the other.
//!
//! What cannot be read cannot be vouched for, so nothing here is "probably
//! fine". Call-bearing fields known are `tool_calls` and the legacy
//! `function_call`. Any other key of a message (or delta, or choice, or the
//! answer) whose name mentions `call`, `tool` or `function` is a
//! call-bearing field nobody reads (a future API, another vendor's shape):
//! the answer is refused rather than passed on unchecked. So is any key
//! that is not one the check reads but that a client's JSON decoder takes
//! for one ([`read_as`]: `Message` beside `message`, `meſſage`, `Content`):
//! Go's `encoding/json` and Json.NET match keys regardless of case and
//! decode every match into the same field, so the call such a twin holds
//! reaches a client that reads `message`, unjudged. So, last, is a key
//! the check does not know (of the answer, a choice, a message or delta)
//! whose value is an object, or a list of objects, with a call-bearing key
//! at its first level ([`call_inside`]): a top-level `message` holding
//! `tool_calls` beside `choices` (Cohere v2's and Ollama's native shape),
//! or `choices[0].messages`, hands a client that reads several vendors'
//! shapes a call nobody judged. Pure shape checks on a parsed
//! `serde_json::Value`: no I/O, no runtime.

use crate::MAX_CHOICES;
use serde_json::{Map, Value};

/// Keys of a message or delta that are read or known to carry no call.
pub const MESSAGE_KEYS: &[&str] = &[
    "role",
    "content",
    "refusal",
    "annotations",
    "audio",
    "reasoning_content",
    "reasoning",
    "tool_calls",
    "function_call",
    "name",
];

/// The keys [`check_completion`] and [`check_chunk`] read of the answer
/// (or chunk) itself.
pub const ANSWER_KEYS: &[&str] = &["choices"];

/// The keys read of a choice (`message` in an answer, `delta` in a chunk;
/// each refused where the other belongs).
pub const CHOICE_KEYS: &[&str] = &["index", "finish_reason", "message", "delta"];

/// Keys of the answer (or chunk), beside [`ANSWER_KEYS`], known to carry
/// no call: not looked into ([`call_inside`]). `tool_choice` is an echo of
/// the request (a function's name, never a call).
pub const ANSWER_KNOWN: &[&str] = &[
    "id",
    "object",
    "created",
    "model",
    "usage",
    "system_fingerprint",
    "service_tier",
    "prompt_filter_results",
    "tool_choice",
];

/// Keys of a choice, beside [`CHOICE_KEYS`], known to carry no call: not
/// looked into ([`call_inside`]).
pub const CHOICE_KNOWN: &[&str] = &[
    "logprobs",
    "content_filter_results",
    "stop_reason",
    "matched_stop",
    "native_finish_reason",
    "text",
];

/// The keys read of one native call.
pub const CALL_KEYS: &[&str] = &["id", "type", "index", "function", EXTRA_CONTENT];

/// The keys read of a call's `function` (and of a legacy `function_call`).
pub const FUNCTION_KEYS: &[&str] = &["name", "arguments", "description"];

/// The key of `read` (one level's keys: [`ANSWER_KEYS`], [`CHOICE_KEYS`],
/// [`MESSAGE_KEYS`], [`CALL_KEYS`], [`FUNCTION_KEYS`]) that `key` is not,
/// but that a JSON decoder matching names loosely reads it as: ASCII
/// letters in any case (Go's `encoding/json`, Json.NET), and Go's simple
/// Unicode folding onto them (`bytes.EqualFold`: `ſ` U+017F is `s`, the
/// Kelvin sign U+212A is `k`). Such a decoder fills the field from every
/// key that matches, so a `Message` beside `message` hands its client a
/// call the check never read.
pub fn read_as(key: &str, read: &[&'static str]) -> Option<&'static str> {
    read.iter()
        .copied()
        .find(|known| key != *known && folds_to(key, known))
}

/// Whether `key` folds to `known` (an ASCII key), letter by letter.
fn folds_to(key: &str, known: &str) -> bool {
    // A folded letter is 1 to 3 bytes of UTF-8.
    if key.len() < known.len() || key.len() > 3 * known.len() {
        return false;
    }
    let mut chars = key.chars();
    for b in known.bytes() {
        let same = match chars.next() {
            None => false,
            Some('\u{17F}') => b.eq_ignore_ascii_case(&b's'),
            Some('\u{212A}') => b.eq_ignore_ascii_case(&b'k'),
            Some(c) => u8::try_from(c).is_ok_and(|c| c.eq_ignore_ascii_case(&b)),
        };
        if !same {
            return false;
        }
    }
    chars.next().is_none()
}

/// Refuses `key`, a key of a level whose keys read are `read`, when a
/// client may read it as one of them ([`read_as`]).
fn not_read_as_known(key: &str, read: &[&'static str]) -> Result<(), String> {
    match read_as(key, read) {
        Some(known) => Err(format!(
            "a field `{key}` that clients matching keys in any case read as `{known}`"
        )),
        None => Ok(()),
    }
}

/// Whether an unknown key may carry a tool call.
///
/// Matched in ASCII case: `Tool_Calls` bears calls as `tool_calls` does.
/// Every key of every answer comes through here, so without a lowercase
/// copy of the key.
pub fn call_bearing(key: &str) -> bool {
    let k = key.as_bytes();
    [b"call".as_slice(), b"tool", b"function"]
        .iter()
        .any(|w| k.windows(w.len()).any(|s| s.eq_ignore_ascii_case(w)))
}

/// Where a value held by a key the check does not know bears a call: the
/// first call-bearing key ([`call_bearing`]) of the object, or of an object
/// in the list, it is; with that object's place in the list. One level
/// deep, no further: what a client reading another vendor's shape finds
/// beside the answer it reads (`message.tool_calls`, `messages[0].tool_calls`).
pub fn call_inside(v: &Value) -> Option<(Option<usize>, &str)> {
    fn keys(m: &Map<String, Value>) -> Option<&str> {
        m.keys().find(|k| call_bearing(k)).map(String::as_str)
    }
    match v {
        Value::Object(m) => keys(m).map(|k| (None, k)),
        Value::Array(a) => a.iter().enumerate().find_map(|(i, e)| match e {
            Value::Object(m) => keys(m).map(|k| (Some(i), k)),
            _ => None,
        }),
        _ => None,
    }
}

/// Refuses the value `v` of `key`, a key not known at its level, when it
/// holds a call ([`call_inside`]); `at` is the level's path (`""`,
/// `choices[0].`, `choices[0].message.`), written only for the reason.
fn no_call_inside(at: &dyn Fn() -> String, key: &str, v: &Value) -> Result<(), String> {
    match call_inside(v) {
        None => Ok(()),
        Some((i, inner)) => {
            let i = i.map_or(String::new(), |i| format!("[{i}]"));
            Err(format!(
                "a call-bearing field `{}{key}{i}.{inner}` inside a field not read",
                at()
            ))
        }
    }
}

/// Checks one native call (`tool_calls[i]`, whole or as a stream delta when
/// `delta`): an object whose `function` holds a string `name` and string
/// `arguments` (a delta may omit either).
pub fn check_call(call: &Value, delta: bool) -> Result<(), String> {
    let Value::Object(c) = call else {
        return Err("a tool call is not an object".into());
    };
    for (k, v) in c {
        match k.as_str() {
            "id" if !(v.is_string() || (delta && v.is_null())) => {
                return Err("a tool call's id is not a string".into());
            }
            "type" if v != "function" && !(delta && v.is_null()) => {
                return Err(format!(
                    "a tool call of type {v} (only function is checked)"
                ));
            }
            "index" if !v.is_u64() => {
                return Err("a tool call's index is not a number".into());
            }
            "id" | "type" | "index" => {}
            "function" => check_function(v, delta)?,
            EXTRA_CONTENT => check_extra_content(v, delta)?,
            other if call_bearing(other) => {
                return Err(format!("a tool call has an unknown field `{other}`"));
            }
            other => {
                not_read_as_known(other, CALL_KEYS)?;
                if !delta {
                    return Err(format!("a tool call has an unknown field `{other}`"));
                }
            }
        }
    }
    if !delta && !c.contains_key("function") {
        return Err("a tool call has no function".into());
    }
    Ok(())
}

/// A tool call's vendor metadata: Gemini's OpenAI-compatible API puts the
/// thought signature Gemini 3 needs back on the next turn there
/// (`{"google": {"thought_signature": "…"}}`). It is relayed with its call,
/// never read; so that nothing can ride in it unread, it must be an object
/// (or null: none) none of whose keys, at any depth, bears a call.
pub const EXTRA_CONTENT: &str = "extra_content";

fn check_extra_content(v: &Value, _delta: bool) -> Result<(), String> {
    // `null` is no metadata, as an absent member (servers built on
    // pydantic write unset optional fields so).
    if !(v.is_object() || v.is_null()) {
        return Err(format!("a tool call's `{EXTRA_CONTENT}` is not an object"));
    }
    // Iterative: an answer's depth is bounded by its reader, not this walk.
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let Some(k) = m.keys().find(|k| call_bearing(k)) {
                    return Err(format!(
                        "a tool call's `{EXTRA_CONTENT}` has a call-bearing field `{k}`"
                    ));
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    Ok(())
}

/// `{"name": "...", "arguments": "..."}` (a delta may omit either).
pub fn check_function(f: &Value, delta: bool) -> Result<(), String> {
    let Value::Object(f) = f else {
        return Err("a call's function is not an object".into());
    };
    for (k, v) in f {
        match k.as_str() {
            // `arguments: null` is read as the native mode reads it: a
            // call cut off (`truncation`, SPEC §9), not an unreadable answer.
            "arguments" if !(v.is_string() || v.is_null()) => {
                return Err(format!("a call's {k} is not a string"));
            }
            "name" if !(v.is_string() || (delta && v.is_null())) => {
                return Err(format!("a call's {k} is not a string"));
            }
            "name" | "arguments" => {}
            // TGI answers `"description": null` beside every call's name;
            // text about the tool, never a call, relayed as it came.
            "description" if !(v.is_string() || v.is_null()) => {
                return Err(format!("a call's {k} is not text"));
            }
            "description" => {}
            other => {
                not_read_as_known(other, FUNCTION_KEYS)?;
                return Err(format!("a call's function has an unknown field `{other}`"));
            }
        }
    }
    if !delta && !(f.get("name").is_some_and(Value::is_string)) {
        return Err("a call has no name".into());
    }
    Ok(())
}

/// Checks a message (or a stream delta, `delta`) of choice `at`.
fn check_message(m: &Map<String, Value>, at: usize, delta: bool) -> Result<(), String> {
    for (k, v) in m {
        match k.as_str() {
            "content" | "refusal" | "reasoning_content" | "reasoning"
                if !(v.is_string() || v.is_null()) =>
            {
                return Err(format!("`{k}` is not text"));
            }
            "tool_calls" => match v {
                Value::Null => {}
                Value::Array(calls) => {
                    for c in calls {
                        check_call(c, delta)?;
                    }
                }
                _ => return Err("`tool_calls` is not an array".into()),
            },
            "function_call" => match v {
                Value::Null => {}
                f => check_function(f, delta)?,
            },
            other if MESSAGE_KEYS.contains(&other) => {}
            other if call_bearing(other) => {
                return Err(format!("an unknown call-bearing field `{other}`"));
            }
            other => {
                not_read_as_known(other, MESSAGE_KEYS)?;
                let body = if delta { "delta" } else { "message" };
                no_call_inside(&|| format!("choices[{at}].{body}."), other, v)?;
            }
        }
    }
    Ok(())
}

/// Checks choice `at` of a response (`delta`: of a stream chunk).
fn check_choice(c: &Value, at: usize, delta: bool) -> Result<(), String> {
    let Value::Object(c) = c else {
        return Err("a choice is not an object".into());
    };
    let body = if delta { "delta" } else { "message" };
    for (k, v) in c {
        match k.as_str() {
            "finish_reason" if !(v.is_string() || v.is_null()) => {
                return Err("`finish_reason` is not a string".into());
            }
            "index" if !v.is_u64() => {
                return Err("a choice's index is not a number".into());
            }
            "finish_reason" | "index" => {}
            key if key == body => match v {
                Value::Object(m) => check_message(m, at, delta)?,
                Value::Null if delta => {}
                _ => return Err(format!("`{body}` is not an object")),
            },
            // A message where a delta belongs (or the reverse) is a call
            // field the proxy would not read.
            "message" | "delta" => return Err(format!("a `{k}` in place of `{body}`")),
            other if call_bearing(other) => {
                return Err(format!("an unknown call-bearing field `{other}`"));
            }
            other => {
                not_read_as_known(other, CHOICE_KEYS)?;
                if !CHOICE_KNOWN.contains(&other) {
                    no_call_inside(&|| format!("choices[{at}]."), other, v)?;
                }
            }
        }
    }
    if !delta && !c.contains_key("message") {
        return Err("a choice has no message".into());
    }
    Ok(())
}

/// Checks a non-streamed chat completion.
pub fn check_completion(v: &Value) -> Result<(), String> {
    let Value::Object(o) = v else {
        return Err("the answer is not a JSON object".into());
    };
    let Some(Value::Array(choices)) = o.get("choices") else {
        return Err("the answer has no `choices` array".into());
    };
    if choices.len() > MAX_CHOICES {
        return Err(format!("the answer has more than {MAX_CHOICES} choices"));
    }
    for (i, c) in choices.iter().enumerate() {
        check_choice(c, i, false)?;
    }
    top_level(o)
}

/// Checks one stream chunk (an `error` chunk is reported by the caller).
pub fn check_chunk(v: &Value) -> Result<(), String> {
    let Value::Object(o) = v else {
        return Err("a stream event is not a JSON object".into());
    };
    match o.get("choices") {
        Some(Value::Array(choices)) => {
            for (i, c) in choices.iter().enumerate() {
                check_choice(c, i, true)?;
            }
        }
        // A usage-only chunk may say `choices: null` or leave it out.
        None | Some(Value::Null) => {}
        Some(_) => return Err("`choices` is not an array".into()),
    }
    top_level(o)
}

fn top_level(o: &Map<String, Value>) -> Result<(), String> {
    for (k, v) in o {
        if k != "choices" && k != "tool_choice" && call_bearing(k) {
            return Err(format!("an unknown call-bearing field `{k}`"));
        }
        not_read_as_known(k, ANSWER_KEYS)?;
        if !ANSWER_KEYS.contains(&k.as_str()) && !ANSWER_KNOWN.contains(&k.as_str()) {
            no_call_inside(&String::new, k, v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(message: Value) -> Value {
        json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    }

    #[test]
    fn a_plain_answer_and_non_call_keys_pass() {
        let m = json!({"role": "assistant", "content": "hi", "thinking_blocks": [],
                       "provider_specific_fields": null, "annotations": []});
        assert_eq!(check_completion(&answer(m)), Ok(()));
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "x"}}],
                           "usage": {"total_tokens": 3}});
        assert_eq!(check_chunk(&chunk), Ok(()));
    }

    #[test]
    fn call_bearing_fields_nobody_reads_are_refused() {
        let m = json!({"role": "assistant", "function_calls": []});
        assert_eq!(
            check_completion(&answer(m)),
            Err("an unknown call-bearing field `function_calls`".into())
        );
        let m = json!({"role": "assistant", "content": [{"type": "text", "text": "x"}]});
        assert_eq!(
            check_completion(&answer(m)),
            Err("`content` is not text".into())
        );
        let no_choices = json!({"candidates": []});
        assert_eq!(
            check_completion(&no_choices),
            Err("the answer has no `choices` array".into())
        );
    }

    /// Probe 44: `Message` beside `message` carried an rm_rf call through
    /// enforce (a 200 `no_call`, relayed byte for byte) to Go and Json.NET
    /// clients, which read every key matching `message` in any case into
    /// the same field; so did `Choices`, `meſſage`, a streamed `Delta` and
    /// `Content` (call text past the holdback).
    #[test]
    fn a_twin_a_client_reads_as_a_key_read_is_refused() {
        let rm_rf = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "rm_rf", "arguments": "{\"path\": \"/\"}"}}]});
        let ok = json!({"role": "assistant", "content": "ok"});
        let choice = |twin: &str, v: &Value| {
            let mut c = json!({"index": 0, "message": ok, "finish_reason": "stop"});
            c[twin] = v.clone();
            c
        };
        let refused = |key: &str, read: &str| {
            Err(format!(
                "a field `{key}` that clients matching keys in any case read as `{read}`"
            ))
        };
        for twin in ["Message", "MESSAGE", "me\u{17F}\u{17F}age"] {
            let a = json!({"choices": [choice(twin, &rm_rf)]});
            assert_eq!(check_completion(&a), refused(twin, "message"), "{twin}");
        }
        let a = json!({"choices": [choice("Index", &json!(1))]});
        assert_eq!(check_completion(&a), refused("Index", "index"));
        let mut a = answer(ok.clone());
        a["Choices"] = json!([choice("message", &rm_rf)]);
        assert_eq!(check_completion(&a), refused("Choices", "choices"));
        let m = json!({"role": "assistant", "content": "ok",
                       "Content": "<tool_call>{\"name\": \"rm_rf\"}</tool_call>"});
        assert_eq!(check_completion(&answer(m)), refused("Content", "content"));

        // Streamed, the same rule at every level of a chunk.
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "ok"},
                                        "Delta": {"tool_calls": rm_rf["tool_calls"]}}]});
        assert_eq!(check_chunk(&chunk), refused("Delta", "delta"));
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "ok", "CONTENT": "x"}}]});
        assert_eq!(check_chunk(&chunk), refused("CONTENT", "content"));
        let chunk = json!({"Choices": [{"index": 0, "delta": rm_rf}], "choices": []});
        assert_eq!(check_chunk(&chunk), refused("Choices", "choices"));
        let call = json!({"index": 0, "ID": "c2", "function": {"arguments": "{}"}});
        assert_eq!(check_call(&call, true), refused("ID", "id"));
        let call = json!({"index": 0, "function": {"arguments": "{}", "Arguments": "{}"}});
        assert_eq!(check_call(&call, true), refused("Arguments", "arguments"));
        // The Kelvin sign is Go's `k`; no key read holds one.
        assert_eq!(read_as("\u{212A}ey", &["key"]), Some("key"));
        assert_eq!(read_as("\u{212A}ey", &["kex"]), None);
        assert_eq!(read_as("messages", &["message"]), None);

        // A key that is no twin of one read still passes, as before.
        let mut c = choice("logprobs", &json!({"content": []}));
        c["Extra"] = json!({"Message": 1});
        let m = json!({"role": "assistant", "content": "ok", "Extra": 1, "thinking_blocks": []});
        c["message"] = m;
        assert_eq!(
            check_completion(&json!({"choices": [c], "Model": "m"})),
            Ok(())
        );
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "x", "Extra": 1}}]});
        assert_eq!(check_chunk(&chunk), Ok(()));
    }

    /// Probe (f2): a top-level `message` holding `tool_calls` beside
    /// `choices` (Cohere v2's, Ollama's native shape) or a
    /// `choices[0].messages` list holding them was served unchanged in
    /// enforce; a client reading several vendors' shapes saw an unjudged
    /// call. A key not known whose object (or list of objects) has a
    /// call-bearing key at its first level is refused, its path named.
    #[test]
    fn an_unknown_field_holding_a_call_one_level_in_is_refused() {
        let calls = json!([{"id": "c1", "type": "function",
            "function": {"name": "rm_rf", "arguments": "{\"path\": \"/\"}"}}]);
        let ok = json!({"role": "assistant", "content": "ok"});
        let inside = |path: &str| {
            Err(format!(
                "a call-bearing field `{path}` inside a field not read"
            ))
        };
        let mut a = answer(ok.clone());
        a["message"] = json!({"role": "assistant", "tool_calls": calls});
        assert_eq!(check_completion(&a), inside("message.tool_calls"));
        let mut a = answer(ok.clone());
        a["choices"][0]["messages"] = json!([{"role": "assistant", "content": "x"},
                                             {"role": "assistant", "tool_calls": calls}]);
        assert_eq!(
            check_completion(&a),
            inside("choices[0].messages[1].tool_calls")
        );
        let mut a = answer(json!({"role": "assistant", "content": "ok",
                                  "extra": {"function_call": {"name": "rm_rf"}}}));
        a["choices"] = json!([a["choices"][0].clone(), a["choices"][0].clone()]);
        a["choices"][0]["message"] = ok.clone();
        assert_eq!(
            check_completion(&a),
            inside("choices[1].message.extra.function_call")
        );
        // Any key `call_bearing` names, in any case.
        let mut a = answer(ok.clone());
        a["result"] = json!({"ToolUses": []});
        assert_eq!(check_completion(&a), inside("result.ToolUses"));

        // Streamed, at every level of a chunk.
        let delta = json!({"index": 0, "delta": {"content": "ok"}});
        let mut chunk = json!({"choices": [delta]});
        chunk["message"] = json!({"tool_calls": calls});
        assert_eq!(check_chunk(&chunk), inside("message.tool_calls"));
        let mut chunk = json!({"choices": [delta.clone()]});
        chunk["choices"][0]["messages"] = json!([{"tool_calls": calls}]);
        assert_eq!(
            check_chunk(&chunk),
            inside("choices[0].messages[0].tool_calls")
        );
        let mut chunk = json!({"choices": [delta]});
        chunk["choices"][0]["delta"]["message"] = json!({"tool_calls": calls});
        assert_eq!(
            check_chunk(&chunk),
            inside("choices[0].delta.message.tool_calls")
        );

        // Known keys are not looked into; deeper than one level is not
        // looked at; nor are scalars, or lists of lists.
        let mut a = answer(ok.clone());
        a["usage"] = json!({"total_tokens": 3, "tool_calls": 1});
        a["tool_choice"] = json!({"type": "function", "function": {"name": "f"}});
        a["prompt_filter_results"] = json!([{"prompt_index": 0, "content_filter_results": {}}]);
        a["x_groq"] = json!({"id": "req_1"});
        a["meta"] = json!({"deeper": {"tool_calls": calls}});
        a["list"] = json!([[{"tool_calls": calls}], "tool_calls", 1]);
        a["choices"][0]["logprobs"] = json!({"content": [], "tool_calls": []});
        a["choices"][0]["message"]["thinking_blocks"] =
            json!([{"type": "thinking", "thinking": "t", "signature": "s"}]);
        assert_eq!(check_completion(&a), Ok(()));
        assert_eq!(
            call_inside(&json!({"a": 1, "functionCall": 2})),
            Some((None, "functionCall"))
        );
        assert_eq!(
            call_inside(&json!([1, {"a": 1}, {"tool": 1}])),
            Some((Some(2), "tool"))
        );
        assert_eq!(call_inside(&json!("tool_calls")), None);
    }

    #[test]
    fn a_calls_extra_content_passes_unless_it_could_bear_a_call() {
        let call = |extra: Value| {
            json!({"id": "function-call-1", "type": "function", "extra_content": extra,
                   "function": {"name": "get_weather", "arguments": "{}"}})
        };
        // Gemini 3's thought signature, as its OpenAI-compatible API sends it.
        let gemini = json!({"google": {"thought_signature": "CqMBAdHtim"}});
        assert_eq!(check_call(&call(gemini.clone()), false), Ok(()));
        assert_eq!(check_call(&call(gemini), true), Ok(()));
        assert_eq!(check_call(&call(Value::Null), true), Ok(()));
        assert_eq!(check_call(&call(Value::Null), false), Ok(()));
        assert_eq!(
            check_call(&call(json!("sig")), true),
            Err("a tool call's `extra_content` is not an object".into())
        );
        let hidden = json!({"google": {"parts": [{"functionCall": {"name": "rm_rf"}}]}});
        assert_eq!(
            check_call(&call(hidden), false),
            Err("a tool call's `extra_content` has a call-bearing field `functionCall`".into())
        );
        // Any other unknown field of a call is refused as before.
        let mut other = call(json!({}));
        other["extra"] = json!({});
        assert_eq!(
            check_call(&other, false),
            Err("a tool call has an unknown field `extra`".into())
        );
    }

    #[test]
    fn tgis_description_beside_a_calls_name_passes_as_text() {
        let call = |d: Value| {
            json!({"id": "0", "type": "function",
                   "function": {"description": d, "name": "get_weather", "arguments": "{}"}})
        };
        assert_eq!(check_call(&call(Value::Null), false), Ok(()));
        assert_eq!(check_call(&call(json!("Get the weather")), true), Ok(()));
        assert_eq!(
            check_call(&call(json!({"name": "rm_rf"})), false),
            Err("a call's description is not text".into())
        );
    }
}
