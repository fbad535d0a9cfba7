//! Making untrusted text safe to put on a terminal.
//!
//! Transcripts are model output: they may carry ANSI escape sequences, C1
//! controls, bidi overrides or invisible characters. Everything that reaches a
//! screen goes through [`visible`], which keeps `\n` (and `\t` as spaces when
//! asked) and turns every other unsafe character into a visible escape such as
//! `\x1b` or `\u{200b}`.
//!
//! Unsafe means: C0 and C1 controls and DEL (they drive the terminal), bidi
//! controls (U+061C, U+200E/U+200F, U+202A–U+202E, U+2066–U+2069: they
//! reorder what is shown), invisible characters (U+200B–U+200D zero-width
//! space/joiners, U+2060–U+206F word joiner and invisible operators, U+FEFF
//! zero-width no-break space, U+E0000–U+E007F tag characters, and those that
//! draw nothing a reader can tell apart: U+00AD soft hyphen, U+034F combining
//! grapheme joiner, the Hangul fillers U+115F/U+1160/U+3164/U+FFA0, U+17B4/
//! U+17B5, U+180B–U+180F, U+2800 braille blank, the variation selectors
//! U+FE00–U+FE0F and U+E0100–U+E01EF, U+FFF9–U+FFFB) and the line and
//! paragraph separators U+2028/U+2029 (some terminals break the line). So
//! `get_weather\u{200b}` and `get_weather` never look the same.

use serde_json::{Value, json};
use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must never be written raw to a terminal.
pub fn is_unsafe(c: char) -> bool {
    let u = c as u32;
    if u < 0x20 {
        return c != '\n' && c != '\t';
    }
    if u < 0x7f {
        // Printable ASCII: the common case, decided in one comparison.
        return false;
    }
    (0x7f..=0x9f).contains(&u)
        // Arabic letter mark (a bidi control)
        || u == 0x061c
        // zero-width space, joiners, LRM/RLM
        || (0x200b..=0x200f).contains(&u)
        // line and paragraph separators
        || u == 0x2028
        || u == 0x2029
        // bidi embedding/override controls
        || (0x202a..=0x202e).contains(&u)
        // word joiner, invisible operators, bidi isolates, deprecated formats
        || (0x2060..=0x206f).contains(&u)
        // zero-width no-break space (BOM)
        || u == 0xfeff
        // tag characters
        || (0xe0000..=0xe007f).contains(&u)
        // Characters that draw nothing (or nothing a terminal draws) where
        // a reader sees no difference: soft hyphen, combining grapheme
        // joiner, Hangul fillers, Khmer inherent vowels, Mongolian
        // variation selectors and vowel separator, variation selectors,
        // interlinear annotation marks, the braille blank.
        || u == 0x00ad
        || u == 0x034f
        || u == 0x115f
        || u == 0x1160
        || u == 0x17b4
        || u == 0x17b5
        || (0x180b..=0x180f).contains(&u)
        || u == 0x2800
        || u == 0x3164
        || (0xfe00..=0xfe0f).contains(&u)
        || u == 0xffa0
        || (0xfff9..=0xfffb).contains(&u)
        || (0xe0100..=0xe01ef).contains(&u)
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

/// Untrusted text as a table cell or a line of a report: [`one_line`], at
/// most `max` characters (cut with `…`).
pub fn cell(text: &str, max: usize) -> String {
    let safe = one_line(text);
    if safe.chars().count() <= max {
        return safe.into_owned();
    }
    let mut out: String = safe.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The entity that stands for `c` in markdown meant for GitHub (a PR
/// comment, a step summary): `<`, `>` and `&` would open raw HTML or an
/// entity there. `None` for every other character.
fn markdown_entity(c: char) -> Option<&'static str> {
    match c {
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '&' => Some("&amp;"),
        _ => None,
    }
}

/// Untrusted one-line text (already [`one_line`]) as markdown inline text
/// meant for GitHub (a PR comment, a step summary): a table cell or a line
/// of a report. Every character markdown reads as syntax (`|`, which would
/// end a cell, `\`, `*`, `_`, `[`, `]`, `` ` ``, `#`, `~`) is escaped with a
/// backslash, `@` is `&#64;` (no mention), and `<`, `>`, `&` are entities
/// (no raw HTML): a model named `[x](http://e)` is text, not a link. The
/// one rule for every markdown toolgate writes: `label --check`'s review
/// and the `label`, `matrix` and `--compare` tables.
pub fn markdown_text(text: &str) -> Cow<'_, str> {
    const SYNTAX: [char; 13] = [
        '|', '\\', '*', '_', '[', ']', '`', '#', '~', '@', '<', '>', '&',
    ];
    if !text.contains(SYNTAX) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '|' | '\\' | '*' | '_' | '[' | ']' | '`' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '@' => out.push_str("&#64;"),
            c => match markdown_entity(c) {
                Some(entity) => out.push_str(entity),
                None => out.push(c),
            },
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

/// The bytes an unsafe character's UTF-8 can begin with: C0 controls and
/// DEL, `C2` (C1 controls, U+00AD), `CD` (U+034F), `D8` (U+061C), `E1`
/// (Hangul fillers, Khmer and Mongolian invisibles), `E2` (the
/// U+200x/U+206x formats, U+2800), `E3` (U+3164), `EF` (U+FEFF, variation
/// selectors, U+FFA0), `F3` (tag characters, variation selectors
/// supplement): a scan for unsafe
/// characters decodes only at these bytes. A test checks every character
/// [`is_unsafe`] accepts against it.
pub const MAY_START_UNSAFE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[0x7f] = true;
    t[0xc2] = true;
    t[0xcd] = true;
    t[0xd8] = true;
    t[0xe1] = true;
    t[0xe2] = true;
    t[0xe3] = true;
    t[0xef] = true;
    t[0xf3] = true;
    t
};

/// What a credential's value is replaced by (in an imported capture's
/// carried members, in the proxy's recorded request).
pub const REDACTED: &str = "[redacted]";

/// `url` as a banner or a log may show it: the `user:password@` of its
/// authority is `***@` and its query `?***` (both may hold a credential:
/// an OTLP endpoint's `?key=`, an upstream's basic auth); the fragment is
/// dropped. Text that is not a URL is returned as it is.
pub fn url_shown(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let after = scheme_end + 3;
    let authority_end = url[after..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after + i);
    let mut out = match url[after..authority_end].rfind('@') {
        Some(at) => format!(
            "{}***@{}",
            &url[..after],
            &url[after + at + 1..authority_end]
        ),
        None => url[..authority_end].to_string(),
    };
    let rest = &url[authority_end..];
    let rest = rest.split('#').next().unwrap_or("");
    match rest.split_once('?') {
        Some((path, _)) => {
            out.push_str(path);
            out.push_str("?***");
        }
        None => out.push_str(rest),
    }
    out
}

/// Whether a member named `key` holds a credential. The name is read in
/// words: split at `_`, `-`, `.` and at a lower-case letter followed by an
/// upper-case one (`accessToken` is `access token`), compared in lower case.
/// A credential's name is one of `authorization`, `cookie`, `bearer`,
/// `credential(s)`, `auth`, `token`, `apikey`, `passwd` (`proxy-authorization`,
/// `set-cookie`, `Helicone-Auth`, `vertex_credentials`, `accessToken`), holds
/// the word `secret` or `password` (`client_secret`,
/// `aws_secret_access_key`, `db_password`), or ends in a key of an access
/// kind (`api_key`, `x-goog-api-key`, `Ocp-Apim-Subscription-Key`,
/// `private_key`). The word `token` is not a credential after a word that
/// makes it a model's token or a cursor (`eos_token`, `pad_token`,
/// `time_to_first_token`, `next_page_token`), nor `tokens` (`max_tokens`).
pub fn is_credential_key(key: &str) -> bool {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if matches!(c, '_' | '-' | '.' | ' ') {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    let Some(last) = words.last().map(String::as_str) else {
        return false;
    };
    let before = words
        .len()
        .checked_sub(2)
        .and_then(|i| words.get(i))
        .map(String::as_str);
    if words
        .iter()
        .any(|w| matches!(w.as_str(), "secret" | "password" | "passwd"))
    {
        return true;
    }
    match last {
        "authorization" | "cookie" | "bearer" | "credential" | "credentials" | "auth"
        | "apikey" | "passwd" => true,
        "token" => !matches!(
            before,
            Some(
                "eos"
                    | "bos"
                    | "pad"
                    | "unk"
                    | "sep"
                    | "cls"
                    | "mask"
                    | "first"
                    | "last"
                    | "num"
                    | "page"
                    | "special"
                    | "stop"
                    | "end"
                    | "start"
            )
        ),
        "key" => matches!(
            before,
            Some(
                "api"
                    | "access"
                    | "secret"
                    | "private"
                    | "subscription"
                    | "signing"
                    | "encryption"
                    | "auth"
                    | "session"
                    | "master"
                    | "client"
                    | "service"
            )
        ),
        _ => false,
    }
}

/// Whether `v` names a credential ([`is_credential_key`]) in one of its
/// objects, at any depth, outside its top-level members `skip`; a
/// credential's value that says nothing (`null`, a boolean) does not count.
pub fn value_names_credential(v: &Value, skip: &[&str]) -> bool {
    // `skip` applies at the top only; the walk is bounded as the redaction's.
    fn names(v: &Value, skip: &[&str], depth: usize) -> bool {
        let inner = |v: &Value| depth < MAX_REDACT_DEPTH && names(v, &[], depth + 1);
        match v {
            Value::Object(m) => m.iter().any(|(k, v)| {
                !skip.contains(&k.as_str())
                    && ((is_credential_key(k) && says_something(v)) || inner(v))
            }),
            Value::Array(items) => items.iter().any(inner),
            _ => false,
        }
    }
    names(v, skip, 0)
}

/// Whether a credential-named member's value could hold a secret: not
/// `null`, not a boolean (`has_secret: false` says nothing).
pub fn says_something(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(_))
}

/// Whether the JSON object `body` names a credential ([`is_credential_key`])
/// anywhere outside its top-level members `skip` (schemas, whose
/// `password` properties are parameters): read as keys only, escapes
/// decoded, nothing built. A body that is not a JSON object, or not JSON,
/// counts as holding one (the caller then takes its careful path).
pub fn holds_credential_key(body: &[u8], skip: &[&str]) -> bool {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    struct Keys<'s> {
        skip: &'s [&'s str],
        top: bool,
    }
    struct Found;
    impl std::fmt::Display for Found {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a credential")
        }
    }
    impl<'de> serde::de::DeserializeSeed<'de> for Keys<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Keys<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let inner = || Keys {
                skip: self.skip,
                top: false,
            };
            while seq.next_element_seed(inner())?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                if is_credential_key(&key) {
                    return Err(serde::de::Error::custom(Found));
                }
                if self.top && self.skip.contains(&key.as_ref()) {
                    map.next_value::<IgnoredAny>()?;
                } else {
                    map.next_value_seed(Keys {
                        skip: self.skip,
                        top: false,
                    })?;
                }
            }
            Ok(())
        }
    }
    /// A key, borrowed from the body unless it holds an escape.
    struct Key<'de>(std::borrow::Cow<'de, str>);
    impl<'de> serde::Deserialize<'de> for Key<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Key<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a key")
                }
                fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                    Ok(Key(std::borrow::Cow::Borrowed(s)))
                }
                fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                    Ok(Key(std::borrow::Cow::Owned(s.to_string())))
                }
            }
            d.deserialize_str(V)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    de.deserialize_map(Keys { skip, top: true }).is_err()
}

/// Deepest nesting [`redact_credentials`] walks; a deeper value is replaced whole (a
/// capture this deep is not a logger's metadata, and the walk stays bounded).
const MAX_REDACT_DEPTH: usize = 64;

/// The member `key` holding `v` (at `path`, `depth` deep): replaced by
/// [`REDACTED`] when it names a credential and its value says something,
/// else the credentials inside it ([`redact_credentials`]); each path
/// replaced is pushed. The one rule of the importer's carried members, the
/// proxy's recorded request and every object this walk meets.
pub fn redact_member(
    key: &str,
    v: &mut Value,
    path: &str,
    redacted: &mut Vec<Value>,
    depth: usize,
) {
    if is_credential_key(key) && says_something(v) {
        *v = json!(REDACTED);
        redacted.push(json!(path));
    } else {
        redact_credentials(v, path, redacted, depth);
    }
}

/// Replaces the values of credential-named members inside `v` (at `path`)
/// by [`REDACTED`], pushing each one's path.
pub fn redact_credentials(v: &mut Value, path: &str, redacted: &mut Vec<Value>, depth: usize) {
    if depth >= MAX_REDACT_DEPTH && (v.is_object() || v.is_array()) {
        *v = json!(REDACTED);
        redacted.push(json!(path));
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, inner) in m.iter_mut() {
                redact_member(k, inner, &format!("{path}.{k}"), redacted, depth + 1);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter_mut().enumerate() {
                redact_credentials(inner, &format!("{path}[{i}]"), redacted, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn a_url_is_shown_without_its_user_password_and_query() {
        let cases = [
            ("http://u:p@h:1/v1?key=s#frag", "http://***@h:1/v1?***"),
            ("http://h:1/v1/traces?key=s", "http://h:1/v1/traces?***"),
            ("https://h/v1", "https://h/v1"),
            ("http://a@b@h?x", "http://***@h?***"),
            ("http://h", "http://h"),
            ("not a url", "not a url"),
        ];
        for (url, shown) in cases {
            assert_eq!(url_shown(url), shown, "{url}");
        }
    }

    use super::*;

    #[test]
    fn a_cell_is_one_line_and_cut_with_an_ellipsis() {
        assert_eq!(cell("a\nb\u{1b}", 20), "a\\nb\\x1b");
        assert_eq!(cell("abcdef", 4), "abc…");
        assert_eq!(cell("abcd", 4), "abcd");
    }

    #[test]
    fn markdown_text_holds_no_html_and_no_cell_break() {
        assert_eq!(
            markdown_text("<script>a|b</script> & c"),
            "&lt;script&gt;a\\|b&lt;/script&gt; &amp; c"
        );
        assert!(matches!(markdown_text("plain-name 1.0"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_unsafe_character_begins_with_a_byte_a_scan_stops_at() {
        let mut buf = [0u8; 4];
        for c in (0..=0x10ffff_u32).filter_map(char::from_u32) {
            if is_unsafe(c) {
                let first = c.encode_utf8(&mut buf).as_bytes()[0];
                assert!(MAY_START_UNSAFE[usize::from(first)], "{c:?}");
            }
        }
    }

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(visible("a\u{1b}[31mred\u{7}"), "a\\x1b[31mred\\x07");
        assert_eq!(visible("\u{202e}abc"), "\\u{202e}abc");
        assert_eq!(visible("line\nnext\tx"), "line\nnext\tx");
        assert_eq!(one_line("a\nb\r"), "a\\nb\\x0d");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
    }

    /// The sixth probe (stop 42): names that merely held `secret` or ended
    /// in `_token` were redacted (`secretary`, `time_to_first_token`,
    /// `eos_token`), while camel-case and header names were not
    /// (`accessToken`, `Helicone-Auth`, `Ocp-Apim-Subscription-Key`).
    #[test]
    fn credential_names_are_read_in_words() {
        for secret in [
            "authorization",
            "Proxy-Authorization",
            "cookie",
            "Set-Cookie",
            "password",
            "db_password",
            "passwd",
            "secret",
            "client_secret",
            "aws_secret_access_key",
            "api_key",
            "apiKey",
            "x-api-key",
            "X-Goog-Api-Key",
            "apikey",
            "user_api_key",
            "Ocp-Apim-Subscription-Key",
            "private_key",
            "token",
            "access_token",
            "accessToken",
            "authToken",
            "sessionToken",
            "idToken",
            "azure_ad_token",
            "Helicone-Auth",
            "x-auth",
            "auth",
            "bearer",
            "credentials",
            "vertex_credentials",
        ] {
            assert!(is_credential_key(secret), "{secret}");
        }
        for plain in [
            "secretary",
            "max_tokens",
            "token_count",
            "prompt_tokens",
            "tokenizer",
            "eos_token",
            "bos_token",
            "pad_token",
            "time_to_first_token",
            "next_page_token",
            "page_token",
            "num_token",
            "keyword",
            "key",
            "monkey",
            "author",
            "authority",
            "cookies_enabled",
            "model",
            "messages",
        ] {
            assert!(!is_credential_key(plain), "{plain}");
        }
        // A value that says nothing is not a secret.
        let v = json!({"has_secret": false, "password": null, "meta": {"token": "ghp_x"}});
        assert!(value_names_credential(&v, &[]));
        assert!(!value_names_credential(&json!({"has_secret": false}), &[]));
        let tools = json!({"tools": [{"parameters": {"properties": {"password": {}}}}]});
        assert!(!value_names_credential(&tools, &["tools"]));
        assert!(value_names_credential(&tools, &[]));
        assert!(holds_credential_key(br#"{"m":{"\u0061uth":"x"}}"#, &[]));
        assert!(!holds_credential_key(
            br#"{"tools":{"password":{}},"m":1}"#,
            &["tools"]
        ));
    }

    #[test]
    fn invisible_and_bidi_characters_become_visible() {
        // Each of these used to reach the screen raw.
        for (c, shown) in [
            ('\u{061c}', "\\u{061c}"),
            ('\u{200b}', "\\u{200b}"),
            ('\u{200c}', "\\u{200c}"),
            ('\u{200d}', "\\u{200d}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{2029}', "\\u{2029}"),
            ('\u{2060}', "\\u{2060}"),
            ('\u{2064}', "\\u{2064}"),
            ('\u{feff}', "\\u{feff}"),
            ('\u{e0001}', "\\u{e0001}"),
            ('\u{e0041}', "\\u{e0041}"),
            ('\u{e007f}', "\\u{e007f}"),
            // The fifth probe (stop 42): these drew nothing on screen, so
            // `get_wea\u{ad}ther\u{34f}` looked like `get_weather`.
            ('\u{00ad}', "\\xad"),
            ('\u{034f}', "\\u{034f}"),
            ('\u{115f}', "\\u{115f}"),
            ('\u{3164}', "\\u{3164}"),
            ('\u{180e}', "\\u{180e}"),
            ('\u{fe0f}', "\\u{fe0f}"),
            ('\u{e0100}', "\\u{e0100}"),
        ] {
            assert!(is_unsafe(c), "{:x}", c as u32);
            assert_eq!(visible(&format!("a{c}b")), format!("a{shown}b"));
            assert_eq!(one_line(&format!("{c}")), shown);
        }
        // A name with a zero-width space never looks like the plain name.
        assert_ne!(visible("get_weather\u{200b}"), visible("get_weather"));
        assert_eq!(visible("get_weather\u{200b}"), "get_weather\\u{200b}");
        // Ordinary non-ASCII text is untouched: é, CJK, emoji, ZWJ-free.
        for s in ["café", "天気", "🌤", "Ünïcödé", "\u{2027}\u{2030}\u{e0080}"] {
            assert!(matches!(visible(s), Cow::Borrowed(_)), "{s}");
        }
    }
}
