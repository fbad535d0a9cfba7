//! JSON text that serde_json writes back byte for byte.
//!
//! The recorder writes the client's request and the upstream's answer into
//! each line. Parsing them into a `Value` only to serialize the `Value`
//! again is most of what a line costs; when the text is already exactly
//! what serde_json writes for the `Value` it parses into (compact, serde's
//! escapes, serde's numbers, no repeated key), the text itself is written
//! and the line's bytes are the same. [`verbatim`] decides that in one pass
//! over the form of text that serde_json's parser has already accepted: the
//! request path read both bodies through it (every value checked as a
//! `Value` parse checks it) before they reach the recorder, so they are not
//! parsed a third time here (issue 24). Anything it is unsure of (a float
//! it would print otherwise, a `\u` escape of a printable character,
//! whitespace, an object with more keys than it compares) is refused, and
//! the caller parses and serializes as before. The property test
//! `verbatim_text_is_what_serde_writes` holds the two together on generated
//! and hostile text (through `tests::checked`: serde_json's parser first,
//! as the request path runs it, then the pass).

/// An object with more keys than this is not compared key by key (it is
/// refused: the caller parses it, which settles repeated keys its way).
const MAX_KEYS: usize = 64;

/// The bytes of a string looked at a word at a time before a search for
/// its end is set up (see [`string_end`]).
const SHORT: usize = 16;

/// Containers nest no deeper than this (serde_json's `Value` parse refuses
/// deeper text).
const MAX_DEPTH: usize = 127;

/// `text` as it is, when serializing the `Value` it parses into gives
/// `text` back exactly. `text` must be text that serde_json's parser
/// accepted whole (the pass checks its form, not its grammar): both bodies
/// the recorder is given were (see [`super::record::Client::Body`] and
/// `Attempt::response_body`).
pub(crate) fn verbatim(text: &[u8]) -> Option<&str> {
    form(text, &mut |_, _| {})
}

/// [`verbatim`], with `top` told the spans of an object's top-level keys and
/// values as the one pass over the form meets them.
fn form<'a>(
    text: &'a [u8],
    top: &mut dyn FnMut((usize, usize), (usize, usize)),
) -> Option<&'a str> {
    debug_assert!(
        serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok(),
        "verbatim is given text serde_json accepted"
    );
    let text = simdutf8::basic::from_utf8(text).ok()?;
    scan(text.as_bytes(), top).then_some(text)
}

/// A verbatim JSON object ([`verbatim`]) and the values of its top-level
/// keys, as raw text (the key as written, which is its text: a verbatim key
/// has only serde's escapes). Each value is a whole JSON value in serde's
/// form: a span of the checked whole.
pub(crate) struct Object<'a> {
    /// The whole object.
    pub whole: &'a str,
    top: Vec<(&'a str, &'a str)>,
}

impl<'a> Object<'a> {
    /// The value of top-level `key`, as raw text (checked with the whole).
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.top.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// [`verbatim`] of a JSON object, with its top-level values (the same
/// precondition: text serde_json's parser accepted).
pub(crate) fn verbatim_object(text: &[u8]) -> Option<Object<'_>> {
    if text.first() != Some(&b'{') {
        return None;
    }
    // A request has a handful of top-level members.
    let mut spans = Vec::with_capacity(16);
    let whole = form(text, &mut |key, value| spans.push((key, value)))?;
    let s = whole;
    let top = spans
        .into_iter()
        .map(|(k, v)| (&s[k.0..k.1], &s[v.0..v.1]))
        .collect();
    Some(Object { whole, top })
}

/// Whether `b` (valid JSON, checked by serde_json before) is in serde's
/// form; `top` gets the span of each top-level key (without its quotes) and
/// value of an object. One pass, no recursion: the containers open are a
/// stack of key lists, no deeper than serde_json's `Value` parse goes (a
/// raw value's check has no depth limit).
fn scan(b: &[u8], top: &mut dyn FnMut((usize, usize), (usize, usize))) -> bool {
    // Keys of the open objects (all in one list; each open container
    // remembers where its keys start, `None` for an array).
    // Sized for a chat request or answer, so that they are not grown on
    // the way (deeper or wider text grows them).
    let mut keys: Vec<&[u8]> = Vec::with_capacity(32);
    let mut open: Vec<Option<usize>> = Vec::with_capacity(16);
    // The next string is a key.
    let mut want_key = false;
    // The top-level key being read and where its value starts.
    let mut top_key = (0, 0);
    let mut top_value = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' | b'[' if open.len() >= MAX_DEPTH => return false,
            b'{' => {
                open.push(Some(keys.len()));
                want_key = true;
                i += 1;
            }
            b'[' => {
                open.push(None);
                i += 1;
            }
            c @ (b'}' | b']') => {
                if c == b'}' && open.len() == 1 && top_value > 0 {
                    top(top_key, (top_value, i));
                }
                if let Some(Some(start)) = open.pop() {
                    keys.truncate(start);
                }
                want_key = false;
                i += 1;
            }
            b',' => {
                if open.len() == 1 && top_value > 0 {
                    top(top_key, (top_value, i));
                }
                want_key = matches!(open.last(), Some(Some(_)));
                i += 1;
            }
            b':' => {
                if open.len() == 1 {
                    top_value = i + 1;
                }
                i += 1;
            }
            b'"' => {
                let Some(end) = string_end(b, i + 1) else {
                    return false;
                };
                if want_key {
                    let key = &b[i + 1..end];
                    let Some(Some(start)) = open.last() else {
                        return false;
                    };
                    let mine = &keys[*start..];
                    // serde_json's `Value` reads this key prefix as its own
                    // (a raw value's or a number's stand-in).
                    if mine.len() >= MAX_KEYS
                        || mine.contains(&key)
                        || key.starts_with(b"$serde_json::private::")
                    {
                        return false;
                    }
                    keys.push(key);
                    if open.len() == 1 {
                        top_key = (i + 1, end);
                    }
                    want_key = false;
                }
                i = end + 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                if !number(&b[start..i]) {
                    return false;
                }
            }
            // `true`, `false`, `null`: serde writes them as they are.
            b't' | b'f' | b'n' | b'r' | b'u' | b'e' | b'a' | b'l' | b's' => i += 1,
            // Whitespace between tokens (serde writes none), or anything
            // else: not serde's form.
            _ => return false,
        }
    }
    open.is_empty()
}

/// The index of the quote closing the string whose text starts at `i`,
/// when every escape in it is the one serde writes: `\"`, `\\`, `\b`, `\f`,
/// `\n`, `\r`, `\t`, and `\u00XX` (lowercase) for the other control
/// characters. Anything else is written raw by serde (`/`, DEL, any other
/// character).
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        // The text up to the next quote or backslash is written as it is.
        // Most strings of a request are short keys and names: their first
        // bytes are looked at a word at a time, and a search is set up only
        // past them.
        let rest = b.get(i..)?;
        i += match head(rest) {
            Ok(n) => n,
            Err(n) => n + memchr::memchr2(b'"', b'\\', &rest[n..])?,
        };
        if b[i] == b'"' {
            return Some(i);
        }
        match b.get(i + 1)? {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
            b'u' => {
                let hex = b.get(i + 2..i + 6)?;
                let lower = |c: u8| matches!(c, b'0'..=b'9' | b'a'..=b'f');
                if hex[0] != b'0'
                    || hex[1] != b'0'
                    || !matches!(hex[2], b'0' | b'1')
                    || !lower(hex[3])
                {
                    return None;
                }
                let v = (hex[2] - b'0') * 16
                    + if hex[3] <= b'9' {
                        hex[3] - b'0'
                    } else {
                        hex[3] - b'a' + 10
                    };
                // These five have their short escapes.
                if matches!(v, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                    return None;
                }
                i += 6;
            }
            _ => return None,
        }
    }
}

/// The index of the first `"` or `\\` in `rest`'s first [`SHORT`] bytes
/// (`Ok`), or how many bytes were looked at without one (`Err`: all of
/// `rest` when it is shorter). Eight bytes at a time: a byte equal to `c`
/// is a zero byte of the word XOR `c` in every byte, and the lowest byte
/// the zero-byte test flags is always a true zero (a borrow only runs
/// upwards), so the first match is exact.
fn head(rest: &[u8]) -> Result<usize, usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let mut n = 0;
    while n < SHORT {
        let Some(word) = rest.get(n..n + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) else {
            // Fewer than eight bytes left.
            return match rest[n..].iter().position(|&c| c == b'"' || c == b'\\') {
                Some(p) => Ok(n + p),
                None => Err(rest.len()),
            };
        };
        let w = u64::from_le_bytes(word);
        let hits = zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\')));
        if hits != 0 {
            return Ok(n + (hits.trailing_zeros() / 8) as usize);
        }
        n += 8;
    }
    Err(n)
}

/// Whether serde writes the number `tok` (a JSON number) back as `tok`:
/// an integer that fits `u64` or `i64` always is (but `-0`); anything else
/// is parsed and printed to see.
fn number(tok: &[u8]) -> bool {
    let (neg, digits) = match tok.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, tok),
    };
    let plain = digits.iter().all(u8::is_ascii_digit);
    if plain && !digits.is_empty() && (digits == b"0" || digits[0] != b'0') {
        if !neg && digits.len() <= 19 {
            return true;
        }
        if neg && digits.len() <= 18 && digits != b"0" {
            return true;
        }
    }
    let Ok(s) = std::str::from_utf8(tok) else {
        return false;
    };
    // (`Value == &str` would compare a JSON string with it: the text is
    // compared.)
    serde_json::from_str::<serde_json::Value>(s)
        .ok()
        .and_then(|v| serde_json::to_string(&v).ok())
        .is_some_and(|text| text == s)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    /// [`verbatim`] of any text: serde_json's parser first, as the request
    /// path runs it before the recorder sees a body.
    pub(super) fn checked(text: &[u8]) -> Option<&str> {
        serde_json::from_slice::<serde::de::IgnoredAny>(text).ok()?;
        verbatim(text)
    }

    /// The pass checks form, not grammar: text serde_json refuses is not
    /// its to judge, and a debug build says so at once.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "verbatim is given text serde_json accepted")]
    fn text_serde_refused_is_not_the_passs_to_judge() {
        // The pass alone would take it (its commas are not checked).
        let _ = verbatim(b"[1,]");
    }

    /// What serde writes of `text`, when it is JSON.
    fn rewritten(text: &[u8]) -> Option<Vec<u8>> {
        let v: Value = serde_json::from_slice(text).ok()?;
        serde_json::to_vec(&v).ok()
    }

    /// What [`verbatim`] may refuse although serde writes it back: more
    /// keys than it compares, serde_json's private key prefix.
    fn exempt(text: &[u8]) -> bool {
        text.iter().filter(|c| **c == b':').count() > MAX_KEYS
            || text.windows(22).any(|w| w == b"$serde_json::private::")
    }

    /// The rule: accepted exactly when serde writes the text back as it is
    /// (accepting less is allowed only for the named cases).
    fn check(text: &[u8]) {
        let back = rewritten(text);
        match checked(text) {
            Some(raw) => assert_eq!(
                back.as_deref(),
                Some(raw.as_bytes()),
                "accepted text serde writes otherwise: {:?}",
                String::from_utf8_lossy(text)
            ),
            None => {
                if let Some(back) = back {
                    // Refused although serde writes it back: only the
                    // named cases may be.
                    assert!(
                        back != text || exempt(text),
                        "refused text serde writes back as it is: {:?}",
                        String::from_utf8_lossy(text)
                    );
                }
            }
        }
    }

    #[test]
    fn serde_form_is_accepted_and_everything_else_refused() {
        for ok in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"x"}}"#,
            r#""\"\\\b\f\n\r\t\u0000\u001f\u007f/é😀""#,
            r#"[0,-1,18446744073709551615,-9223372036854775808,1.5,-0.0,1e300]"#,
            r#"{"$serde_json":1}"#,
            "[]",
            "{}",
            r#"[[],{},[{}]]"#,
            // Escapes before, at and past the bytes looked at one by one.
            r#"["0123456789abcde","0123456789abcdef","0123456789abcdefg"]"#,
            r#"{"0123456789abcdefghij\"\\\n\u0001k":"0123456789abcdef\t"}"#,
        ] {
            let accepted = checked(ok.as_bytes()).is_some();
            let same = rewritten(ok.as_bytes()).as_deref() == Some(ok.as_bytes());
            assert_eq!(accepted, same, "{ok}");
            check(ok.as_bytes());
        }
        for refused in [
            r#"{"a": 1}"#,
            " {}",
            "{}\n",
            r#"{"a":1,"a":2}"#,
            r#""\/""#,
            r#""\u00e9""#,
            r#""\u000a""#,
            r#""\u001F""#,
            r#""\ud83d\ude00""#,
            "1E5",
            "1.50",
            "-0",
            "1e400",
            "100000000000000000000",
            r#"{"$serde_json::private::RawValue":"1"}"#,
            "[1,]",
            r#""0123456789abcdefghij\u00e9""#,
            r#""0123456789abcdef\/""#,
            "\"\u{1}\"",
            "",
        ] {
            assert!(checked(refused.as_bytes()).is_none(), "{refused}");
            check(refused.as_bytes());
        }
        // Invalid UTF-8 in a string.
        assert!(checked(b"\"\xff\"").is_none());
        // Deeper than serde's parser goes.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(checked(deep.as_bytes()).is_none());
        for depth in 120..=135 {
            check(format!("{}{}", "[".repeat(depth), "]".repeat(depth)).as_bytes());
            check(format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)).as_bytes());
        }
        // Many keys: refused, not compared pairwise.
        let many = format!(
            "{{{}}}",
            (0..100)
                .map(|i| format!("\"k{i}\":{i}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(checked(many.as_bytes()).is_none());
    }

    /// A body as the OpenAI Python SDK writes it (`json.dumps(...,
    /// ensure_ascii=False, separators=(",", ":"))`, printed by Python 3.11)
    /// is serde's form: it is written as it came.
    #[test]
    fn the_openai_python_sdks_bodies_are_serdes_form() {
        let body = r#"{"messages":[{"role":"system","content":"Tu es \"utile\".\nRéponds\tcourt. \u0001 😀 </tag> a/b"},{"role":"user","content":"Météo à Anvers ?"}],"model":"qwen3-8b","temperature":0.7,"top_p":1.0,"max_tokens":256,"stream":false,"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],"tool_choice":"auto"}"#;
        let o = verbatim_object(body.as_bytes()).unwrap();
        assert_eq!(rewritten(body.as_bytes()).unwrap(), body.as_bytes());
        assert_eq!(o.get("tool_choice"), Some("\"auto\""));
        // Python's default separators (`", "`, `": "`) are not.
        let spaced = body.replace("\",\"", "\", \"");
        assert!(checked(spaced.as_bytes()).is_none());
    }

    #[test]
    fn top_level_values_are_their_spans() {
        let text =
            br#"{"model":"m","tools":[{"a":{"b":[1,2]}}],"tool_choice":"auto","n":{},"s":"x,}"}"#;
        let o = verbatim_object(text).unwrap();
        assert_eq!(o.get("model"), Some("\"m\""));
        assert_eq!(o.get("tools"), Some(r#"[{"a":{"b":[1,2]}}]"#));
        assert_eq!(o.get("tool_choice"), Some("\"auto\""));
        assert_eq!(o.get("n"), Some("{}"));
        assert_eq!(o.get("s"), Some("\"x,}\""));
        assert_eq!(o.get("functions"), None);
        assert_eq!(o.whole.as_bytes(), text);
        assert!(verbatim_object(b"[1]").is_none());
        assert!(verbatim_object(b"{}").unwrap().get("a").is_none());
    }

    /// JSON text in many forms: serde's and others (whitespace, escapes,
    /// number spellings, repeated keys).
    fn text() -> impl Strategy<Value = String> {
        let ws = prop_oneof![Just(""), Just(""), Just(""), Just(" "), Just("\n")];
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| format!("{f}")),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| format!("{f:e}")),
            prop_oneof![
                Just("0.10"),
                Just("-0"),
                Just("1E2"),
                Just("2.0"),
                Just("1e-7"),
                Just("0.0")
            ]
            .prop_map(str::to_string),
            "[a-c\"\\\\/\u{0}-\u{1f}\u{7f}é😀]{0,6}"
                .prop_map(|s| serde_json::to_string(&s).unwrap()),
            prop_oneof![
                Just(r#""\/""#),
                Just(r#""\u0041""#),
                Just(r#""\u000a""#),
                Just(r#""\u001b""#),
                Just(r#""\u001B""#),
                Just(r#""\ud83d\ude00""#),
            ]
            .prop_map(str::to_string),
        ];
        leaf.prop_recursive(4, 32, 5, move |inner| {
            let ws = ws.clone();
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..5), ws.clone())
                    .prop_map(|(items, w)| format!("[{w}{}]", items.join(","))),
                (
                    prop::collection::vec(
                        (
                            prop_oneof![
                                Just("a"),
                                Just("b"),
                                Just("c\\n"),
                                Just("$serde_json::private::RawValue")
                            ],
                            inner
                        ),
                        0..4
                    ),
                    ws
                )
                    .prop_map(|(items, w)| {
                        let fields: Vec<String> = items
                            .iter()
                            .map(|(k, v)| format!("\"{k}\":{w}{v}"))
                            .collect();
                        format!("{{{}}}", fields.join(","))
                    }),
            ]
        })
    }

    proptest! {
        /// The word-at-a-time search finds what a byte-by-byte one finds,
        /// with the bytes one above a quote or backslash (`#`, `]`: where
        /// the zero-byte test can flag a byte that is not one) beside them.
        #[test]
        fn the_head_search_is_the_byte_search(
            rest in proptest::collection::vec(
                proptest::sample::select(vec![b'"', b'\\', b'#', b']', b'a', 0x80, 0x00, 0x01, 0xff]),
                0..40,
            ),
        ) {
            let h = rest.len().min(SHORT);
            let want = rest[..h].iter().position(|&c| c == b'"' || c == b'\\').ok_or(h);
            prop_assert_eq!(head(&rest), want);
        }

        #[test]
        fn verbatim_text_is_what_serde_writes(t in text()) {
            check(t.as_bytes());
            // serde's own output of it is always accepted (when it has no
            // more keys than compared).
            if let Some(back) = rewritten(t.as_bytes()).filter(|b| !exempt(b)) {
                prop_assert!(checked(&back).is_some(), "{}", String::from_utf8_lossy(&back));
            }
        }
    }
}
