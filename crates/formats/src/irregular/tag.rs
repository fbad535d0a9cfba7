//! `tag`: the primary mode of the default profile (seed 000).
//!
//! # Wire format
//!
//! ```text
//! <tool name="search_web">{"query": "rust memchr"}</tool>
//! ```
//!
//! The tool name comes from the `name` attribute (double or single quotes,
//! spaces around `=` allowed); the payload between `>` and `</tool>` must be
//! JSON: the arguments object itself. Several tags are parallel calls.
//!
//! Decisions:
//! - an empty payload (`<tool name="x"></tool>`) and a self-closing tag
//!   (`<tool name="x"/>`) are a call with no arguments (`{}`): the markup
//!   says "call x" and nothing is invented;
//! - a payload that is JSON but not an object is `malformed`;
//! - a tag without a `name` attribute is a `malformed` candidate; so is a
//!   tag with any other attribute (`<tool name="f" city="Paris">`): the
//!   model may have put an argument there, and a call never runs with
//!   arguments dropped (issue 22, the rule of unknown call-object keys);
//! - the output ending inside an open tag (in the attributes, the payload,
//!   or before `</tool>`) is `truncated`, even when the payload is complete;
//! - a closed tag whose payload is missing a brace is `malformed`; so is a
//!   tag whose payload runs into the next `<tool …>` opener.
//!
//! `<tool_call>` and `<tools>` do not open this mode (the name must be
//! followed by a space, `>` or `/`).
//!
//! ```
//! use toolgate_formats::{by_name, Input, Strictness};
//! let out = r#"<tool name="search_web">{"query": "rust memchr"}</tool>"#;
//! let c = by_name("tag").unwrap().extract(&Input::new(out), Strictness::Strict);
//! assert_eq!(c[0].call().unwrap().arguments["query"], "rust memchr");
//! ```

use crate::input::{Input, Strictness};
use crate::util::{self, NextFinder};
use crate::{Extractor, jsonread};
use serde_json::Map;
use toolgate_core::{Candidate, FailureKind, ParseFailure, Span};

const MODE: &str = "tag";

/// The `tag` extractor, with the tokens of its format file.
#[derive(Clone, Copy, Debug)]
pub struct Tag {
    /// The tag's opening (`<tool`), then a space, `>` or `/`.
    pub open: &'static str,
    /// The closing tag.
    pub close: &'static str,
}

impl Extractor for Tag {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"<tool name="search_web">{"query": "rust memchr"}</tool>"#
    }
    fn describe(&self) -> &str {
        "<tool name=\"NAME\">{JSON arguments}</tool>; several tags are parallel calls"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| scan(self, text, strictness))
    }
}

/// Whether `<tool` at `at` is a real opener (`<tool`, then space, `>` or `/`).
fn is_opener(open: &str, b: &[u8], at: usize) -> bool {
    matches!(
        b.get(at + open.len()),
        Some(b' ' | b'\t' | b'\n' | b'\r' | b'>' | b'/')
    )
}

fn scan(tag: &Tag, text: &str, strictness: Strictness) -> Vec<Candidate> {
    let Tag { open, close } = *tag;
    let b = text.as_bytes();
    let mut out = crate::cap::Found::new();
    let mut closes = NextFinder::new(close);
    let mut openers = NextFinder::new(open);
    let mut pos = 0;
    let (mut close_ex, mut open_ex) = (false, false);
    // Whether a tag before `pos` was read (every real opener gives a candidate).
    let mut after_call = false;
    loop {
        let next = next_opener(open, text, &mut openers, pos);
        // After a tag, or before the first one (a tag follows).
        if (after_call || next.is_some())
            && let Some(stray) = stray_call(tag, text, (pos, next), after_call)
        {
            out.push(stray);
        }
        let Some(at) = next else { break };
        after_call = true;
        pos = at + open.len();
        // The attributes run to the first `>`.
        let Some(gt) = memchr::memchr(b'>', &b[pos..]).map(|i| pos + i) else {
            out.push(util::candidate(
                MODE,
                Span::new(at, text.len()),
                "",
                name_attr(&text[pos..]).and_then(Result::ok),
                Err(ParseFailure::new(
                    FailureKind::Truncated,
                    format!("output ends inside the `{open}` tag"),
                    text.len(),
                )),
                Vec::new(),
            ));
            break;
        };
        let attrs = &text[pos..gt];
        let self_closing = attrs.trim_end().ends_with('/');
        let attrs_named = name_attr(attrs);
        let name = match (attrs_named, util::attr_fault(attrs, &["name"])) {
            (Some(Ok(n)), Some(fault)) => Some(Err((
                fault.name("name", n),
                fault.message(&format!("the `{open}>` tag")),
            ))),
            (named, _) => named.map(|r| r.map_err(|m| (None, m))),
        };
        let refused = match name {
            Some(Ok(n)) => Ok(Some(n)),
            Some(Err((named, msg))) => Err((named, msg)),
            None => Err((None, format!("`{open}>` tag without a `name` attribute"))),
        };
        let name = match refused {
            Ok(n) => n,
            Err((named, msg)) => {
                let end = if self_closing {
                    gt + 1
                } else {
                    closes
                        .next(text, gt)
                        .map_or(text.len(), |c| c + close.len())
                };
                out.push(util::candidate(
                    MODE,
                    Span::new(at, end),
                    "",
                    named,
                    Err(ParseFailure::new(FailureKind::Malformed, msg, at)),
                    Vec::new(),
                ));
                pos = end.max(pos);
                continue;
            }
        };
        if self_closing {
            out.push(util::candidate(
                MODE,
                Span::new(at, gt + 1),
                "",
                name,
                Ok(Map::new()),
                Vec::new(),
            ));
            pos = gt + 1;
            continue;
        }
        let body = gt + 1;
        // A closer or opener inside a JSON string of the payload is text
        // (`util::closer_outside_strings`); only a closer before the next
        // opener ends this tag.
        let mut openers2 = NextFinder::new(open);
        let next_open = util::closer_outside_strings(text, body, usize::MAX, &mut open_ex, |p| {
            next_opener(open, text, &mut openers2, p)
        });
        let (payload_end, span_end, closed) =
            util::block_end(text, body, next_open, (&mut close_ex, close.len()), |p| {
                closes.next(text, p)
            });
        let at_end = !closed && payload_end == text.len();
        let span = Span::new(at, span_end);
        let payload = &text[body..payload_end];
        let mut cand = if payload.trim().is_empty() {
            util::candidate(MODE, span, payload, name, Ok(Map::new()), Vec::new())
        } else {
            match jsonread::read_all(payload, strictness, at_end) {
                Ok(read) => {
                    let (arguments, repairs) = crate::callobj::arguments_object(
                        read.value,
                        read.repairs,
                        strictness,
                        util::skip_ws(b, body),
                    );
                    util::candidate(MODE, span, payload, name, arguments, repairs)
                }
                Err(f) => util::candidate(
                    MODE,
                    span,
                    payload,
                    name,
                    Err(util::rebase(f, body)),
                    Vec::new(),
                ),
            }
        };
        if !closed && cand.arguments.is_ok() {
            cand.arguments = Err(if at_end {
                ParseFailure::new(
                    FailureKind::Truncated,
                    format!("output ends before `{close}`"),
                    text.len(),
                )
            } else {
                ParseFailure::new(
                    FailureKind::Malformed,
                    format!("missing `{close}` before the next tag"),
                    payload_end,
                )
            });
        }
        out.push(cand);
        pos = span_end.max(pos);
    }
    out.into_vec()
}

/// A call without its `<tool` opener after a tag or before the first one
/// (from `from`, before the next opener `to`), a broken call
/// ([`util::stray_call`], the rule hermes, gemma and the invoke rows share):
/// closed by `</tool>` (`<tool name="f">{…}</tool>name="g">{…}</tool>`, and
/// the same before the first tag), or, right after a tag, its `name`
/// attribute and `>` with no closer at all (`<tool name="f">{…}</tool>
/// name="g">{…}`). Before a closer, the call's own text starts at a `name`
/// attribute (at the gap's start or after whitespace) followed by `>` and
/// ends with that `>` or the `}` of its arguments; other text before a
/// stray closer (`Use </tool> to close`) is prose.
fn stray_call(
    tag: &Tag,
    text: &str,
    gap: (usize, Option<usize>),
    after_call: bool,
) -> Option<Candidate> {
    let body = |g: &str, head: usize| {
        let ws = util::skip_ws(g.as_bytes(), head);
        if g.as_bytes().get(ws) != Some(&b'{') {
            return head;
        }
        let mut it = serde_json::Deserializer::from_str(&g[ws..]).into_iter::<serde_json::Value>();
        match it.next() {
            Some(Ok(_)) => ws + it.byte_offset(),
            _ => g.trim_end().len(),
        }
    };
    util::stray_tag_call(MODE, text, gap, (&[tag.close], after_call), "name", body)
}

/// The next real `<tool` opener at or after `from`.
fn next_opener(
    open: &str,
    text: &str,
    openers: &mut NextFinder<'_>,
    mut from: usize,
) -> Option<usize> {
    let b = text.as_bytes();
    loop {
        let at = openers.next(text, from)?;
        if is_opener(open, b, at) {
            return Some(at);
        }
        from = at + 1;
    }
}

/// The `name` attribute: `Some(Ok(name))`, `Some(Err(why))` when it is
/// there but unreadable, `None` when absent.
fn name_attr(attrs: &str) -> Option<Result<String, String>> {
    let b = attrs.as_bytes();
    let mut from = 0;
    while let Some(i) = util::find_from(attrs, "name", from) {
        from = i + 4;
        // A whole attribute name: preceded by whitespace.
        if i == 0 || !b[i - 1].is_ascii_whitespace() {
            continue;
        }
        let mut j = i + 4;
        while b.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        if b.get(j) != Some(&b'=') {
            continue;
        }
        j += 1;
        while b.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        return Some(match b.get(j) {
            Some(q @ (b'"' | b'\'')) => match memchr::memchr(*q, &b[j + 1..]) {
                Some(len) if len > 0 => Ok(attrs[j + 1..j + 1 + len].to_string()),
                Some(_) => Err("the `name` attribute is empty".to_string()),
                None => Err("the `name` attribute is not closed".to_string()),
            },
            _ => Err("the `name` attribute must be quoted".to_string()),
        });
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::format::tag::TAG;
    use crate::irregular::testkit::*;
    use serde_json::json;
    use toolgate_core::{Repair, Source};

    #[test]
    fn a_call_without_its_opener_beside_a_tag_is_malformed() {
        // s46-stray2: `f` ran and `g` was dropped as text.
        let f = r#"<tool name="f">{"a": 1}</tool>"#;
        for (out, stray) in [
            (format!(r#"{f}name="g">{{"b": 2}}</tool>"#), 1),
            (format!("{f}\nname=\"g\">{{\"b\": 2}}\nDone."), 1),
            (format!(r#"{f} name='g'></tool>"#), 1),
            (format!(r#"name="g">{{"b": 2}}</tool>{f}"#), 0),
        ] {
            assert_stray(&strict(&TAG, &out), stray, ("f", Some("g")), &out);
        }
        // Prose before a stray closer, or naming an attribute, stays text.
        for out in [
            format!("Use </tool> to close.\n{f}"),
            format!(r#"{f} The name="x"> attribute</tool> is fine"#),
            format!("{f} done, the name is set."),
        ] {
            assert_eq!(strict(&TAG, &out).len(), 1, "{out}");
        }
    }

    #[test]
    fn an_attribute_other_than_name_is_malformed() {
        // Issue 22: `city="Paris"` was dropped and `f({})` executed.
        for out in [
            r#"<tool name="f" city="Paris"></tool>"#,
            r#"<tool name="f" args='{"a": 1}'/>"#,
            r#"<tool city=Paris name="f">{"b": 2}</tool>"#,
        ] {
            let c = strict(&TAG, out);
            assert_eq!(c.len(), 1, "{out}");
            assert_eq!(c[0].name.as_deref(), Some("f"), "{out}");
            let f = c[0].failure().unwrap();
            assert_eq!(f.kind, FailureKind::Malformed, "{out}");
            assert!(f.message.contains("unknown attribute"), "{}", f.message);
        }
        // Spacing and quotes around `name` alone are fine.
        assert!(
            strict(&TAG, r#"<tool  name = 'f' >{}</tool>"#)[0]
                .call()
                .is_some()
        );
        assert!(strict(&TAG, r#"<tool name="f" />"#)[0].call().is_some());
    }

    #[test]
    fn a_self_closing_tag_is_complete_under_the_row_rules() {
        // It has no `</tool>` to miss (the missing-closer rule said
        // `truncation`).
        let tag = crate::by_name("tag").unwrap();
        let c = tag.extract(&Input::new(r#"<tool name="f"/>"#), Strictness::Strict);
        assert!(c[0].call().is_some(), "{c:?}");
    }

    #[test]
    fn one_tag_double_or_single_quoted_name() {
        let out = r#"Sure. <tool name="search_web">{"query": "x"}</tool>"#;
        let c = strict(&TAG, out);
        assert_eq!(c.len(), 1);
        assert_eq!(
            c[0].call().unwrap().to_json(),
            json!({"name": "search_web", "arguments": {"query": "x"}})
        );
        assert_eq!(c[0].span, Span::new(6, out.len()));
        assert_eq!(c[0].raw, r#"{"query": "x"}"#);
        assert_eq!(names(&strict(&TAG, "<tool name = 'f'>{}</tool>")), ["f"]);
    }

    #[test]
    fn several_tags_are_parallel_calls() {
        let c = strict(
            &TAG,
            r#"<tool name="a">{"x": 1}</tool>\n<tool name="b">{"y": 2}</tool>"#,
        );
        assert_eq!(names(&c), ["a", "b"]);
    }

    #[test]
    fn empty_payload_and_self_closing_tag_are_empty_arguments() {
        let c = strict(&TAG, r#"<tool name="now"></tool> and <tool name="later"/>"#);
        assert_eq!(names(&c), ["now", "later"]);
        assert!(c.iter().all(|c| c.call().unwrap().arguments.is_empty()));
    }

    #[test]
    fn output_ending_inside_the_tag_is_truncated() {
        let out = r#"<tool name="search_web">{"query": "ru"#;
        let c = strict(&TAG, out);
        assert_eq!(only_failure(&c), (FailureKind::Truncated, out.len()));
        assert_eq!(c[0].name.as_deref(), Some("search_web"));
        let out = r#"<tool name="search_web">{"query": "rust"}"#;
        assert_eq!(
            only_failure(&strict(&TAG, out)),
            (FailureKind::Truncated, out.len())
        );
        let out = r#"<tool name="sear"#;
        assert_eq!(only_failure(&strict(&TAG, out)).0, FailureKind::Truncated);
    }

    #[test]
    fn closed_tag_with_missing_brace_is_malformed() {
        let out = r#"<tool name="f">{"a": 1</tool>"#;
        assert_eq!(
            only_failure(&strict(&TAG, out)),
            (FailureKind::Malformed, 22)
        );
    }

    #[test]
    fn escaping_and_lenient_repairs() {
        let out = r#"<tool name="f">{"q": "it\'s"}</tool>"#;
        assert_eq!(
            only_failure(&strict(&TAG, out)),
            (FailureKind::Escaping, 24)
        );
        let c = lenient(&TAG, out);
        assert_eq!(c[0].call().unwrap().arguments["q"], "it's");
        assert_eq!(c[0].repairs, vec![Repair::InvalidEscapes]);
        let out = "<tool name=\"f\">{'q': True}</tool>";
        assert_eq!(only_failure(&strict(&TAG, out)).0, FailureKind::Malformed);
        assert_eq!(
            lenient(&TAG, out)[0].repairs,
            vec![Repair::SingleQuotes, Repair::PythonLiterals]
        );
    }

    #[test]
    fn non_object_payload_and_missing_name_are_malformed() {
        assert_eq!(
            only_failure(&strict(&TAG, r#"<tool name="f">[1]</tool>"#)).0,
            FailureKind::Malformed
        );
        let c = strict(&TAG, r#"<tool id="1">{}</tool>"#);
        assert_eq!(only_failure(&c).0, FailureKind::Malformed);
        assert_eq!(c[0].name, None);
    }

    #[test]
    fn other_tags_do_not_open_the_mode() {
        assert!(
            strict(
                &TAG,
                r#"<tool_call>{"name": "f"}</tool_call><tools>[]</tools>"#
            )
            .is_empty()
        );
    }

    #[test]
    fn calls_in_reasoning_are_reported_as_reasoning() {
        let c = strict(
            &TAG,
            r#"<think><tool name="a">{}</tool></think><tool name="b">{}</tool>"#,
        );
        assert_eq!(
            c.iter().map(|c| c.source).collect::<Vec<_>>(),
            [Source::OutputReasoning, Source::Output]
        );
        let c = strict(&TAG, r#"<tool name="a">{}</tool></think>done"#);
        assert_eq!(c[0].source, Source::OutputReasoning);
    }
}
