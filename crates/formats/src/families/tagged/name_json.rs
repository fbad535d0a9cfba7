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

use super::common::{Next, json_args, malformed, open_at_end, truncated};
use crate::input::{Input, Strictness};
use crate::util;
use toolgate_core::{Candidate, Span};

/// One format's tokens for the name-then-JSON shape.
pub(crate) struct NameJson<'a> {
    /// The mode name given to candidates.
    pub mode: &'a str,
    /// The call opener; the header follows it.
    pub call: &'a str,
    /// The separator between the header and the JSON arguments.
    pub args: &'a str,
    /// The call closer.
    pub call_end: &'a str,
    /// The closer of the section holding the calls, if the format has one.
    pub section_end: Option<&'a str>,
    /// The tool name in a (trimmed) header, `None` when the header is not
    /// a valid one.
    pub name_of: fn(&str) -> Option<&str>,
    /// What a valid header looks like, for the failure message.
    pub header: &'a str,
}

/// A bare tool name: non-empty, without whitespace.
pub(crate) fn bare_name(id: &str) -> Option<&str> {
    (!id.is_empty() && !id.contains(char::is_whitespace)).then_some(id)
}

/// Every call of `text` in the spelling `cfg`.
pub(crate) fn scan(
    text: &str,
    input: &Input<'_>,
    lenient: Strictness,
    cfg: &NameJson<'_>,
) -> Vec<Candidate> {
    let mut call = Next::new(text, cfg.call);
    let mut args = Next::new(text, cfg.args);
    let mut call_end = Next::new(text, cfg.call_end);
    let mut section_end = cfg.section_end.map(|s| Next::new(text, s));
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    let mut ex = [false; 3];
    while let Some(at) = call.from(pos) {
        let head = at + cfg.call.len();
        // The header ends at the separator, unless another
        // marker (or the end) comes first.
        let a = args.from(head);
        let others = [
            call.from(head),
            call_end.from(head),
            section_end.as_mut().and_then(|s| s.from(head)),
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
            let id = text[head..end].trim();
            let name = (cfg.name_of)(id).map(str::to_string);
            out.push(util::candidate(
                cfg.mode,
                Span::new(at, end),
                &text[at..end],
                name,
                Err(e),
                Vec::new(),
            ));
            pos = end.max(at + 1);
            continue;
        };
        let id = text[head..a].trim();
        let pstart = a + cfg.args.len();
        // The payload ends at the call closer, or where the next call or
        // the section starts when the end marker is missing.
        // Markers inside a JSON string of the payload are text
        // (`util::closer_outside_strings`); the walks end at the next
        // marker, where the next call's search begins.
        let next_call =
            util::closer_outside_strings(text, pstart, usize::MAX, &mut ex[0], |p| call.from(p));
        // Only a section end before the next call matters: the walk stops
        // there, so a section end far behind many calls is not walked to
        // from each of them.
        let limit = next_call.unwrap_or(usize::MAX);
        let next_section = match section_end.as_mut() {
            Some(s) => util::closer_outside_strings(text, pstart, limit, &mut ex[1], |p| s.from(p)),
            None => None,
        };
        let next = next_call.into_iter().chain(next_section).min();
        let ce = util::closer_outside_strings(
            text,
            pstart,
            next.unwrap_or(usize::MAX),
            &mut ex[2],
            |p| call_end.from(p),
        );
        let (pend, end) = match ce {
            Some(c) if next.is_none_or(|n| c < n) => (c, c + cfg.call_end.len()),
            _ => next.map_or((text.len(), text.len()), |n| (n, n)),
        };
        let at_end = pend == text.len();
        let payload = &text[pstart..pend];
        let name = (cfg.name_of)(id);
        let (arguments, repairs) = match name {
            Some(_) => {
                let (args, repairs) = json_args(payload, pstart, lenient, at_end);
                let args = if at_end {
                    open_at_end(args, input, text)
                } else {
                    args
                };
                (args, repairs)
            }
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
