//! JSON read as `serde_json` reads it, except that an object naming a key
//! twice is refused.
//!
//! `serde_json` keeps the last of duplicate members, so
//! `{"output": "a", "output": "<tool_call>…"}` reads as the second output
//! while another reader (or a human) sees the first: which one was meant is
//! a guess. The loader and the importers read every document through
//! [`from_str`] (or [`Seed`] for one member), so such a document is
//! refused as ambiguous with its file, line and the repeated key — as a
//! repeated key in a call's arguments is `malformed` (SPEC §9).
//!
//! The one place left as `serde_json` reads it: the `arguments` of a call
//! under a `tool_calls` member. That value is the model's text, kept as
//! its exact bytes by the loader and judged by the `native` mode, which
//! labels a repeated key there `malformed` (the model's fault, not the
//! file's).
//!
//! The check is made while the value is built (one entry lookup per
//! member, which building the map does anyway), never as a second parse.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};
use std::fmt;

/// Where in a document a value is, as far as the duplicate check cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Within {
    /// Anywhere but below a `tool_calls` member.
    #[default]
    Document,
    /// Below a `tool_calls` member: an `arguments` member here is a call's
    /// arguments, read without the check.
    ToolCalls,
}

/// Reads one JSON value with the duplicate check, as positioned `within`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seed(pub Within);

/// A [`Value`] whose objects (outside calls' arguments) name each key once.
#[derive(Debug, Clone, PartialEq)]
pub struct Unique(pub Value);

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Unique, D::Error> {
        Seed(Within::Document).deserialize(d).map(Unique)
    }
}

/// `text` read as one JSON value; a repeated key is an error whose message
/// starts with [`DUPLICATE`] and names the key (escaped) and its position.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    refuse_too_many(text)?;
    serde_json::from_str::<Unique>(text).map(|u| u.0)
}

/// The error of a document of more values than
/// [`crate::nodes::MAX_DOCUMENT_VALUES`] (counted before anything is built
/// from it); [`reason`] says it as it is.
pub fn refuse_too_many(text: &str) -> Result<(), serde_json::Error> {
    match crate::nodes::too_many_in_document(text.as_bytes()) {
        true => Err(de::Error::custom(crate::nodes::too_many_values_why())),
        false => Ok(()),
    }
}

/// Whether `e` is [`refuse_too_many`]'s.
pub fn is_too_many(e: &serde_json::Error) -> bool {
    e.is_data() && e.to_string().starts_with("the document holds more than")
}

/// How the error of a repeated key starts.
pub const DUPLICATE: &str = "ambiguous: duplicate key";

/// Whether `e` (from [`from_str`] or a reader using [`Seed`]) is a
/// repeated key rather than a syntax error or a value of another shape.
pub fn is_duplicate(e: &serde_json::Error) -> bool {
    e.is_data() && e.to_string().starts_with(DUPLICATE)
}

/// Why a document is not read: a repeated key as [`from_str`] says it,
/// anything else as `not valid JSON: …`.
pub fn reason(e: &serde_json::Error) -> String {
    if is_duplicate(e) || is_too_many(e) {
        e.to_string()
    } else {
        format!("not valid JSON: {e}")
    }
}

impl Seed {
    /// The value of the member `key` of an object read `within` this
    /// seed's place: a call's `arguments` unchecked, a `tool_calls`
    /// member's value as calls, any other with the check.
    pub fn member<'de, A: MapAccess<'de>>(self, map: &mut A, key: &str) -> Result<Value, A::Error> {
        match (self.0, key) {
            // A call's arguments: the model's text, judged by `native`.
            (Within::ToolCalls, "arguments") => map.next_value::<Value>(),
            (_, "tool_calls") => map.next_value_seed(Seed(Within::ToolCalls)),
            _ => map.next_value_seed(self),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // As `Value` reads it: a parsed float is finite; `null` otherwise.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element_seed(self)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = self.member(&mut map, &key)?;
            insert_once(&mut out, key, value)?;
        }
        Ok(Value::Object(out))
    }
}

/// Puts `key` into `out`, unless it is there already: then the error of a
/// repeated key ([`duplicate`]). The one check of every object this module
/// reads, and of a reader that builds its object member by member itself.
pub fn insert_once<E: de::Error>(
    out: &mut Map<String, Value>,
    key: String,
    value: Value,
) -> Result<(), E> {
    match out.entry(key) {
        Entry::Vacant(slot) => {
            slot.insert(value);
            Ok(())
        }
        Entry::Occupied(slot) => Err(duplicate(slot.key())),
    }
}

/// The error of a repeated `key` (escaped: a key is untrusted text);
/// `serde_json` adds the line and column.
pub fn duplicate<E: de::Error>(key: &str) -> E {
    E::custom(format!("{DUPLICATE} `{}`", crate::sanitize::cell(key, 200)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_at_any_level_is_refused_with_the_key_and_position() {
        for (text, key) in [
            (r#"{"output":"a","output":"b"}"#, "output"),
            (r#"{"tools":[{"name":"f","name":"g"}]}"#, "name"),
            (
                r#"{"request":{"messages":[{"role":"user","role":"x"}]}}"#,
                "role",
            ),
            (r#"{"tool_calls":[{"id":"1","id":"2"}]}"#, "id"),
            (
                r#"{"tool_calls":[{"function":{"name":"f","name":"g"}}]}"#,
                "name",
            ),
            (
                r#"{"expect":{"calls":[{"name":"f","arguments":{"a":1,"a":2}}]}}"#,
                "a",
            ),
            (r#"{"a\u001b[31m":1,"a\u001b[31m":2}"#, "a\\x1b[31m"),
        ] {
            let e = from_str(text).unwrap_err();
            assert!(is_duplicate(&e), "{text}");
            let msg = e.to_string();
            assert!(
                msg.starts_with(&format!("{DUPLICATE} `{key}` at line 1 column")),
                "{text}: {msg}"
            );
        }
    }

    #[test]
    fn a_calls_arguments_are_left_to_the_native_mode_and_the_rest_reads_as_serde_json() {
        let text = r#"{"tool_calls":[{"function":{"name":"f","arguments":{"a":1,"a":2}}}],"n":[1.5,-2,18446744073709551615,null,true,"s\u00e9"]}"#;
        let strict = from_str(text).unwrap();
        assert_eq!(strict, serde_json::from_str::<Value>(text).unwrap());
        assert_eq!(strict["tool_calls"][0]["function"]["arguments"]["a"], 2);
        // Syntax errors stay syntax errors.
        assert!(!is_duplicate(&from_str("{\"a\":").unwrap_err()));
        assert!(!is_duplicate(&from_str("[1,]").unwrap_err()));
    }
}
