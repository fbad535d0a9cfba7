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

use super::checked::Nodes;
use serde_json::Value;
use std::borrow::Cow;
use toolgate_core::import::{choice_error, is_error_finish};

/// The most choices one answer may hold, streamed or not
/// ([`toolgate_core::MAX_CHOICES`], the importers' cap too): each choice is
/// accumulated and judged on its own, so an answer naming more is not read.
pub(crate) use toolgate_core::MAX_CHOICES;

/// The answer's shape rule lives in core ([`toolgate_core::answer`]) so
/// that the Python guardrails refuse exactly what the proxy refuses.
pub(crate) use toolgate_core::answer::{
    ANSWER_KEYS, ANSWER_KNOWN, CHOICE_KEYS, CHOICE_KNOWN, MESSAGE_KEYS, call_bearing, check_call,
    check_chunk, check_completion, check_function, read_as,
};

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

/// Parses a non-streamed 2xx answer body as a chat completion: JSON content
/// type, UTF-8 (serde rejects invalid bytes and lone surrogate escapes), the
/// shape above.
#[cfg(test)]
pub fn parse_completion(content_type: Option<&str>, body: &[u8]) -> Result<Value, String> {
    parse_within(content_type, body, usize::MAX)
}

/// An answer checked in full (the slow path of [`read_completion`]),
/// refusing first, without building it, one of more than `max_nodes` JSON
/// values ([`too_many_values`]).
fn parse_within(
    content_type: Option<&str>,
    body: &[u8],
    max_nodes: usize,
) -> Result<Value, String> {
    if is_sse_type(content_type) {
        return Err("an event stream answered a request that did not ask to stream".into());
    }
    if !is_json_type(content_type) {
        return Err(format!(
            "the answer's content type is {}, not JSON",
            content_type.map_or("missing".into(), |c| format!("`{}`", clip(c, 80)))
        ));
    }
    if max_nodes != usize::MAX && super::checked::too_many_nodes(body, &Nodes::new(max_nodes)) {
        return Err(too_many_values("answer", max_nodes));
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the answer is not valid JSON (or not UTF-8): {e}"))?;
    // Served byte for byte when enforce does not edit it: a key given twice
    // would be judged by its last value and read by the client's parser
    // maybe by its first.
    if let Some(why) = super::checked::repeated_key(body) {
        return Err(format!("the answer is ambiguous: {why}"));
    }
    check_completion(&v)?;
    Ok(v)
}

/// What the proxy reads of one choice of a checked, non-streamed answer:
/// what it judges and what a transcript keeps.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ChoiceRead<'a> {
    /// `message.content` (`""` when absent or null).
    pub content: Cow<'a, str>,
    /// Whether `message.content` was there, and as a string.
    pub content_is: Has,
    /// `message.reasoning_content`, else `message.reasoning` (a null
    /// `reasoning_content` is `None`; `reasoning` is not read then).
    pub reasoning: Option<Cow<'a, str>>,
    /// `message.tool_calls` as it came (null or an array).
    pub tool_calls: Option<Cow<'a, Value>>,
    /// `message.function_call` as it came (null or an object).
    pub function_call: Option<Cow<'a, Value>>,
    /// `finish_reason` when it is a string.
    pub finish_reason: Option<Cow<'a, str>>,
}

impl<'a> ChoiceRead<'a> {
    /// A message's fields as a borrowed reader met them (each text `None`
    /// when absent, `Some(None)` when null), before its choice's
    /// `finish_reason` is known.
    pub(crate) fn of_message(
        content: Option<Option<Cow<'a, str>>>,
        reasoning_content: Option<Option<Cow<'a, str>>>,
        reasoning: Option<Option<Cow<'a, str>>>,
        tool_calls: Option<Value>,
        function_call: Option<Value>,
    ) -> ChoiceRead<'a> {
        let content_is = match &content {
            None => Has::Absent,
            Some(None) => Has::Null,
            Some(Some(_)) => Has::Text,
        };
        ChoiceRead {
            content: content.flatten().unwrap_or_default(),
            content_is,
            reasoning: match reasoning_content {
                Some(r) => r,
                None => reasoning.flatten(),
            },
            tool_calls: tool_calls.map(Cow::Owned),
            function_call: function_call.map(Cow::Owned),
            finish_reason: None,
        }
    }
}

/// What a field of an answer held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Has {
    /// It was not there.
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A string.
    Text,
    /// Something else.
    Other,
}

impl Has {
    /// What `v` is.
    fn of(v: Option<&Value>) -> Has {
        match v {
            None => Has::Absent,
            Some(Value::Null) => Has::Null,
            Some(Value::String(_)) => Has::Text,
            Some(_) => Has::Other,
        }
    }
}

/// An answer's `prompt_tokens`, `completion_tokens` and `total_tokens`,
/// each when it is a whole number ≥ 0 (as `Value::as_u64` reads it).
pub(crate) type Counts = [Option<u64>; 3];

/// The keys of [`Counts`], in order.
pub(crate) const COUNT_KEYS: [&str; 3] = ["prompt_tokens", "completion_tokens", "total_tokens"];

/// The token counts of a `usage` object.
pub(crate) fn counts_of(usage: &Value) -> Counts {
    COUNT_KEYS.map(|k| usage.get(k).and_then(Value::as_u64))
}

/// The usage of every attempt, summed (re-rolls cost tokens too):
/// `prompt_tokens=P completion_tokens=C total_tokens=T`.
pub(crate) fn usage_total(usages: impl Iterator<Item = Counts>) -> Option<String> {
    let mut sum = [0u64; 3];
    let mut any = false;
    for counts in usages {
        for (total, n) in sum.iter_mut().zip(counts) {
            if let Some(n) = n {
                *total = total.saturating_add(n);
                any = true;
            }
        }
    }
    // Written piece by piece: `format!` cost more than the sums.
    any.then(|| {
        let mut text = String::with_capacity(96);
        let mut digits = itoa::Buffer::new();
        for (i, (key, n)) in COUNT_KEYS.iter().zip(sum).enumerate() {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(key);
            text.push('=');
            text.push_str(digits.format(n));
        }
        text
    })
}

/// An answer's `usage` object.
#[derive(Debug, PartialEq)]
pub(crate) struct Usage<'a> {
    /// Its token counts (the proxy's usage total).
    pub counts: Counts,
    /// The object itself, for a record; `None` when the reader was not
    /// asked for it (the borrowed pass then builds no `Value` tree).
    pub value: Option<Cow<'a, Value>>,
}

/// What the proxy reads of a checked, non-streamed answer.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Read<'a> {
    pub choices: Vec<ChoiceRead<'a>>,
    /// `usage` when it is an object.
    pub usage: Option<Usage<'a>>,
}

impl<'a> Read<'a> {
    /// The fields of an answer [`check_completion`] accepted.
    pub fn of(v: &'a Value) -> Read<'a> {
        let text = |v: Option<&'a Value>| v.and_then(Value::as_str).map(Cow::Borrowed);
        let choices = v
            .get("choices")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        let m = c.get("message");
                        let field = |k: &str| m.and_then(|m| m.get(k));
                        ChoiceRead {
                            content: text(field("content")).unwrap_or_default(),
                            content_is: Has::of(field("content")),
                            reasoning: text(
                                field("reasoning_content").or_else(|| field("reasoning")),
                            ),
                            tool_calls: field("tool_calls").map(Cow::Borrowed),
                            function_call: field("function_call").map(Cow::Borrowed),
                            finish_reason: text(c.get("finish_reason")),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Read {
            choices,
            usage: v.get("usage").filter(|u| u.is_object()).map(|u| Usage {
                counts: counts_of(u),
                value: Some(Cow::Borrowed(u)),
            }),
        }
    }
}

/// The answer checked as a `Value` parse checks it (`parse_within`), read
/// into what the proxy uses: the same answers
/// accepted, the same reasons for those refused, the same fields read.
///
/// Most answers are read in one borrowed pass ([`fast`]): no `Value` tree,
/// the content borrowed from the body when it has no escapes. Whatever
/// that pass does not take as it is (an error, a repeated key, a field it
/// does not read, a value of an unexpected type) is parsed into a `Value`
/// kept in `parsed` and checked as before, so that the slow path alone
/// decides every refusal and every unusual answer.
///
/// `usage_value`: whether [`Usage::value`] is wanted (a record keeps it);
/// without it the borrowed pass reads only the counts. `max_nodes`: the
/// most JSON values the answer may hold (`--max-response-nodes`), counted
/// alike by both passes, the borrowed one as it reads, the slow one before
/// it builds anything.
pub(crate) fn read_completion<'a>(
    content_type: Option<&str>,
    body: &'a [u8],
    parsed: &'a mut Option<Value>,
    usage_value: bool,
    max_nodes: usize,
) -> Result<Read<'a>, String> {
    // The whole body checked as UTF-8 at once (SIMD), then read as text:
    // neither quick reader checks each string again.
    if is_json_type(content_type)
        && let Ok(text) = simdutf8::basic::from_utf8(body)
    {
        // A choice ending in an error finish is left to the full read,
        // which refuses it (`provider_error`).
        let plain = |read: &Read<'_>| {
            !read
                .choices
                .iter()
                .any(|c| c.finish_reason.as_deref().is_some_and(is_error_finish))
        };
        if !usage_value
            && let Some(read) = hand::answer(text, max_nodes)
            && plain(&read)
        {
            return Ok(read);
        }
        let nodes = Nodes::new(max_nodes);
        if let Some(read) = fast::read(text, usage_value, &nodes)
            && plain(&read)
        {
            return Ok(read);
        }
        if nodes.over() {
            return Err(too_many_values("answer", max_nodes));
        }
    }
    let v = parsed.insert(parse_within(content_type, body, max_nodes)?);
    provider_error(v)?;
    let mut read = Read::of(v);
    if !usage_value && let Some(u) = &mut read.usage {
        u.value = None;
    }
    Ok(read)
}

/// Why an answer is not the model's: a choice that ended in a provider
/// error (`finish_reason` `error` or `abort`, an `error` on the choice),
/// as the importer, `toolgate run` and a stream read it
/// ([`choice_error`]). What such a choice holds is what arrived before the
/// failure: judged, a call written before an abort ran.
fn provider_error(v: &Value) -> Result<(), String> {
    let choices = v.get("choices").and_then(Value::as_array);
    for (pos, c) in choices.into_iter().flatten().enumerate() {
        if let Some(why) = choice_error(c) {
            let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
            return Err(format!("the upstream's choice {index} {why}"));
        }
    }
    Ok(())
}

/// The default `--max-response-nodes`. What a chat answer holds is far
/// below: a message, its calls (each call's arguments one string), usage.
/// The largest answers are non-streamed ones with `top_logprobs`: some 230
/// values per token at 20 alternatives, 4 million at 16,000 tokens. Past
/// it, what a `Value` of the answer costs (up to some 70 bytes a value,
/// more while its lists grow) is what the limit bounds: a proxy that read
/// a 60 MB answer of 30 million values peaked at 0.7 GB (release), where
/// the 64 MiB byte limit alone let it reach 4–6 GB.
pub const DEFAULT_MAX_RESPONSE_NODES: usize = 4_000_000;

/// Why an upstream `what` (an answer, a stream event) is refused for its
/// size in JSON values: a `Value` costs some 30–70 times the bytes of a
/// tiny one, so the byte limit alone let one 64 MiB answer cost gigabytes.
pub(crate) fn too_many_values(what: &str, max_nodes: usize) -> String {
    format!("the {what} holds more than {max_nodes} JSON values (--max-response-nodes)")
}

/// The first of the answer's readers: a hand-written one (the cursor of
/// `gateway::scan`) of the usual answer (vLLM's, OpenAI's, the mock's),
/// which takes an answer only when every part of it is one it reads
/// exactly as the borrowed serde pass (`fast`, below) reads it, and leaves
/// (`None`) anything else to that pass: a non-empty `tool_calls` or a
/// `function_call` other than null, `usage` wanted as a value, a container
/// under a key its level does not know, every key `fast` gives up on, and
/// what the cursor gives up on. `same_as_slow` (tests) holds it to the
/// full read.
mod hand {
    use super::super::scan::{Cur, Text};
    use super::{
        ANSWER_KEYS, ANSWER_KNOWN, CHOICE_KEYS, CHOICE_KNOWN, COUNT_KEYS, ChoiceRead, Counts,
        MAX_CHOICES, MESSAGE_KEYS, Read, Usage, call_bearing, read_as,
    };
    use serde_json::Value;

    /// The answer in `text` (UTF-8, checked by the caller) as the borrowed
    /// pass reads it, or `None`: not taken here. `max_nodes`: the JSON values
    /// it may hold; past them it is not taken here either.
    pub(super) fn answer(text: &str, max_nodes: usize) -> Option<Read<'_>> {
        let mut c = Cur::new(text, max_nodes);
        let read = top(&mut c)?;
        c.end().map(|_| read)
    }

    /// The answer: an object with a `choices` array.
    fn top<'a>(c: &mut Cur<'a>) -> Option<Read<'a>> {
        let mut choices = None;
        let mut usage: Option<Option<Counts>> = None;
        c.object(|c, k| {
            match k {
                "choices" => {
                    let mut list = Vec::with_capacity(1);
                    c.array(|c| {
                        if list.len() == MAX_CHOICES {
                            return None;
                        }
                        list.push(choice(c)?);
                        Some(())
                    })?;
                    choices = Some(list);
                }
                "usage" => usage = Some(usage_counts(c)?),
                // Known, read as nothing, bearing no call (the arms below
                // would send them to the same `skip`).
                "id" | "object" | "created" | "model" | "system_fingerprint" | "service_tier" => {
                    c.skip(0, false)?
                }
                k if k != "tool_choice" && call_bearing(k) => return None,
                k if read_as(k, ANSWER_KEYS).is_some() => return None,
                k => c.skip(0, !ANSWER_KNOWN.contains(&k))?,
            }
            Some(())
        })?;
        Some(Read {
            choices: choices?,
            usage: usage.flatten().map(|counts| Usage {
                counts,
                value: None,
            }),
        })
    }

    /// `usage` read for its counts: an object or null.
    fn usage_counts(c: &mut Cur<'_>) -> Option<Option<Counts>> {
        if c.peek()? == b'n' {
            return c.literal(b"null").map(|()| None);
        }
        let mut counts = Counts::default();
        c.object(|c, k| {
            match COUNT_KEYS.iter().position(|n| *n == k) {
                Some(i) => {
                    counts[i] = match c.peek()? {
                        b'n' => c.literal(b"null").map(|()| None)?,
                        _ => Some(c.u64()?),
                    }
                }
                None => c.skip(0, false)?,
            }
            Some(())
        })?;
        Some(Some(counts))
    }

    /// One choice: an object with a `message` object.
    fn choice<'a>(c: &mut Cur<'a>) -> Option<ChoiceRead<'a>> {
        let mut message = None;
        let mut finish = None;
        c.object(|c, k| {
            match k {
                "message" => message = Some(message_of(c)?),
                "finish_reason" => finish = c.text_or_null()?,
                "index" => {
                    c.u64()?;
                }
                "logprobs" | "stop_reason" | "matched_stop" => c.skip(0, false)?,
                "error" | "delta" => return None,
                k if call_bearing(k) => return None,
                k if read_as(k, CHOICE_KEYS).is_some() => return None,
                k => c.skip(0, !CHOICE_KNOWN.contains(&k))?,
            }
            Some(())
        })?;
        let mut choice: ChoiceRead<'a> = message?;
        choice.finish_reason = finish;
        Some(choice)
    }

    /// A message: the fields judged, the others checked.
    fn message_of<'a>(c: &mut Cur<'a>) -> Option<ChoiceRead<'a>> {
        let mut content: Option<Text<'a>> = None;
        let mut reasoning_content: Option<Text<'a>> = None;
        let mut reasoning: Option<Text<'a>> = None;
        let mut tool_calls = None;
        let mut function_call = None;
        c.object(|c, k| {
            match k {
                "content" => content = Some(c.text_or_null()?),
                "reasoning_content" => reasoning_content = Some(c.text_or_null()?),
                "reasoning" => reasoning = Some(c.text_or_null()?),
                "refusal" => {
                    c.text_or_null()?;
                }
                // Null or an empty list; calls are left to the serde pass.
                "tool_calls" => {
                    tool_calls = Some(match c.peek()? {
                        b'n' => c.literal(b"null").map(|()| Value::Null)?,
                        _ => c.array(|_| None).map(|()| Value::Array(Vec::new()))?,
                    });
                }
                "function_call" => {
                    c.literal(b"null")?;
                    function_call = Some(Value::Null);
                }
                "role" | "annotations" | "audio" | "name" => c.skip(0, false)?,
                k if !MESSAGE_KEYS.contains(&k) && call_bearing(k) => return None,
                k if read_as(k, MESSAGE_KEYS).is_some() => return None,
                k => c.skip(0, !MESSAGE_KEYS.contains(&k))?,
            }
            Some(())
        })?;
        Some(ChoiceRead::of_message(
            content,
            reasoning_content,
            reasoning,
            tool_calls,
            function_call,
        ))
    }

    #[cfg(test)]
    #[allow(clippy::unwrap_used)]
    mod tests {
        use super::super::Has;
        use super::*;
        use std::borrow::Cow;

        /// The answers servers send, as they send them: each taken here, and
        /// read as the full read reads it (`check`'s property test holds the
        /// rest).
        #[test]
        fn the_usual_answers_are_taken_here() {
            let vllm = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1732000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":null,"content":"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>","tool_calls":[]},"logprobs":null,"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":180,"total_tokens":205,"completion_tokens":25,"prompt_tokens_details":null},"prompt_logprobs":null,"kv_transfer_params":null}"#;
            let openai = r#"{
      "id": "chatcmpl-2", "object": "chat.completion", "created": 1741569952, "model": "gpt-4.1",
      "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello \u00e9\ud83d\ude00 \/ \"x\"", "refusal": null, "annotations": []},
        "logprobs": null, "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "accepted_prediction_tokens": 0}},
      "service_tier": "default", "system_fingerprint": null
    }"#;
            let r = answer(vllm, usize::MAX).expect("vLLM's answer");
            assert_eq!(r.choices.len(), 1);
            assert_eq!(
                r.choices[0].content,
                "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>"
            );
            assert_eq!(r.choices[0].content_is, Has::Text);
            assert_eq!(r.choices[0].reasoning, None);
            assert_eq!(
                r.choices[0].tool_calls.as_deref(),
                Some(&Value::Array(vec![]))
            );
            assert_eq!(r.choices[0].finish_reason.as_deref(), Some("stop"));
            assert_eq!(
                r.usage.map(|u| u.counts),
                Some([Some(180), Some(25), Some(205)])
            );
            let r = answer(openai, usize::MAX).expect("OpenAI's answer");
            assert_eq!(r.choices[0].content, "Hello é😀 / \"x\"");
            assert!(matches!(r.choices[0].content, Cow::Owned(_)));
            assert_eq!(
                r.usage.map(|u| u.counts),
                Some([Some(19), Some(10), Some(29)])
            );
            // Plain text is borrowed from the body.
            let r = answer(r#"{"choices":[{"message":{"content":"hi"}}]}"#, usize::MAX).unwrap();
            assert!(matches!(r.choices[0].content, Cow::Borrowed("hi")));
        }

        /// The keys read as nothing without asking: each one the general arms
        /// would skip alike (known at its level, bearing no call, no twin of
        /// a key read).
        #[test]
        fn the_shortcut_keys_are_the_general_rule() {
            let levels: [(&[&str], &[&str], &[&str]); 3] = [
                (
                    &[
                        "id",
                        "object",
                        "created",
                        "model",
                        "system_fingerprint",
                        "service_tier",
                    ],
                    ANSWER_KNOWN,
                    ANSWER_KEYS,
                ),
                (
                    &["logprobs", "stop_reason", "matched_stop"],
                    CHOICE_KNOWN,
                    CHOICE_KEYS,
                ),
                (
                    &["role", "annotations", "audio", "name"],
                    MESSAGE_KEYS,
                    MESSAGE_KEYS,
                ),
            ];
            for (shortcuts, known, read) in levels {
                for k in shortcuts {
                    assert!(known.contains(k), "{k}");
                    assert!(!call_bearing(k), "{k}");
                    assert_eq!(read_as(k, read), None, "{k}");
                }
            }
        }

        /// What is left to the serde pass: valid answers this reader does not
        /// read, and every text serde_json refuses.
        #[test]
        fn the_rest_is_left_to_the_serde_pass() {
            for body in [
                r#"{"choices":[{"message":{"tool_calls":[{"id":"c"}]}}]}"#,
                r#"{"choices":[{"message":{"function_call":{"name":"f"}}}]}"#,
                r#"{"choices":[],"x":1e2}"#,
                r#"{"choices":[],"x":{"a":1,"a":2}}"#,
                r#"{"choices":[],"x":"\ud800"}"#,
                r#"{"choices":[],"x":"\udc00\ud800"}"#,
                r#"{"choices":[],"x":"\x"}"#,
                "{\"choices\":[],\"x\":\"a\tb\"}",
                r#"{"choices":[],"x":01}"#,
                r#"{"choices":[],"x":1.}"#,
                r#"{"choices":[],"x":-}"#,
                r#"{"choices":[],"x":tru}"#,
                r#"{"choices":[],"x":[1,]}"#,
                r#"{"choices":[],"x":{"a":1,}}"#,
                r#"{"choices":[],}"#,
                r#"{"choices":[]"#,
                r#"{"choices":[]} {}"#,
                r#"{"choices":[],"unknown":{"a":1}}"#,
                r#"{"choices":[],"usage":{"total_tokens":"3"}}"#,
                r#"{"choices":[],"usage":{"total_tokens":18446744073709551615}}"#,
                r#"{"choices":[{"index":-1,"message":{}}]}"#,
                r#"{"choices":[{"message":{},"error":{"message":"x"}}]}"#,
                r#"{"choices":[{"message":{"content":1}}]}"#,
                r#"{"choices":[{"message":{"c\u006fntent":"x"}}]}"#,
                r#"{"choices":[{"message":{"Content":"x"}}]}"#,
                r#"{"choices":[{"message":{"toolCalls":[]}}]}"#,
                r#"{"choices":[],"Choices":[]}"#,
                r#"{"id":"x"}"#,
                "{\"choices\":[{\"message\":{\"content\":\"a\\\"b\u{1}c\"}}]}",
                "{\"choices\":[{\"message\":{\"content\":\"ab\u{1f}\"}}]}",
                "{\"choices\":[],\"id\":\"a\u{0}\"}",
            ] {
                assert!(answer(body, usize::MAX).is_none(), "{body}");
            }
            let deep = format!(
                r#"{{"choices":[],"id":{}1{}}}"#,
                "[".repeat(40),
                "]".repeat(40)
            );
            assert!(answer(&deep, usize::MAX).is_none());
            // The node budget: 5 values here (object, key, array, key, string).
            let small = r#"{"choices":[],"id":"x"}"#;
            assert!(answer(small, 5).is_some());
            assert!(answer(small, 4).is_none());
        }
    }
}

/// The borrowed pass of [`read_completion`]. Every value of the body goes
/// through serde_json's own parser (`deserialize_any`, never its
/// unchecked skip: `checked::Checked`), so text, escapes, numbers and depth
/// are checked as a `Value` parse checks them. `None`: not taken here.
mod fast {
    use super::super::checked::{Counted, Key, NoCallInside, Nodes, Seen, UniqueValue};
    use super::{
        ANSWER_KEYS, ANSWER_KNOWN, CHOICE_KEYS, CHOICE_KNOWN, COUNT_KEYS, ChoiceRead, Counts,
        MESSAGE_KEYS, Read, Usage, call_bearing, check_call, check_function, counts_of, read_as,
    };
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::Value;
    use std::borrow::Cow;
    use std::fmt;

    /// Why the pass gave up (never shown: the slow path says why).
    const GIVE_UP: &str = "not read here";

    pub(super) fn read<'de>(text: &'de str, usage_value: bool, nodes: &Nodes) -> Option<Read<'de>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let read = de.deserialize_map(Top { usage_value, nodes }).ok()?;
        de.end().ok()?;
        Some(read)
    }

    fn give_up<E: serde::de::Error>() -> E {
        E::custom(GIVE_UP)
    }

    /// A key, unescaped and counted; the raw-value token (which a `Value`
    /// reads specially) is not taken here.
    fn key<'de, A: MapAccess<'de>>(
        map: &mut A,
        nodes: &Nodes,
    ) -> Result<Option<Cow<'de, str>>, A::Error> {
        match map.next_key::<Key<'de>>()? {
            Some(k) => nodes.take(1).map(|()| Some(k.0)),
            None => Ok(None),
        }
    }

    /// The value of a key the pass does not read, checked; a key given
    /// twice is not taken here (the full read refuses it). The keys it
    /// reads are each taken [`once`], so only these need remembering.
    fn other<'de, A: MapAccess<'de>>(
        map: &mut A,
        seen: &mut Seen<'de>,
        k: Cow<'de, str>,
        nodes: &Nodes,
    ) -> Result<(), A::Error> {
        seen.insert::<A::Error>(k)
            .map_err(|_| give_up::<A::Error>())?;
        map.next_value_seed(Counted(nodes))?;
        Ok(())
    }

    /// [`other`] for a key its level does not know (`known`: neither read
    /// nor known to carry no call): a value holding a call one level in
    /// (`answer::call_inside`) is not taken here (the full read refuses it).
    fn unknown<'de, A: MapAccess<'de>>(
        map: &mut A,
        seen: &mut Seen<'de>,
        k: Cow<'de, str>,
        known: bool,
        nodes: &Nodes,
    ) -> Result<(), A::Error> {
        if known {
            return other(map, seen, k, nodes);
        }
        seen.insert::<A::Error>(k)
            .map_err(|_| give_up::<A::Error>())?;
        map.next_value_seed(NoCallInside(nodes))?;
        Ok(())
    }

    /// A value read whole as a `Value`, given up on when one of its objects
    /// repeats a key (a `Value` would keep the last silently).
    fn unique_value<'de, A: MapAccess<'de>>(map: &mut A, nodes: &Nodes) -> Result<Value, A::Error> {
        map.next_value_seed(UniqueValue(nodes))
    }

    /// Sets `slot` once; a repeated key is not taken here (a `Value` keeps
    /// the last).
    fn once<T, E: serde::de::Error>(slot: &mut Option<T>, v: T) -> Result<(), E> {
        if slot.is_some() {
            return Err(give_up());
        }
        *slot = Some(v);
        Ok(())
    }

    /// A string or null (`content`, `refusal`, `reasoning…`,
    /// `finish_reason`); anything else is not taken here.
    struct TextOrNull<'n>(&'n Nodes);

    impl<'de> DeserializeSeed<'de> for TextOrNull<'_> {
        type Value = Option<Cow<'de, str>>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            self.0.take(1)?;
            d.deserialize_any(TextOrNullVisitor)
        }
    }

    struct TextOrNullVisitor;

    impl<'de> Visitor<'de> for TextOrNullVisitor {
        type Value = Option<Cow<'de, str>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string or null")
        }
        fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Borrowed(v)))
        }
        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(v.to_string())))
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }

    /// The answer: an object with a `choices` array; `usage_value`: build
    /// `usage` as a `Value` too.
    struct Top<'n> {
        usage_value: bool,
        nodes: &'n Nodes,
    }

    impl<'de> Visitor<'de> for Top<'_> {
        type Value = Read<'de>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a chat completion")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read<'de>, A::Error> {
            self.nodes.take(1)?;
            let mut choices = None;
            let mut usage: Option<Option<Usage<'de>>> = None;
            let mut seen = Seen::default();
            while let Some(k) = key(&mut map, self.nodes)? {
                match &*k {
                    "choices" => once(&mut choices, map.next_value_seed(Choices(self.nodes))?)?,
                    "usage" if self.usage_value => {
                        let v = unique_value(&mut map, self.nodes)?;
                        let u = v.is_object().then(|| Usage {
                            counts: counts_of(&v),
                            value: Some(Cow::Owned(v)),
                        });
                        once(&mut usage, u)?;
                    }
                    "usage" => {
                        let u = map.next_value_seed(UsageCounts(self.nodes))?;
                        once(
                            &mut usage,
                            u.map(|counts| Usage {
                                counts,
                                value: None,
                            }),
                        )?;
                    }
                    k if k != "tool_choice" && call_bearing(k) => return Err(give_up()),
                    // A twin of a key read (`Choices`): refused by the full read.
                    k if read_as(k, ANSWER_KEYS).is_some() => return Err(give_up()),
                    _ => {
                        let known = ANSWER_KNOWN.contains(&&*k);
                        unknown(&mut map, &mut seen, k.clone(), known, self.nodes)?;
                    }
                }
            }
            Ok(Read {
                choices: choices.ok_or_else(give_up)?,
                usage: usage.flatten(),
            })
        }
    }

    /// `usage` read for its counts alone: an object, whose three counts are
    /// each parsed as a `Value` parses them and every other member checked
    /// (`Checked`); or null (no usage). Anything else is not taken here.
    struct UsageCounts<'n>(&'n Nodes);

    impl<'de> DeserializeSeed<'de> for UsageCounts<'_> {
        type Value = Option<Counts>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for UsageCounts<'_> {
        type Value = Option<Counts>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a usage object")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            self.0.take(1)?;
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            self.0.take(1)?;
            let mut counts = Counts::default();
            let mut seen = Seen::default();
            // The counts read, one bit each: a repeated one is not taken here.
            let mut read = 0u8;
            while let Some(k) = key(&mut map, self.0)? {
                match COUNT_KEYS.iter().position(|c| *c == k) {
                    Some(i) => {
                        if read & (1 << i) != 0 {
                            return Err(give_up());
                        }
                        read |= 1 << i;
                        counts[i] = unique_value(&mut map, self.0)?.as_u64();
                    }
                    None => other(&mut map, &mut seen, k, self.0)?,
                }
            }
            Ok(Some(counts))
        }
    }

    struct Choices<'n>(&'n Nodes);

    impl<'de> DeserializeSeed<'de> for Choices<'_> {
        type Value = Vec<ChoiceRead<'de>>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for Choices<'_> {
        type Value = Vec<ChoiceRead<'de>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("choices")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            self.0.take(1)?;
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(1).min(16));
            while let Some(c) = seq.next_element_seed(Choice(self.0))? {
                if out.len() == super::MAX_CHOICES {
                    // The full read refuses it, with the reason.
                    return Err(give_up());
                }
                out.push(c);
            }
            Ok(out)
        }
    }

    /// One choice: an object with a `message` object.
    struct Choice<'n>(&'n Nodes);

    impl<'de> DeserializeSeed<'de> for Choice<'_> {
        type Value = ChoiceRead<'de>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for Choice<'_> {
        type Value = ChoiceRead<'de>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a choice")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            self.0.take(1)?;
            let mut message: Option<ChoiceRead<'de>> = None;
            let mut finish: Option<Option<Cow<'de, str>>> = None;
            let mut index: Option<u64> = None;
            let mut seen = Seen::default();
            while let Some(k) = key(&mut map, self.0)? {
                match &*k {
                    "message" => once(&mut message, map.next_value_seed(Message(self.0))?)?,
                    "finish_reason" => once(&mut finish, map.next_value_seed(TextOrNull(self.0))?)?,
                    "index" => once(&mut index, {
                        self.0.take(1)?;
                        map.next_value::<u64>()?
                    })?,
                    k if k == "delta" || call_bearing(k) => return Err(give_up()),
                    k if read_as(k, CHOICE_KEYS).is_some() => return Err(give_up()),
                    // A provider's error on the choice: the full read refuses it.
                    "error" => return Err(give_up()),
                    _ => {
                        let known = CHOICE_KNOWN.contains(&&*k);
                        unknown(&mut map, &mut seen, k.clone(), known, self.0)?;
                    }
                }
            }
            let mut choice = message.ok_or_else(give_up)?;
            choice.finish_reason = finish.flatten();
            Ok(choice)
        }
    }

    /// A message: the fields judged, the others checked as `check_message`
    /// checks them.
    struct Message<'n>(&'n Nodes);

    impl<'de> DeserializeSeed<'de> for Message<'_> {
        type Value = ChoiceRead<'de>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for Message<'_> {
        type Value = ChoiceRead<'de>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            self.0.take(1)?;
            let mut content = None;
            let mut reasoning_content = None;
            let mut reasoning = None;
            let mut refusal = None;
            let mut tool_calls: Option<Value> = None;
            let mut function_call: Option<Value> = None;
            let mut seen = Seen::default();
            while let Some(k) = key(&mut map, self.0)? {
                match &*k {
                    "content" => once(&mut content, map.next_value_seed(TextOrNull(self.0))?)?,
                    "reasoning_content" => {
                        once(
                            &mut reasoning_content,
                            map.next_value_seed(TextOrNull(self.0))?,
                        )?;
                    }
                    "reasoning" => once(&mut reasoning, map.next_value_seed(TextOrNull(self.0))?)?,
                    "refusal" => once(&mut refusal, map.next_value_seed(TextOrNull(self.0))?)?,
                    "tool_calls" => {
                        let v = unique_value(&mut map, self.0)?;
                        match &v {
                            Value::Null => {}
                            Value::Array(calls) => {
                                for c in calls {
                                    check_call(c, false).map_err(|_| give_up::<A::Error>())?;
                                }
                            }
                            _ => return Err(give_up()),
                        }
                        once(&mut tool_calls, v)?;
                    }
                    "function_call" => {
                        let v = unique_value(&mut map, self.0)?;
                        if !v.is_null() {
                            check_function(&v, false).map_err(|_| give_up::<A::Error>())?;
                        }
                        once(&mut function_call, v)?;
                    }
                    k if !MESSAGE_KEYS.contains(&k) && call_bearing(k) => return Err(give_up()),
                    k if read_as(k, MESSAGE_KEYS).is_some() => return Err(give_up()),
                    // role, annotations, audio, name; and keys not known,
                    // unless they hold a call one level in.
                    _ => {
                        let known = MESSAGE_KEYS.contains(&&*k);
                        unknown(&mut map, &mut seen, k.clone(), known, self.0)?;
                    }
                }
            }
            Ok(ChoiceRead::of_message(
                content,
                reasoning_content,
                reasoning,
                tool_calls,
                function_call,
            ))
        }
    }
}

/// At most `max` characters of `s` (kept with the JSON reading below
/// this module, which needs it too).
pub use super::checked::clip;

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

    /// `read_completion` against the `Value` path: the same result, and
    /// when the borrowed pass takes an answer, the slow path takes it too
    /// and reads the same fields from it.
    fn same_as_slow(body: &[u8]) -> Option<bool> {
        let slow = parse_completion(JSON, body);
        // Without the usage object, the slow path's read less that object.
        let without_usage = |v| {
            let mut r = Read::of(v);
            if let Some(u) = &mut r.usage {
                u.value = None;
            }
            r
        };
        for usage_value in [true, false] {
            let expected = |v| {
                if usage_value {
                    Read::of(v)
                } else {
                    without_usage(v)
                }
            };
            let mut parsed = None;
            let read = read_completion(
                JSON,
                body,
                &mut parsed,
                usage_value,
                DEFAULT_MAX_RESPONSE_NODES,
            );
            match (&slow, &read) {
                (Ok(v), Ok(r)) => {
                    assert_eq!(*r, expected(v), "{}", String::from_utf8_lossy(body));
                }
                (Err(a), Err(b)) => assert_eq!(a, b),
                _ => panic!(
                    "{}: slow {:?}, read {:?}",
                    String::from_utf8_lossy(body),
                    slow.as_ref().err(),
                    read.as_ref().err()
                ),
            }
            if let Some(f) = &fast_read(body, usage_value, &Nodes::new(DEFAULT_MAX_RESPONSE_NODES))
            {
                let v = slow.as_ref().unwrap_or_else(|e| {
                    panic!(
                        "taken fast, refused slow ({e}): {}",
                        String::from_utf8_lossy(body)
                    )
                });
                assert_eq!(*f, expected(v), "{}", String::from_utf8_lossy(body));
            }
        }
        // The hand-written reader takes an answer only as the full read
        // reads it.
        if let Some(r) = std::str::from_utf8(body)
            .ok()
            .and_then(|t| super::hand::answer(t, DEFAULT_MAX_RESPONSE_NODES))
        {
            let v = slow.as_ref().unwrap_or_else(|e| {
                panic!(
                    "taken by the scan, refused slow ({e}): {}",
                    String::from_utf8_lossy(body)
                )
            });
            assert_eq!(r, without_usage(v), "{}", String::from_utf8_lossy(body));
        }
        Some(fast_read(body, true, &Nodes::new(DEFAULT_MAX_RESPONSE_NODES)).is_some())
    }

    /// The borrowed pass on bytes (UTF-8 checked first, as
    /// `read_completion` checks it).
    fn fast_read<'a>(body: &'a [u8], usage_value: bool, nodes: &Nodes) -> Option<Read<'a>> {
        fast::read(std::str::from_utf8(body).ok()?, usage_value, nodes)
    }

    #[test]
    fn usage_total_sums_each_count_over_the_attempts() {
        assert_eq!(usage_total(std::iter::empty()), None);
        assert_eq!(usage_total([[None; 3], [None; 3]].into_iter()), None);
        assert_eq!(
            usage_total([[Some(10), None, Some(30)], [Some(5), Some(0), None]].into_iter())
                .as_deref(),
            Some("prompt_tokens=15 completion_tokens=0 total_tokens=30")
        );
        assert_eq!(
            usage_total([[Some(u64::MAX), Some(1), None], [Some(9), None, None]].into_iter())
                .as_deref(),
            Some("prompt_tokens=18446744073709551615 completion_tokens=1 total_tokens=0")
        );
    }

    #[test]
    fn usage_counts_are_read_without_the_object_unless_asked() {
        let body = br#"{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":-1,"total_tokens":9,"details":{"a":[1]}}}"#;
        let counts = [Some(4), None, Some(9)];
        let u = fast_read(body, false, &Nodes::new(usize::MAX))
            .and_then(|r| r.usage)
            .expect("taken");
        assert_eq!((u.counts, u.value), (counts, None));
        let u = fast_read(body, true, &Nodes::new(usize::MAX))
            .and_then(|r| r.usage)
            .expect("taken");
        assert_eq!(u.counts, counts);
        assert_eq!(
            u.value.as_deref(),
            Some(
                &json!({"prompt_tokens": 4, "completion_tokens": -1, "total_tokens": 9, "details": {"a": [1]}})
            )
        );
        // Not an object: no usage, read either way.
        for body in [
            &br#"{"choices":[],"usage":null}"#[..],
            br#"{"choices":[],"usage":[1]}"#,
        ] {
            let mut parsed = None;
            let read = read_completion(JSON, body, &mut parsed, false, DEFAULT_MAX_RESPONSE_NODES)
                .expect("read");
            assert_eq!(read.usage, None);
        }
    }

    #[test]
    fn the_borrowed_pass_takes_plain_answers_and_leaves_the_rest() {
        let msg = |m: &str| {
            format!(
                r#"{{"id":"x","choices":[{{"index":0,"message":{m},"finish_reason":"stop"}}],"usage":{{"total_tokens":3}}}}"#
            )
        };
        let taken = [
            msg(r#"{"role":"assistant","content":"hi"}"#),
            msg(r#"{"role":"assistant","content":"<tool_call>{\"name\": \"f\"}</tool_call>"}"#),
            msg(r#"{"content":null,"reasoning_content":null,"reasoning":"r"}"#),
            msg(r#"{"content":"a","reasoning":"r","refusal":null,"annotations":[],"audio":null}"#),
            msg(r#"{"cont\u0065nt":"escaped key"}"#),
            msg(r#"{"content":"","tool_calls":[]}"#),
            msg(r#"{"content":null,"tool_calls":null,"function_call":null}"#),
            msg(
                r#"{"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}"#,
            ),
            msg(r#"{"function_call":{"name":"f","arguments":"{}"}}"#),
            r#"{"choices":[],"tool_choice":"auto","usage":7}"#.to_string(),
            " {\"choices\" : [ ] } \n".to_string(),
            r#"{"choices":[],"usage":null}"#.to_string(),
            r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":-2,"total_tokens":3.0,"prompt_tokens_details":{"cached_tokens":0}}}"#.to_string(),
            r#"{"choices":[],"usage":{"total_tokens":1,"x":[null,{"y":"\u00e9"}]}}"#.to_string(),
            // Keys known are not looked into; others one level deep only.
            r#"{"choices":[],"system_fingerprint":"fp","service_tier":"default","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}"#.to_string(),
            r#"{"choices":[],"tool_choice":{"type":"function","function":{"name":"f"}},"usage":{"total_tokens":1,"tool_calls":[]}}"#.to_string(),
            r#"{"choices":[],"x_groq":{"id":"r"},"meta":{"deep":{"tool_calls":[]}},"list":[[{"tool_calls":[]}],"tool_calls"]}"#.to_string(),
            r#"{"choices":[{"index":0,"message":{"content":"x","thinking_blocks":[{"type":"thinking"}]},"logprobs":{"content":[],"tool_calls":[]},"extra":{"a":{"function_call":1}}}]}"#.to_string(),
        ];
        for body in &taken {
            assert_eq!(same_as_slow(body.as_bytes()), Some(true), "{body}");
        }
        let left = [
            // Refused by the slow path, which says why.
            msg(r#"["assistant","hi"]"#),
            msg(r#"{"content":["part"]}"#),
            msg(r#"{"tool_use":[]}"#),
            msg(r#"{"tool_calls":{"a":1}}"#),
            msg(r#"{"tool_calls":[{"function":{"name":"f","arguments":{}}}]}"#),
            r#"{"choices":[{"index":0,"delta":{}}]}"#.to_string(),
            r#"{"choices":[{"index":-0,"message":{}}]}"#.to_string(),
            r#"{"choices":[{"index":1.0,"message":{}}]}"#.to_string(),
            r#"{"choices":[{"index":null,"message":{}}]}"#.to_string(),
            r#"{"choices":[{"index":0}]}"#.to_string(),
            r#"{"choices":null}"#.to_string(),
            r#"{"choices":[],"function":1}"#.to_string(),
            r#"{"id":1}"#.to_string(),
            r#"[{"choices":[]}]"#.to_string(),
            // A key not known holding a call one level in.
            r#"{"choices":[],"message":{"role":"assistant","tool_calls":[]}}"#.to_string(),
            r#"{"choices":[],"messages":[1,{"FunctionCall":null}]}"#.to_string(),
            r#"{"choices":[{"index":0,"message":{},"messages":[{"tool_calls":[]}]}]}"#.to_string(),
            msg(r#"{"content":"x","extra":{"function_call":null}}"#),
            msg(r#"{"content":"x","extra":[{"tool":1}]}"#),
            r#"{"choices":[]} x"#.to_string(),
            // What a skipped field holds is checked as a `Value` parse checks it.
            format!(
                r#"{{"choices":[],"x":{}{}}}"#,
                "[".repeat(200),
                "]".repeat(200)
            ),
            r#"{"choices":[],"x":"\ud800"}"#.to_string(),
            "{\"choices\":[],\"x\":\"a\nb\"}".to_string(),
            r#"{"choices":[],"x":1e999}"#.to_string(),
            r#"{"choices":[],"usage":{"total_tokens":1e999}}"#.to_string(),
            format!(
                r#"{{"choices":[],"usage":{{"x":{}{}}}}}"#,
                "[".repeat(200),
                "]".repeat(200)
            ),
            r#"{"choices":[],"usage":{"x":"\ud800"}}"#.to_string(),
            // Refused by the slow path as ambiguous (a key given twice).
            r#"{"choices":[],"usage":{"total_tokens":1,"total_tokens":5}}"#.to_string(),
            msg(r#"{"content":"a","content":"b"}"#),
            r#"{"choices":[],"choices":[{"message":{"content":"x"}}]}"#.to_string(),
            r#"{"choices":[{"message":{},"message":{"content":"x"}}]}"#.to_string(),
            r#"{"choices":[{"index":0,"index":1,"message":{}}]}"#.to_string(),
            // A `Value` reads an object whose first key is serde_json's
            // raw-value token as the JSON text it holds.
            r#"{"$serde_json::private::RawValue":"{\"choices\":[]}","choices":[]}"#.to_string(),
            r#"{"$serde_json::private::RawValue":"{\"choices\":[]}"}"#.to_string(),
            msg(r#"{"$serde_json::private::RawValue":"1","content":"x"}"#),
            r#"{"choices":[],"x":{"$serde_json::private::RawValue":"[]"}}"#.to_string(),
        ];
        for body in &left {
            assert_eq!(same_as_slow(body.as_bytes()), Some(false), "{body}");
        }
        let bad_utf8 = b"{\"choices\": [], \"x\": \"\xff\"}";
        assert_eq!(same_as_slow(bad_utf8), Some(false));
        // A content type that is not JSON is refused as before.
        let mut parsed = None;
        let e = read_completion(
            None,
            b"{\"choices\":[]}",
            &mut parsed,
            true,
            DEFAULT_MAX_RESPONSE_NODES,
        )
        .unwrap_err();
        assert!(e.contains("missing"), "{e}");
    }

    /// JSON text of an answer-like shape, with keys that repeat, keys the
    /// checks refuse, escapes and values of every type where the checks
    /// expect one.
    fn answer_text() -> impl Strategy<Value = String> {
        let scalar = prop::sample::select(vec![
            "null",
            "true",
            "0",
            "-0",
            "1",
            "1.0",
            "-3",
            "1e2",
            "\"s\"",
            "\"a\\\"b\\n\"",
            "\"\\u00e9\"",
            "\"\\ud83d\\ude00\"",
            "\"\\ud800\"",
            "\"function\"",
            "[]",
            "{}",
        ])
        .prop_map(str::to_string);
        let value = scalar.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec((key(), inner), 0..3).prop_map(|kv| object(&kv)),
            ]
        });
        let message =
            prop::collection::vec((key(), value.clone()), 0..5).prop_map(|kv| object(&kv));
        let call = prop::collection::vec((key(), value.clone()), 0..3).prop_map(|kv| object(&kv));
        let message = prop_oneof![
            3 => message,
            1 => (prop::collection::vec(call, 0..2), value.clone()).prop_map(|(calls, c)| {
                format!(r#"{{"content":{c},"tool_calls":[{}]}}"#, calls.join(","))
            }),
            1 => value.clone(),
        ];
        let choice = (message, prop::collection::vec((key(), value.clone()), 0..3)).prop_map(
            |(m, mut kv)| {
                kv.insert(0, ("message".to_string(), m));
                object(&kv)
            },
        );
        (
            prop::collection::vec(choice, 0..3),
            prop::collection::vec((key(), value), 0..3),
            any::<bool>(),
        )
            .prop_map(|(choices, mut kv, pretty)| {
                kv.insert(
                    0,
                    ("choices".to_string(), format!("[{}]", choices.join(","))),
                );
                let t = object(&kv);
                if pretty {
                    t.replace(',', ", ").replace(':', ": ")
                } else {
                    t
                }
            })
    }

    fn key() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "choices",
            "message",
            "content",
            "reasoning_content",
            "reasoning",
            "refusal",
            "tool_calls",
            "function_call",
            "finish_reason",
            "index",
            "usage",
            "delta",
            "role",
            "id",
            "logprobs",
            "tool_choice",
            "tool_use",
            "name",
            "arguments",
            "type",
            "function",
            "cont\\u0065nt",
            "$serde_json::private::RawValue",
            // Keys not known, and known ones not looked into.
            "messages",
            "extra",
            "prompt_filter_results",
            "system_fingerprint",
        ])
        .prop_map(str::to_string)
    }

    fn object(kv: &[(String, String)]) -> String {
        let fields: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", fields.join(","))
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn the_borrowed_pass_agrees_with_the_value_path(t in answer_text()) {
            same_as_slow(t.as_bytes());
        }

        /// A key bears calls when its lowercase form holds `call`, `tool`
        /// or `function`, whatever else it holds.
        #[test]
        fn call_bearing_is_the_lowercase_search(
            k in "(?i)[a-zé_İ]{0,3}(call|tool|function|cal|too|func)?[a-zK_]{0,3}"
        ) {
            let lower = k.to_ascii_lowercase();
            let expected =
                lower.contains("call") || lower.contains("tool") || lower.contains("function");
            prop_assert_eq!(call_bearing(&k), expected, "{:?}", k);
        }
    }

    #[test]
    fn a_key_given_twice_anywhere_makes_the_answer_ambiguous() {
        // A hostile upstream's answers (faulty-upstream probe): each was
        // judged by the last copy of the key and served byte for byte with
        // both, so a reader that keeps the first copy saw `rm_rf`.
        let call = |function: &str| {
            format!(
                r#"{{"choices":[{{"index":0,"message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"c1","type":"function","function":{function}}}]}},"finish_reason":"tool_calls"}}]}}"#
            )
        };
        let weather = r#""arguments":"{\"city\":\"Paris\"}""#;
        let cases = [
            ("name", call(&format!(r#"{{"name":"rm_rf","name":"get_weather",{weather}}}"#))),
            (
                "arguments",
                call(r#"{"name":"get_weather","arguments":"{\"evil\":1}","arguments":"{\"city\":\"Paris\"}"}"#),
            ),
            (
                "function",
                format!(
                    r#"{{"choices":[{{"index":0,"message":{{"tool_calls":[{{"id":"c1","type":"function","function":{{"name":"rm_rf","arguments":"{{}}"}},"function":{{"name":"get_weather",{weather}}}}}]}},"finish_reason":"tool_calls"}}]}}"#
                ),
            ),
            (
                "message",
                r#"{"choices":[{"index":0,"message":{"tool_calls":[{"id":"c","type":"function","function":{"name":"rm_rf","arguments":"{}"}}]},"message":{"content":"hi"},"finish_reason":"stop"}]}"#.to_string(),
            ),
            (
                "choices",
                r#"{"choices":[{"index":0,"message":{"content":"<tool_call>{\"name\": \"rm_rf\"}</tool_call>"}}],"choices":[{"index":0,"message":{"content":"hi"}}]}"#.to_string(),
            ),
            (
                "content",
                r#"{"choices":[{"index":0,"message":{"content":"<tool_call>{\"name\": \"rm_rf\"}</tool_call>","content":"hi"}}]}"#.to_string(),
            ),
            ("id", r#"{"id":"a","id":"b","choices":[]}"#.to_string()),
            (
                "x",
                r#"{"choices":[{"index":0,"message":{"content":"hi","annotations":[{"x":1,"x":2}]}}]}"#.to_string(),
            ),
            ("cached_tokens", r#"{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":0,"cached_tokens":1}}}"#.to_string()),
            // The same key spelled with an escape is the same key.
            ("content", r#"{"choices":[{"index":0,"message":{"content":"a","cont\u0065nt":"b"}}]}"#.to_string()),
        ];
        for (key, body) in &cases {
            for usage_value in [true, false] {
                let mut parsed = None;
                let e = read_completion(
                    JSON,
                    body.as_bytes(),
                    &mut parsed,
                    usage_value,
                    DEFAULT_MAX_RESPONSE_NODES,
                )
                .expect_err(body);
                assert!(
                    e.starts_with(&format!(
                        "the answer is ambiguous: the key `{key}` is repeated"
                    )),
                    "{e}: {body}"
                );
            }
        }
        // Twelve distinct keys (past the ones compared in place) are fine;
        // the thirteenth repeating the twelfth is not.
        let keys: String = (0..12).map(|i| format!(r#","k{i}":{i}"#)).collect();
        let ok = format!(r#"{{"choices":[]{keys}}}"#);
        assert!(
            read_completion(
                JSON,
                ok.as_bytes(),
                &mut None,
                false,
                DEFAULT_MAX_RESPONSE_NODES
            )
            .is_ok()
        );
        let twice = format!(r#"{{"choices":[]{keys},"k11":0}}"#);
        let e = read_completion(
            JSON,
            twice.as_bytes(),
            &mut None,
            false,
            DEFAULT_MAX_RESPONSE_NODES,
        )
        .unwrap_err();
        assert!(e.contains("the key `k11` is repeated"), "{e}");
    }

    #[test]
    fn call_bearing_keys() {
        for k in [
            "tool_calls",
            "Tool_Calls",
            "FUNCTION",
            "x_callback",
            "myTOOLs",
        ] {
            assert!(call_bearing(k), "{k}");
        }
        for k in ["", "role", "cal", "to ol", "funct", "caℓl", "ſunction"] {
            assert!(!call_bearing(k), "{k}");
        }
    }

    /// `--max-response-nodes`: both passes count every value and key
    /// alike, so an answer is refused at the same count whichever reads
    /// it, before the slow one builds anything.
    #[test]
    fn an_answer_of_too_many_values_is_refused_alike_by_both_passes() {
        let fast_taken = completion(json!({"role": "assistant", "content": "hi",
            "tool_calls": [{"id": "a", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}]}))
        .to_string();
        // `usage` as a list: not taken by the borrowed pass for its counts.
        let slow_only = r#"{"choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}],"usage":[0,0,0,0]}"#;
        for (body, fast) in [(fast_taken.as_str(), true), (slow_only, false)] {
            assert_eq!(
                fast_read(body.as_bytes(), false, &Nodes::new(usize::MAX)).is_some(),
                fast
            );
            let mut counted = 0;
            for max in 1..200 {
                let refused =
                    super::super::checked::too_many_nodes(body.as_bytes(), &Nodes::new(max));
                for usage_value in [true, false] {
                    let mut parsed = None;
                    let got = read_completion(JSON, body.as_bytes(), &mut parsed, usage_value, max)
                        .map(|_| ());
                    if refused {
                        assert_eq!(
                            got.err(),
                            Some(too_many_values("answer", max)),
                            "{body} at {max}"
                        );
                    } else {
                        assert!(got.is_ok(), "{body} at {max}: {:?}", got.err());
                    }
                }
                if !refused && counted == 0 {
                    counted = max;
                }
            }
            // The count is the body's own: 20 values and keys or more.
            assert!(counted >= 10, "{body}: {counted}");
        }
    }
}
