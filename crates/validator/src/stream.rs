//! Streaming: forward model text as it arrives, fail closed (SPEC §6).
//!
//! A gateway relaying a streamed answer may forward text that cannot be part
//! of a tool call, and must hold the rest until the pipeline has decided.
//! [`Holdback`] does the first half: fed deltas of any size, it returns the
//! text that is safe to forward now — everything before the first opener
//! token of the profile's modes ([`toolgate_formats::openers()`]), minus a tail
//! that could still grow into one — and buffers everything from the first
//! opener on. A mode without fixed openers (custom patterns) makes it hold
//! the whole output; a mode whose candidate may begin at byte 0 without a
//! token (`functionary` v3.2, [`toolgate_formats::StartRule`])
//! makes it hold the output while its first bytes could still be one.
//!
//! [`StreamParser`] adds the second half: at [`StreamParser::finish`] it runs
//! the batch pipeline ([`Engine::parse_finished`]) on the whole text, so the
//! decision and telemetry of a stream are exactly those of the batch run
//! (stream == batch), and says which held text is still to be shown: the
//! text before the first opener and call when calls execute (nothing from
//! an opener on, where section markup sits around the calls), or all of it
//! when nothing executes.
//!
//! ```
//! use toolgate_validator::{Engine, Profile, stream::StreamParser};
//! let engine = Engine::new(Profile::builtin("hermes").unwrap());
//! let mut s = StreamParser::new(&engine, Vec::new());
//! assert_eq!(s.push("Let me check. <tool"), "Let me check. ");
//! assert_eq!(s.push("_call>{\"name\": \"f\"}</tool_call>"), "");
//! let end = s.finish(None, false);
//! assert_eq!(end.result.decision.kind(), "reject"); // `f` is not allowlisted
//! assert_eq!(end.tail, "<tool_call>{\"name\": \"f\"}</tool_call>");
//! ```

use crate::engine::Engine;
use crate::pipeline::PipelineResult;
use crate::profile::Profile;
use std::sync::{Arc, Mutex, OnceLock};
use toolgate_core::{Candidate, Decision, ToolDef};
use toolgate_formats::{START_SEGMENT, Start, StartRule, openers, start_rule};

/// The opener tokens of a hold-back, searched all at once: one pass over
/// the unforwarded text looks at each byte once, and only where a byte can
/// begin a token are the tokens beginning with it compared (sorted, they
/// sit side by side). It finds the first opener of any token (leftmost,
/// and at one offset the least token in byte order, as a `find` per token
/// and the least `(offset, token)` did) and, when there is none, where the
/// text that could still grow into one begins. An opener found while text
/// before it could still grow into a longer token is not the first one
/// yet: that text is held, and the next search decides.
#[derive(Debug)]
struct Openers {
    /// Sorted, deduplicated, non-empty.
    tokens: Vec<&'static str>,
    /// For each byte, the range of `tokens` that begin with it (empty when
    /// none does).
    by_first: [(u16, u16); 256],
    /// The distinct first bytes (up to three are searched with `memchr`).
    firsts: Vec<u8>,
    /// The longest token's length.
    longest: usize,
}

/// What a search of the unforwarded text found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// An opener: its offset and token.
    Opener(usize, &'static str),
    /// No opener known yet; the text from this offset on could still grow
    /// into one (the text's length when nothing could), even when a token
    /// was found after it.
    Held(usize),
}

impl Openers {
    fn new(tokens: Vec<&'static str>) -> Openers {
        let mut by_first = [(0u16, 0u16); 256];
        let mut firsts = Vec::new();
        // More tokens than a u16 counts are never built (the table has a
        // few per mode); the rest would simply not be looked for.
        let tokens: Vec<&'static str> = tokens.into_iter().take(usize::from(u16::MAX)).collect();
        for (i, t) in tokens.iter().enumerate() {
            let Some(&b) = t.as_bytes().first() else {
                continue;
            };
            let slot = &mut by_first[usize::from(b)];
            // `i` < u16::MAX: the list was cut above.
            let i = u16::try_from(i).unwrap_or(u16::MAX);
            if slot.0 == slot.1 {
                *slot = (i, i + 1);
                firsts.push(b);
            } else {
                slot.1 = i + 1;
            }
        }
        let longest = tokens.iter().map(|t| t.len()).max().unwrap_or(0);
        Openers {
            tokens,
            by_first,
            firsts,
            longest,
        }
    }

    /// The shared openers of `tokens` (sorted, deduplicated): a profile's
    /// table is built once per process, not once per stream. The cache
    /// holds a few entries (profiles in use); past [`CACHED_OPENER_SETS`] it
    /// starts over, so memory stays bounded.
    fn shared(tokens: Vec<&'static str>) -> Arc<Openers> {
        static CACHE: OnceLock<Mutex<Vec<Arc<Openers>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
        // A poisoned lock only means another thread panicked while holding
        // it; the list itself is always consistent.
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(o) = cache.iter().find(|o| o.tokens == tokens) {
            return Arc::clone(o);
        }
        if cache.len() >= CACHED_OPENER_SETS {
            cache.clear();
        }
        let o = Arc::new(Openers::new(tokens));
        cache.push(Arc::clone(&o));
        o
    }

    /// The next offset at or after `at` whose byte begins a token.
    fn next_first(&self, bytes: &[u8], at: usize) -> Option<usize> {
        let rest = bytes.get(at..)?;
        let begins = |b: &u8| {
            let (lo, hi) = self.by_first[usize::from(*b)];
            lo != hi
        };
        // A delta of a few bytes (most of a token stream): a plain loop
        // costs less than setting up a vector search.
        if rest.len() < SHORT_SCAN {
            return rest.iter().position(begins).map(|i| at + i);
        }
        let found = match self.firsts[..] {
            [] => None,
            [a] => memchr::memchr(a, rest),
            [a, b] => memchr::memchr2(a, b, rest),
            [a, b, c] => memchr::memchr3(a, b, c, rest),
            _ => rest.iter().position(begins),
        };
        found.map(|i| at + i)
    }

    /// Searches `text` from byte `from` (a char boundary) on. A held
    /// offset starts with a token's first byte, so it is a char boundary.
    fn scan(&self, text: &str, from: usize) -> Scan {
        let bytes = text.as_bytes();
        let mut held = None;
        let mut at = from;
        while let Some(p) = self.next_first(bytes, at) {
            let rest = &bytes[p..];
            let (lo, hi) = self.by_first[usize::from(bytes[p])];
            for t in &self.tokens[usize::from(lo)..usize::from(hi)] {
                if rest.starts_with(t.as_bytes()) {
                    // A token that begins inside a longer one
                    // (`TOOL_CALL` in `[TOOL_CALLS]`, `[` in MiniMax-M3's
                    // `]<]minimax[>[`) found while text before it can
                    // still grow into that longer token: which opener is
                    // first is not known yet, so the text from the earlier
                    // one on is held (a token matching at `p` itself sorts
                    // before any longer token it begins, so `held` is
                    // before `p` here).
                    return match held {
                        Some(h) => Scan::Held(h),
                        None => Scan::Opener(p, t),
                    };
                }
                if held.is_none() && t.len() > rest.len() && t.as_bytes().starts_with(rest) {
                    held = Some(p);
                }
            }
            at = p + 1;
        }
        Scan::Held(held.unwrap_or(bytes.len()))
    }
}

/// Unforwarded text shorter than this is searched byte by byte.
const SHORT_SCAN: usize = 32;

/// The text a hold-back reserves at its first delta: most outputs fit, so
/// the text is not copied as it grows by small deltas.
const FIRST_RESERVE: usize = 4096;

/// Distinct opener sets kept built at once (one per profile in use).
const CACHED_OPENER_SETS: usize = 64;

/// Holds back streamed text that could begin a tool-call opener.
#[derive(Clone, Debug)]
pub struct Holdback {
    /// The opener tokens; `None`: hold everything.
    tokens: Option<Arc<Openers>>,
    /// Everything pushed so far.
    text: String,
    /// How many bytes of `text` were returned as forwardable.
    forwarded: usize,
    /// An opener was seen (or nothing may be forwarded): buffer the rest.
    opened: bool,
    /// The first opener seen: its byte offset and token.
    opener: Option<(usize, &'static str)>,
    /// The start rules still undecided (a candidate may begin at byte 0).
    starts: Vec<StartRule>,
}

impl Holdback {
    /// A hold-back on these opener tokens (`None`: hold everything).
    pub fn new(tokens: Option<Vec<&'static str>>) -> Holdback {
        let tokens = tokens.map(|mut t| {
            t.retain(|s| !s.is_empty());
            t.sort_unstable();
            t.dedup();
            Openers::shared(t)
        });
        Holdback {
            opened: tokens.is_none(),
            tokens,
            text: String::new(),
            forwarded: 0,
            opener: None,
            starts: Vec::new(),
        }
    }

    /// [`Holdback::new`] that also holds the output while one of `starts`
    /// says a candidate may still begin at byte 0.
    pub fn with_starts(tokens: Option<Vec<&'static str>>, starts: Vec<StartRule>) -> Holdback {
        let mut h = Holdback::new(tokens);
        if h.tokens.is_some() {
            h.starts = starts;
        }
        h
    }

    /// The openers of every mode `profile` extracts with: its primary mode
    /// and, when enabled, its fallbacks. Any mode without fixed openers
    /// makes it hold everything.
    pub fn for_profile(profile: &Profile) -> Holdback {
        Holdback::for_profile_in(profile, &[])
    }

    /// [`Holdback::for_profile`] for the modes of `extractors` (an engine's:
    /// built-ins and declared formats): each mode's openers are its
    /// extractor's ([`toolgate_formats::Extractor::openers`]), so a declared
    /// format streams by its own tokens; a mode none of them provides is
    /// looked up among the built-in rows.
    pub fn for_profile_in(
        profile: &Profile,
        extractors: &[Box<dyn toolgate_formats::Extractor>],
    ) -> Holdback {
        Holdback::for_profile_by(profile, |mode| {
            extractors
                .iter()
                .find(|e| e.name() == mode)
                .map(|e| e.openers())
        })
    }

    /// [`Holdback::for_profile`] with each mode's openers looked up by
    /// `known` first: `Some(openers)` for a mode the caller's engine has
    /// (its extractor's, `None` inside when it has no fixed openers),
    /// `None` for a mode the caller does not know, which is then looked up
    /// among the built-in rows. The inspector's Stream view uses it with the
    /// openers its engine reported, so a declared format streams there by
    /// its own tokens too.
    pub fn for_profile_by(
        profile: &Profile,
        known: impl Fn(&str) -> Option<Option<&'static [&'static str]>>,
    ) -> Holdback {
        let mut modes = vec![profile.primary.as_str()];
        if profile.fallbacks_enabled {
            modes.extend(profile.fallbacks.iter().map(String::as_str));
        }
        let mut tokens: Vec<&'static str> = Vec::new();
        let mut starts = Vec::new();
        for mode in modes {
            let of_mode = match known(mode) {
                Some(o) => o,
                None => openers(mode),
            };
            match of_mode {
                Some(t) => tokens.extend_from_slice(t),
                None => return Holdback::new(None),
            }
            starts.extend(start_rule(mode));
        }
        Holdback::with_starts(Some(tokens), starts)
    }

    /// Appends `delta`; returns the text that may be forwarded now (possibly
    /// empty). The concatenation of every returned piece is a prefix of the
    /// concatenated deltas that ends before the first opener.
    pub fn push(&mut self, delta: &str) -> &str {
        if self.text.capacity() == 0 {
            self.text.reserve(delta.len().max(FIRST_RESERVE));
        }
        self.text.push_str(delta);
        if self.opened {
            return "";
        }
        let Some(openers) = &self.tokens else {
            self.opened = true;
            return "";
        };
        // A candidate that may begin at byte 0: hold until every rule has
        // decided (each resumes where it stopped: linear).
        let mut pending = false;
        for rule in &mut self.starts {
            match rule.advance(&self.text) {
                Start::Maybe => pending = true,
                Start::Never => {}
                Start::Opens => {
                    self.opened = true;
                    self.opener = Some((0, START_SEGMENT));
                    return "";
                }
            }
        }
        if pending {
            return "";
        }
        self.starts.clear();
        let start = self.forwarded;
        // The unforwarded text is the held tail (shorter than the longest
        // token) plus this delta, so the search is linear overall.
        let end = match openers.scan(&self.text, start) {
            Scan::Opener(p, token) => {
                self.opened = true;
                self.opener = Some((p, token));
                p
            }
            Scan::Held(p) => p,
        };
        self.forwarded = end;
        &self.text[start..end]
    }

    /// Everything pushed so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many bytes of [`Holdback::text`] have been returned as forwardable.
    pub fn forwarded(&self) -> usize {
        self.forwarded
    }

    /// The first opener seen, as its byte offset in [`Holdback::text`] and
    /// the token (`None` before one is seen, and always when the hold-back
    /// holds everything).
    pub fn opener(&self) -> Option<(usize, &'static str)> {
        self.opener
    }

    /// The bound on the held-back text before an opener is seen, once no
    /// start rule is pending ([`Holdback::start_pending`]): one byte less
    /// than the longest opener token (`None`: everything is held).
    pub fn bound(&self) -> Option<usize> {
        self.tokens
            .as_ref()
            .map(|o| o.longest.max(1).saturating_sub(1))
    }

    /// Whether a candidate may still begin at byte 0 without a token (a
    /// [`StartRule`] is undecided): the output is held, beyond
    /// [`Holdback::bound`], while its first bytes are one name-like word.
    pub fn start_pending(&self) -> bool {
        !self.opened && !self.starts.is_empty()
    }

    /// Whether an opener was seen (everything from it on is buffered), or
    /// the hold-back holds everything.
    pub fn opened(&self) -> bool {
        self.opened
    }
}

/// Where call markup begins in `text` once its calls execute: at the first
/// call opener of the profile's modes (`opener`) or the first call taken
/// from the output, whichever comes first. Nothing from there on is shown:
/// the spans of the candidates do not cover the section tokens and list
/// brackets around them (`<|tool_calls_section_begin|>`, `[TOOL_CALLS][…]`),
/// so showing the text between or after the calls would leak markup into
/// content. One rule for a stream's end ([`StreamEnd::tail`]) and for what
/// `enforce` and the guardrails serve ([`crate::output::Judged`]).
pub fn markup_start(text: &str, candidates: &[Candidate], opener: Option<usize>) -> usize {
    let first_call = candidates
        .iter()
        .filter(|c| matches!(c.source, toolgate_core::Source::Output))
        .map(|c| c.span.start)
        .min()
        .unwrap_or(text.len());
    first_call.min(opener.unwrap_or(text.len())).min(text.len())
}

/// The offset of the first call opener of `profile`'s modes in `text`, as
/// a stream's hold-back finds it.
pub fn first_opener(
    profile: &Profile,
    extractors: &[Box<dyn toolgate_formats::Extractor>],
    text: &str,
) -> Option<usize> {
    let mut hold = Holdback::for_profile_in(profile, extractors);
    hold.push(text);
    hold.opener.map(|(at, _)| at)
}

/// The end of a stream: the batch decision and what is left to show.
#[derive(Clone, Debug)]
pub struct StreamEnd {
    /// The pipeline's result on the whole text (what batch gives).
    pub result: PipelineResult,
    /// The whole text.
    pub text: String,
    /// How many bytes were forwarded while streaming.
    pub forwarded: usize,
    /// The held text still to show: on `execute`, the held text before the
    /// first opener and the first call (nothing from the opener on: it is
    /// call markup); otherwise everything not yet forwarded. Empty after
    /// [`StreamParser::finish_in_place`].
    pub tail: String,
    /// Where the held text still to show ends: it is
    /// `text[forwarded..tail_end]`.
    pub tail_end: usize,
}

/// The streaming pipeline for one output: [`Holdback`] while it arrives,
/// the batch pipeline at the end.
pub struct StreamParser<'e> {
    engine: &'e Engine,
    profile: &'e Profile,
    /// `None`: the tool list is unknown ([`Engine::judge_output_unknown`]).
    tools: Option<Vec<ToolDef>>,
    hold: Holdback,
    emit: bool,
}

impl<'e> StreamParser<'e> {
    /// A parser for one output of `engine`'s profile, allowlisting `tools`.
    pub fn new(engine: &'e Engine, tools: Vec<ToolDef>) -> StreamParser<'e> {
        StreamParser::with_profile(engine, &engine.profile, tools)
    }

    /// A parser for one output of `engine`'s profile whose tool list is
    /// unknown (SPEC §4): judged at the end by
    /// [`Engine::judge_output_unknown`].
    pub fn with_tools_unknown(engine: &'e Engine) -> StreamParser<'e> {
        StreamParser {
            tools: None,
            ..StreamParser::new(engine, Vec::new())
        }
    }

    /// A parser judging with `profile` (an `auto` choice, the inspector's
    /// profile) instead of the engine's own.
    pub fn with_profile(
        engine: &'e Engine,
        profile: &'e Profile,
        tools: Vec<ToolDef>,
    ) -> StreamParser<'e> {
        StreamParser {
            hold: Holdback::for_profile_in(profile, &engine.extractors),
            engine,
            profile,
            tools: Some(tools),
            emit: true,
        }
    }

    /// Appends a delta; returns the text that may be forwarded now.
    pub fn push(&mut self, delta: &str) -> &str {
        self.hold.push(delta)
    }

    /// Makes room for `additional` more bytes of text (when the length of
    /// the output is known, as for a file: the text is then not copied as
    /// it grows). A size that cannot be had is not reserved: the text then
    /// grows as it comes.
    pub fn reserve(&mut self, additional: usize) {
        // Failing to reserve changes nothing but the copies.
        let _ = self.hold.text.try_reserve(additional);
    }

    /// The hold-back state.
    pub fn holdback(&self) -> &Holdback {
        &self.hold
    }

    /// Runs the pipeline on the whole text (`reasoning`: the separate
    /// reasoning text; `hit_length_limit`: `finish_reason` was `length`).
    pub fn finish(self, reasoning: Option<&str>, hit_length_limit: bool) -> StreamEnd {
        self.end(reasoning, hit_length_limit, true)
    }

    /// [`StreamParser::finish`] without copying the held text still to
    /// show into [`StreamEnd::tail`] (left empty): it is
    /// `text[forwarded..tail_end]`, for a caller that only writes it out.
    pub fn finish_in_place(self, reasoning: Option<&str>, hit_length_limit: bool) -> StreamEnd {
        self.end(reasoning, hit_length_limit, false)
    }

    fn end(self, reasoning: Option<&str>, hit_length_limit: bool, copy_tail: bool) -> StreamEnd {
        let text = self.hold.text;
        let forwarded = self.hold.forwarded;
        let result = match &self.tools {
            Some(tools) => self.engine.judge_output(
                self.profile,
                &text,
                tools,
                reasoning,
                hit_length_limit,
                self.emit,
            ),
            None => self.engine.judge_output_unknown(
                self.profile,
                &text,
                reasoning,
                hit_length_limit,
                self.emit,
            ),
        };
        let tail_end = match result.decision {
            // Only text before the call markup is still shown
            // ([`markup_start`]; a hold-all profile holds its prose until
            // here).
            Decision::Execute { .. } => {
                let opener = self.hold.opener.map(|(at, _)| at);
                markup_start(&text, &result.candidates, opener).max(forwarded)
            }
            _ => text.len(),
        };
        let tail = if copy_tail {
            text.get(forwarded..tail_end)
                .unwrap_or_default()
                .to_string()
        } else {
            String::new()
        };
        StreamEnd {
            result,
            text,
            forwarded,
            tail,
            tail_end,
        }
    }
}

/// A transcript's recorded `chunks` replayed through the streaming
/// pipeline, against the batch run on its recorded `output`.
#[derive(Clone, Debug)]
pub struct ChunkReplay {
    /// The end of the stream the chunks give.
    pub end: StreamEnd,
    /// The batch result on the recorded output.
    pub batch: PipelineResult,
    /// Why the deltas disagree with the recording, if they do: the text
    /// they give differs from `output`, or the decision differs.
    pub divergence: Option<String>,
}

/// Replays `t.chunks` through [`StreamParser`] (`None`: no chunks were
/// recorded). What a `stream_divergence` finding reports.
pub fn replay_chunks(engine: &Engine, t: &toolgate_core::Transcript) -> Option<ChunkReplay> {
    replay_chunks_as(engine, &engine.profile, t)
}

/// [`replay_chunks`] judged by `profile`. Emits no telemetry event: a
/// replay of recorded chunks is not a served output.
pub fn replay_chunks_as(
    engine: &Engine,
    profile: &Profile,
    t: &toolgate_core::Transcript,
) -> Option<ChunkReplay> {
    let chunks = t.chunks.as_ref()?;
    let length = t.hit_length_limit();
    let reasoning = t.reasoning.as_deref();
    let mut s = StreamParser::with_profile(engine, profile, t.tools.to_vec());
    s.emit = false;
    for c in chunks {
        s.push(c);
    }
    let end = s.finish(reasoning, length);
    let batch = engine.judge_output(profile, &t.output, &t.tools, reasoning, length, false);
    let decisions = (end.result.decision != batch.decision).then(|| {
        format!(
            "the streamed decision is `{}`, the batch decision `{}`",
            end.result.decision.kind(),
            batch.decision.kind()
        )
    });
    let divergence = match (parting_byte(&end.text, &t.output), decisions) {
        (Some(at), d) => Some(format!(
            "the chunks give {} bytes, the recorded output has {}; they part at byte {at}{}",
            end.text.len(),
            t.output.len(),
            d.map(|d| format!(" ({d})")).unwrap_or_default()
        )),
        (None, d) => d,
    };
    Some(ChunkReplay {
        end,
        batch,
        divergence,
    })
}

/// The first byte where `a` and `b` differ (`None`: they are equal; the
/// shorter one's length when one is a prefix of the other).
pub fn parting_byte(a: &str, b: &str) -> Option<usize> {
    (a != b).then(|| a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn hb(tokens: &[&'static str]) -> Holdback {
        Holdback::new(Some(tokens.to_vec()))
    }

    #[test]
    fn holds_only_a_possible_opener_prefix() {
        let mut h = hb(&["<tool_call>"]);
        assert_eq!(h.push("Hello <to"), "Hello ");
        assert_eq!(h.push("day> is"), "<today> is");
        assert_eq!(h.push(" fine <tool_"), " fine ");
        assert_eq!(h.push("call>{}"), "");
        assert!(h.opened());
        assert_eq!(
            h.opener(),
            Some(("Hello <today> is fine ".len(), "<tool_call>"))
        );
        assert_eq!(h.push("more"), "");
        assert_eq!(h.forwarded(), "Hello <today> is fine ".len());
    }

    /// The one search finds what a `find` per token and the least
    /// `(offset, token)` found, unless a suffix before it is a proper
    /// prefix of a token, and else holds the longest suffix that is a
    /// proper prefix of a token (as the hold-back always searches from
    /// where the last held text began, no such suffix starts before
    /// `from`), on texts made of pieces of overlapping tokens; with one,
    /// two, three and more first bytes.
    #[test]
    fn one_search_agrees_with_a_find_per_token() {
        let sets: [&[&'static str]; 5] = [
            &[
                "<tool",
                "<tool_call>",
                "<|tool▁x|>",
                "[TOOL_CALLS]",
                "[",
                "{\"name\"",
                "b",
            ],
            &[
                "<tool_call>",
                "<|tool_calls_section_begin|>",
                "<|tool_call_begin|>",
            ],
            &["[TOOL_CALLS]", "<tool", "{"],
            // Tokens inside longer ones (mistral's and marker's, MiniMax-M3's
            // namespace token and `[`).
            &["[TOOL_CALLS]", "TOOL_CALL"],
            &["]<]minimax[>[", "["],
        ];
        let pieces = [
            "<",
            "<tool",
            "_call>",
            "[TOOL",
            "_CALLS]",
            "<|tool▁",
            "x|>",
            "a",
            "b",
            "é",
            "{\"na",
            "me\"",
            "<|tool_call",
            "_begin|>",
            "_section",
            "[TOOL_CALL",
            "S]",
            "TOOL",
            "]<]minimax",
            "[>[",
            "[",
        ];
        let mut source = toolgate_testkit::generate::Rng::new(7);
        let mut rng = move || source.next_u64();
        for set in sets {
            let mut sorted = set.to_vec();
            sorted.sort_unstable();
            let o = Openers::new(sorted.clone());
            for _ in 0..3000 {
                let mut text = String::new();
                for _ in 0..(rng() % 6) {
                    text.push_str(pieces[(rng() % pieces.len() as u64) as usize]);
                }
                let from = (0..=text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .nth((rng() % 3) as usize)
                    .unwrap_or(0);
                let rest = &text[from..];
                let b = text.as_bytes();
                let partial = (1..o.longest.min(b.len() - from + 1))
                    .rev()
                    .find(|&k| {
                        let suffix = &b[b.len() - k..];
                        sorted
                            .iter()
                            .any(|t| t.len() > k && t.as_bytes().starts_with(suffix))
                    })
                    .unwrap_or(0);
                let held = text.len() - partial;
                let naive = match sorted
                    .iter()
                    .filter_map(|t| rest.find(t).map(|p| (p, *t)))
                    .min()
                {
                    // Text before the opener may still grow into a longer
                    // token: held.
                    Some((p, _)) if held < from + p => Scan::Held(held),
                    Some((p, t)) => Scan::Opener(from + p, t),
                    None => Scan::Held(held),
                };
                assert_eq!(o.scan(&text, from), naive, "{set:?} {text:?} from {from}");
            }
        }
    }

    /// `finish_in_place` names, as a range, the tail `finish` copies, when
    /// the call executes and when it does not.
    #[test]
    fn finish_in_place_names_the_tail_finish_copies() {
        let engine = Engine::new(Profile::builtin("hermes").unwrap());
        let tools = vec![ToolDef {
            name: "f".into(),
            description: None,
            parameters: Some(serde_json::json!({"type": "object"})),
        }];
        let mut kinds = Vec::new();
        for text in [
            "Let me check. <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
            "Let me check. <tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call> then",
            "plain prose <tool",
        ] {
            let run = |in_place: bool| {
                let mut s = StreamParser::new(&engine, tools.clone());
                for piece in text.split_inclusive(' ') {
                    s.push(piece);
                }
                if in_place {
                    s.finish_in_place(None, false)
                } else {
                    s.finish(None, false)
                }
            };
            let (copied, in_place) = (run(false), run(true));
            assert!(in_place.tail.is_empty());
            assert_eq!(
                &in_place.text[in_place.forwarded..in_place.tail_end],
                copied.tail
            );
            assert_eq!(in_place.tail_end, copied.tail_end);
            kinds.push(copied.result.decision.kind());
        }
        assert_eq!(kinds, ["execute", "reject", "no_call"]);
    }

    #[test]
    fn an_opener_inside_one_delta_cuts_there() {
        let mut h = hb(&["[TOOL_CALLS]", "<tool_call>"]);
        assert_eq!(h.push("ok [TOOL_CALLS][{}] and <tool_call>"), "ok ");
        assert_eq!(h.opener(), Some((3, "[TOOL_CALLS]")));
    }

    /// A token inside a longer one (marker's `TOOL_CALL` in mistral's
    /// `[TOOL_CALLS]`, `[` in MiniMax-M3's `]<]minimax[>[`) found while the
    /// text before it could still grow into the longer token: it forwarded
    /// `ok [` and announced `TOOL_CALL` at 4, where the whole text, as batch
    /// reads it, opens at 3 with `[TOOL_CALLS]`.
    #[test]
    fn a_token_inside_a_longer_one_waits_for_the_longer_one() {
        let mut h = hb(&["[TOOL_CALLS]", "TOOL_CALL"]);
        assert_eq!(h.push("ok [TOOL_CALL"), "ok ");
        assert!(!h.opened());
        assert_eq!(h.push("S][{}]"), "");
        assert_eq!(h.opener(), Some((3, "[TOOL_CALLS]")));
        // The longer token does not come: the inner one opens.
        let mut h = hb(&["[TOOL_CALLS]", "TOOL_CALL"]);
        assert_eq!(h.push("ok [TOOL_CALL"), "ok ");
        assert_eq!(h.push(": {}"), "[");
        assert_eq!(h.opener(), Some((4, "TOOL_CALL")));
        let mut h = hb(&["]<]minimax[>[", "["]);
        assert_eq!(h.push("Hi ]<]minimax["), "Hi ");
        assert_eq!(h.push(">[<tool_call>"), "");
        assert_eq!(h.opener(), Some((3, "]<]minimax[>[")));
    }

    #[test]
    fn none_holds_everything_and_empty_holds_nothing() {
        let mut h = Holdback::new(None);
        assert_eq!(h.push("anything"), "");
        let mut h = Holdback::new(Some(Vec::new()));
        assert_eq!(h.push("<tool_call>x"), "<tool_call>x");
    }

    #[test]
    fn multibyte_openers_are_cut_on_char_boundaries() {
        let mut h = hb(&["<｜tool▁calls▁begin｜>"]);
        let opener = "<｜tool▁calls▁begin｜>";
        let mut got = String::new();
        for c in format!("é ok {opener}x").chars() {
            got.push_str(h.push(&c.to_string()));
        }
        assert_eq!(got, "é ok ");
    }

    #[test]
    fn a_profile_with_a_pattern_mode_holds_everything() {
        let mut p = Profile::default();
        p.fallbacks.push("my_pattern".into());
        let mut h = Holdback::for_profile(&p);
        assert_eq!(h.push("plain prose"), "");
        let mut h = Holdback::for_profile(&Profile::default());
        assert_eq!(h.push("plain prose"), "plain prose");
    }

    #[test]
    fn harmony_and_functionary_stream_their_prose() {
        for (mode, call) in [
            (
                "harmony",
                "<|channel|>commentary to=functions.f<|message|>{}<|call|>",
            ),
            (
                "harmony",
                " to=functions.f<|channel|>commentary<|message|>{}",
            ),
            ("functionary", "<function=f>{}</function>"),
            ("functionary", ">>>f\n{}"),
        ] {
            let p = Profile {
                primary: mode.into(),
                fallbacks_enabled: false,
                ..Profile::default()
            };
            let mut h = Holdback::for_profile(&p);
            let mut got = String::new();
            for c in format!("Let me check.{call}").chars() {
                got.push_str(h.push(&c.to_string()));
            }
            // Whitespace before a `to=` is not part of the call either.
            let lead = call.len() - call.trim_start().len();
            assert_eq!(
                got,
                format!("Let me check.{}", &call[..lead]),
                "{mode}: {call}"
            );
            assert!(h.opened() && !h.start_pending(), "{mode}");
        }
    }

    #[test]
    fn functionary_holds_a_first_word_that_may_be_a_v32_name() {
        let p = Profile {
            primary: "functionary".into(),
            fallbacks_enabled: false,
            ..Profile::default()
        };
        let mut h = Holdback::for_profile(&p);
        assert_eq!(h.push("get_time"), "");
        assert!(h.start_pending());
        assert_eq!(h.push("\n"), "");
        assert_eq!(h.push("{\"city\": 1}"), "");
        assert!(h.opened());
        assert_eq!(h.opener(), Some((0, START_SEGMENT)));
        // A first word followed by a space is prose: it all streams.
        let mut h = Holdback::for_profile(&p);
        assert_eq!(h.push("Sure"), "");
        assert_eq!(h.push("! Here >"), "Sure! Here ");
        assert!(!h.start_pending() && !h.opened());
        assert_eq!(h.push(">>get_time\n{}"), "");
        assert_eq!(h.opener(), Some((11, ">>>")));
    }

    #[test]
    fn markup_starts_at_the_first_opener_or_the_first_call() {
        use toolgate_core::{Candidate, Source, Span};
        let c = Candidate {
            mode: "hermes".into(),
            source: Source::Output,
            span: Span::new(9, 13),
            raw: String::new(),
            name: None,
            arguments: Ok(Default::default()),
            repairs: Vec::new(),
        };
        let text = "abc [TC][XXXX] def";
        // The section token before the call's span: from the opener on.
        assert_eq!(markup_start(text, std::slice::from_ref(&c), Some(4)), 4);
        assert_eq!(markup_start(text, std::slice::from_ref(&c), None), 9);
        assert_eq!(markup_start(text, &[], None), text.len());
    }
}
