//! A hand-written JSON cursor: the first reader of the usual answer
//! (`check::hand`, before `check::fast`, serde's borrowed pass) and of a
//! request's top-level fields (`request::scan`, before serde's). It checks
//! each byte as serde_json would (strings, escapes, surrogate pairs,
//! numbers, literals, nesting, a key given twice, the node budget) and
//! gives up (`None`) on anything it does not read exactly as serde_json
//! reads it: keys with escapes, the raw-value token, numbers with an
//! exponent, nesting past [`MAX_DEPTH`]. Its callers leave what it gives up
//! on to serde's pass, which leaves what it does not take to the full read:
//! giving up is always safe, it costs time, never a decision.

use super::checked::{RAW_VALUE_TOKEN, Seen};
use std::borrow::Cow;

/// The deepest nesting read here (serde_json's limit is 128).
const MAX_DEPTH: usize = 32;

/// The end of the run of string bytes at `from` that stand for
/// themselves: the index of the first quote, backslash or control
/// character (`b.len()` when none). The first [`SHORT`] bytes are looked
/// at one by one through a table (keys and most values end there); past
/// them the quote or backslash is searched for (SIMD), and the run before
/// it checked for a control character without a branch per byte.
#[inline]
fn run_end(b: &[u8], from: usize) -> usize {
    let rest = b.get(from..).unwrap_or_default();
    for (n, &c) in rest.iter().take(SHORT).enumerate() {
        if STOPS[usize::from(c)] {
            return from + n;
        }
    }
    if rest.len() <= SHORT {
        return b.len();
    }
    let stop = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
    let run = rest.get(..stop).unwrap_or_default();
    // `fold`, not `any`: no early exit, so the compiler checks 16 bytes
    // at a time.
    if run.iter().fold(false, |m, &c| m | (c < 0x20)) {
        // Rare (serde_json refuses the text): find the first one.
        return from + run.iter().position(|&c| c < 0x20).unwrap_or(stop);
    }
    from + stop
}

/// The index just past the bracket that closes the list or object
/// opening at `start`, brackets inside strings not counted; `None` when
/// it does not close. Delimits, does not check (linear, no recursion).
fn container_end(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    loop {
        // The next quote, bracket or brace.
        let at = i + b
            .get(i..)?
            .iter()
            .position(|&c| matches!(c, b'"' | b'[' | b']' | b'{' | b'}'))?;
        match b.get(at)? {
            b'"' => {
                // Past the string: its closing quote is the first one not
                // escaped by an odd run of backslashes.
                let mut j = at + 1;
                loop {
                    let q = j + memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
                    if b.get(q)? == &b'"' {
                        i = q + 1;
                        break;
                    }
                    j = q + 2;
                }
            }
            b'[' | b'{' => {
                depth += 1;
                i = at + 1;
            }
            _ => {
                depth = depth.checked_sub(1)?;
                i = at + 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
    }
}

/// How many bytes [`run_end`] looks at one by one before it searches.
const SHORT: usize = 24;

/// The bytes that end a run of a string: quote, backslash, controls.
static STOPS: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// A position in the text and the node budget left.
pub(crate) struct Cur<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    left: usize,
}

/// What a string or null read as text holds.
pub(crate) type Text<'a> = Option<Cow<'a, str>>;

impl<'a> Cur<'a> {
    /// A cursor at the start of `text`, with a budget of `max_nodes` JSON
    /// values.
    pub(crate) fn new(text: &'a str, max_nodes: usize) -> Cur<'a> {
        Cur {
            text,
            b: text.as_bytes(),
            i: 0,
            left: max_nodes,
        }
    }

    /// The budget left once the text is read to its end (whitespace only
    /// after the value); `None` when more follows.
    pub(crate) fn end(mut self) -> Option<usize> {
        self.ws();
        (self.i == self.b.len()).then_some(self.left)
    }

    /// Skips JSON whitespace.
    #[inline]
    pub(crate) fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// Consumes byte `c` after whitespace.
    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// Counts one value or key against the budget.
    #[inline]
    fn node(&mut self) -> Option<()> {
        self.left = self.left.checked_sub(1)?;
        Some(())
    }

    /// The members of an object (the cursor at its `{`), each key handed
    /// to `each` with the cursor at its value, which `each` must read.
    /// Counts the object and its keys; not taken: a key with an escape,
    /// the raw-value token, a key given twice.
    pub(crate) fn object(
        &mut self,
        mut each: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        self.node()?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        let mut seen = Seen::default();
        loop {
            let k = self.key()?;
            if k == RAW_VALUE_TOKEN {
                return None;
            }
            seen.insert::<serde_json::Error>(Cow::Borrowed(k)).ok()?;
            self.node()?;
            self.eat(b':')?;
            each(self, k)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The elements of an array (the cursor at its `[`), each read by
    /// `each`. Counts the array.
    pub(crate) fn array(&mut self, mut each: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        self.node()?;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            each(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A key without escapes, borrowed.
    fn key(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let end = run_end(self.b, start);
        if *self.b.get(end)? != b'"' {
            return None;
        }
        self.i = end + 1;
        // Both ends are ASCII quotes of valid UTF-8: char boundaries.
        self.text.get(start..end)
    }

    /// A string (the cursor at its quote, counted), borrowed when it has
    /// no escape, decoded as serde_json decodes it otherwise.
    pub(crate) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.string_as::<true>()
    }

    /// A string checked and counted, not decoded.
    fn string_skipped(&mut self) -> Option<()> {
        self.string_as::<false>().map(drop)
    }

    /// [`Self::string`]; without `BUILD`, the escapes are checked and
    /// nothing is built (an empty string stands for the text).
    fn string_as<const BUILD: bool>(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        self.node()?;
        let start = self.i;
        let mut i = run_end(self.b, start);
        if *self.b.get(i)? == b'"' {
            self.i = i + 1;
            return self.text.get(start..i).map(Cow::Borrowed);
        }
        let mut out = String::new();
        if BUILD {
            out.reserve(i - start + 16);
            out.push_str(self.text.get(start..i)?);
        }
        loop {
            let c = *self.b.get(i)?;
            match c {
                b'"' => {
                    self.i = i + 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    let e = *self.b.get(i + 1)?;
                    i += 2;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4(i)?;
                            i += 4;
                            let ch = match hi {
                                0xD800..=0xDBFF => {
                                    if self.b.get(i..i + 2)? != b"\\u" {
                                        return None;
                                    }
                                    let lo = self.hex4(i + 2)?;
                                    if !(0xDC00..=0xDFFF).contains(&lo) {
                                        return None;
                                    }
                                    i += 6;
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                }
                                0xDC00..=0xDFFF => return None,
                                _ => hi,
                            };
                            char::from_u32(ch)?
                        }
                        _ => return None,
                    };
                    if BUILD {
                        out.push(ch);
                    }
                }
                c if c < 0x20 => return None,
                _ => {
                    let run = i;
                    i = run_end(self.b, i);
                    if BUILD {
                        out.push_str(self.text.get(run..i)?);
                    }
                }
            }
        }
    }

    /// Four hex digits at `at`.
    fn hex4(&self, at: usize) -> Option<u32> {
        let h = self.b.get(at..at + 4)?;
        let mut v = 0u32;
        for &d in h {
            v = v * 16 + char::from(d).to_digit(16)?;
        }
        Some(v)
    }

    /// A string or null, counted; anything else is not taken here.
    pub(crate) fn text_or_null(&mut self) -> Option<Text<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Some),
            b'n' => self.literal(b"null").map(|()| None),
            _ => None,
        }
    }

    /// `word` (`true`, `false`, `null`), counted.
    pub(crate) fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.ws();
        if self.b.get(self.i..self.i + word.len())? != word {
            return None;
        }
        self.i += word.len();
        self.node()
    }

    /// A number as JSON writes one, counted; one with an exponent is not
    /// taken here (serde_json refuses those out of a float's range).
    /// Returns its digits when it is a whole number ≥ 0.
    fn number(&mut self) -> Option<Option<&'a str>> {
        self.ws();
        self.node()?;
        let negative = self.b.get(self.i) == Some(&b'-');
        if negative {
            self.i += 1;
        }
        let digits = self.i;
        match self.b.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
                    self.i += 1;
                }
            }
            _ => return None,
        }
        let whole = !negative;
        let end_whole = self.i;
        let mut fraction = false;
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            let from = self.i;
            while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
                self.i += 1;
            }
            if self.i == from {
                return None;
            }
            fraction = true;
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            return None;
        }
        Some(
            (whole && !fraction)
                .then(|| self.text.get(digits..end_whole))
                .flatten(),
        )
    }

    /// A whole number ≥ 0 that fits a `u64` (`None`: anything else).
    pub(crate) fn u64(&mut self) -> Option<u64> {
        let digits = self.number()??;
        // At most 19 digits always fit; more are left to serde.
        if digits.len() > 19 {
            return None;
        }
        digits.parse().ok()
    }

    /// Any value, checked and counted; a key given twice in one of its
    /// objects, or nesting past [`MAX_DEPTH`], is not taken here. `look`:
    /// the value of a key its level does not know, which must not be a
    /// container (the serde pass looks inside those for a call).
    pub(crate) fn skip(&mut self, depth: usize, look: bool) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string_skipped(),
            b'{' if !look => self.object(|c, _| c.skip(depth + 1, false)),
            b'[' if !look => self.array(|c| c.skip(depth + 1, false)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            _ => None,
        }
    }

    /// The text of `tools` or `functions`, not counted. A list or object
    /// is only delimited (its brackets matched outside strings), not
    /// checked: its text is only used to find an allowlist read before
    /// from the same bytes, which parsed then, and a JSON list or object
    /// ends at its own closing bracket, so the parse that took those bytes
    /// reads exactly them here too; bytes not read before go to the full
    /// read, which checks them (`request::read`). Anything else is
    /// checked as [`Self::skip`] checks it.
    pub(crate) fn raw(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.i;
        if let Some(b'[' | b'{') = self.b.get(start) {
            self.i = container_end(self.b, start)?;
        } else {
            let left = self.left;
            self.left = usize::MAX;
            self.skip(0, false)?;
            self.left = left;
        }
        self.text.get(start..self.i)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The run ends at the first quote, backslash or control character,
    /// before, at and past the bytes looked at one by one.
    #[test]
    fn a_run_ends_at_the_first_byte_that_stands_for_more() {
        for len in 0..80 {
            let plain = "é".repeat(len / 2) + &"a".repeat(len % 2);
            let n = plain.len();
            assert_eq!(run_end(plain.as_bytes(), 0), n);
            for stop in ['"', '\\', '\n', '\u{0}', '\u{1f}'] {
                for at in [0, n / 2, n] {
                    // `at` on a character boundary: 'é' is two bytes.
                    let at = at - at % 2;
                    let mut t = plain.clone();
                    t.insert(at, stop);
                    t.push('"');
                    assert_eq!(run_end(t.as_bytes(), 0), at, "{t:?}");
                }
            }
        }
        assert_eq!(run_end(b"ab", 5), 2);
    }

    /// A list or object is delimited by its brackets outside strings,
    /// escaped quotes and all; one that does not close is not delimited.
    #[test]
    fn a_container_ends_at_its_own_bracket() {
        for (text, end) in [
            ("[]", Some(2)),
            ("{} x", Some(2)),
            (r#"[{"a": "]}\"]"}, [1]] ,"#, Some(21)),
            (r#"["\\"] "#, Some(6)),
            (r#"{"a": ["}"]}]"#, Some(12)),
            ("[[]", None),
            (r#"["]"#, None),
            (r#"["\"]"#, None),
            ("]", None),
        ] {
            assert_eq!(container_end(text.as_bytes(), 0), end, "{text}");
        }
    }
}
