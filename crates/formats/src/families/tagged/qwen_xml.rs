//! `qwen_xml`: Qwen3-Coder's XML function calls (also Qwen3.5, Nemotron 3
//! Nano and StepFun 3.5). Seed-OSS wraps the same blocks in its own tags:
//! [`crate::format::seed_oss`], a configuration of this engine ([`FunctionXml`]).
//!
//! **Engine `function_xml`**, one of the tagged-parameter engines
//! (`FunctionXml`; declared formats: `engine = "tagged_parameters"` with
//! `opener = "<function=NAME>"`, [`crate::declared`]): `<function=NAME>` blocks with
//! `<parameter=KEY>` values, in optional wrappers. Its parameter loop and
//! value reader are `params`'s; qwen_xml and seed_oss configure it.
//!
//! # Wire format
//!
//! ```text
//! <tool_call>
//! <function=get_weather>
//! <parameter=city>
//! Antwerp
//! </parameter>
//! <parameter=days>
//! 3
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! gives `{"name": "get_weather", "arguments": {"city": "Antwerp", "days": 3}}`
//! when the tool's schema types `days` as an integer (else `"3"`).
//!
//! - The outer `<tool_call>` is optional: a
//!   bare `<function=f>…</function>` is a call too, but only in an output
//!   that holds no wrapper markup at all (issue 22). That is where vLLM's
//!   reference parser (`qwen3_coder`) reads bare blocks: it reads the
//!   `<function=` blocks inside `<tool_call>…</tool_call>`, and the whole
//!   output only when it holds no `<tool_call>` block. Once the output uses
//!   the wrapper, a `<function=` block that no open wrapper precedes (e.g.
//!   `<too_call>\n<function=f>…</function>\n</tool_call>`, whose opener is
//!   misspelled) is `malformed`, not executed: vLLM would skip it in a mixed
//!   output, and the misspelled opener is broken markup. Several
//!   `<function=…>` blocks are parallel calls.
//! - Parameter values are raw text (no escaping), one leading and one
//!   trailing newline removed. A value is a string unless the tool's schema
//!   types the parameter otherwise; then it is read as JSON, and text that
//!   does not read as that type stays a string (SPEC §9: the validator labels
//!   it `type_coercion`). The lenient variant applies the JSON repairs while
//!   reading typed values (`True` → `true`, `{'k': 'v'}` → `{"k": "v"}`).
//! - A `<parameter=…>` whose `</parameter>` is missing (the next
//!   `<parameter=` or `</function>` comes first), stray text between
//!   parameters, a parameter given twice, or a `<function=` tag without `>`
//!   are `malformed`; output ending inside a call is `truncated`.
//! - Inside a wrapper, non-whitespace text before a `<function=` block
//!   (after `<tool_call>` or after the previous block) makes that block
//!   `malformed`: no call would carry what the model wrote there.

use super::common::{Next, attr, broken_call, is_cut_token, malformed, truncated};
use super::params::{Markup, Param, Read, Stop, Tags, failed, params, unclosed, unexpected};
use crate::input::{Input, Strictness};
use crate::util::{self, skip_ws};
use toolgate_core::{Candidate, Span};

/// One family's spelling of the `<function=…>` shape: its mode name, its
/// tags and the wrapper(s) around a function block. The same engine reads
/// Qwen3-Coder's `<tool_call>` ([`crate::format::qwen_xml`]) and Seed-OSS's
/// own wrapper ([`crate::format::seed_oss`]); a declared format
/// ([`crate::declared`]) builds one too.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FunctionXml<'a> {
    /// The mode name given to candidates.
    pub mode: &'static str,
    /// The function block opener, followed by the name and `>`
    /// (`<function=`).
    pub function: &'a str,
    /// The function block closer (`</function>`).
    pub function_end: &'a str,
    /// The parameter opener, followed by the key and `>` (`<parameter=`).
    pub param: &'a str,
    /// The parameter closer (`</parameter>`).
    pub param_end: &'a str,
    /// The wrappers (opener, closer) a function block may stand in.
    pub wrappers: &'a [(&'a str, &'a str)],
    /// Whether a function block outside any wrapper is read, in an output
    /// that has no wrapper markup (Qwen: yes, as vLLM's `qwen3_coder` reads
    /// it); when not, such a block is another format's and yields nothing.
    pub bare: bool,
}

/// Every function block of `text` in the spelling `x`.
pub(crate) fn scan(
    text: &str,
    x: &FunctionXml<'_>,
    input: &Input<'_>,
    strictness: Strictness,
) -> Vec<Candidate> {
    let mut f = Finders {
        x,
        tags: Tags::new(text, [x.function, x.function_end, x.param, x.param_end]),
    };
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    let mut wraps = Wraps::new(text, x.wrappers);
    let opener = x.wrappers.first().map_or("", |w| w.0);
    let mut stems = x
        .function
        .strip_suffix('=')
        .map(|stem| (Next::new(text, stem), stem.len()));
    let mut openers: Vec<_> = x
        .wrappers
        .iter()
        .map(|w| (Next::new(text, w.0), *w))
        .collect();
    loop {
        let next = f.tags.open.from(pos);
        let to = next.unwrap_or(text.len());
        if let Some((cand, resume)) = misspelled(text, (pos, to), &mut stems, &mut f, &mut wraps) {
            out.push(cand);
            pos = resume;
            continue;
        }
        if let Some((cand, resume)) = wordy(text, (pos, to), &mut openers, x.mode) {
            out.push(cand);
            pos = resume;
            continue;
        }
        let Some(at) = next else { break };
        if !x.bare && !wraps.open_before(at) {
            pos = at + x.function.len();
            continue;
        }
        if x.bare
            && let Some(c) = stray_call(text, (pos, Some(at)), x, out.total() > 0)
        {
            out.push(c);
        }
        let (mut cand, fn_end) = call(text, at, &mut f, input, strictness);
        let start = wrapper_before(text, pos, at, x.wrappers);
        let end = wrapper_after(text, fn_end, x.wrappers);
        cand.span = Span::new(start, end);
        // Inside a wrapper, only another `<function=` block or the closer
        // may follow a function block (issue 22: `{"b": 2}` there was
        // dropped and the call executed).
        let next = skip_ws(text.as_bytes(), fn_end);
        if wraps.open_before(at)
            && end == fn_end
            && next < text.len()
            && !text[next..].starts_with(x.function)
            && cand.arguments.is_ok()
        {
            cand.arguments = Err(malformed(
                next,
                format!(
                    "unexpected text after `{}` inside `{opener}`",
                    x.function_end
                ),
            ));
        }
        if !wraps.open_before(at) && wraps.any() && cand.arguments.is_ok() {
            cand.arguments = Err(malformed(
                at,
                format!(
                    "a `{}` block outside `{opener}` in an output that uses the wrapper (its opener is missing or misspelled)",
                    x.function
                ),
            ));
        }
        // Inside a wrapper, only whitespace may stand before a function
        // block (after the opener, or after the previous block): text there
        // is something the model wrote that no call would carry (issue 22;
        // the rule of text after `</function>`, read from the other side).
        if wraps.open_before(at) && cand.arguments.is_ok() {
            let from = pos.max(wraps.token_end());
            if let Some(stray) = text.get(from..at).and_then(|t| {
                let i = skip_ws(t.as_bytes(), 0);
                (i < t.len()).then_some(from + i)
            }) {
                cand.arguments = Err(malformed(
                    stray,
                    format!("unexpected text before `{}` inside `{opener}`", x.function),
                ));
            }
        }
        out.push(cand);
        pos = end.max(at + 1);
    }
    if x.bare
        && out.total() > 0
        && let Some(c) = stray_call(text, (pos, None), x, true)
    {
        out.push(c);
    }
    // A wrapper opened at the very end, before any `<function=`: cut off.
    let tail = &text[pos..];
    let cut = opener_cut_at_end(tail, x.wrappers, x.function);
    debug_assert_eq!(
        cut,
        opener_cut_at_end_by_search(tail, x.wrappers, x.function)
    );
    if let Some(w) = cut {
        let start = pos + w;
        out.push(util::candidate(
            x.mode,
            Span::new(start, text.len()),
            &text[start..],
            None,
            Err(truncated(
                text.len(),
                "a tool call before its function name",
            )),
            Vec::new(),
        ));
    }
    out.into_vec()
}

/// A function block without its `<function=` opener after a call or before
/// the first one (in `text[from..to]`, up to the next block), in the rows
/// that read bare blocks (Qwen3-Coder): a broken call
/// ([`util::stray_call`], the rule hermes, gemma, `tag`, functionary and the
/// invoke rows share). Its own text is the name glued to `>`, then a
/// `<parameter=` or the block's closer ([`util::name_gt_head`]): closed by
/// `</function>` (`…</function>g>\n<parameter=b>…</function>`, and the
/// same before the first block), or after a call with no closer at all,
/// the gap starting with it. A bare `<function=f>…</function>` output was
/// read with `g` dropped as text (vLLM's `qwen3_coder` regex takes only
/// `<function=…` blocks, so it drops it too; the call beside it would run
/// alone). Inside a wrapper the text after or before a block is already
/// `malformed` (issue 22); a name alone stays text.
fn stray_call(
    text: &str,
    gap: (usize, Option<usize>),
    x: &FunctionXml<'_>,
    after_call: bool,
) -> Option<Candidate> {
    let head = |g: &str| {
        util::name_gt_head(g, |body| {
            body.starts_with(x.param) || body.starts_with(x.function_end)
        })
    };
    let closed = |g: &str| {
        let end = g.trim_end();
        (end.ends_with(x.param_end) || end.ends_with('>'))
            .then(|| head(g))
            .flatten()
            .map(|(start, _)| start)
    };
    let bare = |g: &str| matches!(head(g), Some((0, _))).then(|| g.trim_end().len());
    let (start, end, f) =
        util::stray_call(text, gap, (&[x.function_end], after_call), closed, bare)?;
    let own = &text[start..end];
    let name = own.find('>').map(|gt| own[..gt].to_string());
    Some(util::candidate(
        x.mode,
        Span::new(start, end),
        own,
        name,
        Err(f),
        Vec::new(),
    ))
}

/// The first function opener in `text[from..to]` inside a wrapper that is
/// spelled otherwise than `<function=` (`<function name="f">`,
/// `<function f>`): a broken call in this format (probe 44: it was not
/// seen, and the block beside it executed alone). Its candidate and where
/// scanning resumes. `stems` finds `<function`; occurrences are asked for
/// in increasing order.
fn misspelled(
    text: &str,
    (from, to): (usize, usize),
    stems: &mut Option<(Next<'_>, usize)>,
    f: &mut Finders<'_>,
    wraps: &mut Wraps<'_>,
) -> Option<(Candidate, usize)> {
    let (stem, len) = stems.as_mut()?;
    let mut p = from;
    while let Some(m) = stem.from(p).filter(|&m| m < to) {
        p = m + 1;
        let after = text[m + *len..].bytes().next();
        if !matches!(after, Some(b' ' | b'\t' | b'\n' | b'\r' | b'>')) || !wraps.open_before(m) {
            continue;
        }
        // The tag runs to its `>`, unless another tag starts first.
        let tag_start = m + *len;
        let tag_end = memchr::memchr2(b'>', b'<', &text.as_bytes()[tag_start..])
            .map_or(text.len(), |g| tag_start + g);
        let tag = &text[tag_start..tag_end];
        let name = attr(tag, "name").or_else(|| {
            let t = tag.trim();
            (!t.is_empty()).then(|| t.to_string())
        });
        let x = f.x;
        let end = f.tags.resume(text, m + *len);
        let start = wrapper_before(text, from, m, x.wrappers);
        let end = wrapper_after(text, end, x.wrappers);
        let what = format!("the function tag is not spelled `{}NAME>`", x.function);
        return Some(broken_call(x.mode, text, (start, end), name, (m, what)));
    }
    None
}

/// The first wrapper in `text[from..to]` that its own closer ends with
/// only words in it (`<seed:tool_call>delete_all path=/</seed:tool_call>`):
/// no function block, no markup, no JSON (a JSON body is hermes's), and not
/// one bare word (GLM's `<tool_call>f</tool_call>`). It is a broken call in
/// this format (probe 44b: it was skipped, and the block beside it executed
/// alone). Its candidate and where scanning resumes. `openers` finds each
/// wrapper's opener; positions asked for never decrease.
fn wordy(
    text: &str,
    (from, to): (usize, usize),
    openers: &mut [(Next<'_>, (&str, &str))],
    mode: &'static str,
) -> Option<(Candidate, usize)> {
    let b = text.as_bytes();
    let mut p = from;
    loop {
        let (o, (open, close)) = openers
            .iter_mut()
            .filter_map(|(n, w)| n.from(p).map(|o| (o, *w)))
            .filter(|&(o, _)| o < to)
            .min_by_key(|&(o, _)| o)?;
        let body = o + open.len();
        p = body;
        // The body runs to the next `<`, which must be the closer: the
        // search stops at the next tag, so the work stays linear.
        let Some(l) = memchr::memchr(b'<', &b[body..to]).map(|n| body + n) else {
            continue;
        };
        let words = text[body..l].trim();
        if !text[l..].starts_with(close)
            || words.starts_with(['{', '[', '"'])
            || !words.contains(char::is_whitespace)
        {
            continue;
        }
        let end = l + close.len();
        let what = format!("`{words}` in `{open}` is not a function block");
        return Some(broken_call(mode, text, (o, end), None, (body, what)));
    }
}

/// The wrapper tokens of a text, walked forward: whether a wrapper is open
/// before a position (its last opener comes after its last closer), and
/// whether the text holds any wrapper token. Positions asked for never
/// decrease, so each token is searched for once over the text.
struct Wraps<'a> {
    /// Each token's finder, whether it opens, and its length.
    tokens: Vec<(Next<'a>, bool, usize)>,
    walked: usize,
    open: bool,
    /// Where the last token walked past ends (0 before any).
    token_end: usize,
    any: bool,
}

impl<'a> Wraps<'a> {
    fn new(text: &'a str, wrappers: &[(&'a str, &'a str)]) -> Wraps<'a> {
        let mut tokens = Vec::new();
        for &(open, close) in wrappers {
            tokens.push((Next::new(text, open), true, open.len()));
            tokens.push((Next::new(text, close), false, close.len()));
        }
        let any = tokens.iter_mut().any(|(t, _, _)| t.from(0).is_some());
        Wraps {
            tokens,
            walked: 0,
            open: false,
            token_end: 0,
            any,
        }
    }

    fn any(&self) -> bool {
        self.any
    }

    /// Where the last wrapper token before the position last asked for
    /// ([`Wraps::open_before`]) ends: after an opener, where the wrapper's
    /// content starts.
    fn token_end(&self) -> usize {
        self.token_end
    }

    fn open_before(&mut self, at: usize) -> bool {
        loop {
            let mut first: Option<(usize, usize, bool)> = None;
            for (t, is_open, len) in &mut self.tokens {
                let Some(p) = t.from(self.walked) else {
                    continue;
                };
                if p < at && first.is_none_or(|(q, _, _)| p < q) {
                    first = Some((p, *len, *is_open));
                }
            }
            let Some((p, len, is_open)) = first else {
                return self.open;
            };
            self.open = is_open;
            self.token_end = p + len;
            self.walked = p + 1;
        }
    }
}

/// Where in `tail` a wrapper opener starts that only whitespace and a
/// proper prefix of `<function=` follow (the output was cut right after
/// it), if one does. Read from the end: the text after the last opener is
/// then at most whitespace and nine bytes, so nothing else is searched.
fn opener_cut_at_end(tail: &str, wrappers: &[(&str, &str)], function: &str) -> Option<usize> {
    let opener_before = |rest: &str| {
        let rest = rest.trim_end();
        wrappers
            .iter()
            .find(|(open, _)| rest.ends_with(open))
            .map(|(open, _)| rest.len() - open.len())
    };
    opener_before(tail).or_else(|| {
        // A cut `<function=` has no whitespace in it, none after it, and
        // only one of its prefixes can end the text (only one holds `<`).
        (1..function.len())
            .filter_map(|k| function.get(..k))
            .find_map(|cut| tail.strip_suffix(cut))
            .and_then(opener_before)
    })
}

/// [`opener_cut_at_end`] by searching for the last opener (what it replaced;
/// debug builds check the two agree).
fn opener_cut_at_end_by_search(
    tail: &str,
    wrappers: &[(&str, &str)],
    function: &str,
) -> Option<usize> {
    let (w, len) = wrappers
        .iter()
        .filter_map(|(open, _)| tail.rfind(open).map(|p| (p, open.len())))
        .max()?;
    let after = tail[w + len..].trim_start();
    (after.is_empty() || is_cut_token(after, &[function])).then_some(w)
}

/// Start of a wrapper opener (`<tool_call>`) right before `at` (only
/// whitespace between), not before `floor`.
fn wrapper_before(text: &str, floor: usize, at: usize, wrappers: &[(&str, &str)]) -> usize {
    let head = text[floor..at].trim_end_matches([' ', '\t', '\n', '\r']);
    for &(open, _) in wrappers {
        if head.ends_with(open) {
            return floor + head.len() - open.len();
        }
    }
    at
}

/// End of a wrapper closer (`</tool_call>`) right after `end`.
fn wrapper_after(text: &str, end: usize, wrappers: &[(&str, &str)]) -> usize {
    let i = skip_ws(text.as_bytes(), end);
    for &(_, close) in wrappers {
        if text[i..].starts_with(close) {
            return i + close.len();
        }
    }
    end
}

/// One `<function=…>` block starting at `at`: the candidate (span set by the
/// caller) and the offset where scanning resumes.
fn call(
    text: &str,
    at: usize,
    f: &mut Finders<'_>,
    input: &Input<'_>,
    strictness: Strictness,
) -> (Candidate, usize) {
    let b = text.as_bytes();
    let x = f.x;
    let mode = x.mode;
    let name_start = at + x.function.len();
    let Some(n) = memchr::memchr3(b'>', b'<', b'\n', &b[name_start..]) else {
        let e = truncated(text.len(), &format!("a `{}` tag", x.function));
        return failed(mode, text, at, text.len(), None, e);
    };
    let gt = name_start + n;
    if b[gt] != b'>' {
        let e = malformed(
            at,
            format!("the `{}` tag is not closed with `>`", x.function),
        );
        return failed(mode, text, at, gt, None, e);
    }
    let name = text[name_start..gt].trim();
    if name.is_empty() {
        let e = malformed(at, format!("the `{}>` tag names no function", x.function));
        return failed(mode, text, at, gt + 1, None, e);
    }
    params(f, text, (at, gt + 1), name.to_string(), input, strictness)
}

/// The spelling and the finders of its tags.
struct Finders<'a> {
    x: &'a FunctionXml<'a>,
    tags: Tags<'a>,
}

impl Markup for Finders<'_> {
    fn mode(&self) -> &'static str {
        self.x.mode
    }
    fn end(&self) -> &str {
        self.x.function_end
    }
    fn is_cut(&self, rest: &str) -> bool {
        is_cut_token(rest, &[self.x.function_end, self.x.param])
    }
    fn inside(&self, name: &str) -> String {
        format!("`{}{name}>`", self.x.function)
    }
    fn noun(&self) -> &str {
        "parameter"
    }

    /// `<parameter=KEY>VALUE</parameter>` at `p`.
    fn param(&mut self, text: &str, p: usize, name: &str) -> Result<Param, Stop> {
        let (b, x) = (text.as_bytes(), self.x);
        if !text[p..].starts_with(x.param) {
            let end = self.resume(text, p);
            let place = format!("inside `{}{name}>`", x.function);
            return Err(Stop::Malformed(end, unexpected(text, p, &place)));
        }
        let key_start = p + x.param.len();
        let Some(n) = memchr::memchr3(b'>', b'<', b'\n', &b[key_start..]) else {
            return Err(Stop::Cut(format!("a `{}` tag", x.param)));
        };
        let kgt = key_start + n;
        if b[kgt] != b'>' {
            let end = self.resume(text, kgt);
            let e = malformed(p, format!("the `{}` tag is not closed with `>`", x.param));
            return Err(Stop::Malformed(end, e));
        }
        let key = text[key_start..kgt].trim().to_string();
        let vstart = kgt + 1;
        let close = self.tags.param_end.from(vstart);
        let others = [self.tags.param.from(vstart), self.tags.close.from(vstart)];
        if unclosed(close, others) {
            let end = self.resume(text, vstart);
            let e = malformed(
                p,
                format!("parameter `{key}` is not closed with `{}`", x.param_end),
            );
            return Err(Stop::Malformed(end, e));
        }
        let Some(vend) = close else {
            return Err(Stop::Cut(format!("parameter `{key}`")));
        };
        if key.is_empty() {
            let end = self.resume(text, vend);
            let e = malformed(p, format!("a `{}>` tag names no parameter", x.param));
            return Err(Stop::Malformed(end, e));
        }
        Ok(Param {
            key,
            at: p,
            value: (vstart, vend),
            read: Read::Schema,
            next: vend + x.param_end.len(),
        })
    }

    /// After a malformed call: past its `</function>` when one comes before
    /// the next `<function=`, else at that next call (or the end).
    fn resume(&mut self, text: &str, from: usize) -> usize {
        self.tags.resume(text, from)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::testutil::cut_at_end;
    use super::*;
    use crate::Extractor;
    use crate::format::qwen_xml::{FUNCTION, QWEN_XML};
    use crate::input::ParamTypes;
    use serde_json::json;
    use std::collections::HashMap;
    use toolgate_core::{FailureKind, Repair, Source};

    /// The cut opener read from the end agrees with the search for the
    /// last opener on every arrangement of openers, spaces and cut tokens.
    #[test]
    fn a_cut_opener_found_from_the_end_is_the_last_one_searched() {
        // Two wrappers, as a family with two spellings would configure.
        const TWO: &[(&str, &str)] = &[
            ("<tool_call>", "</tool_call>"),
            ("<seed:tool_call>", "</seed:tool_call>"),
        ];
        let parts = [
            "<tool_call>",
            "<seed:tool_call>",
            " ",
            "\n",
            "\u{3000}",
            "<",
            "<fun",
            "<function",
            "<function=",
            "x",
            "</tool_call>",
        ];
        let mut cut = 0;
        for a in parts {
            for b in parts {
                for c in parts {
                    let tail = format!("{a}{b}{c}");
                    let found = opener_cut_at_end(&tail, TWO, FUNCTION);
                    assert_eq!(
                        found,
                        opener_cut_at_end_by_search(&tail, TWO, FUNCTION),
                        "{tail:?}"
                    );
                    cut += usize::from(found.is_some());
                }
            }
        }
        assert!(cut > 100, "{cut}");
    }

    fn types(tool: &str, params: &[(&str, &str)]) -> ParamTypes {
        let mut p = HashMap::new();
        for (k, t) in params {
            p.insert(k.to_string(), vec![t.to_string()]);
        }
        let mut tools = HashMap::new();
        tools.insert(tool.to_string(), p);
        ParamTypes { tools }
    }

    fn run(out: &str, pt: Option<&ParamTypes>, s: Strictness) -> Vec<Candidate> {
        let mut input = Input::new(out);
        input.param_types = pt;
        QWEN_XML.extract(&input, s)
    }

    #[test]
    fn a_bare_block_without_its_opener_beside_a_call_is_malformed() {
        // s47-stray: in an output without the wrapper (vLLM reads bare
        // blocks there), `f` ran and `g` was dropped as text.
        use crate::irregular::testkit::assert_stray;
        let f = "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>";
        let g = "g>\n<parameter=b>\n2\n</parameter>\n";
        for (out, stray) in [
            (format!("{f}\n{g}</function>"), 1),
            (format!("{f}\n{g}"), 1),
            (format!("{f}\ng>\n</function>"), 1),
            (format!("Sure.\n{g}</function>\n{f}"), 0),
            (format!("<tool_call>\n{f}\n</tool_call>\n{g}</function>"), 1),
        ] {
            let c = run(&out, None, Strictness::Strict);
            assert_stray(&c, stray, ("f", Some("g")), &out);
        }
        // Prose, a name alone, and prose before a stray closer stay text.
        for out in [
            format!("Use </function> to close.\n{f}"),
            format!("{f}\ng>\nDone."),
            format!("{f}\nThe <parameter=x> tag is fine."),
        ] {
            let c = run(&out, None, Strictness::Strict);
            assert_eq!(c.len(), 1, "{out}: {c:#?}");
            assert!(c[0].call().is_some(), "{out}");
        }
    }

    #[test]
    fn pass_with_typed_values_and_newlines_trimmed() {
        let pt = types("get_weather", &[("city", "string"), ("days", "integer")]);
        let out = "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nAntwerp\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
        let c = run(out, Some(&pt), Strictness::Strict);
        assert_eq!(c.len(), 1);
        let call = c[0].call().unwrap();
        assert_eq!(call.name, "get_weather");
        assert_eq!(json!(call.arguments), json!({"city": "Antwerp", "days": 3}));
        assert_eq!(c[0].span, Span::new(6, out.len()));
        assert_eq!(c[0].source, Source::Output);
        // Without a schema every value is a string.
        let c = run(out, None, Strictness::Strict);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "Antwerp", "days": "3"})
        );
    }

    #[test]
    fn only_one_newline_each_side_is_removed() {
        let out = "<function=edit>\n<parameter=s>\n\nx\n\n</parameter>\n</function>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c[0].call().unwrap().arguments["s"], "\nx\n");
    }

    #[test]
    fn parallel_calls_bare_and_wrapped() {
        let out = "<tool_call>\n<function=a>\n<parameter=x>1</parameter>\n</function>\n</tool_call><tool_call><function=b>\n</function></tool_call>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].name.as_deref(), Some("a"));
        assert_eq!(c[0].span.start, 0);
        assert_eq!(c[1].call().unwrap().name, "b");
        assert!(c[1].call().unwrap().arguments.is_empty());
        // Bare blocks in an output without wrapper markup are calls.
        let out =
            "<function=a>\n<parameter=x>1</parameter>\n</function>\n<function=b>\n</function>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert!(c.iter().all(|c| c.call().is_some()));
    }

    #[test]
    fn text_inside_the_wrapper_after_the_function_is_malformed() {
        let out =
            "<tool_call><function=f><parameter=a>1</parameter></function>{\"b\": 2}</tool_call>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c[0].name.as_deref(), Some("f"));
        assert_eq!(
            c[0].failure().unwrap().kind,
            toolgate_core::FailureKind::Malformed
        );
        // Whitespace and a second block are fine.
        let out = "<tool_call>\n<function=f></function>\n<function=g></function>\n</tool_call>";
        assert!(
            run(out, None, Strictness::Strict)
                .iter()
                .all(|c| c.call().is_some())
        );
    }

    #[test]
    fn a_function_closer_inside_a_value_ends_the_call() {
        // Issue 22, decided: Qwen3-Coder's template writes values raw and
        // vLLM's qwen3_coder parser cuts at the first `</function>` (and
        // `</tool_call>`): the value misses `</parameter>`, so the call is
        // malformed rather than run with a value cut short.
        let out = "<tool_call>\n<function=write>\n<parameter=text>\nend </function> here\n</parameter>\n</function>\n</tool_call>";
        for s in [Strictness::Strict, Strictness::Lenient] {
            let c = run(out, None, s);
            assert_eq!(c[0].name.as_deref(), Some("write"));
            assert!(c.iter().all(|c| c.call().is_none()), "{c:?}");
            assert_eq!(
                c[0].failure().unwrap().kind,
                toolgate_core::FailureKind::Malformed
            );
        }
    }

    #[test]
    fn a_bare_function_block_in_an_output_that_uses_the_wrapper_is_malformed() {
        // Issue 22: the misspelled opener `<too_call>` made the bare block
        // execute; vLLM reads bare blocks only when no `<tool_call>` exists.
        let out = "<too_call>\n<function=get_weather>\n<parameter=city>\nAntwerp\n</parameter>\n</function>\n</tool_call>";
        for s in [Strictness::Strict, Strictness::Lenient] {
            let c = run(out, None, s);
            assert_eq!(c.len(), 1);
            assert_eq!(c[0].name.as_deref(), Some("get_weather"));
            let f = c[0].failure().unwrap();
            assert_eq!(f.kind, toolgate_core::FailureKind::Malformed);
            assert!(f.message.contains("outside `<tool_call>`"), "{}", f.message);
        }
        // A bare block after a closed wrapper: malformed too (vLLM skips it).
        let out = "<tool_call><function=a></function></tool_call>\n<function=b></function>";
        let c = run(out, None, Strictness::Strict);
        assert!(c[0].call().is_some());
        assert_eq!(
            c[1].failure().unwrap().kind,
            toolgate_core::FailureKind::Malformed
        );
        // Inside a wrapper, several blocks are still parallel calls.
        let out = "<tool_call><function=a></function><function=b></function></tool_call>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert!(c.iter().all(|c| c.call().is_some()));
    }

    #[test]
    fn truncation_inside_a_call() {
        for out in [
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nAntw",
            "<tool_call>\n<function=get_weather>\n<parameter=city>Antwerp</parameter>\n</func",
            "<tool_call>\n<function=get_wea",
            "<tool_call>\n",
            "<tool_call>\n<func",
        ] {
            let c = run(out, None, Strictness::Strict);
            assert_eq!(c.len(), 1, "{out}");
            cut_at_end(&c, out);
        }
    }

    #[test]
    fn malformed_markup() {
        // Missing `</parameter>`: the next parameter starts first.
        let out = "<function=f>\n<parameter=a>\nx\n<parameter=b>\ny\n</parameter>\n</function> <function=g>\n</function>";
        let c = run(out, None, Strictness::Lenient);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(c[0].name.as_deref(), Some("f"));
        assert_eq!(c[1].call().unwrap().name, "g");
        // `>` missing on the function tag.
        let out = "<function=bad\n</function>\n<function=ok>\n</function>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].name, None);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(c[1].call().unwrap().name, "ok");
        // Duplicate parameter and stray text.
        let out = "<function=f><parameter=a>1</parameter><parameter=a>2</parameter></function>";
        assert_eq!(
            run(out, None, Strictness::Strict)[0]
                .failure()
                .unwrap()
                .kind,
            FailureKind::Malformed
        );
        let out = "<function=f>hello<parameter=a>1</parameter></function>";
        assert_eq!(
            run(out, None, Strictness::Strict)[0]
                .failure()
                .unwrap()
                .offset,
            12
        );
    }

    #[test]
    fn wrong_type_stays_a_string_and_lenient_repairs_json() {
        let pt = types("f", &[("n", "integer"), ("o", "object"), ("b", "boolean")]);
        let out = "<function=f><parameter=n>many</parameter><parameter=o>{'k': 'v'}</parameter><parameter=b>True</parameter></function>";
        let c = run(out, Some(&pt), Strictness::Strict);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"n": "many", "o": "{'k': 'v'}", "b": "True"})
        );
        assert!(c[0].repairs.is_empty());
        let c = run(out, Some(&pt), Strictness::Lenient);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"n": "many", "o": {"k": "v"}, "b": true})
        );
        assert_eq!(
            c[0].repairs,
            vec![Repair::SingleQuotes, Repair::PythonLiterals]
        );
    }

    #[test]
    fn reasoning_only_call_is_reported_as_reasoning() {
        let out = "Let me call <tool_call>\n<function=f>\n</function>\n</tool_call>\n</think>\n\nNo tool needed.";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source, Source::OutputReasoning);
        let mut input = Input::new("plain answer");
        input.reasoning_field = Some("<function=f>\n</function>");
        let c = QWEN_XML.extract(&input, Strictness::Strict);
        assert_eq!(c[0].source, Source::ReasoningField);
    }

    #[test]
    fn no_markup_no_candidate() {
        assert!(run("Hello, world!", None, Strictness::Strict).is_empty());
        assert!(
            run(
                "<tool_call>{\"name\": \"f\"}</tool_call>",
                None,
                Strictness::Strict
            )
            .is_empty()
        );
    }

    #[test]
    fn text_inside_the_wrapper_before_the_function_is_malformed() {
        // Issue 22: the text between `<tool_call>` and `<function=` was
        // dropped and the call executed.
        for out in [
            "<tool_call>\nI will call it\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
            "<tool_call>{\"b\": 2}<function=f></function></tool_call>",
            "Sure. <tool_call>x<function=f></function></tool_call>",
        ] {
            let c = run(out, None, Strictness::Strict);
            assert_eq!(c.len(), 1, "{out}");
            assert_eq!(c[0].name.as_deref(), Some("f"), "{out}");
            let failure = c[0].failure().unwrap();
            assert_eq!(failure.kind, FailureKind::Malformed, "{out}");
            assert!(
                failure.message.contains("before `<function=`"),
                "{}",
                failure.message
            );
            assert_eq!(Some(failure.offset), out.find(['I', '{', 'x']));
            assert!(run(out, None, Strictness::Lenient)[0].call().is_none());
        }
        // Text between two blocks of one wrapper: the second block.
        let out = "<tool_call><function=a></function> and <function=b></function></tool_call>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c[1].name.as_deref(), Some("b"));
        assert_eq!(c[1].failure().unwrap().kind, FailureKind::Malformed);
        // Whitespace is allowed, and text outside the wrapper is prose.
        for out in [
            "<tool_call>\n \t\r\n<function=f></function>\n</tool_call>",
            "<tool_call><function=a></function>\n<function=b></function></tool_call>",
            "Sure.\n<tool_call>\n<function=a></function>\n</tool_call> then <tool_call>\n<function=b></function>\n</tool_call>",
        ] {
            let c = run(out, None, Strictness::Strict);
            assert!(c.iter().all(|c| c.call().is_some()), "{out}: {c:?}");
            assert_eq!(c.len(), out.matches("<function=").count(), "{out}");
        }
    }
}
