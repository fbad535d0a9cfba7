//! Scanning helpers shared by the extractors.
//!
//! - [`scan_texts`] runs one scan over `input.output` and over the separate
//!   `reasoning` field, and gives every candidate the right [`Source`]
//!   (candidates starting inside a reasoning span of the output become
//!   [`Source::OutputReasoning`]);
//! - the JSON call-payload engine that used to live here is
//!   [`crate::families::jsonlike::json_array`];
//! - [`candidate`], [`from_parts`], [`rebase`], [`sniff_name`] build
//!   candidates by hand;
//! - [`mark_unclosed`] turns the last call of markup left open at the end
//!   of the output into a `truncated` one;
//! - [`find_all`], [`find_from`], [`NextFinder`], [`skip_ws`], [`trim_range`],
//!   [`is_word_at`], [`fences`] find things in linear time (`memchr::memmem`
//!   for fixed openers; [`NextFinder`] remembers its last hit so that "the
//!   next closer after each opener" stays linear).
//!
//! ```ignore
//! use toolgate_core::Span;
//! use toolgate_formats::{util, Input, Strictness};
//! use toolgate_formats::families::jsonlike::json_array;
//! // A toy mode: the payload after `CALL ` up to the end of the line.
//! let input = Input::new("<think>CALL {\"name\": \"a\"}</think>\nCALL {\"name\": \"b\"}");
//! let found = util::scan_texts(&input, |text| {
//!     let mut out = Vec::new();
//!     for at in util::find_all(text, "CALL ") {
//!         let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
//!         let end = text[at..end].find("</think>").map_or(end, |n| at + n);
//!         out.extend(json_array::json_calls("toy", text, at + 5..end, Span::new(at, end),
//!             end == text.len(), Strictness::Strict, json_array::MissingName::Fail));
//!     }
//!     out
//! });
//! assert_eq!(found.len(), 2);
//! assert!(found[0].source.is_reasoning());
//! assert_eq!(found[1].name.as_deref(), Some("b"));
//! ```

use crate::callobj::CallParts;
pub use crate::find::{NextFinder, StaticFinder, find_all, find_from, finder};
use crate::input::Input;
use serde_json::{Map, Value};
use std::ops::Range;
use toolgate_core::{Candidate, FailureKind, ParseFailure, Repair, Source, Span};

/// The first index at or after `i` that is not JSON whitespace (space, tab,
/// `\n`, `\r`), or `bytes.len()`.
pub fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

/// Whether a JSON payload starts at `i`: `{`, `[`, or a stray ```` ``` ````
/// code fence around one (SPEC §3 lists stray fences among the lenient
/// repairs, so a fenced payload is a candidate of the JSON family: strict
/// reading labels it malformed, lenient reading strips the fence).
pub fn opens_json_payload(bytes: &[u8], i: usize) -> bool {
    matches!(bytes.get(i), Some(b'{' | b'['))
        || bytes.get(i..).is_some_and(|rest| rest.starts_with(b"```"))
}

/// Whether `word` stands at `at` in `text` as a whole word: the bytes before
/// and after it are not ASCII alphanumerics or `_`.
pub fn is_word_at(text: &str, at: usize, word: &str) -> bool {
    let b = text.as_bytes();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    b.get(at..at + word.len()) == Some(word.as_bytes())
        && (at == 0 || !is_word(b[at - 1]))
        && b.get(at + word.len()).is_none_or(|c| !is_word(*c))
}

/// `failure` with its offset moved from payload-relative to text-relative.
pub fn rebase(mut failure: ParseFailure, base: usize) -> ParseFailure {
    failure.offset += base;
    failure
}

/// The `name`, `example` and `describe` of an [`crate::Extractor`] that
/// holds them as fields of those names (the engines a row configures:
/// `marked`, `pythonic`).
macro_rules! described_by_fields {
    () => {
        fn name(&self) -> &str {
            self.name
        }
        fn example(&self) -> &str {
            self.example
        }
        fn describe(&self) -> &str {
            self.describe
        }
    };
}
pub(crate) use described_by_fields;

/// A candidate with [`Source::Output`] ([`scan_texts`] sets the final source).
pub fn candidate(
    mode: &'static str,
    span: Span,
    raw: &str,
    name: Option<String>,
    arguments: Result<Map<String, Value>, ParseFailure>,
    mut repairs: Vec<Repair>,
) -> Candidate {
    repairs.sort();
    repairs.dedup();
    Candidate {
        mode: std::borrow::Cow::Borrowed(mode),
        source: Source::Output,
        span,
        raw: raw.to_string(),
        name,
        arguments: arguments.map(std::sync::Arc::new),
        repairs,
    }
}

/// The failure of a call block whose payload `text[range]` is only
/// whitespace (the `marked` and `pythonic` engines): `truncated` when the
/// output ends there (`at_end`), else `malformed` (an empty call block).
/// `None` when the block holds something.
pub(crate) fn empty_block(
    mode: &'static str,
    text: &str,
    range: &Range<usize>,
    span: Span,
    at_end: bool,
) -> Option<Candidate> {
    let first = skip_ws(text.as_bytes(), range.start).min(range.end);
    if first < range.end {
        return None;
    }
    let f = if at_end {
        ParseFailure::new(
            FailureKind::Truncated,
            "output ends inside the call block",
            range.end,
        )
    } else {
        ParseFailure::new(FailureKind::Malformed, "empty call block", range.start)
    };
    Some(candidate(mode, span, "", None, Err(f), Vec::new()))
}

/// A candidate from [`CallParts`]: a failure's offset (0 from
/// [`callobj::from_value`]) is moved to `base`, the payload's position in
/// the text; `extra` repairs (those of reading the JSON text) are merged in.
pub fn from_parts(
    mode: &'static str,
    span: Span,
    raw: &str,
    parts: CallParts,
    base: usize,
    extra: &[Repair],
) -> Candidate {
    let mut repairs = parts.repairs;
    repairs.extend_from_slice(extra);
    candidate(
        mode,
        span,
        raw,
        parts.name,
        parts.arguments.map_err(|f| rebase(f, base)),
        repairs,
    )
}

/// Runs `scan` over the output and over the separate reasoning field, and
/// sets each candidate's source: candidates of the output whose span starts
/// inside a reasoning span become [`Source::OutputReasoning`] (others stay as
/// the scan left them, normally [`Source::Output`]); those of the reasoning
/// field become [`Source::ReasoningField`]. `scan` gets the text and returns
/// candidates with spans and failure offsets relative to it; the end of
/// either text counts as the end of the output (truncation).
pub fn scan_texts(
    input: &Input<'_>,
    mut scan: impl FnMut(&str) -> Vec<Candidate>,
) -> Vec<Candidate> {
    // Binary search over the sorted spans keeps this O(n log n) however many
    // reasoning blocks and candidates there are.
    let mut spans = input.reasoning.clone();
    spans.sort();
    let mut out = {
        // The cap applies while the scan runs (`crate::cap::Found`).
        let _cap = crate::cap::ScanGuard::enter(input.max_candidates, spans.clone());
        scan(input.output)
    };
    let in_reasoning = |offset: usize| {
        let i = spans.partition_point(|s| s.end <= offset);
        spans[i..]
            .iter()
            .take_while(|s| s.start <= offset)
            .any(|s| s.contains(offset))
    };
    for c in &mut out {
        if c.source == Source::Output && in_reasoning(c.span.start) {
            c.source = Source::OutputReasoning;
        }
    }
    if let Some(field) = input.reasoning_field {
        let mut more = {
            let _cap = crate::cap::ScanGuard::enter(input.max_candidates, Vec::new());
            scan(field)
        };
        for c in &mut more {
            c.source = Source::ReasoningField;
        }
        out.extend(more);
        // Each text is within the cap; both together may not be. (The
        // count in the message is then a lower bound: a text's own
        // stand-in counts once.)
        crate::cap::cap_candidates(&mut out, input.max_candidates);
    }
    out
}

/// The tool name of a payload that did not parse, when it can still be read:
/// the first `"name"`, `"tool"` or `"tool_name"` key followed by `:` and a
/// complete string without escapes. Linear.
pub fn sniff_name(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let mut best: Option<(usize, String)> = None;
    for key in ["\"name\"", "\"tool\"", "\"tool_name\""] {
        let Some(at) = memchr::memmem::find(b, key.as_bytes()) else {
            continue;
        };
        if best.as_ref().is_some_and(|(p, _)| *p < at) {
            continue;
        }
        let mut i = skip_ws(b, at + key.len());
        if b.get(i) != Some(&b':') {
            continue;
        }
        i = skip_ws(b, i + 1);
        if b.get(i) != Some(&b'"') {
            continue;
        }
        let start = i + 1;
        let Some(len) = memchr::memchr2(b'"', b'\\', &b[start..]) else {
            continue;
        };
        if b[start + len] == b'"' && len > 0 {
            best = Some((at, raw[start..start + len].to_string()));
        }
    }
    best.map(|(_, n)| n)
}

/// The character at `at` as a failure message names it (`` `x` ``, a
/// control character by its code point, or the end of the text).
pub(crate) fn describe(text: &str, at: usize) -> String {
    match text.get(at..).and_then(|t| t.chars().next()) {
        Some(c) if c.is_control() => format!("character U+{:04X}", c as u32),
        Some(c) => format!("`{c}`"),
        None => "end of text".into(),
    }
}

/// A fenced code block: ```` ```info ```` … ```` ``` ````.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fence {
    /// Offset of the first backtick of the opener.
    pub start: usize,
    /// The info string (e.g. `json`), trimmed; may be empty.
    pub info: Range<usize>,
    /// The content between the opener line and the closing fence.
    pub content: Range<usize>,
    /// One past the closing fence, or the text length when unclosed.
    pub end: usize,
    /// Whether a closing fence was found.
    pub closed: bool,
}

/// The fenced blocks of `text`, in order, in one linear pass.
///
/// An opener is a run of three or more backticks anywhere (models put
/// fences mid-line, e.g. `TOOL_CALL: ```json`); its info string is the word
/// right after it (letters, digits, `_`, `-`, `+`, `.`). When the rest of the
/// opener's line is blank the content starts on the next line, otherwise
/// right after the info word (a one-line ```` ```json {…}``` ````). The block
/// closes at the next run of at least as many backticks; without one, it runs
/// to the end of the text (`closed: false`).
pub fn fences(text: &str) -> Vec<Fence> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    let mut exhausted = false;
    while let Some(at) = find_from(text, "```", pos) {
        let mut n = at;
        while b.get(n) == Some(&b'`') {
            n += 1;
        }
        let ticks = n - at;
        let info_start = n;
        let mut info_end = n;
        while b
            .get(info_end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'.'))
        {
            info_end += 1;
        }
        let mut j = info_end;
        while let Some(b' ' | b'\t' | b'\r') = b.get(j) {
            j += 1;
        }
        let content_start = match b.get(j) {
            Some(b'\n') => j + 1,
            None => j,
            Some(_) => info_end,
        };
        // The closing run: at least `ticks` backticks; for JSON content
        // (info `json`, `tool_call` or none, `{` or `[` first), only a run
        // outside its strings
        // (`closer_outside_strings`: a fence written inside a string value,
        // e.g. code in an argument, does not close the block).
        let next_run = |from: usize| {
            let mut search = from;
            while let Some(c) = find_from(text, "```", search) {
                let mut e = c;
                while b.get(e) == Some(&b'`') {
                    e += 1;
                }
                if e - c >= ticks {
                    return Some(c);
                }
                search = e;
            }
            None
        };
        let info = &text[info_start..info_end];
        let json = ["", "json", "tool_call"]
            .iter()
            .any(|i| info.eq_ignore_ascii_case(i))
            && matches!(b.get(skip_ws(b, content_start)), Some(b'{' | b'['));
        let close_at = if json {
            closer_outside_strings(text, content_start, usize::MAX, &mut exhausted, next_run)
        } else {
            next_run(content_start)
        };
        let close = close_at.map(|c| {
            let mut e = c;
            while b.get(e) == Some(&b'`') {
                e += 1;
            }
            (c, e)
        });
        match close {
            Some((c, e)) => {
                out.push(Fence {
                    start: at,
                    info: info_start..info_end,
                    content: content_start..c,
                    end: e,
                    closed: true,
                });
                pos = e;
            }
            None => {
                out.push(Fence {
                    start: at,
                    info: info_start..info_end,
                    content: content_start.min(b.len())..b.len(),
                    end: b.len(),
                    closed: false,
                });
                break;
            }
        }
    }
    out
}

/// For a call whose closing markup is missing at the end of the output: the
/// last candidate, when it parsed, becomes `truncated` at `text_len` ("output
/// ends before `closer`"); the name stays. A candidate that already failed
/// keeps its own failure.
pub fn mark_unclosed(cands: &mut [Candidate], text_len: usize, closer: &str) {
    if let Some(last) = cands.last_mut()
        && last.arguments.is_ok()
    {
        last.arguments = Err(ParseFailure::new(
            FailureKind::Truncated,
            format!("output ends before `{closer}`"),
            text_len,
        ));
    }
}

/// Finds a JSON payload's closer outside JSON strings (issue 22): a closer
/// such as `</tool_call>` or `<|END_ACTION|>` (or the next block's opener)
/// written inside a string value of the payload does not end it. One rule
/// for every JSON-payload format.
///
/// `find(p)` gives the first raw occurrence of the token at or after `p`
/// (positions asked for never decrease, so a memoized finder stays linear).
/// The string state is walked once from the payload start `from`; the
/// first occurrence outside a string is the closer. Occurrences at or
/// after `limit` (e.g. where the next block opens) are not looked at.
/// When no occurrence lies outside a string, the rest of the text (up to
/// `limit`) is walked once more: if its quoting closes, there is no closer
/// (`None`: every occurrence was text); if the text ends inside a string
/// (broken quoting, or the output was cut inside a string), the first raw
/// occurrence is the closer, as before the rule. Either way `exhausted` is
/// set, and later searches of the same text take the first raw occurrence
/// at once: a text of many broken blocks is walked once, not once per block.
pub fn closer_outside_strings(
    text: &str,
    from: usize,
    limit: usize,
    exhausted: &mut bool,
    find: impl FnMut(usize) -> Option<usize>,
) -> Option<usize> {
    let limit = limit.min(text.len());
    let mut find = {
        let mut find = find;
        move |p: usize| find(p).filter(|&c| c < limit)
    };
    let first = find(from)?;
    if *exhausted {
        return Some(first);
    }
    let b = text.as_bytes();
    let mut walked = from;
    let mut in_string = false;
    // Walks the string state over [walked, to).
    let walk = |walked: &mut usize, in_string: &mut bool, to: usize| {
        while *walked < to {
            if *in_string {
                match memchr::memchr2(b'"', b'\\', &b[*walked..to]) {
                    Some(i) if b[*walked + i] == b'\\' => *walked += i + 2,
                    Some(i) => {
                        *in_string = false;
                        *walked += i + 1;
                    }
                    None => *walked = to,
                }
            } else {
                match memchr::memchr(b'"', &b[*walked..to]) {
                    Some(i) => {
                        *in_string = true;
                        *walked += i + 1;
                    }
                    None => *walked = to,
                }
            }
        }
    };
    let mut candidate = Some(first);
    while let Some(c) = candidate {
        if c >= walked {
            walk(&mut walked, &mut in_string, c);
            if !in_string && walked == c {
                return Some(c);
            }
        }
        // Inside a string (or an escape ran past it): the next occurrence.
        candidate = find(walked.max(c + 1));
    }
    *exhausted = true;
    walk(&mut walked, &mut in_string, limit);
    if in_string { Some(first) } else { None }
}

/// Where a tag's JSON payload starting at `body` ends (`hermes`, `tag`): at
/// the tag's closer outside the payload's strings ([`closer_outside_strings`],
/// `walked` its state, `close_len` the closer's length) when it comes
/// before the next opener `next_open`, else at that opener, else at the end
/// of the text. Gives the payload's end, the tag's end, and whether the
/// closer was found.
pub fn block_end(
    text: &str,
    body: usize,
    next_open: Option<usize>,
    (walked, close_len): (&mut bool, usize),
    closes: impl FnMut(usize) -> Option<usize>,
) -> (usize, usize, bool) {
    let limit = next_open.unwrap_or(usize::MAX);
    let close = closer_outside_strings(text, body, limit, walked, closes);
    match (close, next_open) {
        (Some(c), Some(o)) if o < c => (o, o, false),
        (Some(c), _) => (c, c + close_len, true),
        (None, Some(o)) => (o, o, false),
        (None, None) => (text.len(), text.len(), false),
    }
}

/// For payloads that have no closer of their own (mistral's
/// `NAME[ARGS]{…}` and `[TOOL_CALLS][…]`, functionary's `<function=NAME>{…}`,
/// the `marker` mode's `TOOL_CALL {…}`, the call lists of `granite`,
/// `functools`, `xlam`, `sarashina` and `llama3`'s `<|python_tag|>[…]`): a
/// second JSON object or call list right after the value that ended the
/// payload (`{"a": 1}{"b": 2}`, `[…][…]`, `[…]{…}`; with `comma`, also
/// after one `,`, a list's own separator: `[…], {…}`, `{"a": 1}, {"b": 2}`)
/// is a `malformed`
/// failure, never text after the call. Otherwise the call would run with the
/// first value only and the rest dropped; the reference parsers (vLLM's
/// `json.loads` of the whole argument text) refuse it too, and formats with
/// a closer (hermes, command_r) reject the same text. A `[` counts as a list
/// only as the `json` mode counts one ([`opens_call_list`]), so the next
/// call's `[TOOL_CALLS]` is not one. `end` is where the value ends.
/// `comma` is false only for `llama3`'s `;` sequences, which read every
/// bare `{"name"` object as a call of its own (a bare list's elements).
pub fn second_object_after(text: &str, end: usize, comma: bool) -> Option<ParseFailure> {
    let b = text.as_bytes();
    let mut at = skip_ws(b, end);
    if comma && b.get(at) == Some(&b',') {
        at = skip_ws(b, at + 1);
    }
    let after_list = text[..end].trim_end().ends_with(']');
    let message = match b.get(at) {
        Some(b'{') if after_list => {
            "a JSON call object right after the call list (its call would be dropped)"
        }
        Some(b'{') => {
            "a second JSON object right after the arguments object (its keys would be dropped)"
        }
        Some(b'[') if opens_call_list(b, at) => {
            "a second call list right after the call (its calls would be dropped)"
        }
        _ => return None,
    };
    Some(ParseFailure::new(FailureKind::Malformed, message, at))
}

/// A call the model wrote without its block's opener, in the gap `text[from..to]`
/// (up to the next opener) after a block, or before the first block: the
/// format's own call markup minus the opener, a broken call, `malformed`;
/// skipped as text, it let the call beside it execute alone (as kimi's and
/// deepseek's calls without their opener, `tagged::name_json`). Two shapes:
///
/// - closed by one of `closers` (`<tool_call>{…}</tool_call>{…}</tool_call>`
///   in hermes, `<|tool_call>call:f{…}<tool_call|>call:g{…}<tool_call|>` in
///   gemma, and the same before the first block); `closed` says where the
///   call's own text starts in the gap before the first closer (`None`: that
///   text is no call, e.g. prose);
/// - only `after_call`, with no closer at all: the gap's text (leading
///   whitespace skipped) starts with the call (`<tool_call>{…}</tool_call>
///   {"name": "g", …}`); `bare` says how long the call there is (`None`: it
///   does not start with one). Before the first block such text is the
///   output's own content, not a call missing its opener.
///
/// Only the gap is searched, so the scan stays linear. Gives the call's
/// start, its end (past the closer, if any) and the failure.
pub fn stray_call(
    text: &str,
    (from, to): (usize, Option<usize>),
    (closers, after_call): (&[&str], bool),
    closed: impl FnOnce(&str) -> Option<usize>,
    bare: impl FnOnce(&str) -> Option<usize>,
) -> Option<(usize, usize, ParseFailure)> {
    let gap = text.get(from..to.unwrap_or(text.len()))?;
    let first = closers
        .iter()
        .filter_map(|k| gap.find(k).map(|c| (c, *k)))
        .min();
    let found = first.and_then(|(close, closer)| {
        let start = from + closed(&gap[..close])?;
        let what =
            format!("a call closed by `{closer}` without its opener (its call would be dropped)");
        Some((start, from + close + closer.len(), what))
    });
    let found = found.or_else(|| {
        if !after_call {
            return None;
        }
        let start = skip_ws(text.as_bytes(), from).min(from + gap.len());
        let len = bare(&text[start..from + gap.len()]).filter(|&n| n > 0)?;
        let what =
            "a call right after a call without its opener and closer (its call would be dropped)"
                .to_string();
        Some((start, start + len, what))
    });
    let (start, end, what) = found?;
    Some((
        start,
        end,
        ParseFailure::new(FailureKind::Malformed, what, start),
    ))
}

/// A tag's name attribute `attr` and its `>` at `i` in `g` (`name="g">`,
/// at `g`'s start or after whitespace or a tag's `>`), the head of a tag
/// call (`tag`'s `<tool name="g">`, the invoke rows' `<invoke name="g">`)
/// without its opener: the name and where the `>` ends. Reads only up to
/// the attribute's closing quote. Glued to a `>` as [`name_gt_head`]'s
/// names are: the section tag the model wrote before the call
/// (`<｜DSML｜function_calls>name="g">…</｜DSML｜invoke>`) was not taken for
/// the head's left edge, and the call beside it executed alone (s48).
pub(crate) fn named_gt(g: &str, i: usize, attr: &str) -> Option<(String, usize)> {
    let b = g.as_bytes();
    if !g[i..].starts_with(attr) || (i > 0 && !(b[i - 1].is_ascii_whitespace() || b[i - 1] == b'>'))
    {
        return None;
    }
    let j = skip_ws(b, i + attr.len());
    (b.get(j) == Some(&b'=')).then_some(())?;
    let j = skip_ws(b, j + 1);
    let q = *b.get(j).filter(|q| matches!(**q, b'"' | b'\''))?;
    let len = memchr::memchr(q, &b[j + 1..]).filter(|&n| n > 0)?;
    let k = skip_ws(b, j + 2 + len);
    (b.get(k) == Some(&b'>')).then(|| (g[j + 1..j + 1 + len].to_string(), k + 1))
}

/// The head of a call whose opener ends just before its function name
/// (functionary's `<function=NAME>`, Qwen3-Coder's `<function=NAME>`),
/// written without that opener: the first name glued to `>` in `g` (the
/// name at `g`'s start or after whitespace or `>`) whose text after the `>`
/// (whitespace skipped) the call's body begins (`body`: functionary's `{`,
/// Qwen3-Coder's `<parameter=`). Gives where the name starts and where
/// its `>` is. Each `>` is looked at once, so the scan stays linear.
pub(crate) fn name_gt_head(g: &str, body: impl Fn(&str) -> bool) -> Option<(usize, usize)> {
    let b = g.as_bytes();
    let is_name = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    memchr::memchr_iter(b'>', b).find_map(|gt| {
        body(&g[skip_ws(b, gt + 1)..]).then_some(())?;
        let start = b[..gt]
            .iter()
            .rposition(|c| !is_name(*c))
            .map_or(0, |i| i + 1);
        let glued = start == 0 || matches!(b[start - 1], b'>' | b' ' | b'\t' | b'\n' | b'\r');
        (start < gt && glued).then_some((start, gt))
    })
}

/// The `closed` test of [`stray_call`] for tag calls (`tag`, the invoke
/// rows without a call block): in the text `g` before a stray closer, the
/// call's own text starts at a [`named_gt`] head and ends with a tag's `>`
/// or the `}` of JSON arguments; other text before a stray closer
/// (`Use </tool> to close`, `the name="x"> attribute</tool>`) is prose.
pub(crate) fn closed_named(g: &str, attr: &str) -> Option<usize> {
    let t = g.trim_end();
    if !(t.ends_with('}') || t.ends_with('>')) {
        return None;
    }
    g.match_indices(attr)
        .map(|(i, _)| i)
        .find(|&i| named_gt(g, i, attr).is_some())
}

/// A tag call without its opener (`tag`'s `<tool`, `xml_call`'s
/// `<tool_call`, the invoke of the rows without a call block) after a call
/// or before the first one, in the gap `gap` ([`stray_call`]): closed by one
/// of `closers`, its text starting at its name attribute `attr`
/// ([`closed_named`]); or, right after a call with no closer at all, the
/// gap starting with that attribute and its `>` ([`named_gt`]), the call
/// running `body(g, head_end)` bytes into the gap `g`. The candidate names
/// the tool its attribute names.
pub(crate) fn stray_tag_call(
    mode: &'static str,
    text: &str,
    gap: (usize, Option<usize>),
    (closers, after_call): (&[&str], bool),
    attr: &str,
    body: impl FnOnce(&str, usize) -> usize,
) -> Option<Candidate> {
    let (start, end, f) = stray_call(
        text,
        gap,
        (closers, after_call),
        |g| closed_named(g, attr),
        |g| named_gt(g, 0, attr).map(|(_, head)| body(g, head)),
    )?;
    let own = &text[start..end];
    let name = named_gt(own, 0, attr).map(|(n, _)| n);
    Some(candidate(
        mode,
        Span::new(start, end),
        own,
        name,
        Err(f),
        Vec::new(),
    ))
}

/// A call object without its block's opener after a block or before the
/// first one (from `from`, before the next opener `to`), in a format whose
/// block holds JSON call objects (hermes, and the `json_block` engine's
/// rows with a closer: internlm, longcat, inkling, declared ones), a broken
/// call ([`stray_call`], gemma's rule): closed by one of `closers`
/// (hermes: `</tool_call>`)
/// (`<tool_call>{…}</tool_call>{"name": "g", …}</tool_call>`,
/// `{"name": "g", …}</tool_call><tool_call>{…}</tool_call>`), or, right
/// after a block, a call object with no closer at all
/// (`<tool_call>{…}</tool_call>{"name": "g", …}`). Before a closer, the
/// text counts as a call object when it ends with `}` and holds a `{`
/// whose first key follows (`{"`); other text before a stray closer is
/// prose. Without a closer, only a call object right after the block is
/// one: a JSON object with a string under a name key and an argument key
/// ([`crate::callobj`]'s spellings, lenient ones included); other JSON
/// (`{"name": "Alice", "age": 3}`) is data the model wrote as text.
pub(crate) fn stray_call_object(
    mode: &'static str,
    text: &str,
    gap: (usize, Option<usize>),
    closers: &[&str],
    after_call: bool,
) -> Option<Candidate> {
    let closed = |g: &str| {
        if !g.trim_end().ends_with('}') {
            return None;
        }
        g.match_indices('{')
            .map(|(i, _)| i)
            .find(|&i| g[i + 1..].trim_start().starts_with('"'))
    };
    let bare = |g: &str| {
        if !g.starts_with('{') {
            return None;
        }
        let mut it = serde_json::Deserializer::from_str(g).into_iter::<serde_json::Value>();
        match it.next() {
            Some(Ok(serde_json::Value::Object(m))) if is_call_object(&m) => Some(it.byte_offset()),
            _ => None,
        }
    };
    let (start, end, f) = stray_call(text, gap, (closers, after_call), closed, bare)?;
    let own = &text[start..end];
    let payload = closers
        .iter()
        .find_map(|k| own.strip_suffix(k))
        .unwrap_or(own)
        .trim_end();
    let name = serde_json::from_str::<serde_json::Value>(payload)
        .ok()
        .and_then(|v| v.get("name")?.as_str().map(str::to_string));
    Some(candidate(
        mode,
        Span::new(start, end),
        own,
        name,
        Err(f),
        Vec::new(),
    ))
}

/// Whether a JSON object has a call object's shape: a string under a name
/// key and an argument key.
fn is_call_object(m: &serde_json::Map<String, serde_json::Value>) -> bool {
    use crate::callobj::{ARG_KEYS, LENIENT_ARG_KEYS, NAME_KEYS};
    NAME_KEYS
        .iter()
        .any(|k| m.get(*k).is_some_and(|v| v.is_string()))
        && ARG_KEYS
            .iter()
            .chain(&LENIENT_ARG_KEYS)
            .any(|k| m.contains_key(*k))
}

/// Whether the `[` at `at` opens a list of call objects: an object (`{`),
/// the closing `]` or the end of the text follows it (after whitespace).
/// `[get_weather(…)]`, `[TOOL_CALLS]` and `[THINK]` are not call lists.
pub fn opens_call_list(b: &[u8], at: usize) -> bool {
    b.get(at) == Some(&b'[') && matches!(b.get(skip_ws(b, at + 1)), None | Some(b'{' | b']'))
}

/// Why a tag's attributes cannot be read as its format defines them
/// ([`attr_fault`]). Either way the tag is `malformed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrFault {
    /// An attribute the format does not define (issue 22: markup
    /// attributes are the tag form of call-object keys; one the format does
    /// not define may hold an argument).
    Unknown(String),
    /// An attribute the format defines, given twice (`name="a" name="b"`):
    /// ambiguous, as two name keys of a call object are (SPEC §9). Reading
    /// the first, as the value readers do, ran a tool the second one
    /// contradicted.
    Twice(String),
}

impl AttrFault {
    /// The tool name a candidate refused for this fault reports: `name`,
    /// read from the attribute `name_attr`, unless that attribute is the
    /// one given twice (two names name no tool, as with two name keys).
    pub fn name(&self, name_attr: &str, name: String) -> Option<String> {
        match self {
            Self::Twice(key) if key == name_attr => None,
            _ => Some(name),
        }
    }

    /// The failure message for the tag described by `place` (`the invoke
    /// tag`, `a parameter tag`).
    pub fn message(&self, place: &str) -> String {
        match self {
            Self::Unknown(key) => format!(
                "unknown attribute `{key}` in {place}: a call never runs with arguments dropped"
            ),
            Self::Twice(key) => format!(
                "attribute `{key}` is given twice in {place}: ambiguous, and which one is meant is never guessed"
            ),
        }
    }
}

/// The first attribute in a tag's attribute text `attrs` that the format
/// cannot take: one whose name is not in `known`, or one of `known` given a
/// second time (see [`AttrFault`]). Attributes are read as `key`,
/// `key=value`, `key="value"` or `key='value'`, in one pass; a known
/// `xmlns` admits every `xmlns:PREFIX` declaration (those are not counted:
/// they name no part of the call).
pub fn attr_fault(attrs: &str, known: &[&str]) -> Option<AttrFault> {
    let b = attrs.as_bytes();
    // The known attributes met so far: at most `known.len()` entries, so
    // the check stays linear in `attrs`.
    let mut seen: Vec<&str> = Vec::with_capacity(known.len());
    let mut i = 0;
    loop {
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_whitespace() || *c == b'/')
        {
            i += 1;
        }
        let start = i;
        while b
            .get(i)
            .is_some_and(|c| !c.is_ascii_whitespace() && !matches!(c, b'=' | b'/'))
        {
            i += 1;
        }
        if i == start {
            return None;
        }
        let key = &attrs[start..i];
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if b.get(i) == Some(&b'=') {
            i += 1;
            while b.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            match b.get(i) {
                Some(q @ (b'"' | b'\'')) => {
                    i = memchr::memchr(*q, &b[i + 1..]).map_or(b.len(), |n| i + 2 + n);
                }
                _ => {
                    while b.get(i).is_some_and(|c| !c.is_ascii_whitespace()) {
                        i += 1;
                    }
                }
            }
        }
        if known.contains(&key) {
            if seen.contains(&key) {
                return Some(AttrFault::Twice(key.to_string()));
            }
            seen.push(key);
        } else if !(key.starts_with("xmlns:") && known.contains(&"xmlns")) {
            return Some(AttrFault::Unknown(key.to_string()));
        }
    }
}

/// `range` with surrounding JSON whitespace removed.
pub fn trim_range(text: &str, range: Range<usize>) -> Range<usize> {
    let b = text.as_bytes();
    let mut s = range.start.min(b.len());
    let mut e = range.end.min(b.len());
    while s < e && matches!(b[s], b' ' | b'\t' | b'\n' | b'\r') {
        s += 1;
    }
    while e > s && matches!(b[e - 1], b' ' | b'\t' | b'\n' | b'\r') {
        e -= 1;
    }
    s..e
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::find::{FINDER_CACHE_LIMIT, FINDERS};
    use std::sync::Arc;

    #[test]
    fn cached_finders_are_reused_and_find_what_a_fresh_search_finds() {
        let a = finder("</tool_call>");
        assert!(Arc::ptr_eq(&a, &finder("</tool_call>")));
        let long = format!("{}</tool_call>{}", "x".repeat(100), "y".repeat(100));
        let short = "ab</tool_call>";
        for (hay, from) in [
            (long.as_str(), 0),
            (long.as_str(), 101),
            (short, 0),
            (short, 3),
        ] {
            let fresh =
                memchr::memmem::find(&hay.as_bytes()[from..], b"</tool_call>").map(|i| from + i);
            assert_eq!(find_from(hay, "</tool_call>", from), fresh);
        }
        assert_eq!(find_from(&long, "</tool_call>", 0), Some(100));
        assert_eq!(find_from(&long, "</tool_call>", 101), None);
        // Past the limit the cache starts over; answers stay the same.
        for i in 0..FINDER_CACHE_LIMIT + 10 {
            let needle = format!("<n{i}>");
            let hay = format!("{}{needle}", "z".repeat(70));
            assert_eq!(find_from(&hay, &needle, 0), Some(70));
        }
        FINDERS.with(|cell| assert!(cell.borrow().len() <= FINDER_CACHE_LIMIT));
        assert_eq!(NextFinder::new("y").next(&long, 0), Some(112));
    }

    #[test]
    fn find_all_is_non_overlapping_and_in_order() {
        assert_eq!(find_all("aXaXa", "a").collect::<Vec<_>>(), vec![0, 2, 4]);
        assert_eq!(find_all("aaaa", "aa").collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(find_all("abc", "").count(), 0);
    }

    #[test]
    fn next_finder_reuses_its_last_hit() {
        let text = "a</x>b</x>";
        let mut f = NextFinder::new("</x>");
        assert_eq!(f.next(text, 0), Some(1));
        assert_eq!(f.next(text, 1), Some(1));
        assert_eq!(f.next(text, 2), Some(6));
        assert_eq!(f.next(text, 7), None);
        assert_eq!(f.next(text, 9), None);
    }

    #[test]
    fn a_closer_inside_a_json_string_is_not_the_closer() {
        let find = |text: &'static str| move |p: usize| find_from(text, "</x>", p);
        let text = r#"{"a": "see </x> here", "b": "\"</x>"}</x> tail"#;
        let mut ex = false;
        let got = closer_outside_strings(text, 0, usize::MAX, &mut ex, find(text));
        assert_eq!(got, text.rfind("</x>"));
        assert!(!ex);
        // Broken quoting: the first raw closer, and later searches take it.
        let text = r#"{"a": "open </x> {"b": 1}"#;
        let mut ex = false;
        assert_eq!(
            closer_outside_strings(text, 0, usize::MAX, &mut ex, find(text)),
            text.find("</x>")
        );
        assert!(ex);
        // Sound quoting, the closer only inside strings: none.
        let text = r#"{"a": "in </x> a string"}"#;
        let mut ex2 = false;
        assert_eq!(
            closer_outside_strings(text, 0, usize::MAX, &mut ex2, find(text)),
            None
        );
        assert!(ex2);
        let text = r#"{"a": "x"}</x>"#;
        assert_eq!(
            closer_outside_strings(text, 0, usize::MAX, &mut ex, find(text)),
            text.find("</x>")
        );
        // No closer at all.
        assert_eq!(
            closer_outside_strings("{}", 0, usize::MAX, &mut false, find("{}")),
            None
        );
    }

    #[test]
    fn word_boundaries() {
        assert!(is_word_at("x TOOL_CALL: y", 2, "TOOL_CALL"));
        assert!(!is_word_at("[TOOL_CALLS]", 1, "TOOL_CALL"));
        assert!(!is_word_at("MYTOOL_CALL", 2, "TOOL_CALL"));
    }

    #[test]
    fn sniff_name_reads_the_first_name_key() {
        assert_eq!(
            sniff_name(r#"{"name": "f", "arguments": {"city": "Ant"#).as_deref(),
            Some("f")
        );
        assert_eq!(
            sniff_name(r#"{"tool": "greet", "parameters": {"name": "x""#).as_deref(),
            Some("greet")
        );
        assert_eq!(sniff_name(r#"{"name": "get_wea"#), None);
    }

    #[test]
    fn fences_open_mid_line_and_may_stay_open() {
        let text = "TOOL_CALL: ```json\n{\"a\": 1}\n```\nthen ```\n[1]";
        let f = fences(text);
        assert_eq!(f.len(), 2);
        assert_eq!(&text[f[0].info.clone()], "json");
        assert_eq!(&text[f[0].content.clone()], "{\"a\": 1}\n");
        assert!(f[0].closed);
        assert_eq!(&text[f[1].content.clone()], "[1]");
        assert!(!f[1].closed);
        let one = fences("```json {\"a\": 1}```");
        assert_eq!(one[0].content, 7..16);
    }
}
