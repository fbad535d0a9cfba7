//! `functionary`: MeetKai Functionary v3.1 and v3.2 — the tool name in
//! markup, the arguments as a bare JSON object.
//!
//! ```text
//! <function=special_function>{"arg1": 1}</function>
//! special_function
//! {"arg1": 1}
//! >>>get_time
//! {"city": "Paris"}
//! ```
//!
//! - v3.1: `<function=NAME>` + the arguments object + `</function>` (the
//!   closer may be missing: the object's own end ends the call); a
//!   `<function=NAME>` not followed by `{` (Qwen3-Coder's
//!   `<function=f><parameter=…>` shape) is not this format and is skipped;
//!   but a block its own `</function>` closes with no other opener between,
//!   holding nothing or text that is not markup (`<function=f></function>`,
//!   `<function=f>path=/</function>`), or naming no readable function
//!   (`<function=delete all>{…}</function>`), is a broken call: `malformed`;
//! - v3.2: each turn segment is `NAME\n` + content; the template's
//!   generation prompt opens the first segment with `>>>`, so the output
//!   starts with `NAME\n{…}` and later segments with `>>>NAME\n{…}`. The
//!   name `all` is ordinary text, and a segment whose content is not a JSON
//!   object (`python\n…` code) is not a call;
//! - an output that ends inside the arguments is `truncated`, and so is one
//!   that ends inside or right after a `>>>` segment's header (`>>>`,
//!   `>>>NAME`, `>>>NAME\n`): the call that segment opened was cut off.

use toolgate_core::{Candidate, ParseFailure, Span};

use super::marked::{MultiFind, arguments_after_name, cut_off_call};
use crate::families::tagged::common::broken_call;
use crate::{Extractor, Input, Strictness, util};

const MODE: &str = "functionary";

/// The `functionary` extractor, with the tokens of its format file.
#[derive(Clone, Copy, Debug)]
pub struct Functionary {
    /// Opens a v3.1 call (`<function=`); the name and `>` follow.
    pub open: &'static str,
    /// Closes a v3.1 call.
    pub close: &'static str,
    /// Opens a v3.2 segment after the first (`>>>`).
    pub v32_sep: &'static str,
}

impl Extractor for Functionary {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"<function=special_function>{"arg1": 1}</function>"#
    }
    fn describe(&self) -> &str {
        "Functionary v3.1: <function=f>{json}</function>; v3.2: f\\n{json} segments after >>>"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| scan(self, text, strictness))
    }
}

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

/// Where the name starting at `from` ends: past its name bytes (scanning
/// bytes, not searching for a closer, keeps repeated openers linear).
fn name_end(b: &[u8], from: usize) -> usize {
    from + b[from.min(b.len())..]
        .iter()
        .take_while(|c| is_name_byte(**c))
        .count()
}

fn scan(f: &Functionary, text: &str, strictness: Strictness) -> Vec<Candidate> {
    let mut find = MultiFind::new(text, vec![f.open, f.v32_sep]);
    // v3.1's openers and closers, for a block that is not a call.
    let mut tags = MultiFind::new(text, vec![f.open, f.close]);
    let mut out = crate::cap::Found::new();
    // The v3.2 segment the generation prompt opened: the start of the output.
    let mut next = Some((1, 0usize, 0usize));
    let mut pos = 0;
    // Where the text after the last call starts (`None`: no call yet).
    let mut after: Option<usize> = None;
    while let Some((kind, at, name_start)) = next {
        let before = out.total();
        if kind == 0 {
            let from = after.unwrap_or(0);
            if let Some(c) = stray_call(f.close, text, (from, Some(at)), after.is_some()) {
                out.push(c);
            }
        }
        let end = if kind == 0 {
            v31(
                f.close,
                text,
                (at, name_start),
                &mut tags,
                strictness,
                &mut out,
            )
        } else {
            v32(text, at, name_start, strictness, &mut out)
        };
        pos = end.max(name_start).max(pos);
        if out.total() > before {
            after = Some(pos);
        }
        next = find.next(pos).map(|(k, at)| {
            let skip = if k == 0 {
                f.open.len()
            } else {
                f.v32_sep.len()
            };
            (k, at, at + skip)
        });
    }
    if let Some(from) = after
        && let Some(c) = stray_call(f.close, text, (from, None), true)
    {
        out.push(c);
    }
    out.into_vec()
}

/// A v3.1 call without its `<function=` opener after a call, or before the
/// first `<function=` block (in `text[from..to]`, up to that block), a
/// broken call ([`util::stray_call`], the rule hermes, gemma, `tag` and the
/// invoke rows share): its own text is a function name, `>` and the
/// arguments object. Closed by `</function>`
/// (`<function=f>{…}</function>g>{…}</function>`, and the same before the
/// first block), the text before the closer ending with `}` and holding a
/// name glued to `>{` (at the gap's start or after whitespace or `>`);
/// after a call with no closer at all, the gap starting with that name and
/// `>{`, up to the object's end. Other text before a stray closer, and a
/// name alone, stay text.
fn stray_call(
    close: &str,
    text: &str,
    gap: (usize, Option<usize>),
    after_call: bool,
) -> Option<Candidate> {
    let head = |g: &str| util::name_gt_head(g, |body| body.starts_with('{'));
    let closed = |g: &str| {
        g.trim_end()
            .ends_with('}')
            .then(|| head(g))
            .flatten()
            .map(|(s, _)| s)
    };
    let bare = |g: &str| {
        let (0, gt) = head(g)? else { return None };
        let args = util::skip_ws(g.as_bytes(), gt + 1);
        let mut it =
            serde_json::Deserializer::from_str(&g[args..]).into_iter::<serde_json::Value>();
        Some(match it.next() {
            Some(Ok(_)) => args + it.byte_offset(),
            _ => g.trim_end().len(),
        })
    };
    let (start, end, fail) = util::stray_call(text, gap, (&[close], after_call), closed, bare)?;
    let own = &text[start..end];
    let name = own
        .find('>')
        .map(|gt| own[..gt].to_string())
        .filter(|n| !n.is_empty());
    Some(util::candidate(
        MODE,
        Span::new(start, end),
        own,
        name,
        Err(fail),
        Vec::new(),
    ))
}

/// `<function=NAME>{…}</function>`; returns where scanning goes on. `tags`
/// finds the opener (0) and the closer (1), asked from increasing positions.
fn v31(
    close: &str,
    text: &str,
    (at, name_start): (usize, usize),
    tags: &mut MultiFind<'_>,
    strictness: Strictness,
    out: &mut crate::cap::Found,
) -> usize {
    let b = text.as_bytes();
    // The name runs up to `>`.
    let gt = name_end(b, name_start);
    if gt > name_start && gt == b.len() {
        let name = &text[name_start..gt];
        out.push(failed(at, gt, "", name, cut_off_call(gt)));
        return gt;
    }
    if gt == name_start || b.get(gt) != Some(&b'>') {
        // `<function=delete all>…</function>`: a name this format cannot
        // read, in a block its own closer ends.
        let tag_end = memchr::memchr3(b'>', b'<', b'\n', &b[gt..]).map(|n| gt + n);
        if let Some(g) = tag_end.filter(|&g| b[g] == b'>')
            && let Some(c) = own_block_end(tags, g + 1)
        {
            let name = text[name_start..g].trim();
            let what = format!("`{name}` is not a function name");
            return broken(text, (at, c + close.len()), name, (name_start, what), out);
        }
        return gt;
    }
    let name = &text[name_start..gt];
    let args_at = util::skip_ws(b, gt + 1);
    // `"…"`: double-encoded arguments, read (and classified) like an object.
    if !matches!(b.get(args_at), Some(b'{' | b'"')) {
        if args_at >= b.len() {
            out.push(failed(at, text.len(), "", name, cut_off_call(text.len())));
            return text.len();
        }
        // Nothing, or text that is not markup (`path=/`), before this
        // block's own closer: a call without its arguments object. A body
        // of other markup (Qwen3-Coder's `<parameter=…>`) is another
        // family's and skipped.
        if (args_at == b.len() || b[args_at] != b'<' || text[args_at..].starts_with(close))
            && let Some(c) = own_block_end(tags, gt + 1)
        {
            let what = format!("the arguments of `{name}` are not a JSON object");
            return broken(text, (at, c + close.len()), name, (args_at, what), out);
        }
        return gt + 1;
    }
    let (c, end) = arguments_after_name(MODE, text, at, args_at, name.to_string(), strictness);
    out.push(c);
    if end >= text.len() {
        return end;
    }
    // The closer, when it follows, belongs to the call.
    let after = util::skip_ws(b, end);
    if text[after..].starts_with(close)
        && let Some(last) = out.last_mut()
    {
        last.span.end = after + close.len();
        return after + close.len();
    }
    end
}

/// `NAME\n{…}` at a segment start; returns where scanning goes on.
fn v32(
    text: &str,
    at: usize,
    name_start: usize,
    strictness: Strictness,
    out: &mut crate::cap::Found,
) -> usize {
    let b = text.as_bytes();
    let i = name_end(b, name_start);
    let name = &text[name_start..i];
    // A `>>>` segment (not the first, which no token opens) whose header
    // the output ends inside, or right after: the call it opened was cut
    // off (SPEC §9), as v3.1's `<function=f>` at the end is. Skipped, the
    // call before it executed alone (probe 44b). The first segment has no
    // token, so a one-word answer there is text.
    let segment = at < name_start;
    if segment && i == b.len() {
        let n = (!name.is_empty()).then(|| name.to_string());
        let span = Span::new(at, i);
        out.push(util::candidate(
            MODE,
            span,
            "",
            n,
            Err(cut_off_call(i)),
            Vec::new(),
        ));
        return i;
    }
    if name.is_empty() || name == "all" {
        return i;
    }
    let nl = if text[i..].starts_with("\r\n") {
        2
    } else if text[i..].starts_with('\n') {
        1
    } else {
        return i;
    };
    let args_at = i + nl;
    if segment && util::skip_ws(b, args_at) == b.len() {
        out.push(failed(at, b.len(), "", name, cut_off_call(b.len())));
        return b.len();
    }
    if b.get(args_at) != Some(&b'{') {
        return args_at;
    }
    let (c, end) = arguments_after_name(MODE, text, at, args_at, name.to_string(), strictness);
    out.push(c);
    end
}

/// Where the v3.1 block whose tag ended at `from` is closed: its closer,
/// when no other opener comes first.
fn own_block_end(tags: &mut MultiFind<'_>, from: usize) -> Option<usize> {
    let c = tags.find(1, from)?;
    tags.find(0, from).is_none_or(|o| o > c).then_some(c)
}

/// A block opened by `<function=` and closed by `</function>` that is not a
/// call in this format: `malformed` (probe 44b: it was skipped as another
/// family's syntax, and the call beside it executed alone). Pushed to
/// `out`; returns where scanning goes on.
fn broken(
    text: &str,
    (at, end): (usize, usize),
    name: &str,
    failure: (usize, String),
    out: &mut crate::cap::Found,
) -> usize {
    let n = (!name.is_empty()).then(|| name.to_string());
    out.push(broken_call(MODE, text, (at, end), n, failure).0);
    end
}

fn failed(start: usize, end: usize, raw: &str, name: &str, f: ParseFailure) -> Candidate {
    util::candidate(
        MODE,
        Span::new(start, end),
        raw,
        Some(name.to_string()),
        Err(f),
        Vec::new(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::format::functionary::FUNCTIONARY;
    use toolgate_core::FailureKind;

    #[test]
    fn a_v31_call_without_its_opener_beside_a_call_is_malformed() {
        // s47-stray: `f` ran and `g` was dropped as text.
        use crate::irregular::testkit::assert_stray;
        let f = r#"<function=f>{"a": 1}</function>"#;
        for (out, stray) in [
            (format!(r#"{f}g>{{"b": 2}}</function>"#), 1),
            (format!("{f}\ng>{{\"b\": 2}}\nDone."), 1),
            (format!(r#"Sure. g>{{"b": 2}}</function>{f}"#), 0),
            ("f\n{\"a\": 1}\ng>{}".to_string(), 1),
        ] {
            assert_stray(&strict(&FUNCTIONARY, &out), stray, ("f", Some("g")), &out);
        }
        // Prose, a name alone, and prose before a stray closer stay text.
        for out in [
            format!("Use </function> to close.\n{f}"),
            format!("{f}\ng\nDone."),
            format!("{f} a -> b {{x}}"),
            format!("{f} if a > {{b}} then.</function>"),
        ] {
            let c = strict(&FUNCTIONARY, &out);
            assert_eq!(c.len(), 1, "{out}: {c:#?}");
            assert!(c[0].call().is_some(), "{out}");
        }
    }

    #[test]
    fn v31_one_and_parallel() {
        let out = r#"<function=special_function>{"arg1": 1}</function>"#;
        assert_eq!(
            calls(&FUNCTIONARY, out),
            vec![call("special_function", r#"{"arg1": 1}"#)]
        );
        assert_eq!(strict(&FUNCTIONARY, out)[0].span, Span::new(0, out.len()));
        let out = r#"<function=a>{}</function>
<function=b>{"x": 1}</function>"#;
        assert_eq!(
            calls(&FUNCTIONARY, out),
            vec![call("a", "{}"), call("b", r#"{"x": 1}"#)]
        );
    }

    #[test]
    fn v32_segments() {
        let out = "special_function\n{\"arg1\": 1}";
        assert_eq!(
            calls(&FUNCTIONARY, out),
            vec![call("special_function", r#"{"arg1": 1}"#)]
        );
        let out = "all\nLet me look.>>>get_time\n{\"city\": \"Paris\"}>>>get_date\n{}";
        assert_eq!(
            calls(&FUNCTIONARY, out),
            vec![
                call("get_time", r#"{"city": "Paris"}"#),
                call("get_date", "{}")
            ]
        );
    }

    #[test]
    fn text_segments_and_other_xml_are_not_calls() {
        assert!(strict(&FUNCTIONARY, "all\nHello, world!\nWhat's up?").is_empty());
        assert!(strict(&FUNCTIONARY, "Hello, world!\nWhat's up?").is_empty());
        assert!(strict(&FUNCTIONARY, "python\nprint(1)").is_empty());
        assert!(
            strict(
                &FUNCTIONARY,
                "<function=f><parameter=a>1</parameter></function>"
            )
            .is_empty()
        );
    }

    /// Probe 44b: an output that ends in or right after a `>>>` segment's
    /// header was cut off inside that call; it yielded nothing, so the call
    /// before it executed alone.
    #[test]
    fn a_v32_segment_header_at_the_end_is_truncated() {
        let first = "get_weather\n{\"city\": \"Paris\"}";
        for tail in [
            ">>>delete_all\n",
            ">>>delete_all",
            ">>>",
            ">>>delete_all\n  ",
        ] {
            let out = format!("{first}{tail}");
            let c = strict(&FUNCTIONARY, &out);
            assert_eq!(c.len(), 2, "{out:?}");
            assert_eq!(
                c[1].failure().map(|f| f.kind),
                Some(FailureKind::Truncated),
                "{out:?}"
            );
        }
        assert_eq!(
            strict(&FUNCTIONARY, &format!("{first}>>>delete_all"))[1]
                .name
                .as_deref(),
            Some("delete_all")
        );
        assert_eq!(strict(&FUNCTIONARY, &format!("{first}>>>"))[1].name, None);
        // A text segment (`all`) ends the output as text; the first segment
        // has no token, so a one-word answer is no call.
        assert_eq!(
            strict(&FUNCTIONARY, &format!("{first}>>>all\nDone.")).len(),
            1
        );
        assert!(strict(&FUNCTIONARY, "Sure").is_empty());
        assert!(strict(&FUNCTIONARY, "Sure\n").is_empty());
    }

    /// Probe 44b: a `<function=…>` block closed by its own `</function>`
    /// whose name or body this format cannot read is `malformed`; it was
    /// skipped, and the call beside it executed alone. Another family's
    /// markup in the body (Qwen3-Coder's `<parameter=`) is still skipped.
    #[test]
    fn a_broken_v31_block_is_malformed() {
        for (block, name) in [
            ("<function=delete_all></function>", Some("delete_all")),
            ("<function=delete_all>path=/</function>", Some("delete_all")),
            (
                "<function=delete all>{\"path\": \"/\"}</function>",
                Some("delete all"),
            ),
        ] {
            let out = format!("<function=f>{{\"a\": 1}}</function>{block}");
            let c = strict(&FUNCTIONARY, &out);
            assert_eq!(c.len(), 2, "{out}");
            assert_eq!(
                c[1].failure().map(|f| f.kind),
                Some(FailureKind::Malformed),
                "{out}"
            );
            assert_eq!(c[1].name.as_deref(), name, "{out}");
            assert_eq!(c[1].span.end, out.len(), "{out}");
        }
        // Prose naming the tag, with no closer of its own, is still text.
        assert!(strict(&FUNCTIONARY, "Write <function=NAME> then the JSON.").is_empty());
        assert!(
            strict(
                &FUNCTIONARY,
                "a <function=x y> tag <function=f><parameter=a>1</parameter></function>"
            )
            .is_empty()
        );
    }

    #[test]
    fn truncated_and_malformed() {
        let cut = strict(&FUNCTIONARY, r#"<function=f>{"a": "#);
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        assert_eq!(cut[0].name.as_deref(), Some("f"));
        let cut = strict(&FUNCTIONARY, "<function=f>");
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        let cut = strict(&FUNCTIONARY, "<function=get_wea");
        assert_eq!(cut[0].name.as_deref(), Some("get_wea"));
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        let bad = strict(&FUNCTIONARY, "<function=f>{\"a\": 1,}</function>");
        assert_eq!(bad[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(
            lenient(&FUNCTIONARY, "<function=f>{\"a\": 1,}</function>")[0]
                .call()
                .unwrap()
                .name,
            "f"
        );
    }
}
