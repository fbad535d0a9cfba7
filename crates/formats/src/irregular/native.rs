//! `native`: the transcript's own `tool_calls`, as the server's parser
//! returned them (OpenAI chat-completions shape).
//!
//! # Wire format
//!
//! ```json
//! [{"id": "call_1", "type": "function",
//!   "function": {"name": "get_weather", "arguments": "{\"city\": \"Antwerp\"}"}}]
//! ```
//!
//! Each entry is one candidate with [`Source::Native`]: its span is its
//! index `i..i+1`, its raw text the `arguments` string (or the JSON text of
//! an object given directly), and failure offsets index into that raw text.
//!
//! Decisions (SPEC §9):
//! - the mode runs only when the transcript has a `tool_calls` key; `[]`
//!   means no candidates;
//! - the arguments are read from `arguments`, else `parameters` or `params`
//!   (SPEC §9's argument keys; TGI 1.4 wrote `function.parameters`), and two
//!   of them (non-null) are `malformed` (ambiguous);
//! - `arguments` `""`, `null` or missing (with no other argument key) is
//!   `truncated` (the server cut the call off); `"{}"` is an empty object; a string that is not complete JSON
//!   is classified like any payload (a cut-off string is `truncated`);
//! - a string holding a JSON string that itself holds an object
//!   (`"\"{\\\"city\\\": 1}\""`) is `escaping` (double-encoded); lenient
//!   reads it with [`Repair::DoubleEncodedArguments`];
//! - `arguments` already an object is read like a string holding its text:
//!   the transcript loader keeps the object's exact text, so duplicate keys
//!   and numbers a float would round are `malformed` here too; any other
//!   type is `malformed`; a missing or empty `function.name` is `malformed`;
//! - the bare shape `{"name": …, "arguments": …}` is read too.
//!
//! ```
//! use serde_json::json;
//! use toolgate_formats::{by_name, Input, Strictness};
//! let calls = vec![json!({"id": "c1", "type": "function",
//!     "function": {"name": "get_weather", "arguments": "{\"city\": \"Antwerp\"}"}})];
//! let input = Input { tool_calls: Some(&calls), ..Input::new("") };
//! let c = by_name("native").unwrap().extract(&input, Strictness::Strict);
//! assert_eq!(c[0].call().unwrap().arguments["city"], "Antwerp");
//! ```

use crate::input::{Input, Strictness};
use crate::jsonread::Read;
use crate::{Extractor, callobj, jsonread, util};
use serde_json::{Map, Value};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Repair, Source, Span};

const MODE: &str = "native";

/// The `native` extractor.
#[derive(Clone, Copy, Debug, Default)]
pub struct Native;

impl Extractor for Native {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"tool_calls: [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Antwerp\"}"}}]"#
    }
    fn describe(&self) -> &str {
        "the transcript's own tool_calls (OpenAI shape, function.arguments a JSON string)"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        let Some(calls) = input.tool_calls else {
            return Vec::new();
        };
        calls
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut c = one(v, strictness);
                c.source = Source::Native;
                c.span = Span::new(i, i + 1);
                c
            })
            .collect()
    }
}

fn one(v: &Value, lenient: Strictness) -> Candidate {
    let func = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let name = match func.get("name") {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err("the native call's `function.name` is empty".to_string()),
        Some(other) => Err(format!(
            "the native call's `function.name` is {}",
            callobj::type_name(other)
        )),
        None => Err("the native call has no `function.name`".to_string()),
    };
    // SPEC §9's argument keys, as in every mode that carries a call object:
    // TGI 1.4 put a native call's arguments under `function.parameters`.
    let given: Vec<&str> = callobj::ARG_KEYS
        .into_iter()
        .filter(|k| func.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    let (raw, args, repairs) = match given.as_slice() {
        [_, _, ..] => (
            String::new(),
            Err(ParseFailure::new(
                FailureKind::Malformed,
                format!(
                    "ambiguous: the native call has two argument keys ({})",
                    given.join(", ")
                ),
                0,
            )),
            Vec::new(),
        ),
        [key] => arguments(func.get(*key), lenient),
        [] => arguments(func.get("arguments"), lenient),
    };
    match name {
        Ok(n) => util::candidate(MODE, Span::default(), &raw, Some(n), args, repairs),
        Err(msg) => util::candidate(
            MODE,
            Span::default(),
            &raw,
            None,
            Err(ParseFailure::new(FailureKind::Malformed, msg, 0)),
            Vec::new(),
        ),
    }
}

type Args = Result<Map<String, Value>, ParseFailure>;

fn arguments(a: Option<&Value>, lenient: Strictness) -> (String, Args, Vec<Repair>) {
    let empty = |raw: &str| {
        (
            raw.to_string(),
            Err(ParseFailure::new(
                FailureKind::Truncated,
                "the native call's `arguments` is empty",
                0,
            )),
            Vec::new(),
        )
    };
    match a {
        None | Some(Value::Null) => empty(""),
        // The loader keeps an object's exact text as a string (see
        // `Transcript::tool_calls`); an object built in memory has no text
        // left to check, but goes through the same reader all the same.
        Some(obj @ Value::Object(_)) => {
            let text = obj.to_string();
            match jsonread::read_all(&text, lenient, true) {
                Ok(Read {
                    value: Value::Object(m),
                    repairs,
                    ..
                }) => (text, Ok(m), repairs),
                // Unreachable: the text of an object reads as an object.
                Ok(_) => (
                    text,
                    Err(ParseFailure::new(
                        FailureKind::Malformed,
                        "`arguments` must encode an object",
                        0,
                    )),
                    Vec::new(),
                ),
                Err(f) => (text, Err(f), Vec::new()),
            }
        }
        Some(Value::String(s)) if s.trim().is_empty() => empty(s),
        Some(Value::String(s)) => match jsonread::read_all(s, lenient, true) {
            Err(f) => (s.clone(), Err(f), Vec::new()),
            Ok(read) => match read.value {
                Value::Object(m) => (s.clone(), Ok(m), read.repairs),
                Value::String(inner) => {
                    let decoded = jsonread::read_all(&inner, lenient, false);
                    match decoded {
                        Ok(r2) if r2.value.is_object() => {
                            if lenient.is_lenient() {
                                let mut repairs = read.repairs;
                                repairs.extend(r2.repairs);
                                repairs.push(Repair::DoubleEncodedArguments);
                                let m = match r2.value {
                                    Value::Object(m) => m,
                                    _ => Map::new(),
                                };
                                (s.clone(), Ok(m), repairs)
                            } else {
                                (
                                    s.clone(),
                                    Err(ParseFailure::new(
                                        FailureKind::Escaping,
                                        "double-encoded arguments: `arguments` is a JSON string holding JSON",
                                        0,
                                    )),
                                    Vec::new(),
                                )
                            }
                        }
                        _ => (
                            s.clone(),
                            Err(ParseFailure::new(
                                FailureKind::Malformed,
                                "`arguments` must encode an object, found a string",
                                0,
                            )),
                            Vec::new(),
                        ),
                    }
                }
                other => (
                    s.clone(),
                    Err(ParseFailure::new(
                        FailureKind::Malformed,
                        format!(
                            "`arguments` must encode an object, found {}",
                            callobj::type_name(&other)
                        ),
                        0,
                    )),
                    Vec::new(),
                ),
            },
        },
        Some(other) => (
            other.to_string(),
            Err(ParseFailure::new(
                FailureKind::Malformed,
                format!(
                    "`arguments` must be a JSON string or an object, found {}",
                    callobj::type_name(other)
                ),
                0,
            )),
            Vec::new(),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(calls: Option<Vec<Value>>, strictness: Strictness) -> Vec<Candidate> {
        let input = Input {
            tool_calls: calls.as_deref(),
            ..Input::new("")
        };
        Native.extract(&input, strictness)
    }

    fn call(args: Value) -> Value {
        json!({"id": "c", "type": "function", "function": {"name": "f", "arguments": args}})
    }

    #[test]
    fn openai_shape_spans_are_indices() {
        let c = run(
            Some(vec![call(json!("{\"a\": 1}")), call(json!("{}"))]),
            Strictness::Strict,
        );
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].span, Span::new(1, 2));
        assert_eq!(c[0].source, Source::Native);
        assert_eq!(c[0].raw, "{\"a\": 1}");
        assert_eq!(c[0].call().unwrap().arguments["a"], 1);
        assert!(c[1].call().unwrap().arguments.is_empty());
    }

    #[test]
    fn absent_or_empty_tool_calls_are_no_candidates() {
        assert!(run(None, Strictness::Strict).is_empty());
        assert!(run(Some(vec![]), Strictness::Strict).is_empty());
    }

    #[test]
    fn empty_null_or_missing_arguments_are_truncated() {
        let missing = json!({"type": "function", "function": {"name": "f"}});
        for v in [call(json!("")), call(Value::Null), missing] {
            let c = run(Some(vec![v]), Strictness::Lenient);
            assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
            assert_eq!(c[0].name.as_deref(), Some("f"));
        }
        let c = run(Some(vec![call(json!("{\"a\": \"Ant"))]), Strictness::Strict);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    #[test]
    fn double_encoded_is_escaping_strict_repaired_lenient() {
        let v = call(json!("\"{\\\"city\\\": \\\"Antwerp\\\"}\""));
        let c = run(Some(vec![v.clone()]), Strictness::Strict);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Escaping);
        let c = run(Some(vec![v]), Strictness::Lenient);
        assert_eq!(c[0].call().unwrap().arguments["city"], "Antwerp");
        assert_eq!(c[0].repairs, vec![Repair::DoubleEncodedArguments]);
    }

    #[test]
    fn object_arguments_accepted_other_types_malformed() {
        let c = run(
            Some(vec![
                call(json!({"a": 1})),
                call(json!(3)),
                call(json!("[1]")),
            ]),
            Strictness::Strict,
        );
        assert_eq!(c[0].call().unwrap().arguments["a"], 1);
        assert_eq!(c[1].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(c[2].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn object_arguments_from_a_file_follow_the_reader_rules() {
        // The loader hands an object's exact text over as a string.
        let c = run(
            Some(vec![
                call(json!(r#"{"a": 1, "a": 2}"#)),
                call(json!(r#"{"n": 1.9999999999999999}"#)),
                call(json!(r#"{"id": 123456789012345678901234567890}"#)),
            ]),
            Strictness::Lenient,
        );
        for (c, why) in c.iter().zip(["duplicate", "exactly", "64 bits"]) {
            let f = c.failure().unwrap();
            assert_eq!(f.kind, FailureKind::Malformed);
            assert!(f.message.contains(why), "{}", f.message);
        }
    }

    #[test]
    fn missing_name_is_malformed() {
        let c = run(
            Some(vec![json!({"function": {"arguments": "{}"}})]),
            Strictness::Strict,
        );
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(c[0].name, None);
    }
}
