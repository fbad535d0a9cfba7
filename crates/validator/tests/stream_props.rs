//! Property tests, stream == batch (issue 15), over every bundled transcript
//! and every built-in mode (a profile with that mode as its only mode):
//!
//! - the output split at random char boundaries (proptest),
//! - in 1-char deltas (1 byte for ASCII; `push` takes `&str`, so a
//!   multi-byte char is one delta — `toolgate parse --stream` reassembles
//!   byte splits before pushing, tested in `tests/parse_stream.rs`),
//! - split in two at every char boundary inside each occurrence of the
//!   mode's openers and closers (`<｜tool▁calls▁begin｜>`, `[TOOL_CALLS]`,
//!   `<|python_tag|>`, …).
//!
//! Asserted after every delta: the text pushed is a prefix of the output and
//! what was forwarded is a prefix of it; before an opener the held-back text
//! never exceeds the bound (longest opener − 1 byte), except while a start
//! rule is pending (functionary v3.2: the output is still one name-like
//! word); the opener, once announced, never changes. At the end: the pipeline result — candidates
//! (spans, failures, repairs), gates, decision, telemetry, label — equals
//! the batch run's, and no candidate starts inside the forwarded text.
//!
//! Case counts: `TOOLGATE_STREAM_CASES` (default 24) random splittings per
//! proptest case set; the longer run is documented in README.md.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use std::sync::OnceLock;
use toolgate_core::Decision;
use toolgate_core::{Source, Transcript};
use toolgate_formats::openers;
use toolgate_validator::stream::{StreamParser, first_opener, markup_start};
use toolgate_validator::{Engine, Profile};

fn corpus() -> &'static [Transcript] {
    static CORPUS: OnceLock<Vec<Transcript>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../transcripts");
        let t: Vec<Transcript> = toolgate_core::load_paths(&[root])
            .into_iter()
            .filter_map(Result::ok)
            .collect();
        assert!(t.len() > 100, "the bundled transcripts were found");
        t
    })
}

/// One engine per built-in mode, the mode as the profile's only mode.
fn engines() -> &'static [Engine] {
    static ENGINES: OnceLock<Vec<Engine>> = OnceLock::new();
    ENGINES.get_or_init(|| {
        toolgate_formats::builtin()
            .iter()
            .map(|e| {
                Engine::new(Profile {
                    name: format!("only-{}", e.name()),
                    primary: e.name().to_string(),
                    fallbacks: Vec::new(),
                    fallbacks_enabled: false,
                    ..Profile::default()
                })
            })
            .collect()
    })
}

/// Streams `deltas` (which concatenate to the output of `t`) through `engine`
/// and checks every invariant against the batch run. Returns how many bytes
/// were forwarded.
fn check(engine: &Engine, t: &Transcript, deltas: &[&str]) -> usize {
    let what = format!("{} {}", engine.profile.primary, t.location());
    let length = t.hit_length_limit();
    let batch = engine.parse_finished(&t.output, &t.tools, t.reasoning.as_deref(), length);
    let mut s = StreamParser::new(engine, t.tools.to_vec());
    let bound = s.holdback().bound();
    let mut forwarded = String::new();
    let mut opener = None;
    for d in deltas {
        forwarded.push_str(s.push(d));
        let h = s.holdback();
        assert!(t.output.starts_with(h.text()), "{what}: pushed text");
        assert_eq!(h.forwarded(), forwarded.len(), "{what}");
        assert!(h.text().starts_with(&forwarded), "{what}: forwarded");
        if h.start_pending() {
            // Held while the output may still open with a tokenless
            // candidate: nothing forwarded, and it is one name-like word.
            assert_eq!(h.forwarded(), 0, "{what}");
            assert!(
                !h.text()
                    .trim_end_matches(['\r', '\n'])
                    .contains(|c: char| c.is_whitespace()),
                "{what}: start pending on {:?}",
                h.text()
            );
        }
        if !h.opened()
            && !h.start_pending()
            && let Some(bound) = bound
        {
            assert!(
                h.text().len() - h.forwarded() <= bound,
                "{what}: held {} bytes, bound {bound}",
                h.text().len() - h.forwarded()
            );
        }
        if opener.is_some() {
            assert_eq!(h.opener(), opener, "{what}: the opener changed");
        }
        opener = h.opener();
    }
    let end = s.finish(t.reasoning.as_deref(), length);
    assert_eq!(end.text, t.output, "{what}");
    assert_eq!(end.result, batch, "{what}: stream != batch");
    // The opener is the one the whole text has, and what the client is
    // shown (forwarded, then the tail) is the batch's content: the text
    // before the call markup when the calls execute, else all of it.
    let whole = first_opener(&engine.profile, &engine.extractors, &t.output);
    assert_eq!(opener.map(|(at, _)| at), whole, "{what}: opener");
    let content = match batch.decision {
        Decision::Execute { .. } => markup_start(&t.output, &batch.candidates, whole),
        _ => t.output.len(),
    };
    assert_eq!(
        format!("{forwarded}{}", end.tail),
        t.output[..content],
        "{what}: shown text"
    );
    for c in &end.result.candidates {
        if matches!(c.source, Source::Output | Source::OutputReasoning) {
            assert!(
                c.span.start >= forwarded.len(),
                "{what}: a candidate at {} inside the {} forwarded bytes",
                c.span.start,
                forwarded.len()
            );
        }
    }
    forwarded.len()
}

/// `text` cut at the given byte positions (each moved down to a char
/// boundary).
fn cut_at<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|&c| {
            let mut c = c.min(text.len());
            while !text.is_char_boundary(c) {
                c -= 1;
            }
            c
        })
        .collect();
    points.sort_unstable();
    points.dedup();
    let mut out = Vec::new();
    let mut at = 0;
    for p in points.into_iter().chain([text.len()]) {
        if p > at {
            out.push(&text[at..p]);
            at = p;
        }
    }
    out
}

#[test]
fn one_char_deltas_every_transcript_every_mode() {
    let mut forwarded_some = 0;
    for engine in engines() {
        for t in corpus() {
            let deltas: Vec<&str> = t
                .output
                .char_indices()
                .map(|(i, c)| &t.output[i..i + c.len_utf8()])
                .collect();
            if check(engine, t, &deltas) > 0 {
                forwarded_some += 1;
            }
        }
    }
    // Not vacuous: text streamed through for many outputs.
    assert!(forwarded_some > 1000, "{forwarded_some}");
}

#[test]
fn splits_inside_every_opener_and_closer() {
    let mut splits = 0;
    for engine in engines() {
        let mode = engine.profile.primary.as_str();
        let mut tokens: Vec<&str> = openers(mode).unwrap_or(&[]).to_vec();
        if let Some(row) = toolgate_formats::row(mode) {
            tokens.extend_from_slice(row.closers);
        }
        tokens.retain(|t| t.chars().count() > 1);
        for t in corpus() {
            for token in &tokens {
                for (at, _) in t.output.match_indices(token) {
                    for (i, _) in token.char_indices().skip(1) {
                        let p = at + i;
                        check(engine, t, &[&t.output[..p], &t.output[p..]]);
                        splits += 1;
                    }
                }
            }
        }
    }
    assert!(splits > 500, "{splits} splits inside tokens");
}

fn cases() -> u32 {
    std::env::var("TOOLGATE_STREAM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Random char-boundary splits of a random transcript, through every mode.
    #[test]
    fn random_splits_stream_equals_batch(
        pick in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        let t = pick.get(corpus());
        let len = t.output.len() + 1;
        let cuts: Vec<usize> = cuts.iter().map(|c| c.index(len)).collect();
        let deltas = cut_at(&t.output, &cuts);
        for engine in engines() {
            check(engine, t, &deltas);
        }
    }
}

/// Pieces of harmony and functionary markup (and prose, reasoning markers,
/// a multi-byte char) that the generated outputs below are made of.
const PIECES: &[&str] = &[
    "Let me check. ",
    "get_time",
    "all",
    "\n",
    "\r\n",
    "{",
    "}",
    "{\"a\": 1}",
    ">>>",
    ">>",
    "<function=",
    "f>",
    "</function>",
    "<|start|>",
    "assistant",
    " to=functions.f",
    "to=",
    "<|channel|>",
    "commentary",
    "analysis",
    "<|constrain|>",
    "json",
    "<|message|>",
    "<|call|>",
    "<|end|>",
    " ",
    "é",
    "<think>",
    "</think>",
];

/// How the generated outputs begin: functionary's v3.2 first segment (and
/// what is not one), harmony headers, prose.
const STARTS: &[&str] = &[
    "",
    "get_time",
    "get_time\n",
    "get_time\n{",
    "f\r\n{",
    "all\n{",
    "f\r{",
    "Let me check. ",
    "<|channel|>",
    " to=functions.f",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases() * 4))]

    /// Outputs made of harmony and functionary markup pieces (the modes
    /// whose openers are header tokens, `to=`, or functionary's v3.2 start
    /// rule), randomly split, through every mode: stream == batch, and no
    /// candidate starts inside forwarded text.
    #[test]
    fn generated_markup_streams_as_batch(
        start in prop::sample::select(STARTS),
        pieces in prop::collection::vec(prop::sample::select(PIECES), 0..14),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let mut t = corpus()[0].clone();
        t.output = format!("{start}{}", pieces.concat());
        t.path = format!("<generated {:?}>", t.output).into();
        t.reasoning = None;
        t.chunks = None;
        t.finish_reason = None;
        let len = t.output.len() + 1;
        let cuts: Vec<usize> = cuts.iter().map(|c| c.index(len)).collect();
        let deltas = cut_at(&t.output, &cuts);
        for engine in engines() {
            check(engine, &t, &deltas);
        }
    }
}

/// Profiles of two modes where one mode's opener sits inside the other's
/// (marker's `TOOL_CALL` in mistral's `[TOOL_CALLS]`; `[` of json, bracket
/// and xlam in MiniMax-M3's namespace token `]<]minimax[>[`).
fn nested_engines() -> &'static [Engine] {
    static ENGINES: OnceLock<Vec<Engine>> = OnceLock::new();
    ENGINES.get_or_init(|| {
        [
            ("mistral", "marker"),
            ("marker", "mistral"),
            ("minimax_m3", "json"),
            ("minimax_m3", "bracket"),
            ("xlam", "minimax_m3"),
        ]
        .iter()
        .map(|(primary, fallback)| {
            Engine::new(Profile {
                name: format!("{primary}+{fallback}"),
                primary: primary.to_string(),
                fallbacks: vec![fallback.to_string()],
                fallbacks_enabled: true,
                ..Profile::default()
            })
        })
        .collect()
    })
}

/// Pieces of those openers, whole and cut, and of their calls.
const NESTED_PIECES: &[&str] = &[
    "ok ",
    "[TOOL_CALLS]",
    "[TOOL_CALL",
    "TOOL_CALL",
    "S]",
    "[",
    "]",
    ": ",
    "[{\"name\": \"f\", \"arguments\": {}}]",
    "{\"name\": \"f\", \"arguments\": {}}",
    "]<]minimax[>[",
    "]<]minimax",
    "[>[",
    "<tool_call>",
    "<invoke name=\"f\">",
    "<a>1",
    "</a>",
    "</invoke>",
    "</tool_call>",
    "f(a=1)",
    "\n",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases() * 4))]

    /// Outputs made of nested openers and their calls, randomly split,
    /// through the two-mode profiles above: stream == batch, the opener is
    /// the whole text's, and the client is shown the batch's content.
    #[test]
    fn nested_openers_stream_as_batch(
        pieces in prop::collection::vec(prop::sample::select(NESTED_PIECES), 0..12),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let mut t = corpus()[0].clone();
        t.output = pieces.concat();
        t.path = format!("<generated {:?}>", t.output).into();
        t.reasoning = None;
        t.chunks = None;
        t.finish_reason = None;
        t.tools = std::sync::Arc::new(vec![toolgate_core::ToolDef {
            name: "f".into(),
            description: None,
            parameters: Some(serde_json::json!({"type": "object"})),
        }]);
        let len = t.output.len() + 1;
        let cuts: Vec<usize> = cuts.iter().map(|c| c.index(len)).collect();
        let deltas = cut_at(&t.output, &cuts);
        for engine in nested_engines() {
            check(engine, &t, &deltas);
        }
    }
}

/// The case that found it: `ok [TOOL_CALL` then `S][…]`, under mistral
/// with marker as fallback, forwarded `ok [` (marker's `TOOL_CALL` cut it
/// at 4) where batch shows `ok ` before `[TOOL_CALLS]` at 3 and executes.
#[test]
fn a_nested_opener_split_before_the_longer_one_completes() {
    let mut t = corpus()[0].clone();
    t.output = "ok [TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]".into();
    t.reasoning = None;
    t.chunks = None;
    t.finish_reason = None;
    t.tools = std::sync::Arc::new(vec![toolgate_core::ToolDef {
        name: "f".into(),
        description: None,
        parameters: Some(serde_json::json!({"type": "object"})),
    }]);
    let engine = &nested_engines()[0];
    let batch = engine.parse_finished(&t.output, &t.tools, None, false);
    assert_eq!(batch.decision.kind(), "execute");
    let cut = "ok [TOOL_CALL".len();
    assert_eq!(check(engine, &t, &[&t.output[..cut], &t.output[cut..]]), 3);
}

/// A case `generated_markup_streams_as_batch` found (CI, stop 43): a
/// header with a text recipient before a function one (`to=get_time
/// to=functions.f`) is malformed (two recipients), and its candidate began
/// at the first `to=`, inside text a stream had already forwarded (only
/// `to=functions.` holds back). It begins at the function's recipient.
#[test]
fn two_recipients_stream_as_batch() {
    let mut t = corpus()[0].clone();
    t.output = "to=get_time to=functions.f\n<think><|call|>all".into();
    t.reasoning = None;
    t.chunks = None;
    t.finish_reason = None;
    let len = t.output.len();
    for engine in engines() {
        for cut in 0..=len {
            if t.output.is_char_boundary(cut) {
                check(engine, &t, &[&t.output[..cut], &t.output[cut..]]);
            }
        }
    }
}

#[test]
fn recorded_chunks_replay_as_their_output() {
    use toolgate_validator::stream::replay_chunks;
    let streamed: Vec<&Transcript> = corpus().iter().filter(|t| t.chunks.is_some()).collect();
    assert!(streamed.len() >= 2, "bundled transcripts with chunks");
    for engine in engines() {
        for t in &streamed {
            let r = replay_chunks(engine, t).unwrap();
            // The one bundled stream that lost a delta, on purpose.
            if t.path.ends_with("findings/stream_divergence.json") {
                assert!(r.divergence.is_some(), "{}", t.location());
                continue;
            }
            assert_eq!(r.divergence, None, "{}", t.location());
            assert_eq!(r.end.result, r.batch, "{}", t.location());
        }
    }
    // A dropped delta (a server that lost a chunk): the deltas no longer
    // give the recorded output, and the replay says where they part.
    let mut t = (*streamed
        .iter()
        .find(|t| t.path.ends_with("hermes/streamed_search.json"))
        .unwrap())
    .clone();
    let chunks = t.chunks.as_mut().unwrap();
    assert!(chunks.len() >= 3);
    let kept: usize = chunks[..1].iter().map(String::len).sum();
    chunks.remove(1);
    let hermes = Engine::new(Profile::builtin("hermes").unwrap());
    let r = replay_chunks(&hermes, &t).unwrap();
    let got = r.divergence.unwrap();
    // The dropped chunk is the "\n" after `<tool_call>`.
    assert_eq!(
        got,
        format!(
            "the chunks give {} bytes, the recorded output has {}; they part at byte {kept}",
            t.output.len() - 1,
            t.output.len()
        )
    );
    assert!(r.end.text.len() < t.output.len());
    // No chunks recorded: nothing to replay.
    let mut plain = streamed[0].clone();
    plain.chunks = None;
    assert!(replay_chunks(&hermes, &plain).is_none());
}

/// Why `call` events wait for the end of the output (DECISIONS.md,
/// "Streaming, `call` events wait for the end of the output"): a reasoning
/// closer with no opener before it
/// (`</think>`, `[/THINK]`, …: the chat template opened the block) makes
/// everything before it reasoning, so a call whose markup closed long ago
/// stops being a live candidate when such a closer arrives later. An early
/// `call` event would have announced a candidate batch extraction does not
/// make. Checked for every mode whose example is a live candidate.
#[test]
fn a_later_reasoning_closer_turns_a_closed_call_into_reasoning() {
    use toolgate_formats::{Input, Strictness};
    let mut reclassified = 0;
    for e in toolgate_formats::builtin() {
        let example = e.example();
        let live = e
            .extract(&Input::new(example), Strictness::Strict)
            .iter()
            .filter(|c| c.is_live())
            .count();
        if live == 0 {
            continue;
        }
        for closer in ["</think>", "[/THINK]", "<|END_THINKING|>", "<|think:end|>"] {
            let later = format!("{example}\nOn second thought, no.{closer}\n");
            let found = e.extract(&Input::new(&later), Strictness::Strict);
            assert!(
                found.iter().all(|c| !c.is_live()),
                "{}: {closer} after the call left a live candidate: {found:?}",
                e.name()
            );
            // `json` reads only a whole output that is one value: the
            // appended text makes it no candidate at all; every other mode
            // still finds the call, now as reasoning.
            if found.iter().any(|c| c.source == Source::OutputReasoning) {
                reclassified += 1;
            }
        }
    }
    assert!(reclassified > 120, "{reclassified} (mode, closer) pairs");
}
