//! The **tagged-parameter engine**'s one parameter loop and one typed-value
//! reader (issue 27 item 2).
//!
//! Every format whose call is a tool name followed by its parameters written
//! as markup reads those parameters here, whatever the markup looks like:
//!
//! | markup | engine file | rows |
//! |---|---|---|
//! | `<arg_key>k</arg_key><arg_value>v</arg_value>` (key/value) | [`super::glm`] | glm, hunyuan, longcat_xml, hy_v4, iquest_coder_v2, hyperclovax_seed_think, k2_horizon, solar_open2 |
//! | `<parameter=k>v</parameter>` | [`super::qwen_xml`] | qwen_xml, seed_oss |
//! | `<parameter name="k">v</parameter>`, `<k>v</k>` (invoke) | [`super::invoke`] | deepseek_dsml, minimax_m2, step3, minicpm5, atem, kimi_k3, minimax_m3, deepseek_dsml_plain |
//!
//! An engine file reads the call's header (its name) and says, through
//! [`Markup`], how one parameter is spelled; [`params`] walks the
//! parameters up to the call closer: the cut output, the closer, a key
//! given twice, and reading each value ([`value`]: one newline trimmed each
//! side, XML text decoded where the format writes XML, then typed by the
//! markup or by the tool's schema, SPEC §9). `xml_call`'s scanner (an
//! irregular one: comments, self-closing elements, a region per call) uses
//! the same reader and candidate builders.
//!
//! Linear: an engine's [`Markup`] finds its tokens through memoizing
//! [`super::common::Next`] finders, and the loop only moves forward.

use super::common::{
    Next, json_value, malformed, trim_one_newline, truncated, typed_value, types_of, xml_text,
};
pub(crate) use super::common::{called, failed};
use crate::input::{Input, Strictness};
use crate::util::skip_ws;
use serde_json::{Map, Value};
use std::borrow::Cow;
use toolgate_core::{Candidate, ParseFailure, Repair};

/// How one parameter's text is read, as its markup says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Read {
    /// A string, whatever the schema says (DSML's `string="true"`).
    Text,
    /// JSON; text that is not JSON stays a string (`string="false"`).
    Json,
    /// Typed by the tool's schema (SPEC §9).
    Schema,
    /// Already read by the markup (MiniMax-M3's nested elements).
    Value(Value),
}

/// The typed-value reader: a parameter's raw text (between its opener and
/// its closer) as a JSON value, with the repairs the lenient variant used.
/// One leading and one trailing newline are removed, `xml` text has its
/// CDATA taken literally and its entities decoded, and then the text is
/// read as `read` says ([`typed_value`] for the schema).
pub(super) fn value(
    raw: &str,
    xml: bool,
    read: Read,
    (input, tool, key): (&Input<'_>, &str, &str),
    lenient: Strictness,
) -> (Value, Vec<Repair>) {
    let raw = trim_one_newline(raw);
    let raw: Cow<'_, str> = if xml { xml_text(raw) } else { raw.into() };
    match read {
        Read::Text => (Value::String(raw.into_owned()), Vec::new()),
        Read::Json => json_value(&raw, &[], lenient),
        Read::Schema => typed_value(&raw, types_of(input, Some(tool), key), lenient),
        Read::Value(v) => (v, Vec::new()),
    }
}

/// The finders of one call markup, walked forward (linear): the call
/// opener and closer, and the two tokens the engine looks ahead for inside
/// a call (the parameter opener and closer; the key/value engine: the key
/// closer and the value closer).
pub(super) struct Tags<'a> {
    pub open: Next<'a>,
    pub close: Next<'a>,
    close_len: usize,
    pub param: Next<'a>,
    pub param_end: Next<'a>,
}

impl<'a> Tags<'a> {
    /// The finders of `[open, close, param, param_end]` in `text`.
    pub(super) fn new(text: &'a str, [open, close, param, param_end]: [&'a str; 4]) -> Tags<'a> {
        Tags {
            open: Next::new(text, open),
            close: Next::new(text, close),
            close_len: close.len(),
            param: Next::new(text, param),
            param_end: Next::new(text, param_end),
        }
    }

    /// Where scanning resumes after a malformed call, from `from`: past the
    /// call's closer when it comes before the next call opener, else at that
    /// opener (or the end of the text).
    pub(super) fn resume(&mut self, text: &str, from: usize) -> usize {
        let next = self.open.from(from).unwrap_or(text.len());
        match self.close.from(from) {
            Some(c) if c < next => c + self.close_len,
            _ => next,
        }
    }
}

/// Whether a parameter whose closer is at `close` (if anywhere) is left
/// unclosed: another piece of markup (the next parameter's opener, the
/// call's closer) comes first, or it has no closer but such markup follows.
pub(super) fn unclosed(close: Option<usize>, others: [Option<usize>; 2]) -> bool {
    match close {
        None => others.iter().any(Option::is_some),
        Some(c) => others.iter().any(|q| q.is_some_and(|q| q < c)),
    }
}

/// `unexpected text `…`` at `p` (its first 20 characters), `where`.
pub(super) fn unexpected(text: &str, p: usize, place: &str) -> ParseFailure {
    let shown: String = text[p..].chars().take(20).collect();
    malformed(p, format!("unexpected text `{shown}` {place}"))
}

/// One parameter as its markup spells it.
pub(super) struct Param {
    /// Its key.
    pub key: String,
    /// Where a failure about the parameter as a whole points.
    pub at: usize,
    /// Its value's raw text, `start..end`.
    pub value: (usize, usize),
    /// How the value is read.
    pub read: Read,
    /// Where the next parameter may start.
    pub next: usize,
}

/// Why a call stops at a parameter.
pub(super) enum Stop {
    /// Broken markup: where scanning resumes, and the failure.
    Malformed(usize, ParseFailure),
    /// The output ends inside the parameter (what was cut).
    Cut(String),
}

/// One format's parameter markup, for [`params`].
pub(super) trait Markup {
    /// The mode name given to candidates.
    fn mode(&self) -> &'static str;
    /// The call closer that ends the parameters.
    fn end(&self) -> &str;
    /// Whether `rest` (non-empty, at a parameter's start) is a proper
    /// prefix of the format's markup: the output was cut inside a tag.
    fn is_cut(&self, rest: &str) -> bool;
    /// `p` past what may stand before any tag (MiniMax-M3's namespace).
    fn skip(&self, _text: &str, p: usize) -> usize {
        p
    }
    /// What a call cut inside its parameters is called in the message.
    fn inside(&self, name: &str) -> String;
    /// The word for a parameter in the messages (`argument`, `parameter`).
    fn noun(&self) -> &str;
    /// Whether values are XML text.
    fn xml(&self) -> bool {
        false
    }
    /// A body that is not parameters, read whole (DSML's JSON object), when
    /// one stands at `p` before any parameter.
    fn whole(
        &mut self,
        _text: &str,
        _at: usize,
        _p: usize,
        _name: &str,
        _lenient: Strictness,
    ) -> Option<(Candidate, usize)> {
        None
    }
    /// The parameter at `p` of the call to `name`.
    fn param(&mut self, text: &str, p: usize, name: &str) -> Result<Param, Stop>;
    /// Where scanning resumes after a malformed call, from `from`.
    fn resume(&mut self, text: &str, from: usize) -> usize;
}

/// The parameter loop: the parameters of the call to `name` opened at `at`,
/// from `body` up to the call closer, and where scanning resumes.
pub(super) fn params<M: Markup>(
    m: &mut M,
    text: &str,
    (at, body): (usize, usize),
    name: String,
    input: &Input<'_>,
    lenient: Strictness,
) -> (Candidate, usize) {
    let b = text.as_bytes();
    let mut args = Map::new();
    let mut repairs: Vec<Repair> = Vec::new();
    let mut p = body;
    loop {
        p = m.skip(text, skip_ws(b, p));
        let rest = &text[p..];
        if rest.is_empty() || m.is_cut(rest) {
            let e = truncated(text.len(), &m.inside(&name));
            return failed(m.mode(), text, at, text.len(), Some(name), e);
        }
        if rest.starts_with(m.end()) {
            let end = p + m.end().len();
            return called(m.mode(), text, (at, end), name, args, repairs);
        }
        if args.is_empty()
            && let Some(read) = m.whole(text, at, p, &name, lenient)
        {
            return read;
        }
        let Param {
            key,
            at: key_at,
            value: (vstart, vend),
            read,
            next,
        } = match m.param(text, p, &name) {
            Ok(param) => param,
            Err(Stop::Malformed(end, e)) => return failed(m.mode(), text, at, end, Some(name), e),
            Err(Stop::Cut(what)) => {
                let e = truncated(text.len(), &what);
                return failed(m.mode(), text, at, text.len(), Some(name), e);
            }
        };
        if args.contains_key(&key) {
            let end = m.resume(text, vend);
            let e = malformed(key_at, format!("{} `{key}` is given twice", m.noun()));
            return failed(m.mode(), text, at, end, Some(name), e);
        }
        let (v, used) = value(
            &text[vstart..vend],
            m.xml(),
            read,
            (input, &name, &key),
            lenient,
        );
        repairs.extend(used);
        args.insert(key, v);
        p = next;
    }
}
