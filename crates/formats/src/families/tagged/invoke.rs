//! The `<invoke name="f"><parameter name="k">v</parameter></invoke>` shape
//! that several families spell with their own tag names (DeepSeek DSML,
//! MiniMax-M2, Step-3 steptml, MiniCPM5): one parser, configured per family
//! by a [`Syntax`].
//!
//! An invoke is an opening tag with a `name` attribute, then parameters
//! (each an opening tag with a `name` attribute, raw text, a closing tag),
//! then the closing tag; a self-closing invoke (`<invoke name="f"/>`) has no
//! arguments. Values are typed like `qwen_xml` (SPEC §9), except where the
//! family says otherwise (DSML's `string="true|false"`).

use super::common::{
    Next, attr, is_cut_token, json_args, json_value, malformed, trim_one_newline, truncated,
    typed_value, types_of, xml_text,
};
use crate::input::{Input, Strictness};
use crate::util::{self, skip_ws};
use serde_json::{Map, Value};
use toolgate_core::{Candidate, Repair, Span};

/// One family's spelling of the invoke shape.
pub(crate) struct Syntax<'a> {
    /// The mode name given to candidates.
    pub mode: &'a str,
    /// The invoke opener up to and including the space before its
    /// attributes, e.g. `<invoke `.
    pub invoke: &'a str,
    /// The invoke closer, e.g. `</invoke>`.
    pub invoke_end: &'a str,
    /// The parameter opener with its trailing space, e.g. `<parameter `.
    pub param: &'a str,
    /// The parameter closer.
    pub param_end: &'a str,
    /// Invokes count only inside this block (MiniMax-M2's
    /// `<minimax:tool_call>` … `</minimax:tool_call>`).
    pub block: Option<(&'a str, &'a str)>,
    /// DSML: `string="true"` keeps the text as a string, `string="false"`
    /// reads it as JSON, whatever the schema says.
    pub string_attr: bool,
    /// DSML: the invoke body may be a JSON object instead of parameters.
    pub json_body: bool,
    /// XML text: `<![CDATA[…]]>` taken literally, entities decoded.
    pub xml_text: bool,
}

struct Finders<'a> {
    invoke: Next<'a>,
    invoke_end: Next<'a>,
    param: Next<'a>,
    param_end: Next<'a>,
}

/// Every invoke of `text` in `syntax`.
pub(crate) fn scan(
    text: &str,
    syntax: &Syntax<'_>,
    input: &Input<'_>,
    lenient: Strictness,
) -> Vec<Candidate> {
    let mut f = Finders {
        invoke: Next::new(text, syntax.invoke),
        invoke_end: Next::new(text, syntax.invoke_end),
        param: Next::new(text, syntax.param),
        param_end: Next::new(text, syntax.param_end),
    };
    let mut out = crate::rules::Found::new();
    match syntax.block {
        None => {
            region(
                text,
                0,
                text.len(),
                syntax,
                &mut f,
                input,
                lenient,
                &mut out,
            );
        }
        Some((open, close)) => {
            let mut opens = Next::new(text, open);
            let mut closes = Next::new(text, close);
            let mut pos = 0;
            while let Some(o) = opens.from(pos) {
                let start = o + open.len();
                let end = closes.from(start).unwrap_or(text.len());
                let resume = region(text, start, end, syntax, &mut f, input, lenient, &mut out);
                pos = resume.max(end).max(start);
            }
        }
    }
    out.into_vec()
}

/// The invokes starting in `text[from..to]`; returns where scanning may
/// resume (past the last invoke, which may run beyond `to` when a block's
/// closer sits inside a value).
#[allow(clippy::too_many_arguments)]
fn region(
    text: &str,
    from: usize,
    to: usize,
    syntax: &Syntax,
    f: &mut Finders<'_>,
    input: &Input<'_>,
    lenient: Strictness,
    out: &mut crate::rules::Found,
) -> usize {
    let mut pos = from;
    while let Some(at) = f.invoke.from(pos).filter(|a| *a < to) {
        let (cand, end) = invoke(text, at, syntax, f, input, lenient);
        out.push(cand);
        pos = end.max(at + 1);
    }
    pos
}

/// One invoke at `at`: the candidate and where scanning resumes.
fn invoke(
    text: &str,
    at: usize,
    syntax: &Syntax,
    f: &mut Finders<'_>,
    input: &Input<'_>,
    lenient: Strictness,
) -> (Candidate, usize) {
    let b = text.as_bytes();
    let mode = syntax.mode;
    let fail = |end: usize, name: Option<String>, e| {
        (
            util::candidate(
                mode,
                Span::new(at, end),
                &text[at..end],
                name,
                Err(e),
                Vec::new(),
            ),
            end,
        )
    };
    let tag_start = at + syntax.invoke.len();
    let Some(n) = memchr::memchr2(b'>', b'<', &b[tag_start..]) else {
        let name = attr(&text[tag_start..], "name");
        return fail(text.len(), name, truncated(text.len(), "an invoke tag"));
    };
    let gt = tag_start + n;
    if b[gt] != b'>' {
        return fail(
            gt,
            None,
            malformed(at, "the invoke tag is not closed with `>`"),
        );
    }
    let tag = &text[tag_start..gt];
    let Some(name) = attr(tag, "name").filter(|n| !n.trim().is_empty()) else {
        let end = recover(text, gt + 1, syntax, f);
        return fail(
            end,
            None,
            malformed(at, "the invoke tag has no `name` attribute"),
        );
    };
    let name = name.trim().to_string();
    if let Some(other) = util::unknown_attr(tag, &["name"]) {
        let end = recover(text, gt + 1, syntax, f);
        return fail(
            end,
            Some(name),
            malformed(
                at,
                format!(
                    "unknown attribute `{other}` in the invoke tag: a call never runs with arguments dropped"
                ),
            ),
        );
    }
    if tag.trim_end().ends_with('/') {
        let end = gt + 1;
        let cand = util::candidate(
            mode,
            Span::new(at, end),
            &text[at..end],
            Some(name),
            Ok(Map::new()),
            Vec::new(),
        );
        return (cand, end);
    }
    let mut args = Map::new();
    let mut repairs: Vec<Repair> = Vec::new();
    let mut p = gt + 1;
    loop {
        p = skip_ws(b, p);
        let rest = &text[p..];
        if rest.is_empty() || is_cut_token(rest, &[syntax.invoke_end, syntax.param]) {
            return fail(text.len(), Some(name), truncated(text.len(), "an invoke"));
        }
        if rest.starts_with(syntax.invoke_end) {
            let end = p + syntax.invoke_end.len();
            let cand = util::candidate(
                mode,
                Span::new(at, end),
                &text[at..end],
                Some(name),
                Ok(args),
                repairs,
            );
            return (cand, end);
        }
        if syntax.json_body && args.is_empty() && rest.starts_with('{') {
            // `<invoke name="f">{"k": "v"}</invoke>`
            let close = f.invoke_end.from(p);
            let pend = close.unwrap_or(text.len());
            let (arguments, used) = json_args(&text[p..pend], p, lenient, close.is_none());
            // Without its closer the invoke is open at the end of the output.
            let arguments = match (arguments, close) {
                (Ok(_), None) => Err(truncated(text.len(), "an invoke")),
                (a, _) => a,
            };
            let end = close.map_or(text.len(), |c| c + syntax.invoke_end.len());
            let cand = util::candidate(
                mode,
                Span::new(at, end),
                &text[at..end],
                Some(name),
                arguments,
                used,
            );
            return (cand, end);
        }
        if !rest.starts_with(syntax.param) {
            let end = recover(text, p, syntax, f);
            let shown: String = rest.chars().take(20).collect();
            let e = malformed(p, format!("unexpected text `{shown}` in invoke `{name}`"));
            return fail(end, Some(name), e);
        }
        // <parameter name="k" …>VALUE</parameter>
        let ptag_start = p + syntax.param.len();
        let Some(n) = memchr::memchr2(b'>', b'<', &b[ptag_start..]) else {
            return fail(
                text.len(),
                Some(name),
                truncated(text.len(), "a parameter tag"),
            );
        };
        let pgt = ptag_start + n;
        if b[pgt] != b'>' {
            let end = recover(text, pgt, syntax, f);
            return fail(
                end,
                Some(name),
                malformed(p, "a parameter tag is not closed with `>`"),
            );
        }
        let ptag = &text[ptag_start..pgt];
        let vstart = pgt + 1;
        let close = f.param_end.from(vstart);
        let next_param = f.param.from(vstart);
        let inv_end = f.invoke_end.from(vstart);
        let unclosed = match close {
            None => next_param.is_some() || inv_end.is_some(),
            Some(c) => next_param.is_some_and(|q| q < c) || inv_end.is_some_and(|q| q < c),
        };
        let Some(key) = attr(ptag, "name").filter(|k| !k.is_empty()) else {
            let end = recover(text, vstart, syntax, f);
            return fail(
                end,
                Some(name),
                malformed(p, "a parameter has no `name` attribute"),
            );
        };
        let known: &[&str] = if syntax.string_attr {
            &["name", "string"]
        } else {
            &["name"]
        };
        if let Some(other) = util::unknown_attr(ptag, known) {
            let end = recover(text, vstart, syntax, f);
            return fail(
                end,
                Some(name),
                malformed(
                    p,
                    format!(
                        "unknown attribute `{other}` in a parameter tag: a call never runs with arguments dropped"
                    ),
                ),
            );
        }
        if unclosed {
            let end = recover(text, vstart, syntax, f);
            let e = malformed(
                p,
                format!(
                    "parameter `{key}` is not closed with `{}`",
                    syntax.param_end
                ),
            );
            return fail(end, Some(name), e);
        }
        let Some(vend) = close else {
            return fail(
                text.len(),
                Some(name),
                truncated(text.len(), &format!("parameter `{key}`")),
            );
        };
        if args.contains_key(&key) {
            let end = recover(text, vend, syntax, f);
            return fail(
                end,
                Some(name),
                malformed(p, format!("parameter `{key}` is given twice")),
            );
        }
        let raw = trim_one_newline(&text[vstart..vend]);
        let raw = if syntax.xml_text {
            xml_text(raw)
        } else {
            raw.into()
        };
        let string = if syntax.string_attr {
            attr(ptag, "string")
        } else {
            None
        };
        let (value, used) = match string.as_deref() {
            Some("true") => (Value::String(raw.into_owned()), Vec::new()),
            Some("false") => json_value(&raw, &[], lenient),
            _ => typed_value(&raw, types_of(input, Some(&name), &key), lenient),
        };
        repairs.extend(used);
        args.insert(key, value);
        p = vend + syntax.param_end.len();
    }
}

/// Where to resume after a malformed invoke: after its closer when one comes
/// before the next invoke, else at that invoke (or the end).
fn recover(text: &str, from: usize, syntax: &Syntax, f: &mut Finders<'_>) -> usize {
    let next = f.invoke.from(from).unwrap_or(text.len());
    match f.invoke_end.from(from) {
        Some(e) if e < next => e + syntax.invoke_end.len(),
        _ => next,
    }
}
