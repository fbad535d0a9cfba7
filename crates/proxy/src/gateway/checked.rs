//! JSON read through serde_json's own parser without building it: the
//! readers the proxy's borrowed passes share (the request in
//! `gateway::request`, the upstream answer in `gateway::check`), so that what
//! they accept is what a `Value` parse accepts.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A key, checked as a `Value` would read it; the raw-value token (which
/// a `Value` reads specially) is refused, so that the full read decides.
pub(crate) struct Key<'a>(pub(crate) std::borrow::Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                key(std::borrow::Cow::Borrowed(s))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                key(std::borrow::Cow::Owned(s.to_string()))
            }
        }
        d.deserialize_str(V)
    }
}

fn key<E: de::Error>(s: std::borrow::Cow<'_, str>) -> Result<Key<'_>, E> {
    if s == RAW_VALUE_TOKEN {
        return Err(E::custom("the raw-value token"));
    }
    Ok(Key(s))
}

pub(crate) use toolgate_core::nodes::{Nodes, RAW_VALUE_TOKEN, too_many_nodes};

/// Any JSON value, read through the parser a `Value` uses (strings decoded
/// and checked, numbers parsed) and thrown away.
pub(crate) struct Checked;

impl<'de> serde::Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Checked, D::Error> {
        d.deserialize_any(CheckedVisitor {
            nodes: None,
            look: Look::No,
        })
    }
}

/// [`Checked`], counting what it reads against a [`Nodes`] budget.
pub(crate) struct Counted<'n>(pub(crate) &'n Nodes);

impl<'de> de::DeserializeSeed<'de> for Counted<'_> {
    type Value = Checked;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Checked, D::Error> {
        d.deserialize_any(CheckedVisitor {
            nodes: Some(self.0),
            look: Look::No,
        })
    }
}

/// [`Counted`], refusing (an error) a value that holds a call one level
/// in as `toolgate_core::answer::call_inside` finds one: an object with a
/// call-bearing key, or a list holding such an object. The value of a key
/// the answer's check does not know, read by a borrowed pass that must
/// leave such an answer to the full check, which refuses it.
pub(crate) struct NoCallInside<'n>(pub(crate) &'n Nodes);

impl<'de> de::DeserializeSeed<'de> for NoCallInside<'_> {
    type Value = Checked;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Checked, D::Error> {
        d.deserialize_any(CheckedVisitor {
            nodes: Some(self.0),
            look: Look::Value,
        })
    }
}

/// Which keys [`CheckedVisitor`] looks at for a call-bearing name.
#[derive(Clone, Copy, PartialEq)]
enum Look {
    /// None.
    No,
    /// The value's own keys, or those of the objects its list holds.
    Value,
    /// An element of such a list: its own keys when it is an object.
    Element,
}

struct CheckedVisitor<'n> {
    nodes: Option<&'n Nodes>,
    look: Look,
}

impl<'n> CheckedVisitor<'n> {
    /// This visitor as the seed of a value.
    fn seed(&self) -> CheckedSeed<'n> {
        CheckedSeed(CheckedVisitor {
            nodes: self.nodes,
            look: self.look,
        })
    }

    fn one<E: de::Error>(&self) -> Result<Checked, E> {
        match self.nodes {
            Some(n) => n.take(1).map(|()| Checked),
            None => Ok(Checked),
        }
    }
}

impl<'de> Visitor<'de> for CheckedVisitor<'_> {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
        self.one()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
        self.one()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
        self.one()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
        self.one()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
        self.one()
    }
    fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
        self.one()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        self.one()?;
        match (self.nodes, self.look) {
            (Some(n), Look::Value) => {
                let element = CheckedVisitor {
                    nodes: Some(n),
                    look: Look::Element,
                };
                while seq.next_element_seed(element.seed())?.is_some() {}
            }
            (Some(n), _) => while seq.next_element_seed(Counted(n))?.is_some() {},
            (None, _) => while seq.next_element::<Checked>()?.is_some() {},
        }
        Ok(Checked)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        self.one()?;
        let mut seen = Seen::default();
        while let Some(k) = map.next_key::<Key<'de>>()? {
            if self.look != Look::No && toolgate_core::answer::call_bearing(&k.0) {
                return Err(de::Error::custom("a call-bearing key one level in"));
            }
            seen.insert(k.0)?;
            match self.nodes {
                Some(n) => {
                    n.take(1)?;
                    map.next_value_seed(Counted(n))?;
                }
                None => {
                    map.next_value::<Checked>()?;
                }
            }
        }
        Ok(Checked)
    }
}

/// A [`CheckedVisitor`] as a seed.
struct CheckedSeed<'n>(CheckedVisitor<'n>);

impl<'de> de::DeserializeSeed<'de> for CheckedSeed<'_> {
    type Value = Checked;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Checked, D::Error> {
        d.deserialize_any(self.0)
    }
}

/// The keys of one object met so far, to refuse one given twice: which of
/// its values counts is the reader's choice (a `Value` keeps the last,
/// other readers the first), so the proxy would judge one thing and its
/// peer read another. The first [`SEEN_INLINE`] are kept in place (no
/// allocation for the objects of a chat completion), the rest hashed.
#[derive(Default)]
pub(crate) struct Seen<'de> {
    /// One bit per key met, by [`fingerprint`]: a key whose bit is clear
    /// was not met (the usual case), with no string compared.
    bits: u64,
    /// How many of `first` hold a key.
    n: usize,
    first: [Option<std::borrow::Cow<'de, str>>; SEEN_INLINE],
    rest: Option<std::collections::HashSet<std::borrow::Cow<'de, str>>>,
}

/// A bit (0–63) of a key's length and its first and last bytes.
fn fingerprint(key: &str) -> u64 {
    let b = key.as_bytes();
    let (first, last) = (
        b.first().copied().unwrap_or(0),
        b.last().copied().unwrap_or(0),
    );
    let mix = b.len().wrapping_mul(31) ^ usize::from(first) ^ usize::from(last).wrapping_mul(7);
    1 << (mix % 64)
}

/// How many keys of an object [`Seen`] keeps without hashing.
const SEEN_INLINE: usize = 8;

impl<'de> Seen<'de> {
    /// Remembers `key`; an error naming it when it was met before.
    pub(crate) fn insert<E: de::Error>(
        &mut self,
        key: std::borrow::Cow<'de, str>,
    ) -> Result<(), E> {
        let bit = fingerprint(&key);
        if self.bits & bit != 0 && self.contains(&key) {
            return Err(E::custom(format_args!(
                "the key `{}` is repeated",
                clip_key(&key)
            )));
        }
        self.bits |= bit;
        match self.first.get_mut(self.n) {
            Some(slot) => {
                *slot = Some(key);
                self.n += 1;
            }
            None => {
                self.rest.get_or_insert_with(Default::default).insert(key);
            }
        }
        Ok(())
    }

    fn contains(&self, key: &str) -> bool {
        self.first[..self.n]
            .iter()
            .any(|k| k.as_deref() == Some(key))
            || self.rest.as_ref().is_some_and(|r| r.contains(key))
    }
}

/// At most `max` characters of `s`, an ellipsis marking the cut (for
/// messages that quote untrusted text).
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// At most 40 characters of a key, for a message.
fn clip_key(k: &str) -> String {
    clip(k, 40)
}

/// Why `text` (JSON that serde_json accepts) is ambiguous: a key given
/// twice in one object, anywhere; `None` when none is. The full read's
/// check, for the bodies the borrowed passes do not vouch for.
pub(crate) fn repeated_key(text: &[u8]) -> Option<String> {
    let mut de = serde_json::Deserializer::from_slice(text);
    match de.deserialize_any(CheckedVisitor {
        nodes: None,
        look: Look::No,
    }) {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// A `Value` read as serde_json reads one (the same numbers, strings and
/// depth), refusing a key given twice in any of its objects, and counting
/// every value and key it builds against a [`Nodes`] budget (an error
/// past it: [`Nodes::over`] says which): one pass, no text read twice.
pub(crate) struct UniqueValue<'n>(pub(crate) &'n Nodes);

impl<'de> de::DeserializeSeed<'de> for UniqueValue<'_> {
    type Value = serde_json::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        d.deserialize_any(UniqueVisitor(self.0))
    }
}

struct UniqueVisitor<'n>(&'n Nodes);

impl<'de> Visitor<'de> for UniqueVisitor<'_> {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<serde_json::Value, E> {
        self.0.take(1)?;
        Ok(serde_json::Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<serde_json::Value, E> {
        self.0.take(1)?;
        Ok(serde_json::Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<serde_json::Value, E> {
        self.0.take(1)?;
        Ok(serde_json::Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<serde_json::Value, E> {
        self.0.take(1)?;
        // As a `Value` reads it (serde_json's parser gives no non-finite).
        Ok(serde_json::Number::from_f64(v)
            .map_or(serde_json::Value::Null, serde_json::Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<serde_json::Value, E> {
        self.0.take(1)?;
        Ok(serde_json::Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<serde_json::Value, E> {
        self.0.take(1)?;
        Ok(serde_json::Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<serde_json::Value, E> {
        self.0.take(1)?;
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<serde_json::Value, A::Error> {
        self.0.take(1)?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(v) = seq.next_element_seed(UniqueValue(self.0))? {
            items.push(v);
        }
        Ok(serde_json::Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<serde_json::Value, A::Error> {
        self.0.take(1)?;
        let mut members = serde_json::Map::new();
        while let Some(k) = map.next_key::<Key<'de>>()? {
            self.0.take(1)?;
            let v = map.next_value_seed(UniqueValue(self.0))?;
            let k = k.0.into_owned();
            if members.contains_key(&k) {
                return Err(de::Error::custom(format_args!(
                    "the key `{}` is repeated",
                    clip_key(&k)
                )));
            }
            members.insert(k, v);
        }
        Ok(serde_json::Value::Object(members))
    }
}
