//! **The JSON call-payload engine**: a JSON payload (one call object, or
//! an array of them) becomes candidates with the SPEC §9 key rules
//! ([`crate::callobj`]), absolute failure offsets and the lenient repairs
//! recorded. Every JSON format reads its payload through it: `json_block`
//! ([`super::marked`]), `hermes`, `json`, `fence`, `mistral`, `llama3`, …
//!
//! - [`json_calls`] reads a delimited payload; an array is walked element
//!   by element, so the calls before a cut-off or broken element stay
//!   candidates;
//! - its fast paths give the same candidates without reading twice:
//!   [`read_object_calls`] (an object the caller already read),
//!   [`plain_call`] (a plain call object, read straight into its parts) and
//!   [`clean_list_calls`] (an unbounded list read once, element by
//!   element); debug builds check each against [`json_calls`].
//!
//! All of it is linear in the payload.

use std::ops::Range;

use serde_json::Value;
use toolgate_core::{Candidate, FailureKind, ParseFailure, Repair, Span};

use crate::callobj::{self, CallObj, CallParts};
use crate::input::Strictness;
use crate::jsonread;
use crate::util::{candidate, describe, from_parts, rebase, skip_ws, sniff_name};

/// What [`json_calls`] does with a JSON value that has no name key.
///
/// Either way, in a call list that holds a call (or a broken element) every
/// element that is not a call object is a `malformed` candidate
/// ([`CallList`]): a list is one payload, and executing the calls of a list
/// without its other elements ran fewer calls than the model wrote (probe
/// 44).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingName {
    /// Not a call: no candidate (the `json` and `fence` modes: plain JSON in
    /// the text is not a call attempt), for a lone value and for a list none
    /// of whose elements is a call.
    Skip,
    /// A `malformed` candidate (markup modes such as `hermes`: the markup
    /// says "this is a call", so a payload without a name is a broken call).
    Fail,
}

/// How one format's call objects are read: what a value without a name key
/// is, and the metadata keys of the format's own (Command R's
/// `tool_call_id`), read like SPEC §9's `id` (elsewhere they are unknown
/// keys, so `malformed`). A [`MissingName`] alone is that with no keys of
/// its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallRules {
    /// What a value without a name key is.
    pub missing: MissingName,
    /// The format's own metadata keys.
    pub metadata: &'static [&'static str],
}

impl From<MissingName> for CallRules {
    fn from(missing: MissingName) -> CallRules {
        CallRules {
            missing,
            metadata: &[],
        }
    }
}

/// Candidates for the JSON payload `text[payload]`: one call object, or an
/// array of call objects (each element is a candidate with its own span).
///
/// - `span`: the whole call markup in `text` (used for an object payload and
///   for failures that are not inside one array element);
/// - `at_end`: the payload runs to the end of the output, so running out of
///   input is `truncated` (never repaired);
/// - `rules`: what to do with a value that has no name key, and the
///   format's own metadata keys.
///
/// A payload that does not parse is one failed candidate, with the name
/// read by [`sniff_name`] when possible and the offset absolute in `text`.
/// In an array, the elements read before a broken element stay candidates
/// and the broken element is one failed candidate (so a cut-off parallel
/// call list shows as its calls plus one truncated call); a broken array
/// structure after complete elements (a missing `]`, text after it) is
/// reported on the last element.
pub fn json_calls(
    mode: &'static str,
    text: &str,
    payload: Range<usize>,
    span: Span,
    at_end: bool,
    strictness: Strictness,
    rules: impl Into<CallRules>,
) -> Vec<Candidate> {
    let rules: CallRules = rules.into();
    if text.get(payload.clone()).is_none() {
        return Vec::new();
    }
    let b = text.as_bytes();
    let first = skip_ws(b, payload.start);
    let mut out = if b.get(first) == Some(&b'[') && first < payload.end {
        array_calls(mode, text, payload, first, at_end, strictness, rules, span)
    } else {
        object_calls(mode, text, payload, first, span, at_end, strictness, rules)
    };
    // Truncation is noticed at the payload's end; report it at the text's end
    // (they differ only by trailing whitespace the caller trimmed).
    if at_end {
        for c in &mut out {
            if let Err(f) = &mut c.arguments
                && f.kind == FailureKind::Truncated
            {
                f.offset = text.len();
            }
        }
    }
    out
}

/// [`json_calls`] of the object payload `text[payload]` that
/// [`jsonread::read_prefix`] already read (`read`, the value ending at
/// `payload.end`): the same candidates, without reading it again. Debug
/// builds check that against [`json_calls`] on every call.
pub(crate) fn read_object_calls(
    mode: &'static str,
    text: &str,
    payload: Range<usize>,
    read: jsonread::Read,
    strictness: Strictness,
    rules: impl Into<CallRules>,
) -> Vec<Candidate> {
    let rules: CallRules = rules.into();
    let span = Span::new(payload.start, payload.end);
    let first = skip_ws(text.as_bytes(), payload.start);
    let site = Site {
        mode,
        span,
        raw: &text[payload.clone()],
        value_start: first,
        repairs: &read.repairs,
        lenient: strictness,
        rules,
    };
    let out = value_calls(site, read.value);
    debug_assert_eq!(
        out,
        json_calls(mode, text, payload, span, false, strictness, rules)
    );
    out
}

/// The candidate of a plain call object (`callobj::PlainCall`: one name
/// key with a non-empty string, one argument key with an object, nothing
/// else) at `start`, read without building the object: the candidate and
/// where the object ends. `None`: not a plain call object, or the fast path
/// is off; the general path reads it. The candidate is the one
/// [`json_calls`] gives for `text[start..end]` (debug builds check).
pub(crate) fn plain_call(
    mode: &'static str,
    text: &str,
    start: usize,
    end: usize,
    strictness: Strictness,
    rules: impl Into<CallRules>,
) -> Option<(Candidate, usize)> {
    let rules: CallRules = rules.into();
    let (call, len) = callobj::plain_call_prefix(text.get(start..end)?)?;
    let vend = start + len;
    let c = plain_candidate(
        mode,
        Span::new(start, vend),
        &text[start..vend],
        call,
        start,
    );
    debug_assert_eq!(
        Some(vec![c.clone()]),
        Some(jsonread::without_fast_path(|| json_calls(
            mode,
            text,
            start..vend,
            Span::new(start, vend),
            false,
            strictness,
            rules
        )))
    );
    Some((c, vend))
}

/// What [`value_calls`] makes of a plain call object read with no repair.
fn plain_candidate(
    mode: &'static str,
    span: Span,
    raw: &str,
    call: callobj::PlainCall,
    value_start: usize,
) -> Candidate {
    let parts = CallParts {
        name: Some(call.name),
        arguments: Ok(call.arguments),
        repairs: Vec::new(),
    };
    from_parts(mode, span, raw, parts, value_start, &[])
}

#[allow(clippy::too_many_arguments)]
fn object_calls(
    mode: &'static str,
    text: &str,
    payload: Range<usize>,
    first: usize,
    span: Span,
    at_end: bool,
    lenient: Strictness,
    rules: CallRules,
) -> Vec<Candidate> {
    let ptext = &text[payload.clone()];
    // A plain call object spanning the payload: read straight into its parts.
    if let Some((call, len)) = callobj::plain_call_prefix(ptext)
        && skip_ws(ptext.as_bytes(), len) == ptext.len()
    {
        return vec![plain_candidate(mode, span, ptext, call, first)];
    }
    match jsonread::read_all(ptext, lenient, at_end) {
        Ok(read) => value_calls(
            Site {
                mode,
                span,
                raw: ptext,
                value_start: first,
                repairs: &read.repairs,
                lenient,
                rules,
            },
            read.value,
        ),
        Err(f) => vec![candidate(
            mode,
            span,
            ptext,
            sniff_name(ptext),
            Err(rebase(f, payload.start)),
            Vec::new(),
        )],
    }
}

/// Where a JSON value was read and how: the mode, the candidate's `span` and
/// `raw` text, where the value starts, the repairs of reading it, and the
/// strictness and call rules it is judged under.
#[derive(Clone, Copy)]
struct Site<'a> {
    mode: &'static str,
    span: Span,
    raw: &'a str,
    value_start: usize,
    repairs: &'a [Repair],
    lenient: Strictness,
    rules: CallRules,
}

/// Candidates for an already-read value (an object, or an array read as one
/// value, e.g. inside a stray fence) read at `site`.
fn value_calls(site: Site<'_>, value: Value) -> Vec<Candidate> {
    match value {
        Value::Array(items) => {
            let mut list = CallList::new(site.rules.missing);
            for v in items {
                list.push(value_candidate(site, v));
            }
            list.into_found().into_vec()
        }
        v => {
            let c = value_candidate(site, v);
            if is_not_a_call(&c) && site.rules.missing == MissingName::Skip {
                Vec::new()
            } else {
                vec![c]
            }
        }
    }
}

/// One JSON value read as a call at `site`: its candidate, a `malformed`
/// one for a value that is not a call object (no name key, or not an object
/// at all: [`is_not_a_call`]); whether that one stands is the caller's rule
/// ([`MissingName`], [`CallList`]). The value is read once: its arguments
/// object is moved, not copied.
fn value_candidate(site: Site<'_>, value: Value) -> Candidate {
    let Site {
        mode,
        span,
        raw,
        value_start,
        repairs,
        lenient,
        rules,
    } = site;
    let not_object = !value.is_object();
    let kind = callobj::type_name(&value);
    match callobj::from_value_owned(value, lenient, rules.metadata) {
        CallObj::Call(parts) => from_parts(mode, span, raw, parts, value_start, repairs),
        CallObj::NotACall => {
            let f = if not_object {
                ParseFailure::new(
                    FailureKind::Malformed,
                    format!("{NOT_AN_OBJECT}, found {kind}"),
                    value_start,
                )
            } else {
                no_name(value_start)
            };
            candidate(mode, span, raw, None, Err(f), repairs.to_vec())
        }
    }
}

/// The failure message of a call-list element that is not an object.
const NOT_AN_OBJECT: &str = "a call must be an object";

/// The failure message of a value without a name key.
const NO_NAME: &str = "no tool name: the call object has none of `name`, `tool`, `tool_name`";

/// Whether `c` is [`value_candidate`]'s candidate for a value that is not a
/// call object (only this module makes these messages, with no name).
fn is_not_a_call(c: &Candidate) -> bool {
    c.name.is_none()
        && c.failure().is_some_and(|f| {
            f.kind == FailureKind::Malformed
                && (f.message == NO_NAME || f.message.starts_with(NOT_AN_OBJECT))
        })
}

/// The candidates of one call list — a JSON array, or `llama3`'s objects
/// separated by `;` — by one rule (probe 44): when any element is a call
/// (or a broken one), every element that is not a call object is a
/// `malformed` candidate, so the list never executes short of an element
/// (`[{"name": "f", …}, "junk"]` executed `f` before). A list none of whose
/// elements is a call is no candidate under [`MissingName::Skip`] (plain
/// JSON in the text) and `malformed` under [`MissingName::Fail`].
pub(crate) struct CallList {
    found: crate::cap::Found,
    holds_call: bool,
    missing: MissingName,
}

impl CallList {
    pub(crate) fn new(missing: MissingName) -> CallList {
        CallList {
            found: crate::cap::Found::new(),
            holds_call: false,
            missing,
        }
    }

    /// Adds the candidate(s) of one element, in list order.
    pub(crate) fn push(&mut self, c: Candidate) {
        self.holds_call |= !is_not_a_call(&c);
        self.found.push(c);
    }

    /// Adds the candidates of elements, in list order.
    pub(crate) fn extend(&mut self, more: impl IntoIterator<Item = Candidate>) {
        for c in more {
            self.push(c);
        }
    }

    /// [`refuse_second_value`] on the list so far: its
    /// payload ended at `end` with no closer.
    pub(crate) fn refuse_second_value(&mut self, text: &str, end: usize, comma: bool) {
        refuse_second_value(&mut self.found, text, end, comma);
    }

    /// The list's candidates by the rule above.
    pub(crate) fn into_found(self) -> crate::cap::Found {
        if self.holds_call || self.missing == MissingName::Fail {
            self.found
        } else {
            crate::cap::Found::new()
        }
    }
}

/// [`json_calls`] of a call list that opens at `open` (a `[`) and has no
/// closer to bound it, read element by element once: the candidates and
/// where the list ends. Only for a clean list — every element a JSON value
/// read without repairs, `,` between them, `]` at the end, at least one
/// element; `None` otherwise, and the caller takes the general path (which
/// then finds the same list end and reports what is wrong). For a clean
/// list the result is exactly that of the general path: reading the whole
/// list to find its end, then [`json_calls`] over it (debug builds check).
pub(crate) fn clean_list_calls(
    mode: &'static str,
    text: &str,
    open: usize,
    strictness: Strictness,
    rules: impl Into<CallRules>,
) -> Option<(Vec<Candidate>, usize)> {
    let rules: CallRules = rules.into();
    let b = text.as_bytes();
    let mut out = CallList::new(rules.missing);
    let mut i = skip_ws(b, open + 1);
    loop {
        // Where this element's value ends: the plain-call fast path, else a
        // full read of the element.
        let vend = if let Some((c, vend)) = plain_call(mode, text, i, text.len(), strictness, rules)
        {
            out.push(c);
            vend
        } else {
            let read = jsonread::read_prefix(text.get(i..)?, strictness, false).ok()?;
            if !read.repairs.is_empty() {
                return None;
            }
            let espan = Span::new(i, i + read.end);
            let raw = &text[i..i + read.end];
            let site = Site {
                mode,
                span: espan,
                raw,
                value_start: i,
                repairs: &[],
                lenient: strictness,
                rules,
            };
            out.push(value_candidate(site, read.value));
            i + read.end
        };
        i = skip_ws(b, vend);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => {
                return Some(clean_list_end(
                    mode,
                    text,
                    open,
                    i + 1,
                    out.into_found().into_vec(),
                    strictness,
                    rules,
                ));
            }
            _ => return None,
        }
    }
}

/// A call list (or call object) at `first` that no closer bounds, after
/// markup opening at `at` (mistral's `[TOOL_CALLS]`, llama3's
/// `<|python_tag|>`): its candidates and where it ends — the value's own
/// end. A clean list is read once; a cut-off one keeps its complete
/// elements as candidates (`truncated` last); a broken one is read up to
/// where the reader stopped, with the reader's failure. A call list or
/// object right after it is `malformed` ([`util::second_object_after`]).
pub(crate) fn open_list(
    mode: &'static str,
    text: &str,
    at: usize,
    first: usize,
    strictness: Strictness,
    rules: impl Into<CallRules>,
) -> (Vec<Candidate>, usize) {
    let rules: CallRules = rules.into();
    // A clean list is read once; anything else takes the general path below.
    if text.as_bytes()[first] == b'['
        && let Some((mut found, end)) = clean_list_calls(mode, text, first, strictness, rules)
    {
        refuse_second_value(&mut found, text, end, true);
        return (found, end);
    }
    match jsonread::read_prefix(&text[first..], strictness, true) {
        Ok(r) => {
            let end = first + r.end;
            let mut found = json_calls(
                mode,
                text,
                first..end,
                Span::new(at, end),
                false,
                strictness,
                rules,
            );
            // A second list right after it (`[TOOL_CALLS][…][…]`).
            refuse_second_value(&mut found, text, end, true);
            (found, end)
        }
        Err(f) if f.kind == FailureKind::Truncated => {
            // Complete elements before the cut-off one stay candidates.
            let found = json_calls(
                mode,
                text,
                first..text.len(),
                Span::new(at, text.len()),
                true,
                strictness,
                rules,
            );
            (found, text.len())
        }
        Err(f) => {
            // Read only up to where the reader stopped (no text is read
            // twice), with the reader's own failure.
            let stop = resume_at(text, first, first + f.offset);
            let mut found = json_calls(
                mode,
                text,
                first..stop,
                Span::new(at, stop),
                false,
                strictness,
                rules,
            );
            replace_last_failure(&mut found, rebase(f, first));
            (found, stop)
        }
    }
}

/// The result of [`clean_list_calls`] for a list ending at `end`; debug
/// builds check it against reading the whole list then [`json_calls`]
/// (classifying reader only).
fn clean_list_end(
    mode: &'static str,
    text: &str,
    open: usize,
    end: usize,
    out: Vec<Candidate>,
    strictness: Strictness,
    rules: CallRules,
) -> (Vec<Candidate>, usize) {
    debug_assert_eq!(
        Ok(end),
        jsonread::read_prefix_classifying(&text[open..], strictness, true).map(|r| open + r.end)
    );
    debug_assert_eq!(
        out,
        jsonread::without_fast_path(|| json_calls(
            mode,
            text,
            open..end,
            Span::new(open, end),
            false,
            strictness,
            rules
        ))
    );
    (out, end)
}

/// The failure of a call object without a name key.
pub(crate) fn no_name(offset: usize) -> ParseFailure {
    ParseFailure::new(FailureKind::Malformed, NO_NAME, offset)
}

/// The failure of a call-list element that is not a call object (`value`
/// is no object, or one without a name key): the one [`CallList`] knows
/// as not a call.
pub(crate) fn not_a_call(value: &Value, offset: usize) -> ParseFailure {
    if value.is_object() {
        no_name(offset)
    } else {
        ParseFailure::new(
            FailureKind::Malformed,
            format!("{NOT_AN_OBJECT}, found {}", callobj::type_name(value)),
            offset,
        )
    }
}

/// Walks a JSON array element by element (see [`json_calls`]).
#[allow(clippy::too_many_arguments)]
fn array_calls(
    mode: &'static str,
    text: &str,
    payload: Range<usize>,
    open: usize,
    at_end: bool,
    lenient: Strictness,
    rules: CallRules,
    span: Span,
) -> Vec<Candidate> {
    let b = text.as_bytes();
    let end = payload.end;
    let mut out = CallList::new(rules.missing);
    let mut array_repairs: Vec<Repair> = Vec::new();
    let eof = |at: usize| {
        if at_end {
            ParseFailure::new(
                FailureKind::Truncated,
                "output ends before the value is complete",
                at,
            )
        } else {
            ParseFailure::new(
                FailureKind::Malformed,
                "payload ends before the value is complete",
                at,
            )
        }
    };
    let mut i = skip_ws(b, open + 1);
    let mut structural: Option<ParseFailure> = None;
    let mut first = true;
    loop {
        i = skip_ws(b, i).min(end);
        if i >= end {
            structural = Some(eof(end));
            break;
        }
        if first && b[i] == b']' {
            i += 1;
            break;
        }
        first = false;
        let elem_text = &text[i..end];
        match jsonread::read_prefix(elem_text, lenient, at_end) {
            Err(f) => {
                let raw = elem_text;
                out.push(candidate(
                    mode,
                    Span::new(i, end),
                    raw,
                    sniff_name(raw),
                    Err(rebase(f, i)),
                    Vec::new(),
                ));
                return finish(out.into_found().into_vec(), &array_repairs);
            }
            Ok(read) => {
                let espan = Span::new(i, i + read.end);
                let raw = &text[i..i + read.end];
                let value_start = skip_ws(b, i);
                let site = Site {
                    mode,
                    span: espan,
                    raw,
                    value_start,
                    repairs: &read.repairs,
                    lenient,
                    rules,
                };
                out.push(value_candidate(site, read.value));
                i += read.end;
            }
        }
        i = skip_ws(b, i);
        if i >= end {
            structural = Some(eof(end));
            break;
        }
        match b[i] {
            b',' => {
                let comma = i;
                i = skip_ws(b, i + 1);
                if i < end && b[i] == b']' {
                    if lenient.is_lenient() {
                        array_repairs.push(Repair::TrailingCommas);
                        i += 1;
                        break;
                    }
                    structural = Some(ParseFailure::new(
                        FailureKind::Malformed,
                        "trailing comma before the closing bracket",
                        comma,
                    ));
                    break;
                }
            }
            b']' => {
                i += 1;
                break;
            }
            _ => {
                structural = Some(ParseFailure::new(
                    FailureKind::Malformed,
                    format!(
                        "expected `,` or `]` in the call list, found {}",
                        describe(text, i)
                    ),
                    i,
                ));
                break;
            }
        }
    }
    if structural.is_none() {
        let after = skip_ws(b, i);
        if after < end {
            structural = Some(ParseFailure::new(
                FailureKind::Malformed,
                format!("unexpected {} after the JSON value", describe(text, after)),
                after,
            ));
        }
    }
    let mut out = out.into_found();
    if let Some(f) = structural {
        match out.last_mut() {
            Some(last) => {
                last.arguments = Err(f);
                last.span.end = end;
            }
            None => {
                let raw = &text[payload.clone()];
                out.push(candidate(
                    mode,
                    span,
                    raw,
                    sniff_name(raw),
                    Err(f),
                    Vec::new(),
                ));
            }
        }
    }
    finish(out.into_vec(), &array_repairs)
}

fn finish(mut out: Vec<Candidate>, array_repairs: &[Repair]) -> Vec<Candidate> {
    if !array_repairs.is_empty() {
        for c in &mut out {
            c.repairs.extend_from_slice(array_repairs);
            c.repairs.sort();
            c.repairs.dedup();
        }
    }
    out
}

/// [`crate::util::second_object_after`] for a payload with no closer that ended at
/// `end`: a call list or object right after it makes the last call
/// `malformed` (a failure it already has stays).
pub(crate) fn refuse_second_value(found: &mut [Candidate], text: &str, end: usize, comma: bool) {
    if let Some(f) = crate::util::second_object_after(text, end, comma)
        && let Some(last) = found.last_mut()
        && last.arguments.is_ok()
    {
        last.arguments = Err(f);
    }
}

/// Puts `f` on the last failed candidate of `found` (the reader's own
/// message is more precise than a re-read of a shortened payload).
pub(crate) fn replace_last_failure(found: &mut [Candidate], f: ParseFailure) {
    if let Some(last) = found.iter_mut().rev().find(|c| c.arguments.is_err()) {
        last.arguments = Err(f);
    }
}

/// Where scanning resumes after a read that started at `start` failed at
/// `fail` (absolute): at the failure itself when the reader got past the
/// start (what it read is consumed, what it stopped at may open the next
/// call), else one character further. Always a char boundary after `start`.
pub(crate) fn resume_at(text: &str, start: usize, fail: usize) -> usize {
    if fail > start && fail <= text.len() {
        let mut n = fail;
        while n < text.len() && !text.is_char_boundary(n) {
            n += 1;
        }
        n
    } else {
        next_char(text, start)
    }
}

/// The char boundary after the character at `at` (at least `at + 1`, at most
/// the text length): where scanning resumes after a failure at `at`.
pub(crate) fn next_char(text: &str, at: usize) -> usize {
    let mut n = at.saturating_add(1).min(text.len());
    while n < text.len() && !text.is_char_boundary(n) {
        n += 1;
    }
    n
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The calls of `text` read whole, as a payload cut at its end.
    fn whole_text_calls(text: &str) -> Vec<Candidate> {
        json_calls(
            "t",
            text,
            0..text.len(),
            Span::new(0, text.len()),
            true,
            Strictness::Strict,
            MissingName::Skip,
        )
    }

    #[test]
    fn json_calls_object_and_array() {
        let text = r#"<x>[{"name": "a", "arguments": {}}, {"name": "b"}]</x>"#;
        let end = text.len() - 4;
        let c = json_calls(
            "t",
            text,
            3..end,
            Span::new(0, text.len()),
            false,
            Strictness::Strict,
            MissingName::Skip,
        );
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].span, Span::new(4, 34));
        assert_eq!(c[1].name.as_deref(), Some("b"));
        // A cut-off second element: the first stays, the second is truncated.
        let text = r#"[{"name": "a"}, {"name": "b", "arguments": {"x"#;
        let c = whole_text_calls(text);
        assert_eq!(c.len(), 2);
        assert!(c[0].call().is_some());
        assert_eq!(c[1].name.as_deref(), Some("b"));
        let f = c[1].failure().unwrap();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, text.len()));
        // Complete elements but no closing bracket: reported on the last one.
        let text = r#"[{"name": "a"}"#;
        let c = whole_text_calls(text);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    #[test]
    fn json_calls_failure_offsets_are_absolute() {
        let text = r#"xx {"name": "f", "arguments": {"q": "a\d"}}"#;
        let c = json_calls(
            "t",
            text,
            3..text.len(),
            Span::new(0, text.len()),
            true,
            Strictness::Strict,
            MissingName::Fail,
        );
        let f = c[0].failure().unwrap();
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 38));
        assert_eq!(c[0].name.as_deref(), Some("f"));
        let c = json_calls(
            "t",
            text,
            3..text.len(),
            Span::new(0, text.len()),
            true,
            Strictness::Lenient,
            MissingName::Fail,
        );
        assert_eq!(c[0].repairs, vec![Repair::InvalidEscapes]);
    }

    #[test]
    fn missing_name_policy() {
        let text = r#"{"a": 1}"#;
        let span = Span::new(0, text.len());
        assert!(
            json_calls(
                "t",
                text,
                0..8,
                span,
                true,
                Strictness::Strict,
                MissingName::Skip
            )
            .is_empty()
        );
        let c = json_calls(
            "t",
            text,
            0..8,
            span,
            true,
            Strictness::Strict,
            MissingName::Fail,
        );
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
    }
}
