//! Reasoning spans: text that is never searched for executable calls.
//!
//! - `<think>…</think>` (an unclosed `<think>` runs to the end of the output);
//! - text before a `</think>` that has no opening tag (the chat template opened
//!   the reasoning block), e.g. `I'm\nthinking\n</think>\n\n<tool_call>…`;
//! - the harmony `analysis` channel
//!   (`<|channel|>analysis<|message|>…` up to `<|end|>`, `<|call|>`,
//!   `<|return|>`, the next `<|start|>` or `<|channel|>`, or the end of the
//!   output: where the `harmony` mode ends a message body). A message whose header names a recipient
//!   (`to=functions.f`) is a tool call, not reasoning, even on the analysis
//!   channel (gpt-oss sometimes writes calls there).
//!
//! Spans include their markers (`<think>` … `</think>`); [`inner`] gives the
//! text between them.
//!
//! ```
//! use toolgate_formats::reasoning_spans as spans;
//! let out = "<think>maybe <tool_call>{}</tool_call></think>done";
//! let s = spans(out);
//! assert_eq!((s[0].start, s[0].end), (0, 46));
//! ```

use crate::find::{NextFinder, find_all, find_from};
use std::ops::Range;
use toolgate_core::Span;

/// Reasoning delimiters: `<think>` (Qwen3, DeepSeek-R1, GLM, Kimi, …),
/// `<seed:think>` (Seed-OSS), `[THINK]` (Magistral), Command R7B's
/// `<|START_THINKING|>`, Gemma 4's thought channel, Kimi K3's XTML
/// `think` channel (`<|open|>think<|sep|>` … `<|close|>think<|sep|>`, matched
/// without its `<|sep|>` so that each delimiter holds one `<`) and Solar
/// Open 2's `<|think:start|>` … `<|think:end|>` (its chat template writes the
/// opener, so the output usually holds the closer alone).
const THINK_PAIRS: [(&str, &str); 7] = [
    ("<think>", "</think>"),
    ("<seed:think>", "</seed:think>"),
    ("[THINK]", "[/THINK]"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|channel>thought", "<channel|>"),
    ("<|open|>think", "<|close|>think"),
    ("<|think:start|>", "<|think:end|>"),
];
/// Harmony's message framing: the special tokens of gpt-oss's messages,
/// spelled once here because both the analysis channel (reasoning, read
/// for every mode) and the `harmony` format ([`crate::format::harmony`],
/// its row and its engine) read them. The format's file names these and
/// spells only what is its own (`<|constrain|>`, the `to=functions.`
/// recipient); it cannot be where reasoning takes them from, because the
/// format's file names its engine, which reads reasoning spans.
pub(crate) mod harmony {
    /// Opens a message's role header.
    pub(crate) const START: &str = "<|start|>";
    /// Opens a message's channel (`<|channel|>analysis`).
    pub(crate) const CHANNEL: &str = "<|channel|>";
    /// Ends the header; the body follows.
    pub(crate) const MESSAGE: &str = "<|message|>";
    /// Ends a message.
    pub(crate) const END: &str = "<|end|>";
    /// Ends a message addressed to a tool (a stop token).
    pub(crate) const CALL: &str = "<|call|>";
    /// Ends the final message (a stop token).
    pub(crate) const RETURN: &str = "<|return|>";
    /// What ends a message body, as the `harmony` mode reads it: the first
    /// three are consumed with the body, the header tokens after them are
    /// not (`<|channel|>` is a special token, never message text: a model
    /// that opens a new channel without `<|end|>` has ended the message
    /// there).
    pub(crate) const BODY_ENDS: [(&str, bool); 5] = [
        (END, true),
        (CALL, true),
        (RETURN, true),
        (START, false),
        (CHANNEL, false),
    ];
}
use harmony::{CHANNEL, MESSAGE};
/// The reasoning channel's name after [`CHANNEL`].
const ANALYSIS: &str = "analysis";

/// Whether the analysis channel's header (`<|channel|>analysis`) starts
/// `text`.
fn is_analysis(text: &str) -> bool {
    text.strip_prefix(CHANNEL)
        .is_some_and(|rest| rest.starts_with(ANALYSIS))
}

/// The reasoning spans of `output`, sorted and non-overlapping. Linear.
///
/// One multi-pattern pass first tells which delimiters occur at all (most
/// outputs hold none); only their pairs are then searched.
pub fn spans(output: &str) -> Vec<Span> {
    // Every delimiter starts with `<` or `[`: plain prose (a third of
    // outputs or more) needs no multi-pattern pass at all.
    let Some(first) = memchr::memchr2(b'<', b'[', output.as_bytes()) else {
        return Vec::new();
    };
    let present = delimiters_present(output, first);
    let mut out: Vec<Span> = Vec::new();
    for (i, &(open, close)) in THINK_PAIRS.iter().enumerate() {
        if present & (0b11 << (2 * i)) != 0 {
            out.extend(think_spans(output, open, close));
        }
    }
    if present & (1 << (2 * THINK_PAIRS.len())) != 0 {
        out.extend(harmony_spans(output));
    }
    merge(out)
}

/// A bit per delimiter found in `output`: bits `2i` and `2i+1` are the opener
/// and closer of `THINK_PAIRS[i]`, the next bit the harmony analysis channel.
///
/// The delimiters never overlap one another: each holds its only `<` or `[`
/// at its first byte, and none is a prefix of another (see
/// `delimiters_never_overlap`). So a non-overlapping, leftmost search reports
/// every occurrence of every delimiter, and the packed (Teddy) searcher can
/// do it: it looks for the delimiters' first bytes together, where the
/// overlapping automaton stopped at every `<` and `[` of the text.
///
/// `first`: where the first `<` or `[` of `output` is (none before it).
fn delimiters_present(output: &str, first: usize) -> u32 {
    use std::sync::OnceLock;
    static SCANNER: OnceLock<Scanner> = OnceLock::new();
    static TOKENS: OnceLock<Vec<(u32, &'static str)>> = OnceLock::new();
    let all = (1u32 << (2 * THINK_PAIRS.len() + 1)) - 1;
    let mut present = 0u32;
    // The first few `<` / `[` are looked at one by one: most outputs hold
    // one or two (`<|python_tag|>`, `[TOOL_CALLS] [`), and the packed
    // searcher's set-up costs more than that on a short output. Every
    // occurrence starts at a `<` / `[` (see `delimiters_never_overlap`), so
    // the walk plus the search of the rest sees each one.
    // Each delimiter with its first four bytes (all are longer), compared
    // as one word before the whole token.
    let tokens = TOKENS.get_or_init(|| delimiters().into_iter().map(|t| (head(t), t)).collect());
    let b = output.as_bytes();
    let mut from = first;
    for _ in 0..WALK {
        let Some(k) = memchr::memchr2(b'<', b'[', &b[from..]) else {
            return present;
        };
        let at = &b[from + k..];
        if at.len() >= 4 {
            let h = head(at);
            // None is a prefix of another: at most one starts here.
            if let Some(p) = tokens
                .iter()
                .position(|&(th, t)| th == h && at.starts_with(t.as_bytes()))
            {
                present |= 1 << p;
                if present == all {
                    return present;
                }
            }
        }
        // Past an ASCII byte: a character boundary.
        from += k + 1;
    }
    let rest = &output[from..];
    let mut mark = |pattern: usize| {
        present |= 1 << pattern;
        present == all
    };
    match SCANNER.get_or_init(Scanner::new) {
        Scanner::Packed(searcher) => {
            for m in searcher.find_iter(rest) {
                if mark(m.pattern().as_usize()) {
                    break;
                }
            }
        }
        Scanner::Automaton(ac) => {
            for m in ac.find_overlapping_iter(rest) {
                if mark(m.pattern().as_usize()) {
                    break;
                }
            }
        }
        // Fifteen short tokens never exceed the automaton's limits; were it
        // ever missing, every pair is searched (slower, same spans).
        Scanner::None => return all,
    }
    present
}

/// The first four bytes of `s` (at least four long) as one word.
fn head(s: impl AsRef<[u8]>) -> u32 {
    let b = s.as_ref();
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// How many `<` / `[` [`delimiters_present`] checks one by one before the
/// multi-pattern search takes the rest of the output (XML-like outputs
/// hold many).
const WALK: usize = 16;

/// The delimiters, in bit order of [`delimiters_present`]. Each starts
/// with `<` or `[` ([`spans`] relies on it; a test checks).
fn delimiters() -> Vec<&'static str> {
    let mut tokens: Vec<&str> = THINK_PAIRS.iter().flat_map(|&(o, c)| [o, c]).collect();
    tokens.push(CHANNEL);
    tokens
}

/// How [`delimiters_present`] searches: the packed searcher where the CPU
/// has it, else one overlapping Aho-Corasick pass.
enum Scanner {
    Packed(aho_corasick::packed::Searcher),
    Automaton(aho_corasick::AhoCorasick),
    None,
}

impl Scanner {
    fn new() -> Scanner {
        use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind, packed};
        let tokens = delimiters();
        if let Some(s) = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(&tokens)
            .build()
        {
            return Scanner::Packed(s);
        }
        AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&tokens)
            .map_or(Scanner::None, Scanner::Automaton)
    }
}

fn think_spans(output: &str, open: &str, close: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let first_open = find_from(output, open, 0);
    let first_close = find_from(output, close, 0);
    let mut pos = 0;
    // A closer before any opener: the template opened reasoning.
    if let Some(c) = first_close
        && first_open.is_none_or(|o| c < o)
    {
        out.push(Span::new(0, c + close.len()));
        pos = c + close.len();
    }
    while let Some(o) = find_from(output, open, pos) {
        match find_from(output, close, o + open.len()) {
            Some(c) => {
                out.push(Span::new(o, c + close.len()));
                pos = c + close.len();
            }
            None => {
                out.push(Span::new(o, output.len()));
                break;
            }
        }
    }
    out
}

fn harmony_spans(output: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut resume = 0;
    // Memoizing finders keep this linear however the markers interleave.
    let mut messages = NextFinder::new(MESSAGE);
    let mut ends = harmony::BODY_ENDS.map(|(token, _)| NextFinder::new(token));
    for at in find_all(output, CHANNEL) {
        if at < resume || !is_analysis(&output[at..]) {
            continue;
        }
        let after = at + CHANNEL.len() + ANALYSIS.len();
        // The channel header runs to `<|message|>`; it must not name a recipient.
        let Some(msg) = messages.next(output, after) else {
            break;
        };
        if msg - after > MAX_HEADER {
            continue;
        }
        let header = &output[after..msg];
        if header.contains("to=") || header.contains("<|") || header_has_recipient(output, at) {
            continue;
        }
        let body = msg + MESSAGE.len();
        let end = ends
            .iter_mut()
            .zip(harmony::BODY_ENDS)
            .filter_map(|(finder, (token, consumed))| {
                let p = finder.next(output, body)?;
                Some(if consumed { p + token.len() } else { p })
            })
            .min()
            .unwrap_or(output.len());
        out.push(Span::new(at, end));
        resume = end;
    }
    out
}

/// The longest channel header (`<|channel|>analysis` … `<|message|>`) read.
const MAX_HEADER: usize = 256;

/// Whether the role header right before `<|channel|>` (back to the previous
/// `<|start|>`, `<|end|>` or `<|message|>`, at most 256 bytes) names a recipient.
fn header_has_recipient(output: &str, channel_at: usize) -> bool {
    let mut from = channel_at.saturating_sub(256);
    while !output.is_char_boundary(from) {
        from += 1;
    }
    let before = &output[from..channel_at];
    let start = [harmony::START, harmony::END, MESSAGE, harmony::CALL]
        .iter()
        .filter_map(|t| before.rfind(t).map(|p| p + t.len()))
        .max()
        .unwrap_or(0);
    before[start..].contains("to=")
}

fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort();
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// For each of `spans` (of `output`), whether it is a candidate's text
/// rather than reasoning ([`crate::extract`]): its opening lies strictly
/// inside a candidate of the output in `found` (a `<think>` in a call's
/// string argument), or it has no opening marker (the text before an
/// orphan `</think>`, [`spans`]) and its closing marker lies strictly
/// inside one (a `</think>` in a call's argument: the template did not
/// open reasoning there, the call holds the marker). A candidate that
/// starts inside an opened span and runs past its close leaves the span
/// as it is: that is the reasoning candidate's own overreach (a ReAct step
/// reasoned about, then answered without a call).
///
/// Candidates of the reasoning field and native calls are not in the output
/// and are not looked at. One sort of the markers, then two binary searches
/// per candidate and a difference array: O((s + c) log s), whatever the
/// candidates' overlap.
pub(crate) fn crossed(
    output: &str,
    spans: &[Span],
    found: &[toolgate_core::Candidate],
) -> Vec<bool> {
    use toolgate_core::Source;
    let mut out = vec![false; spans.len()];
    if spans.is_empty() {
        return out;
    }
    let opened = |s: &Span| {
        let at = output.get(s.start..).unwrap_or("");
        THINK_PAIRS.iter().any(|(open, _)| at.starts_with(open)) || is_analysis(at)
    };
    // The markers that count, each with its span.
    let mut marks: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (i, s) in spans.iter().enumerate() {
        marks.push((if opened(s) { s.start } else { s.end }, i));
    }
    marks.sort_unstable();
    let mut inside = vec![0i64; marks.len() + 1];
    for c in found {
        if !matches!(c.source, Source::Output | Source::OutputReasoning) {
            continue;
        }
        let first = marks.partition_point(|&(at, _)| at <= c.span.start);
        let last = marks.partition_point(|&(at, _)| at < c.span.end);
        if first < last {
            inside[first] += 1;
            inside[last] -= 1;
        }
    }
    let mut depth = 0;
    for (k, &(_, i)) in marks.iter().enumerate() {
        depth += inside[k];
        if depth > 0 {
            out[i] = true;
        }
    }
    out
}

/// The text of a reasoning span without its markers: `<think>`/`</think>`
/// or the harmony channel header and `<|end|>`.
pub fn inner(output: &str, span: Span) -> Range<usize> {
    let mut s = span.start.min(output.len());
    let mut e = span.end.min(output.len());
    let text = &output[s..e];
    if let Some((open, _)) = THINK_PAIRS.iter().find(|(open, _)| text.starts_with(open)) {
        s += open.len();
    } else if is_analysis(text)
        && let Some(m) = text.find(MESSAGE)
    {
        s += m + MESSAGE.len();
    }
    let text = &output[s..e];
    if let Some((_, close)) = THINK_PAIRS.iter().find(|(_, close)| text.ends_with(close)) {
        e -= close.len();
    } else if text.ends_with(harmony::END) {
        e -= harmony::END.len();
    }
    s..e.max(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_families_reasoning_delimiters_are_reasoning() {
        assert_eq!(
            texts("<seed:think>call <seed:tool_call>x</seed:tool_call></seed:think>done"),
            vec!["<seed:think>call <seed:tool_call>x</seed:tool_call></seed:think>"]
        );
        assert_eq!(
            texts("[THINK]hmm[/THINK][TOOL_CALLS]f[ARGS]{}"),
            vec!["[THINK]hmm[/THINK]"]
        );
        assert_eq!(
            texts("<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>"),
            vec!["<|START_THINKING|>plan<|END_THINKING|>"]
        );
        assert_eq!(
            texts("<|channel>thought\nhmm<channel|><|tool_call>call:b{}<tool_call|>"),
            vec!["<|channel>thought\nhmm<channel|>"]
        );
        let out = "<seed:think>a</seed:think>b";
        let span = spans(out)[0];
        assert_eq!(&out[inner(out, span)], "a");
    }

    fn texts(out: &str) -> Vec<&str> {
        spans(out)
            .into_iter()
            .map(|s| &out[s.start..s.end])
            .collect()
    }

    #[test]
    fn think_blocks_closed_and_unclosed() {
        assert_eq!(
            texts("a<think>x</think>b<think>y"),
            vec!["<think>x</think>", "<think>y"]
        );
        assert!(spans("no reasoning here").is_empty());
    }

    #[test]
    fn close_without_opener_means_the_template_opened_reasoning() {
        let out = "I'm\nthinking\n</think>\n\n<tool_call>{}</tool_call>";
        assert_eq!(texts(out), vec!["I'm\nthinking\n</think>"]);
        // A later `<think>` block is separate.
        assert_eq!(
            texts("r</think>a<think>b</think>c"),
            vec!["r</think>", "<think>b</think>"]
        );
    }

    #[test]
    fn harmony_analysis_channel() {
        let out = "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}<|call|>";
        assert_eq!(
            texts(out),
            vec!["<|channel|>analysis<|message|>Need weather.<|end|>"]
        );
        let out = "<|channel|>analysis<|message|>thinking to the end";
        assert_eq!(texts(out), vec![out]);
        // A new channel ends the analysis message even without `<|end|>`
        // (vllm-mlx tests/test_gpt_oss_tool_parsing.py): the call after it
        // is not reasoning.
        let out = "<|channel|>analysis<|message|>thinking...<|channel|>commentary to=functions.read_file<|message|>{\"path\": \"/tmp/x\"}<|call|>";
        assert_eq!(
            texts(out),
            vec!["<|channel|>analysis<|message|>thinking..."]
        );
        // Recipient in the role header: a tool call on the analysis channel.
        let out = "<|start|>assistant to=functions.f<|channel|>analysis<|message|>{}<|call|>";
        assert!(spans(out).is_empty());
    }

    #[test]
    fn delimiters_never_overlap() {
        // What makes the non-overlapping search of `delimiters_present`
        // find every occurrence: no delimiter's proper suffix starts another
        // (each holds its only `<`/`[` first) and none is a prefix of another.
        let tokens = delimiters();
        for a in &tokens {
            // `spans` skips text with neither `<` nor `[`.
            assert!(a.starts_with(['<', '[']), "{a}");
            // `delimiters_present` compares the first four bytes as a word.
            assert!(a.len() >= 4, "{a}");
            assert_eq!(a[1..].find(['<', '[']), None, "{a}");
            for b in &tokens {
                assert!(a == b || !b.starts_with(a), "{a} / {b}");
            }
        }
    }

    #[test]
    fn presence_equals_a_search_per_delimiter() {
        let tokens = delimiters();
        let pieces = [
            "<think>",
            "</think>",
            "<seed:think>",
            "[THINK]",
            "[/THINK]",
            "<|START_THINKING|>",
            "<|END_THINKING|>",
            "<|channel>thought",
            "<channel|>",
            "<|channel|>analysis",
            "</seed:think>",
            "<|open|>think",
            "<|close|>think",
            "<|think:start|>",
            "<|think:end|>",
            "<|think:",
            "<|open|>",
            "<",
            "[",
            "<|",
            "think>",
            "<|channel",
            "x < y ",
            "[1, 2] ",
            "<tool_call>",
            "é東",
            "<thin",
            "[/",
            "<|channel|>",
            "analysis",
        ];
        // Deterministic pseudo-random concatenations, short and long (Teddy
        // hands short haystacks to Rabin-Karp): a few, about `WALK`, and
        // many more `<` / `[` than the one-by-one walk looks at.
        let mut rng = toolgate_testkit::generate::Rng::new(0x9e37_79b9_7f4a_7c15);
        for round in 0..4000 {
            let mut out = String::new();
            let n = [40, 4, 12][round % 3];
            for _ in 0..n {
                out.push_str(pieces[rng.below(pieces.len())]);
            }
            let want = tokens
                .iter()
                .enumerate()
                .filter(|(_, t)| out.contains(*t))
                .fold(0u32, |acc, (i, _)| acc | 1 << i);
            let first = out.find(['<', '[']).unwrap_or(out.len());
            assert_eq!(delimiters_present(&out, first), want, "{out:?}");
        }
    }

    #[test]
    fn kimi_k3_think_channel() {
        let out = "<|open|>think<|sep|>call <|open|>tools<|sep|>x<|close|>think<|sep|><|open|>response<|sep|>ok";
        assert_eq!(
            texts(out),
            vec!["<|open|>think<|sep|>call <|open|>tools<|sep|>x<|close|>think"]
        );
        // The template opened the channel: the closer alone ends it.
        let out = "plan<|close|>think<|sep|><|open|>tools<|sep|>";
        assert_eq!(texts(out), vec!["plan<|close|>think"]);
    }

    /// vLLM's `solar_open2` reasoning parser: the template writes
    /// `<|think:start|>`, so the output's reasoning runs to its
    /// `<|think:end|>`; a call drafted there is reasoning, the one after it
    /// is not.
    #[test]
    fn solar_open2_think_tokens() {
        let call = "<|tool_call:start|>get_time\n<|tool_call:end|>";
        let out = format!("Maybe {call} first.<|think:end|>\n{call}");
        assert_eq!(
            texts(&out),
            vec![format!("Maybe {call} first.<|think:end|>")]
        );
        let span = spans(&out)[0];
        assert_eq!(&out[inner(&out, span)], format!("Maybe {call} first."));
        let out = format!("<|think:start|>plan<|think:end|>{call}<|think:start|>again");
        assert_eq!(
            texts(&out),
            vec!["<|think:start|>plan<|think:end|>", "<|think:start|>again"]
        );
    }

    #[test]
    fn inner_strips_markers() {
        let out = "<think>abc</think>";
        assert_eq!(&out[inner(out, spans(out)[0])], "abc");
        let out = "<|channel|>analysis<|message|>x<|end|>";
        assert_eq!(&out[inner(out, spans(out)[0])], "x");
    }
}
