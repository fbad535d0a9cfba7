//! Making untrusted text safe to put on a terminal.
//!
//! Transcripts are model output: they may carry ANSI escape sequences, C1
//! controls or bidi overrides. Everything that reaches a screen goes through
//! [`visible`], which keeps `\n` (and `\t` as spaces when asked) and turns every
//! other control character into a visible escape such as `\x1b`.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must never be written raw to a terminal.
pub fn is_unsafe(c: char) -> bool {
    let u = c as u32;
    (u < 0x20 && c != '\n' && c != '\t')
        || (0x7f..=0x9f).contains(&u)
        // bidi embedding/override/isolate controls can reorder what is shown
        || (0x202a..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
        || c == '\u{200e}'
        || c == '\u{200f}'
}

/// `text` with every unsafe character replaced by a visible escape
/// (`\x1b`, `\u{202e}`); `\n` and `\t` are kept.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

/// Like [`visible`], but also shows `\n`, `\r` and `\t` as escapes: for
/// one-line cells (ids, names, table columns).
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) || c == '\n' || c == '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => push_visible(&mut out, c),
        }
    }
    Cow::Owned(out)
}

fn push_visible(out: &mut String, c: char) {
    if !is_unsafe(c) {
        out.push(c);
    } else if (c as u32) < 0x100 {
        // Writing into a String cannot fail.
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:04x}}}", c as u32);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(visible("a\u{1b}[31mred\u{7}"), "a\\x1b[31mred\\x07");
        assert_eq!(visible("\u{202e}abc"), "\\u{202e}abc");
        assert_eq!(visible("line\nnext\tx"), "line\nnext\tx");
        assert_eq!(one_line("a\nb\r"), "a\\nb\\x0d");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
    }
}
