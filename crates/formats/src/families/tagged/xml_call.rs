//! `xml_call`: XML calls with the name as an attribute and one child element
//! per argument (the vllm-chill "xmltool" shapes).
//!
//! An irregular scanner (comments, self-closing elements, one region per
//! call), not an engine configuration; it reads values with the
//! tagged-parameter engines' reader (`params::value`).
//!
//! # Wire format
//!
//! ```text
//! Stand by: <tool_call name="http.get">
//!   <args>
//!     <url>http://localhost:8000/health</url>
//!     <timeout>2</timeout>
//!   </args>
//! </tool_call>
//! ```
//!
//! gives `{"name": "http.get", "arguments": {"url": "http://localhost:8000/health", "timeout": 2}}`
//! when the schema types `timeout` as an integer (else `"2"`). The
//! namespaced spelling is the same call:
//!
//! ```text
//! <tool:call xmlns:tool="urn:tool" name="k8s.scale"><tool:args><replicas>1</replicas></tool:args></tool:call>
//! ```
//!
//! - Attributes may be spaced (`<tool_call    name = "f">`) and single- or
//!   double-quoted; `<args>` may carry attributes; `<!-- comments -->`
//!   between elements are skipped.
//! - Values are XML text: `<![CDATA[…]]>` literal, entities decoded, then
//!   typed by the tool schema like `qwen_xml` (SPEC §9). `<k/>` is `""`.
//! - Hermes' `<tool_call>{…}</tool_call>` (no attribute) is not this format.
//! - A missing `name`, an argument element without its closing tag, an
//!   argument given twice, or stray text are `malformed`; output ending
//!   inside a call is `truncated`.

use super::common::{Next, attr, is_cut_token, malformed, truncated};
use super::params::{Read, called, failed, unexpected, value};
use crate::input::{Input, Strictness};
use crate::util::{self, find_from, skip_ws};
use serde_json::Map;
use toolgate_core::Candidate;

/// One spelling of the call: its tags (the call opener is followed by its
/// attributes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spelling {
    /// The call opener (`<tool_call`), followed by the attributes.
    pub open: &'static str,
    /// The call closer.
    pub close: &'static str,
    /// The arguments opener (`<args`), followed by `>` or attributes.
    pub args: &'static str,
    /// The arguments closer.
    pub args_close: &'static str,
}

/// A format's spellings of the call and its mode name
/// ([`crate::format::xml_call`]).
pub(crate) struct XmlCall {
    /// The mode name given to candidates.
    pub mode: &'static str,
    /// The spellings, each read on its own.
    pub spellings: &'static [Spelling],
}

/// Every call of `text`, in every spelling of `x`, in text order.
pub(crate) fn scan(
    text: &str,
    x: &XmlCall,
    input: &Input<'_>,
    strictness: Strictness,
) -> Vec<Candidate> {
    let mut out = crate::cap::Found::new();
    for s in x.spellings {
        out.extend(scan_spelling(text, x.mode, s, input, strictness));
    }
    out.sort_by_key(|c| c.span.start);
    out.into_vec()
}

fn scan_spelling(
    text: &str,
    mode: &'static str,
    s: &Spelling,
    input: &Input<'_>,
    lenient: Strictness,
) -> Vec<Candidate> {
    let b = text.as_bytes();
    let mut open = Next::new(text, s.open);
    let mut close = Next::new(text, s.close);
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    // Where the text after the last call starts (`None`: no call yet).
    let mut after: Option<usize> = None;
    // A call without its opener after a call or before the first one, up
    // to the next call (`tag`'s rule, `util::stray_tag_call`): its `name`
    // attribute and `>`, then its arguments.
    let stray = |from: usize, to: Option<usize>, after_call: bool| {
        let gap = (from, to);
        let whole = |g: &str, _| g.trim_end().len();
        util::stray_tag_call(mode, text, gap, (&[s.close], after_call), "name", whole)
    };
    while let Some(at) = open.from(pos) {
        let tag_start = at + s.open.len();
        // `<tool_call` must be followed by an attribute.
        if !matches!(b.get(tag_start), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            pos = tag_start;
            continue;
        }
        let from = after.unwrap_or(0);
        if let Some(c) = stray(from, Some(at), after.is_some()) {
            out.push(c);
        }
        let region_end = close.from(tag_start);
        let (cand, end) = call(text, (mode, at, tag_start), region_end, s, input, lenient);
        out.push(cand);
        pos = end.max(at + 1);
        after = Some(end);
    }
    if let Some(from) = after
        && let Some(c) = stray(from, None, true)
    {
        out.push(c);
    }
    out.into_vec()
}

/// Skips whitespace and `<!-- … -->` comments from `p`, not past `limit`.
fn skip_ws_comments(text: &str, mut p: usize, limit: usize) -> usize {
    loop {
        p = skip_ws(text.as_bytes(), p).min(limit);
        if text[p..limit].starts_with("<!--") {
            match find_from(&text[..limit], "-->", p + 4) {
                Some(e) => p = e + 3,
                None => return limit,
            }
        } else {
            return p;
        }
    }
}

/// One call; `region_end` is the next closer of this spelling, if any.
fn call(
    text: &str,
    (mode, at, tag_start): (&'static str, usize, usize),
    region_end: Option<usize>,
    s: &Spelling,
    input: &Input<'_>,
    lenient: Strictness,
) -> (Candidate, usize) {
    let b = text.as_bytes();
    let limit = region_end.unwrap_or(text.len());
    let after_close = region_end.map_or(text.len(), |c| c + s.close.len());
    let fail = |end: usize, name: Option<String>, e| failed(mode, text, at, end, name, e);
    let cut = |name: Option<String>| {
        let e = truncated(text.len(), "an XML tool call");
        failed(mode, text, at, text.len(), name, e)
    };
    let Some(n) = memchr::memchr2(b'>', b'<', &b[tag_start..]) else {
        return cut(attr(&text[tag_start..], "name"));
    };
    let gt = tag_start + n;
    if b[gt] != b'>' {
        return fail(
            gt,
            None,
            malformed(at, "the call tag is not closed with `>`"),
        );
    }
    let Some(name) = attr(&text[tag_start..gt], "name").filter(|n| !n.trim().is_empty()) else {
        return fail(
            after_close,
            None,
            malformed(at, "the call tag has no `name` attribute"),
        );
    };
    let name = name.trim().to_string();
    // Besides `name`, only namespace declarations (`xmlns:tool="…"`).
    if let Some(fault) = util::attr_fault(&text[tag_start..gt], &["name", "xmlns"]) {
        return fail(
            after_close,
            fault.name("name", name),
            malformed(at, fault.message("the call tag")),
        );
    }
    let mut args = Map::new();
    let mut repairs = Vec::new();
    let mut p = skip_ws_comments(text, gt + 1, limit);
    let rest = &text[p..limit];
    let opens_args = rest.starts_with(s.args)
        && matches!(
            b.get(p + s.args.len()),
            Some(b'>' | b' ' | b'\t' | b'\n' | b'\r')
        );
    if opens_args {
        let Some(n) = memchr::memchr(b'>', &b[p..limit]) else {
            return if region_end.is_none() {
                cut(Some(name))
            } else {
                fail(
                    after_close,
                    Some(name),
                    malformed(p, "the args tag is not closed"),
                )
            };
        };
        p += n + 1;
        // Child elements up to the args closer.
        loop {
            p = skip_ws_comments(text, p, limit);
            let rest = &text[p..limit];
            if rest.starts_with(s.args_close) {
                p += s.args_close.len();
                break;
            }
            if rest.is_empty() || (region_end.is_none() && is_cut_token(rest, &[s.args_close])) {
                if region_end.is_none() {
                    return cut(Some(name));
                }
                return fail(
                    after_close,
                    Some(name),
                    malformed(p, format!("`{}` is not closed", s.args)),
                );
            }
            let Some((key, vstart, self_closing)) = element_open(text, p, limit) else {
                if region_end.is_none() && memchr::memchr(b'>', &b[p..]).is_none() {
                    return cut(Some(name));
                }
                let e = unexpected(&text[..limit], p, "in the arguments");
                return fail(after_close, Some(name), e);
            };
            if args.contains_key(&key) {
                return fail(
                    after_close,
                    Some(name),
                    malformed(p, format!("argument `{key}` is given twice")),
                );
            }
            if self_closing {
                args.insert(key, serde_json::Value::String(String::new()));
                p = vstart;
                continue;
            }
            let closer = format!("</{key}>");
            let Some(vend) = find_from(&text[..limit], &closer, vstart) else {
                if region_end.is_none() {
                    return cut(Some(name));
                }
                return fail(
                    after_close,
                    Some(name),
                    malformed(p, format!("argument `{key}` is not closed with `{closer}`")),
                );
            };
            let (value, used) = value(
                &text[vstart..vend],
                true,
                Read::Schema,
                (input, &name, &key),
                lenient,
            );
            repairs.extend(used);
            args.insert(key, value);
            p = vend + closer.len();
        }
        p = skip_ws_comments(text, p, limit);
    }
    if region_end.is_none() {
        return cut(Some(name));
    }
    if p != limit {
        let e = unexpected(&text[..limit], p, "in the call");
        return fail(after_close, Some(name), e);
    }
    called(mode, text, (at, after_close), name, args, repairs)
}

/// An element opener `<key attrs>` or `<key/>` at `p`: its name, where its
/// content starts, and whether it closed itself.
fn element_open(text: &str, p: usize, limit: usize) -> Option<(String, usize, bool)> {
    let b = text.as_bytes();
    if b.get(p) != Some(&b'<') {
        return None;
    }
    let mut i = p + 1;
    let first = *b.get(i)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    while i < limit && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'-' | b'.' | b':')) {
        i += 1;
    }
    let key = text[p + 1..i].to_string();
    let gt = p + memchr::memchr(b'>', &b[p..limit])?;
    if memchr::memchr(b'<', &b[i..gt]).is_some() {
        return None;
    }
    let self_closing = text[i..gt].trim_end().ends_with('/');
    Some((key, gt + 1, self_closing))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::testutil::cut_at_end;
    use super::*;
    use crate::input::ParamTypes;
    use serde_json::json;
    use std::collections::HashMap;
    use toolgate_core::{FailureKind, Source};

    fn run(out: &str, pt: Option<&ParamTypes>) -> Vec<Candidate> {
        super::super::testutil::typed(&crate::format::xml_call::XML_CALL, out, pt)
    }

    #[test]
    fn a_call_without_its_opener_beside_a_call_is_malformed() {
        // s47-stray: `tag`'s rule; `f` ran and `g` was dropped as text.
        use crate::irregular::testkit::assert_stray;
        let f = r#"<tool_call name="f"><args><a>1</a></args></tool_call>"#;
        for (out, stray) in [
            (
                format!(r#"{f}name="g"><args><b>2</b></args></tool_call>"#),
                1,
            ),
            (format!("{f}\nname=\"g\"><args><b>2</b></args>"), 1),
            (format!(r#"name="g"><args/></tool_call>{f}"#), 0),
        ] {
            assert_stray(&run(&out, None), stray, ("f", Some("g")), &out);
        }
        // Prose, and hermes's block before a call, stay text.
        for out in [
            format!("Use </tool_call> to close.\n{f}"),
            format!(r#"<tool_call>{{"name": "h", "arguments": {{}}}}</tool_call>{f}"#),
            format!("{f} done, the name is set."),
        ] {
            let c = run(&out, None);
            assert_eq!(c.len(), 1, "{out}: {c:#?}");
            assert!(c[0].call().is_some(), "{out}");
        }
    }

    fn int(tool: &str, param: &str) -> ParamTypes {
        ParamTypes {
            tools: HashMap::from([(
                tool.to_string(),
                HashMap::from([(param.to_string(), vec!["integer".to_string()])]),
            )]),
        }
    }

    #[test]
    fn pass_with_attributes_comments_and_typing() {
        let pt = int("http.get", "timeout");
        let out = "Stand by: <tool_call name=\"http.get\">\n  <args data-n='1'>\n    <url>http://h/health</url>\n    <!-- c -->\n    <timeout>2</timeout>\n  </args>\n</tool_call>\n<!-- trailing comment -->";
        let c = run(out, Some(&pt));
        assert_eq!(c.len(), 1);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"url": "http://h/health", "timeout": 2})
        );
        assert_eq!(
            &out[c[0].span.start..c[0].span.end],
            &out[10..out.find("\n<!-- trailing").unwrap()]
        );
        let c = run(out, None);
        assert_eq!(c[0].call().unwrap().arguments["timeout"], "2");
    }

    #[test]
    fn namespaced_spaced_cdata_and_parallel() {
        let pt = int("vllm.sleep", "level");
        let out = "<tool:call xmlns:tool=\"urn:tool\" name = \"k8s.scale\">\n  <tool:args><replicas>  1</replicas><note>a &amp; b</note></tool:args>\n</tool:call><tool_call    name=\"vllm.sleep\"><args><level><![CDATA[2]]></level><empty/></args></tool_call>";
        let c = run(out, Some(&pt));
        assert_eq!(c.len(), 2);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"replicas": "  1", "note": "a & b"})
        );
        assert_eq!(
            json!(c[1].call().unwrap().arguments),
            json!({"level": 2, "empty": ""})
        );
    }

    #[test]
    fn wrong_type_stays_a_string() {
        let pt = int("vllm.sleep", "level");
        let out = "<tool_call name=\"vllm.sleep\"><args><level>deep</level></args></tool_call>";
        assert_eq!(
            run(out, Some(&pt))[0].call().unwrap().arguments["level"],
            "deep"
        );
    }

    #[test]
    fn truncated_and_malformed() {
        for out in [
            "<tool_call name=\"f\"><args><a>1</a><b>2",
            "<tool_call name=\"f\"><args><a>1</a>",
            "<tool_call name=\"f\"",
        ] {
            let c = run(out, None);
            cut_at_end(&c, out);
        }
        for out in [
            "<tool_call name=\"f\"><args><a>1</args></tool_call>",
            "<tool_call id=\"1\"><args></args></tool_call>",
            "<tool_call name=\"f\"><args><a>1</a><a>2</a></args></tool_call>",
            "<tool_call name=\"f\">hello</tool_call>",
        ] {
            assert_eq!(
                run(out, None)[0].failure().unwrap().kind,
                FailureKind::Malformed,
                "{out}"
            );
        }
    }

    #[test]
    fn hermes_is_not_xml_call_and_reasoning() {
        assert!(run("<tool_call>{\"name\": \"f\"}</tool_call>", None).is_empty());
        let c = run("<tool_call name=\"f\"></tool_call>", None);
        assert!(c[0].call().unwrap().arguments.is_empty());
        let out = "<think><tool_call name=\"f\"></tool_call></think>";
        assert_eq!(run(out, None)[0].source, Source::OutputReasoning);
    }
}
