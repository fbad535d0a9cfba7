//! JSON objects written member by member into a byte buffer: the record
//! line ([`super::record`]) and enforce's edit of an answer's choices
//! ([`super::splice`]) write their objects this way instead of building a
//! `Value` or going through serde's map serializer (issue 24). A key is
//! either one of the proxy's own names, written as its bytes, or any text
//! ([`Name::Any`]), escaped as serde_json escapes it when it holds a
//! character JSON escapes; a value is written by serde_json, or copied in
//! as JSON text that is already in the form wanted.

use toolgate_core::jsonstr;

/// `"key":` for one of the proxy's own keys (none has a character JSON
/// escapes), as one literal.
macro_rules! own {
    ($k:literal) => {
        $crate::gateway::members::Own(concat!("\"", $k, "\":"))
    };
}
pub(crate) use own;

/// A member's key as [`Members::key`] writes it.
pub(crate) trait MemberKey {
    /// Writes `"key":`.
    fn put(self, out: &mut Vec<u8>);
}

/// One of the proxy's own keys, already `"key":` ([`own!`]).
#[derive(Clone, Copy)]
pub(crate) struct Own(pub &'static str);

impl MemberKey for Own {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
}

/// A key known only when the object is written: one of the proxy's names,
/// or any text (the keys of a hook's judgment object).
#[derive(Clone, Copy)]
pub(crate) enum Name<'a> {
    /// A name of the proxy's (no character JSON escapes).
    Own(&'static str),
    /// Any text: escaped when it holds a character JSON escapes.
    Any(&'a str),
}

impl Name<'_> {
    /// The key's text.
    pub fn text(&self) -> &str {
        match self {
            Name::Own(k) => k,
            Name::Any(k) => k,
        }
    }
}

impl MemberKey for Name<'_> {
    fn put(self, out: &mut Vec<u8>) {
        let key = self.text();
        debug_assert!(
            !matches!(self, Name::Own(k) if !jsonstr::plain(k)),
            "{key:?} is plain"
        );
        jsonstr::write_key(
            out,
            key,
            matches!(self, Name::Own(_)) || jsonstr::plain(key),
        );
    }
}

/// A JSON object being written into `out`.
pub(crate) struct Members<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> Members<'o> {
    /// Writes `{`.
    pub fn open(out: &'o mut Vec<u8>) -> Members<'o> {
        out.push(b'{');
        Members { out, first: true }
    }

    /// Starts the next member: a comma before all but the first. Returns
    /// the buffer, for a member copied in whole.
    pub fn next(&mut self) -> &mut Vec<u8> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out
    }

    /// Writes `"key":` as the next member; returns the buffer, for its
    /// value.
    pub fn key(&mut self, key: impl MemberKey) -> &mut Vec<u8> {
        key.put(self.next());
        self.out
    }

    /// Writes `"key":value`, the value as serde_json writes it.
    pub fn value<T: serde::Serialize + ?Sized>(
        &mut self,
        key: impl MemberKey,
        v: &T,
    ) -> serde_json::Result<()> {
        serde_json::to_writer(self.key(key), v)
    }

    /// [`Members::value`] when there is one (an absent member is left out).
    pub fn some<T: serde::Serialize + ?Sized>(
        &mut self,
        key: impl MemberKey,
        v: Option<&T>,
    ) -> serde_json::Result<()> {
        match v {
            Some(v) => self.value(key, v),
            None => Ok(()),
        }
    }

    /// Writes `"key":"text"`, the string as serde_json writes it
    /// ([`jsonstr::write`]: the same bytes, the plain runs copied a block
    /// at a time).
    pub fn str(&mut self, key: impl MemberKey, text: &str) {
        jsonstr::write(self.key(key), text);
    }

    /// [`Members::str`] when there is one (an absent member is left out).
    pub fn some_str(&mut self, key: impl MemberKey, text: Option<&str>) {
        if let Some(t) = text {
            self.str(key, t);
        }
    }

    /// Writes `"key":` and JSON text as it is.
    pub fn raw(&mut self, key: impl MemberKey, text: &str) {
        self.key(key).extend_from_slice(text.as_bytes());
    }

    /// Writes `}`.
    pub fn close(self) {
        self.out.push(b'}');
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn objects_are_what_serde_writes() {
        let mut out = Vec::new();
        let mut o = Members::open(&mut out);
        o.value(own!("a"), &1).unwrap();
        o.some(own!("absent"), None::<&str>).unwrap();
        o.some(own!("b"), Some("x\"\n")).unwrap();
        o.str(own!("s"), "é\u{1}\"\\ \u{7f}");
        o.some_str(own!("absent too"), None);
        o.some_str(Name::Any("s\"2"), Some("tab\t"));
        o.raw(Name::Own("c"), r#"{"d":[1,2]}"#);
        for k in ["plain", "q\"uote", "back\\slash", "ctl\u{1}", "é\u{7f}"] {
            o.value(Name::Any(k), &Value::Null).unwrap();
        }
        o.key(own!("e")).extend_from_slice(b"true");
        o.next().extend_from_slice(br#""f":false"#);
        o.close();
        let want = json!({"a": 1, "b": "x\"\n", "s": "é\u{1}\"\\ \u{7f}", "s\"2": "tab\t",
            "c": {"d": [1, 2]}, "plain": null,
            "q\"uote": null, "back\\slash": null, "ctl\u{1}": null, "é\u{7f}": null,
            "e": true, "f": false});
        assert_eq!(out, serde_json::to_vec(&want).unwrap());
        let mut empty = Vec::new();
        Members::open(&mut empty).close();
        assert_eq!(empty, b"{}");
    }
}
