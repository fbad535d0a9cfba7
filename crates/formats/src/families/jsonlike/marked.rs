//! **Engine `json_block`** (declared formats: `engine = "json_block"`).
//!
//! The engine behind the "marker + JSON" families: a family-specific opener
//! (`<|tool_call|>`, `functools`, `<TOOLCALL>`, …), a JSON payload (one call
//! object, an array of them, or several objects one after another) and an
//! optional closer. Each family module only describes its markers.
//!
//! Scanning is linear: the openers are found with `memchr::memmem` (each
//! opener's next occurrence is cached, so the text is searched once per
//! opener), a block's payload is read once to delimit it and once more by
//! [`json_array::json_calls`], and the next block is searched after the previous
//! one ends.
//!
//! Where a block ends:
//!
//! - closer found: the payload is the text between opener and closer, and must
//!   be exactly the call(s) (trailing text inside the block is `malformed`);
//! - no closer (the family has none, or the server stripped it): the payload
//!   is the JSON value(s) right after the opener; text after them is ordinary
//!   content. An output that ends inside the value is `truncated`.

use std::ops::Range;

use serde_json::{Map, Value};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Span};

use super::json_array::{
    self, CallRules, MissingName, refuse_second_value, replace_last_failure, resume_at,
};
use crate::callobj::{self, CallObj};
use crate::util::{self, describe};
use crate::{Extractor, Input, Strictness, jsonread, reasoning};

/// One kind of call block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Block<'a> {
    /// The opener, e.g. `<|tool_call|>`.
    pub open: &'a str,
    /// The closer, e.g. `</tool_calls>`; `None` when the family has none.
    pub close: Option<&'a str>,
    /// The payload sits in a fenced block right after the opener (Command R+
    /// `Action:` + ```` ```json ````); the closer is the closing fence.
    pub fenced: bool,
}

impl<'a> Block<'a> {
    /// A block with an opener only.
    pub const fn open(open: &'a str) -> Block<'a> {
        Block {
            open,
            close: None,
            fenced: false,
        }
    }
    /// The payload standing alone at the start of the output or of a
    /// reasoning span (whitespace aside), without a marker: a format whose
    /// marker serving stacks strip (Sarashina) or that has none (xLAM). Only
    /// a `[` followed by `{` (or the end) opens it, as in the `json` mode:
    /// `[link](url)` or `[1, 2]` is text. The empty opener is never searched
    /// for.
    pub const fn bare() -> Block<'a> {
        Block {
            open: "",
            close: None,
            fenced: false,
        }
    }
    /// A block with an opener and a closer.
    pub const fn pair(open: &'a str, close: &'a str) -> Block<'a> {
        Block {
            open,
            close: Some(close),
            fenced: false,
        }
    }
}

/// Whether an opener is a special token that says "call" (`<|function_call|>`,
/// GigaChat's `function call<|role_sep|>`, a declared `@@CALL@@` or
/// `[CALL]`) rather than a word prose may hold (Phi-4's `functools`): one
/// with a character outside words and their punctuation. What follows a
/// token must be a call; a word followed by anything else is just a word.
/// Deciding by a leading `<` counted GigaChat's role header as a word, and
/// `function call<|role_sep|>\ndelete_all` was skipped while the call
/// beside it executed alone (probe 44b).
fn is_token(open: &str) -> bool {
    !open.chars().all(|c| {
        c.is_alphanumeric() || c.is_whitespace() || matches!(c, '_' | '-' | ':' | '.' | ',' | '\'')
    })
}

/// How the payload holds the calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// SPEC §9 call objects: one, an array, or several objects separated by
    /// whitespace or `sep`.
    Calls {
        /// A separator allowed between objects besides whitespace (`;`).
        sep: Option<u8>,
    },
    /// SPEC §9 call objects in an array, and only an array: a payload that
    /// is not one is another format's and no candidate (xLAM, whose
    /// reference parser reads nothing but a list, even inside its wrappers).
    List,
    /// An array of `{"tool_name": {arguments}}` objects (Apertus).
    NameKeyed,
    /// JSON call objects (one, or an array) whose arguments key is the
    /// format's own (Inkling's `"args"`): read as the SPEC §9 arguments key,
    /// and only when the object has none of the standard ones.
    ArgsKey(&'static str),
    /// [`Payload::Calls`] without a separator, in a format whose chat
    /// template writes keys of its own in every call object (Command R's
    /// `tool_call_id`): those keys are read as metadata, like SPEC §9's `id`
    /// (in every other format they are unknown keys, so `malformed`).
    CallsWithMetadata(&'static [&'static str]),
    /// A Python-literal list (or one dict) of call dicts with
    /// `'name'`/`'arguments'` keys (Sarashina), read by the pythonic
    /// engine's literal reader ([`crate::irregular::bracket::literal`]).
    PythonCalls,
}

/// How one element of a payload read as a whole value is a call.
#[derive(Clone, Copy)]
enum Shape {
    /// `{"tool_name": {arguments}}`.
    NameKeyed,
    /// A call object, with the format's own arguments key if any.
    CallObject(Option<&'static str>),
}

/// A "marker + JSON" extractor.
pub(crate) struct Marked<'a> {
    pub name: &'static str,
    pub example: &'a str,
    pub describe: &'a str,
    pub blocks: Vec<Block<'a>>,
    pub payload: Payload,
}

impl Extractor for Marked<'_> {
    util::described_by_fields!();
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| self.scan_text(text, input, strictness))
    }
}

impl Marked<'_> {
    /// The candidates of `text`, the output of `input` or its reasoning
    /// field: what [`Extractor::extract`] runs on each, for a mode that adds
    /// a rule of its own around the engine (`inkling`'s header).
    pub(crate) fn scan_text(
        &self,
        text: &str,
        input: &Input<'_>,
        strictness: Strictness,
    ) -> Vec<Candidate> {
        let bare = self.blocks.iter().any(|k| k.open.is_empty());
        let leads = if bare {
            let spans = if std::ptr::eq(text, input.output) {
                input.reasoning.clone()
            } else {
                reasoning::spans(text)
            };
            leads(text, spans)
        } else {
            Vec::new()
        };
        self.scan(text, &leads, strictness)
    }
}

/// Where a bare payload may stand: the first non-blank byte outside
/// reasoning, and the first non-blank byte inside each reasoning span, in
/// order; only those holding a `[` that opens a list of objects.
fn leads(text: &str, mut spans: Vec<Span>) -> Vec<usize> {
    spans.sort();
    let b = text.as_bytes();
    let mut out = Vec::new();
    // Outside reasoning: skip blanks and the spans that begin the text.
    let mut i = 0;
    let mut k = 0;
    loop {
        i = util::skip_ws(b, i);
        while k < spans.len() && spans[k].end <= i {
            k += 1;
        }
        match spans.get(k) {
            Some(s) if s.start <= i && s.end > i => i = s.end,
            _ => break,
        }
    }
    out.push(i);
    for s in &spans {
        let inner = reasoning::inner(text, *s);
        out.push(util::skip_ws(b, inner.start).min(inner.end));
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|&at| {
        b.get(at) == Some(&b'[') && {
            let j = util::skip_ws(b, at + 1);
            j >= b.len() || b[j] == b'{'
        }
    });
    out
}

/// Finds the earliest of several needles, caching each needle's next
/// occurrence so that every needle is searched for once over the text.
pub(crate) struct MultiFind<'a> {
    text: &'a str,
    needles: Vec<&'a str>,
    next: Vec<Option<Option<usize>>>,
}

impl<'a> MultiFind<'a> {
    pub fn new(text: &'a str, needles: Vec<&'a str>) -> MultiFind<'a> {
        let next = vec![None; needles.len()];
        MultiFind {
            text,
            needles,
            next,
        }
    }

    /// The first occurrence of needle `i` at or after `pos`. Positions asked
    /// for must not decrease (each needle is then searched once over the text).
    pub fn find(&mut self, i: usize, pos: usize) -> Option<usize> {
        let needle = *self.needles.get(i)?;
        if needle.is_empty() {
            return None;
        }
        match self.next[i] {
            Some(Some(at)) if at >= pos => Some(at),
            // Not found from an earlier position: not found from a later one.
            Some(None) => None,
            _ => {
                let found = util::find_from(self.text, needle, pos);
                self.next[i] = Some(found);
                found
            }
        }
    }

    /// The earliest occurrence of any needle at or after `pos`:
    /// (needle index, offset).
    pub fn next(&mut self, pos: usize) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for i in 0..self.needles.len() {
            if let Some(at) = self.find(i, pos)
                && best.is_none_or(|(_, b)| at < b)
            {
                best = Some((i, at));
            }
        }
        best
    }
}

impl Marked<'_> {
    fn scan(&self, text: &str, leads: &[usize], strictness: Strictness) -> Vec<Candidate> {
        let b = text.as_bytes();
        let bare = self.blocks.iter().position(|k| k.open.is_empty());
        let mut lead = leads.iter().copied().peekable();
        let mut finder = MultiFind::new(text, self.blocks.iter().map(|k| k.open).collect());
        let mut closers = MultiFind::new(
            text,
            self.blocks
                .iter()
                .map(|k| {
                    if k.fenced {
                        "```"
                    } else {
                        k.close.unwrap_or("")
                    }
                })
                .collect(),
        );
        let mut out = crate::cap::Found::new();
        let mut pos = 0;
        let mut exhausted = vec![false; self.blocks.len()];
        let stray_closers = self.stray_closers();
        // Whether a block before `pos` held a call (or a broken one).
        let mut after_call = false;
        loop {
            while lead.next_if(|l| *l < pos).is_some() {}
            // A marker at or before the next bare payload's start goes first.
            let next = match (finder.next(pos), bare.zip(lead.peek().copied())) {
                (Some((k, at)), Some((_, l))) if at <= l => Some((k, at)),
                (_, Some((kb, l))) => Some((kb, l)),
                (Some(m), None) => Some(m),
                (None, None) => None,
            };
            // A call object without its opener after a block, or before the
            // first one (a block follows): hermes's rule.
            if !stray_closers.is_empty()
                && (after_call || next.is_some())
                && let Some(stray) = util::stray_call_object(
                    self.name,
                    text,
                    (pos, next.map(|n| n.1)),
                    &stray_closers,
                    after_call,
                )
            {
                out.push(stray);
            }
            let Some((k, at)) = next else { break };
            let block = self.blocks[k];
            let mut ps = at + block.open.len();
            if block.fenced {
                let q = util::skip_ws(b, ps);
                if !text[q..].starts_with("```") {
                    pos = ps;
                    continue;
                }
                let mut j = q;
                while b.get(j) == Some(&b'`') {
                    j += 1;
                }
                // Skip the info word and the rest of the opener line.
                while b
                    .get(j)
                    .is_some_and(|c| *c != b'\n' && *c != b'{' && *c != b'[')
                {
                    j += 1;
                }
                ps = j;
            }
            let close_len = if block.fenced {
                3
            } else {
                block.close.map_or(0, str::len)
            };
            // A closer inside a JSON string of the payload is text
            // (`util::closer_outside_strings`; the walk ends at the closer,
            // where the next block's search begins, so it stays linear).
            let close =
                util::closer_outside_strings(text, ps, usize::MAX, &mut exhausted[k], |p| {
                    closers.find(k, p)
                });
            let (found, end) = match close {
                Some(ci) => {
                    let span = Span::new(at, ci + close_len);
                    (
                        self.payload(text, ps..ci, span, false, strictness),
                        ci + close_len,
                    )
                }
                None => {
                    let span = Span::new(at, text.len());
                    // Where the next block opens bounds a malformed block's
                    // raw text (otherwise N openers on one line copy O(N²)).
                    let next_open = finder.next(ps).map_or(text.len(), |(_, o)| o);
                    let token = is_token(block.open);
                    self.open_payload(text, ps, next_open, span, token, strictness)
                }
            };
            after_call |= !found.is_empty();
            out.extend(found);
            pos = end.max(ps);
        }
        out.into_vec()
    }

    /// The closers a call object without its block's opener is looked for
    /// before ([`util::stray_call_object`]): those of a format whose every
    /// block is a marker with a closer and a payload of call objects
    /// (internlm, longcat, inkling, declared rows). None (the rule is not
    /// looked at) for a bare payload or a fenced one, a format with a block
    /// without a closer (a second object there is the payload's next call),
    /// and list or name-keyed payloads (their elements have no opener).
    fn stray_closers(&self) -> Vec<&str> {
        let objects = matches!(
            self.payload,
            Payload::Calls { .. } | Payload::ArgsKey(_) | Payload::CallsWithMetadata(_)
        );
        let closers: Option<Vec<&str>> = self
            .blocks
            .iter()
            .map(|k| k.close.filter(|_| !k.fenced && !k.open.is_empty()))
            .collect();
        match closers {
            Some(c) if objects => c,
            _ => Vec::new(),
        }
    }

    /// A payload with no closer: reads the value(s) after `ps`; returns the
    /// candidates and where the block ended. `next_open` (where the next
    /// block opens, or the text's end) bounds the raw text of a block that is
    /// not followed by JSON.
    fn open_payload(
        &self,
        text: &str,
        ps: usize,
        next_open: usize,
        span: Span,
        token: bool,
        strictness: Strictness,
    ) -> (Vec<Candidate>, usize) {
        let b = text.as_bytes();
        let first = util::skip_ws(b, ps);
        if first >= b.len() {
            let f = ParseFailure::new(
                FailureKind::Truncated,
                "output ends right after the call marker",
                b.len(),
            );
            return (
                vec![util::candidate(
                    self.name,
                    span,
                    "",
                    None,
                    Err(f),
                    Vec::new(),
                )],
                b.len(),
            );
        }
        if self.payload == Payload::List && b[first] != b'[' {
            return (Vec::new(), first);
        }
        let fence = token && b[first] == b'`';
        if !matches!(b[first], b'{' | b'[') && !fence {
            // A special token says "call" and must be followed by one; a
            // word opener (`functools`) in prose is just a word.
            if !token {
                return (Vec::new(), first);
            }
            let limit = next_open.clamp(first, b.len());
            let line_end = memchr::memchr(b'\n', &b[first..limit]).map_or(limit, |n| first + n);
            let f = ParseFailure::new(
                FailureKind::Malformed,
                format!(
                    "expected JSON after the call marker, found {}",
                    describe(text, first)
                ),
                first,
            );
            let span = Span::new(span.start, line_end);
            let c = util::candidate(
                self.name,
                span,
                &text[first..line_end],
                None,
                Err(f),
                Vec::new(),
            );
            return (vec![c], first);
        }
        if self.payload == Payload::PythonCalls {
            let (mut found, end) = self.python(text, first, span, true, strictness);
            refuse_second_value(&mut found, text, end, true);
            return (found, end);
        }

        if b[first] == b'[' || fence || self.whole_value() {
            return match jsonread::read_prefix(&text[first..], strictness, true) {
                Ok(r) => {
                    let end = first + r.end;
                    let span = Span::new(span.start, end);
                    let mut found = self.payload(text, first..end, span, false, strictness);
                    refuse_second_value(&mut found, text, end, true);
                    (found, end)
                }
                Err(f) => {
                    if f.kind == FailureKind::Truncated {
                        // Complete elements before the cut-off one stay candidates.
                        let found = self.payload(text, first..b.len(), span, true, strictness);
                        return (found, b.len());
                    }
                    // A broken (not cut-off) list: read only up to where the
                    // reader stopped (so no text is read twice) and report
                    // the reader's own failure; scanning goes on from there.
                    let stop = resume_at(text, first, first + f.offset);
                    let span = Span::new(span.start, stop);
                    let mut found = self.payload(text, first..stop, span, false, strictness);
                    replace_last_failure(&mut found, util::rebase(f, first));
                    (found, stop)
                }
            };
        }
        sequence(
            self.name,
            text,
            first..b.len(),
            true,
            false,
            self.sep(),
            self.rules(),
            strictness,
        )
    }

    fn sep(&self) -> Option<u8> {
        match self.payload {
            Payload::Calls { sep } => sep,
            _ => None,
        }
    }

    /// How the payload's call objects are read: a value without a name is a
    /// broken call (the marker says "call"), with the format's own metadata
    /// keys if any.
    fn rules(&self) -> CallRules {
        CallRules {
            missing: MissingName::Fail,
            metadata: match self.payload {
                Payload::CallsWithMetadata(keys) => keys,
                _ => &[],
            },
        }
    }

    /// Whether the payload is read as one value and then split into calls.
    fn whole_value(&self) -> bool {
        !matches!(
            self.payload,
            Payload::Calls { .. } | Payload::CallsWithMetadata(_) | Payload::List
        )
    }

    /// A Python-literal payload at `first` (a list or a dict): the calls and
    /// where the literal ended. A list is read element by element, so the
    /// calls before a cut-off or broken one stay candidates; the failing one
    /// ends the payload. `at_end`: the text ends the output, so a literal cut
    /// there is `truncated`; inside a closed block it is `malformed` (the
    /// block closed first).
    fn python(
        &self,
        text: &str,
        first: usize,
        span: Span,
        at_end: bool,
        strictness: Strictness,
    ) -> (Vec<Candidate>, usize) {
        let b = text.as_bytes();
        let list = b.get(first) == Some(&b'[');
        let mut out = Vec::new();
        let mut pos = if list { first + 1 } else { first };
        let stop = |out: &mut Vec<Candidate>, at: usize, f: ParseFailure| {
            let f = if !at_end && f.kind == FailureKind::Truncated {
                ParseFailure::new(
                    FailureKind::Malformed,
                    "the call block closes inside the list",
                    f.offset,
                )
            } else {
                f
            };
            let end = if f.kind == FailureKind::Truncated {
                text.len()
            } else {
                resume_at(text, at, f.offset)
            };
            out.push(util::candidate(
                self.name,
                Span::new(at, end),
                &text[at..end],
                None,
                Err(f),
                Vec::new(),
            ));
            end
        };
        loop {
            pos = util::skip_ws(b, pos);
            if list && b.get(pos) == Some(&b']') {
                pos += 1;
                break;
            }
            let at = pos;
            match crate::irregular::bracket::literal(text, at, strictness) {
                Ok((value, end, repairs)) => {
                    let shape = Shape::CallObject(None);
                    let raw = &text[at..end];
                    let one = if list {
                        Value::Array(vec![value])
                    } else {
                        value
                    };
                    let found = elements(
                        self.name,
                        raw,
                        at,
                        Span::new(at, end),
                        one,
                        &repairs,
                        shape,
                        strictness,
                    );
                    // A dict without a name key is `malformed` (`elements`):
                    // the list is one payload (`json_array::CallList`).
                    out.extend(found);
                    pos = end;
                }
                Err(f) => {
                    let end = stop(&mut out, at, f);
                    return (out, end);
                }
            }
            if !list {
                break;
            }
            pos = util::skip_ws(b, pos);
            match b.get(pos) {
                Some(b',') => pos += 1,
                Some(b']') => {
                    pos += 1;
                    break;
                }
                None => {
                    let f = ParseFailure::new(
                        FailureKind::Truncated,
                        "output ends inside the call list",
                        b.len(),
                    );
                    let end = stop(&mut out, pos, f);
                    return (out, end);
                }
                Some(_) => {
                    let f = ParseFailure::new(
                        FailureKind::Malformed,
                        format!(
                            "expected `,` or `]` in the call list, found {}",
                            describe(text, pos)
                        ),
                        pos,
                    );
                    let end = stop(&mut out, pos, f);
                    return (out, end);
                }
            }
        }
        if out.is_empty() {
            let f = ParseFailure::new(FailureKind::Malformed, "empty call list", first);
            out.push(util::candidate(
                self.name,
                Span::new(span.start, pos),
                &text[first..pos],
                None,
                Err(f),
                Vec::new(),
            ));
        }
        (out, pos)
    }

    /// The candidates of the payload `text[range]`, bounded by a closer or by
    /// the value's own end: the whole range must be the call(s).
    fn payload(
        &self,
        text: &str,
        range: Range<usize>,
        span: Span,
        at_end: bool,
        strictness: Strictness,
    ) -> Vec<Candidate> {
        if let Some(empty) = util::empty_block(self.name, text, &range, span, at_end) {
            return vec![empty];
        }
        let b = text.as_bytes();
        let first = util::skip_ws(b, range.start).min(range.end);
        match self.payload {
            // A fence around the payload is a stray fence: the lenient reader
            // strips it (recorded), the strict one reports it.
            Payload::List | Payload::Calls { .. } | Payload::CallsWithMetadata(_)
                if matches!(b[first], b'[' | b'`') =>
            {
                json_array::json_calls(
                    self.name,
                    text,
                    range,
                    span,
                    at_end,
                    strictness,
                    self.rules(),
                )
            }
            // Anything but a list is another format's payload.
            Payload::List => Vec::new(),
            Payload::NameKeyed | Payload::ArgsKey(_) => {
                let shape = match self.payload {
                    Payload::ArgsKey(key) => Shape::CallObject(Some(key)),
                    _ => Shape::NameKeyed,
                };
                whole_json(self.name, text, range, span, at_end, shape, strictness)
            }
            Payload::PythonCalls => {
                // The closer bounds the literal: it must be all of the block.
                let (mut found, end) =
                    self.python(&text[..range.end], first, span, at_end, strictness);
                let rest = util::skip_ws(b, end);
                if rest < range.end && !found.is_empty() {
                    let f = ParseFailure::new(
                        FailureKind::Malformed,
                        format!(
                            "text after the call list inside the block: {}",
                            describe(text, rest)
                        ),
                        rest,
                    );
                    replace_or_set_last(&mut found, f);
                }
                for c in &mut found {
                    c.span = span;
                }
                found
            }
            Payload::Calls { .. } | Payload::CallsWithMetadata(_) => {
                let (mut found, _) = sequence(
                    self.name,
                    text,
                    range,
                    at_end,
                    true,
                    self.sep(),
                    self.rules(),
                    strictness,
                );
                // A lone object takes the whole block's span.
                if let [one] = found.as_mut_slice() {
                    one.span = span;
                }
                found
            }
        }
    }
}

/// Call objects one after another in `text[range]`, separated by whitespace
/// (and `sep`). `closed`: the range is bounded by a closer, so text that is
/// not a call object is a `malformed` candidate; otherwise it ends the
/// sequence as ordinary content. Returns the candidates and where the last
/// one ended. A broken object is one failed candidate; inside a closed block
/// reading resumes at the next line that starts with `{`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sequence(
    mode: &'static str,
    text: &str,
    range: Range<usize>,
    at_end: bool,
    closed: bool,
    sep: Option<u8>,
    rules: impl Into<CallRules>,
    strictness: Strictness,
) -> (Vec<Candidate>, usize) {
    let rules: CallRules = rules.into();
    // The objects are one call list: an object without a name key beside a
    // call is `malformed` whatever `rules` says of a lone one
    // (`json_array::CallList`).
    let mut out = json_array::CallList::new(rules.missing);
    let rules = CallRules {
        missing: MissingName::Fail,
        ..rules
    };
    let b = text.as_bytes();
    let end = range.end;
    let mut i = range.start;
    let mut last_end = range.start;
    loop {
        i = util::skip_ws(b, i).min(end);
        if i >= end {
            break;
        }
        if b[i] != b'{' {
            // After a separator, a JSON value that is not an object
            // (`{…}; "junk"`) is an element of the list that is not a call
            // (`json_array::CallList`); prose there ends the list.
            if !closed
                && i > range.start
                && sep.is_some_and(|s| text[range.start..i].trim_end().ends_with(char::from(s)))
                && b[i] != b'['
                && let Ok(r) = jsonread::read_prefix(&text[i..end], strictness, false)
            {
                let vend = i + r.end;
                out.extend(json_array::json_calls(
                    mode,
                    text,
                    i..vend,
                    Span::new(i, vend),
                    false,
                    strictness,
                    rules,
                ));
                last_end = vend;
                break;
            }
            if closed {
                let raw = &text[i..end];
                let f = ParseFailure::new(
                    FailureKind::Malformed,
                    format!("expected a JSON call object, found {}", describe(text, i)),
                    i,
                );
                out.push(util::candidate(
                    mode,
                    Span::new(i, end),
                    raw,
                    util::sniff_name(raw),
                    Err(f),
                    Vec::new(),
                ));
                last_end = end;
            }
            break;
        }
        // A plain call object: read straight into its parts.
        if let Some((c, vend)) = json_array::plain_call(mode, text, i, end, strictness, rules) {
            out.push(c);
            last_end = vend;
            let Some(next) = next_object(b, vend, sep, closed) else {
                out.refuse_second_value(text, vend, false);
                break;
            };
            i = next;
            continue;
        }
        match jsonread::read_prefix(&text[i..end], strictness, at_end) {
            Ok(r) => {
                let vend = i + r.end;
                out.extend(json_array::read_object_calls(
                    mode,
                    text,
                    i..vend,
                    r,
                    strictness,
                    rules,
                ));
                last_end = vend;
                let Some(next) = next_object(b, vend, sep, closed) else {
                    out.refuse_second_value(text, vend, false);
                    break;
                };
                i = next;
            }
            Err(f) => {
                let stop = if f.kind == FailureKind::Truncated {
                    end
                } else if !closed {
                    // Everything up to the failure was read; go on after it.
                    resume_at(text, i, i + f.offset).min(end)
                } else {
                    util::find_from(&text[..end], "\n{", f.offset.saturating_add(i))
                        .map_or(end, |n| n + 1)
                };
                let raw = &text[i..stop];
                out.push(util::candidate(
                    mode,
                    Span::new(i, stop),
                    raw,
                    util::sniff_name(raw),
                    Err(util::rebase(f, i)),
                    Vec::new(),
                ));
                last_end = stop;
                if !closed {
                    break;
                }
                i = stop;
            }
        }
    }
    (out.into_found().into_vec(), last_end)
}

/// Where [`sequence`] reads on after an object that ended at `vend`: past
/// whitespace and one `sep`. `None` ends the sequence: an open range where
/// neither `sep` nor another `{` follows.
fn next_object(b: &[u8], vend: usize, sep: Option<u8>, closed: bool) -> Option<usize> {
    let i = util::skip_ws(b, vend);
    if let Some(s) = sep
        && b.get(i) == Some(&s)
    {
        Some(i + 1)
    } else if !closed && b.get(i) != Some(&b'{') {
        None
    } else {
        Some(i)
    }
}

/// A payload read as one JSON value (`text[range]`), then split into calls
/// by `shape` ([`elements`]). A value that does not read is one candidate
/// with the reader's failure (and the first key, as the tool name, when it
/// can be read).
fn whole_json(
    mode: &'static str,
    text: &str,
    range: Range<usize>,
    span: Span,
    at_end: bool,
    shape: Shape,
    strictness: Strictness,
) -> Vec<Candidate> {
    let raw = &text[range.clone()];
    match jsonread::read_all(raw, strictness, at_end) {
        Ok(r) => elements(
            mode,
            raw,
            range.start,
            span,
            r.value,
            &r.repairs,
            shape,
            strictness,
        ),
        Err(f) => {
            let name = match shape {
                Shape::NameKeyed => first_key(raw),
                Shape::CallObject(_) => util::sniff_name(raw),
            };
            vec![util::candidate(
                mode,
                span,
                raw,
                name,
                Err(util::rebase(f, range.start)),
                Vec::new(),
            )]
        }
    }
}

/// The calls of a payload read as one value: each element of an array (or
/// the value itself) is a call in `shape`:
/// - `NameKeyed`: `[{"get_weather": {"location": "London"}}, …]`, an object
///   with exactly one member, the tool name, whose value is the arguments;
/// - `CallObject(key)`: a SPEC §9 call object; `key` (Inkling's `"args"`)
///   is its arguments key when it has none of the standard ones.
///
/// An element that is not an object (or, name-keyed, has another number of
/// members), or a call object without a name key, is `malformed`. An empty
/// list is one `malformed` candidate ("empty call list").
#[allow(clippy::too_many_arguments)]
fn elements(
    mode: &'static str,
    raw: &str,
    base: usize,
    span: Span,
    value: Value,
    repairs: &[toolgate_core::Repair],
    shape: Shape,
    strictness: Strictness,
) -> Vec<Candidate> {
    let items: Vec<Value> = match value {
        Value::Array(items) => items,
        other => vec![other],
    };
    let malformed = |msg: String| Err(ParseFailure::new(FailureKind::Malformed, msg, base));
    let mut out = Vec::new();
    for item in items {
        let call = match (shape, item) {
            (Shape::NameKeyed, Value::Object(o)) if o.len() == 1 => {
                // Invariant: the object has exactly one member.
                let Some((name, args)) = o.into_iter().next() else {
                    continue;
                };
                let mut call = Map::new();
                call.insert("name".into(), Value::String(name));
                call.insert("arguments".into(), args);
                Value::Object(call)
            }
            (Shape::NameKeyed, Value::Object(o)) => {
                out.push(util::candidate(
                    mode,
                    span,
                    raw,
                    None,
                    malformed(format!(
                        "a call must be an object with one member (the tool name), found {} members",
                        o.len()
                    )),
                    repairs.to_vec(),
                ));
                continue;
            }
            (Shape::CallObject(Some(key)), Value::Object(mut o))
                if !callobj::ARG_KEYS.iter().any(|k| o.contains_key(*k)) =>
            {
                if let Some(args) = o.remove(key) {
                    o.insert("arguments".into(), args);
                }
                Value::Object(o)
            }
            (_, v @ Value::Object(_)) => v,
            (_, other) => {
                out.push(util::candidate(
                    mode,
                    span,
                    raw,
                    None,
                    malformed(format!(
                        "a call must be an object, found {}",
                        callobj::type_name(&other)
                    )),
                    repairs.to_vec(),
                ));
                continue;
            }
        };
        match callobj::from_value(&call, strictness) {
            CallObj::Call(parts) => {
                out.push(util::from_parts(mode, span, raw, parts, base, repairs))
            }
            // The markup says "call": an element without a name key is a
            // broken one, never dropped from the list (probe 44).
            CallObj::NotACall => out.push(util::candidate(
                mode,
                span,
                raw,
                None,
                Err(json_array::no_name(base)),
                repairs.to_vec(),
            )),
        }
    }
    if out.is_empty() {
        out.push(util::candidate(
            mode,
            span,
            raw,
            None,
            malformed("empty call list".into()),
            repairs.to_vec(),
        ));
    }
    out
}

/// Sets `f` on the last candidate of `found` (text after a complete value
/// inside a closed block makes the block malformed).
fn replace_or_set_last(found: &mut [Candidate], f: ParseFailure) {
    if let Some(last) = found.last_mut() {
        last.arguments = Err(f);
        last.repairs.clear();
    }
}

/// The first key of the first object in a broken `[{"name": …` payload.
fn first_key(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let mut i = util::skip_ws(b, 0);
    if b.get(i) == Some(&b'[') {
        i = util::skip_ws(b, i + 1);
    }
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = util::skip_ws(b, i + 1);
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let len = memchr::memchr2(b'"', b'\\', &b[start..])?;
    (b[start + len] == b'"' && len > 0).then(|| raw[start..start + len].to_string())
}

/// The call whose JSON arguments object starts at `args_at`, after the
/// tool name `name` the markup gave, in a call whose markup opens at `at`
/// (functionary's `<function=f>{…}`, mistral's `f[ARGS]{…}`): its
/// candidate and where it ends. The arguments are read by
/// [`callobj::arguments_object`]; a second object right after them makes
/// the call `malformed` (issue 22); a cut-off object is `truncated` at the
/// text's end, and after a broken one reading resumes where the reader
/// stopped.
pub(crate) fn arguments_after_name(
    mode: &'static str,
    text: &str,
    at: usize,
    args_at: usize,
    name: String,
    strictness: Strictness,
) -> (Candidate, usize) {
    match jsonread::read_prefix(&text[args_at..], strictness, true) {
        Ok(r) => {
            let end = args_at + r.end;
            let (arguments, repairs) =
                callobj::arguments_object(r.value, r.repairs, strictness, args_at);
            let arguments = match util::second_object_after(text, end, true) {
                Some(f) if arguments.is_ok() => Err(f),
                _ => arguments,
            };
            let raw = &text[args_at..end];
            let c = util::candidate(
                mode,
                Span::new(at, end),
                raw,
                Some(name),
                arguments,
                repairs,
            );
            (c, end)
        }
        Err(f) => {
            let end = if f.kind == FailureKind::Truncated {
                text.len()
            } else {
                resume_at(text, args_at, args_at + f.offset)
            };
            let raw = &text[args_at..end.max(args_at)];
            let f = util::rebase(f, args_at);
            let c = util::candidate(
                mode,
                Span::new(at, end),
                raw,
                Some(name),
                Err(f),
                Vec::new(),
            );
            (c, end)
        }
    }
}

/// The failure of a call the output ends inside of, before its arguments
/// are complete.
pub(crate) fn cut_off_call(at: usize) -> ParseFailure {
    ParseFailure::new(
        FailureKind::Truncated,
        "output ends inside the tool call",
        at,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::testutil::*;
    use super::{Block, Marked, Payload};
    use toolgate_core::FailureKind;

    /// Probe 44b: an opener that is a token though not `<`-led (GigaChat's
    /// role header, a declared `@@CALL@@`) must be followed by a call; it
    /// counted as a prose word, and what followed it was skipped.
    #[test]
    fn a_token_opener_not_led_by_lt_must_be_followed_by_a_call() {
        for open in ["function call<|role_sep|>", "@@CALL@@", "[CALL]"] {
            let m = Marked {
                name: "t",
                example: "",
                describe: "",
                blocks: vec![Block::open(open)],
                payload: Payload::Calls { sep: None },
            };
            let c = strict(&m, &format!("{open}\ndelete_all path=/"));
            assert_eq!(c.len(), 1, "{open}");
            assert_eq!(
                c[0].failure().map(|f| f.kind),
                Some(FailureKind::Malformed),
                "{open}"
            );
        }
        // A word opener in prose is a word.
        let m = Marked {
            name: "t",
            example: "",
            describe: "",
            blocks: vec![Block::open("functools")],
            payload: Payload::Calls { sep: None },
        };
        assert!(strict(&m, "I like functools a lot").is_empty());
    }

    #[test]
    fn a_second_object_after_named_arguments_is_malformed() {
        // Issue 22 ("no executed call has fewer arguments than the model
        // wrote"): `{"b": 2}` was dropped and f ran with `a` only. vLLM's
        // json.loads of mistral's argument text refuses it too.
        let functionary = crate::format::functionary::FUNCTIONARY;
        let mistral = crate::format::mistral::MISTRAL;
        for (mode, out) in [
            (
                &functionary as &dyn crate::Extractor,
                r#"<function=f>{"a": 1}{"b": 2}</function>"#,
            ),
            (&functionary, "<function=f>{\"a\": 1}\n{\"b\": 2}"),
            (&mistral, r#"[TOOL_CALLS]f[ARGS]{"a": 1}{"b": 2}"#),
            (
                &mistral,
                r#"[TOOL_CALLS]f[ARGS]{"a": 1} {"b": 2}[TOOL_CALLS]g[ARGS]{}"#,
            ),
        ] {
            let c = strict(mode, out);
            assert_eq!(c[0].name.as_deref(), Some("f"), "{out}");
            assert_eq!(
                c[0].failure().unwrap().kind,
                FailureKind::Malformed,
                "{out}"
            );
        }
        // Prose after the call stays text.
        let c = strict(&functionary, r#"<function=f>{"a": 1}</function> done"#);
        assert!(c[0].call().is_some());
    }

    #[test]
    fn a_call_object_without_its_opener_beside_a_block_is_malformed() {
        // s46-stray2: hermes's rule for the json_block rows with a closer.
        // `f` ran and `g` was dropped as text.
        let longcat = crate::format::longcat::extractor();
        let internlm = crate::format::internlm::extractor();
        let f = r#"<longcat_tool_call>{"name": "f", "arguments": {}}</longcat_tool_call>"#;
        let g = r#"{"name": "g", "arguments": {}}"#;
        for (e, out, stray) in [
            (&longcat, format!("{f}{g}</longcat_tool_call>"), 1),
            (&longcat, format!("{f}\n{g}\nDone."), 1),
            (&longcat, format!("{g}</longcat_tool_call>{f}"), 0),
            (
                &internlm,
                format!(
                    "{g}<|action_end|><|action_start|><|plugin|>{{\"name\": \"f\", \"parameters\": {{}}}}<|action_end|>"
                ),
                0,
            ),
        ] {
            let c = strict(&**e, &out);
            crate::irregular::testkit::assert_stray(&c, stray, ("f", Some("g")), &out);
        }
        // Prose before a stray closer, and data after a block, stay text.
        for out in [
            format!("Use </longcat_tool_call> to close.\n{f}"),
            format!("{f}\n{{\"name\": \"Alice\", \"age\": 3}}"),
            format!("{f} done.</longcat_tool_call>"),
        ] {
            assert_eq!(strict(&*longcat, &out).len(), 1, "{out}");
        }
    }

    #[test]
    fn a_marker_without_json_ends_at_the_next_marker_on_its_line() {
        let granite = crate::format::granite::extractor();
        let out = r#"<tool_call>oops <tool_call>[{"name": "a", "arguments": {}}]"#;
        let found = strict(&*granite, out);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].raw, "oops ");
        assert_eq!((found[0].span.start, found[0].span.end), (0, 16));
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(found[1].call().unwrap().name, "a");
    }

    #[test]
    fn many_markers_on_one_line_stay_linear() {
        // 10,000 openers: each candidate's raw text is empty (it ends where
        // the next opener starts), not the rest of the line.
        let granite = crate::format::granite::extractor();
        let out = "<tool_call>".repeat(10_000);
        let found = strict(&*granite, &out);
        // Capped while scanning: 998 kept, the stand-in, the last one.
        assert_eq!(found.len(), crate::rules::DEFAULT_MAX_CANDIDATES);
        assert!(found.iter().all(|c| c.raw.is_empty()));
        assert!(
            found[998]
                .failure()
                .unwrap()
                .message
                .starts_with("10000 candidates")
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }
}
