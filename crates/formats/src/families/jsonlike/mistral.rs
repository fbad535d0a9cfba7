//! `mistral`: Mistral / Mixtral / Ministral / Magistral / Devstral — the
//! `[TOOL_CALLS]` token followed by the calls, in the shapes the tokenizer
//! versions produce.
//!
//! ```text
//! [TOOL_CALLS][{"name": "add", "arguments": {"a": 3.5, "b": 4}}, {"name": "f", "arguments": {}}]
//! [TOOL_CALLS]special_function[ARGS]{"arg1": 1}
//! [TOOL_CALLS]special_function[CALL_ID]000000001[ARGS]{"arg1": 1}[TOOL_CALLS]g[CALL_ID]000000002[ARGS]{}
//! [TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}
//! ```
//!
//! - pre-v11 tokenizers: a JSON array of call objects (SPEC §9 key rules)
//!   right after the token (whitespace allowed); a single object is read as
//!   one call; the array in a stray ```` ```json ```` fence is a candidate
//!   too (strict: `malformed`; lenient strips the fence, `stray_fences`);
//! - v11+: the tool name, an optional `[CALL_ID]id`, an optional `[ARGS]`,
//!   then the arguments object; parallel calls repeat `[TOOL_CALLS]`;
//! - the JSON's own end ends a call: text after it is content;
//! - an output that ends inside a call (`[TOOL_CALLS]toolname_no_args`,
//!   an unclosed arguments object) is `truncated`; anything else after the
//!   token (`[TOOL_CALLS] not json at all`) is `malformed`;
//! - calls inside `[THINK]…[/THINK]` (Magistral reasoning) are reasoning.

use toolgate_core::{Candidate, FailureKind, ParseFailure, Span};

use super::json_array::next_char;
use super::json_array::{self, MissingName};
use super::marked::{arguments_after_name, cut_off_call};
use crate::util;
use crate::{Extractor, Input, Strictness};

const MODE: &str = "mistral";

/// The `mistral` extractor, with the tokens of its format file.
#[derive(Clone, Copy, Debug)]
pub struct Mistral {
    /// Finds the token that opens every call (`[TOOL_CALLS]`).
    pub token: &'static crate::find::StaticFinder,
    /// Between a call's name (or id) and its arguments (`[ARGS]`).
    pub args: &'static str,
    /// Between a call's name and its id (`[CALL_ID]`).
    pub call_id: &'static str,
}

impl Extractor for Mistral {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Antwerp"}"#
    }
    fn describe(&self) -> &str {
        "Mistral: [TOOL_CALLS] + a JSON call list, or name[CALL_ID]id[ARGS]{…} / name{…} per call"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| scan(self, text, strictness))
    }
}

fn scan(m: &Mistral, text: &str, strictness: Strictness) -> Vec<Candidate> {
    let b = text.as_bytes();
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    while let Some(at) = m.token.find_from(text, pos) {
        if pos == 0
            && let Some(stray) = call_without_token_before(m, text, at)
        {
            out.push(stray);
        }
        let after = at + m.token.needle().len();
        let first = util::skip_ws(b, after);
        let (found, end) = match b.get(first) {
            None => (
                vec![failure(at, text.len(), "", None, cut_off_call(text.len()))],
                text.len(),
            ),
            Some(_) if util::opens_json_payload(b, first) => list(text, at, first, strictness),
            Some(_) => named(m, text, at, first, strictness),
        };
        out.extend_vec(found);
        pos = end.max(after);
    }
    out.into_vec()
}

fn failure(
    start: usize,
    end: usize,
    raw: &str,
    name: Option<String>,
    f: ParseFailure,
) -> Candidate {
    util::candidate(MODE, Span::new(start, end), raw, name, Err(f), Vec::new())
}

/// `[TOOL_CALLS] [{…}, …]` or `[TOOL_CALLS]{…}`.
fn list(text: &str, at: usize, first: usize, strictness: Strictness) -> (Vec<Candidate>, usize) {
    json_array::open_list(MODE, text, at, first, strictness, MissingName::Fail)
}

/// `name[CALL_ID]id[ARGS]{…}`, `name[ARGS]{…}` or `name{…}`.
fn named(
    m: &Mistral,
    text: &str,
    at: usize,
    first: usize,
    strictness: Strictness,
) -> (Vec<Candidate>, usize) {
    let Mistral {
        token,
        args,
        call_id,
    } = *m;
    let b = text.as_bytes();
    let mut i = first;
    while b.get(i).is_some_and(|c| is_name_byte(*c)) {
        i += 1;
    }
    if i == first {
        let raw_end = token.find_from(text, first).unwrap_or(text.len());
        let f = ParseFailure::new(
            FailureKind::Malformed,
            format!(
                "expected a tool name or a JSON call list after {}",
                token.needle()
            ),
            first,
        );
        return (
            vec![failure(at, raw_end, &text[first..raw_end], None, f)],
            next_char(text, first),
        );
    }
    let name = text[first..i].to_string();
    if text[i..].starts_with(call_id) {
        i += call_id.len();
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
        {
            i += 1;
        }
    }
    if text[i..].starts_with(args) {
        i += args.len();
    }
    let args_at = util::skip_ws(b, i);
    // The output ends here, or in an `[ARGS]` (or `[CALL_ID]`) that is cut
    // off: a tokenizer-prefix `[` counts too.
    let rest = &text[args_at..];
    if rest.is_empty()
        || (rest.starts_with('[') && (args.starts_with(rest) || call_id.starts_with(rest)))
    {
        return (
            vec![failure(
                at,
                text.len(),
                "",
                Some(name),
                cut_off_call(text.len()),
            )],
            text.len(),
        );
    }
    match b.get(args_at) {
        Some(b'{' | b'"') => {}
        _ => {
            let f = ParseFailure::new(
                FailureKind::Malformed,
                format!("expected the arguments object after the tool name `{name}`"),
                args_at,
            );
            return (
                vec![failure(at, args_at, "", Some(name), f)],
                next_char(text, args_at),
            );
        }
    }
    let (mut c, end) = arguments_after_name(MODE, text, at, args_at, name, strictness);
    if c.arguments.is_ok()
        && let Some(f) = call_without_token_after(m, text, end)
    {
        c.arguments = Err(f);
    }
    (vec![c], end)
}

/// A v11 call in the mode's own markup right after a call's arguments, but
/// without its `[TOOL_CALLS]` (`f[ARGS]{…}g[ARGS]{…}`, also after `,` or
/// `;`): the model wrote two calls and the second one's token is missing.
/// Read as text after the call, it let the first call execute alone and
/// dropped the second (vLLM's `json.loads` of everything after the name
/// refuses the whole text). The first call is then `malformed`, as a
/// second arguments object right after it is (`util::second_object_after`)
/// and as kimi's call without its `<|tool_call_begin|>` is. `end` is where
/// the arguments ended; `[ARGS]` and `[CALL_ID]` are special tokens, so
/// ordinary content after a call does not hold them.
fn call_without_token_after(m: &Mistral, text: &str, end: usize) -> Option<ParseFailure> {
    let b = text.as_bytes();
    let mut i = util::skip_ws(b, end);
    if matches!(b.get(i), Some(b',' | b';')) {
        i = util::skip_ws(b, i + 1);
    }
    let name_at = i;
    while b.get(i).is_some_and(|c| is_name_byte(*c)) {
        i += 1;
    }
    let rest = &text[i..];
    (i > name_at && (rest.starts_with(m.args) || rest.starts_with(m.call_id))).then(|| {
        ParseFailure::new(
            FailureKind::Malformed,
            format!(
                "a call `{}` right after this one without its {} (its call would be dropped)",
                &text[name_at..i],
                m.token.needle()
            ),
            name_at,
        )
    })
}

/// A v11 call before the first `[TOOL_CALLS]` (at `first`) without its
/// token (`g[ARGS]{…}[TOOL_CALLS]f[ARGS]{…}`): the rule of
/// [`call_without_token_after`] before the first call. `[ARGS]` and
/// `[CALL_ID]` are special tokens, so a name glued to one is call markup,
/// not content; skipped as text, the call after it executed alone. The
/// stray call is `malformed`, from its name to the token.
fn call_without_token_before(m: &Mistral, text: &str, first: usize) -> Option<Candidate> {
    let head = &text[..first];
    let tok = [m.args, m.call_id]
        .iter()
        .filter_map(|t| head.find(t))
        .min()?;
    let b = text.as_bytes();
    let mut name_at = tok;
    while name_at > 0 && is_name_byte(b[name_at - 1]) {
        name_at -= 1;
    }
    if name_at == tok {
        return None;
    }
    let name = text[name_at..tok].to_string();
    let f = ParseFailure::new(
        FailureKind::Malformed,
        format!(
            "a call `{name}` before the first {} without its opener (its call would be dropped)",
            m.token.needle()
        ),
        name_at,
    );
    Some(failure(
        name_at,
        first,
        &text[name_at..first],
        Some(name),
        f,
    ))
}

/// A byte of a v11 tool name.
fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':' | b'/')
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::format::mistral::MISTRAL;
    use toolgate_core::{Repair, Source};

    #[test]
    fn a_call_without_its_token_before_the_first_call_is_malformed() {
        // s46-stray2: `f` ran and `g` was dropped as text.
        for out in [
            r#"g[ARGS]{"b": 2}[TOOL_CALLS]f[ARGS]{"a": 1}"#,
            "Sure.\ng[CALL_ID]000000002[ARGS]{}\n[TOOL_CALLS]f[ARGS]{\"a\": 1}",
        ] {
            let c = strict(&MISTRAL, out);
            assert_eq!(c.len(), 2, "{out}");
            assert_eq!(c[0].name.as_deref(), Some("g"), "{out}");
            let f = c[0].failure().unwrap();
            assert_eq!(f.kind, FailureKind::Malformed, "{out}");
            assert!(f.message.contains("without its opener"), "{}", f.message);
            assert_eq!(c[1].call().unwrap().name, "f", "{out}");
        }
        // Prose before the first call, and `[ARGS]` with no name glued to
        // it, stay text.
        for out in [
            r#"I will call f. [TOOL_CALLS]f[ARGS]{"a": 1}"#,
            r#"The [ARGS] token. [TOOL_CALLS]f[ARGS]{"a": 1}"#,
        ] {
            assert_eq!(strict(&MISTRAL, out).len(), 1, "{out}");
        }
    }

    #[test]
    fn json_list_with_leading_text_and_trailing_content() {
        let out = "Hello[TOOL_CALLS] [{\"name\": \"add\", \"arguments\":{\"a\": 1, \"b\": 2}}]\nextra trailing data";
        assert_eq!(
            calls(&MISTRAL, out),
            vec![call("add", r#"{"a": 1, "b": 2}"#)]
        );
    }

    #[test]
    fn json_list_parallel_and_key_order() {
        let out = r#"[TOOL_CALLS] [{"arguments":{"a": 3.5, "b": 4}, "name": "add"}, {"name": "f", "arguments": {}}]"#;
        assert_eq!(
            calls(&MISTRAL, out),
            vec![call("add", r#"{"a": 3.5, "b": 4}"#), call("f", "{}")]
        );
    }

    #[test]
    fn args_token_and_call_ids() {
        let out = r#"[TOOL_CALLS]special_function[CALL_ID]000000001[ARGS]{"arg1": 1}[TOOL_CALLS]special_function_with_opt[CALL_ID]000000002[ARGS]{"arg1": 1, "arg2": 2}"#;
        assert_eq!(
            calls(&MISTRAL, out),
            vec![
                call("special_function", r#"{"arg1": 1}"#),
                call("special_function_with_opt", r#"{"arg1": 1, "arg2": 2}"#)
            ]
        );
    }

    #[test]
    fn v11_name_then_object_repeated() {
        let out = r#"[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}"#;
        let found = strict(&MISTRAL, out);
        assert_eq!(found[1].span, Span::new(33, out.len()));
        assert_eq!(
            calls(&MISTRAL, out),
            vec![
                call("add", r#"{"a": 3.5, "b": 4}"#),
                call("multiply", r#"{"a": 3, "b": 6}"#)
            ]
        );
    }

    #[test]
    fn a_second_v11_call_without_its_token_is_malformed_not_dropped() {
        for out in [
            r#"[TOOL_CALLS]f[ARGS]{"a": 1}g[ARGS]{}"#,
            r#"[TOOL_CALLS]f[ARGS]{"a": 1}, g[ARGS]{}"#,
            "[TOOL_CALLS]f[ARGS]{\"a\": 1}\ng[CALL_ID]000000002[ARGS]{}",
        ] {
            let found = strict(&MISTRAL, out);
            assert_eq!(found.len(), 1, "{out}");
            let f = found[0].failure().unwrap();
            assert_eq!(f.kind, FailureKind::Malformed, "{out}");
            assert!(f.message.contains("call `g`"), "{out}: {}", f.message);
        }
        // Text after the call that is not a call stays content.
        assert_eq!(
            calls(
                &MISTRAL,
                r#"[TOOL_CALLS]f[ARGS]{"a": 1} then g runs [ARGS] later"#
            ),
            vec![call("f", r#"{"a": 1}"#)]
        );
    }

    #[test]
    fn cut_off_arguments_are_truncated_with_the_name() {
        let out = r#"hi{hi[TOOL_CALLS]bash{"command": "print(\"hello world!\")\nre.compile(r'{}')"#;
        let found = strict(&MISTRAL, out);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name.as_deref(), Some("bash"));
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Truncated);
        let bare = strict(&MISTRAL, "[TOOL_CALLS]toolname_no_args");
        assert_eq!(bare[0].failure().unwrap().kind, FailureKind::Truncated);
        let cut_token = strict(&MISTRAL, "[TOOL_CALLS]f[AR");
        assert_eq!(cut_token[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    #[test]
    fn not_json_after_the_token_is_malformed() {
        for out in [
            "[TOOL_CALLS] not json at all",
            "[TOOL_CALLS] [not valid json]",
        ] {
            assert_eq!(only_failure(&MISTRAL, out), FailureKind::Malformed, "{out}");
        }
    }

    #[test]
    fn think_block_calls_are_reasoning() {
        let out = r#"[THINK]Let me think about [TOOL_CALLS]special_function[ARGS]{"arg1":1} and more[/THINK][TOOL_CALLS]special_function[ARGS]{"arg1": 1}"#;
        let found = strict(&MISTRAL, out);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].source, Source::OutputReasoning);
        assert_eq!(found[1].source, Source::Output);
    }

    #[test]
    fn lenient_repairs_single_quotes_in_args() {
        let out = "[TOOL_CALLS]f[ARGS]{'a': 1}";
        assert_eq!(
            strict(&MISTRAL, out)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        let found = lenient(&MISTRAL, out);
        assert_eq!(found[0].call().unwrap().arguments["a"], 1);
        assert_eq!(found[0].repairs, vec![Repair::SingleQuotes]);
    }

    #[test]
    fn no_token_no_candidate() {
        assert!(strict(&MISTRAL, "Hello, world!\nWhat's up?").is_empty());
        assert!(
            strict(
                &MISTRAL,
                "[THINK]I need JSON[/THINK]```json\n{\"amount\": 1}\n```"
            )
            .is_empty()
        );
    }
}
