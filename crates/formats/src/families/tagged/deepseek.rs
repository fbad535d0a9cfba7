//! `deepseek`: DeepSeek V3 / R1 / V3.1 special-token calls (the tokens use
//! the fullwidth bar `｜` U+FF5C and `▁` U+2581).
//!
//! # Wire format
//!
//! V3 and R1: the call type `function`, the name on its own line, then the
//! arguments in a ```` ```json ```` fence:
//!
//! ```text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//! ```json
//! {"city": "Tokyo"}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ```
//!
//! V3.1: the name before `<｜tool▁sep｜>`, the JSON right after it:
//!
//! ```text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Tokyo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ```
//!
//! Both give `{"name": "get_weather", "arguments": {"city": "Tokyo"}}`;
//! several `<｜tool▁call▁begin｜>` blocks are parallel calls.
//!
//! - The arguments are one JSON object (a double-encoded string is
//!   `escaping`, repaired by the lenient variant). In V3 the closing fence
//!   may stand right after the JSON (R1 writes `{…}```<｜tool▁call▁end｜>`);
//!   a V3 call without the fence is read as plain JSON.
//! - A missing `<｜tool▁call▁end｜>` ends the call at the next call, at
//!   `<｜tool▁calls▁end｜>` or at the end of the output (then an incomplete
//!   payload is `truncated`).

use super::common::{Next, failed, json_arguments, malformed, truncated};
use super::name_json::{Ends, section_gap, stray_call};
use crate::input::{Input, Strictness};
use crate::util::{self, skip_ws};
use toolgate_core::{Candidate, Span};

/// The fence around V3's arguments (not a token of the format's own).
const FENCE: &str = "```";

/// DeepSeek's spelling: its mode name and special tokens
/// ([`crate::format::deepseek`]).
pub(crate) struct DeepSeek {
    /// The mode name given to candidates.
    pub mode: &'static str,
    /// The section opener (`<｜tool▁calls▁begin｜>`).
    pub calls: &'static str,
    /// The call opener (`<｜tool▁call▁begin｜>`).
    pub call: &'static str,
    /// Between the header and the arguments (`<｜tool▁sep｜>`).
    pub sep: &'static str,
    /// The call closer.
    pub call_end: &'static str,
    /// The section closer.
    pub calls_end: &'static str,
}

/// Every call of `text` in the spelling `d`.
pub(crate) fn scan(
    text: &str,
    d: &DeepSeek,
    input: &Input<'_>,
    lenient: Strictness,
) -> Vec<Candidate> {
    let b = text.as_bytes();
    let mut ends = Ends::new(text, d.call, d.call_end, Some(d.calls_end));
    let mut sep = Next::new(text, d.sep);
    let mut out = crate::cap::Found::new();
    let mut pos = 0;
    loop {
        let next = ends.call.from(pos);
        // A call without its opener (`name_json::stray_call`, kimi's rule),
        // after a call or between the section's opener and the first call.
        let gap = if pos > 0 {
            Some(pos)
        } else {
            section_gap(text, Some(d.calls), next)
        };
        if let Some(from) = gap
            && let Some((stray, resume)) = stray_call(
                text,
                ((from, next), pos > 0),
                (&mut sep, &mut ends),
                (d.mode, d.call, d.sep, d.call_end),
                |h| (!h.is_empty() && h != "function").then(|| h.to_string()),
            )
        {
            out.push(stray);
            pos = resume.max(pos + 1);
            continue;
        }
        let Some(at) = next else { break };
        let head = at + d.call.len();
        // Where this call's text stops: its end marker, or the next marker
        // (the name-then-JSON engine's walk, [`Ends::stop`]).
        let (stop, end) = ends.stop(text, head);
        let at_end = stop == text.len();
        let span = Span::new(at, end);
        let mut fail = |name: Option<&str>, e| {
            out.push(failed(d.mode, text, at, end, name.map(str::to_string), e).0);
            end.max(at + 1)
        };
        let Some(s) = sep.from(head).filter(|s| *s < stop) else {
            let e = if at_end {
                truncated(text.len(), "a call header")
            } else {
                malformed(head, format!("the call has no `{}`", d.sep))
            };
            pos = fail(None, e);
            continue;
        };
        let header = text[head..s].trim();
        let body = s + d.sep.len();
        let first = skip_ws(b, body).min(stop);
        let v3 = header == "function" && b.get(first) != Some(&b'{') && first < stop;
        let (name, payload) = if v3 {
            // `NAME\n```json\n{…}\n```` (the fence is optional).
            let line_end = memchr::memchr(b'\n', &b[body..stop]).map(|n| body + n);
            match line_end {
                None => {
                    let name = text[body..stop].trim();
                    let e = if at_end {
                        truncated(text.len(), "a call")
                    } else {
                        malformed(body, "no arguments after the function name")
                    };
                    pos = fail(Some(name).filter(|n| !n.is_empty()), e);
                    continue;
                }
                Some(nl) => match fenced(text, nl + 1, stop) {
                    Ok(payload) => (text[body..nl].trim(), payload),
                    // Closed by the call's end marker with its fence still
                    // open: not the shape the format writes (the peers'
                    // readers require the closing fence), and nothing says
                    // the arguments ended where the marker stands. Cut off
                    // by the end of the output, the call is `truncation`
                    // as any other (the payload is read to the end).
                    Err(content) if !at_end => {
                        let name = text[body..nl].trim();
                        pos = fail(
                            Some(name).filter(|n| !n.is_empty()),
                            malformed(content, "the fence around the arguments is not closed"),
                        );
                        continue;
                    }
                    Err(content) => (text[body..nl].trim(), content..stop),
                },
            }
        } else {
            (header, body..stop)
        };
        if name.is_empty() {
            pos = fail(None, malformed(head, "the call names no function"));
            continue;
        }
        let ptext = &text[payload.clone()];
        let (arguments, repairs) =
            json_arguments(ptext, payload.start, (input, text), lenient, at_end);
        out.push(util::candidate(
            d.mode,
            span,
            ptext,
            Some(name.to_string()),
            arguments,
            repairs,
        ));
        pos = end.max(at + 1);
    }
    out.into_vec()
}

/// The JSON inside an optional ```` ```json ```` fence in `text[from..stop]`;
/// `Err(content)` (where the fence's content starts) when the fence is
/// opened and never closed before `stop`.
fn fenced(text: &str, from: usize, stop: usize) -> Result<std::ops::Range<usize>, usize> {
    let b = text.as_bytes();
    let open = skip_ws(b, from).min(stop);
    if !text[open..stop].starts_with(FENCE) {
        return Ok(from..stop);
    }
    // Content starts after the opener's line (`json` info word).
    let content = match memchr::memchr(b'\n', &b[open..stop]) {
        Some(n) => open + n + 1,
        None => stop,
    };
    // Text after the closing fence stays in the payload, so that the
    // reader reports it (issue 22: `{"b": 2}` there was dropped).
    match text[content..stop].rfind(FENCE) {
        Some(c) if text[content + c + FENCE.len()..stop].trim().is_empty() => {
            Ok(content..content + c)
        }
        Some(_) => Ok(content..stop),
        None => Err(content),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::testutil::cut_at_end;
    use super::*;
    use crate::Extractor;
    use serde_json::json;
    use toolgate_core::{FailureKind, Repair, Source};

    fn run(out: &str, s: Strictness) -> Vec<Candidate> {
        crate::format::deepseek::DEEPSEEK.extract(&Input::new(out), s)
    }

    #[test]
    fn text_after_the_fence_inside_the_call_is_malformed() {
        // Issue 22: the second object was dropped and the call executed.
        let out = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```\n{\"b\": 2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let c = run(out, Strictness::Strict);
        assert_eq!(c[0].name.as_deref(), Some("f"));
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn a_call_without_its_opener_after_a_call_is_malformed_not_dropped() {
        // A header and separator, or arguments alone (no header, no
        // separator) closed by the end marker, after a call; s46: the same
        // before the first call of the section, and arguments alone with no
        // end marker before the section's closer (or the output's end).
        const S: &str = "<｜tool▁calls▁begin｜>";
        const F: &str = "<｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": 1}<｜tool▁call▁end｜>";
        const F3: &str = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```<｜tool▁call▁end｜>";
        const E: &str = "<｜tool▁calls▁end｜>";
        for (out, stray, name) in [
            (
                format!("{S}{F}g<｜tool▁sep｜>{{}}<｜tool▁call▁end｜>{E}"),
                1,
                Some("g"),
            ),
            (
                format!(
                    "{S}{F3}\nfunction<｜tool▁sep｜>g\n```json\n{{}}\n```<｜tool▁call▁end｜>{E}"
                ),
                1,
                // V3's header is `function`; the name is in the arguments' text.
                None,
            ),
            (format!("{S}{F}{{\"b\": 2}}<｜tool▁call▁end｜>{E}"), 1, None),
            (
                format!("{S}{F3}\n```json\n{{\"b\": 2}}\n```<｜tool▁call▁end｜>{E}"),
                1,
                None,
            ),
            (
                format!("{S}g<｜tool▁sep｜>{{}}<｜tool▁call▁end｜>{F}{E}"),
                0,
                Some("g"),
            ),
            (format!("{S}{{\"b\": 2}}<｜tool▁call▁end｜>{F}{E}"), 0, None),
            (format!("{S}{F}{{\"b\": 2}}{E}"), 1, None),
            (format!("{S}{F}\n{{\"b\": 2}}"), 1, None),
        ] {
            let found = run(&out, Strictness::Strict);
            crate::irregular::testkit::assert_stray(&found, stray, ("f", name), &out);
        }
        // Before the section, a bare object or a separator is content.
        let out = format!("Prose {{}}<｜tool▁call▁end｜> and g<｜tool▁sep｜> {S}{F}{E}");
        assert_eq!(run(&out, Strictness::Strict).len(), 1);
        // After the section's closer, a bare object is not this section's.
        let out = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜> {\"b\": 2}<｜tool▁call▁end｜>";
        assert_eq!(run(out, Strictness::Strict).len(), 1);
        // After the section's closer, the separator is not this section's.
        let out = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜> g<｜tool▁sep｜>";
        assert_eq!(run(out, Strictness::Strict).len(), 1);
    }

    #[test]
    fn v3_fenced_and_parallel() {
        let out = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search_hotels\n```json\n{\"location\": \"Tokyo\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let c = run(out, Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].call().unwrap().name, "get_weather");
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "Tokyo"})
        );
        assert_eq!(c[1].call().unwrap().name, "search_hotels");
    }

    #[test]
    fn r1_fence_on_the_same_line_and_v31() {
        let out = "</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>special_function\n```json\n{\"arg1\": 1}```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let c = run(out, Strictness::Strict);
        assert_eq!(c[0].call().unwrap().arguments["arg1"], 1);
        assert_eq!(c[0].source, Source::Output);
        let out = "text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{\"x\":1}<｜tool▁call▁end｜><｜tool▁call▁begin｜>bar<｜tool▁sep｜>{\"y\":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜> suffix";
        let c = run(out, Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].call().unwrap().name, "bar");
        assert_eq!(c[1].raw, "{\"y\":2}");
    }

    #[test]
    fn truncation() {
        for out in [
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"To",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\"",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather",
        ] {
            let c = run(out, Strictness::Strict);
            cut_at_end(&c, out);
            assert_eq!(c[0].name.as_deref(), Some("get_weather"));
        }
        let c = run(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_wea",
            Strictness::Strict,
        );
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    /// Probe 44: a V3 call whose ```` ```json ```` fence is never closed
    /// before the call's end marker executed with the JSON inside; it is
    /// `malformed` (the peers' readers require the closing fence). (Cut
    /// off by the end of the output, it stays `truncation`: `truncation`.)
    #[test]
    fn an_unclosed_fence_inside_a_closed_call_is_malformed() {
        let out = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"}\n<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        for strictness in [Strictness::Strict, Strictness::Lenient] {
            let c = run(out, strictness);
            let f = c[0].failure().unwrap();
            assert_eq!(
                (f.kind, f.message.as_str(), c[0].name.as_deref()),
                (
                    FailureKind::Malformed,
                    "the fence around the arguments is not closed",
                    Some("get_weather")
                )
            );
        }
    }

    #[test]
    fn malformed_payload_and_lenient() {
        let out = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"\n```<｜tool▁call▁end｜>";
        let c = run(out, Strictness::Lenient);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        let out = "<｜tool▁call▁begin｜>f<｜tool▁sep｜>{'a': 1}<｜tool▁call▁end｜>";
        assert_eq!(
            run(out, Strictness::Strict)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        let c = run(out, Strictness::Lenient);
        assert_eq!(c[0].repairs, vec![Repair::SingleQuotes]);
        let out = "<｜tool▁call▁begin｜><｜tool▁sep｜>{}<｜tool▁call▁end｜>";
        assert_eq!(run(out, Strictness::Strict)[0].name, None);
    }

    #[test]
    fn reasoning_only_and_no_call() {
        let out = "<think><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜></think>ok";
        assert_eq!(
            run(out, Strictness::Strict)[0].source,
            Source::OutputReasoning
        );
        assert!(run("How can I help you today?", Strictness::Strict).is_empty());
    }
}
