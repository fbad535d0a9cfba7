//! **Engine `invoke`**, one of the tagged-parameter engines (declared
//! formats: `engine = "tagged_parameters"` with a `parameter` pair); its
//! parameter loop and value reader are [`super::params`]'s.
//!
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
    Next, attr, broken_call, decode_entities, is_cut_token, is_structured, json_args, malformed,
    truncated, types_of,
};
use super::elements::nested;
use super::params::{
    Markup, Param, Read, Stop, Tags, called, failed, params, unclosed, unexpected,
};
use crate::input::{Input, Strictness};
use crate::util;
use serde_json::{Map, Value};
use toolgate_core::{Candidate, ParseFailure, Repair, Span};

/// How a parameter's text is typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Typing {
    /// By the tool's schema (SPEC §9), like `qwen_xml`.
    Schema,
    /// DSML: `string="true"` keeps the text as a string, `string="false"`
    /// reads it as JSON, whatever the schema says; no attribute: the schema.
    StringAttr,
    /// Kimi K3: `type="string"` keeps the text as a string, any other type
    /// reads it as JSON (text that is not JSON stays a string); no
    /// attribute: the schema.
    TypeAttr,
}

/// One family's spelling of the invoke shape.
pub(crate) struct Syntax<'a> {
    /// The mode name given to candidates.
    pub mode: &'static str,
    /// The invoke opener up to and including the space before its
    /// attributes, e.g. `<invoke `.
    pub invoke: &'a str,
    /// The invoke closer, e.g. `</invoke>`.
    pub invoke_end: &'a str,
    /// The parameter opener with its trailing space, e.g. `<parameter `
    /// (unused with `element_params`).
    pub param: &'a str,
    /// The parameter closer (unused with `element_params`).
    pub param_end: &'a str,
    /// Invokes count only inside this block (MiniMax-M2's
    /// `<minimax:tool_call>` … `</minimax:tool_call>`).
    pub block: Option<(&'a str, &'a str)>,
    /// What ends an opening tag's attributes: `>`, or Kimi K3's `<|sep|>`.
    pub tag_end: &'a str,
    /// The invoke attribute holding the tool name (`name`; K3: `tool`).
    pub name_attr: &'a str,
    /// Further attributes an invoke may carry (K3: `index`); any other is
    /// `malformed`.
    pub invoke_attrs: &'a [&'a str],
    /// The parameter attribute holding the key (`name`; K3: `key`).
    pub key_attr: &'a str,
    /// How values are typed.
    pub typing: Typing,
    /// Attribute values are XML text (`&quot;`, `&amp;` decoded).
    pub attr_entities: bool,
    /// DSML: the invoke body may be a JSON object instead of parameters.
    pub json_body: bool,
    /// Kimi K3: the invoke body may be one JSON object between these two
    /// tags instead of parameters (`<|open|>json type="object"<|sep|>` …
    /// `<|close|>json<|sep|>`); only blank text may follow it in the invoke.
    pub json_body_tags: Option<(&'a str, &'a str)>,
    /// XML text: `<![CDATA[…]]>` taken literally, entities decoded.
    pub xml_text: bool,
    /// MiniMax-M3: each parameter is an element named by its key,
    /// `<city>Paris</city>`, instead of `param` with a key attribute.
    pub element_params: bool,
    /// MiniMax-M3: a namespace token that may stand before any tag
    /// (`]<]minimax[>[<invoke name="f">`); skipped where it does.
    pub ns: Option<&'a str>,
}

impl Syntax<'_> {
    /// The attribute `key` of an opening tag's text, entities decoded where
    /// the family escapes attribute values.
    fn attr(&self, tag: &str, key: &str) -> Option<String> {
        let v = attr(tag, key)?;
        Some(if self.attr_entities {
            decode_entities(&v).into_owned()
        } else {
            v
        })
    }

    /// `p` past the namespace token, when one stands there.
    fn skip_ns(&self, text: &str, p: usize) -> usize {
        match self.ns {
            Some(ns) if text[p..].starts_with(ns) => p + ns.len(),
            _ => p,
        }
    }
}

/// Where an opening tag whose attributes start at `from` ends.
enum TagEnd {
    /// The attributes end here; the tag closer follows.
    At(usize),
    /// Another tag starts here first: the tag is never closed.
    Broken(usize),
    /// The output ends inside the tag.
    Cut,
}

fn tag_end(text: &str, from: usize, syntax: &Syntax) -> TagEnd {
    let b = text.as_bytes();
    if syntax.tag_end == ">" {
        return match memchr::memchr2(b'>', b'<', &b[from..]) {
            Some(n) if b[from + n] == b'>' => TagEnd::At(from + n),
            Some(n) => TagEnd::Broken(from + n),
            None => TagEnd::Cut,
        };
    }
    // A special-token closer (`<|sep|>`): `>` is attribute text there.
    match memchr::memchr(b'<', &b[from..]) {
        None => TagEnd::Cut,
        Some(n) => {
            let lt = from + n;
            let rest = &text[lt..];
            if rest.starts_with(syntax.tag_end) {
                TagEnd::At(lt)
            } else if is_cut_token(rest, &[syntax.tag_end]) {
                TagEnd::Cut
            } else {
                TagEnd::Broken(lt)
            }
        }
    }
}

struct Finders<'a> {
    syntax: &'a Syntax<'a>,
    tags: Tags<'a>,
    /// The invoke opener closed at once, without attributes (`<invoke>`).
    bare: (Next<'a>, usize),
    /// CDATA sections, in families whose values are XML text.
    cdata: Option<Cdata<'a>>,
    /// The input, for the schema of nested element values.
    input: &'a Input<'a>,
}

const CDATA_OPEN: &str = "<![CDATA[";
const CDATA_CLOSE: &str = "]]>";

/// The CDATA sections of an XML-text family's output, found forward.
struct Cdata<'a> {
    open: Next<'a>,
    close: Next<'a>,
}

impl Cdata<'_> {
    /// The first hit of `find` at or after `from` that is not inside a CDATA
    /// section; `None` when there is none, or a section is never closed
    /// (the output ends inside it). Each walk moves forward only; the walks
    /// of one value start at the same place, so their cost is the value's.
    fn outside(
        &mut self,
        from: usize,
        mut find: impl FnMut(usize) -> Option<usize>,
    ) -> Option<usize> {
        let mut p = from;
        loop {
            let hit = find(p)?;
            match self.open.from(p) {
                Some(o) if o < hit => {
                    p = self.close.from(o + CDATA_OPEN.len())? + CDATA_CLOSE.len();
                }
                _ => return Some(hit),
            }
        }
    }
}

/// Every invoke of `text` in `syntax`.
pub(crate) fn scan(
    text: &str,
    syntax: &Syntax<'_>,
    input: &Input<'_>,
    lenient: Strictness,
) -> Vec<Candidate> {
    let s = syntax;
    let bare = format!("{}{}", s.invoke.trim_end(), s.tag_end);
    let mut f = Finders {
        syntax,
        tags: Tags::new(text, [s.invoke, s.invoke_end, s.param, s.param_end]),
        bare: (Next::new(text, &bare), bare.len()),
        cdata: s.xml_text.then(|| Cdata {
            open: Next::new(text, CDATA_OPEN),
            close: Next::new(text, CDATA_CLOSE),
        }),
        input,
    };
    let mut out = crate::cap::Found::new();
    match syntax.block {
        None => {
            region(
                text,
                (0, text.len(), false),
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
                let resume = region(text, (start, end, true), &mut f, input, lenient, &mut out);
                pos = resume.max(end).max(start);
            }
        }
    }
    out.into_vec()
}

/// The invokes starting in `text[from..to]`; returns where scanning may
/// resume (past the last invoke, which may run beyond `to` when a block's
/// closer sits inside a value). `in_block`: the region is a call block's
/// body (MiniMax-M2's `<minimax:tool_call>`), where a parameter tag outside
/// every invoke is a broken call ([`stray_param`]).
fn region(
    text: &str,
    (from, to, in_block): (usize, usize, bool),
    f: &mut Finders<'_>,
    input: &Input<'_>,
    lenient: Strictness,
    out: &mut crate::cap::Found,
) -> usize {
    let mut pos = from;
    loop {
        let at = f.tags.open.from(pos).filter(|a| *a < to);
        let bare = f.bare.0.from(pos).filter(|b| *b < to);
        let gap_end = [at, bare].into_iter().flatten().min().unwrap_or(to);
        let stray = if in_block {
            stray_param(text, (pos, gap_end), f.syntax)
        } else if pos > from || at.or(bare).is_some() {
            // No call block: after an invoke, or before the first one.
            stray_invoke(text, (pos, gap_end), f.syntax, pos > from)
        } else {
            None
        };
        if let Some(stray) = stray {
            out.push(stray);
        }
        let (start, (cand, end)) = match (at, bare) {
            (Some(at), Some(b)) if b < at => (b, bare_invoke(text, b, f)),
            (Some(at), _) => (at, invoke(text, at, f, input, lenient)),
            (None, Some(b)) => (b, bare_invoke(text, b, f)),
            (None, None) => return pos,
        };
        out.push(cand);
        pos = end.max(start + 1);
    }
}

/// A parameter tag between the invokes of a call block
/// (`…</invoke><parameter name="b">2</parameter></minimax:tool_call>`): an
/// argument the model wrote outside its invoke, a broken call rather than
/// text between calls. Skipped, the invoke before it executed without it
/// (a call is never executed with arguments dropped, issue 22). Only
/// `text[from..to]`, the gap before the next invoke, is searched, so the
/// scan stays linear; element-named parameters (MiniMax-M3's `<KEY>`) have
/// no tag of their own to look for.
///
/// An invoke closer after text in the gap (`…</invoke>name="g">…</invoke>`,
/// `…</invoke>g{…}</invoke>`), or an invoke's name attribute at the gap's
/// start with no closer at all (`…</invoke>name="g"></minimax:tool_call>`),
/// is an invoke whose opener is missing: a broken call too, for every row
/// with a block ([`util::stray_call`]). Other text between a block's
/// invokes stays text, as vLLM's and SGLang's `minimax_m2` parsers read it
/// (they take each `<invoke …</invoke>` of the block and ignore the rest;
/// DECISIONS).
fn stray_param(text: &str, (from, to): (usize, usize), syntax: &Syntax<'_>) -> Option<Candidate> {
    let gap = text.get(from..to).filter(|g| !g.is_empty())?;
    let param = (!syntax.element_params)
        .then(|| gap.find(syntax.param))
        .flatten();
    // An invoke without its opener: closed by the invoke closer after
    // text, or (no closer) its name attribute at the gap's start
    // (`…</invoke>name="g"></minimax:tool_call>`): `util::stray_call`, the
    // rule hermes and gemma share.
    let name_attr = format!("{}=", syntax.name_attr);
    let stray = util::stray_call(
        text,
        (from, Some(to)),
        (&[syntax.invoke_end], true),
        |g| (!g.trim().is_empty()).then(|| util::skip_ws(g.as_bytes(), 0)),
        |g| g.starts_with(&name_attr).then(|| g.trim_end().len()),
    );
    match (param, stray) {
        (Some(p), s) if s.as_ref().is_none_or(|s| from + p <= s.0) => {
            let p = from + p;
            let what = format!(
                "a parameter tag `{}` outside every invoke of the call block (its argument would be dropped)",
                syntax.param.trim_end()
            );
            Some(broken_call(syntax.mode, text, (p, to), None, (p, what)).0)
        }
        (_, Some((start, end, f))) => Some(util::candidate(
            syntax.mode,
            Span::new(start, end),
            &text[start..end],
            None,
            Err(f),
            Vec::new(),
        )),
        _ => None,
    }
}

/// An invoke without its opener in a row without a call block (DSML,
/// Step-3, MiniCPM5), in the gap `text[from..to]` after an invoke or before
/// the first one ([`util::stray_call`], `tag`'s rule, as these invokes are
/// tags found anywhere in the output): closed by the invoke closer, the
/// call's own text starting at its name attribute
/// (`…</invoke>name="g">…</invoke>`, and the same before the first invoke;
/// [`util::closed_named`]), or, after an invoke with no closer at all, the
/// gap starting with that attribute and its `>` (`…</invoke>name="g">…`).
/// Other text between invokes (prose, a `<parameter` named in it) stays
/// text: with no block there is no call region to hold it.
fn stray_invoke(
    text: &str,
    gap: (usize, usize),
    syntax: &Syntax<'_>,
    after_call: bool,
) -> Option<Candidate> {
    util::stray_tag_call(
        syntax.mode,
        text,
        (gap.0, Some(gap.1)),
        (&[syntax.invoke_end], after_call),
        syntax.name_attr,
        |g, _| g.trim_end().len(),
    )
}

/// An invoke opener closed at once (`<invoke>`): the family's own call
/// markup without the name, a broken call rather than text (probe 44: it
/// was not seen, and the invoke beside it executed alone).
fn bare_invoke(text: &str, at: usize, f: &mut Finders<'_>) -> (Candidate, usize) {
    let end = f.resume(text, at + f.bare.1);
    let what = format!("the invoke tag has no `{}` attribute", f.syntax.name_attr);
    broken_call(f.syntax.mode, text, (at, end), None, (at, what))
}

/// One invoke at `at`: the candidate and where scanning resumes.
fn invoke(
    text: &str,
    at: usize,
    f: &mut Finders<'_>,
    input: &Input<'_>,
    lenient: Strictness,
) -> (Candidate, usize) {
    let syntax = f.syntax;
    let mode = syntax.mode;
    let tag_start = at + syntax.invoke.len();
    let gt = match tag_end(text, tag_start, syntax) {
        TagEnd::At(gt) => gt,
        TagEnd::Cut => {
            let name = syntax.attr(&text[tag_start..], syntax.name_attr);
            let e = truncated(text.len(), "an invoke tag");
            return failed(mode, text, at, text.len(), name, e);
        }
        TagEnd::Broken(lt) => {
            let e = malformed(
                at,
                format!("the invoke tag is not closed with `{}`", syntax.tag_end),
            );
            return failed(mode, text, at, lt, None, e);
        }
    };
    let body = gt + syntax.tag_end.len();
    let tag = &text[tag_start..gt];
    let Some(name) = syntax
        .attr(tag, syntax.name_attr)
        .filter(|n| !n.trim().is_empty())
    else {
        let end = f.resume(text, body);
        let e = malformed(
            at,
            format!("the invoke tag has no `{}` attribute", syntax.name_attr),
        );
        return failed(mode, text, at, end, None, e);
    };
    let name = name.trim().to_string();
    let known: Vec<&str> = std::iter::once(syntax.name_attr)
        .chain(syntax.invoke_attrs.iter().copied())
        .collect();
    if let Some(fault) = util::attr_fault(tag, &known) {
        let end = f.resume(text, body);
        let e = malformed(at, fault.message("the invoke tag"));
        let name = fault.name(syntax.name_attr, name);
        return failed(mode, text, at, end, name, e);
    }
    if syntax.tag_end == ">" && tag.trim_end().ends_with('/') {
        return called(mode, text, (at, body), name, Map::new(), Vec::new());
    }
    params(f, text, (at, body), name, input, lenient)
}

impl Markup for Finders<'_> {
    fn mode(&self) -> &'static str {
        self.syntax.mode
    }
    fn end(&self) -> &str {
        self.syntax.invoke_end
    }
    fn is_cut(&self, rest: &str) -> bool {
        let s = self.syntax;
        match s.ns {
            Some(ns) => is_cut_token(rest, &[s.invoke_end, s.param, ns]),
            None => is_cut_token(rest, &[s.invoke_end, s.param]),
        }
    }
    fn skip(&self, text: &str, p: usize) -> usize {
        self.syntax.skip_ns(text, p)
    }
    fn inside(&self, _name: &str) -> String {
        "an invoke".into()
    }
    fn noun(&self) -> &str {
        "parameter"
    }
    fn xml(&self) -> bool {
        self.syntax.xml_text
    }

    /// DSML: `<invoke name="f">{"k": "v"}</invoke>`; Kimi K3: the object
    /// in its JSON block (`json_body_tags`).
    fn whole(
        &mut self,
        text: &str,
        at: usize,
        p: usize,
        name: &str,
        lenient: Strictness,
    ) -> Option<(Candidate, usize)> {
        let close = self.tags.close.from(p);
        let pend = close.unwrap_or(text.len());
        let (arguments, used) = match self.syntax.json_body_tags {
            Some((open, block_end)) if text[p..].starts_with(open) => {
                json_block(text, (p + open.len(), pend), block_end, lenient)
            }
            _ if self.syntax.json_body && text[p..].starts_with('{') => {
                json_args(&text[p..pend], p, lenient, close.is_none())
            }
            _ => return None,
        };
        // Without its closer the invoke is open at the end of the output.
        let arguments = match (arguments, close) {
            (Ok(_), None) => Err(truncated(text.len(), "an invoke")),
            (a, _) => a,
        };
        let end = close.map_or(text.len(), |c| c + self.syntax.invoke_end.len());
        let cand = util::candidate(
            self.syntax.mode,
            Span::new(at, end),
            &text[at..end],
            Some(name.to_string()),
            arguments,
            used,
        );
        Some((cand, end))
    }

    fn param(&mut self, text: &str, p: usize, name: &str) -> Result<Param, Stop> {
        if self.syntax.element_params {
            element_param(text, p, name, self)
        } else {
            attr_param(text, p, name, self)
        }
    }

    /// After a malformed invoke: past its closer when one comes before the
    /// next invoke, else at that invoke (or the end).
    fn resume(&mut self, text: &str, from: usize) -> usize {
        self.tags.resume(text, from)
    }
}

/// The arguments of a JSON block whose object starts at `from` and whose
/// invoke ends at `to` (the invoke's closer, or the end of the output): the
/// object up to `block_end`, then nothing but blank text. An output that
/// ends inside the block is cut there.
fn json_block(
    text: &str,
    (from, to): (usize, usize),
    block_end: &str,
    lenient: Strictness,
) -> (Result<Map<String, Value>, ParseFailure>, Vec<Repair>) {
    let Some(j) = text[from..to].find(block_end).map(|i| from + i) else {
        return if to == text.len() {
            (Err(truncated(text.len(), "a JSON block")), Vec::new())
        } else {
            let e = format!("the JSON block is not closed with `{block_end}`");
            (Err(malformed(from, e)), Vec::new())
        };
    };
    let after = j + block_end.len();
    let rest = &text[after..to];
    if !rest.trim().is_empty() {
        let shown: String = rest.trim_start().chars().take(20).collect();
        let e = format!("unexpected text `{shown}` after the JSON block");
        return (Err(malformed(after, e)), Vec::new());
    }
    json_args(&text[from..j], from, lenient, false)
}

/// `<parameter name="k" …>VALUE</parameter>` at `p`.
fn attr_param(text: &str, p: usize, name: &str, f: &mut Finders<'_>) -> Result<Param, Stop> {
    let syntax = f.syntax;
    if !text[p..].starts_with(syntax.param) {
        let end = f.resume(text, p);
        let e = unexpected(text, p, &format!("in invoke `{name}`"));
        return Err(Stop::Malformed(end, e));
    }
    let ptag_start = p + syntax.param.len();
    let pgt = match tag_end(text, ptag_start, syntax) {
        TagEnd::At(pgt) => pgt,
        TagEnd::Cut => return Err(Stop::Cut("a parameter tag".into())),
        TagEnd::Broken(lt) => {
            let end = f.resume(text, lt);
            let e = malformed(
                p,
                format!("a parameter tag is not closed with `{}`", syntax.tag_end),
            );
            return Err(Stop::Malformed(end, e));
        }
    };
    let ptag = &text[ptag_start..pgt];
    let vstart = pgt + syntax.tag_end.len();
    let has_cdata = f
        .cdata
        .as_mut()
        .is_some_and(|c| c.open.from(vstart).is_some());
    let (close, next_param, invoke_end) = match f.cdata.as_mut() {
        // XML text: markup inside `<![CDATA[…]]>` is the value's text
        // (probe 44: `<![CDATA[x</param>y]]>` ended the value at `x`).
        Some(cdata) if has_cdata => (
            cdata.outside(vstart, |p| f.tags.param_end.from(p)),
            cdata.outside(vstart, |p| f.tags.param.from(p)),
            cdata.outside(vstart, |p| f.tags.close.from(p)),
        ),
        _ => (
            f.tags.param_end.from(vstart),
            f.tags.param.from(vstart),
            f.tags.close.from(vstart),
        ),
    };
    let is_unclosed = unclosed(close, [next_param, invoke_end]);
    let Some(key) = syntax.attr(ptag, syntax.key_attr).filter(|k| !k.is_empty()) else {
        let end = f.resume(text, vstart);
        let e = malformed(
            p,
            format!("a parameter has no `{}` attribute", syntax.key_attr),
        );
        return Err(Stop::Malformed(end, e));
    };
    let type_attr = match syntax.typing {
        Typing::Schema => None,
        Typing::StringAttr => Some("string"),
        Typing::TypeAttr => Some("type"),
    };
    let known: Vec<&str> = std::iter::once(syntax.key_attr).chain(type_attr).collect();
    if let Some(fault) = util::attr_fault(ptag, &known) {
        let end = f.resume(text, vstart);
        let e = malformed(p, fault.message("a parameter tag"));
        return Err(Stop::Malformed(end, e));
    }
    if is_unclosed {
        let end = f.resume(text, vstart);
        let e = malformed(
            p,
            format!(
                "parameter `{key}` is not closed with `{}`",
                syntax.param_end
            ),
        );
        return Err(Stop::Malformed(end, e));
    }
    let Some(vend) = close else {
        return Err(Stop::Cut(format!("parameter `{key}`")));
    };
    let given = type_attr.and_then(|a| syntax.attr(ptag, a));
    // DSML's `string` is `true` or `false` (probe 44: `string="maybe"` was
    // read by the schema, silently).
    if let (Typing::StringAttr, Some(v)) = (syntax.typing, given.as_deref())
        && !matches!(v, "true" | "false")
    {
        let end = f.resume(text, vstart);
        let e = malformed(
            p,
            format!("parameter `{key}` has `string=\"{v}\"`, not `true` or `false`"),
        );
        return Err(Stop::Malformed(end, e));
    }
    let read = match (syntax.typing, given.as_deref()) {
        (Typing::StringAttr, Some("true")) | (Typing::TypeAttr, Some("string")) => Read::Text,
        (Typing::StringAttr, Some("false")) | (Typing::TypeAttr, Some(_)) => Read::Json,
        _ => Read::Schema,
    };
    Ok(Param {
        key,
        at: p,
        value: (vstart, vend),
        read,
        next: vend + syntax.param_end.len(),
    })
}

/// `<KEY>VALUE</KEY>` at `p` (MiniMax-M3), the closer possibly behind the
/// namespace token. A value holding elements of its own (a nested object or
/// list) is not read: `malformed`, never a value guessed from markup.
fn element_param(text: &str, p: usize, name: &str, f: &mut Finders<'_>) -> Result<Param, Stop> {
    let syntax = f.syntax;
    let b = text.as_bytes();
    let is_name = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    let kstart = p + 1;
    let klen = b[kstart.min(b.len())..]
        .iter()
        .take_while(|c| is_name(**c))
        .count();
    let kend = kstart + klen;
    let starts_element = b[p] == b'<'
        && b.get(kstart)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
    if !starts_element {
        let end = f.resume(text, p);
        let e = unexpected(text, p, &format!("in invoke `{name}`"));
        return Err(Stop::Malformed(end, e));
    }
    match b.get(kend) {
        None => return Err(Stop::Cut("a parameter tag".into())),
        Some(b'>') => {}
        Some(_) => {
            let end = f.resume(text, kend);
            let e = malformed(p, "a parameter element is not `<KEY>`");
            return Err(Stop::Malformed(end, e));
        }
    }
    let key = text[kstart..kend].to_string();
    let vstart = kend + 1;
    // The value ends at `</KEY>`, looked for only up to the invoke's closer
    // (so a missing one is searched for once per invoke, not per key).
    let limit = f.tags.close.from(vstart).unwrap_or(text.len());
    let closer = format!("</{key}>");
    let Some(c) = memchr::memmem::find(&b[vstart..limit], closer.as_bytes()) else {
        if limit < text.len() {
            let end = f.resume(text, vstart);
            let e = malformed(
                p,
                format!("parameter `{key}` is not closed with `{closer}`"),
            );
            return Err(Stop::Malformed(end, e));
        }
        return Err(Stop::Cut(format!("parameter `{key}`")));
    };
    let close = vstart + c;
    let mut vend = close;
    if let Some(ns) = syntax.ns {
        vend = text[vstart..close]
            .strip_suffix(ns)
            .map_or(close, |v| vstart + v.len());
    }
    let mut read = Read::Schema;
    if let Some(i) = nested_element(&text[vstart..vend]) {
        // Elements of its own: an object or a list where the schema says
        // the parameter is one, else never a value guessed from markup.
        let found = if is_structured(types_of(f.input, Some(name), &key)) {
            nested(text, (vstart, vend), &key, syntax.ns)
        } else {
            Err(malformed(
                vstart + i,
                format!(
                    "parameter `{key}` holds elements of its own (read only where the schema types it as an object or an array)"
                ),
            ))
        };
        match found {
            Ok(v) => read = Read::Value(v),
            Err(e) => return Err(Stop::Malformed(f.resume(text, close), e)),
        }
    }
    Ok(Param {
        key,
        at: p,
        value: (vstart, vend),
        read,
        next: close + closer.len(),
    })
}

/// Where markup of an element (`<name` or `</`) first stands in a value.
fn nested_element(value: &str) -> Option<usize> {
    let b = value.as_bytes();
    memchr::memchr_iter(b'<', b).find(|&i| {
        b.get(i + 1)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'/')
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::Extractor;
    use crate::input::{Input, Strictness};

    #[test]
    fn dsml_string_attribute_is_true_or_false() {
        let dsml = crate::format::deepseek_dsml::DEEPSEEK_DSML;
        let call = |v: &str| {
            format!(
                "<｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"n\" string=\"{v}\">1</｜DSML｜parameter></｜DSML｜invoke>"
            )
        };
        let c = dsml.extract(&Input::new(&call("false")), Strictness::Strict);
        assert_eq!(c[0].call().unwrap().arguments["n"], 1);
        let c = dsml.extract(&Input::new(&call("true")), Strictness::Strict);
        assert_eq!(c[0].call().unwrap().arguments["n"], "1");
        for v in ["maybe", "", "TRUE"] {
            let c = dsml.extract(&Input::new(&call(v)), Strictness::Lenient);
            let f = c[0].failure().unwrap();
            assert_eq!(f.kind, toolgate_core::FailureKind::Malformed, "{v}");
            assert!(f.message.contains("not `true` or `false`"), "{}", f.message);
        }
    }

    #[test]
    fn a_parameter_outside_every_invoke_of_the_block_is_a_broken_call() {
        let m2 = crate::format::minimax_m2::MINIMAX_M2;
        let out = r#"<minimax:tool_call><invoke name="f"><parameter name="a">1</parameter></invoke><parameter name="b">2</parameter></minimax:tool_call>"#;
        let c = m2.extract(&Input::new(out), Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert!(c[0].call().is_some());
        let f = c[1].failure().unwrap();
        assert_eq!(f.kind, toolgate_core::FailureKind::Malformed);
        assert!(f.message.contains("outside every invoke"), "{}", f.message);
        // Before the first invoke too; text without the tag stays text.
        let out = r#"<minimax:tool_call><parameter name="b">2</parameter><invoke name="f"></invoke></minimax:tool_call>"#;
        assert_eq!(m2.extract(&Input::new(out), Strictness::Strict).len(), 2);
        let out = "<minimax:tool_call>\n<invoke name=\"f\"></invoke>\nok\n</minimax:tool_call> <parameter name=\"x\">";
        assert_eq!(m2.extract(&Input::new(out), Strictness::Strict).len(), 1);
    }

    #[test]
    fn an_invoke_without_its_opener_in_the_block_is_a_broken_call() {
        // Probe: text then `</invoke>` between the block's invokes (an
        // invoke whose opener is missing) was skipped; `f` ran alone.
        let m2 = crate::format::minimax_m2::MINIMAX_M2;
        for out in [
            r#"<minimax:tool_call><invoke name="f"></invoke>name="g"></invoke></minimax:tool_call>"#,
            "<minimax:tool_call>\n<invoke name=\"f\"></invoke>\ng{\"a\": 1}\n</invoke>\n<invoke name=\"h\"></invoke>\n</minimax:tool_call>",
            // s46: with no `</invoke>` either, its name attribute after a call.
            "<minimax:tool_call>\n<invoke name=\"f\"></invoke>\nname=\"g\">\n</minimax:tool_call>",
        ] {
            let c = m2.extract(&Input::new(out), Strictness::Strict);
            assert!(c[0].call().is_some(), "{out}");
            let f = c[1].failure().unwrap();
            assert_eq!(f.kind, toolgate_core::FailureKind::Malformed, "{out}");
            assert!(f.message.contains("without its opener"), "{}", f.message);
        }
        // Text alone between invokes stays text, as the peers read it.
        let out = "<minimax:tool_call>\n<invoke name=\"f\"></invoke>\nand then\n<invoke name=\"g\"></invoke>\n</minimax:tool_call>";
        let c = m2.extract(&Input::new(out), Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert!(c.iter().all(|c| c.call().is_some()));
    }

    #[test]
    fn an_invoke_without_its_opener_beside_an_invoke_without_a_block_is_malformed() {
        // s47-stray: rows without a call block (DSML, Step-3, MiniCPM5):
        // `f` ran and `g` was dropped as text.
        use crate::irregular::testkit::assert_stray;
        let m = crate::format::minicpm5::MINICPM5;
        let f = r#"<function name="f"><param name="a">1</param></function>"#;
        for (out, stray) in [
            (
                format!(r#"{f}name="g"><param name="b">2</param></function>"#),
                1,
            ),
            (
                format!("{f}\nname=\"g\"><param name=\"b\">2</param>\nDone."),
                1,
            ),
            (format!("{f} name='g'>"), 1),
            (format!(r#"Sure: name="g"></function>{f}"#), 0),
        ] {
            let c = m.extract(&Input::new(&out), Strictness::Strict);
            assert_stray(&c, stray, ("f", Some("g")), &out);
        }
        // Prose before a stray closer, text after an invoke, a parameter
        // tag named in prose, and text with no invoke at all stay text.
        for (out, n) in [
            (format!("Use </function> to close.\n{f}"), 1),
            (
                format!(r#"{f} The name="x"> attribute</function> is fine"#),
                1,
            ),
            (format!(r#"{f} then <param name="b">2</param> later"#), 1),
            (format!("{f} done, the name is set."), 1),
            (
                r#"name="g"><param name="b">2</param></function>"#.to_string(),
                0,
            ),
        ] {
            let c = m.extract(&Input::new(&out), Strictness::Strict);
            assert_eq!(c.len(), n, "{out}: {c:#?}");
            assert!(c.iter().all(|c| c.call().is_some()), "{out}");
        }
    }

    #[test]
    fn an_invoke_without_its_opener_right_after_the_section_tag_is_malformed() {
        // s48: the stray invoke's `name="g">` glued to the section tag
        // before it was not seen as a call's head; `g` was dropped as text
        // and `f` executed alone (`pass`). With a newline between them it
        // was already `malformed`.
        use crate::irregular::testkit::assert_stray;
        let dsml = crate::format::deepseek_dsml::DEEPSEEK_DSML;
        let f = r#"<｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="true">1</｜DSML｜parameter></｜DSML｜invoke>"#;
        let g = r#"name="g"><｜DSML｜parameter name="b" string="true">2</｜DSML｜parameter></｜DSML｜invoke>"#;
        for sep in ["", "\n"] {
            let out = format!("<｜DSML｜function_calls>{sep}{g}{f}</｜DSML｜function_calls>");
            let c = dsml.extract(&Input::new(&out), Strictness::Strict);
            assert_stray(&c, 0, ("f", Some("g")), &out);
        }
        // A tag before an attribute that is no call's head stays text.
        let out = format!(r#"See <b>name="g"> in the docs.{f}"#);
        let c = dsml.extract(&Input::new(&out), Strictness::Strict);
        assert_eq!(c.len(), 1, "{out}: {c:#?}");
        assert!(c[0].call().is_some());
    }

    #[test]
    fn markup_inside_cdata_is_the_value_s_text() {
        // Probe 44: CDATA is taken literally, but its `</param>` ended the
        // value, and the rest made the call `malformed`.
        let out = r#"<function name="f"><param name="s"><![CDATA[x</param>y</function><param name="t">]]></param><param name="u">&lt;</param></function>"#;
        let c = crate::format::minicpm5::MINICPM5.extract(&Input::new(out), Strictness::Strict);
        let call = c[0].call().unwrap();
        assert_eq!(
            serde_json::json!(call.arguments),
            serde_json::json!({"s": "x</param>y</function><param name=\"t\">", "u": "<"})
        );
        // A section never closed: the output ends inside the value.
        let out = r#"<function name="f"><param name="s"><![CDATA[x</param></function>"#;
        let c = crate::format::minicpm5::MINICPM5.extract(&Input::new(out), Strictness::Strict);
        assert_eq!(
            c[0].failure().unwrap().kind,
            toolgate_core::FailureKind::Truncated
        );
    }
}
