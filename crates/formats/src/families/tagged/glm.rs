//! `glm`: GLM-4.5 / 4.6 / 4.7 key/value calls (also Poolside v1, which
//! emits the same shape).
//!
//! **Poolside** (Laguna, the `poolside_v1` parsers) is a model mapping to
//! this mode (`poolside`, `laguna` in [`crate::models`]), not a mode of its
//! own: SGLang's detector (`sgl-project/sglang`,
//! `python/sglang/srt/function_call/poolside_v1_detector.py`, "poolside
//! Laguna-XS.2") and vLLM's parser (`vllm/tool_parsers/poolside_v1_tool_parser.py`,
//! a GLM-4 parser) read `<tool_call>NAME\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n…</tool_call>`,
//! this format. They differ in recovery, not on the wire: they fall back to
//! Python literals for non-string values, drop an orphan `<arg_key>` and the
//! cut-off call after a complete one; this mode keeps the value as text for
//! the schema to judge (`type_coercion`), and reports the orphan key
//! (`malformed`) and the cut-off call (`truncated`). CONFORMANCE.md lists
//! the five peer records where that shows.
//!
//! **Engine `key_value`**, one of the tagged-parameter engines (`Tokens`;
//! declared formats: `engine = "tagged_parameters"` with `key` and `value`
//! pairs): a name after the call opener, then key and value tags. Its
//! parameter loop and value reader are `params`'s; the rows glm,
//! hunyuan, longcat_xml, hy_v4, iquest_coder_v2, hyperclovax_seed_think
//! (values read as JSON first), k2_horizon and solar_open2 (no value
//! opener: the key's closer opens the value) configure it.
//!
//! # Wire format
//!
//! ```text
//! <tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>Antwerp</arg_value>
//! <arg_key>days</arg_key>
//! <arg_value>3</arg_value>
//! </tool_call>
//! ```
//!
//! gives `{"name": "get_weather", "arguments": {"city": "Antwerp", "days": 3}}`
//! when the schema types `days` as an integer. GLM-4.7 writes the same
//! without newlines (`<tool_call>get_weather<arg_key>city</arg_key>…`); a
//! call without arguments is `<tool_call>get_time</tool_call>`.
//!
//! - Values are raw text typed like `qwen_xml` (SPEC §9): one leading and one
//!   trailing newline removed, a string unless the schema types the
//!   parameter otherwise, left a string when the text does not read as that
//!   type. Whitespace inside a value is kept.
//! - A `<tool_call>` whose body is JSON (`hermes`) or `<function=…>`
//!   (`qwen_xml`), or whose first word is followed by `<tool_sep>` (Hunyuan,
//!   see [`crate::format::hunyuan`]), is not this format: no candidate.
//!   A name followed by this format's own parameter markup other than a key
//!   (`<arg_value>` without `<arg_key>`), or by a JSON object (GLM-4-0414's
//!   `NAME\n{…}`), is a broken call in this format: `malformed`. So is text
//!   with spaces that the call's own closer ends (`<tool_call>rm -rf
//!   /</tool_call>`); without that closer such text is prose.
//! - A key runs to its `</arg_key>` (it may hold `<`: `param<1>`); a key or
//!   value holding the format's own markup (a value whose `</arg_value>` is
//!   missing runs into the next `<arg_key>`) is `malformed`.
//! - A key without a value, a key given twice, stray text, or a call without
//!   a function name are `malformed`; output ending inside a call is
//!   `truncated`.

use super::common::{Next, broken_call, is_cut_token, malformed, truncated};
use super::params::{Markup, Param, Read, Stop, Tags, failed, params, unexpected};
use crate::input::{Input, Strictness};
use crate::util::{self, skip_ws};
use toolgate_core::{Candidate, Span};

/// One family's spelling of the key/value shape: the same engine reads GLM,
/// Hunyuan (`<tool_sep>` after the name) and LongCat's XML arguments.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tokens<'a> {
    /// The mode name given to candidates.
    pub mode: &'static str,
    /// The call opener (`<tool_call>`), followed by the function name.
    pub open: &'a str,
    /// The call closer.
    pub close: &'a str,
    /// The key opener and closer.
    pub key: &'a str,
    pub key_end: &'a str,
    /// The value opener (`None`: the key's closer opens the value, Solar
    /// Open 2's `<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>`;
    /// the value then starts right after it, whitespace included) and the
    /// value closer.
    pub value: Option<&'a str>,
    pub value_end: &'a str,
    /// Whether values are JSON text (HyperCLOVAX-SEED-Think's
    /// `<arg_value>"Seoul"</arg_value>`): each is read as JSON first and
    /// text that is not JSON stays a string, as DSML's `string="false"`
    /// ([`Read::Json`]); otherwise values are typed by the tool's schema
    /// ([`Read::Schema`], SPEC §9).
    pub json_values: bool,
    /// A separator that must follow the name (Hunyuan's `<tool_sep>`): calls
    /// without it are skipped (but see `block`); without a separator, calls
    /// with `<tool_sep>` are skipped (another family's).
    pub sep: Option<&'a str>,
    /// The section holding the calls (HY v4's `<tool_calls>`). Without a
    /// `sep`, calls count only inside it; with one, a call inside it that
    /// closes right after its name (`<tool_call>f</tool_call>`) is a call
    /// without arguments even though the separator is missing.
    pub block: Option<(&'a str, &'a str)>,
}

/// Every `<tool_call>NAME…</tool_call>` of `text` in the spelling `t`.
pub(crate) fn scan(
    text: &str,
    input: &Input<'_>,
    strictness: Strictness,
    t: &Tokens<'_>,
) -> Vec<Candidate> {
    let mut f = Finders {
        t,
        tags: Tags::new(text, [t.open, t.close, t.key_end, t.value_end]),
    };
    let mut blocks = t.block.map(|(o, c)| Inside::new(text, o, c));
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    // Where the text after the last call starts (`None`: no call yet).
    let mut after: Option<usize> = None;
    while let Some(at) = f.tags.open.from(pos) {
        let in_block = blocks.as_mut().is_some_and(|b| b.at(at));
        if t.block.is_some() && t.sep.is_none() && !in_block {
            // Outside the section: another family's `<tool_call>` (GLM's).
            pos = at + t.open.len();
            continue;
        }
        match call(text, at, in_block, &mut f, input, strictness) {
            Some((cand, end)) => {
                let from = after.unwrap_or(0);
                if from <= at
                    && let Some(stray) = stray_call(text, (from, Some(at)), t, after.is_some())
                {
                    out.push(stray);
                }
                out.push(cand);
                pos = end.max(at + 1);
                after = Some(end);
            }
            None => pos = at + t.open.len(),
        }
    }
    if let Some(from) = after
        && let Some(stray) = stray_call(text, (from, None), t, true)
    {
        out.push(stray);
    }
    out.into_vec()
}

/// A call without its opener after a call or before the first one (in
/// `text[from..to]`, up to the next call), a broken call
/// ([`util::stray_call`], the rule hermes, gemma, `tag` and the invoke rows
/// share): its own text is a function name, then the separator (Hunyuan's
/// `<tool_sep>`) or else the key tag, then its parameters. Closed by the
/// call closer (`<tool_call>f…</tool_call>g<arg_key>…</arg_value></tool_call>`,
/// and the same before the first call), the text before the closer ending
/// with a value's closer (or the separator: no arguments); after a call
/// with no closer at all, the gap starting with the name and that tag. A
/// name alone is not looked for (`</tool_call>\nDone` is prose); nor is
/// other text before a stray closer.
fn stray_call(
    text: &str,
    gap: (usize, Option<usize>),
    t: &Tokens<'_>,
    after_call: bool,
) -> Option<Candidate> {
    let marker = t.sep.unwrap_or(t.key);
    // The name right before the first marker of `g`: where it starts.
    let head = |g: &str| {
        let m = g.find(marker)?;
        let before = g[..m].trim_end();
        let start = before
            .rfind(|c: char| c.is_whitespace() || c == '>')
            .map_or(0, |i| i + 1);
        is_function_name(&before[start..]).then_some(start)
    };
    let closed = |g: &str| {
        let end = g.trim_end();
        if !(end.ends_with(t.value_end) || end.ends_with(marker)) {
            return None;
        }
        head(g)
    };
    let bare = |g: &str| (head(g)? == 0).then(|| g.trim_end().len());
    let (start, end, f) = util::stray_call(text, gap, (&[t.close], after_call), closed, bare)?;
    let own = &text[start..end];
    let name = own
        .find(marker)
        .map(|m| own[..m].trim().to_string())
        .filter(|n| !n.is_empty());
    Some(util::candidate(
        t.mode,
        Span::new(start, end),
        own,
        name,
        Err(f),
        Vec::new(),
    ))
}

/// Whether positions (asked in increasing order) are inside a section
/// (`<tool_calls>` … `</tool_calls>`, or to the end when not closed): the
/// section tokens are walked once, forward.
struct Inside<'a> {
    open: Next<'a>,
    close: Next<'a>,
    lens: (usize, usize),
    walked: usize,
    inside: bool,
}

impl<'a> Inside<'a> {
    fn new(text: &'a str, open: &'a str, close: &'a str) -> Inside<'a> {
        Inside {
            open: Next::new(text, open),
            close: Next::new(text, close),
            lens: (open.len(), close.len()),
            walked: 0,
            inside: false,
        }
    }

    fn at(&mut self, at: usize) -> bool {
        loop {
            let o = self.open.from(self.walked).filter(|&o| o < at);
            let c = self.close.from(self.walked).filter(|&c| c < at);
            (self.inside, self.walked) = match (o, c) {
                (None, None) => return self.inside,
                (Some(o), Some(c)) if c < o => (false, c + self.lens.1),
                (Some(o), _) => (true, o + self.lens.0),
                (None, Some(c)) => (false, c + self.lens.1),
            };
        }
    }
}

struct Finders<'a> {
    t: &'a Tokens<'a>,
    /// The call opener and closer, the key closer and the value closer.
    tags: Tags<'a>,
}

/// Where the format's own parameter or call markup first appears in a key or
/// value's text, if it does. Stops at the first hit, so the work is bounded
/// by how far scanning then moves on.
fn own_markup(t: &Tokens, text: &str) -> Option<usize> {
    memchr::memchr_iter(b'<', text.as_bytes()).find(|&i| {
        let rest = &text[i..];
        [t.key, t.key_end, t.value_end, t.open, t.close]
            .iter()
            .chain(&t.value)
            .any(|m| rest.starts_with(m))
    })
}

/// One call at `at`, or `None` when the `<tool_call>` is not this format.
fn call(
    text: &str,
    at: usize,
    in_block: bool,
    f: &mut Finders<'_>,
    input: &Input<'_>,
    strictness: Strictness,
) -> Option<(Candidate, usize)> {
    let t = f.t;
    let mode = t.mode;
    let b = text.as_bytes();
    let name_start = at + t.open.len();
    let lt = memchr::memchr(b'<', &b[name_start..]).map(|n| name_start + n);
    let name_end = lt.unwrap_or(text.len());
    let name = text[name_start..name_end].trim();
    if name.starts_with(['{', '[', '"']) {
        return None;
    }
    // A function name, then JSON (GLM-4-0414's `NAME\n{…}`): a call in
    // this opener whose arguments are not key/value pairs. Skipped, the
    // calls beside it ran alone (probe 44); it is no other family's call.
    if let Some((head, body)) = name.split_once(char::is_whitespace)
        && is_function_name(head)
        && body.trim_start().starts_with('{')
    {
        let end = f.resume(text, name_start);
        let what = format!(
            "the arguments of `{head}` are JSON, not `{}`/`{}` pairs",
            t.key,
            t.value.unwrap_or(t.key_end)
        );
        let name = Some(head.to_string());
        return Some(broken_call(mode, text, (at, end), name, (name_start, what)));
    }
    // A name with spaces is prose (`I use <tool_call> tags`) unless the
    // family's next tag follows: then it is a call with a broken name.
    // Closed at once by this format's own closer (`<tool_call>rm -rf
    // /</tool_call>`, `…delete_all path=/</tool_call>`), it is a broken
    // call, `malformed` (probe 44b: skipped as prose, the call beside it
    // executed alone); Hunyuan's `<tool_call>` outside its section is GLM's.
    if name.contains(char::is_whitespace) {
        let next = t.sep.unwrap_or(t.key);
        let own = t.sep.is_none() || in_block;
        if let Some(l) = lt.filter(|&l| own && text[l..].starts_with(t.close)) {
            let end = l + t.close.len();
            let what = format!("`{name}` is not a function name followed by `{next}`");
            return Some(broken_call(mode, text, (at, end), None, (name_start, what)));
        }
        if !lt.is_some_and(|l| text[l..].starts_with(next)) {
            return None;
        }
    }
    let cut = |name: &str| {
        let n = (!name.is_empty()).then(|| name.to_string());
        Some(failed(
            mode,
            text,
            at,
            text.len(),
            n,
            truncated(text.len(), "a tool call"),
        ))
    };
    let Some(lt) = lt else {
        return cut(name);
    };
    let mut p = lt;
    let rest = &text[p..];
    if let Some(sep) = t.sep {
        if rest.starts_with(sep) {
            p += sep.len();
        } else if in_block && rest.starts_with(t.close) {
            // `<tool_call>f</tool_call>` inside the section: no arguments,
            // and so no separator (the no-argument gap of issue 27).
        } else if is_cut_token(rest, &[sep]) {
            return cut(name);
        } else {
            return None;
        }
    } else if [t.key_end, t.value_end]
        .iter()
        .chain(&t.value)
        .any(|m| rest.starts_with(m))
    {
        // This format's own parameter markup, but not a key (`<arg_value>`
        // without its `<arg_key>`): a broken call in this format, not
        // another family's (probe 44: it was skipped, and the call beside
        // it executed alone).
        let end = f.resume(text, p);
        let n = (!name.is_empty()).then(|| name.to_string());
        let shown: String = rest.chars().take(20).collect();
        let what = format!("`{shown}` where `{}` or `{}` belongs", t.key, t.close);
        return Some(broken_call(mode, text, (at, end), n, (p, what)));
    } else if !(rest.starts_with(t.key)
        || rest.starts_with(t.close)
        || is_cut_token(rest, &[t.key, t.close]))
    {
        // `<tool_sep>`, `<function=`, …: another family's markup.
        return None;
    }
    if name.is_empty() {
        let end = f.resume(text, p);
        let e = malformed(at, "the tool call names no function");
        return Some(failed(mode, text, at, end, None, e));
    }
    Some(params(
        f,
        text,
        (at, p),
        name.to_string(),
        input,
        strictness,
    ))
}

/// Whether `s` reads as a function name: letters, digits, `_`, `-`, `.`,
/// not starting with a digit.
fn is_function_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl Markup for Finders<'_> {
    fn mode(&self) -> &'static str {
        self.t.mode
    }
    fn end(&self) -> &str {
        self.t.close
    }
    fn is_cut(&self, rest: &str) -> bool {
        is_cut_token(rest, &[self.t.close, self.t.key])
    }
    fn inside(&self, _name: &str) -> String {
        "a tool call".into()
    }
    fn noun(&self) -> &str {
        "argument"
    }

    /// `<arg_key>K</arg_key><arg_value>V</arg_value>` at `p`.
    fn param(&mut self, text: &str, p: usize, _name: &str) -> Result<Param, Stop> {
        let t = self.t;
        let b = text.as_bytes();
        if !text[p..].starts_with(t.key) {
            return Err(Stop::Malformed(
                self.resume(text, p),
                unexpected(text, p, "in a tool call"),
            ));
        }
        // <arg_key>K</arg_key>: the key runs to its closing tag (it may hold
        // `<`, e.g. `param<1>`), but never over the format's own markup.
        let kstart = p + t.key.len();
        let kend = self.tags.param.from(kstart);
        let limit = kend.unwrap_or(text.len());
        let unclosed_key = |at| {
            malformed(
                at,
                format!("`{}` is not closed with `{}`", t.key, t.key_end),
            )
        };
        if let Some(m) = own_markup(t, &text[kstart..limit]) {
            let at_markup = kstart + m;
            let end = self.resume(text, at_markup);
            return Err(Stop::Malformed(end, unclosed_key(at_markup)));
        }
        let Some(kend) = kend else {
            if self.tags.close.from(kstart).is_some() {
                let end = self.resume(text, kstart);
                return Err(Stop::Malformed(end, unclosed_key(kstart)));
            }
            return Err(Stop::Cut("an argument key".into()));
        };
        let key = text[kstart..kend].trim().to_string();
        let (p, vstart) = match t.value {
            // The key's closer opened the value: it starts right there.
            None => (kend, kend + t.key_end.len()),
            Some(value) => {
                let p = skip_ws(b, kend + t.key_end.len());
                let rest = &text[p..];
                if rest.is_empty() || is_cut_token(rest, &[value]) {
                    return Err(Stop::Cut("a tool call".into()));
                }
                if !rest.starts_with(value) {
                    let end = self.resume(text, p);
                    let e = malformed(p, format!("argument `{key}` has no `{value}`"));
                    return Err(Stop::Malformed(end, e));
                }
                (p, p + value.len())
            }
        };
        let vend = self.tags.param_end.from(vstart);
        let close = self.tags.close.from(vstart);
        let v = match (vend, close) {
            (None, None) => return Err(Stop::Cut(format!("the value of `{key}`"))),
            // The value's `</arg_value>` is missing: the call closes first,
            // or it ran into the next parameter's markup. Never read markup
            // as a value.
            (None, Some(_)) => None,
            (Some(v), Some(c)) if c < v => None,
            (Some(v), _) if own_markup(t, &text[vstart..v]).is_some() => None,
            (Some(v), _) => Some(v),
        };
        let Some(v) = v else {
            let end = self.resume(text, vstart);
            let e = malformed(
                p,
                format!("the value of `{key}` is not closed with `{}`", t.value_end),
            );
            return Err(Stop::Malformed(end, e));
        };
        if key.is_empty() {
            let end = self.resume(text, v);
            return Err(Stop::Malformed(
                end,
                malformed(kstart, format!("an empty `{}`", t.key)),
            ));
        }
        Ok(Param {
            key,
            at: kstart,
            value: (vstart, v),
            read: if t.json_values {
                Read::Json
            } else {
                Read::Schema
            },
            next: v + t.value_end.len(),
        })
    }

    /// After a malformed call: past its `</tool_call>`, or at the next
    /// `<tool_call>` when that comes first, or at the end.
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
    use crate::input::ParamTypes;
    use serde_json::json;
    use std::collections::HashMap;
    use toolgate_core::{FailureKind, Repair, Source, Span};

    fn types(tool: &str, params: &[(&str, &str)]) -> ParamTypes {
        let mut p = HashMap::new();
        for (k, t) in params {
            p.insert(k.to_string(), vec![t.to_string()]);
        }
        ParamTypes {
            tools: HashMap::from([(tool.to_string(), p)]),
        }
    }

    fn run(out: &str, pt: Option<&ParamTypes>, s: Strictness) -> Vec<Candidate> {
        let mut input = Input::new(out);
        input.param_types = pt;
        crate::format::glm::GLM.extract(&input, s)
    }

    #[test]
    fn a_call_without_its_opener_beside_a_call_is_malformed() {
        // s47-stray: `f` ran and `g` was dropped as text.
        use crate::irregular::testkit::assert_stray;
        let f = "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>";
        let g = "g\n<arg_key>b</arg_key>\n<arg_value>2</arg_value>\n";
        for (out, stray) in [
            (format!("{f}{g}</tool_call>"), 1),
            (format!("{f}\n{g}"), 1),
            (format!("Sure.\n{g}</tool_call>{f}"), 0),
        ] {
            assert_stray(
                &run(&out, None, Strictness::Strict),
                stray,
                ("f", Some("g")),
                &out,
            );
        }
        // Hunyuan: its separator marks the name.
        let h = crate::format::hunyuan::HUNYUAN;
        let hf = "<tool_calls><tool_call>f<tool_sep><arg_key>a</arg_key><arg_value>1</arg_value></tool_call>";
        let out = format!("{hf}g<tool_sep></tool_calls>");
        assert_stray(
            &h.extract(&Input::new(&out), Strictness::Strict),
            1,
            ("f", Some("g")),
            &out,
        );
        // A name alone, prose, and prose before a stray closer stay text.
        for out in [
            format!("{f}\nDone"),
            format!("{f}\nDone. Use <arg_key> tags next time."),
            format!("Use </tool_call> to close.\n{f}"),
            format!("{f} I set <arg_value>1</arg_value> as told.</tool_call>"),
        ] {
            let c = run(&out, None, Strictness::Strict);
            assert_eq!(c.len(), 1, "{out}: {c:#?}");
            assert!(c[0].call().is_some(), "{out}");
        }
    }

    #[test]
    fn a_call_closer_inside_a_value_ends_the_call() {
        // Issue 22, decided: GLM-4.5/4.6's chat template writes values raw
        // (no escaping) and vLLM's glm45/glm47 parsers cut the block at the
        // first `</tool_call>`, so the closer ends the call inside a value;
        // the value then has no `</arg_value>`: malformed, never run with a
        // value cut short.
        let out = "<tool_call>write<arg_key>text</arg_key><arg_value>see </tool_call> here</arg_value></tool_call>";
        for s in [Strictness::Strict, Strictness::Lenient] {
            let c = run(out, None, s);
            assert_eq!(c[0].name.as_deref(), Some("write"));
            assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
            assert!(c.iter().all(|c| c.call().is_none()), "{c:?}");
        }
    }

    #[test]
    fn pass_newline_and_inline_forms() {
        let pt = types("get_weather", &[("days", "integer")]);
        for out in [
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Antwerp</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Antwerp</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call>",
        ] {
            let c = run(out, Some(&pt), Strictness::Strict);
            assert_eq!(c.len(), 1);
            assert_eq!(c[0].span, Span::new(0, out.len()));
            let call = c[0].call().unwrap();
            assert_eq!(call.name, "get_weather");
            assert_eq!(json!(call.arguments), json!({"city": "Antwerp", "days": 3}));
        }
        let c = run(
            "Checking.<tool_call>get_time</tool_call>",
            None,
            Strictness::Strict,
        );
        assert!(c[0].call().unwrap().arguments.is_empty());
        let c = run(
            "<tool_call>f<arg_key>s</arg_key><arg_value>  x  </arg_value></tool_call>",
            None,
            Strictness::Strict,
        );
        assert_eq!(c[0].call().unwrap().arguments["s"], "  x  ");
    }

    #[test]
    fn parallel_calls() {
        let out = "<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>\ntext\n<tool_call>b\n</tool_call>";
        let c = run(out, None, Strictness::Strict);
        let names: Vec<_> = c.iter().map(|c| c.call().unwrap().name).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn truncation() {
        for out in [
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>",
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Bei",
            "<tool_call>get_weather\n<arg_key>ci",
            "<tool_call>get_weather",
            "<tool_call>get_weather\n</tool_",
        ] {
            let c = run(out, None, Strictness::Strict);
            assert_eq!(c.len(), 1, "{out}");
            cut_at_end(&c, out);
            assert_eq!(c[0].name.as_deref(), Some("get_weather"));
        }
    }

    #[test]
    fn malformed_markup() {
        let cases = [
            "<tool_call>   </tool_call>",
            "<tool_call>f<arg_key>a</arg_key></tool_call>",
            "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>a</arg_key><arg_value>2</arg_value></tool_call>",
            "<tool_call>f<arg_key>a</arg_key><arg_value>1</tool_call>",
            "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value>oops</tool_call>",
        ];
        for out in cases {
            let c = run(out, None, Strictness::Lenient);
            assert_eq!(c.len(), 1, "{out}");
            assert_eq!(
                c[0].failure().unwrap().kind,
                FailureKind::Malformed,
                "{out}"
            );
        }
        // Recovery: the next call still parses.
        let out = "<tool_call>f<arg_key>a</arg_key></tool_call><tool_call>g</tool_call>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c[1].call().unwrap().name, "g");
    }

    #[test]
    fn other_families_are_not_glm() {
        for out in [
            "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
            "<tool_call>\n<function=f>\n</function>\n</tool_call>",
            "<tool_calls><tool_call>f<tool_sep></tool_call></tool_calls>",
            "I will use <tool_call> tags later.",
        ] {
            assert!(run(out, None, Strictness::Strict).is_empty(), "{out}");
        }
        // Text with spaces that the call's own closer ends is a broken call
        // (probe 44b), not prose: the call beside it must not run alone.
        for out in [
            "<tool_call>some prose</tool_call>",
            "<tool_call>rm -rf /</tool_call>",
            "<tool_call>delete_all path=/</tool_call>",
        ] {
            let c = run(out, None, Strictness::Strict);
            assert_eq!(c.len(), 1, "{out}");
            assert_eq!(
                c[0].failure().map(|f| f.kind),
                Some(FailureKind::Malformed),
                "{out}"
            );
            assert_eq!(c[0].span.end, out.len(), "{out}");
        }
        // A spaced name before `<arg_key>` is a call with that (wrong) name.
        let c = run(
            "<tool_call>get weather<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
            None,
            Strictness::Strict,
        );
        assert_eq!(c[0].call().unwrap().name, "get weather");
    }

    #[test]
    fn wrong_type_stays_a_string_and_lenient_repairs() {
        let pt = types("f", &[("n", "integer"), ("b", "boolean")]);
        let out = "<tool_call>f<arg_key>n</arg_key><arg_value>not a number</arg_value><arg_key>b</arg_key><arg_value>True</arg_value></tool_call>";
        let c = run(out, Some(&pt), Strictness::Strict);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"n": "not a number", "b": "True"})
        );
        let c = run(out, Some(&pt), Strictness::Lenient);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"n": "not a number", "b": true})
        );
        assert_eq!(c[0].repairs, vec![Repair::PythonLiterals]);
    }

    #[test]
    fn reasoning_only() {
        let out = "I could <tool_call>f</tool_call></think>No call.";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source, Source::OutputReasoning);
    }

    #[test]
    fn a_key_runs_to_its_closing_tag_and_may_hold_lt() {
        let out = "<tool_call>f<arg_key>param<1></arg_key><arg_value>x</arg_value></tool_call>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"param<1>": "x"})
        );
    }

    #[test]
    fn a_key_or_value_holding_the_format_markup_is_malformed() {
        // The value of `city` lost its `</arg_value>` and runs into `days`.
        let out = "<tool_call>f<arg_key>city</arg_key><arg_value>Antwerp<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>";
        let c = run(out, None, Strictness::Strict);
        let f = c[0].failure().unwrap();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert!(f.message.contains("`city` is not closed"), "{}", f.message);
        // A key that runs into a value.
        let out = "<tool_call>f<arg_key>city<arg_value>Antwerp</arg_value></tool_call>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        // A key cut off at the end of the output.
        let c = run("<tool_call>f<arg_key>par<1", None, Strictness::Strict);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    #[test]
    fn unclosed_keys_repeated_stay_linear() {
        // Each key scan stops at the next markup: 100k unclosed keys must
        // not rescan the rest of the output each.
        let out = "<tool_call>f<arg_key>k".repeat(100_000);
        let t = std::time::Instant::now();
        let c = run(&out, None, Strictness::Strict);
        // Capped while scanning (the stand-in carries the true count).
        assert_eq!(c.len(), crate::rules::DEFAULT_MAX_CANDIDATES);
        assert!(
            c[998]
                .failure()
                .unwrap()
                .message
                .starts_with("100000 candidates")
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            t.elapsed()
        );
    }
}
