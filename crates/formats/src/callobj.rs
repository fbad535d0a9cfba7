//! Reading a JSON call object (SPEC §9 "Name and argument keys").
//!
//! Every mode that carries a JSON call object (`json`, `fence`, `marker`,
//! `hermes`, `mistral` lists, `llama3`, …) reads it here, so that the key
//! rules are the same everywhere:
//!
//! - name from `name`, `tool` or `tool_name`; arguments from `arguments`,
//!   `parameters` or `params`;
//! - two name keys or two argument keys: `malformed` (ambiguous);
//! - any other key except the metadata keys `id`, `type` and `index` (and
//!   a format's own, passed to [`from_value_owned`]) (for
//!   example `args`, `input`, `argumentz`): `malformed` — the model may have
//!   put its arguments there, and a call is never executed with arguments
//!   dropped; lenient replay reads `args`, `input` or `kwargs` as the
//!   argument key when there is none, with [`Repair::ArgumentKey`] (in the
//!   OpenAI wrapper the outer object may hold `function` and the metadata
//!   keys only);
//! - no argument key, or `null` arguments: `{}` (nothing is invented; the
//!   model wrote a whole, closed object, so unlike a native call's null
//!   `arguments` this is no truncation, DECISIONS f3-formats);
//! - the OpenAI wrapper `{"type": "function", "function": {"name": …,
//!   "arguments": …}}` is read through its `function` member;
//! - `arguments` given as a JSON string: strict → `escaping` when the string
//!   itself holds a JSON object (double-encoded), else `malformed`; lenient →
//!   the decoded object with [`Repair::DoubleEncodedArguments`];
//! - arguments of another type (number, array, bool) or a name that is not a
//!   non-empty string: `malformed`.
//!
//! A value with no name key at all is [`CallObj::NotACall`]: the `json` mode
//! then reports no candidate, while markup modes (`<tool_call>…`) may report
//! a failure instead (see [`crate::families::jsonlike::json_array::MissingName`]).
//!
//! Failures carry offset 0: a value has no position. Callers set the offset
//! to the payload start with [`crate::util::rebase`].
//!
//! ```ignore
//! use serde_json::json;
//! use toolgate_formats::{Strictness, callobj::{from_value, CallObj}};
//! let v = json!({"tool_name": "greet", "parameters": {"name": "Alice"}});
//! let CallObj::Call(parts) = from_value(&v, Strictness::Strict) else { panic!() };
//! assert_eq!(parts.name.as_deref(), Some("greet"));
//! assert_eq!(parts.arguments.unwrap()["name"], "Alice");
//! ```

use crate::Strictness;
use serde_json::{Map, Value};
use toolgate_core::{FailureKind, ParseFailure, Repair};

/// The name-key spellings, in the order they are looked up.
pub const NAME_KEYS: [&str; 3] = ["name", "tool", "tool_name"];
/// The argument-key spellings.
pub const ARG_KEYS: [&str; 3] = ["arguments", "parameters", "params"];
/// Keys a call object may carry besides its name and arguments in every
/// format: SPEC §9's `id`, `type` and `index`. A format whose chat template
/// writes a key of its own in every call object (Command R's
/// `tool_call_id`) passes it to [`from_value_owned`] (its format file says
/// so); in every other format that key is unknown, so `malformed`.
pub const METADATA_KEYS: [&str; 3] = ["id", "type", "index"];

/// Whether `key` is a metadata key of a call object in a format whose own
/// metadata keys are `own`.
fn is_metadata(key: &str, own: &[&str]) -> bool {
    METADATA_KEYS.contains(&key) || own.contains(&key)
}

/// Keys lenient replay reads as the argument key when none of [`ARG_KEYS`]
/// is present ([`Repair::ArgumentKey`]).
pub const LENIENT_ARG_KEYS: [&str; 3] = ["args", "input", "kwargs"];

/// The one arguments-object reader: the JSON value read where a mode
/// expects its arguments object (`<tool name=…>{…}`, kimi's
/// `<|tool_call_argument_begin|>{…}`, mistral's `[ARGS]{…}`, …), with the
/// repairs the JSON reader applied. An object is the arguments; a JSON string
/// holding an object is double-encoded arguments: `escaping` in strict mode
/// (SPEC §5 rule 6), the decoded object with
/// [`Repair::DoubleEncodedArguments`] in lenient mode; anything else is
/// `malformed`. `offset` is where the value starts (failures carry it).
///
/// ```ignore
/// use serde_json::json;
/// use toolgate_core::FailureKind;
/// use toolgate_formats::{Strictness, callobj::arguments_object};
/// let (got, _) = arguments_object(json!("{\"city\": \"Antwerp\"}"), Vec::new(), Strictness::Strict, 7);
/// assert_eq!(got.unwrap_err().kind, FailureKind::Escaping);
/// let (got, repairs) = arguments_object(json!("{\"city\": \"Antwerp\"}"), Vec::new(), Strictness::Lenient, 7);
/// assert_eq!(got.unwrap()["city"], "Antwerp");
/// assert_eq!(repairs, vec![toolgate_core::Repair::DoubleEncodedArguments]);
/// ```
pub fn arguments_object(
    value: Value,
    repairs: Vec<Repair>,
    lenient: Strictness,
    offset: usize,
) -> (Result<Map<String, Value>, ParseFailure>, Vec<Repair>) {
    let not_an_object = |what: &str| {
        ParseFailure::new(
            FailureKind::Malformed,
            format!("the arguments must be a JSON object, found {what}"),
            offset,
        )
    };
    match value {
        Value::Object(m) => (Ok(m), repairs),
        Value::String(s) => match crate::jsonread::read_all(&s, lenient, false) {
            Ok(inner) => match inner.value {
                Value::Object(m) if lenient.is_lenient() => {
                    let mut repairs = repairs;
                    repairs.extend(inner.repairs);
                    repairs.push(Repair::DoubleEncodedArguments);
                    repairs.sort();
                    repairs.dedup();
                    (Ok(m), repairs)
                }
                Value::Object(_) => (
                    Err(ParseFailure::new(
                        FailureKind::Escaping,
                        "double-encoded arguments: a JSON string holding a JSON object",
                        offset,
                    )),
                    Vec::new(),
                ),
                _ => (Err(not_an_object("a string")), Vec::new()),
            },
            Err(_) => (Err(not_an_object("a string")), Vec::new()),
        },
        other => (Err(not_an_object(type_name(&other))), Vec::new()),
    }
}

/// What a JSON value says about a call.
#[derive(Clone, Debug, PartialEq)]
pub enum CallObj {
    /// Not an object, or an object with none of the name keys: not a call.
    NotACall,
    /// A call object (possibly a broken one).
    Call(CallParts),
}

/// The parts of a call object.
#[derive(Clone, Debug, PartialEq)]
pub struct CallParts {
    /// The tool name when it could be read (even if the arguments failed).
    pub name: Option<String>,
    /// The arguments object, or why it could not be read (offset 0).
    pub arguments: Result<Map<String, Value>, ParseFailure>,
    /// Repairs used reading it (lenient only: double-encoded arguments and
    /// whatever reading the encoded string needed).
    pub repairs: Vec<Repair>,
}

impl CallParts {
    fn failed(name: Option<String>, kind: FailureKind, message: impl Into<String>) -> CallParts {
        CallParts {
            name,
            arguments: Err(ParseFailure::new(kind, message, 0)),
            repairs: Vec::new(),
        }
    }
}

/// Reads `value` as a call object (see the module docs for the rules).
pub fn from_value(value: &Value, lenient: Strictness) -> CallObj {
    match read(value, lenient, &[]) {
        Read::NotACall => CallObj::NotACall,
        Read::Parts(p) => CallObj::Call(p),
        Read::Take(mut p, path) => {
            if let Some(Value::Object(m)) = at_path(value, path) {
                p.arguments = Ok(m.clone());
            }
            CallObj::Call(p)
        }
    }
}

/// [`from_value`] of a value the caller no longer needs: the arguments
/// object is moved out of it instead of copied (the same result), in a
/// format whose call objects may also carry the metadata keys `own` (Command
/// R's `tool_call_id`; `&[]` for SPEC §9's alone).
pub fn from_value_owned(mut value: Value, lenient: Strictness, own: &[&str]) -> CallObj {
    match read(&value, lenient, own) {
        Read::NotACall => CallObj::NotACall,
        Read::Parts(p) => CallObj::Call(p),
        Read::Take(mut p, path) => {
            if let Some(Value::Object(m)) = at_path_mut(&mut value, path) {
                p.arguments = Ok(std::mem::take(m));
            }
            CallObj::Call(p)
        }
    }
}

/// Where the arguments object of a call sits: the argument key, under the
/// OpenAI wrapper's `function` member or not.
#[derive(Clone, Copy)]
struct ArgsPath {
    wrapped: bool,
    key: &'static str,
}

fn at_path(value: &Value, path: ArgsPath) -> Option<&Value> {
    let obj = if path.wrapped {
        value.get("function")?
    } else {
        value
    };
    obj.get(path.key)
}

fn at_path_mut(value: &mut Value, path: ArgsPath) -> Option<&mut Value> {
    let obj = if path.wrapped {
        value.get_mut("function")?
    } else {
        value
    };
    obj.get_mut(path.key)
}

/// What reading a call object found, before the arguments object (when it
/// is one) is copied or moved out.
enum Read {
    NotACall,
    /// Complete parts (a failure, or arguments that are not a plain object).
    Parts(CallParts),
    /// Parts whose arguments are the object at the path (a placeholder `{}`
    /// stands in until it is copied or moved there).
    Take(CallParts, ArgsPath),
}

fn read(value: &Value, lenient: Strictness, own: &[&str]) -> Read {
    let Value::Object(obj) = value else {
        return Read::NotACall;
    };
    let keys = Keys::of(obj);
    if keys.names == 0 {
        // The OpenAI wrapper: {"type": "function", "function": {...}}.
        if let Some(inner @ Value::Object(f)) = obj.get("function")
            && NAME_KEYS.iter().any(|k| f.contains_key(*k))
        {
            let call = read(inner, lenient, own);
            let stray = obj
                .keys()
                .find(|k| *k != "function" && !is_metadata(k, own));
            return match (call, stray) {
                (Read::Parts(p) | Read::Take(p, _), Some(k)) => Read::Parts(CallParts::failed(
                    p.name,
                    FailureKind::Malformed,
                    format!(
                        "unknown key `{k}` beside `function` in the call object (only `id`, `type` and `index` may stand beside it)"
                    ),
                )),
                (Read::Take(p, path), None) => Read::Take(
                    p,
                    ArgsPath {
                        wrapped: true,
                        key: path.key,
                    },
                ),
                (call, _) => call,
            };
        }
        return Read::NotACall;
    }
    parts(obj, &keys, lenient, own)
}

/// One pass over a call object's keys (a handful): how many name keys and
/// argument keys it has, the value of the name key and the spelling of the
/// argument key when there is exactly one — without a hash lookup per
/// spelling.
struct Keys<'v> {
    names: usize,
    name: Option<(&'static str, &'v Value)>,
    args: usize,
    arg: Option<&'static str>,
}

impl<'v> Keys<'v> {
    fn of(obj: &'v Map<String, Value>) -> Keys<'v> {
        let mut keys = Keys {
            names: 0,
            name: None,
            args: 0,
            arg: None,
        };
        for (k, v) in obj {
            if let Some(n) = NAME_KEYS.iter().find(|n| **n == k.as_str()) {
                keys.names += 1;
                keys.name = Some((n, v));
            } else if let Some(a) = ARG_KEYS.iter().find(|a| **a == k.as_str()) {
                keys.args += 1;
                keys.arg = Some(a);
            }
        }
        keys
    }
}

fn parts(obj: &Map<String, Value>, keys: &Keys<'_>, lenient: Strictness, own: &[&str]) -> Read {
    let n_args = keys.args;
    let name = if let (1, Some((first_name, value))) = (keys.names, keys.name) {
        match value {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            Value::String(_) => Err(format!("`{first_name}` is an empty string")),
            other => Err(format!(
                "`{first_name}` must be a string, found {}",
                type_name(other)
            )),
        }
    } else {
        Err(format!(
            "ambiguous call object: two name keys ({})",
            NAME_KEYS
                .iter()
                .filter(|k| obj.contains_key(**k))
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    let name = match name {
        Ok(n) => Some(n),
        Err(msg) => return Read::Parts(CallParts::failed(None, FailureKind::Malformed, msg)),
    };
    if n_args > 1 {
        let args: Vec<&str> = ARG_KEYS
            .iter()
            .copied()
            .filter(|k| obj.contains_key(*k))
            .collect();
        return Read::Parts(CallParts::failed(
            name,
            FailureKind::Malformed,
            format!(
                "ambiguous call object: two argument keys ({})",
                args.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    // Every other key must be metadata; lenient replay may take one of
    // `args`/`input`/`kwargs` as the argument key when there is none.
    let mut repairs = Vec::new();
    let mut key: Option<&'static str> = if n_args == 1 { keys.arg } else { None };
    let others: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !NAME_KEYS.contains(k) && !ARG_KEYS.contains(k) && !is_metadata(k, own))
        .collect();
    let mut unknown = others.clone();
    if key.is_none() {
        let alt: Vec<&'static str> = LENIENT_ARG_KEYS
            .iter()
            .copied()
            .filter(|k| others.contains(k))
            .collect();
        // Strictness is read only where the lenient path can differ.
        if let [one] = alt.as_slice()
            && lenient.is_lenient()
        {
            key = Some(*one);
            unknown.retain(|k| k != one);
            repairs.push(Repair::ArgumentKey);
        }
    }
    if let Some(k) = unknown.first() {
        let hint = if n_args == 0 && LENIENT_ARG_KEYS.contains(k) {
            " (arguments under an unknown key: a call is never run with its arguments dropped)"
        } else {
            ""
        };
        return Read::Parts(CallParts::failed(
            name,
            FailureKind::Malformed,
            format!(
                "unknown key `{k}` in the call object (name from `name`/`tool`/`tool_name`, arguments from `arguments`/`parameters`/`params`, besides only `id`, `type`, `index`){hint}"
            ),
        ));
    }
    let Some(key) = key else {
        return Read::Parts(CallParts {
            name,
            arguments: Ok(Map::new()),
            repairs,
        });
    };
    match key_arguments(name, key, obj, lenient) {
        Read::Parts(mut read) => {
            if read.arguments.is_ok() {
                read.repairs.extend(repairs);
                read.repairs.sort();
                read.repairs.dedup();
            }
            Read::Parts(read)
        }
        Read::Take(mut p, path) => {
            p.repairs = repairs;
            Read::Take(p, path)
        }
        Read::NotACall => Read::NotACall,
    }
}

/// The arguments under `key` (an argument key, or the lenient stand-in).
fn key_arguments(
    name: Option<String>,
    key: &'static str,
    obj: &Map<String, Value>,
    lenient: Strictness,
) -> Read {
    match obj.get(key) {
        None | Some(Value::Null) => Read::Parts(CallParts {
            name,
            arguments: Ok(Map::new()),
            repairs: Vec::new(),
        }),
        Some(Value::Object(_)) => Read::Take(
            CallParts {
                name,
                arguments: Ok(Map::new()),
                repairs: Vec::new(),
            },
            ArgsPath {
                wrapped: false,
                key,
            },
        ),
        Some(Value::String(s)) => Read::Parts(string_arguments(name, key, s, lenient)),
        Some(other) => Read::Parts(CallParts::failed(
            name,
            FailureKind::Malformed,
            format!("`{key}` must be an object, found {}", type_name(other)),
        )),
    }
}

/// `"arguments": "{\"k\": 1}"`: double-encoded arguments.
fn string_arguments(name: Option<String>, key: &str, s: &str, lenient: Strictness) -> CallParts {
    let decoded = crate::jsonread::read_all(s, lenient, false);
    match decoded {
        Ok(read) => match read.value {
            Value::Object(m) if lenient.is_lenient() => {
                let mut repairs = read.repairs;
                repairs.push(Repair::DoubleEncodedArguments);
                repairs.sort();
                repairs.dedup();
                CallParts {
                    name,
                    arguments: Ok(m),
                    repairs,
                }
            }
            Value::Object(_) => CallParts::failed(
                name,
                FailureKind::Escaping,
                format!("double-encoded arguments: `{key}` is a JSON string holding JSON"),
            ),
            other => CallParts::failed(
                name,
                FailureKind::Malformed,
                format!(
                    "`{key}` must be an object, found a string holding {}",
                    type_name(&other)
                ),
            ),
        },
        Err(_) => CallParts::failed(
            name,
            FailureKind::Malformed,
            format!("`{key}` must be an object, found a string"),
        ),
    }
}

/// `an object`, `a string`, … for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The valid-payload fast path for call objects (issue 24): a plain call
/// object read by serde_json straight into its name and arguments, beside
/// the SPEC §9 reader above that it must agree with.
mod plain {
    use super::{ARG_KEYS, NAME_KEYS};
    use crate::jsonread::{Exact, fast_path_enabled, skip_json_ws};
    use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
    use serde_json::{Map, Value};
    use std::fmt;

    /// A plain call object read straight into its parts: exactly one name
    /// key (`name`/`tool`/`tool_name`) holding a non-empty string and
    /// exactly one argument key (`arguments`/`parameters`/`params`) holding
    /// an object, nothing else. For such an object the SPEC §9 rules
    /// ([`crate::callobj`]) give that name and those arguments with no
    /// repair; every other shape is an error here (the general path reads
    /// it). No map is built for the call object itself.
    pub(crate) struct PlainCall {
        pub name: String,
        pub arguments: Map<String, Value>,
    }

    /// Which key of a plain call object.
    enum CallKey {
        Name,
        Arguments,
    }

    impl<'de> Deserialize<'de> for CallKey {
        #[inline]
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CallKey, D::Error> {
            d.deserialize_str(CallKeyVisitor)
        }
    }

    struct CallKeyVisitor;

    impl Visitor<'_> for CallKeyVisitor {
        type Value = CallKey;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a call object key")
        }
        #[inline]
        fn visit_str<E: de::Error>(self, k: &str) -> Result<CallKey, E> {
            if NAME_KEYS.contains(&k) {
                Ok(CallKey::Name)
            } else if ARG_KEYS.contains(&k) {
                Ok(CallKey::Arguments)
            } else {
                Err(E::custom("another key"))
            }
        }
    }

    impl<'de> Deserialize<'de> for PlainCall {
        #[inline]
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PlainCall, D::Error> {
            d.deserialize_map(PlainCallVisitor)
        }
    }

    struct PlainCallVisitor;

    impl<'de> Visitor<'de> for PlainCallVisitor {
        type Value = PlainCall;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a plain call object")
        }
        #[inline]
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PlainCall, A::Error> {
            let (mut name, mut arguments) = (None, None);
            while let Some(key) = map.next_key::<CallKey>()? {
                match key {
                    // A second name or argument key (the same spelling
                    // twice too) is the general path's to judge.
                    CallKey::Name if name.is_none() => {
                        let n: String = map.next_value()?;
                        if n.is_empty() {
                            return Err(de::Error::custom("empty name"));
                        }
                        name = Some(n);
                    }
                    CallKey::Arguments if arguments.is_none() => match map.next_value()? {
                        Exact(Value::Object(m)) => arguments = Some(m),
                        _ => return Err(de::Error::custom("arguments not an object")),
                    },
                    _ => return Err(de::Error::custom("repeated key")),
                }
            }
            match (name, arguments) {
                (Some(name), Some(arguments)) => Ok(PlainCall { name, arguments }),
                _ => Err(de::Error::custom("not a plain call")),
            }
        }
    }

    /// A plain call object at the start of `text` (after whitespace) and
    /// the offset right after it; `None` for anything else.
    pub(crate) fn plain_call_prefix(text: &str) -> Option<(PlainCall, usize)> {
        if !fast_path_enabled() || skip_json_ws(text.as_bytes(), 0) >= text.len() {
            return None;
        }
        let b = text.as_bytes();
        if b[skip_json_ws(b, 0)] != b'{' {
            return None;
        }
        let mut calls = serde_json::Deserializer::from_str(text).into_iter::<PlainCall>();
        let call = calls.next()?.ok()?;
        Some((call, calls.byte_offset()))
    }
}

pub(crate) use plain::{PlainCall, plain_call_prefix};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(v: Value, lenient: Strictness) -> CallParts {
        match from_value(&v, lenient) {
            CallObj::Call(p) => p,
            CallObj::NotACall => panic!("not a call: {v}"),
        }
    }

    #[test]
    fn a_formats_own_metadata_key_is_read_only_where_it_is_passed() {
        let v = json!({"tool_call_id": "0", "tool_name": "f", "parameters": {"x": 1}});
        let CallObj::Call(own) = from_value_owned(v.clone(), Strictness::Strict, &["tool_call_id"])
        else {
            panic!("not a call")
        };
        assert_eq!(own.arguments.unwrap()["x"], 1);
        let failure = call(v.clone(), Strictness::Strict).arguments.unwrap_err();
        assert_eq!(failure.kind, FailureKind::Malformed);
        assert!(
            failure.message.contains("tool_call_id"),
            "{}",
            failure.message
        );
        // Beside the OpenAI wrapper's `function` too.
        let wrapped = json!({"tool_call_id": "0", "function": {"name": "f", "arguments": {}}});
        let CallObj::Call(own) =
            from_value_owned(wrapped.clone(), Strictness::Strict, &["tool_call_id"])
        else {
            panic!("not a call")
        };
        assert!(own.arguments.is_ok());
        assert!(call(wrapped, Strictness::Strict).arguments.is_err());
    }

    #[test]
    fn every_name_and_argument_spelling_is_read() {
        for nk in NAME_KEYS {
            for ak in ARG_KEYS {
                let p = call(json!({nk: "f", ak: {"x": 1}}), Strictness::Strict);
                assert_eq!(p.name.as_deref(), Some("f"));
                assert_eq!(p.arguments.unwrap(), *json!({"x": 1}).as_object().unwrap());
            }
        }
    }

    #[test]
    fn two_name_keys_or_two_argument_keys_are_ambiguous() {
        let p = call(
            json!({"name": "f", "tool": "g", "arguments": {}}),
            Strictness::Strict,
        );
        let f = p.arguments.unwrap_err();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert!(f.message.contains("ambiguous"), "{}", f.message);
        assert_eq!(p.name, None);
        let p = call(
            json!({"name": "f", "arguments": {}, "params": {}}),
            Strictness::Lenient,
        );
        let f = p.arguments.unwrap_err();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert!(f.message.contains("ambiguous"));
        assert_eq!(p.name.as_deref(), Some("f"));
    }

    #[test]
    fn an_unknown_key_is_malformed_and_lenient_reads_args_input_kwargs() {
        // SPEC §9: the model may have put its arguments there.
        for v in [
            json!({"name": "test", "args": {"x": 1}}),
            json!({"name": "test", "input": {"x": 1}}),
            json!({"tool": "test", "kwargs": {"x": 1}}),
            json!({"name": "test", "arguments": {}, "argumentz": {"x": 1}}),
            json!({"name": "test", "parameters": {"x": 1}, "args": {"y": 2}}),
            json!({"name": "test", "call_id": "c1"}),
        ] {
            let p = call(v.clone(), Strictness::Strict);
            assert_eq!(p.name.as_deref(), Some("test"), "{v}");
            let f = p.arguments.unwrap_err();
            assert_eq!(f.kind, FailureKind::Malformed, "{v}");
            assert!(f.message.starts_with("unknown key `"), "{}", f.message);
        }
        for (v, args) in [
            (json!({"name": "t", "args": {"x": 1}}), json!({"x": 1})),
            (
                json!({"name": "t", "input": {"x": 1}, "id": "c"}),
                json!({"x": 1}),
            ),
            (json!({"name": "t", "kwargs": null}), json!({})),
        ] {
            let p = call(v.clone(), Strictness::Lenient);
            assert_eq!(p.arguments.unwrap(), *args.as_object().unwrap(), "{v}");
            assert_eq!(p.repairs, vec![Repair::ArgumentKey], "{v}");
        }
        // Lenient takes a stand-in only when it is the one way to read the
        // call: beside a real argument key, or two stand-ins, it is malformed.
        for v in [
            json!({"name": "t", "arguments": {}, "args": {"x": 1}}),
            json!({"name": "t", "args": {"x": 1}, "input": {"y": 1}}),
            json!({"name": "t", "args": {"x": 1}, "extra": 1}),
        ] {
            let f = call(v.clone(), Strictness::Lenient).arguments.unwrap_err();
            assert_eq!(f.kind, FailureKind::Malformed, "{v}");
        }
        // A double-encoded stand-in records both repairs.
        let p = call(
            json!({"name": "t", "args": "{\"x\": 1}"}),
            Strictness::Lenient,
        );
        assert_eq!(
            p.repairs,
            vec![Repair::DoubleEncodedArguments, Repair::ArgumentKey]
        );
        // Metadata keys are allowed.
        let p = call(
            json!({"id": "c1", "type": "function", "index": 0, "name": "t", "arguments": {"x": 1}}),
            Strictness::Strict,
        );
        assert_eq!(p.arguments.unwrap()["x"], 1);
        // The OpenAI wrapper: only metadata beside `function`, and the inner
        // object obeys the same rule.
        let f = call(
            json!({"type": "function", "function": {"name": "t", "arguments": {}}, "extra": {"x": 1}}),
            Strictness::Strict,
        )
        .arguments
        .unwrap_err();
        assert_eq!(f.kind, FailureKind::Malformed);
        let f = call(
            json!({"type": "function", "function": {"name": "t", "args": {"x": 1}}}),
            Strictness::Strict,
        )
        .arguments
        .unwrap_err();
        assert_eq!(f.kind, FailureKind::Malformed);
    }

    #[test]
    fn missing_or_null_arguments_are_an_empty_object() {
        assert_eq!(
            call(json!({"name": "f"}), Strictness::Strict)
                .arguments
                .unwrap(),
            Map::new()
        );
        assert_eq!(
            call(json!({"name": "f", "arguments": null}), Strictness::Strict)
                .arguments
                .unwrap(),
            Map::new()
        );
    }

    #[test]
    fn openai_wrapper_is_read_through_function() {
        let p = call(
            json!({"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}),
            Strictness::Strict,
        );
        assert_eq!(p.name.as_deref(), Some("f"));
        assert_eq!(p.arguments.unwrap()["a"], 1);
    }

    #[test]
    fn no_name_key_is_not_a_call() {
        assert_eq!(
            from_value(&json!({"arguments": {}}), Strictness::Strict),
            CallObj::NotACall
        );
        assert_eq!(
            from_value(&json!([1]), Strictness::Strict),
            CallObj::NotACall
        );
        assert_eq!(
            from_value(&json!("name"), Strictness::Strict),
            CallObj::NotACall
        );
    }

    #[test]
    fn double_encoded_arguments_are_escaping_strict_and_repaired_lenient() {
        let v = json!({"name": "f", "arguments": "{\"city\": \"Antwerp\"}"});
        let f = call(v.clone(), Strictness::Strict).arguments.unwrap_err();
        assert_eq!(f.kind, FailureKind::Escaping);
        assert_eq!(
            f.message,
            "double-encoded arguments: `arguments` is a JSON string holding JSON"
        );
        let p = call(v, Strictness::Lenient);
        assert_eq!(p.arguments.unwrap()["city"], "Antwerp");
        assert_eq!(p.repairs, vec![Repair::DoubleEncodedArguments]);
        // A string that is not JSON is just the wrong type.
        let f = call(
            json!({"name": "f", "arguments": "Antwerp"}),
            Strictness::Strict,
        )
        .arguments
        .unwrap_err();
        assert_eq!(f.kind, FailureKind::Malformed);
        let f = call(
            json!({"name": "f", "arguments": "Antwerp"}),
            Strictness::Lenient,
        )
        .arguments
        .unwrap_err();
        assert_eq!(f.kind, FailureKind::Malformed);
    }

    #[test]
    fn other_argument_types_and_bad_names_are_malformed() {
        for v in [
            json!({"name": "f", "arguments": 3}),
            json!({"name": "f", "arguments": [1]}),
        ] {
            let p = call(v, Strictness::Strict);
            assert_eq!(p.arguments.unwrap_err().kind, FailureKind::Malformed);
            assert_eq!(p.name.as_deref(), Some("f"));
        }
        for v in [
            json!({"name": "", "arguments": {}}),
            json!({"name": 7}),
            json!({"tool": null}),
        ] {
            let p = call(v, Strictness::Strict);
            assert_eq!(p.name, None);
            assert_eq!(p.arguments.unwrap_err().kind, FailureKind::Malformed);
        }
    }
}
