//! The shape an upstream answer must have before `enforce` judges it.
//!
//! `enforce` is a closed state machine: a 2xx answer is either checked in
//! full (content type, UTF-8, JSON shape, every field that can carry a tool
//! call) or replaced by a 502 that says why. What the proxy cannot read, it
//! cannot vouch for, so nothing here is "probably fine".
//!
//! Call-bearing fields the proxy knows are `tool_calls` and the legacy
//! `function_call`. Any other key of a message (or delta, or choice) whose
//! name mentions `call`, `tool` or `function` is a call-bearing field the
//! proxy does not know (a future API, another vendor's shape): the answer is
//! refused rather than passed on unchecked.

use serde_json::{Map, Value};

/// Keys of a message or delta the proxy reads or knows to carry no call.
const MESSAGE_KEYS: &[&str] = &[
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

/// Whether an unknown key may carry a tool call.
fn call_bearing(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.contains("call") || k.contains("tool") || k.contains("function")
}

/// Whether a `Content-Type` is JSON (`application/json`, `…+json`).
pub fn is_json_type(content_type: Option<&str>) -> bool {
    let Some(ct) = content_type else {
        return false;
    };
    let essence = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

/// Whether a `Content-Type` is an event stream.
pub fn is_sse_type(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        ct.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .eq_ignore_ascii_case("text/event-stream")
    })
}

/// Checks one native call (`tool_calls[i]`, whole or as a stream delta when
/// `delta`): an object whose `function` holds a string `name` and string
/// `arguments` (a delta may omit either).
fn check_call(call: &Value, delta: bool) -> Result<(), String> {
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
            other if call_bearing(other) || !delta => {
                return Err(format!("a tool call has an unknown field `{other}`"));
            }
            _ => {}
        }
    }
    if !delta && !c.contains_key("function") {
        return Err("a tool call has no function".into());
    }
    Ok(())
}

/// `{"name": "...", "arguments": "..."}` (a delta may omit either).
fn check_function(f: &Value, delta: bool) -> Result<(), String> {
    let Value::Object(f) = f else {
        return Err("a call's function is not an object".into());
    };
    for (k, v) in f {
        match k.as_str() {
            "name" | "arguments" if !(v.is_string() || (delta && v.is_null())) => {
                return Err(format!("a call's {k} is not a string"));
            }
            "name" | "arguments" => {}
            other => return Err(format!("a call's function has an unknown field `{other}`")),
        }
    }
    if !delta && !(f.get("name").is_some_and(Value::is_string)) {
        return Err("a call has no name".into());
    }
    Ok(())
}

/// Checks a message (or a stream delta, `delta`).
fn check_message(m: &Map<String, Value>, delta: bool) -> Result<(), String> {
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
            _ => {}
        }
    }
    Ok(())
}

/// Checks one choice of a response (`delta`: of a stream chunk).
fn check_choice(c: &Value, delta: bool) -> Result<(), String> {
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
                Value::Object(m) => check_message(m, delta)?,
                Value::Null if delta => {}
                _ => return Err(format!("`{body}` is not an object")),
            },
            // A message where a delta belongs (or the reverse) is a call
            // field the proxy would not read.
            "message" | "delta" => return Err(format!("a `{k}` in place of `{body}`")),
            other if call_bearing(other) => {
                return Err(format!("an unknown call-bearing field `{other}`"));
            }
            _ => {}
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
    for c in choices {
        check_choice(c, false)?;
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
            for c in choices {
                check_choice(c, true)?;
            }
        }
        // A usage-only chunk may say `choices: null` or leave it out.
        None | Some(Value::Null) => {}
        Some(_) => return Err("`choices` is not an array".into()),
    }
    top_level(o)
}

fn top_level(o: &Map<String, Value>) -> Result<(), String> {
    for k in o.keys() {
        if k != "choices" && k != "tool_choice" && call_bearing(k) {
            return Err(format!("an unknown call-bearing field `{k}`"));
        }
    }
    Ok(())
}

/// Parses a non-streamed 2xx answer body as a chat completion: JSON content
/// type, UTF-8 (serde rejects invalid bytes and lone surrogate escapes), the
/// shape above.
pub fn parse_completion(content_type: Option<&str>, body: &[u8]) -> Result<Value, String> {
    if is_sse_type(content_type) {
        return Err("an event stream answered a request that did not ask to stream".into());
    }
    if !is_json_type(content_type) {
        return Err(format!(
            "the answer's content type is {}, not JSON",
            content_type.map_or("missing".into(), |c| format!("`{}`", clip(c, 80)))
        ));
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the answer is not valid JSON (or not UTF-8): {e}"))?;
    check_completion(&v)?;
    Ok(v)
}

/// At most `max` characters of `s`.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const JSON: Option<&str> = Some("application/json; charset=utf-8");

    fn completion(message: Value) -> Value {
        json!({"id": "x", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    }

    #[test]
    fn a_plain_answer_passes() {
        let body =
            completion(json!({"role": "assistant", "content": "hi", "reasoning_content": null}));
        assert!(parse_completion(JSON, body.to_string().as_bytes()).is_ok());
    }

    #[test]
    fn unreadable_bodies_are_refused_with_the_reason() {
        let bad_utf8 = b"{\"choices\": [{\"message\": {\"content\": \"\xff\"}}]}";
        let e = parse_completion(JSON, bad_utf8).unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
        for surrogate in [
            &br#"{"choices": [{"message": {"content": "\ud800"}}]}"#[..],
            br#"{"choices": [{"message": {"content": "a\ud800b"}}]}"#,
            br#"{"choices": [{"message": {"content": "\udc00"}}]}"#,
        ] {
            let e = parse_completion(JSON, surrogate).unwrap_err();
            assert!(e.contains("not valid JSON"), "{e}");
        }
        let e = parse_completion(Some("text/event-stream"), b"data: {}\n\n").unwrap_err();
        assert!(e.contains("event stream"), "{e}");
        let e = parse_completion(None, b"{}").unwrap_err();
        assert!(e.contains("missing"), "{e}");
        let e = parse_completion(JSON, b"{\"id\": 1}").unwrap_err();
        assert!(e.contains("choices"), "{e}");
    }

    #[test]
    fn call_fields_are_checked_and_unknown_ones_refused() {
        for (message, says) in [
            (json!({"content": ["part"]}), "not text"),
            (json!({"tool_calls": {"a": 1}}), "not an array"),
            (
                json!({"tool_calls": [{"type": "custom", "custom": {"name": "x"}}]}),
                "type",
            ),
            (
                json!({"tool_calls": [{"function": {"name": "f", "arguments": {}}}]}),
                "arguments",
            ),
            (json!({"function_call": {"name": 3}}), "name"),
            (json!({"tool_use": [{"name": "rm_rf"}]}), "tool_use"),
            (json!({"parallel_calls": []}), "parallel_calls"),
        ] {
            let e = check_completion(&completion(message.clone())).unwrap_err();
            assert!(e.contains(says), "{message}: {e}");
        }
        let e = check_chunk(&json!({"choices": [{"delta": {"functionCall": {}}}]})).unwrap_err();
        assert!(e.contains("functionCall"), "{e}");
        assert!(
            check_chunk(&json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": "{\"a"}}]}}]}))
            .is_ok()
        );
        assert!(check_chunk(&json!({"choices": [], "usage": {"total_tokens": 3}})).is_ok());
    }
}
