//! **Engine `name_json`** (declared formats: `engine = "name_then_json"`);
//! its payload walk ([`Ends`]) and arguments reader
//! ([`super::common::json_arguments`]) also serve `deepseek`, and the reader
//! `harmony`.
//!
//! The "name then JSON" engine: a call opener, a header naming the tool, a
//! separator, one JSON arguments object, a call closer — optionally inside a
//! section whose closer also ends a call. Kimi K2 spells it
//! `<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{…}<|tool_call_end|>`;
//! declared formats ([`crate::declared`]) with `engine = "name_then_json"`
//! use it with their own tokens.
//!
//! - The header (the text between opener and separator, trimmed) names the
//!   tool through the configuration's `name_of`; a header it rejects is a
//!   `malformed` candidate without a name (never guessed).
//! - A call whose closer is missing ends at the next call opener, the
//!   section closer, or the end of the output; a complete JSON object there
//!   is a call like any other (the missing-closer rule of [`crate::rules`]
//!   then decides for a call cut at the end), an incomplete one at the end
//!   of the output is `truncated`.
//! - Arguments given as a JSON string holding an object (double-encoded) are
//!   `escaping`; the lenient variant decodes them and records the repair.
//!
//! Linear: every token is found through a memoizing [`Next`] finder.

use super::common::{Next, broken_call, failed, json_arguments, malformed, truncated};
use crate::input::{Input, Strictness};
use crate::util;
use toolgate_core::{Candidate, Span};

/// One format's tokens for the name-then-JSON shape.
pub(crate) struct NameJson<'a> {
    /// The mode name given to candidates.
    pub mode: &'static str,
    /// The call opener; the header follows it.
    pub call: &'a str,
    /// The separator between the header and the JSON arguments.
    pub args: &'a str,
    /// The call closer.
    pub call_end: &'a str,
    /// The opener of the section holding the calls, if the format has one
    /// (where a call without its opener before the first call is looked
    /// for, [`stray_call`]).
    pub section: Option<&'a str>,
    /// The closer of the section holding the calls, if the format has one.
    pub section_end: Option<&'a str>,
    /// A prefix the header may start with before the name (Kimi's
    /// `functions.`), not part of the name.
    pub namespace: Option<&'a str>,
    /// The tool name in a (trimmed) header without its namespace, `None`
    /// when the header is not a valid one ([`bare_name`], [`indexed_name`]).
    pub name_of: fn(&str) -> Option<&str>,
    /// What a valid header looks like, for the failure message.
    pub header: &'a str,
}

impl NameJson<'_> {
    /// The tool name a (trimmed) header gives, if it is a valid one.
    fn name<'t>(&self, id: &'t str) -> Option<&'t str> {
        let id = self
            .namespace
            .and_then(|n| id.strip_prefix(n))
            .unwrap_or(id);
        (self.name_of)(id)
    }
}

/// A bare tool name: non-empty, without whitespace.
pub(crate) fn bare_name(id: &str) -> Option<&str> {
    (!id.is_empty() && !id.contains(char::is_whitespace)).then_some(id)
}

/// `NAME:INDEX` → `NAME` (Kimi's call ids): a name without whitespace, a
/// colon, a decimal index.
pub(crate) fn indexed_name(id: &str) -> Option<&str> {
    let (name, index) = id.rsplit_once(':')?;
    let ok = !name.is_empty()
        && !index.is_empty()
        && index.bytes().all(|c| c.is_ascii_digit())
        && !name.contains(char::is_whitespace);
    ok.then_some(name)
}

/// The markers that end a call's payload, found forward through memoizing
/// finders: the next call opener, the section closer, the call closer.
pub(super) struct Ends<'a> {
    /// The call opener (also where the next call starts).
    pub call: Next<'a>,
    /// The section closer, if the format has one.
    pub section_end: Option<Next<'a>>,
    /// The call closer and its length.
    pub call_end: (Next<'a>, usize),
    /// Whether each walk outside strings reached the end of the text.
    walked: [bool; 3],
}

impl<'a> Ends<'a> {
    pub(super) fn new(
        text: &'a str,
        call: &'a str,
        call_end: &'a str,
        section_end: Option<&'a str>,
    ) -> Ends<'a> {
        Ends {
            call: Next::new(text, call),
            section_end: section_end.map(|s| Next::new(text, s)),
            call_end: (Next::new(text, call_end), call_end.len()),
            walked: [false; 3],
        }
    }

    /// Where the payload starting at `from` stops and where its call ends:
    /// at the call closer, or where the next call or the section starts
    /// when the closer is missing (or at the end of the text). Markers
    /// inside a JSON string of the payload are text
    /// (`util::closer_outside_strings`); the walks end at the next marker,
    /// where the next call's search begins.
    pub(super) fn stop(&mut self, text: &str, from: usize) -> (usize, usize) {
        let [w_call, w_section, w_end] = &mut self.walked;
        let call = &mut self.call;
        let next_call =
            util::closer_outside_strings(text, from, usize::MAX, w_call, |p| call.from(p));
        // Only a section end before the next call matters: the walk stops
        // there, so a section end far behind many calls is not walked to
        // from each of them.
        let limit = next_call.unwrap_or(usize::MAX);
        let next_section = match self.section_end.as_mut() {
            Some(s) => util::closer_outside_strings(text, from, limit, w_section, |p| s.from(p)),
            None => None,
        };
        let next = next_call.into_iter().chain(next_section).min();
        let (call_end, len) = &mut self.call_end;
        let ce = util::closer_outside_strings(text, from, next.unwrap_or(usize::MAX), w_end, |p| {
            call_end.from(p)
        });
        match ce {
            Some(c) if next.is_none_or(|n| c < n) => (c, c + *len),
            _ => next.map_or((text.len(), text.len()), |n| (n, n)),
        }
    }
}

/// One spelling's tokens for [`stray_call`]: the mode name, the call
/// opener, the separator, the call closer.
pub(super) type StrayTokens<'t> = (&'static str, &'t str, &'t str, &'t str);

/// A call the model wrote without its opener, in the gap after a call
/// (from `from`, `after_call`) or between the section's opener and the
/// first call, before the next opener `next` and the section's closer. The
/// format's own call markup follows, so this is a broken call,
/// `malformed` (probe 44: skipped as text, the call beside it executed
/// alone). One rule for every name-then-JSON spelling (Kimi, DeepSeek,
/// declared formats):
///
/// - a header and the separator: Kimi's
///   `…<|tool_call_end|>functions.f:1<|tool_call_argument_begin|>{…}`,
///   DeepSeek's `…<｜tool▁call▁end｜>g<｜tool▁sep｜>{…}`;
/// - in a format with a section, arguments alone with neither header nor
///   separator (a JSON object or a ```` ``` ```` fence, DeepSeek V3's):
///   closed by the call closer (`…<|tool_call_end|>{…}<|tool_call_end|>`),
///   or, after a call, the rest of the section (`…<｜tool▁call▁end｜>{…}
///   <｜tool▁calls▁end｜>`). Without a section, text after a call is
///   content (ReAct's observations).
///
/// `name` reads the tool name from a header. Only `from..next`, up to the
/// section's closer, is searched, so the scan stays linear. Its candidate
/// and where scanning resumes.
pub(super) fn stray_call(
    text: &str,
    ((from, next), after_call): ((usize, Option<usize>), bool),
    (args, ends): (&mut Next<'_>, &mut Ends<'_>),
    (mode, call, sep_token, call_end): StrayTokens<'_>,
    name: impl FnOnce(&str) -> Option<String>,
) -> Option<(Candidate, usize)> {
    let has_section = ends.section_end.is_some();
    let section_end = ends.section_end.as_mut().and_then(|s| s.from(from));
    let to = [next, section_end]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(text.len());
    let start = util::skip_ws(text.as_bytes(), from).min(to);
    if let Some(sep) = args.from(from).filter(|&a| a < to) {
        let (_, end) = ends.stop(text, sep + sep_token.len());
        let name = name(text[start..sep].trim());
        let what = format!("call arguments without its opener `{call}`");
        return Some(broken_call(mode, text, (start, end), name, (sep, what)));
    }
    if !has_section {
        return None;
    }
    let (close, end) = match ends.call_end.0.from(from).filter(|&c| c < to) {
        Some(c) => (c, c + call_end.len()),
        None if after_call => (to, to),
        None => return None,
    };
    let before = text[start..close].trim_end();
    let arguments = before.starts_with("```") || (before.starts_with('{') && before.ends_with('}'));
    if !arguments {
        return None;
    }
    let what = format!("call arguments without its opener `{call}` and header");
    Some(broken_call(mode, text, (start, end), None, (start, what)))
}

/// Where the gap before the first call opener `next` starts when a section
/// opener `section` precedes it (the last one before it): the first place a
/// call without its opener is looked for ([`stray_call`]). Text before
/// the section is the output's content.
pub(super) fn section_gap(text: &str, section: Option<&str>, next: Option<usize>) -> Option<usize> {
    let (section, next) = (section?, next?);
    text[..next].rfind(section).map(|o| o + section.len())
}

/// Every call of `text` in the spelling `cfg`.
pub(crate) fn scan(
    text: &str,
    input: &Input<'_>,
    lenient: Strictness,
    cfg: &NameJson<'_>,
) -> Vec<Candidate> {
    let mut ends = Ends::new(text, cfg.call, cfg.call_end, cfg.section_end);
    let mut args = Next::new(text, cfg.args);
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    loop {
        let next = ends.call.from(pos);
        let gap = if pos > 0 {
            Some(pos)
        } else {
            section_gap(text, cfg.section, next)
        };
        if let Some(from) = gap
            && let Some(stray) = stray_call(
                text,
                ((from, next), pos > 0),
                (&mut args, &mut ends),
                (cfg.mode, cfg.call, cfg.args, cfg.call_end),
                |h| cfg.name(h).map(str::to_string),
            )
        {
            out.push(stray.0);
            pos = stray.1.max(pos + 1);
            continue;
        }
        let Some(at) = next else { break };
        let head = at + cfg.call.len();
        // The header ends at the separator, unless another
        // marker (or the end) comes first.
        let a = args.from(head);
        let others = [
            ends.call.from(head),
            ends.call_end.0.from(head),
            ends.section_end.as_mut().and_then(|s| s.from(head)),
        ]
        .into_iter()
        .flatten()
        .min();
        let a = match (a, others) {
            (Some(a), Some(o)) if o < a => None,
            (a, _) => a,
        };
        let Some(a) = a else {
            let (end, e) = match others {
                Some(o) => (
                    o,
                    malformed(head, format!("the call has no `{}`", cfg.args)),
                ),
                None => (text.len(), truncated(text.len(), "a call header")),
            };
            let name = cfg.name(text[head..end].trim()).map(str::to_string);
            out.push(failed(cfg.mode, text, at, end, name, e).0);
            pos = end.max(at + 1);
            continue;
        };
        let id = text[head..a].trim();
        let pstart = a + cfg.args.len();
        let (pend, end) = ends.stop(text, pstart);
        let at_end = pend == text.len();
        let payload = &text[pstart..pend];
        let name = cfg.name(id);
        let (arguments, repairs) = match name {
            Some(_) => json_arguments(payload, pstart, (input, text), lenient, at_end),
            None => (
                Err(malformed(
                    head,
                    format!("call id `{id}` is not `{}`", cfg.header),
                )),
                Vec::new(),
            ),
        };
        out.push(util::candidate(
            cfg.mode,
            Span::new(at, end),
            payload,
            name.map(str::to_string),
            arguments,
            repairs,
        ));
        pos = end.max(at + 1);
    }
    out.into_vec()
}
