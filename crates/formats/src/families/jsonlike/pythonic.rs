//! **Engine `pythonic`** (declared formats: `engine = "pythonic"`).
//!
//! The engine behind the pythonic families (`llama4_pythonic`, `lfm2`,
//! `olmo`): a block between family tokens holding Python-style calls.
//!
//! The calls themselves are read by the `bracket` mode's parser
//! ([`Bracket`]), run on the block's content alone, so that the value rules
//! (Python and JSON literals, named arguments, trailing commas, truncation)
//! are the same in every pythonic mode. Spans and failure offsets are moved
//! back into the output. OLMo's newline-separated calls (no list brackets)
//! are handed to it as a list: the content is wrapped in `[` … `]` and each
//! newline between two top-level calls becomes a `,` (same length, so
//! offsets stay exact); strings and nesting are tracked so that a newline
//! inside an argument is left alone.
//!
//! A block that closes while its list is still open is `malformed` (the
//! model closed the block early); one that runs to the end of the output is
//! `truncated`.

use std::borrow::Cow;

use toolgate_core::{Candidate, FailureKind, ParseFailure, Span};

use super::json_array::{self, MissingName};
use super::marked::MultiFind;
use crate::irregular::bracket::Bracket;
use crate::util;
use crate::{Extractor, Input, Strictness};

/// A pythonic family.
pub(crate) struct Pythonic {
    pub name: &'static str,
    pub example: &'static str,
    pub describe: &'static str,
    pub open: &'static str,
    pub close: &'static str,
    /// A bare list is a call block too (Llama 4 without
    /// `<|python_start|>`): at the very start of the output, or, in an output
    /// without the opener, after leading text.
    pub bare_start: bool,
    /// The content is newline-separated calls without list brackets (OLMo).
    pub unbracketed: bool,
    /// The content may also be a JSON call list (`[{"name": …}]`, LFM2).
    pub json_lists: bool,
}

impl Extractor for Pythonic {
    util::described_by_fields!();
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| self.scan(text, strictness))
    }
}

/// The calls the `bracket` mode's parser reads in a block's content.
///
/// It opens a call list only at `[ name(` (`bracket`'s `next_opener` looks
/// for the `(` first), so content without a `(` holds none: that content —
/// prose with `[brackets]`, where a bare list is looked for in most
/// outputs — is rejected with one `memchr`, before the parser's [`Input`]
/// looks for reasoning spans in it. A unit test checks this equals the
/// parser on lists, prose and near-misses.
fn calls_in(content: &str, strictness: Strictness) -> Vec<Candidate> {
    if memchr::memchr(b'(', content.as_bytes()).is_none() {
        return Vec::new();
    }
    // Through the funnel, as every extraction: a reasoning marker inside
    // a call of the block is that call's text ([`crate::extract`]).
    crate::extract(&Bracket, &Input::new(content), strictness)
}

impl Pythonic {
    fn scan(&self, text: &str, strictness: Strictness) -> Vec<Candidate> {
        let b = text.as_bytes();
        let mut opens = MultiFind::new(text, vec![self.open]);
        let mut closes = MultiFind::new(text, vec![self.close]);
        let mut out = crate::cap::Found::new();
        let mut pos = 0;
        let first = util::skip_ws(b, 0);
        // (block start, content start); they are equal for a bare list.
        let opener = opens.next(0).map(|(_, at)| (at, at + self.open.len()));
        if self.bare_start && b.get(first) != Some(&b'[') && opener.is_none() {
            return self.after_leading_text(text, strictness);
        }
        let mut next = if self.bare_start && b.get(first) == Some(&b'[') {
            Some((first, first))
        } else {
            opener
        };
        while let Some((at, content)) = next {
            let close = closes.find(0, content);
            // A bare list ends at the end of the output or at the closer.
            let (end, block_end, closed) = match close {
                Some(c) => (c, c + self.close.len(), true),
                None => (text.len(), text.len(), false),
            };
            let span = Span::new(at, block_end);
            let bare = at == content;
            out.extend(self.block(text, content..end, span, closed, bare, strictness));
            pos = block_end.max(content).max(pos);
            next = opens.next(pos).map(|(_, at)| (at, at + self.open.len()));
        }
        out.into_vec()
    }

    /// Leading text, then the call list, in an output without the opener
    /// (vLLM issue #22917; SGLang's pythonic detector reads the list there).
    /// The list must be the output's last thing, its calls one list: a list
    /// mentioned in prose (`See [f(x=1)] in the docs.`) is not a call block.
    fn after_leading_text(&self, text: &str, strictness: Strictness) -> Vec<Candidate> {
        let b = text.as_bytes();
        let Some(at) = memchr::memchr(b'[', b) else {
            return Vec::new();
        };
        let span = Span::new(at, text.len());
        let found = self.block(text, at..text.len(), span, false, true, strictness);
        // Only `,` and whitespace between calls; after the last, the list's
        // `]` and whitespace (or nothing: cut off inside the list).
        let only_separators = |gap: &str| gap.bytes().all(|c| c == b',' || c.is_ascii_whitespace());
        let one_list = found.windows(2).all(|w| {
            w[0].span.end <= w[1].span.start
                && only_separators(&text[w[0].span.end..w[1].span.start])
        });
        let ends_output = found.last().is_some_and(|c| {
            let rest =
                text[c.span.end..].trim_start_matches(|ch: char| ch == ',' || ch.is_whitespace());
            rest.is_empty() || rest.strip_prefix(']').is_some_and(|r| r.trim().is_empty())
        });
        if one_list && ends_output {
            found
        } else {
            Vec::new()
        }
    }

    fn block(
        &self,
        text: &str,
        range: std::ops::Range<usize>,
        span: Span,
        closed: bool,
        bare: bool,
        strictness: Strictness,
    ) -> Vec<Candidate> {
        if let Some(empty) = util::empty_block(self.name, text, &range, span, !closed) {
            return vec![empty];
        }
        let b = text.as_bytes();
        let first = util::skip_ws(b, range.start).min(range.end);
        if self.json_lists && b[first] == b'[' && b.get(util::skip_ws(b, first + 1)) == Some(&b'{')
        {
            return json_array::json_calls(
                self.name,
                text,
                range,
                span,
                !closed,
                strictness,
                MissingName::Fail,
            );
        }
        let content = &text[range.clone()];
        let (sub, shift): (Cow<'_, str>, usize) = if self.unbracketed {
            let mut s = String::with_capacity(content.len() + 2);
            s.push('[');
            s.push_str(&separators_to_commas(content));
            if closed {
                s.push(']');
            }
            // Synthetic index i is output index range.start + i - 1.
            (Cow::Owned(s), 1)
        } else {
            (Cow::Borrowed(content), 0)
        };
        let found = calls_in(&sub, strictness);
        if found.is_empty() && bare {
            // A bare `[` that opens no call list (`[TOOL_CALLS]`, a JSON
            // array, a markdown link) is not this format.
            return Vec::new();
        }
        if found.is_empty() {
            let f = ParseFailure::new(
                FailureKind::Malformed,
                "expected a list of calls `[name(arg=value), …]`",
                first,
            );
            let raw = &text[first..range.end];
            return vec![util::candidate(
                self.name,
                span,
                raw,
                None,
                Err(f),
                Vec::new(),
            )];
        }
        let map = |i: usize| {
            (range.start + i)
                .saturating_sub(shift)
                .clamp(range.start, range.end)
        };
        found
            .into_iter()
            .map(|mut c| {
                c.mode = self.name.into();
                c.span = Span::new(map(c.span.start), map(c.span.end));
                if let Err(f) = &mut c.arguments {
                    f.offset = map(f.offset);
                    if closed && f.kind == FailureKind::Truncated {
                        f.kind = FailureKind::Malformed;
                        f.message =
                            format!("the call block closes inside the call list ({})", f.message);
                    }
                }
                c
            })
            .collect()
    }
}

/// OLMo's `f(a=1)\ng(b=2)`: each newline at nesting depth 0, outside
/// strings, that follows a `)` becomes `,` (same byte length). Linear.
fn separators_to_commas(content: &str) -> String {
    let b = content.as_bytes();
    let mut out = b.to_vec();
    let mut depth: usize = 0;
    let mut i = 0;
    let mut last_sig: u8 = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' => {
                // Skip the string (single or triple quoted, backslash escapes).
                let triple = b.get(i..i + 3) == Some(&[c, c, c][..]);
                let q = if triple { 3 } else { 1 };
                i += q;
                while i < b.len() {
                    if b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == c && (!triple || b.get(i..i + 3) == Some(&[c, c, c][..])) {
                        i += q;
                        break;
                    }
                    if !triple && b[i] == b'\n' {
                        break;
                    }
                    i += 1;
                }
                last_sig = c;
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' if depth == 0 && last_sig == b')' => {
                out[i] = b',';
                last_sig = b',';
                i += 1;
                continue;
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            last_sig = c;
        }
        i += 1;
    }
    // Only ASCII newlines were replaced by ASCII commas: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| content.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast reject of [`calls_in`] gives what the bracket parser gives,
    /// on lists, prose, near-misses (a name without `(`, a `(` without a
    /// name, a `(` only in reasoning or in a string) and cut-off lists.
    #[test]
    fn calls_in_equals_the_bracket_parser_on_any_content() {
        let contents = [
            "",
            "[brackets] like in again {braces} \"quotes\" 東京 🙂",
            "[get_weather city='Gent']",
            "[get_weather, get_time]",
            "[get_weather(city='Gent')]",
            "[ get_weather (city='Gent')]",
            "[get_weather(city='Gent'), get_time(tz='UTC')]",
            "[get_weather(\"Gent\")]",
            "[get_weather(city='Gent'",
            "[get_weather(",
            "prose (an aside) then [brackets]",
            "[(1, 2)]",
            "[f(a=1)] <think>g(b=2)</think>",
            "<think>[f(a=1)]</think>",
            "[f(a='(')]",
            "[\"(\"]",
            "[[f(a=1)]]",
            "[f(a=1)\ng(b=2)]",
        ];
        for content in contents {
            for strictness in [Strictness::Strict, Strictness::Lenient] {
                assert_eq!(
                    calls_in(content, strictness),
                    // Through the funnel, as every extraction: a reasoning marker inside
                    // a call of the block is that call's text ([`crate::extract`]).
                    crate::extract(&Bracket, &Input::new(content), strictness),
                    "{content:?} {strictness:?}"
                );
            }
        }
        // Prose is rejected without a candidate; a call is still read.
        assert!(calls_in("[brackets] and prose", Strictness::Strict).is_empty());
        assert_eq!(calls_in("[f(a=1)]", Strictness::Strict).len(), 1);
    }

    #[test]
    fn newlines_between_calls_become_commas_only_at_top_level() {
        assert_eq!(
            separators_to_commas("f(a=1)\ng(b='x\\ny')"),
            "f(a=1),g(b='x\\ny')"
        );
        assert_eq!(
            separators_to_commas("f(a=[1,\n2])\ng()"),
            "f(a=[1,\n2]),g()"
        );
        assert_eq!(
            separators_to_commas("f(s=\"\"\"a)\nb\"\"\")\ng()"),
            "f(s=\"\"\"a)\nb\"\"\"),g()"
        );
    }
}
