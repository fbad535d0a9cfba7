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
        let b = text.as_bytes();
        let mut map = HashMap::new();
        let mut i = 0;
        while i < b.len() {
            let starts = b[i].is_ascii_digit()
                || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit));
            let after_word = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.');
            if !starts || after_word {
                i += 1;
                continue;
            }
            let end = number_end(b, i);
            // ASCII bytes only: `i..end` is on char boundaries.
            let literal = &text[i..end];
            if let Some(written) = lossy(literal) {
                map.entry(written).or_insert_with(|| literal.to_string());
            }
            i = end.max(i + 1);
        }
        Literals(map)
    }

    /// Whether no literal needs restoring (the usual capture).
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `arguments` with each float written in place of a literal of the
    /// capture replaced by that literal; `None` when nothing changes. An
    /// object is written as its text first.
    pub(crate) fn restore(&self, arguments: &Value) -> Option<String> {
        let text = match arguments {
            Value::String(s) => s.clone(),
            Value::Object(_) | Value::Array(_) => arguments.to_string(),
            _ => return None,
        };
        let mut out = text.clone();
        for (written, literal) in &self.0 {
            out = replace_token(&out, written, literal);
        }
        (out != text).then_some(out)
    }
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

/// `text` with every occurrence of the number `token` (not part of a
/// longer number or word) replaced by `with`.
fn replace_token(text: &str, token: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(token) {
        let before = rest[..at].bytes().next_back();
        let after = rest[at + token.len()..].bytes().next();
        let number_byte = |c: u8| c.is_ascii_alphanumeric() || c == b'.' || c == b'-' || c == b'+';
        out.push_str(&rest[..at]);
        if before.is_some_and(number_byte) || after.is_some_and(number_byte) {
            out.push_str(token);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + token.len()..];
    }
    out.push_str(rest);
    out
}
