//! `harmony`: gpt-oss messages addressed to a function.
//!
//! # Wire format
//!
//! ```text
//! <|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Antwerp"}<|call|>
//! ```
//!
//! gives `{"name": "get_weather", "arguments": {"city": "Antwerp"}}`. A
//! message is a header (role, `to=` recipient, `<|channel|>`, optional
//! `<|constrain|>`), `<|message|>`, and a body up to `<|end|>`, `<|call|>`,
//! `<|return|>` or the next `<|start|>` / `<|channel|>`.
//!
//! - The recipient `to=functions.f` may stand in the role header
//!   (`<|start|>assistant to=functions.f<|channel|>commentary json<|message|>…`)
//!   or after the channel, on any channel. Other recipients
//!   (`to=python`, `to=container.exec`, `to=assistant`) are not function
//!   calls, and messages without a recipient are text. Two recipients in
//!   one header (in the role header and after the channel, or twice after
//!   it), at least one a function, are `malformed` (ambiguous, like two name
//!   keys of a call object, SPEC §9): the first one is never taken.
//! - The body is one JSON object. Servers strip the `<|call|>` stop token,
//!   so a complete body without it is a call like any other (SPEC §9); an
//!   incomplete body, or a function-addressed header, at the end of the
//!   output is `truncated`.
//! - A call's span starts at the first header token (`<|start|>`,
//!   `<|channel|>`, `<|constrain|>`) of its message, or at the recipient's
//!   `to=` when that comes first: prose a model writes before the markup
//!   is text, not part of the call (and can be streamed, see
//!   [`crate::openers`]).
//! - The `analysis` channel is reasoning ([`crate::reasoning`]): a call
//!   found inside reasoning text is reported with a reasoning source. A
//!   message addressed to a function is a call, not reasoning, even on the
//!   analysis channel (gpt-oss writes calls there).

use super::common::{Next, json_arguments, malformed, truncated};
use crate::input::{Input, Strictness};
use crate::util;
use toolgate_core::{Candidate, Span};

/// Harmony's spelling: its mode name and tokens
/// ([`crate::format::harmony`]).
pub(crate) struct Harmony {
    /// The mode name given to candidates.
    pub mode: &'static str,
    /// Ends a header; the body follows (`<|message|>`).
    pub message: &'static str,
    /// What ends a message body, and whether the body's span takes it
    /// ([`crate::reasoning::harmony::BODY_ENDS`]).
    pub ends: [(&'static str, bool); 5],
    /// Tokens that begin a message header. A candidate's span starts at the
    /// first of them in its header, or at the recipient's `to=` when that
    /// comes first (the template wrote `<|start|>assistant`): prose before
    /// the markup is not part of the call. These and the recipient prefix
    /// are the mode's streaming openers ([`crate::openers`]).
    pub header_tokens: [&'static str; 3],
    /// What a recipient starts with (`to=`).
    pub recipient: &'static str,
    /// The namespace of function recipients after it (`functions.`).
    pub functions: &'static str,
}

impl Harmony {
    /// The function a recipient as written (`functions.f`) names, if it
    /// names one.
    fn function<'w>(&self, recipient: &'w str) -> Option<&'w str> {
        recipient
            .strip_prefix(self.functions)
            .filter(|n| !n.is_empty())
    }
}

/// What a message header addresses, when it addresses a function.
enum Addressed<'h> {
    /// One function: the offset of its `to=` in the header and its name
    /// (the word after `to=functions.`).
    Function(usize, &'h str),
    /// Two recipients, at least one of them a function: in the role header
    /// and after the channel, or twice after the channel. Ambiguous, as two
    /// name keys of a call object are (SPEC §9): reading the first ran a
    /// tool the second one contradicted. The offset of the first `to=` that
    /// names a function and the two recipients as written (`python`,
    /// `functions.run`).
    Twice(usize, &'h str, &'h str),
}

impl Addressed<'_> {
    /// Where the first recipient's `to=` stands in the header.
    fn to_at(&self) -> usize {
        match *self {
            Self::Function(at, _) | Self::Twice(at, ..) => at,
        }
    }

    /// The tool the header names: none when it names two recipients.
    fn name(&self) -> Option<String> {
        match *self {
            Self::Function(_, name) => Some(name.to_string()),
            Self::Twice(..) => None,
        }
    }
}

/// The function a header addresses (see [`Addressed`]). A header is harmony
/// markup (it holds a `<|…|>` token) or starts with the recipient (the
/// template wrote `<|start|>assistant`); prose that happens to contain
/// `to=functions.x` is not a header. Every recipient of the header is read
/// (a header is read once: headers of one output are disjoint), so that a
/// second one is never left unread.
fn recipient<'h>(header: &'h str, h: &Harmony) -> Option<Addressed<'h>> {
    if !header.contains("<|") && !header.trim_start().starts_with(h.recipient) {
        return None;
    }
    let b = header.as_bytes();
    let mut first: Option<(usize, &str)> = None;
    for at in util::find_all(header, h.recipient) {
        let boundary = at == 0 || matches!(b[at - 1], b' ' | b'\t' | b'\n' | b'\r' | b'>');
        if !boundary {
            continue;
        }
        let rest = &header[at + h.recipient.len()..];
        let word_end = rest
            .find(|c: char| c.is_whitespace() || c == '<')
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        match first {
            None => first = Some((at, word)),
            Some((first_at, first_word)) => {
                let function = |w: &str| h.function(w).is_some();
                // The candidate starts at the first recipient that names a
                // function: where a stream starts holding text back (the
                // `to=functions.` opener); a `to=python` before it is text
                // a stream has already forwarded.
                let at = if function(first_word) { first_at } else { at };
                return (function(first_word) || function(word))
                    .then_some(Addressed::Twice(at, first_word, word));
            }
        }
    }
    let (at, word) = first?;
    h.function(word).map(|n| Addressed::Function(at, n))
}
/// Where the message of `header` (addressed from its `to=` at `to_at`)
/// begins in it: the first header token, or the `to=` when it comes first.
/// Linear in the header (headers of one output are disjoint).
fn message_start(header: &str, to_at: usize, h: &Harmony) -> usize {
    h.header_tokens
        .iter()
        .filter_map(|t| header.find(t))
        .fold(to_at, usize::min)
}

/// Every call of `text` in the spelling `h`.
pub(crate) fn scan(
    text: &str,
    h: &Harmony,
    input: &Input<'_>,
    lenient: Strictness,
) -> Vec<Candidate> {
    let mut message = Next::new(text, h.message);
    let mut ends: Vec<Next<'_>> = h.ends.iter().map(|(e, _)| Next::new(text, e)).collect();
    let mut out = crate::cap::Found::new();
    let mut seg = 0;
    let mut exhausted = false;
    loop {
        let Some(m) = message.from(seg) else {
            // A header addressed to a function with no message yet: cut off.
            let header = &text[seg..];
            if let Some(to) = recipient(header, h) {
                let start = seg + message_start(header, to.to_at(), h);
                out.push(util::candidate(
                    h.mode,
                    Span::new(start, text.len()),
                    &text[start..],
                    to.name(),
                    Err(truncated(text.len(), "a message header")),
                    Vec::new(),
                ));
            }
            break;
        };
        let header = &text[seg..m];
        let bstart = m + h.message.len();
        let call = recipient(header, h);
        // The body ends at the first terminator; in a message addressed to a
        // function (a JSON body), the first one outside the body's strings
        // (`util::closer_outside_strings`, one walk over every terminator).
        let mut first_end = |p: usize| ends.iter_mut().filter_map(|e| e.from(p)).min();
        let found = if call.is_some() {
            util::closer_outside_strings(text, bstart, usize::MAX, &mut exhausted, first_end)
        } else {
            first_end(bstart)
        };
        let stop = match found {
            Some(p) => {
                let consumed = match h.ends.iter().find(|(e, _)| text[p..].starts_with(e)) {
                    Some((e, true)) => p + e.len(),
                    _ => p,
                };
                (p, consumed, consumed)
            }
            None => (text.len(), text.len(), text.len()),
        };
        let (bend, span_end, next_seg) = stop;
        if let Some(to) = call {
            let start = seg + message_start(header, to.to_at(), h);
            let body = &text[bstart..bend];
            let (arguments, repairs) = match to {
                Addressed::Function(..) => {
                    let at_end = bend == text.len();
                    json_arguments(body, bstart, (input, text), lenient, at_end)
                }
                Addressed::Twice(to_at, first, second) => {
                    let to = h.recipient;
                    let message = format!(
                        "ambiguous message header: two recipients (`{to}{first}`, `{to}{second}`), and which one is meant is never guessed"
                    );
                    (Err(malformed(seg + to_at, message)), Vec::new())
                }
            };
            out.push(util::candidate(
                h.mode,
                Span::new(start, span_end),
                body,
                to.name(),
                arguments,
                repairs,
            ));
        }
        if next_seg >= text.len() {
            break;
        }
        seg = next_seg.max(bstart);
    }
    out.into_vec()
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
        crate::format::harmony::HARMONY.extract(&Input::new(out), s)
    }

    #[test]
    fn two_recipients_are_malformed_and_name_no_tool() {
        // The first recipient won, so `run` executed.
        for out in [
            "<|start|>assistant to=functions.run<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"cmd\": \"x\"}<|call|>",
            "<|channel|>commentary to=functions.run to=functions.get_weather<|message|>{\"cmd\": \"x\"}<|call|>",
            // A second recipient that is not a function is no less a second.
            "<|start|>assistant to=python<|channel|>commentary to=functions.run<|message|>{\"cmd\": \"x\"}<|call|>",
        ] {
            let c = run(out, Strictness::Lenient);
            assert_eq!(c.len(), 1, "{out}");
            assert_eq!(c[0].name, None, "{out}");
            let f = c[0].failure().unwrap();
            assert_eq!(f.kind, FailureKind::Malformed, "{out}");
            assert!(f.message.contains("two recipients"), "{}", f.message);
            // At the first recipient that names a function: where a
            // stream starts holding back (stream == batch).
            assert_eq!(f.offset, out.find("to=functions.").unwrap(), "{out}");
        }
        // Two recipients neither of which is a function: text.
        let out = "<|start|>assistant to=python<|channel|>commentary to=browser.search<|message|>{}<|end|>";
        assert!(run(out, Strictness::Strict).is_empty());
    }

    #[test]
    fn recipient_after_the_channel_and_in_the_role_header() {
        let out = "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Antwerp\"}<|call|>";
        let c = run(out, Strictness::Strict);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].call().unwrap().name, "get_weather");
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "Antwerp"})
        );
        assert_eq!(c[0].span.end, out.len());
        assert_eq!(c[0].source, Source::Output);
        for out in [
            " to=functions.f<|channel|>analysis<|message|>{\"arg1\": 1}",
            "<|channel|>analysis to=functions.f<|message|>{\"arg1\": 1}",
            "<|channel|>analysis<|message|>hm<|end|><|start|>assistant to=functions.f<|channel|>analysis<|message|>{\"arg1\": 1}",
        ] {
            let c = run(out, Strictness::Strict);
            assert_eq!(c.len(), 1, "{out}");
            assert_eq!(c[0].call().unwrap().arguments["arg1"], 1, "{out}");
            assert_eq!(c[0].source, Source::Output, "{out}");
        }
    }

    #[test]
    fn prose_before_the_header_is_not_in_the_span() {
        let call =
            "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|call|>";
        for (prose, at) in [
            ("Let me check that for you. ", 27),
            ("  \n", 3),
            ("Sure.\n", 6),
        ] {
            let out = format!("{prose}{call}");
            let c = run(&out, Strictness::Strict);
            assert_eq!(c.len(), 1, "{out}");
            assert_eq!(c[0].span, Span::new(at, out.len()), "{out}");
        }
        // The recipient in the role header, before any token: the span
        // starts at its `to=`.
        let out = "Okay. to=functions.f<|channel|>commentary<|message|>{}<|call|>";
        assert_eq!(run(out, Strictness::Strict)[0].span.start, 6);
        // A header cut off by the end of the output, behind prose.
        let out = "Okay. <|start|>assistant to=functions.f<|channel|>comm";
        let c = run(out, Strictness::Strict);
        assert_eq!(c[0].span, Span::new(6, out.len()));
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    #[test]
    fn parallel_messages() {
        let out = "<|start|>assistant<|channel|>commentary to=functions.a<|message|>{}<|call|><|start|>assistant<|channel|>commentary to=functions.b json<|message|>{\"x\": 2}<|call|>";
        let c = run(out, Strictness::Strict);
        let names: Vec<_> = c.iter().map(|c| c.call().unwrap().name).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn other_recipients_and_plain_messages_are_not_calls() {
        for out in [
            "<|channel|>final<|message|>Hello!",
            "<|channel|>analysis<|message|>thinking<|end|><|start|>assistant<|channel|>final <|constrain|>json<|message|>{\"amount\": 1}",
            "<|start|>assistant to=container.exec<|channel|>commentary<|message|>ls",
            "<|channel|>commentary to=python <|constrain|>code<|message|>print(1)",
            "<|channel|>commentary to=assistant<|channel|>analysis<|message|>x<|end|>",
            "Set the alias with to=functions.f in the config.",
        ] {
            assert!(run(out, Strictness::Strict).is_empty(), "{out}");
        }
    }

    #[test]
    fn truncation() {
        for out in [
            "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"city\": \"Ant",
            "<|channel|>commentary to=functions.f <|constrain|>json",
        ] {
            let c = run(out, Strictness::Strict);
            cut_at_end(&c, out);
            assert_eq!(c[0].name.as_deref(), Some("f"));
        }
    }

    #[test]
    fn complete_body_without_call_token_is_a_call_unless_cut_by_length() {
        let out = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}";
        assert_eq!(
            run(out, Strictness::Strict)[0].call().unwrap().arguments["a"],
            1
        );
        let mut input = Input::new(out);
        input.hit_length_limit = true;
        let c = crate::format::harmony::HARMONY.extract(&input, Strictness::Strict);
        let f = c[0].failure().unwrap();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, out.len()));
        // A closed call is not affected by the length limit.
        let closed = format!("{out}<|call|>");
        let mut input = Input::new(&closed);
        input.hit_length_limit = true;
        assert!(
            crate::format::harmony::HARMONY.extract(&input, Strictness::Strict)[0]
                .call()
                .is_some()
        );
    }

    #[test]
    fn malformed_payload_and_lenient() {
        let out = "<|channel|>commentary to=functions.f<|message|>{\"a\": 1,}<|call|>";
        let f = run(out, Strictness::Strict)[0].failure().unwrap().clone();
        assert_eq!(f.kind, FailureKind::Malformed);
        let c = run(out, Strictness::Lenient);
        assert_eq!(c[0].repairs, vec![Repair::TrailingCommas]);
        let out = "<|channel|>commentary to=functions.f<|message|>{\"a\": 1} extra<|call|>";
        assert_eq!(
            run(out, Strictness::Lenient)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
    }

    #[test]
    fn reasoning_field_candidates_are_reasoning() {
        let mut input = Input::new("<|channel|>final<|message|>Done.");
        input.reasoning_field = Some("<|channel|>commentary to=functions.f<|message|>{}<|call|>");
        let c = crate::format::harmony::HARMONY.extract(&input, Strictness::Strict);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source, Source::ReasoningField);
    }
}
