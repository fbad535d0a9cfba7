//! A hand-written JSON reader for model payloads.
//!
//! Unlike `serde_json`, it classifies every failure the way the labels need it
//! (SPEC §5 rules 5–7), with the byte offset where it was noticed:
//!
//! | input | strict | lenient |
//! |---|---|---|
//! | text runs out inside the value | `truncated` (at the end of the output) or `malformed` | same: truncation is never repaired |
//! | `\'`, `\d`, bad `\u`, lone surrogate | `escaping` | `\'` → `'`, `\d` → `\d` ([`Repair::InvalidEscapes`]); bad `\u` and lone surrogates stay `escaping` |
//! | raw control character (U+0000–U+001F) in a string | `escaping` | kept as the character ([`Repair::RawNewlines`]) |
//! | `{"q": "say "hi" now"}` (unescaped inner quote) | `escaping` | `escaping` |
//! | `'single'` strings | `malformed` | [`Repair::SingleQuotes`] |
//! | `{key: 1}` | `malformed` | [`Repair::UnquotedKeys`] |
//! | `True` / `False` / `None` | `malformed` | [`Repair::PythonLiterals`] |
//! | `[1, 2,]`, `{"a": 1,}` | `malformed` | [`Repair::TrailingCommas`] |
//! | ```` ```json … ``` ```` around the value | `malformed` | [`Repair::StrayFences`] |
//! | comments, trailing text, duplicate keys, `NaN`/`Infinity`, leading zeros | `malformed` | `malformed` |
//!
//! The reader is iterative (an explicit stack, no recursion), linear in the
//! input, and caps nesting at [`MAX_DEPTH`]. Integers become `i64`/`u64`; an
//! integer literal beyond 64 bits is a `malformed` failure (read as a float it
//! would pass on digits the model never wrote); other numbers become `f64`
//! only when the `f64` is exactly the number written ([`exact_f64`]:
//! `1.9999999999999999` or `1e-400` are `malformed`, for the same reason).
//! Objects keep key order (the workspace enables `preserve_order`).
//!
//! ```ignore
//! use toolgate_core::{FailureKind, Repair};
//! use toolgate_formats::{Strictness, jsonread::read_all};
//! let ok = read_all(r#"{"city": "Antwerp"}"#, Strictness::Strict, true).unwrap();
//! assert_eq!(ok.value["city"], "Antwerp");
//! let cut = read_all(r#"{"city": "Antw"#, Strictness::Strict, true).unwrap_err();
//! assert_eq!(cut.kind, FailureKind::Truncated);
//! let fixed = read_all("{'city': 'Antwerp',}", Strictness::Lenient, true).unwrap();
//! assert_eq!(fixed.repairs, vec![Repair::SingleQuotes, Repair::TrailingCommas]);
//! ```

use crate::Strictness;
use serde_json::{Map, Number, Value};
use toolgate_core::{FailureKind, ParseFailure, Repair};

/// Maximum nesting depth of a payload; deeper input is `malformed`.
pub const MAX_DEPTH: usize = 128;

/// A non-integer number literal as an `f64`, only when the `f64` stands for
/// exactly the number written: the literal and the float's shortest decimal
/// form must be the same decimal number (`0.1`, `1.50`, `1e300` pass;
/// `1.9999999999999999` → `2`, `9007199254740993.0` → `…992` and `1e-400` →
/// `0` do not). Otherwise the call would execute with a value the model
/// never wrote, and pass bounds the written value fails — the rule integers
/// beyond 64 bits follow too. `literal` is an optional sign, digits with an
/// optional `.`, and an optional exponent (JSON or Python syntax without
/// `_`). The error is the reason, for a `malformed` failure.
pub fn exact_f64(literal: &str) -> Result<Number, String> {
    let shown = clip_literal(literal);
    let Some(n) = literal.parse::<f64>().ok().and_then(Number::from_f64) else {
        return Err(format!("number `{shown}` is out of range"));
    };
    let f = n.as_f64().unwrap_or(f64::NAN);
    // `{:e}` prints the shortest decimal that reads back as the same f64.
    let shortest = format!("{f:e}");
    if decimal(literal) == decimal(&shortest) {
        Ok(n)
    } else {
        let plain = f.to_string();
        let became = if plain.len() <= 24 { plain } else { shortest };
        Err(format!(
            "number `{shown}` cannot be passed on exactly: as a 64-bit float it is `{became}`"
        ))
    }
}

/// Most bytes of a number literal quoted in a failure message.
const MAX_QUOTED_LITERAL: usize = 40;

fn clip_literal(s: &str) -> String {
    // Number literals are ASCII: any byte index is a char boundary.
    if s.len() <= MAX_QUOTED_LITERAL || !s.is_ascii() {
        return s.chars().take(MAX_QUOTED_LITERAL).collect();
    }
    format!("{}…", &s[..MAX_QUOTED_LITERAL])
}

/// A decimal literal as (negative, significant digits without leading or
/// trailing zeros, exponent of the last digit); zero is `(false, [], 0)`.
/// Exponents saturate far beyond any `f64` range, so huge ones stay distinct.
fn decimal(s: &str) -> (bool, Vec<u8>, i64) {
    const CAP: i64 = 1 << 40;
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let (exp_neg, exp_digits) = match exp.as_bytes().first() {
        Some(b'-') => (true, &exp[1..]),
        Some(b'+') => (false, &exp[1..]),
        _ => (false, exp),
    };
    let mut e: i64 = 0;
    for d in exp_digits.bytes().filter(u8::is_ascii_digit) {
        e = (e * 10 + i64::from(d - b'0')).min(CAP);
    }
    if exp_neg {
        e = -e;
    }
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let frac_len = i64::try_from(frac.len()).unwrap_or(CAP).min(CAP);
    let mut e = e - frac_len;
    let lead = digits.iter().take_while(|d| **d == b'0').count();
    digits.drain(..lead);
    while digits.last() == Some(&b'0') {
        digits.pop();
        e += 1;
    }
    if digits.is_empty() {
        return (false, digits, 0);
    }
    (neg, digits, e)
}

/// How JSON spells `true`, `false` and `null`, in that order.
const JSON_LITERALS: [&str; 3] = ["true", "false", "null"];
/// How Python spells them (read in lenient mode only).
const PYTHON_LITERALS: [&str; 3] = ["True", "False", "None"];

/// The literal `word` is when `names` spell `true`, `false` and `null`.
fn spelled(word: &str, names: [&str; 3]) -> Option<Value> {
    match names.iter().position(|n| *n == word)? {
        0 => Some(Value::Bool(true)),
        1 => Some(Value::Bool(false)),
        _ => Some(Value::Null),
    }
}

/// The result of reading one JSON value.
#[derive(Clone, Debug, PartialEq)]
pub struct Read {
    /// The value.
    pub value: Value,
    /// Byte offset just past the value (relative to the text given). For
    /// [`read_all`] this is the length of the text; for [`read_prefix`] it is
    /// right after the value (after a closing stray fence in lenient mode).
    pub end: usize,
    /// Repairs applied, sorted and without duplicates (empty in strict mode).
    pub repairs: Vec<Repair>,
}

/// Reads exactly one JSON value that spans all of `text` (surrounding
/// whitespace allowed). Offsets in the failure are relative to `text`.
/// `at_end_of_output`: whether `text` runs to the end of the model output, so
/// that running out of input is `truncated` rather than `malformed`.
pub fn read_all(
    text: &str,
    lenient: Strictness,
    at_end_of_output: bool,
) -> Result<Read, ParseFailure> {
    if let Some(value) = fast::enabled().then(|| fast::read_all(text)).flatten() {
        return Ok(Read {
            value,
            end: text.len(),
            repairs: Vec::new(),
        });
    }
    read_all_classifying(text, lenient, at_end_of_output)
}

/// [`read_all`] by the failure-classifying reader alone (no fast path): what
/// the fast path must agree with.
#[doc(hidden)]
pub fn read_all_classifying(
    text: &str,
    lenient: Strictness,
    at_end_of_output: bool,
) -> Result<Read, ParseFailure> {
    classify(text, lenient, at_end_of_output, true)
}

/// Reads one JSON value starting at the beginning of `text` (after
/// whitespace) and stops right after it: the caller decides what may follow.
pub fn read_prefix(
    text: &str,
    lenient: Strictness,
    at_end_of_output: bool,
) -> Result<Read, ParseFailure> {
    if let Some((value, end)) = fast::enabled().then(|| fast::read_prefix(text)).flatten() {
        return Ok(Read {
            value,
            end,
            repairs: Vec::new(),
        });
    }
    read_prefix_classifying(text, lenient, at_end_of_output)
}

/// [`read_prefix`] by the failure-classifying reader alone (no fast path).
#[doc(hidden)]
pub fn read_prefix_classifying(
    text: &str,
    lenient: Strictness,
    at_end_of_output: bool,
) -> Result<Read, ParseFailure> {
    classify(text, lenient, at_end_of_output, false)
}

/// The classifying reader over `text`: one value, then (`whole`) nothing but
/// white space to the end, or (not `whole`) whatever follows.
fn classify(
    text: &str,
    lenient: Strictness,
    at_end_of_output: bool,
    whole: bool,
) -> Result<Read, ParseFailure> {
    let mut r = Reader::new(text, lenient, at_end_of_output);
    let value = r.document()?;
    if whole {
        r.skip_ws();
        if r.pos < r.b.len() {
            let what = describe_at(text, r.pos);
            return Err(r.fail(
                FailureKind::Malformed,
                format!("unexpected {what} after the JSON value"),
                r.pos,
            ));
        }
    }
    Ok(Read {
        value,
        end: r.pos,
        repairs: r.repairs(),
    })
}

/// The valid-payload fast path: `serde_json`'s parser, accepting only what
/// the classifying [`Reader`] reads to the same value with no repair, and
/// giving up (`None`) on everything else, which the reader then reads and
/// classifies. Most payloads are valid JSON; only a broken or unusual one
/// pays for the second read.
///
/// What `serde_json` accepts that the reader does not, or reads
/// differently, is refused here:
///
/// - duplicate keys (`serde_json` keeps the last; the reader fails
///   `malformed`);
/// - any number that is not an integer within 64 bits: `serde_json` reads
///   fractions, exponents, `-0` and integers beyond 64 bits as `f64`
///   (possibly rounded), the reader checks that the float is exactly the
///   literal ([`exact_f64`]) — the reader decides those;
/// - a value that does not start with `{` or `[` (payloads are objects and
///   arrays; a bare scalar goes to the reader).
///
/// Everything else `serde_json` rejects too (control characters, invalid
/// escapes, lone surrogates, trailing commas, comments, single quotes,
/// unquoted keys, Python literals, fences, nesting beyond 127 levels — the
/// reader allows 128), so a valid payload of either reader is the same
/// value. The property test `fast_path_agrees_with_the_classifying_reader`
/// (tests/prop.rs) checks that on generated valid and near-valid payloads.
mod fast {
    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Value};
    use std::fmt;

    thread_local! {
        /// Set by [`super::without_fast_path`].
        pub(super) static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    pub(crate) fn enabled() -> bool {
        !OFF.with(std::cell::Cell::get)
    }

    /// A value read the way the classifying reader reads it, or an error.
    pub(crate) struct Exact(pub(crate) Value);

    impl<'de> Deserialize<'de> for Exact {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Exact, D::Error> {
            d.deserialize_any(ExactVisitor)
        }
    }

    struct ExactVisitor;

    impl<'de> Visitor<'de> for ExactVisitor {
        type Value = Exact;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Exact, E> {
            Ok(Exact(Value::Bool(v)))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Exact, E> {
            Ok(Exact(Value::Number(v.into())))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Exact, E> {
            Ok(Exact(Value::Number(v.into())))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Exact, E> {
            // The literal is gone: the classifying reader judges it.
            Err(E::custom("not an exact integer"))
        }
        fn visit_str<E>(self, v: &str) -> Result<Exact, E> {
            Ok(Exact(Value::String(v.to_owned())))
        }
        fn visit_string<E>(self, v: String) -> Result<Exact, E> {
            Ok(Exact(Value::String(v)))
        }
        fn visit_unit<E>(self) -> Result<Exact, E> {
            Ok(Exact(Value::Null))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Exact, A::Error> {
            let mut items = Vec::new();
            while let Some(Exact(v)) = seq.next_element()? {
                items.push(v);
            }
            Ok(Exact(Value::Array(items)))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Exact, A::Error> {
            let mut out = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                // The first key sizes the map as its first insert would
                // (room for 3), without the generic growth path: most
                // argument objects hold one to three keys (issue 24).
                if out.is_empty() {
                    out = Map::with_capacity(3);
                }
                // serde_json's private number/raw-value markers (features
                // this workspace does not enable) are not keys.
                if key.starts_with("$serde_json::private::") {
                    return Err(de::Error::custom("private marker"));
                }
                let Exact(v) = map.next_value()?;
                if out.insert(key, v).is_some() {
                    return Err(de::Error::custom("duplicate key"));
                }
            }
            Ok(Exact(Value::Object(out)))
        }
    }

    /// Whether `text` starts (after JSON whitespace) with `{` or `[`.
    fn opens_container(text: &str) -> bool {
        let b = text.as_bytes();
        let i = super::skip_json_ws(b, 0);
        matches!(b.get(i), Some(b'{' | b'['))
    }

    /// The value spanning all of `text` (surrounding whitespace allowed).
    pub(super) fn read_all(text: &str) -> Option<Value> {
        if !opens_container(text) {
            return None;
        }
        serde_json::from_str::<Exact>(text).ok().map(|e| e.0)
    }

    /// The value at the start of `text` and the offset right after it.
    pub(super) fn read_prefix(text: &str) -> Option<(Value, usize)> {
        if !opens_container(text) {
            return None;
        }
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<Exact>();
        let Exact(v) = values.next()?.ok()?;
        Some((v, values.byte_offset()))
    }
}

pub(crate) use fast::{Exact, enabled as fast_path_enabled};

/// Runs `f` with the fast path off on this thread: every payload is read by
/// the classifying reader alone. For the property test that both paths give
/// the same candidates; never needed otherwise.
#[doc(hidden)]
pub fn without_fast_path<R>(f: impl FnOnce() -> R) -> R {
    let before = fast::OFF.with(|off| off.replace(true));
    let out = f();
    fast::OFF.with(|off| off.set(before));
    out
}

/// The first offset at or after `i` that is not JSON whitespace.
pub(crate) fn skip_json_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// A short description of what stands at `pos` for messages (`` `x` `` or "end of text").
fn describe_at(text: &str, pos: usize) -> String {
    match text.get(pos..).and_then(|t| t.chars().next()) {
        Some(c) if c.is_control() => format!("character U+{:04X}", c as u32),
        Some(c) => format!("`{c}`"),
        None => "end of text".to_string(),
    }
}

enum Frame {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

/// How many bytes at the start of `bytes` a string reads as they are: up to
/// the first `quote`, backslash or control character. Whole 32-byte blocks
/// are tested without a branch per byte (the compiler vectorizes the fold);
/// strings in prose can be long.
fn plain_run(bytes: &[u8], quote: u8) -> usize {
    let special = |b: u8| (b == quote) | (b == b'\\') | (b < 0x20);
    let mut i = 0;
    for block in bytes.chunks_exact(32) {
        if block.iter().fold(false, |hit, &b| hit | special(b)) {
            break;
        }
        i += 32;
    }
    let rest = bytes.get(i..).unwrap_or_default();
    i + rest.iter().position(|&b| special(b)).unwrap_or(rest.len())
}

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    lenient: Strictness,
    at_end: bool,
    used: [bool; 9],
}

fn repair_index(r: Repair) -> usize {
    match r {
        Repair::SingleQuotes => 0,
        Repair::TrailingCommas => 1,
        Repair::RawNewlines => 2,
        Repair::UnquotedKeys => 3,
        Repair::PythonLiterals => 4,
        Repair::DoubleEncodedArguments => 5,
        Repair::StrayFences => 6,
        Repair::InvalidEscapes => 7,
        // Never applied by the JSON reader (a call-object repair).
        Repair::ArgumentKey => 8,
    }
}

const ALL_REPAIRS: [Repair; 9] = [
    Repair::SingleQuotes,
    Repair::TrailingCommas,
    Repair::RawNewlines,
    Repair::UnquotedKeys,
    Repair::PythonLiterals,
    Repair::DoubleEncodedArguments,
    Repair::StrayFences,
    Repair::InvalidEscapes,
    Repair::ArgumentKey,
];

impl<'a> Reader<'a> {
    fn new(text: &'a str, lenient: Strictness, at_end: bool) -> Reader<'a> {
        Reader {
            text,
            b: text.as_bytes(),
            pos: 0,
            lenient,
            at_end,
            used: [false; 9],
        }
    }

    fn repairs(&self) -> Vec<Repair> {
        let mut out: Vec<Repair> = ALL_REPAIRS
            .iter()
            .copied()
            .filter(|r| self.used[repair_index(*r)])
            .collect();
        out.sort();
        out
    }

    fn repair(&mut self, r: Repair) {
        self.used[repair_index(r)] = true;
    }

    fn fail(&self, kind: FailureKind, message: impl Into<String>, offset: usize) -> ParseFailure {
        ParseFailure::new(kind, message, offset)
    }

    fn eof(&self) -> ParseFailure {
        if self.at_end {
            ParseFailure::new(
                FailureKind::Truncated,
                "output ends before the value is complete",
                self.b.len(),
            )
        } else {
            ParseFailure::new(
                FailureKind::Malformed,
                "payload ends before the value is complete",
                self.b.len(),
            )
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// A stray fence opener: ```` ``` ```` plus an optional info word and the
    /// rest of that line. Lenient only.
    fn skip_open_fence(&mut self) -> Result<(), ParseFailure> {
        if !self.b[self.pos..].starts_with(b"```") {
            return Ok(());
        }
        if !self.lenient.is_lenient() {
            return Err(self.fail(
                FailureKind::Malformed,
                "a ``` code fence is not JSON",
                self.pos,
            ));
        }
        self.repair(Repair::StrayFences);
        match memchr::memchr(b'\n', &self.b[self.pos..]) {
            Some(nl) => self.pos += nl + 1,
            None => {
                self.pos = self.b.len();
            }
        }
        Ok(())
    }

    /// One value, with a stray fence around it in lenient mode.
    fn document(&mut self) -> Result<Value, ParseFailure> {
        self.skip_ws();
        let fenced = self.b[self.pos..].starts_with(b"```");
        self.skip_open_fence()?;
        let value = self.value()?;
        if fenced {
            let save = self.pos;
            self.skip_ws();
            if self.b[self.pos..].starts_with(b"```") {
                self.pos += 3;
            } else {
                self.pos = save;
            }
        }
        Ok(value)
    }

    /// Reads one value iteratively.
    fn value(&mut self) -> Result<Value, ParseFailure> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_ws();
            let start = self.pos;
            let mut v = match self.peek() {
                None => return Err(self.eof()),
                Some(open @ (b'{' | b'[')) => {
                    match self.open_container(stack.len(), start, open)? {
                        Some(empty) => empty,
                        None => {
                            let frame = if open == b'{' {
                                Frame::Object(Map::new(), self.key()?)
                            } else {
                                Frame::Array(Vec::new())
                            };
                            stack.push(frame);
                            continue 'value;
                        }
                    }
                }
                Some(q @ (b'"' | b'\'')) => Value::String(self.string(q, !stack.is_empty())?),
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.literal()?,
                Some(_) => return Err(self.unexpected("a JSON value", start)),
            };
            // Attach the finished value to its container; close containers.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(v);
                };
                let close = match top {
                    Frame::Array(items) => {
                        items.push(v);
                        b']'
                    }
                    Frame::Object(map, key) => {
                        let key = std::mem::take(key);
                        map.insert(key, v);
                        b'}'
                    }
                };
                if self.after_item(close)? {
                    v = self.pop(&mut stack);
                    continue;
                }
                if close == b'}' {
                    let key_at = self.pos;
                    let key = self.key()?;
                    if let Some(Frame::Object(m, k)) = stack.last_mut() {
                        if m.contains_key(&key) {
                            return Err(self.fail(
                                FailureKind::Malformed,
                                format!("duplicate key `{key}`"),
                                key_at,
                            ));
                        }
                        *k = key;
                    }
                }
                continue 'value;
            }
        }
    }

    /// Steps over a container's opening bracket `open` (the reader stands
    /// on it) and the white space after it; the empty container when it
    /// closes at once (`{}` or `[]`, the closer consumed too). `depth` is the
    /// number of containers already open around it.
    #[inline]
    fn open_container(
        &mut self,
        depth: usize,
        start: usize,
        open: u8,
    ) -> Result<Option<Value>, ParseFailure> {
        if depth >= MAX_DEPTH {
            return Err(self.fail(
                FailureKind::Malformed,
                format!("nesting deeper than {MAX_DEPTH} levels"),
                start,
            ));
        }
        self.pos += 1;
        self.skip_ws();
        let object = open == b'{';
        if self.peek() != Some(if object { b'}' } else { b']' }) {
            return Ok(None);
        }
        self.pos += 1;
        Ok(Some(if object {
            Value::Object(Map::new())
        } else {
            Value::Array(Vec::new())
        }))
    }

    /// After an item of a container that ends with `close`: `true` when the
    /// container closes (the closer consumed, a trailing comma handled),
    /// `false` when a comma was read and another item follows.
    #[inline]
    fn after_item(&mut self, close: u8) -> Result<bool, ParseFailure> {
        self.skip_ws();
        match self.peek() {
            None => Err(self.eof()),
            Some(b',') => {
                let comma = self.pos;
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(close) {
                    self.trailing_comma(comma)?;
                    self.pos += 1;
                    return Ok(true);
                }
                Ok(false)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(true)
            }
            Some(_) => Err(self.separator_error(close)),
        }
    }

    /// Closes the innermost container and returns it as a value.
    fn pop(&self, stack: &mut Vec<Frame>) -> Value {
        match stack.pop() {
            Some(Frame::Array(items)) => Value::Array(items),
            Some(Frame::Object(map, _)) => Value::Object(map),
            None => Value::Null,
        }
    }

    fn trailing_comma(&mut self, comma: usize) -> Result<(), ParseFailure> {
        if self.lenient.is_lenient() {
            self.repair(Repair::TrailingCommas);
            Ok(())
        } else {
            Err(self.fail(
                FailureKind::Malformed,
                "trailing comma before the closing bracket",
                comma,
            ))
        }
    }

    fn separator_error(&self, close: u8) -> ParseFailure {
        self.unexpected(&format!("`,` or `{}`", close as char), self.pos)
    }

    /// The failure where `expected` should stand at `at` but does not; a
    /// comment there is named as one.
    #[cold]
    fn unexpected(&self, expected: &str, at: usize) -> ParseFailure {
        if self.b.get(at) == Some(&b'/') {
            return self.fail(FailureKind::Malformed, "comments are not JSON", at);
        }
        let what = describe_at(self.text, at);
        self.fail(
            FailureKind::Malformed,
            format!("expected {expected}, found {what}"),
            at,
        )
    }

    /// An object key and the `:` after it; the reader stands on the key.
    fn key(&mut self) -> Result<String, ParseFailure> {
        self.skip_ws();
        let start = self.pos;
        let key = match self.peek() {
            None => return Err(self.eof()),
            Some(q @ (b'"' | b'\'')) => self.string(q, true)?,
            Some(c) if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => {
                let mut end = self.pos;
                while let Some(c) = self.b.get(end) {
                    if c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$' || *c == b'-' {
                        end += 1;
                    } else {
                        break;
                    }
                }
                if !self.lenient.is_lenient() {
                    return Err(self.fail(
                        FailureKind::Malformed,
                        format!("unquoted key `{}`", &self.text[start..end]),
                        start,
                    ));
                }
                self.repair(Repair::UnquotedKeys);
                self.pos = end;
                self.text[start..end].to_string()
            }
            Some(_) => return Err(self.unexpected("a quoted key", start)),
        };
        self.skip_ws();
        match self.peek() {
            None => Err(self.eof()),
            Some(b':') => {
                self.pos += 1;
                Ok(key)
            }
            Some(_) => {
                let what = describe_at(self.text, self.pos);
                Err(self.fail(
                    FailureKind::Malformed,
                    format!("expected `:` after the key, found {what}"),
                    self.pos,
                ))
            }
        }
    }

    /// A string delimited by `quote`; the reader stands on the opening quote.
    /// `in_container`: check for an unescaped inner quote after it closes.
    fn string(&mut self, quote: u8, in_container: bool) -> Result<String, ParseFailure> {
        let open = self.pos;
        if quote == b'\'' {
            if !self.lenient.is_lenient() {
                return Err(self.fail(
                    FailureKind::Malformed,
                    "single-quoted strings are not JSON",
                    open,
                ));
            }
            self.repair(Repair::SingleQuotes);
        }
        self.pos += 1;
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            // Plain bytes in one step: only the quote, a backslash or a
            // control character needs a decision.
            self.pos += plain_run(self.b.get(self.pos..).unwrap_or_default(), quote);
            let Some(c) = self.peek() else {
                return Err(self.eof());
            };
            if c == quote {
                out.push_str(&self.text[run..self.pos]);
                let close = self.pos;
                self.pos += 1;
                if in_container && self.inner_quote_follows(quote) {
                    return Err(self.fail(
                        FailureKind::Escaping,
                        format!(
                            "unescaped {} inside a string (the string closes early here)",
                            if quote == b'"' {
                                "double quote"
                            } else {
                                "single quote"
                            }
                        ),
                        close,
                    ));
                }
                return Ok(out);
            }
            match c {
                b'\\' => {
                    out.push_str(&self.text[run..self.pos]);
                    self.escape(&mut out, quote)?;
                    run = self.pos;
                }
                0x00..=0x1f => {
                    if !self.lenient.is_lenient() {
                        return Err(self.fail(
                            FailureKind::Escaping,
                            format!("raw control character U+{:04X} inside a string", c),
                            self.pos,
                        ));
                    }
                    self.repair(Repair::RawNewlines);
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// After a string closed: is it directly followed (after spaces) by text
    /// that is not a separator, with another `quote` later on the same line?
    /// Then the closing quote was really an unescaped inner quote.
    fn inner_quote_follows(&self, quote: u8) -> bool {
        let mut i = self.pos;
        while let Some(b' ' | b'\t') = self.b.get(i) {
            i += 1;
        }
        match self.b.get(i) {
            None | Some(b',' | b':' | b'}' | b']' | b'\n' | b'\r') => false,
            Some(c) if *c == quote => false,
            // Another quote before the line ends: the first of quote, `\n`,
            // `\r` is the quote. Searching for the three at once stops at the
            // first (scanning to the line's end at every string would make a
            // long line of short strings quadratic).
            Some(_) => memchr::memchr3(quote, b'\n', b'\r', &self.b[i..])
                .is_some_and(|at| self.b[i + at] == quote),
        }
    }

    /// A backslash escape; the reader stands on the backslash.
    fn escape(&mut self, out: &mut String, quote: u8) -> Result<(), ParseFailure> {
        let at = self.pos;
        let Some(&c) = self.b.get(at + 1) else {
            return Err(self.eof());
        };
        let simple = match c {
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            b'/' => Some('/'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            self.pos = at + 2;
            return Ok(());
        }
        if c == b'u' {
            let first = self.hex4(at)?;
            self.pos = at + 6;
            if (0xD800..0xDC00).contains(&first) {
                // A high surrogate needs a low one right after it.
                // Running out where the low surrogate should be is truncation.
                if self.b.len() <= at + 6 || (self.b[at + 6] == b'\\' && self.b.len() <= at + 7) {
                    return Err(self.eof());
                }
                if self.b.get(at + 6) == Some(&b'\\') && self.b.get(at + 7) == Some(&b'u') {
                    let second = self.hex4(at + 6)?;
                    if (0xDC00..0xE000).contains(&second) {
                        let cp = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                        if let Some(ch) = char::from_u32(cp) {
                            out.push(ch);
                            self.pos = at + 12;
                            return Ok(());
                        }
                    }
                }
                return Err(self.fail(
                    FailureKind::Escaping,
                    format!("lone surrogate \\u{first:04X} (no low surrogate after it)"),
                    at,
                ));
            }
            if (0xDC00..0xE000).contains(&first) {
                return Err(self.fail(
                    FailureKind::Escaping,
                    format!("lone surrogate \\u{first:04X}"),
                    at,
                ));
            }
            match char::from_u32(first) {
                Some(ch) => out.push(ch),
                None => {
                    return Err(self.fail(FailureKind::Escaping, "invalid \\u escape", at));
                }
            }
            return Ok(());
        }
        // An escape JSON does not have.
        let ch = self.text[at + 1..].chars().next().unwrap_or('\u{fffd}');
        if !self.lenient.is_lenient() {
            return Err(self.fail(
                FailureKind::Escaping,
                format!("invalid escape `\\{ch}`"),
                at,
            ));
        }
        self.repair(Repair::InvalidEscapes);
        if c == b'\'' || c == quote {
            out.push(ch);
        } else {
            // `\d` in a regex meant a literal backslash: keep both.
            out.push('\\');
            out.push(ch);
        }
        self.pos = at + 1 + ch.len_utf8();
        Ok(())
    }

    /// The four hex digits of the `\u` escape at `at` (the backslash).
    fn hex4(&self, at: usize) -> Result<u32, ParseFailure> {
        let mut v = 0u32;
        for k in 0..4 {
            match self.b.get(at + 2 + k) {
                None => return Err(self.eof()),
                Some(h) => match (*h as char).to_digit(16) {
                    Some(d) => v = v * 16 + d,
                    None => {
                        return Err(self.fail(
                            FailureKind::Escaping,
                            "invalid \\u escape (needs four hex digits)",
                            at,
                        ));
                    }
                },
            }
        }
        Ok(v)
    }

    /// An RFC 8259 number; the reader stands on `-` or a digit.
    fn number(&mut self) -> Result<Value, ParseFailure> {
        let start = self.pos;
        let b = self.b;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        match b.get(i) {
            None => {
                self.pos = i;
                return Err(self.eof());
            }
            Some(b'0') => {
                i += 1;
                if b.get(i).is_some_and(u8::is_ascii_digit) {
                    return Err(self.fail(
                        FailureKind::Malformed,
                        "numbers may not have leading zeros",
                        start,
                    ));
                }
            }
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            Some(_) => {
                let rest = &self.text[i..];
                let msg = if rest.starts_with("Infinity") {
                    "`-Infinity` is not JSON".to_string()
                } else {
                    format!("expected a digit, found {}", describe_at(self.text, i))
                };
                return Err(self.fail(FailureKind::Malformed, msg, start));
            }
        }
        let mut integer = true;
        if b.get(i) == Some(&b'.') {
            integer = false;
            i = self.required_digits(i + 1, "expected a digit after the decimal point")?;
        }
        if let Some(b'e' | b'E') = b.get(i) {
            integer = false;
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            i = self.required_digits(i, "expected a digit in the exponent")?;
        }
        let _ = int_start;
        let s = &self.text[start..i];
        self.pos = i;
        if integer {
            if let Ok(n) = s.parse::<i64>() {
                return Ok(Value::Number(n.into()));
            }
            if let Ok(n) = s.parse::<u64>() {
                return Ok(Value::Number(n.into()));
            }
            // Read as a float it would execute with digits the model never
            // wrote (18446744073709551617 → 18446744073709552000): fail closed.
            return Err(self.fail(
                FailureKind::Malformed,
                format!("integer `{s}` does not fit in 64 bits and cannot be passed on exactly"),
                start,
            ));
        }
        match exact_f64(s) {
            Ok(n) => Ok(Value::Number(n)),
            Err(msg) => Err(self.fail(FailureKind::Malformed, msg, start)),
        }
    }

    /// The run of digits a fraction or an exponent must have, from `i`:
    /// where it ends, or `missing` as the failure when there is none.
    fn required_digits(&self, mut i: usize, missing: &'static str) -> Result<usize, ParseFailure> {
        let digits = i;
        while self.b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == digits {
            if i >= self.b.len() {
                return Err(self.eof());
            }
            return Err(self.fail(FailureKind::Malformed, missing, i));
        }
        Ok(i)
    }

    /// Whether `word`, ending at `end`, runs to the end of the text and
    /// begins one of `names`: a literal cut off in the middle.
    fn cut_off(&self, end: usize, word: &str, names: [&str; 3]) -> bool {
        end == self.b.len() && names.iter().any(|l| l.starts_with(word))
    }

    /// `true`, `false`, `null`, or a word JSON does not have.
    fn literal(&mut self) -> Result<Value, ParseFailure> {
        let start = self.pos;
        let mut end = start;
        while self
            .b
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            end += 1;
        }
        let word = &self.text[start..end];
        if let Some(v) = spelled(word, JSON_LITERALS) {
            self.pos = end;
            return Ok(v);
        }
        // Cut off in the middle of a literal.
        if self.cut_off(end, word, JSON_LITERALS) {
            self.pos = end;
            return Err(self.eof());
        }
        if let Some(v) = spelled(word, PYTHON_LITERALS) {
            if self.lenient.is_lenient() {
                self.repair(Repair::PythonLiterals);
                self.pos = end;
                return Ok(v);
            }
            return Err(self.fail(
                FailureKind::Malformed,
                format!("Python literal `{word}` is not JSON"),
                start,
            ));
        }
        if self.cut_off(end, word, PYTHON_LITERALS) {
            self.pos = end;
            return Err(self.eof());
        }
        Err(self.fail(
            FailureKind::Malformed,
            format!("`{word}` is not a JSON value"),
            start,
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    #[test]
    fn a_plain_run_stops_where_a_byte_at_a_time_scan_does() {
        let naive = |b: &[u8], q: u8| {
            b.iter()
                .position(|&c| c == q || c == b'\\' || c < 0x20)
                .unwrap_or(b.len())
        };
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for len in [0, 1, 31, 32, 33, 63, 64, 65, 100] {
            for stop in [b'"', b'\'', b'\\', b'\n', 0x01, 0x1f] {
                for at in [0, 5, 31, 32, 33, 64, 99] {
                    let mut t = "é plain text ".repeat(8).into_bytes();
                    t.truncate(len);
                    if at < t.len() {
                        t[at] = stop;
                    }
                    texts.push(t);
                }
            }
        }
        for t in &texts {
            for q in [b'"', b'\''] {
                assert_eq!(super::plain_run(t, q), naive(t, q), "{t:?} {q}");
            }
        }
    }

    use super::*;
    use serde_json::json;

    fn fail(text: &str, lenient: Strictness, at_end: bool) -> ParseFailure {
        read_all(text, lenient, at_end).unwrap_err()
    }

    #[test]
    fn strict_reads_rfc8259_json() {
        let r = read_all(
            r#" {"a": [1, -2.5e3, true, null, "x\n\u00e9\ud83d\ude00"], "b": {}} "#,
            Strictness::Strict,
            true,
        )
        .unwrap();
        assert_eq!(
            r.value,
            json!({"a": [1, -2500.0, true, null, "x\né😀"], "b": {}})
        );
        assert!(r.repairs.is_empty());
        let r = read_all(r#"{"z": 1, "a": 2}"#, Strictness::Strict, true).unwrap();
        let keys: Vec<&String> = r.value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a"]);
    }

    #[test]
    fn integers_are_exact_when_they_fit() {
        let r = read_all(
            "[9223372036854775807, -9223372036854775808, 18446744073709551615, -0, 1.5e300]",
            Strictness::Strict,
            true,
        )
        .unwrap();
        assert_eq!(r.value[0].as_i64(), Some(i64::MAX));
        assert_eq!(r.value[1].as_i64(), Some(i64::MIN));
        assert_eq!(r.value[2].as_u64(), Some(u64::MAX));
        assert_eq!(r.value[3].as_i64(), Some(0));
        assert!(r.value[4].is_f64());
    }

    #[test]
    fn integers_beyond_64_bits_fail_closed_instead_of_rounding() {
        for text in ["[1, 18446744073709551616]", "[1, -9223372036854775809]"] {
            let e = read_all(text, Strictness::Lenient, true).unwrap_err();
            assert_eq!(e.kind, FailureKind::Malformed);
            assert_eq!(e.offset, 4);
            assert!(
                e.message.contains("does not fit in 64 bits"),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn numbers_that_would_round_fail_closed() {
        // The audit's probes (issue 9 item 1): each would execute with a
        // value the model never wrote.
        for (text, shown) in [
            ("1.9999999999999999", "2"),
            ("0.99999999999999999", "1"),
            ("9007199254740993.0", "9007199254740992"),
            ("1e-400", "0"),
            ("-1e-400", "-0"),
            ("4.9e-324", "`5e-324`"),
            ("0.1000000000000000000001", "0.1"),
        ] {
            let doc = format!("{{\"n\": {text}}}");
            let e = read_all(&doc, Strictness::Lenient, true).unwrap_err();
            assert_eq!(e.kind, FailureKind::Malformed, "{text}");
            assert_eq!(e.offset, 6, "{text}");
            assert!(
                e.message.contains("cannot be passed on exactly") && e.message.contains(shown),
                "{text}: {}",
                e.message
            );
        }
        // Exact literals pass, whatever their spelling.
        for (text, value) in [
            ("0.1", 0.1),
            ("1.50", 1.5),
            ("1.5e300", 1.5e300),
            ("-0.0", -0.0),
            ("0e7", 0.0),
            ("1E+2", 100.0),
            ("5e-324", 5e-324),
            ("9007199254740992.0", 9007199254740992.0),
            ("123.456e-2", 1.23456),
        ] {
            let r = read_all(text, Strictness::Strict, true).unwrap();
            assert_eq!(r.value.as_f64(), Some(value), "{text}");
        }
        let e = read_all("1e400", Strictness::Strict, true).unwrap_err();
        assert!(e.message.contains("out of range"), "{}", e.message);
    }

    #[test]
    fn running_out_is_truncated_at_end_of_output_else_malformed() {
        for text in [
            r#"{"a": "b"#,
            r#"{"a": 1"#,
            r#"{"a": tr"#,
            r#"{"a": -"#,
            r#"{"a": 1."#,
            r#"["#,
            r#"{"a""#,
            r#"{"a": "\u00"#,
            "",
            r#"{"a": "x\"#,
        ] {
            let f = fail(text, Strictness::Strict, true);
            assert_eq!(f.kind, FailureKind::Truncated, "{text}");
            assert_eq!(f.offset, text.len(), "{text}");
            let f = fail(text, Strictness::Lenient, false);
            assert_eq!(f.kind, FailureKind::Malformed, "{text}");
            assert_eq!(f.message, "payload ends before the value is complete");
        }
    }

    #[test]
    fn invalid_escape_is_escaping_and_lenient_repairs_it() {
        let f = fail(r#"{"q": "it\'s \d"}"#, Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 9));
        let r = read_all(r#"{"q": "it\'s \d"}"#, Strictness::Lenient, true).unwrap();
        assert_eq!(r.value["q"], "it's \\d");
        assert_eq!(r.repairs, vec![Repair::InvalidEscapes]);
    }

    #[test]
    fn bad_unicode_escape_and_lone_surrogate_are_escaping() {
        let f = fail(r#"["\u12G4"]"#, Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 2));
        let f = fail(r#"["\ud83d x"]"#, Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 2));
        let f = fail(r#"["\ude00"]"#, Strictness::Lenient, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 2));
    }

    #[test]
    fn raw_control_character_is_escaping_and_lenient_repairs_it() {
        let f = fail("{\"q\": \"a\nb\"}", Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 8));
        let r = read_all("{\"q\": \"a\nb\tc\"}", Strictness::Lenient, true).unwrap();
        assert_eq!(r.value["q"], "a\nb\tc");
        assert_eq!(r.repairs, vec![Repair::RawNewlines]);
    }

    #[test]
    fn unescaped_inner_quote_is_escaping() {
        let text = r#"{"q": "say "hi" now"}"#;
        let f = fail(text, Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 11));
        assert_eq!(
            fail(text, Strictness::Lenient, true).kind,
            FailureKind::Escaping
        );
        // A missing comma between members is not an inner quote.
        let f = fail("{\"a\": \"x\" \"b\": 1}", Strictness::Strict, true);
        assert_eq!(f.kind, FailureKind::Malformed);
    }

    #[test]
    fn an_inner_quote_needs_another_quote_before_the_line_ends() {
        // A quote after the line break does not make the first close an
        // inner quote: the member is just missing its comma (malformed).
        let f = fail("{\"a\": \"x\" b\n\"c\": 1}", Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Malformed, 10));
        let f = fail("{\"a\": \"x\" b\r\"c\": 1}", Strictness::Strict, true);
        assert_eq!(f.kind, FailureKind::Malformed);
        // Same line: escaping, at the early close.
        let f = fail("{\"a\": \"x\" b \"c\": 1}", Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 8));
    }

    #[test]
    fn single_quotes_are_malformed_and_lenient_repairs_them() {
        let f = fail("{'a': 'b'}", Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Malformed, 1));
        let r = read_all("{'a': 'it\"s'}", Strictness::Lenient, true).unwrap();
        assert_eq!(r.value, json!({"a": "it\"s"}));
        assert_eq!(r.repairs, vec![Repair::SingleQuotes]);
    }

    #[test]
    fn unquoted_keys_are_malformed_and_lenient_repairs_them() {
        let f = fail("{city: \"x\"}", Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Malformed, 1));
        let r = read_all("{city: \"x\", n_2: 1}", Strictness::Lenient, true).unwrap();
        assert_eq!(r.value, json!({"city": "x", "n_2": 1}));
        assert_eq!(r.repairs, vec![Repair::UnquotedKeys]);
    }

    #[test]
    fn python_literals_are_malformed_and_lenient_repairs_them() {
        let f = fail(r#"{"a": True}"#, Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Malformed, 6));
        let r = read_all(
            r#"{"a": True, "b": [False, None]}"#,
            Strictness::Lenient,
            true,
        )
        .unwrap();
        assert_eq!(r.value, json!({"a": true, "b": [false, null]}));
        assert_eq!(r.repairs, vec![Repair::PythonLiterals]);
    }

    #[test]
    fn trailing_commas_are_malformed_and_lenient_repairs_them() {
        let f = fail(r#"{"a": [1, 2,], }"#, Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Malformed, 11));
        let r = read_all(r#"{"a": [1, 2,], }"#, Strictness::Lenient, true).unwrap();
        assert_eq!(r.value, json!({"a": [1, 2]}));
        assert_eq!(r.repairs, vec![Repair::TrailingCommas]);
    }

    #[test]
    fn stray_fences_are_malformed_and_lenient_strips_them() {
        let text = "```json\n{\"a\": 1}\n```";
        let f = fail(text, Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Malformed, 0));
        let r = read_all(text, Strictness::Lenient, true).unwrap();
        assert_eq!(r.value, json!({"a": 1}));
        assert_eq!(r.repairs, vec![Repair::StrayFences]);
        let r = read_all("```\n[1]", Strictness::Lenient, true).unwrap();
        assert_eq!(r.value, json!([1]));
    }

    #[test]
    fn repairs_are_recorded_once_and_sorted() {
        let r = read_all("{b: 'x', 'c': True, d: [1,],}", Strictness::Lenient, true).unwrap();
        assert_eq!(
            r.repairs,
            vec![
                Repair::SingleQuotes,
                Repair::TrailingCommas,
                Repair::UnquotedKeys,
                Repair::PythonLiterals
            ]
        );
    }

    #[test]
    fn other_deviations_are_malformed_even_when_lenient() {
        for (text, offset) in [
            ("{\"a\": 1} // c", 9),
            ("{\"a\": 1 /* c */}", 8),
            ("{\"a\": 1} tail", 9),
            ("{\"a\": 1, \"a\": 2}", 9),
            ("[NaN]", 1),
            ("[Infinity]", 1),
            ("[-Infinity]", 1),
            ("[01]", 1),
            ("[+1]", 1),
            ("[.5]", 1),
        ] {
            for strictness in [Strictness::Strict, Strictness::Lenient] {
                let f = fail(text, strictness, true);
                assert_eq!(
                    (f.kind, f.offset),
                    (FailureKind::Malformed, offset),
                    "{text} {strictness:?}"
                );
            }
        }
    }

    #[test]
    fn depth_is_capped_without_recursion() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        let f = fail(&deep, Strictness::Strict, true);
        assert_eq!((f.kind, f.offset), (FailureKind::Malformed, MAX_DEPTH));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(read_all(&ok, Strictness::Strict, true).is_ok());
        let huge = "[".repeat(1_000_000);
        assert_eq!(
            fail(&huge, Strictness::Strict, true).kind,
            FailureKind::Malformed
        );
    }

    #[test]
    fn read_prefix_stops_after_one_value() {
        let r = read_prefix("  {\"a\": 1} and more", Strictness::Strict, false).unwrap();
        assert_eq!(r.value, json!({"a": 1}));
        assert_eq!(r.end, 10);
        let r = read_prefix("```json\n{\"a\": 1}\n``` then", Strictness::Lenient, false).unwrap();
        assert_eq!(r.end, 20);
        assert_eq!(r.repairs, vec![Repair::StrayFences]);
    }
}
