//! MiniMax-M3's nested argument elements, read when the tool's schema types
//! the argument as an object or an array: `<loc><city>Paris</city></loc>`
//! is `{"city": "Paris"}`, `<tags><item>a</item><item>b</item></tags>` is
//! `["a", "b"]`, as vLLM's `MinimaxM3ToolParser` (its Python fallback) reads
//! them: an element whose children are all `<item>` is a list, any other
//! element with children an object keyed by the child tags, an element
//! without children its text with the surrounding whitespace removed (a
//! string: the tool's schema types top-level parameters only, so nested
//! values are not typed further). The namespace token may stand before any
//! tag.
//!
//! Where toolgate is stricter than vLLM (which merges a repeated child into
//! a list and drops text beside children): a child given twice, text beside
//! child elements, a closing tag that does not match, an unclosed element,
//! or a tag that is not `<NAME>` are `malformed` — a call never runs with a
//! value guessed from broken markup.
//!
//! One pass with an explicit stack: linear in the value's length, no
//! recursion; nesting is capped at the JSON reader's depth
//! ([`crate::jsonread::MAX_DEPTH`]), deeper is `malformed`.

use super::common::malformed;
use serde_json::{Map, Value};
use toolgate_core::ParseFailure;

/// One open element: its tag, its children so far, where its text starts,
/// and whether text other than whitespace stood in it.
struct Open {
    tag: String,
    children: Vec<(String, Value)>,
    text: usize,
    has_text: bool,
}

impl Open {
    fn new(tag: String, text: usize) -> Open {
        Open {
            tag,
            children: Vec::new(),
            text,
            has_text: false,
        }
    }

    /// The element's value: the list, object or string it holds.
    fn value(self, text: &str, end: usize) -> Result<Value, ParseFailure> {
        if self.children.is_empty() {
            return Ok(Value::String(text[self.text..end].trim().to_string()));
        }
        if self.has_text {
            return Err(malformed(
                self.text,
                format!("element `{}` holds text beside its elements", self.tag),
            ));
        }
        if self.children.iter().all(|(t, _)| t == "item") {
            return Ok(Value::Array(
                self.children.into_iter().map(|(_, v)| v).collect(),
            ));
        }
        let mut map = Map::new();
        for (tag, v) in self.children {
            if map.contains_key(&tag) {
                return Err(malformed(
                    self.text,
                    format!("element `{tag}` is given twice in `{}`", self.tag),
                ));
            }
            map.insert(tag, v);
        }
        Ok(Value::Object(map))
    }
}

/// The value of the parameter whose text is `text[start..end]` (with
/// elements of its own), `key` its name, `ns` the namespace token.
pub(super) fn nested(
    text: &str,
    (start, end): (usize, usize),
    key: &str,
    ns: Option<&str>,
) -> Result<Value, ParseFailure> {
    let b = text.as_bytes();
    let is_name = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    let mut stack = vec![Open::new(key.to_string(), start)];
    let mut p = start;
    while let Some(n) = memchr::memchr(b'<', &b[p..end]) {
        let mut lt = p + n;
        // Text before the tag (a namespace token ends right before it).
        let mut before = lt;
        if let Some(ns) = ns
            && lt >= 1
            && b[lt - 1..end].starts_with(ns.as_bytes())
        {
            before = lt - 1;
            lt = lt - 1 + ns.len();
            if b.get(lt) != Some(&b'<') {
                // The token stands before text, not a tag: keep walking.
                p = lt;
                continue;
            }
        }
        if !text[p..before].trim().is_empty()
            && let Some(top) = stack.last_mut()
        {
            top.has_text = true;
        }
        let closing = b.get(lt + 1) == Some(&b'/');
        let nstart = lt + 1 + usize::from(closing);
        let nlen = b[nstart.min(end)..end]
            .iter()
            .take_while(|c| is_name(**c))
            .count();
        let nend = nstart + nlen;
        let starts_name = nlen > 0 && (b[nstart].is_ascii_alphabetic() || b[nstart] == b'_');
        if !starts_name || nend >= end || b[nend] != b'>' {
            return Err(malformed(
                lt,
                format!("parameter `{key}` holds a tag that is not `<NAME>`"),
            ));
        }
        let tag = &text[nstart..nend];
        p = nend + 1;
        if !closing {
            // The same cap as JSON payloads: a deeper value is refused, so
            // no later walk over it (dropping, validating, printing) nests
            // without bound.
            if stack.len() >= crate::jsonread::MAX_DEPTH {
                return Err(malformed(
                    lt,
                    format!(
                        "parameter `{key}` nests deeper than {} levels",
                        crate::jsonread::MAX_DEPTH
                    ),
                ));
            }
            stack.push(Open::new(tag.to_string(), p));
            continue;
        }
        // `</tag>`: it closes the innermost open element, never the
        // parameter itself (its closer is outside `start..end`).
        if stack.len() < 2 {
            return Err(malformed(
                lt,
                format!("`</{tag}>` closes no element of `{key}`"),
            ));
        }
        let Some(top) = stack.pop() else {
            // Invariant: the stack holds at least two elements here.
            return Err(malformed(
                lt,
                format!("`</{tag}>` closes no element of `{key}`"),
            ));
        };
        if top.tag != tag {
            return Err(malformed(
                lt,
                format!("`</{tag}>` does not close `<{}>`", top.tag),
            ));
        }
        let v = top.value(text, before)?;
        if let Some(parent) = stack.last_mut() {
            parent.children.push((tag.to_string(), v));
        }
    }
    if !text[p..end].trim().is_empty()
        && let Some(top) = stack.last_mut()
    {
        top.has_text = true;
    }
    if stack.len() > 1 {
        let open = &stack[stack.len() - 1];
        return Err(malformed(
            open.text,
            format!("element `<{}>` in `{key}` is not closed", open.tag),
        ));
    }
    match stack.pop() {
        Some(root) => root.value(text, end),
        None => Ok(Value::Null),
    }
}
