//! `gemma`: Gemma 4 and FunctionGemma — `call:name{…}` between call tokens,
//! with a JSON-like argument syntax: bare keys, and strings quoted by a
//! special token instead of `"`.
//!
//! ```text
//! <|tool_call>call:get_weather{location:<|"|>San Francisco<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>
//! <|tool_call>call:set_config{config:{theme:<|"|>dark<|"|>,count:3},tags:[<|"|>a<|"|>]}<tool_call|>
//! <start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>
//! ```
//!
//! - strings are quoted by `<|"|>` (Gemma 4) or `<escape>` (FunctionGemma)
//!   and hold raw text: there are no backslash escapes, so a `}` or `,`
//!   inside a quoted string is text;
//! - numbers, `true`, `false`, `null` are written as in JSON; objects use
//!   bare (or quoted) keys, arrays use `[…]`; an unquoted word that is none
//!   of these is `malformed`, as is a repeated key;
//! - each block is one call; several blocks are parallel calls; without the
//!   closing token the call's own `}` ends it, and an output that ends inside
//!   the call is `truncated`;
//! - calls inside the Gemma 4 thought channel (`<|channel>thought…<channel|>`)
//!   are reasoning.
//!
//! The syntax has no spelling variants that a named repair (SPEC §3) would
//! fix, so the lenient variant reads exactly as the strict one.
//!
//! The reader is iterative (an explicit stack, depth capped at
//! [`MAX_DEPTH`]) and linear.

use serde_json::{Map, Value};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Span};

use crate::families::jsonlike::json_array::resume_at;
use crate::families::jsonlike::marked::MultiFind;
use crate::jsonread::{self, MAX_DEPTH};
use crate::util::describe;
use crate::{Extractor, Input, Strictness, util};

const MODE: &str = "gemma";

/// The `gemma` extractor, with the tokens of its format file.
#[derive(Clone, Copy, Debug)]
pub struct Gemma {
    /// (opener, closer, string quote) per dialect.
    pub blocks: [(&'static str, &'static str, &'static str); 2],
    /// What a block's call begins with, before the tool name.
    pub call: &'static str,
}

impl Extractor for Gemma {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"<|tool_call>call:get_weather{location:<|"|>London<|"|>}<tool_call|>"#
    }
    fn describe(&self) -> &str {
        "Gemma 4 / FunctionGemma: <|tool_call>call:f{key:<|\"|>text<|\"|>,n:1}<tool_call|> (FunctionGemma quotes with <escape>)"
    }
    fn extract(&self, input: &Input<'_>, _strictness: Strictness) -> Vec<Candidate> {
        // The syntax has no spelling variants to repair: strict and lenient agree.
        util::scan_texts(input, |text| scan(self, text))
    }
}

fn scan(gemma: &Gemma, text: &str) -> Vec<Candidate> {
    let blocks = gemma.blocks;
    let b = text.as_bytes();
    let mut opens = MultiFind::new(text, blocks.iter().map(|k| k.0).collect());
    let mut closes = MultiFind::new(text, blocks.iter().map(|k| k.1).collect());
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    loop {
        let next_open = opens.next(pos);
        // After a block, or before the first one (`pos == 0`, a block follows).
        let gap = (pos, next_open.map(|n| n.1));
        if (pos > 0 || gap.1.is_some())
            && let Some(stray) = stray_call(gemma, text, gap, pos > 0)
        {
            out.push(stray);
        }
        let Some((k, at)) = next_open else { break };
        let (open, close, quote) = blocks[k];
        let body = at + open.len();
        let close_at = closes.find(k, body);
        let (limit, at_end) = match close_at {
            Some(c) => (c, false),
            None => (text.len(), true),
        };
        let block_end = close_at.map_or(text.len(), |c| c + close.len());
        let start = util::skip_ws(b, body).min(limit);
        let mut reader = Reader {
            text,
            b,
            i: start,
            end: limit,
            quote,
            call: gemma.call,
            at_end,
        };
        let parsed = reader.call();
        let next = match parsed {
            Ok((name, args)) => {
                let after = util::skip_ws(b, reader.i).min(limit);
                if close_at.is_some() && after < limit {
                    let f = ParseFailure::new(
                        FailureKind::Malformed,
                        format!("unexpected {} after the call", describe(text, after)),
                        after,
                    );
                    let span = Span::new(at, block_end);
                    out.push(util::candidate(
                        MODE,
                        span,
                        &text[start..limit],
                        Some(name),
                        Err(f),
                        Vec::new(),
                    ));
                    block_end
                } else {
                    let end = if close_at.is_some() {
                        block_end
                    } else {
                        reader.i
                    };
                    let span = Span::new(at, end);
                    let raw = &text[start..reader.i];
                    out.push(util::candidate(
                        MODE,
                        span,
                        raw,
                        Some(name),
                        Ok(args),
                        Vec::new(),
                    ));
                    end
                }
            }
            Err((name, f)) => {
                let resume = if close_at.is_some() {
                    block_end
                } else if f.kind == FailureKind::Truncated {
                    text.len()
                } else {
                    resume_at(text, start, f.offset)
                };
                let span = Span::new(at, resume.max(start));
                // The raw text is the candidate's own span, never the rest of
                // the output (N unclosed calls would copy O(N²) bytes).
                let raw_end = resume.clamp(start, limit);
                out.push(util::candidate(
                    MODE,
                    span,
                    &text[start..raw_end],
                    name,
                    Err(f),
                    Vec::new(),
                ));
                resume
            }
        };
        pos = next.max(body);
    }
    out.into_vec()
}

/// A call without its block's opener after a block or before the first one
/// (from `from`, before the next opener `to`), a broken call
/// ([`util::stray_call`], the rule hermes shares): closed by a block closer
/// (`<|tool_call>call:f{…}<tool_call|>call:g{…}<tool_call|>`,
/// `call:g{…}<tool_call|><|tool_call>call:f{…}<tool_call|>`), or, right
/// after a block, `call:NAME` with no closer at all
/// (`<|tool_call>call:f{…}<tool_call|>call:g{…}`).
fn stray_call(
    gemma: &Gemma,
    text: &str,
    gap: (usize, Option<usize>),
    after_call: bool,
) -> Option<Candidate> {
    let closers = gemma.blocks.map(|k| k.1);
    let name_len = |s: &str| {
        s.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .unwrap_or(s.len())
    };
    let bare = |g: &str| {
        let rest = g.strip_prefix(gemma.call)?;
        (name_len(rest) > 0).then(|| g.trim_end().len())
    };
    let (start, end, f) = util::stray_call(
        text,
        gap,
        (&closers, after_call),
        |g| g.find(gemma.call),
        bare,
    )?;
    let name_at = start + gemma.call.len();
    let len = name_len(&text[name_at..]);
    let name = (len > 0).then(|| text[name_at..name_at + len].to_string());
    Some(util::candidate(
        MODE,
        Span::new(start, end),
        &text[start..end],
        name,
        Err(f),
        Vec::new(),
    ))
}

enum Frame {
    Obj(Map<String, Value>, String),
    Arr(Vec<Value>),
}

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    end: usize,
    quote: &'static str,
    call: &'static str,
    at_end: bool,
}

type Failed = (Option<String>, ParseFailure);

impl Reader<'_> {
    fn eof(&self) -> ParseFailure {
        if self.at_end {
            ParseFailure::new(
                FailureKind::Truncated,
                "output ends inside the call",
                self.end,
            )
        } else {
            ParseFailure::new(
                FailureKind::Malformed,
                "the call block ends inside the call",
                self.end,
            )
        }
    }

    fn bad(&self, at: usize, msg: impl Into<String>) -> ParseFailure {
        ParseFailure::new(FailureKind::Malformed, msg, at)
    }

    fn ws(&mut self) {
        self.i = util::skip_ws(self.b, self.i).min(self.end);
    }

    /// `call:name{…}`.
    fn call(&mut self) -> Result<(String, Map<String, Value>), Failed> {
        let rest = &self.text[self.i..self.end];
        if !rest.starts_with(self.call) {
            if self.call.starts_with(rest) {
                return Err((None, self.eof()));
            }
            return Err((None, self.bad(self.i, "expected `call:` and a tool name")));
        }
        self.i += self.call.len();
        let name_start = self.i;
        while self.i < self.end && !matches!(self.b[self.i], b'{' | b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
        let name = self.text[name_start..self.i].to_string();
        if self.i >= self.end {
            let name = (!name.is_empty()).then_some(name);
            return Err((name, self.eof()));
        }
        if name.is_empty() {
            return Err((None, self.bad(name_start, "empty tool name after `call:`")));
        }
        if self.b[self.i] != b'{' {
            return Err((
                Some(name),
                self.bad(self.i, "expected `{` after the tool name"),
            ));
        }
        match self.value() {
            Ok(Value::Object(map)) => Ok((name, map)),
            Ok(_) => Err((
                Some(name),
                self.bad(name_start, "the arguments must be an object"),
            )),
            Err(f) => Err((Some(name), f)),
        }
    }

    /// One value, iteratively.
    fn value(&mut self) -> Result<Value, ParseFailure> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.ws();
            if self.i >= self.end {
                return Err(self.eof());
            }
            let mut v = match self.b[self.i] {
                open @ (b'{' | b'[') => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(self.bad(self.i, format!("nesting deeper than {MAX_DEPTH}")));
                    }
                    self.i += 1;
                    self.ws();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.i < self.end && self.b[self.i] == close {
                        self.i += 1;
                        if open == b'{' {
                            Value::Object(Map::new())
                        } else {
                            Value::Array(Vec::new())
                        }
                    } else if open == b'{' {
                        let key = self.key()?;
                        stack.push(Frame::Obj(Map::new(), key));
                        continue 'value;
                    } else {
                        stack.push(Frame::Arr(Vec::new()));
                        continue 'value;
                    }
                }
                _ => self.scalar()?,
            };
            // Attach `v` to its parent, closing containers as they end.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(v);
                };
                self.ws();
                if self.i >= self.end {
                    return Err(self.eof());
                }
                let c = self.b[self.i];
                match top {
                    Frame::Obj(map, key) => {
                        if map.contains_key(key.as_str()) {
                            return Err(self.bad(self.i, format!("repeated key `{key}`")));
                        }
                        map.insert(std::mem::take(key), v);
                        match c {
                            b',' => {
                                self.i += 1;
                                self.ws();
                                *key = self.key()?;
                                continue 'value;
                            }
                            b'}' => {
                                self.i += 1;
                                let Some(Frame::Obj(map, _)) = stack.pop() else {
                                    // Invariant: `top` was this object frame.
                                    return Err(self.bad(self.i, "internal: lost object frame"));
                                };
                                v = Value::Object(map);
                            }
                            _ => {
                                return Err(self.bad(
                                    self.i,
                                    format!(
                                        "expected `,` or `}}`, found {}",
                                        describe(self.text, self.i)
                                    ),
                                ));
                            }
                        }
                    }
                    Frame::Arr(items) => {
                        items.push(v);
                        match c {
                            b',' => {
                                self.i += 1;
                                continue 'value;
                            }
                            b']' => {
                                self.i += 1;
                                let Some(Frame::Arr(items)) = stack.pop() else {
                                    // Invariant: `top` was this array frame.
                                    return Err(self.bad(self.i, "internal: lost array frame"));
                                };
                                v = Value::Array(items);
                            }
                            _ => {
                                return Err(self.bad(
                                    self.i,
                                    format!(
                                        "expected `,` or `]`, found {}",
                                        describe(self.text, self.i)
                                    ),
                                ));
                            }
                        }
                    }
                }
            }
        }
    }

    /// A quoted string starting at `self.i` (which holds the quote token).
    fn quoted(&mut self) -> Result<String, ParseFailure> {
        let from = self.i + self.quote.len();
        match util::find_from(&self.text[..self.end], self.quote, from) {
            Some(close) => {
                self.i = close + self.quote.len();
                Ok(self.text[from..close].to_string())
            }
            None => Err(self.eof()),
        }
    }

    /// An object key followed by `:`.
    fn key(&mut self) -> Result<String, ParseFailure> {
        let key = if self.text[self.i..self.end].starts_with(self.quote) {
            self.quoted()?
        } else {
            let start = self.i;
            while self.i < self.end
                && !matches!(self.b[self.i], b':' | b',' | b'{' | b'}' | b'[' | b']')
            {
                self.i += 1;
            }
            if self.i >= self.end {
                return Err(self.eof());
            }
            self.text[start..self.i].trim().to_string()
        };
        self.ws();
        if self.i >= self.end {
            return Err(self.eof());
        }
        if key.is_empty() || self.b[self.i] != b':' {
            return Err(self.bad(self.i, "expected `key:`"));
        }
        self.i += 1;
        Ok(key)
    }

    /// A string, number, `true`, `false` or `null`.
    fn scalar(&mut self) -> Result<Value, ParseFailure> {
        let rest = &self.text[self.i..self.end];
        if rest.starts_with(self.quote) {
            return self.quoted().map(Value::String);
        }
        if self.quote.starts_with(rest) && rest.starts_with('<') {
            return Err(self.eof());
        }
        let start = self.i;
        while self.i < self.end && !matches!(self.b[self.i], b',' | b'}' | b']') {
            self.i += 1;
        }
        if self.i >= self.end {
            return Err(self.eof());
        }
        let word = self.text[start..self.i].trim();
        let looks_json = matches!(word, "true" | "false" | "null")
            || word
                .bytes()
                .next()
                .is_some_and(|c| c == b'-' || c.is_ascii_digit());
        match looks_json.then(|| jsonread::read_all(word, Strictness::Strict, false)) {
            Some(Ok(r)) if !r.value.is_string() => Ok(r.value),
            _ => Err(self.bad(
                start,
                format!("`{word}` is not a quoted string, number, true, false or null"),
            )),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::families::jsonlike::testutil::*;
    use crate::format::gemma::GEMMA;
    use crate::irregular::testkit::assert_stray;
    use toolgate_core::{FailureKind, Source};

    #[test]
    fn strings_numbers_and_nesting() {
        let out = r#"<|tool_call>call:complex_function{nested:{inner:<|"|>value<|"|>},list:[<|"|>a<|"|>,<|"|>b<|"|>],n:-7,f:1.5e10,t:true,z:null}<tool_call|>"#;
        assert_eq!(
            calls(&GEMMA, out),
            vec![call(
                "complex_function",
                r#"{"nested": {"inner": "value"}, "list": ["a", "b"], "n": -7, "f": 1.5e10, "t": true, "z": null}"#
            )]
        );
    }

    #[test]
    fn quoted_text_is_raw() {
        let out = r#"<|tool_call>call:f{q:<|"|>a, b} [c] "d"<|"|>}<tool_call|>"#;
        assert_eq!(
            calls(&GEMMA, out),
            vec![call("f", r#"{"q": "a, b} [c] \"d\""}"#)]
        );
    }

    #[test]
    fn parallel_blocks_and_function_gemma() {
        let out = r#"Some text <|tool_call>call:get_weather{location:<|"|>Tokyo<|"|>}<tool_call|> more text <|tool_call>call:get_time{}<tool_call|>"#;
        assert_eq!(
            calls(&GEMMA, out),
            vec![
                call("get_weather", r#"{"location": "Tokyo"}"#),
                call("get_time", "{}")
            ]
        );
        let out = "<start_function_call>call:get_weather{location:<escape>San Francisco<escape>,unit:<escape>celsius<escape>}<end_function_call>";
        assert_eq!(
            calls(&GEMMA, out),
            vec![call(
                "get_weather",
                r#"{"location": "San Francisco", "unit": "celsius"}"#
            )]
        );
    }

    #[test]
    fn cut_off_call_is_truncated_with_its_name() {
        for out in [
            r#"<|tool_call>call:get_weather{location:<|"|>London"#,
            "<|tool_call>call:get_weather{location:",
            "<|tool_call>cal",
        ] {
            assert_eq!(only_failure(&GEMMA, out), FailureKind::Truncated, "{out}");
        }
        assert_eq!(
            strict(&GEMMA, "<|tool_call>call:get_weather{")[0]
                .name
                .as_deref(),
            Some("get_weather")
        );
    }

    #[test]
    fn a_call_without_its_opener_beside_a_block_is_malformed() {
        // After a block (closed, or with no closer at all: s46) and before
        // the first block (s46): `f` ran and `g` was dropped as text.
        for (out, stray) in [
            ("<|tool_call>call:f{a:1}<tool_call|>call:g{}<tool_call|>", 1),
            ("<|tool_call>call:f{a:1}<tool_call|>\ncall:g{}", 1),
            ("call:g{}<tool_call|><|tool_call>call:f{a:1}<tool_call|>", 0),
            (
                "<start_function_call>call:f{a:1}<end_function_call>call:g{}",
                1,
            ),
        ] {
            assert_stray(&strict(&GEMMA, out), stray, ("f", Some("g")), out);
        }
        // Prose after a block, and before the next block, stays text.
        let out = "<|tool_call>call:f{a:1}<tool_call|>I will call: g next <|tool_call>call:g{}<tool_call|>";
        let c = strict(&GEMMA, out);
        assert!(c.iter().all(|c| c.call().is_some()), "{c:?}");
    }

    #[test]
    fn malformed_cases() {
        for out in [
            "<|tool_call>call:f{city:London}<tool_call|>",
            "<|tool_call>call:f{a:1,a:2}<tool_call|>",
            "<|tool_call>call:f{a:1} extra<tool_call|>",
            "<|tool_call>call:f{a:1<tool_call|>",
            "<|tool_call>get_weather{}<tool_call|>",
        ] {
            assert_eq!(only_failure(&GEMMA, out), FailureKind::Malformed, "{out}");
        }
    }

    #[test]
    fn thought_channel_is_reasoning() {
        let out = "<|channel>thought\n<|tool_call>call:a{}<tool_call|><channel|><|tool_call>call:b{}<tool_call|>";
        let found = strict(&GEMMA, out);
        assert_eq!(found[0].source, Source::OutputReasoning);
        assert_eq!(calls(&GEMMA, out), vec![call("b", "{}")]);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let out = format!(
            "<|tool_call>call:f{{a:{}1{}}}<tool_call|>",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let found = strict(&GEMMA, &out);
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn a_failed_candidates_raw_text_is_its_own_span() {
        // Issue 9 item 7: unclosed calls that fail each kept the rest of
        // the output as raw text (O(N²) bytes).
        let out = "<|tool_call>call:f{a:}\n".repeat(5_000);
        let found = strict(&GEMMA, &out);
        // Capped while scanning (the stand-in carries the true count).
        assert_eq!(found.len(), crate::rules::DEFAULT_MAX_CANDIDATES);
        assert!(
            found[998]
                .failure()
                .unwrap()
                .message
                .starts_with("5000 candidates")
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
        let raw: usize = found.iter().map(|c| c.raw.len()).sum();
        assert!(raw <= out.len(), "{raw} raw bytes for {} bytes", out.len());
        for c in &found {
            assert!(c.raw.len() <= c.span.len(), "{c:?}");
        }
    }
}
