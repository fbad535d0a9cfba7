//! `bracket`: Python-style calls in a list (seed 000's second fallback;
//! Llama 3.2/4 "pythonic", LFM2, ToolACE).
//!
//! # Wire format
//!
//! ```text
//! [get_weather(city="Antwerp", unit='celsius'), get_time(tz='UTC')]
//! ```
//!
//! LFM2 wraps the same list in `<|tool_call_start|>…<|tool_call_end|>` and
//! Llama 4 in `<|python_start|>…<|python_end|>`; the list is found wherever
//! it stands.
//!
//! Decisions (SPEC §9):
//! - a `[` followed (after optional whitespace) by an identifier (dots
//!   allowed: `functions.get`, `Calendar.create_event`) and `(` opens a
//!   candidate anywhere in the text; `[link](url)` and `[TOOL_CALLS]` do not;
//! - arguments must be named: `f("x")` is `malformed`; a repeated argument
//!   name is `malformed`;
//! - values are Python or JSON literals: strings in single, double or triple
//!   quotes with Python escapes (an unknown escape such as `\d` keeps its
//!   backslash, as Python does), numbers, `True`/`False`/`None` and
//!   `true`/`false`/`null`, lists, tuples (read as lists), dicts with string
//!   keys. Python spellings are valid here in strict mode: no repair;
//! - a trailing comma inside a call, list, tuple or dict is valid;
//! - the output ending inside the list is `truncated`;
//! - a raw newline in a single-line string is `escaping` (strict) and
//!   repaired as [`toolgate_core::Repair::RawNewlines`] (lenient);
//! - each call of the list is one candidate whose span is the call
//!   (`name(…)`) and whose raw text is the same; a failure inside call k
//!   ends the list there (calls before it stay candidates), and a broken list
//!   after complete calls (`[f(a=1) g(b=2)]`, a missing `]`) is reported on
//!   the last call.
//!
//! ```
//! use toolgate_formats::{by_name, Input, Strictness};
//! let out = r#"[get_weather(city="Antwerp"), get_time(tz='UTC')]"#;
//! let c = by_name("bracket").unwrap().extract(&Input::new(out), Strictness::Strict);
//! assert_eq!(c[1].call().unwrap().arguments["tz"], "UTC");
//! ```

use crate::Extractor;
use crate::input::{Input, Strictness};
use crate::jsonread::MAX_DEPTH;
use crate::util;
use serde_json::{Map, Value};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Repair, Span};

const MODE: &str = "bracket";

/// The `bracket` extractor.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bracket;

impl Extractor for Bracket {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"[get_weather(city="Antwerp"), get_time(tz='UTC')]"#
    }
    fn describe(&self) -> &str {
        "[name(arg=value, …), …]: Python-style calls with named arguments in a list"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| scan(text, strictness))
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The end of a dotted identifier starting at `i`, if one starts there.
fn ident_end(b: &[u8], i: usize) -> Option<usize> {
    if !b.get(i).is_some_and(|c| is_ident_start(*c)) {
        return None;
    }
    let mut j = i + 1;
    loop {
        while b.get(j).is_some_and(|c| is_ident(*c)) {
            j += 1;
        }
        if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(|c| is_ident_start(*c)) {
            j += 2;
            continue;
        }
        return Some(j);
    }
}

/// Whether the `[` at `at` opens a call list.
fn opens_list(b: &[u8], at: usize) -> bool {
    let i = util::skip_ws(b, at + 1);
    ident_end(b, i).is_some_and(|e| b.get(e) == Some(&b'('))
}

/// The first `[` at or after `pos` that opens a call list.
///
/// Found from the list's `(` rather than from every `[`: in an opener
/// `[ ws* name(` only whitespace and identifier bytes stand between the `[`
/// and the `(`, so openers' `(` come in the same order as their `[`, and
/// from a `(` the `[` is reached back over exactly the name and the
/// whitespace (the byte before the name is whitespace or the `[`, neither
/// an identifier byte). Each step back covers a run no other `(` shares,
/// so the whole search stays linear; `opens_list` then checks the opener
/// forwards as before. `(` is much rarer than `[` in prose and JSON.
fn next_opener(b: &[u8], pos: usize) -> Option<usize> {
    let mut from = pos;
    while let Some(paren) = memchr::memchr(b'(', b.get(from..)?).map(|i| from + i) {
        from = paren + 1;
        let mut j = paren;
        while j > pos && (is_ident(b[j - 1]) || b[j - 1] == b'.') {
            j -= 1;
        }
        while j > pos && matches!(b[j - 1], b' ' | b'\t' | b'\n' | b'\r') {
            j -= 1;
        }
        if j > pos && b[j - 1] == b'[' && opens_list(b, j - 1) {
            return Some(j - 1);
        }
    }
    None
}

fn scan(text: &str, strictness: Strictness) -> Vec<Candidate> {
    let b = text.as_bytes();
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    while let Some(at) = next_opener(b, pos) {
        let mut p = Py {
            text,
            b,
            pos: at + 1,
            lenient: strictness,
            repairs: Vec::new(),
        };
        let end = p.list(&mut out);
        pos = end.max(at + 1);
    }
    out.into_vec()
}

/// One Python (or JSON) literal at `start` of `text`, by the rules of the
/// module docs: its value, where it ends, and the repairs the lenient reader
/// used. The pythonic engine's literal reader, shared with formats whose
/// payload is a Python literal (Sarashina's list of call dicts). Ending
/// inside the literal is `truncated` at the end of `text`.
pub(crate) fn literal(
    text: &str,
    start: usize,
    strictness: Strictness,
) -> Result<(Value, usize, Vec<Repair>), ParseFailure> {
    let mut p = Py {
        text,
        b: text.as_bytes(),
        pos: start,
        lenient: strictness,
        repairs: Vec::new(),
    };
    let v = p.value(0)?;
    Ok((v, p.pos, p.repairs))
}

struct Py<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    lenient: Strictness,
    repairs: Vec<Repair>,
}

type PResult<T> = Result<T, ParseFailure>;

impl<'a> Py<'a> {
    fn eof(&self) -> ParseFailure {
        ParseFailure::new(
            FailureKind::Truncated,
            "output ends inside the call list",
            self.b.len(),
        )
    }

    fn malformed(&self, msg: impl Into<String>, at: usize) -> ParseFailure {
        ParseFailure::new(FailureKind::Malformed, msg, at)
    }

    fn ws(&mut self) {
        self.pos = util::skip_ws(self.b, self.pos);
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn describe(&self) -> String {
        match self.text.get(self.pos..).and_then(|t| t.chars().next()) {
            Some(c) if c.is_control() => format!("character U+{:04X}", c as u32),
            Some(c) => format!("`{c}`"),
            None => "end of text".into(),
        }
    }

    /// The list after its `[`; pushes one candidate per call and returns
    /// where scanning resumes.
    fn list(&mut self, out: &mut crate::cap::Found) -> usize {
        let first_new = out.total();
        loop {
            self.ws();
            let start = self.pos;
            let name_end = ident_end(self.b, start);
            let Some(name_end) = name_end else {
                let f = if self.peek().is_none() {
                    self.eof()
                } else {
                    self.malformed(format!("expected a call, found {}", self.describe()), start)
                };
                return self.structural(out, first_new, f);
            };
            let name = self.text[start..name_end].to_string();
            self.pos = name_end;
            self.ws();
            if self.peek() != Some(b'(') {
                let f = if self.peek().is_none() {
                    self.eof()
                } else {
                    self.malformed(
                        format!("expected `(` after `{name}`, found {}", self.describe()),
                        self.pos,
                    )
                };
                return self.structural(out, first_new, f);
            }
            self.pos += 1;
            self.repairs.clear();
            match self.args() {
                Ok(args) => {
                    let span = Span::new(start, self.pos);
                    out.push(util::candidate(
                        MODE,
                        span,
                        &self.text[start..self.pos],
                        Some(name),
                        Ok(args),
                        std::mem::take(&mut self.repairs),
                    ));
                }
                Err(f) => {
                    let end = if f.kind == FailureKind::Truncated {
                        self.b.len()
                    } else {
                        f.offset.max(start + 1)
                    };
                    let end = end.min(self.b.len());
                    let resume = end.max(f.offset);
                    let end = floor_char_boundary(self.text, end);
                    out.push(util::candidate(
                        MODE,
                        Span::new(start, end),
                        &self.text[start..end],
                        Some(name),
                        Err(f),
                        Vec::new(),
                    ));
                    return resume;
                }
            }
            self.ws();
            match self.peek() {
                None => {
                    let f = self.eof();
                    return self.structural(out, first_new, f);
                }
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        return self.pos;
                    }
                }
                Some(b']') => {
                    self.pos += 1;
                    return self.pos;
                }
                Some(_) => {
                    let f = self.malformed(
                        format!(
                            "expected `,` or `]` in the call list, found {}",
                            self.describe()
                        ),
                        self.pos,
                    );
                    return self.structural(out, first_new, f);
                }
            }
        }
    }

    /// A broken list around complete calls: reported on the last call of
    /// this list, or as a candidate of its own when there is none.
    fn structural(
        &mut self,
        out: &mut crate::cap::Found,
        first_new: usize,
        f: ParseFailure,
    ) -> usize {
        let resume = self.pos.max(f.offset).min(self.b.len());
        if out.total() > first_new
            && let Some(last) = out.last_mut()
        {
            if f.kind == FailureKind::Truncated {
                last.span.end = self.b.len();
            }
            last.arguments = Err(f);
            last.repairs.clear();
        }
        resume.max(self.pos)
    }

    /// Named arguments after `(`, through `)`.
    fn args(&mut self) -> PResult<Map<String, Value>> {
        let mut map = Map::new();
        loop {
            self.ws();
            match self.peek() {
                None => return Err(self.eof()),
                Some(b')') => {
                    self.pos += 1;
                    return Ok(map);
                }
                _ => {}
            }
            let start = self.pos;
            let key = match ident_end(self.b, start) {
                Some(e) if !self.text[start..e].contains('.') => {
                    let after = util::skip_ws(self.b, e);
                    match self.b.get(after) {
                        Some(b'=') if self.b.get(after + 1) != Some(&b'=') => {
                            self.pos = after + 1;
                            Some(self.text[start..e].to_string())
                        }
                        None => return Err(self.eof()),
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some(key) = key else {
                // Read the value anyway to tell truncation from a positional argument.
                self.value(0)?;
                return Err(self.malformed(
                    "arguments must be named (`name=value`): positional argument",
                    start,
                ));
            };
            let value = self.value(0)?;
            if map.contains_key(&key) {
                return Err(self.malformed(format!("argument `{key}` is given twice"), start));
            }
            map.insert(key, value);
            self.ws();
            match self.peek() {
                None => return Err(self.eof()),
                Some(b',') => self.pos += 1,
                Some(b')') => {
                    self.pos += 1;
                    return Ok(map);
                }
                Some(_) => {
                    return Err(self.malformed(
                        format!(
                            "expected `,` or `)` after an argument, found {}",
                            self.describe()
                        ),
                        self.pos,
                    ));
                }
            }
        }
    }

    /// One literal (recursion bounded by [`MAX_DEPTH`]).
    fn value(&mut self, depth: usize) -> PResult<Value> {
        self.ws();
        let start = self.pos;
        if depth >= MAX_DEPTH {
            return Err(self.malformed(format!("nesting deeper than {MAX_DEPTH} levels"), start));
        }
        match self.peek() {
            None => Err(self.eof()),
            Some(q @ (b'"' | b'\'')) => self.string(q).map(Value::String),
            Some(b'[') => {
                self.pos += 1;
                self.seq(b']', depth).map(Value::Array)
            }
            Some(b'(') => {
                self.pos += 1;
                self.seq(b')', depth).map(Value::Array)
            }
            Some(b'{') => {
                self.pos += 1;
                self.dict(depth).map(Value::Object)
            }
            Some(b'-' | b'+' | b'.' | b'0'..=b'9') => self.number(),
            Some(c) if is_ident_start(c) => {
                let end = ident_end(self.b, start).unwrap_or(start + 1);
                let word = &self.text[start..end];
                let v = match word {
                    "True" | "true" => Value::Bool(true),
                    "False" | "false" => Value::Bool(false),
                    "None" | "null" => Value::Null,
                    _ => {
                        if end == self.b.len()
                            && ["True", "False", "None", "true", "false", "null"]
                                .iter()
                                .any(|l| l.starts_with(word))
                        {
                            return Err(self.eof());
                        }
                        return Err(self.malformed(
                            format!("`{word}` is not a literal (a name or an expression)"),
                            start,
                        ));
                    }
                };
                self.pos = end;
                Ok(v)
            }
            Some(_) => Err(self.malformed(
                format!("expected a literal value, found {}", self.describe()),
                start,
            )),
        }
    }

    /// Items until `close` (a list or a tuple); trailing comma allowed.
    fn seq(&mut self, close: u8, depth: usize) -> PResult<Vec<Value>> {
        let mut items = Vec::new();
        loop {
            self.ws();
            match self.peek() {
                None => return Err(self.eof()),
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                _ => {}
            }
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.peek() {
                None => return Err(self.eof()),
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(_) => {
                    return Err(self.malformed(
                        format!(
                            "expected `,` or `{}`, found {}",
                            close as char,
                            self.describe()
                        ),
                        self.pos,
                    ));
                }
            }
        }
    }

    /// A dict after `{`, with string keys; trailing comma allowed.
    fn dict(&mut self, depth: usize) -> PResult<Map<String, Value>> {
        let mut map = Map::new();
        loop {
            self.ws();
            let start = self.pos;
            let key = match self.peek() {
                None => return Err(self.eof()),
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(map);
                }
                Some(q @ (b'"' | b'\'')) => self.string(q)?,
                Some(_) => {
                    return Err(self.malformed(
                        format!("dict keys must be strings, found {}", self.describe()),
                        start,
                    ));
                }
            };
            self.ws();
            match self.peek() {
                None => return Err(self.eof()),
                Some(b':') => self.pos += 1,
                Some(_) => {
                    return Err(self.malformed(
                        format!("expected `:` after a dict key, found {}", self.describe()),
                        self.pos,
                    ));
                }
            }
            let v = self.value(depth + 1)?;
            if map.contains_key(&key) {
                return Err(self.malformed(format!("duplicate key `{key}`"), start));
            }
            map.insert(key, v);
            self.ws();
            match self.peek() {
                None => return Err(self.eof()),
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(map);
                }
                Some(_) => {
                    return Err(self.malformed(
                        format!("expected `,` or `}}`, found {}", self.describe()),
                        self.pos,
                    ));
                }
            }
        }
    }

    /// A Python int or float (underscores allowed), or a JSON number.
    fn number(&mut self) -> PResult<Value> {
        let start = self.pos;
        let b = self.b;
        let mut i = start;
        if let Some(b'-' | b'+') = b.get(i) {
            i += 1;
        }
        let digits = |i: &mut usize| {
            let s = *i;
            while b.get(*i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
                *i += 1;
            }
            *i > s
        };
        let int_digits = digits(&mut i);
        let mut float = false;
        let mut frac_digits = false;
        if b.get(i) == Some(&b'.') {
            float = true;
            i += 1;
            frac_digits = digits(&mut i);
        }
        if !int_digits && !frac_digits {
            if i >= b.len() {
                return Err(self.eof());
            }
            return Err(self.malformed("expected a number", start));
        }
        if let Some(b'e' | b'E') = b.get(i) {
            float = true;
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            if !digits(&mut i) {
                if i >= b.len() {
                    return Err(self.eof());
                }
                return Err(self.malformed("expected a digit in the exponent", i));
            }
        }
        if b.get(i).is_some_and(|c| is_ident(*c)) {
            return Err(self.malformed(
                "not a number literal this mode reads (hex, complex, suffix)",
                start,
            ));
        }
        self.pos = i;
        let s: String = self.text[start..i]
            .chars()
            .filter(|c| *c != '_' && *c != '+')
            .collect();
        if !float {
            if let Ok(n) = s.parse::<i64>() {
                return Ok(Value::Number(n.into()));
            }
            if let Ok(n) = s.parse::<u64>() {
                return Ok(Value::Number(n.into()));
            }
            // As in jsonread: never pass on a rounded integer.
            return Err(self.malformed(
                format!("integer `{s}` does not fit in 64 bits and cannot be passed on exactly"),
                start,
            ));
        }
        match crate::jsonread::exact_f64(&s) {
            Ok(n) => Ok(Value::Number(n)),
            Err(msg) => Err(self.malformed(msg, start)),
        }
    }

    /// A Python string (single, double or triple quoted) with Python escapes.
    fn string(&mut self, q: u8) -> PResult<String> {
        let b = self.b;
        let triple = b.get(self.pos + 1) == Some(&q) && b.get(self.pos + 2) == Some(&q);
        self.pos += if triple { 3 } else { 1 };
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            // Skip to the next byte the loop acts on (the quote, a
            // backslash or a line break); every other byte only advances.
            let rest = &b[self.pos.min(b.len())..];
            let special = memchr::memchr3(q, b'\\', b'\n', rest).unwrap_or(rest.len());
            let special = memchr::memchr(b'\r', &rest[..special]).unwrap_or(special);
            self.pos += special;
            let Some(c) = self.peek() else {
                return Err(self.eof());
            };
            if c == q {
                if !triple {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                if b.get(self.pos + 1) == Some(&q) && b.get(self.pos + 2) == Some(&q) {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 3;
                    return Ok(out);
                }
                self.pos += 1;
                continue;
            }
            match c {
                b'\\' => {
                    out.push_str(&self.text[run..self.pos]);
                    self.escape(&mut out)?;
                    run = self.pos;
                }
                b'\n' | b'\r' if !triple => {
                    if !self.lenient.is_lenient() {
                        return Err(ParseFailure::new(
                            FailureKind::Escaping,
                            "raw line break inside a single-line string",
                            self.pos,
                        ));
                    }
                    if !self.repairs.contains(&Repair::RawNewlines) {
                        self.repairs.push(Repair::RawNewlines);
                    }
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// A Python escape, decoded as Python's string literals are (probe 44:
    /// `\033` was NUL + `33`, `\101` kept its backslash and `\/` lost it);
    /// the reader stands on the backslash. `\N{NAME}` needs the Unicode
    /// name table, which this reader does not carry: `escaping`, never a
    /// value the model did not write.
    fn escape(&mut self, out: &mut String) -> PResult<()> {
        let at = self.pos;
        let Some(&c) = self.b.get(at + 1) else {
            return Err(self.eof());
        };
        let simple = match c {
            b'\\' => Some('\\'),
            b'\'' => Some('\''),
            b'"' => Some('"'),
            b'n' => Some('\n'),
            b't' => Some('\t'),
            b'r' => Some('\r'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'v' => Some('\u{b}'),
            b'a' => Some('\u{7}'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            self.pos = at + 2;
            return Ok(());
        }
        match c {
            b'0'..=b'7' => {
                // Octal: one to three digits (`\0`, `\12`, `\033`); at most
                // 0o777, always a char.
                let digits = self.b[at + 1..]
                    .iter()
                    .take(3)
                    .take_while(|d| matches!(d, b'0'..=b'7'))
                    .fold((0u32, 0usize), |(v, n), d| {
                        (v * 8 + u32::from(d - b'0'), n + 1)
                    });
                let (value, n) = digits;
                // Invariant: at most 0o777 = 511, a valid scalar value.
                let ch = char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER);
                out.push(ch);
                self.pos = at + 1 + n;
                Ok(())
            }
            b'N' => Err(ParseFailure::new(
                FailureKind::Escaping,
                "a \\N{…} escape (a Unicode character name) is not decoded here",
                at,
            )),
            b'\n' => {
                // A line continuation.
                self.pos = at + 2;
                Ok(())
            }
            b'x' | b'u' | b'U' => {
                let n = match c {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let digits = self.b.get(at + 2..at + 2 + n);
                let Some(digits) = digits else {
                    if self.b[at + 2..].iter().all(u8::is_ascii_hexdigit) {
                        return Err(self.eof());
                    }
                    return Err(ParseFailure::new(
                        FailureKind::Escaping,
                        "truncated \\x/\\u escape",
                        at,
                    ));
                };
                let cp = std::str::from_utf8(digits)
                    .ok()
                    .filter(|d| d.bytes().all(|c| c.is_ascii_hexdigit()))
                    .and_then(|d| u32::from_str_radix(d, 16).ok());
                match cp.and_then(char::from_u32) {
                    Some(ch) => {
                        out.push(ch);
                        self.pos = at + 2 + n;
                        Ok(())
                    }
                    None => Err(ParseFailure::new(
                        FailureKind::Escaping,
                        "invalid \\x/\\u escape",
                        at,
                    )),
                }
            }
            _ => {
                // Python keeps an unknown escape as written.
                out.push('\\');
                self.pos = at + 1;
                Ok(())
            }
        }
    }
}

/// The largest char boundary ≤ `i`.
fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::irregular::testkit::*;
    use serde_json::json;
    use toolgate_core::Source;

    #[test]
    fn openers_found_from_parens_are_the_openers_found_from_brackets() {
        // The search before `next_opener`: every `[` tried in order.
        fn naive(b: &[u8], pos: usize) -> Option<usize> {
            (pos..b.len()).find(|&at| b[at] == b'[' && opens_list(b, at))
        }
        let pieces = [
            "[", "(", " ", "\n", "f", "get.x", "_a9", ".", "9", "]", ")", "[f(", "é", "x < y",
            "[1, 2]", "[ \t f (", "a.(", "[.f(",
        ];
        let mut rng = toolgate_testkit::generate::Rng::new(0x2545_f491_4f6c_dd1d);
        for _ in 0..5000 {
            let mut text = String::new();
            for _ in 0..12 {
                text.push_str(pieces[rng.below(pieces.len())]);
            }
            let b = text.as_bytes();
            for pos in 0..=b.len() {
                assert_eq!(next_opener(b, pos), naive(b, pos), "{text:?} from {pos}");
            }
        }
    }

    #[test]
    fn integers_beyond_64_bits_fail_closed() {
        let c = strict(&Bracket, "[seek(offset=18446744073709551617)]");
        let failure = c[0].failure().unwrap();
        assert_eq!(failure.kind, FailureKind::Malformed);
        assert_eq!(failure.offset, 13);
        let c = strict(&Bracket, "[seek(offset=18446744073709551615)]");
        assert_eq!(c[0].call().unwrap().arguments["offset"], u64::MAX);
    }

    #[test]
    fn floats_that_would_round_fail_closed() {
        for text in [
            "[pay(amount=1.9999999999999999)]",
            "[pay(amount=1_000.000_000_000_000_000_1)]",
            "[pay(amount=1e-400)]",
        ] {
            let c = strict(&Bracket, text);
            let failure = c[0].failure().unwrap();
            assert_eq!(failure.kind, FailureKind::Malformed, "{text}");
            assert!(failure.message.contains("cannot be passed on exactly"));
        }
        let c = strict(&Bracket, "[pay(amount=1_000.5, r=.5, s=5.)]");
        let args = &c[0].call().unwrap().arguments;
        assert_eq!(
            (args["amount"].as_f64(), args["r"].as_f64()),
            (Some(1000.5), Some(0.5))
        );
        assert_eq!(args["s"].as_f64(), Some(5.0));
    }

    #[test]
    fn one_and_parallel_calls() {
        let c = strict(&Bracket, r#"[get_weather(city="Antwerp")]"#);
        assert_eq!(
            c[0].call().unwrap().to_json(),
            json!({"name": "get_weather", "arguments": {"city": "Antwerp"}})
        );
        assert_eq!(c[0].span, Span::new(1, 28));
        let c = strict(
            &Bracket,
            "[get_weather(city='LA',metric='C'),register_user(name='Doe',age=9)]",
        );
        assert_eq!(names(&c), ["get_weather", "register_user"]);
        assert_eq!(c[1].call().unwrap().arguments["age"], 9);
    }

    #[test]
    fn python_and_json_literals_are_valid_strictly() {
        let out = "[register_user(name='John Doe', age=37, address={'city': 'SF', \"state\": \"CA\"}, role=None, passed_test=True, ok=false, n=null, aliases=['John', 'Johnny'], pair=(1, 2.5), big=1_000, neg=-3e2,)]";
        let c = strict(&Bracket, out);
        assert!(c[0].repairs.is_empty());
        assert_eq!(
            serde_json::Value::Object(std::sync::Arc::unwrap_or_clone(
                c[0].call().unwrap().arguments
            )),
            json!({"name": "John Doe", "age": 37, "address": {"city": "SF", "state": "CA"}, "role": null,
                   "passed_test": true, "ok": false, "n": null, "aliases": ["John", "Johnny"],
                   "pair": [1, 2.5], "big": 1000, "neg": -300.0})
        );
    }

    #[test]
    fn python_string_escapes_and_triple_quotes() {
        let out = r#"[get_weather(city='Martha\'s Vineyard', metric='\"cool units\"', re='\d+', doc="""a
b""")]"#;
        let a = strict(&Bracket, out)[0].call().unwrap().arguments;
        assert_eq!(a["city"], "Martha's Vineyard");
        assert_eq!(a["metric"], "\"cool units\"");
        assert_eq!(a["re"], "\\d+");
        assert_eq!(a["doc"], "a\nb");
    }

    #[test]
    fn python_escapes_decode_as_python_s_literal_eval() {
        // Probe 44: `\033` was NUL + "33", `\101` and `\12` kept their
        // backslash and `\/` lost it. Expected values are what
        // `python3 -c 'import ast; print(repr(ast.literal_eval(...)))'`
        // gives for each string literal.
        let cases = [
            // '\x1b[0m A \n \\/ \\d'
            (r"'\033[0m \101 \12 \/ \d'", "\u{1b}[0m A \n \\/ \\d"),
            // '\x00 \x00 \x000 ǿ \x018 \x07\x08\x0c\x0bAé😀'
            (
                r"'\0 \00 \0000 \777 \18 \a\b\f\v\x41\u00e9\U0001F600'",
                "\0 \0 \u{0}0 \u{1ff} \u{1}8 \u{7}\u{8}\u{c}\u{b}A\u{e9}\u{1f600}",
            ),
            // '\\ \' " \\d'
            (r#"'\\ \x27 \" \d'"#, "\\ ' \" \\d"),
        ];
        // Every pythonic reader shares this literal reader.
        let rows = [
            ("bracket", "[", "]"),
            ("llama4_pythonic", "<|python_start|>[", "]<|python_end|>"),
            ("lfm2", "<|tool_call_start|>[", "]<|tool_call_end|>"),
            ("olmo", "<function_calls>", "</function_calls>"),
        ];
        for (mode, open, close) in rows {
            let e = crate::by_name(mode).unwrap();
            for (literal, want) in cases {
                let out = format!("{open}f(s={literal}){close}");
                let c = strict(e.as_ref(), &out);
                assert_eq!(c[0].call().unwrap().arguments["s"], want, "{mode}: {out}");
            }
            // `\N{NAME}` is not resolved here (no Unicode name table): a
            // failure, never the text with its backslash kept.
            let out = format!(r"{open}f(s='\N{{BULLET}}'){close}");
            let f = strict(e.as_ref(), &out)[0].failure().unwrap().clone();
            let at = open.len() + "f(s='".len();
            assert_eq!((f.kind, f.offset), (FailureKind::Escaping, at), "{mode}");
        }
    }

    #[test]
    fn dotted_names_and_empty_arguments() {
        let c = strict(
            &Bracket,
            "[Calendar.create_event(title=\"demo\"), get_time()]",
        );
        assert_eq!(names(&c), ["Calendar.create_event", "get_time"]);
        assert!(c[1].call().unwrap().arguments.is_empty());
    }

    #[test]
    fn trailing_commas_inside_a_call_and_the_list_are_valid() {
        let c = strict(&Bracket, "[f(a=1,), g(b=[1, 2,], c={'k': 1,},),]");
        assert_eq!(names(&c), ["f", "g"]);
        assert!(c.iter().all(|c| c.repairs.is_empty()));
    }

    #[test]
    fn positional_argument_is_malformed() {
        let c = strict(&Bracket, r#"[f("x")]"#);
        assert_eq!(only_failure(&c), (FailureKind::Malformed, 3));
        assert_eq!(c[0].name.as_deref(), Some("f"));
    }

    #[test]
    fn output_ending_inside_the_list_is_truncated() {
        for out in [
            "[special_function(arg1=",
            "[f(a=1), g(b='x",
            "[f(a=1)",
            "[f(a=1),",
            "[f(a=[1, 2",
        ] {
            let c = strict(&Bracket, out);
            let f = c.last().unwrap().failure().unwrap();
            assert_eq!(
                (f.kind, f.offset),
                (FailureKind::Truncated, out.len()),
                "{out}"
            );
        }
        let c = strict(&Bracket, "[f(a=1), g(b='x");
        assert_eq!(
            c.iter()
                .map(|c| c.name.clone().unwrap())
                .collect::<Vec<_>>(),
            ["f", "g"]
        );
        assert!(c[0].call().is_some());
    }

    #[test]
    fn raw_newline_in_a_string_is_escaping_strict_repaired_lenient() {
        let out = "[f(a='x\ny')]";
        assert_eq!(
            only_failure(&strict(&Bracket, out)),
            (FailureKind::Escaping, 7)
        );
        let c = lenient(&Bracket, out);
        assert_eq!(c[0].call().unwrap().arguments["a"], "x\ny");
        assert_eq!(c[0].repairs, vec![Repair::RawNewlines]);
    }

    #[test]
    fn not_lists_of_calls() {
        assert!(strict(&Bracket, "Use this format: [link text](url). Example: [Wikipedia](https://www.wikipedia.org).").is_empty());
        assert!(strict(&Bracket, "[TOOL_CALLS][{\"name\": \"f\"}] and [1, 2]").is_empty());
    }

    #[test]
    fn found_anywhere_and_wrapped_in_tokens() {
        let out =
            "Let me check. <|tool_call_start|>[get_time(city=\"Paris\")]<|tool_call_end|>\nDone.";
        assert_eq!(names(&strict(&Bracket, out)), ["get_time"]);
    }

    #[test]
    fn broken_list_is_reported_on_the_last_call() {
        let c = strict(&Bracket, "[f(a=1) g(b=2)]");
        assert_eq!(only_failure(&c), (FailureKind::Malformed, 8));
        let c = strict(&Bracket, "[f(a=b)]");
        assert_eq!(only_failure(&c).0, FailureKind::Malformed);
        let c = strict(&Bracket, "[f(a=1, a=2)]");
        assert_eq!(only_failure(&c).0, FailureKind::Malformed);
    }

    #[test]
    fn reasoning_lists_are_reported_as_reasoning() {
        let out = "<think>Let me think about [f(a=1)] hmm</think>[f(a=2)]";
        let c = strict(&Bracket, out);
        assert_eq!(
            c.iter().map(|c| c.source).collect::<Vec<_>>(),
            [Source::OutputReasoning, Source::Output]
        );
        // The template opened reasoning: text before a lone `</think>`.
        let c = strict(&Bracket, "I could call [f(a=1)]\n</think>\nNo call needed.");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source, Source::OutputReasoning);
    }

    #[test]
    fn deep_nesting_is_malformed_not_a_stack_overflow() {
        let out = format!("[f(a={})]", "[".repeat(100_000));
        assert_eq!(
            only_failure(&strict(&Bracket, &out)).0,
            FailureKind::Malformed
        );
    }
}
