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
    let Some((after, authority_end)) = url_authority(url, 0) else {
        return url.to_string();
    };
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

/// `text` with its `%XX` escapes decoded (URL user information, query
/// values, OTLP header values); `None` when a `%` is not followed by two
/// hex digits or the bytes are not UTF-8 (callers then keep or skip the
/// raw text, as the reader they mirror does).
pub fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Where the authority of the URL whose `://` is the first at or after
/// `from` in `url` starts and ends (the byte after `://`; the first `/`,
/// `?`, `#` or the end): `None` without a `://`.
fn url_authority(url: &str, from: usize) -> Option<(usize, usize)> {
    let after = from + url.get(from..)?.find("://")? + 3;
    let authority_end = url[after..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after + i);
    Some((after, authority_end))
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
    // The words as ranges of `key`, compared without regard to ASCII case:
    // no word is built (this runs on every key and short string of every
    // recorded request). Lower-casing a non-ASCII letter can give an ASCII
    // one (the Kelvin sign is `k`), so a name that is not ASCII is read
    // with the words lower-cased.
    if !key.is_ascii() {
        return credential_words(&lowered_words(key));
    }
    let b = key.as_bytes();
    let mut words = Words::default();
    let mut start: Option<usize> = None;
    let mut prev_lower = false;
    for (i, &c) in b.iter().enumerate() {
        if matches!(c, b'_' | b'-' | b'.' | b' ') {
            if let Some(s) = start.take() {
                words.push(&key[s..i]);
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase()
            && prev_lower
            && let Some(s) = start.take()
        {
            words.push(&key[s..i]);
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        start.get_or_insert(i);
    }
    if let Some(s) = start {
        words.push(&key[s..]);
    }
    words.credential()
}

/// The words of a credential's name that decide ([`is_credential_key`]):
/// whether any is `secret`, `password` or `passwd`, the last and the one
/// before it.
#[derive(Default)]
struct Words<'a> {
    secret: bool,
    before: Option<&'a str>,
    last: Option<&'a str>,
}

impl<'a> Words<'a> {
    fn push(&mut self, word: &'a str) {
        self.secret |= one_of(word, &["secret", "password", "passwd"]);
        self.before = self.last.replace(word);
    }

    fn credential(&self) -> bool {
        let Some(last) = self.last else {
            return false;
        };
        if self.secret {
            return true;
        }
        let before = self.before.unwrap_or("");
        if one_of(
            last,
            &[
                "authorization",
                "cookie",
                "bearer",
                "credential",
                "credentials",
                "auth",
                "apikey",
                "passwd",
            ],
        ) {
            return true;
        }
        if last.eq_ignore_ascii_case("token") {
            return !one_of(
                before,
                &[
                    "eos", "bos", "pad", "unk", "sep", "cls", "mask", "first", "last", "num",
                    "page", "special", "stop", "end", "start",
                ],
            );
        }
        last.eq_ignore_ascii_case("key")
            && one_of(
                before,
                &[
                    "api",
                    "access",
                    "secret",
                    "private",
                    "subscription",
                    "signing",
                    "encryption",
                    "auth",
                    "session",
                    "master",
                    "client",
                    "service",
                ],
            )
    }
}

/// Whether `word` is one of `words` (ASCII case ignored).
fn one_of(word: &str, words: &[&str]) -> bool {
    words.iter().any(|w| word.eq_ignore_ascii_case(w))
}

/// The words of a name that is not ASCII, lower-cased (Unicode's rule):
/// split at `_`, `-`, `.`, ` ` and before an upper-case letter that follows
/// a lower-case one or a digit.
fn lowered_words(key: &str) -> Vec<String> {
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
    words
}

/// [`Words::credential`] of words already cut and lower-cased.
fn credential_words(words: &[String]) -> bool {
    let mut w = Words::default();
    for word in words {
        w.push(word);
    }
    w.credential()
}

/// Members whose values are the data toolgate judges, replays or checks
/// against: the conversation (`messages`, `contents`, `prompt`, `system`),
/// the model's answer (`content`, `output`, `text`, `reasoning`,
/// `reasoning_content`), its calls (`tool_calls`, `function_call`,
/// `arguments`, `input`) and the tool definitions (`tools`, `functions`,
/// `parameters`). Inside them only a member's *name* makes a credential
/// ([`is_credential_key`], as before); what a value looks like
/// ([`credential_text`], a header pair, a plain `key`) is not read there: a
/// model that writes `Bearer abc123…`, or fills a form tool's
/// `{"name": "password", "value": …}`, is scored on what it wrote, and a
/// prompt a suite sends again is sent as it was.
const DATA_MEMBERS: &[&str] = &[
    "messages",
    "contents",
    "prompt",
    "system",
    "content",
    "output",
    "text",
    "reasoning",
    "reasoning_content",
    "tool_calls",
    "function_call",
    "arguments",
    "input",
    "tools",
    "functions",
    "parameters",
];

/// Whether the member `key` of an object holding `v` is a credential as a
/// whole: its name is one ([`is_credential_key`]), or, where values are
/// read (`shapes`, outside [`DATA_MEMBERS`]), it is a plain `key` holding a
/// string in an object that is not a key/value pair (`in_pair`: it has a
/// `value` member, as OTel attributes and tag lists do) — LiteLLM's and
/// many clients' `{"key": "sk-…"}`. `is_credential_key` leaves `key`
/// alone: it names a cache key, a keyboard key, an attribute's name.
/// A value that says nothing ([`says_something`]) is never one.
fn is_credential_member(key: &str, v: &Value, shapes: bool, in_pair: bool) -> bool {
    says_something(v)
        && (is_credential_key(key)
            || (shapes && !in_pair && v.is_string() && key.eq_ignore_ascii_case("key")))
}

/// Whether the object `m` is a header as HAR and OTel attribute lists
/// write one, its name a sibling value of the credential:
/// `{"name": "Authorization", "value": "Bearer …"}`,
/// `{"key": "http.request.header.authorization", "value": …}`. Its `value`
/// is then the credential.
fn names_its_value_a_credential(m: &serde_json::Map<String, Value>) -> bool {
    m.get("value").is_some_and(says_something)
        && ["name", "key"].iter().any(|k| {
            m.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|n| n.len() <= MAX_HEADER_NAME && is_credential_key(n))
        })
}

/// Whether the array `items` is a header as mitmproxy's and Python's
/// header lists write one, `["Authorization", "Bearer …"]`: two items, the
/// first a credential's name ([`is_credential_key`]). Its second item is
/// then the credential.
fn is_credential_header_pair(items: &[Value]) -> bool {
    matches!(items, [Value::String(name), value]
        if name.len() <= MAX_HEADER_NAME && is_credential_key(name) && says_something(value))
}

/// The longest text read as a header's or a query parameter's name: a
/// longer string is prose, and splitting it into words is not free.
const MAX_HEADER_NAME: usize = 64;

/// The text `s` with every credential it holds replaced, or `None` when it
/// holds none. Where a value is not named as a credential, its shape may
/// still say it is one:
///
/// - the whole text is a credential scheme and one token
///   (`Bearer sk-…`, `Basic dXNl…`: at least 8 token characters, not a
///   word, so that `Basic arithmetic` stays), or a provider's key
///   (`sk-…`, `sk-ant-…`, `AIza…`, `xoxb-…`, `ghp_…`, `github_pat_…`,
///   `hf_…`, …: at least 20 characters of a key's alphabet, with a digit
///   and a letter): it is [`REDACTED`] whole;
/// - a URL in it (`scheme://…`, up to a space or a quote) has its
///   user information and the values of its query and fragment parameters
///   that name a credential ([`is_credential_key`], or `key`, `sig`,
///   `signature`: Google's `?key=AIza…`, Azure SAS `sig=`, S3's
///   `X-Amz-Signature=`) replaced: `https://[redacted]@host/v1`,
///   `…:generateContent?key=[redacted]`; the rest of the URL is kept;
/// - a header written into it as text, `Authorization: Bearer …` (a curl
///   command's `-H '…'`, a logged header line) or `"Authorization": "…"`
///   (headers stored as JSON text), has its value replaced, up to the
///   quote, line end or end of text: `-H 'Authorization: [redacted]'`.
///
/// Only applied outside [`DATA_MEMBERS`]: in metadata a false match costs
/// a logger's note, in the model's text it would change what is scored.
pub fn credential_text(s: &str) -> Option<String> {
    if is_secret_shaped(s) {
        return Some(REDACTED.to_string());
    }
    let urls = mask_urls(s);
    let headers = mask_headers(&urls);
    match headers {
        Cow::Owned(t) => Some(t),
        Cow::Borrowed(_) => match urls {
            Cow::Owned(t) => Some(t),
            Cow::Borrowed(_) => None,
        },
    }
}

/// Whether the whole of `s` is a credential by its shape
/// ([`credential_text`]'s first rule).
fn is_secret_shaped(s: &str) -> bool {
    /// A token's characters (RFC 6750's `b64token`, and `_`), not a word:
    /// not all letters, or with an upper-case letter past the first
    /// (base64's `dXNlcjpw…`, not `arithmetic` or `Tokens`).
    fn is_token(t: &str, min: usize) -> bool {
        t.len() >= min
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b))
            && (!t.bytes().all(|b| b.is_ascii_alphabetic())
                || t.bytes().skip(1).any(|b| b.is_ascii_uppercase()))
    }
    for scheme in ["bearer ", "basic "] {
        if let Some(head) = s.get(..scheme.len())
            && head.eq_ignore_ascii_case(scheme)
        {
            return is_token(s[scheme.len()..].trim(), 8);
        }
    }
    const KEY_PREFIXES: [&str; 23] = [
        "sk-",
        "sk_live_",
        "rk_live_",
        "AIza",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "xoxs-",
        "xapp-",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "hf_",
        "gsk_",
        "r8_",
        "pplx-",
        "nvapi-",
        "sk-or-",
        "csk-",
    ];
    KEY_PREFIXES.iter().any(|p| s.starts_with(p))
        && s.len() >= 20
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether a URL's query or fragment parameter named `name` holds a
/// credential: a credential's name, or one URLs use for keys and
/// signatures.
pub fn is_credential_param(name: &str) -> bool {
    name.len() <= MAX_HEADER_NAME
        && (is_credential_key(name)
            || [
                "key",
                "sig",
                "signature",
                "x-amz-signature",
                "x-goog-signature",
            ]
            .iter()
            .any(|n| name.eq_ignore_ascii_case(n)))
}

/// `s` with the user information and the credential parameters of every
/// URL in it replaced ([`credential_text`]'s second rule).
fn mask_urls(s: &str) -> Cow<'_, str> {
    let ends_url = |c: char| c.is_whitespace() || "\"'<>`\\".contains(c);
    let mut out = String::new();
    // `s[..done]` is in `out` already.
    let mut done = 0;
    let mut from = 0;
    while let Some((after, authority_end)) = url_authority(s, from) {
        let end = s[after..].find(ends_url).map_or(s.len(), |i| after + i);
        let authority_end = authority_end.min(end);
        from = end.max(after);
        let mut cuts: Vec<(usize, usize)> = Vec::new();
        if let Some(at) = s[after..authority_end].rfind('@') {
            cuts.push((after, after + at));
        }
        if let Some(q) = s[authority_end..end].find(['?', '#']) {
            let mut start = authority_end + q + 1;
            for part in s[start..end].split(['&', '?', '#', ';']) {
                if let Some((name, value)) = part.split_once('=')
                    && !value.is_empty()
                    && value != REDACTED
                    && is_credential_param(name)
                {
                    let v = start + name.len() + 1;
                    cuts.push((v, v + value.len()));
                }
                start += part.len() + 1;
            }
        }
        for (a, b) in cuts {
            out.push_str(&s[done..a]);
            out.push_str(REDACTED);
            done = b;
        }
    }
    if done == 0 {
        Cow::Borrowed(s)
    } else {
        out.push_str(&s[done..]);
        Cow::Owned(out)
    }
}

/// `s` with the value of every credential header written into it
/// replaced ([`credential_text`]'s third rule): a name
/// ([`is_credential_key`]) right before a `:` (or `":`), its value what
/// follows, after spaces, up to a quote, a line end or the end.
fn mask_headers(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let mut out = String::new();
    let mut done = 0;
    let mut colon = 0;
    while let Some(i) = s[colon..].find(':').map(|i| colon + i) {
        colon = i + 1;
        let quoted = i > 0 && bytes[i - 1] == b'"';
        let name_end = if quoted { i - 1 } else { i };
        let mut name_start = name_end;
        while name_start > done && is_name(bytes[name_start - 1]) {
            name_start -= 1;
        }
        let name = &s[name_start..name_end];
        if name.is_empty()
            || name.len() > MAX_HEADER_NAME
            || s[i..].starts_with("://")
            || !is_credential_key(name)
        {
            continue;
        }
        let mut v = i + 1;
        while v < bytes.len() && (bytes[v] == b' ' || bytes[v] == b'\t') {
            v += 1;
        }
        let value_quoted = quoted && bytes.get(v) == Some(&b'"');
        if value_quoted {
            v += 1;
        }
        let mut end = v;
        while end < bytes.len() {
            let b = bytes[end];
            if value_quoted && b == b'\\' {
                end += 2;
                continue;
            }
            // A JSON text's unquoted value (`"token": 5,`) ends at its
            // member's end.
            let json_end = quoted && !value_quoted && matches!(b, b',' | b'}' | b']');
            if b == b'"' || b == b'\n' || b == b'\r' || (!value_quoted && b == b'\'') || json_end {
                break;
            }
            end += 1;
        }
        let end = end.min(bytes.len());
        if end == v || &s[v..end] == REDACTED {
            continue;
        }
        out.push_str(&s[done..v]);
        out.push_str(REDACTED);
        done = end;
        colon = end;
    }
    if done == 0 {
        Cow::Borrowed(s)
    } else {
        out.push_str(&s[done..]);
        Cow::Owned(out)
    }
}

/// Whether `v` holds a credential that [`redact_credentials`] would
/// replace, at any depth, outside its top-level members `skip`: a
/// credential-named member whose value says something, a plain `key`, a
/// header pair, a string that is or holds one ([`credential_text`]; these
/// three outside [`DATA_MEMBERS`]).
pub fn value_names_credential(v: &Value, skip: &[&str]) -> bool {
    // `skip` applies at the top only; the walk is bounded as the redaction's.
    fn names(v: &Value, skip: &[&str], depth: usize, shapes: bool) -> bool {
        let inner =
            |v: &Value, shapes: bool| depth < MAX_REDACT_DEPTH && names(v, &[], depth + 1, shapes);
        match v {
            Value::Object(m) => {
                if shapes && names_its_value_a_credential(m) {
                    return true;
                }
                let in_pair = m.contains_key("value");
                m.iter().any(|(k, v)| {
                    !skip.contains(&k.as_str())
                        && (is_credential_member(k, v, shapes, in_pair)
                            || inner(v, shapes && !DATA_MEMBERS.contains(&k.as_str())))
                })
            }
            Value::Array(items) => {
                (shapes && is_credential_header_pair(items))
                    || items.iter().any(|v| inner(v, shapes))
            }
            Value::String(s) => shapes && credential_text(s).is_some(),
            _ => false,
        }
    }
    names(v, skip, 0, true)
}

/// Whether a credential-named member's value could hold a secret: not
/// `null`, not a boolean (`has_secret: false` says nothing).
pub fn says_something(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(_))
}

/// Whether the JSON object `body` may hold a credential
/// ([`value_names_credential`]) anywhere outside its top-level members
/// `skip` (schemas, whose `password` properties are parameters): read
/// without building anything, escapes decoded. It errs towards yes — a
/// plain `key` member, or a string outside [`DATA_MEMBERS`] that names a
/// credential (a header pair's name) or is or holds one
/// ([`credential_text`]), counts — and so does a body that is not a JSON
/// object, or not JSON: the caller then takes its careful path, which
/// decides.
pub fn holds_credential_key(body: &[u8], skip: &[&str]) -> bool {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    struct Keys<'s> {
        skip: &'s [&'s str],
        top: bool,
        /// Values are read: outside [`DATA_MEMBERS`].
        shapes: bool,
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
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
            let names = s.len() <= MAX_HEADER_NAME && is_credential_key(s);
            if self.shapes && (names || credential_text(s).is_some()) {
                return Err(E::custom(Found));
            }
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let inner = || Keys {
                skip: self.skip,
                top: false,
                shapes: self.shapes,
            };
            while seq.next_element_seed(inner())?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                if is_credential_key(&key) || (self.shapes && key.eq_ignore_ascii_case("key")) {
                    return Err(serde::de::Error::custom(Found));
                }
                if self.top && self.skip.contains(&key.as_ref()) {
                    map.next_value::<IgnoredAny>()?;
                } else {
                    map.next_value_seed(Keys {
                        skip: self.skip,
                        top: false,
                        shapes: self.shapes && !DATA_MEMBERS.contains(&key.as_ref()),
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
    de.deserialize_map(Keys {
        skip,
        top: true,
        shapes: true,
    })
    .is_err()
}

/// Deepest nesting [`redact_credentials`] walks; a deeper value is replaced whole (a
/// capture this deep is not a logger's metadata, and the walk stays bounded).
const MAX_REDACT_DEPTH: usize = 64;

/// The member `key` holding `v` (at `path`, `depth` deep): replaced by
/// [`REDACTED`] when it is a credential (its name, or a plain `key`:
/// [`is_credential_member`]), else the credentials inside it
/// ([`redact_credentials`]); each path replaced is pushed. The one rule of
/// the importer's carried members, the proxy's recorded request, a run's
/// stored sample and every object this walk meets.
pub fn redact_member(
    key: &str,
    v: &mut Value,
    path: &str,
    redacted: &mut Vec<Value>,
    depth: usize,
) {
    member(key, v, path, redacted, depth, true, false);
}

/// [`redact_member`], values read or not (`shapes`), in an object that is
/// a key/value pair or not (`in_pair`).
fn member(
    key: &str,
    v: &mut Value,
    path: &str,
    redacted: &mut Vec<Value>,
    depth: usize,
    shapes: bool,
    in_pair: bool,
) {
    if is_credential_member(key, v, shapes, in_pair) {
        *v = json!(REDACTED);
        redacted.push(json!(path));
    } else {
        let shapes = shapes && !DATA_MEMBERS.contains(&key);
        walk(v, path, redacted, depth, shapes);
    }
}

/// Replaces the credentials inside `v` (at `path`) by [`REDACTED`],
/// pushing each one's path: the values of credential-named members at any
/// depth, and outside [`DATA_MEMBERS`] a plain `key`'s, a header pair's
/// value (`["Authorization", "…"]`, `{"name": "Authorization", "value":
/// "…"}`) and the credentials a string is or holds ([`credential_text`]:
/// a key's shape, a URL's password or `?key=`, a header line).
pub fn redact_credentials(v: &mut Value, path: &str, redacted: &mut Vec<Value>, depth: usize) {
    walk(v, path, redacted, depth, true);
}

/// [`redact_credentials`], values read or not (`shapes`).
fn walk(v: &mut Value, path: &str, redacted: &mut Vec<Value>, depth: usize, shapes: bool) {
    if depth >= MAX_REDACT_DEPTH && (v.is_object() || v.is_array()) {
        *v = json!(REDACTED);
        redacted.push(json!(path));
        return;
    }
    match v {
        Value::Object(m) => {
            let header = shapes && names_its_value_a_credential(m);
            let in_pair = m.contains_key("value");
            for (k, inner) in m.iter_mut() {
                let path = format!("{path}.{k}");
                if header && k == "value" {
                    *inner = json!(REDACTED);
                    redacted.push(json!(path));
                } else {
                    member(k, inner, &path, redacted, depth + 1, shapes, in_pair);
                }
            }
        }
        Value::Array(items) => {
            let header = shapes && is_credential_header_pair(items);
            for (i, inner) in items.iter_mut().enumerate() {
                let path = format!("{path}[{i}]");
                if header && i == 1 {
                    *inner = json!(REDACTED);
                    redacted.push(json!(path));
                } else {
                    walk(inner, &path, redacted, depth + 1, shapes);
                }
            }
        }
        Value::String(s) if shapes => {
            if let Some(t) = credential_text(s) {
                *s = t;
                redacted.push(json!(path));
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

    proptest::proptest! {
        /// The words of an ASCII name, read as ranges and compared without
        /// regard to case, decide as the words cut and lower-cased do (the
        /// rule as it was written first, still the one for other names).
        #[test]
        fn a_name_read_in_place_decides_as_its_lowered_words(
            key in proptest::string::string_regex(
                "((secret|Password|passwd|api|Access|KEY|key|token|Token|eos|page|auth|Bearer|cookie|x|[a-zA-Z0-9]{0,3})[-_. ]?){0,5}"
            ).unwrap()
        ) {
            proptest::prop_assert_eq!(
                is_credential_key(&key),
                credential_words(&lowered_words(&key)),
                "{}", key
            );
        }
    }

    #[test]
    fn percent_escapes_decode_and_a_broken_one_is_none() {
        assert_eq!(percent_decoded("a%2Fb%20c").as_deref(), Some("a/b c"));
        assert_eq!(percent_decoded("plain").as_deref(), Some("plain"));
        assert_eq!(percent_decoded("%C3%A9").as_deref(), Some("é"));
        for broken in ["a%zz", "a%", "a%2", "%FF"] {
            assert_eq!(percent_decoded(broken), None, "{broken}");
        }
    }

    #[test]
    fn a_name_that_is_not_ascii_is_read_lower_cased() {
        // U+212A KELVIN SIGN lower-cases to an ASCII `k`.
        assert!(is_credential_key("api_\u{212A}ey"));
        assert!(is_credential_key("Zugangs-Token"));
        assert!(!is_credential_key("größe"));
    }

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

    /// The carried members of `v` redacted as the importer redacts them,
    /// with the paths listed.
    fn redacted(mut v: Value) -> (Value, Vec<Value>) {
        let mut found = Vec::new();
        if let Value::Object(m) = &mut v {
            for (k, inner) in m.iter_mut() {
                redact_member(k, inner, k, &mut found, 0);
            }
        }
        (v, found)
    }

    /// Probe 44, item 5: a URL's password and `?key=` were written as
    /// they came (LiteLLM's `api_base`, a proxy URL with basic auth).
    #[test]
    fn a_url_keeps_all_but_its_user_information_and_credential_parameters() {
        let cases = [
            (
                "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?key=AIzaSyLEAK1",
                "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?key=[redacted]",
            ),
            (
                "https://user:PASSWORD11@proxy.example.com/v1",
                "https://[redacted]@proxy.example.com/v1",
            ),
            (
                "https://h/x?api-version=2024-06-01&api_key=s1&sig=s2&token=s3#access_token=s4",
                "https://h/x?api-version=2024-06-01&api_key=[redacted]&sig=[redacted]&token=[redacted]#access_token=[redacted]",
            ),
            (
                "see https://h/a?X-Amz-Signature=ab12 and http://u:p@h2/",
                "see https://h/a?X-Amz-Signature=[redacted] and http://[redacted]@h2/",
            ),
        ];
        for (text, shown) in cases {
            assert_eq!(credential_text(text).as_deref(), Some(shown), "{text}");
        }
        for plain in [
            "https://h/v1?api-version=2024-06-01",
            "https://h/v1/chat",
            "https://h/?key=",
        ] {
            assert_eq!(credential_text(plain), None, "{plain}");
        }
        let (v, found) = redacted(json!({"api_base": "https://x?key=AIzaSyLEAK2"}));
        assert_eq!(v, json!({"api_base": "https://x?key=[redacted]"}));
        assert_eq!(found, [json!("api_base")]);
    }

    /// Probe 44, item 5: header lists name the credential in a sibling
    /// value (mitmproxy's pairs, HAR's `name`/`value` objects, OTel's
    /// `key`/`value` attributes): only the name rule ran, so the value was
    /// written.
    #[test]
    fn a_header_lists_credential_is_redacted_by_its_sibling_name() {
        let (v, found) = redacted(json!({
            "headers": [["Authorization", "Bearer sk-LIST6"], ["Cookie", "sid=COOKIE7"],
                ["Accept", "*/*"]],
            "har": [{"name": "x-api-key", "value": "HAR9"}, {"name": "Host", "value": "h"}],
            "attrs": [{"key": "http.request.header.authorization", "value": {"stringValue": "A"}},
                {"key": "gen_ai.system", "value": {"stringValue": "openai"}}],
        }));
        assert_eq!(
            v,
            json!({
                "headers": [["Authorization", "[redacted]"], ["Cookie", "[redacted]"],
                    ["Accept", "*/*"]],
                "har": [{"name": "x-api-key", "value": "[redacted]"}, {"name": "Host", "value": "h"}],
                "attrs": [{"key": "http.request.header.authorization", "value": "[redacted]"},
                    {"key": "gen_ai.system", "value": {"stringValue": "openai"}}],
            })
        );
        assert_eq!(
            found,
            [
                json!("headers[0][1]"),
                json!("headers[1][1]"),
                json!("har[0].value"),
                json!("attrs[0].value"),
            ]
        );
    }

    /// Probe 44, item 5: a value that is a credential by its shape
    /// (a scheme and a token, a provider's key) under a name that does not
    /// say so was written.
    #[test]
    fn a_value_shaped_as_a_credential_is_redacted_whole() {
        for secret in [
            "Bearer sk-LIST6",
            "bearer eyJhbGciOiJIUzI1NiJ9.e30.sig",
            "Basic dXNlcjpwYXNz",
            "sk-proj-abcdefghijklmnop1234",
            "sk-ant-api03-abcdefghij12345",
            "AIzaSyA1234567890abcdefghijklmnopqrstu",
            "xoxb-1234567890-abcdefghijkl",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "hf_abcdefghijklmnopqrst12",
        ] {
            assert_eq!(
                credential_text(secret).as_deref(),
                Some(REDACTED),
                "{secret}"
            );
        }
        for plain in [
            "Basic arithmetic",
            "Bearer bonds",
            "Bearer Tokenization",
            "Bearer x1",
            "sk-learn",
            "sk-learn-tutorial-for-beginners",
            "ghp_short1",
            "AIza is a prefix",
            "gpt-4o-2024-08-06",
        ] {
            assert_eq!(credential_text(plain), None, "{plain}");
        }
        let (v, found) = redacted(json!({"note": {"upstream": "Bearer sk-LIST6"}}));
        assert_eq!(v, json!({"note": {"upstream": "[redacted]"}}));
        assert_eq!(found, [json!("note.upstream")]);
    }

    /// Probe 44, item 5: a plain `key` member (`"key": "sk-…"`) was
    /// written; `apiKey` and `api-key` were already names of credentials.
    /// A key/value pair's `key` is an attribute's name, and stays.
    #[test]
    fn a_plain_key_member_is_a_credential_outside_a_key_value_pair() {
        for name in ["apiKey", "api-key", "API_KEY", "Api-Key"] {
            assert!(is_credential_key(name), "{name}");
        }
        let (v, found) = redacted(json!({
            "key": "sk-BAREKEY14",
            "Key": "abc",
            "tags": [{"key": "env", "value": "prod"}],
            "cache": {"key": 12},
        }));
        assert_eq!(
            v,
            json!({
                "key": "[redacted]",
                "Key": "[redacted]",
                "tags": [{"key": "env", "value": "prod"}],
                "cache": {"key": 12},
            })
        );
        assert_eq!(found, [json!("key"), json!("Key")]);
    }

    /// Probe 44, item 5: headers kept as text (a curl command, headers
    /// stored as JSON text, a logged header line) were written as they
    /// came.
    #[test]
    fn a_header_written_into_text_has_its_value_redacted() {
        let cases = [
            (
                "curl -X POST https://api.openai.com/v1/chat/completions -H 'Authorization: Bearer sk-CURL12' -d '{}'",
                "curl -X POST https://api.openai.com/v1/chat/completions -H 'Authorization: [redacted]' -d '{}'",
            ),
            (
                r#"{"Authorization": "Bearer sk-JSONSTR13", "Accept": "*/*"}"#,
                r#"{"Authorization": "[redacted]", "Accept": "*/*"}"#,
            ),
            (
                r#"{"token": 5, "x-api-key":"k\"q"}"#,
                r#"{"token": [redacted], "x-api-key":"[redacted]"}"#,
            ),
            (
                "Host: h\r\nx-api-key: abc def\r\nAccept: */*",
                "Host: h\r\nx-api-key: [redacted]\r\nAccept: */*",
            ),
        ];
        for (text, shown) in cases {
            assert_eq!(credential_text(text).as_deref(), Some(shown), "{text}");
        }
        for plain in ["Note: see the docs", "author: me", "token:", "time: 12:30"] {
            assert_eq!(credential_text(plain), None, "{plain}");
        }
    }

    /// The value rules are not read in the model's text, its calls, the
    /// conversation or the tool definitions: what the model wrote is what
    /// is scored, and a prompt is sent again as it was. The name rule still
    /// applies there, as before.
    #[test]
    fn the_model_text_calls_and_tools_keep_credential_shaped_values() {
        let data = json!({
            "messages": [{"role": "user", "content": "Bearer sk-LIST6"},
                {"role": "assistant", "tool_calls": [{"function": {"name": "f",
                  "arguments": "{\"url\": \"https://u:p@h?key=AIzaSyLEAK1\"}"}}]}],
            "choices": [{"message": {"content": "Authorization: Bearer sk-x1234567",
                "tool_calls": [{"function": {"arguments": {"name": "password", "value": "p1"}}}]}}],
            "tools": [{"function": {"parameters": {"properties": {"key": {"type": "string"}}}}}],
            "input": [["Authorization", "Bearer sk-LIST6"]],
        });
        let (v, found) = redacted(data.clone());
        assert_eq!(v, data);
        assert!(found.is_empty(), "{found:?}");
        assert!(!value_names_credential(&data, &[]));
        // A credential's name is still a credential there.
        let (v, _) = redacted(json!({"messages": [{"api_key": "s"}]}));
        assert_eq!(v, json!({"messages": [{"api_key": "[redacted]"}]}));
    }

    /// The recorder writes a request untouched when these say it holds no
    /// credential: they must see every credential the redaction replaces.
    #[test]
    fn the_fast_checks_see_what_the_redaction_replaces() {
        for v in [
            json!({"m": {"u": "https://h?key=AIzaSyLEAK1"}}),
            json!({"h": [["Authorization", "x"]]}),
            json!({"h": [{"name": "Cookie", "value": "x"}]}),
            json!({"u": "Bearer sk-LIST6"}),
            json!({"key": "k"}),
            json!({"c": "-H 'x-api-key: k'"}),
        ] {
            let (_, found) = redacted(v.clone());
            assert!(!found.is_empty(), "{v}");
            assert!(value_names_credential(&v, &[]), "{v}");
            let body = serde_json::to_vec(&v).unwrap();
            assert!(holds_credential_key(&body, &[]), "{v}");
        }
        let plain = json!({"messages": [{"content": "Bearer sk-LIST6"}], "model": "m",
            "metadata": {"url": "https://h/v1?api-version=1"}});
        assert!(!value_names_credential(&plain, &[]));
        assert!(!holds_credential_key(
            &serde_json::to_vec(&plain).unwrap(),
            &[]
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
