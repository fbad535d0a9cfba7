//! Number literals a parsed capture no longer holds.
//!
//! The importers read a capture into `serde_json` values, so a call whose
//! arguments the provider sent as a JSON object (Anthropic's `input`, an
//! OTel `tool_call` part's `arguments`, Ollama's object `arguments`) is
//! written back from floats: an integer beyond 64 bits
//! (`123456789012345678901234567890`) becomes `1.2345678901234568e+29`,
//! `1.9999999999999999` becomes `2.0`, `1e-400` becomes `0.0`. The `native`
//! mode then passes digits the model never wrote, where the same call
//! given as text is `malformed` (DECISIONS: an integer literal beyond 64
//! bits, a number a float would round). [`Literals`] keeps, for each such
//! literal of the capture's text, what the float is written as and the
//! literal itself, and [`Literals::restore`] puts the literal back into a
//! call's arguments, so that they are judged as written.

use serde_json::{Number, Value};
use std::collections::HashMap;

/// The capture's number literals that a float does not hold exactly,
/// keyed by the text `serde_json` writes for their float.
#[derive(Debug, Default)]
pub(crate) struct Literals(HashMap<String, String>);

/// Significant digits every decimal within the normal `f64` range keeps
/// through a float's shortest form; a literal with more may not.
const EXACT_DIGITS: usize = 15;

impl Literals {
    /// The literals of `text` (anywhere: a JSON document held as a string,
    /// as loggers and OTel attributes keep them, is read the same) that a
    /// float may not hold exactly: integers beyond 64 bits, and numbers of
    /// more than [`EXACT_DIGITS`] significant digits or outside the normal
    /// range. Literals a float holds are left out: their written form is
    /// theirs already.
    pub(crate) fn of(text: &str) -> Literals {
        let mut map = HashMap::new();
        for (at, end) in numbers(text) {
            // ASCII bytes only: `at..end` is on char boundaries.
            let literal = &text[at..end];
            if let Some(written) = lossy(literal) {
                map.entry(written).or_insert_with(|| literal.to_string());
            }
        }
        Literals(map)
    }

    /// Whether no literal needs restoring (the usual capture).
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `arguments` with each float written in place of a literal of the
    /// capture replaced by that literal; `None` when nothing changes. An
    /// object is written as its text first. One pass over the text, each
    /// number looked up (not one pass per literal: a capture of many
    /// literals and many calls stays linear).
    pub(crate) fn restore(&self, arguments: &Value) -> Option<String> {
        let written;
        let text = match arguments {
            Value::String(s) => s.as_str(),
            Value::Object(_) | Value::Array(_) => {
                written = arguments.to_string();
                written.as_str()
            }
            _ => return None,
        };
        let mut out = String::new();
        let mut copied = 0;
        for (at, end) in numbers(text) {
            if let Some(literal) = self.0.get(&text[at..end]) {
                out.push_str(&text[copied..at]);
                out.push_str(literal);
                copied = end;
            }
        }
        if copied == 0 {
            return None;
        }
        out.push_str(&text[copied..]);
        Some(out)
    }
}

/// The byte ranges of the number literals of `text` (not inside a word: a
/// digit after a letter, `_` or `.` starts none).
fn numbers(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let starts = b[i].is_ascii_digit()
                || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit));
            let after_word =
                i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.' || b[i - 1] == b'_');
            if !starts || after_word {
                i += 1;
                continue;
            }
            let start = i;
            let end = number_end(b, i);
            i = end.max(i + 1);
            return Some((start, end));
        }
        None
    })
}

/// The end of the number literal starting at `start` (sign, digits,
/// fraction, exponent).
fn number_end(b: &[u8], start: usize) -> usize {
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    i = digits(i);
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits(i + 1);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            i = digits(j);
        }
    }
    i
}

/// What `serde_json` writes for the float `literal` reads as, when a float
/// may not hold `literal` exactly and writes it otherwise.
fn lossy(literal: &str) -> Option<String> {
    let integer = !literal.contains(['.', 'e', 'E']);
    if integer && (literal.parse::<i64>().is_ok() || literal.parse::<u64>().is_ok()) {
        return None;
    }
    let f = literal.parse::<f64>().ok()?;
    let mantissa = literal
        .split(['e', 'E'])
        .next()
        .unwrap_or(literal)
        .trim_start_matches('-');
    let significant = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .skip_while(|d| *d == b'0')
        .collect::<Vec<_>>();
    let digits = significant.len() - significant.iter().rev().take_while(|d| **d == b'0').count();
    let suspect = integer
        || digits > EXACT_DIGITS
        || (f == 0.0 && digits > 0)
        || (f != 0.0 && !f.is_normal());
    if !suspect {
        return None;
    }
    let written = Number::from_f64(f)?.to_string();
    (written != literal).then_some(written)
}
