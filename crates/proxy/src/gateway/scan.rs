//! A hand-written reader of the plainest chat completions: the first of the
//! answer's three readers (`check::read_completion`), for the shape nearly
//! every answer has; and of a request's top-level fields, the first of
//! the request's (`request::read`). It checks each byte as serde_json would (strings,
//! escapes, numbers, literals, nesting) and takes an answer only when
//! every part of it is one it knows how to read exactly as the borrowed
//! serde pass (`check::fast`) reads it; anything else, valid or not, it
//! leaves (`None`) to that pass, which leaves what it does not take to the
//! full read. Leaving is always safe: it costs time, never a decision.
//!
//! What it leaves: keys with escapes, the raw-value token, a key given
//! twice in any object, numbers with an exponent, lone surrogates and
//! every other string serde_json refuses, nesting past [`MAX_DEPTH`], more
//! than the node budget, `usage` wanted as a value (a record), a non-empty
//! `tool_calls` or a `function_call` other than null, a container under a
//! key its level does not know, and every key the serde pass gives up on.
//! The property test in `check` holds it to the full read on generated
//! answers.

use super::check::{
    ANSWER_KEYS, ANSWER_KNOWN, CHOICE_KEYS, CHOICE_KNOWN, COUNT_KEYS, ChoiceRead, Counts,
    MAX_CHOICES, MESSAGE_KEYS, Read, Usage, call_bearing, read_as,
};
use super::checked::{RAW_VALUE_TOKEN, Seen};
use super::request::{JSON_KEYS, Scalar, Top};
use serde_json::Value;
use std::borrow::Cow;

/// The deepest nesting read here (serde_json's limit is 128).
const MAX_DEPTH: usize = 32;

/// The answer in `text` (UTF-8, checked by the caller) as the borrowed
/// pass reads it, or `None`: not taken here. `max_nodes`: the JSON values
/// it may hold; past them it is not taken here either.
pub(crate) fn answer(text: &str, max_nodes: usize) -> Option<Read<'_>> {
    let mut c = Cur {
        text,
        b: text.as_bytes(),
        i: 0,
        left: max_nodes,
    };
    let read = c.top()?;
    c.ws();
    (c.i == c.b.len()).then_some(read)
}

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

/// The top-level fields of a request body as `request`'s serde read takes
/// them, and the node budget left after them (`tools` and `functions`,
/// kept as text, not counted: the tool cache counts them), or `None`: not
/// taken here. Keys and values are checked as [`answer`] checks them.
pub(crate) fn request(text: &str, max_nodes: usize) -> Option<(Top<'_>, usize)> {
    let mut c = Cur {
        text,
        b: text.as_bytes(),
        i: 0,
        left: max_nodes,
    };
    let mut top = Top::default();
    c.object(|c, k| {
        match k {
            "model" => top.model = Some(c.scalar()?),
            "stream" => top.stream = Some(c.scalar()?),
            "parallel_tool_calls" => top.parallel_tool_calls = Some(c.scalar()?),
            "tools" => top.tools = Some(c.raw()?),
            "functions" => top.functions = Some(c.raw()?),
            "tool_choice" => {
                top.narrows |= match c.scalar()? {
                    Scalar::Null => false,
                    Scalar::Str(s) => !matches!(s.as_str(), "auto" | "required" | "none"),
                    Scalar::Bool(_) | Scalar::Other => true,
                };
            }
            "function_call" => {
                top.narrows = true;
                c.skip(0, false)?;
            }
            k => {
                top.json_keys |= JSON_KEYS.contains(&k);
                c.skip(0, false)?;
            }
        }
        Some(())
    })?;
    c.ws();
    (c.i == c.b.len()).then_some((top, c.left))
}

/// A position in the text and the node budget left.
struct Cur<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    left: usize,
}

/// What a string or null read as text holds.
type Text<'a> = Option<Cow<'a, str>>;

impl<'a> Cur<'a> {
    /// Skips JSON whitespace.
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
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
    fn object(&mut self, mut each: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
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
    fn array(&mut self, mut each: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
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
    fn string(&mut self) -> Option<Cow<'a, str>> {
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
    fn text_or_null(&mut self) -> Option<Text<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Some),
            b'n' => self.literal(b"null").map(|()| None),
            _ => None,
        }
    }

    /// `word` (`true`, `false`, `null`), counted.
    fn literal(&mut self, word: &[u8]) -> Option<()> {
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
    fn u64(&mut self) -> Option<u64> {
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
    fn skip(&mut self, depth: usize, look: bool) -> Option<()> {
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

    /// A value as the request's reader keeps it: a string, a boolean,
    /// null, or something else (checked and counted).
    fn scalar(&mut self) -> Option<Scalar> {
        Some(match self.peek()? {
            b'"' => Scalar::Str(self.string()?.into_owned()),
            b't' => self.literal(b"true").map(|()| Scalar::Bool(true))?,
            b'f' => self.literal(b"false").map(|()| Scalar::Bool(false))?,
            b'n' => self.literal(b"null").map(|()| Scalar::Null)?,
            _ => self.skip(0, false).map(|()| Scalar::Other)?,
        })
    }

    /// The text of `tools` or `functions`, not counted. A list or object
    /// is only delimited (its brackets matched outside strings), not
    /// checked: its text is only used to find an allowlist read before
    /// from the same bytes, which parsed then, and a JSON list or object
    /// ends at its own closing bracket, so the parse that took those bytes
    /// reads exactly them here too; bytes not read before go to the full
    /// read, which checks them (`request::read`). Anything else is
    /// checked as [`Self::skip`] checks it.
    fn raw(&mut self) -> Option<&'a str> {
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

    /// The answer: an object with a `choices` array.
    fn top(&mut self) -> Option<Read<'a>> {
        let mut choices = None;
        let mut usage: Option<Option<Counts>> = None;
        self.object(|c, k| {
            match k {
                "choices" => {
                    let mut list = Vec::with_capacity(1);
                    c.array(|c| {
                        if list.len() == MAX_CHOICES {
                            return None;
                        }
                        list.push(c.choice()?);
                        Some(())
                    })?;
                    choices = Some(list);
                }
                "usage" => usage = Some(c.usage()?),
                // Known, read as nothing, bearing no call (the arms below
                // would send them to the same `skip`).
                "id" | "object" | "created" | "model" | "system_fingerprint" | "service_tier" => {
                    c.skip(0, false)?
                }
                k if k != "tool_choice" && call_bearing(k) => return None,
                k if read_as(k, ANSWER_KEYS).is_some() => return None,
                k => c.skip(0, !ANSWER_KNOWN.contains(&k))?,
            }
            Some(())
        })?;
        Some(Read {
            choices: choices?,
            usage: usage.flatten().map(|counts| Usage {
                counts,
                value: None,
            }),
        })
    }

    /// `usage` read for its counts: an object or null.
    fn usage(&mut self) -> Option<Option<Counts>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        let mut counts = Counts::default();
        self.object(|c, k| {
            match COUNT_KEYS.iter().position(|n| *n == k) {
                Some(i) => {
                    counts[i] = match c.peek()? {
                        b'n' => c.literal(b"null").map(|()| None)?,
                        _ => Some(c.u64()?),
                    }
                }
                None => c.skip(0, false)?,
            }
            Some(())
        })?;
        Some(Some(counts))
    }

    /// One choice: an object with a `message` object.
    fn choice(&mut self) -> Option<ChoiceRead<'a>> {
        let mut message = None;
        let mut finish = None;
        self.object(|c, k| {
            match k {
                "message" => message = Some(c.message()?),
                "finish_reason" => finish = c.text_or_null()?,
                "index" => {
                    c.u64()?;
                }
                "logprobs" | "stop_reason" | "matched_stop" => c.skip(0, false)?,
                "error" | "delta" => return None,
                k if call_bearing(k) => return None,
                k if read_as(k, CHOICE_KEYS).is_some() => return None,
                k => c.skip(0, !CHOICE_KNOWN.contains(&k))?,
            }
            Some(())
        })?;
        let mut choice: ChoiceRead<'a> = message?;
        choice.finish_reason = finish;
        Some(choice)
    }

    /// A message: the fields judged, the others checked.
    fn message(&mut self) -> Option<ChoiceRead<'a>> {
        let mut content: Option<Text<'a>> = None;
        let mut reasoning_content: Option<Text<'a>> = None;
        let mut reasoning: Option<Text<'a>> = None;
        let mut tool_calls = None;
        let mut function_call = None;
        self.object(|c, k| {
            match k {
                "content" => content = Some(c.text_or_null()?),
                "reasoning_content" => reasoning_content = Some(c.text_or_null()?),
                "reasoning" => reasoning = Some(c.text_or_null()?),
                "refusal" => {
                    c.text_or_null()?;
                }
                // Null or an empty list; calls are left to the serde pass.
                "tool_calls" => {
                    tool_calls = Some(match c.peek()? {
                        b'n' => c.literal(b"null").map(|()| Value::Null)?,
                        _ => c.array(|_| None).map(|()| Value::Array(Vec::new()))?,
                    });
                }
                "function_call" => {
                    c.literal(b"null")?;
                    function_call = Some(Value::Null);
                }
                "role" | "annotations" | "audio" | "name" => c.skip(0, false)?,
                k if !MESSAGE_KEYS.contains(&k) && call_bearing(k) => return None,
                k if read_as(k, MESSAGE_KEYS).is_some() => return None,
                k => c.skip(0, !MESSAGE_KEYS.contains(&k))?,
            }
            Some(())
        })?;
        Some(ChoiceRead::of_message(
            content,
            reasoning_content,
            reasoning,
            tool_calls,
            function_call,
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::check::Has;
    use super::*;

    /// The answers servers send, as they send them: each taken here, and
    /// read as the full read reads it (`check`'s property test holds the
    /// rest).
    #[test]
    fn the_usual_answers_are_taken_here() {
        let vllm = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1732000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":null,"content":"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>","tool_calls":[]},"logprobs":null,"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":180,"total_tokens":205,"completion_tokens":25,"prompt_tokens_details":null},"prompt_logprobs":null,"kv_transfer_params":null}"#;
        let openai = r#"{
  "id": "chatcmpl-2", "object": "chat.completion", "created": 1741569952, "model": "gpt-4.1",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello \u00e9\ud83d\ude00 \/ \"x\"", "refusal": null, "annotations": []},
    "logprobs": null, "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "accepted_prediction_tokens": 0}},
  "service_tier": "default", "system_fingerprint": null
}"#;
        let r = answer(vllm, usize::MAX).expect("vLLM's answer");
        assert_eq!(r.choices.len(), 1);
        assert_eq!(
            r.choices[0].content,
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>"
        );
        assert_eq!(r.choices[0].content_is, Has::Text);
        assert_eq!(r.choices[0].reasoning, None);
        assert_eq!(
            r.choices[0].tool_calls.as_deref(),
            Some(&Value::Array(vec![]))
        );
        assert_eq!(r.choices[0].finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            r.usage.map(|u| u.counts),
            Some([Some(180), Some(25), Some(205)])
        );
        let r = answer(openai, usize::MAX).expect("OpenAI's answer");
        assert_eq!(r.choices[0].content, "Hello é😀 / \"x\"");
        assert!(matches!(r.choices[0].content, Cow::Owned(_)));
        assert_eq!(
            r.usage.map(|u| u.counts),
            Some([Some(19), Some(10), Some(29)])
        );
        // Plain text is borrowed from the body.
        let r = answer(r#"{"choices":[{"message":{"content":"hi"}}]}"#, usize::MAX).unwrap();
        assert!(matches!(r.choices[0].content, Cow::Borrowed("hi")));
    }

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

    /// The keys read as nothing without asking: each one the general arms
    /// would skip alike (known at its level, bearing no call, no twin of
    /// a key read).
    #[test]
    fn the_shortcut_keys_are_the_general_rule() {
        let levels: [(&[&str], &[&str], &[&str]); 3] = [
            (
                &[
                    "id",
                    "object",
                    "created",
                    "model",
                    "system_fingerprint",
                    "service_tier",
                ],
                ANSWER_KNOWN,
                ANSWER_KEYS,
            ),
            (
                &["logprobs", "stop_reason", "matched_stop"],
                CHOICE_KNOWN,
                CHOICE_KEYS,
            ),
            (
                &["role", "annotations", "audio", "name"],
                MESSAGE_KEYS,
                MESSAGE_KEYS,
            ),
        ];
        for (shortcuts, known, read) in levels {
            for k in shortcuts {
                assert!(known.contains(k), "{k}");
                assert!(!call_bearing(k), "{k}");
                assert_eq!(read_as(k, read), None, "{k}");
            }
        }
    }

    /// What is left to the serde pass: valid answers this reader does not
    /// read, and every text serde_json refuses.
    #[test]
    fn the_rest_is_left_to_the_serde_pass() {
        for body in [
            r#"{"choices":[{"message":{"tool_calls":[{"id":"c"}]}}]}"#,
            r#"{"choices":[{"message":{"function_call":{"name":"f"}}}]}"#,
            r#"{"choices":[],"x":1e2}"#,
            r#"{"choices":[],"x":{"a":1,"a":2}}"#,
            r#"{"choices":[],"x":"\ud800"}"#,
            r#"{"choices":[],"x":"\udc00\ud800"}"#,
            r#"{"choices":[],"x":"\x"}"#,
            "{\"choices\":[],\"x\":\"a\tb\"}",
            r#"{"choices":[],"x":01}"#,
            r#"{"choices":[],"x":1.}"#,
            r#"{"choices":[],"x":-}"#,
            r#"{"choices":[],"x":tru}"#,
            r#"{"choices":[],"x":[1,]}"#,
            r#"{"choices":[],"x":{"a":1,}}"#,
            r#"{"choices":[],}"#,
            r#"{"choices":[]"#,
            r#"{"choices":[]} {}"#,
            r#"{"choices":[],"unknown":{"a":1}}"#,
            r#"{"choices":[],"usage":{"total_tokens":"3"}}"#,
            r#"{"choices":[],"usage":{"total_tokens":18446744073709551615}}"#,
            r#"{"choices":[{"index":-1,"message":{}}]}"#,
            r#"{"choices":[{"message":{},"error":{"message":"x"}}]}"#,
            r#"{"choices":[{"message":{"content":1}}]}"#,
            r#"{"choices":[{"message":{"c\u006fntent":"x"}}]}"#,
            r#"{"choices":[{"message":{"Content":"x"}}]}"#,
            r#"{"choices":[{"message":{"toolCalls":[]}}]}"#,
            r#"{"choices":[],"Choices":[]}"#,
            r#"{"id":"x"}"#,
            "{\"choices\":[{\"message\":{\"content\":\"a\\\"b\u{1}c\"}}]}",
            "{\"choices\":[{\"message\":{\"content\":\"ab\u{1f}\"}}]}",
            "{\"choices\":[],\"id\":\"a\u{0}\"}",
        ] {
            assert!(answer(body, usize::MAX).is_none(), "{body}");
        }
        let deep = format!(
            r#"{{"choices":[],"id":{}1{}}}"#,
            "[".repeat(40),
            "]".repeat(40)
        );
        assert!(answer(&deep, usize::MAX).is_none());
        // The node budget: 5 values here (object, key, array, key, string).
        let small = r#"{"choices":[],"id":"x"}"#;
        assert!(answer(small, 5).is_some());
        assert!(answer(small, 4).is_none());
    }
}
