//! JSON values counted without building them: what bounds the memory a
//! `serde_json::Value` of untrusted text costs. A `Value` takes some 30–70
//! times the bytes of a tiny value or key (`[0,0,…]` is two bytes a value),
//! so a byte limit alone lets one document cost gigabytes. The count is
//! one rule for the proxy (requests, upstream answers, stream events) and
//! for every document the loader and the importers read ([`MAX_DOCUMENT_VALUES`]).

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The key serde_json's `Value` reads as an embedded raw value.
pub const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The most JSON values one document the loader or an importer reads may
/// hold (a transcript line, a capture file read whole, one event of a
/// stream): past it, the document is refused before anything is built
/// from it. Ten million is far above a real document (a transcript with a
/// thousand messages, a hundred tools and a hundred thousand streamed
/// chunks holds some 300,000; an OTel export of 50,000 spans some 8
/// million), and bounds a `Value` of it near 1.4 GB where the 256 MiB
/// `--max-file-size` alone let one line cost 18 GB.
pub const MAX_DOCUMENT_VALUES: usize = 10_000_000;

/// A document of fewer bytes than this cannot hold more than
/// [`MAX_DOCUMENT_VALUES`] values (every value or key takes at least one
/// byte, and its separator another), so it is not counted: the count costs
/// nothing on the usual small document.
pub const COUNTED_FROM_BYTES: usize = 2 * MAX_DOCUMENT_VALUES;

/// Why a document of more than [`MAX_DOCUMENT_VALUES`] values is refused.
pub fn too_many_values_why() -> String {
    format!(
        "the document holds more than {MAX_DOCUMENT_VALUES} JSON values: reading it would cost some 100 bytes of memory a value (split it into smaller documents)"
    )
}

/// Whether `text` is a document of more than [`MAX_DOCUMENT_VALUES`]
/// values (counted only from [`COUNTED_FROM_BYTES`] bytes on).
pub fn too_many_in_document(text: &[u8]) -> bool {
    text.len() >= COUNTED_FROM_BYTES && too_many_nodes(text, &Nodes::new(MAX_DOCUMENT_VALUES))
}

/// How many JSON values a body may hold (the proxy's `--max-request-nodes`, `--max-response-nodes`; [`MAX_DOCUMENT_VALUES`] for a document):
/// every object, array, string, number, boolean, null and object key
/// counts one. A `Value` costs some 30–70 times the bytes of a tiny
/// object or key, so the byte limit alone lets one request cost
/// gigabytes; the count is what bounds what is built from a body.
pub struct Nodes {
    left: std::cell::Cell<usize>,
    over: std::cell::Cell<bool>,
}

impl Nodes {
    /// A budget of `limit` nodes.
    pub fn new(limit: usize) -> Nodes {
        Nodes {
            left: std::cell::Cell::new(limit),
            over: std::cell::Cell::new(false),
        }
    }

    /// Counts `n` more nodes; an error (which stops the read at once)
    /// when they pass the limit.
    pub fn take<E: de::Error>(&self, n: usize) -> Result<(), E> {
        match self.left.get().checked_sub(n) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.over.set(true);
                Err(E::custom("too many JSON values"))
            }
        }
    }

    /// Whether the count passed the limit (the read stopped there).
    pub fn over(&self) -> bool {
        self.over.get()
    }

    /// Nodes left.
    pub fn left(&self) -> usize {
        self.left.get()
    }
}

/// Whether `text` holds more JSON values than `nodes` has left, counted as
/// a `Value` would be built from it, without building it; `true` stops at
/// the first value past the limit. Text that is not JSON is not refused
/// here (the reader that builds it says why, having built no more than was
/// counted, since it stops at the same place). A key serde_json's `Value`
/// reads specially (the raw-value token, the first key of an object: its
/// string value is parsed as JSON) counts its value's length in nodes, no
/// fewer than the JSON in it can hold; such a body is refused anyway
/// (by the proxy's repeated-key check, by `strict`).
pub fn too_many_nodes(text: &[u8], nodes: &Nodes) -> bool {
    let mut de = serde_json::Deserializer::from_slice(text);
    let _ = de.deserialize_any(CountVisitor(nodes));
    nodes.over()
}

/// Counts every value and key, refusing nothing else (see
/// [`too_many_nodes`]).
struct CountVisitor<'n>(&'n Nodes);

impl<'de> de::DeserializeSeed<'de> for CountVisitor<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// A key as [`CountVisitor`] reads it: whether it is the raw-value token.
struct RawToken(bool);

impl<'de> serde::Deserialize<'de> for RawToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawToken, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawToken;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<RawToken, E> {
                Ok(RawToken(s == RAW_VALUE_TOKEN))
            }
        }
        d.deserialize_str(V)
    }
}

/// A string's length, for the raw-value token's value.
struct Length(usize);

impl<'de> serde::Deserialize<'de> for Length {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Length, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Length;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, s: &str) -> Result<Length, E> {
                Ok(Length(s.len()))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Visitor<'de> for CountVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.0.take(1)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.0.take(1)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.0.take(1)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.0.take(1)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.0.take(1)
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.take(1)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.take(1)?;
        while seq.next_element_seed(CountVisitor(self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.take(1)?;
        let mut first = true;
        while let Some(RawToken(raw)) = map.next_key::<RawToken>()? {
            self.0.take(1)?;
            if raw && first {
                let Length(n) = map.next_value::<Length>()?;
                self.0.take(n.saturating_add(1))?;
            } else {
                map.next_value_seed(CountVisitor(self.0))?;
            }
            first = false;
        }
        Ok(())
    }
}

/// The deepest nesting of arrays and objects a document is read with:
/// serde_json, which the loader and the importers read through, refuses a
/// 128th level. A writer that stores a value it read one level down in a
/// document of its own (the runner's sample keeps the answer under
/// `response`, a task's `messages` under `request`) keeps that value
/// shallower than this, or what it writes is never read again.
pub const MAX_READ_DEPTH: usize = 127;

/// How many levels of arrays and objects `value` nests (a scalar 0, `[]`
/// and `{}` 1), walked without recursion: one iterator per level.
pub fn nesting(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    fn children(v: &Value) -> Option<Box<dyn Iterator<Item = &Value> + '_>> {
        match v {
            Value::Array(a) => Some(Box::new(a.iter())),
            Value::Object(m) => Some(Box::new(m.values())),
            _ => None,
        }
    }
    let Some(top) = children(value) else {
        return 0;
    };
    let mut stack = vec![top];
    let mut deepest = 1;
    while let Some(level) = stack.last_mut() {
        match level.next() {
            Some(child) => {
                if let Some(next) = children(child) {
                    stack.push(next);
                    deepest = deepest.max(stack.len());
                }
            }
            None => {
                stack.pop();
            }
        }
    }
    deepest
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_levels_and_the_read_depth_is_serde_jsons() {
        let doc = |n: usize| "[".repeat(n) + &"]".repeat(n);
        let v: serde_json::Value = serde_json::from_str(r#"{"a":[1,{"b":[]}],"c":0}"#).unwrap();
        assert_eq!(nesting(&v), 4);
        assert_eq!(nesting(&serde_json::json!(1)), 0);
        let deepest = serde_json::from_str::<serde_json::Value>(&doc(MAX_READ_DEPTH)).unwrap();
        assert_eq!(nesting(&deepest), MAX_READ_DEPTH);
        assert!(serde_json::from_str::<serde_json::Value>(&doc(MAX_READ_DEPTH + 1)).is_err());
    }

    #[test]
    fn values_and_keys_count_one_each_and_the_raw_token_by_its_length() {
        // {"a":[1,2],"b":null}: the object, two keys, the array, two
        // numbers, the null: seven.
        let doc = br#"{"a":[1,2],"b":null}"#;
        assert!(!too_many_nodes(doc, &Nodes::new(7)));
        assert!(too_many_nodes(doc, &Nodes::new(6)));
        let raw = format!(r#"{{"{RAW_VALUE_TOKEN}":"[0,0,0,0,0,0,0,0]"}}"#);
        assert!(too_many_nodes(raw.as_bytes(), &Nodes::new(10)));
    }

    #[test]
    fn a_document_is_counted_only_where_it_could_pass_the_limit() {
        // Below the byte threshold nothing is counted (it cannot pass).
        let small = "[0]".repeat(1000);
        assert!(!too_many_in_document(small.as_bytes()));
        let mut over = "0,".repeat(MAX_DOCUMENT_VALUES);
        over.insert(0, '[');
        over.push_str("0]");
        assert!(over.len() >= COUNTED_FROM_BYTES);
        assert!(too_many_in_document(over.as_bytes()));
        // As many bytes of one long string: one value.
        let one = format!("\"{}\"", "x".repeat(COUNTED_FROM_BYTES));
        assert!(!too_many_in_document(one.as_bytes()));
    }
}
