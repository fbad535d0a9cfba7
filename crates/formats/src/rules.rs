//! The per-concept rules every row of the [format table](crate::table)
//! shares, applied once here after a row's engine has run instead of being
//! re-decided by each engine.
//!
//! - **Missing closer** (SPEC §9): when the last opener of one of a row's
//!   [`blocks`](crate::table::Format::blocks) in the output has no closer
//!   after it, the output ended inside that block, so more calls may have
//!   been cut: the last live candidate reaching into the block becomes
//!   `truncated` (a candidate that already failed keeps its own failure).
//!   A closer declared as the row's [`stop_token`](crate::table::Format::stop_token)
//!   is excused, except under `finish_reason: "length"`.
//!
//! - **Candidate cap** (issue 9): at most [`Input::max_candidates`]
//!   candidates per mode per output ([`DEFAULT_MAX_CANDIDATES`] unless the
//!   caller sets another), applied by [`cap_candidates`] wherever candidates
//!   are handed to the validator (replay and the pipeline, built-in and
//!   custom modes alike). Past the cap the first `cap - 2` candidates and the
//!   last one are kept, and the ones between are replaced by one `malformed`
//!   candidate whose message gives the true count and says the cap was hit:
//!   count rules see at least `cap` candidates, a cut-off last call still
//!   decides `truncation`, and a capped mode never executes (its `parse` gate
//!   fails).
//!
//!   Extractors enforce the cap while they scan (issue 22): they collect
//!   their candidates in a [`Found`], which folds the candidates past the
//!   cap into the stand-in as it goes, so an extractor's memory is bounded
//!   by the cap, not by the output (10 MB of `[f(` held 3.5 million
//!   candidates before being capped). [`Found::into_vec`] gives exactly what
//!   [`cap_candidates`] gives on the uncapped list, so the later cap is a
//!   no-op for built-in modes.
//!
//! Each rule is linear: one reverse search per opener and one forward search
//! per closer over the output.

use crate::table::Format;
use crate::{Extractor, Input, Strictness, util};
use std::cell::RefCell;
use toolgate_core::{Candidate, FailureKind, ParseFailure, Source, Span};

/// How many candidates one mode may report for one output by default.
pub const DEFAULT_MAX_CANDIDATES: usize = 1_000;

/// What [`Found`] needs to know about the text being scanned: the cap and
/// the reasoning spans (sorted), to tell which dropped candidates were live.
struct ScanContext {
    cap: usize,
    reasoning: Vec<Span>,
}

thread_local! {
    static CONTEXT: RefCell<Vec<ScanContext>> = const { RefCell::new(Vec::new()) };
}

/// While alive, [`Found::new`] on this thread uses `cap`, and candidates of
/// the output starting inside `reasoning` count as reasoning. Set by
/// [`util::scan_texts`] around each scan; nests.
pub(crate) struct ScanGuard(());

impl ScanGuard {
    pub(crate) fn enter(cap: usize, mut reasoning: Vec<Span>) -> ScanGuard {
        reasoning.sort();
        CONTEXT.with(|c| c.borrow_mut().push(ScanContext { cap, reasoning }));
        ScanGuard(())
    }
}

impl Drop for ScanGuard {
    fn drop(&mut self) {
        CONTEXT.with(|c| c.borrow_mut().pop());
    }
}

/// Whether a candidate counts as live in the current scan: its source is
/// not reasoning and, from the output, it does not start inside a
/// reasoning span (what `scan_texts` decides afterwards).
fn live_in_context(c: &Candidate) -> bool {
    if !c.is_live() {
        return false;
    }
    if c.source != Source::Output {
        return true;
    }
    CONTEXT.with(|ctx| {
        let ctx = ctx.borrow();
        let Some(top) = ctx.last() else {
            return true;
        };
        let spans = &top.reasoning;
        let offset = c.span.start;
        let i = spans.partition_point(|s| s.end <= offset);
        !spans[i..]
            .iter()
            .take_while(|s| s.start <= offset)
            .any(|s| s.contains(offset))
    })
}

/// The candidates folded into the stand-in so far.
#[derive(Debug)]
struct Overflow {
    count: usize,
    mode: String,
    first_source: Source,
    start: usize,
    end: usize,
    /// The first live dropped candidate's source and start.
    live: Option<(Source, usize)>,
}

/// A mode's candidates, collected under the cap (see the module docs): the
/// first `cap - 2` are kept, the ones after them are folded into one
/// `malformed` stand-in as soon as more than twice the cap are held, and
/// the last one is always kept. Reads like the slice it holds; candidates
/// are added only through [`Found::push`] and [`Found::extend`].
#[derive(Debug)]
pub struct Found {
    items: Vec<Candidate>,
    cap: usize,
    over: Option<Overflow>,
}

impl Default for Found {
    fn default() -> Found {
        Found::new()
    }
}

impl Found {
    /// Under the cap of the scan in progress ([`util::scan_texts`]), else
    /// [`DEFAULT_MAX_CANDIDATES`].
    pub fn new() -> Found {
        let cap = CONTEXT.with(|c| c.borrow().last().map_or(DEFAULT_MAX_CANDIDATES, |t| t.cap));
        Found::with_cap(cap)
    }

    /// Under `cap` (read as at least 3, as [`cap_candidates`] does).
    pub fn with_cap(cap: usize) -> Found {
        Found {
            items: Vec::new(),
            cap: cap.max(3),
            over: None,
        }
    }

    /// Adds a candidate; past twice the cap the middle ones are folded.
    pub fn push(&mut self, c: Candidate) {
        self.items.push(c);
        if self.items.len() >= 2 * self.cap {
            self.fold();
        }
    }

    /// Adds candidates in order.
    pub fn extend(&mut self, more: impl IntoIterator<Item = Candidate>) {
        for c in more {
            self.push(c);
        }
    }

    /// How many candidates were added (folded ones included).
    pub fn total(&self) -> usize {
        self.items.len() + self.over.as_ref().map_or(0, |o| o.count)
    }

    /// Folds every held candidate after the first `cap - 2`, except the last.
    fn fold(&mut self) {
        let keep = self.cap - 2;
        if self.items.len() <= keep + 1 {
            return;
        }
        let last = self.items.len() - 1;
        for c in self.items.drain(keep..last) {
            let live = live_in_context(&c);
            match &mut self.over {
                None => {
                    let first_source = if c.source == Source::Output && !live {
                        Source::OutputReasoning
                    } else {
                        c.source
                    };
                    self.over = Some(Overflow {
                        count: 1,
                        mode: c.mode.clone(),
                        first_source,
                        start: c.span.start,
                        end: c.span.end,
                        live: live.then_some((c.source, c.span.start)),
                    });
                }
                Some(o) => {
                    o.count += 1;
                    o.start = o.start.min(c.span.start);
                    o.end = o.end.max(c.span.end);
                    if o.live.is_none() && live {
                        o.live = Some((c.source, c.span.start));
                    }
                }
            }
        }
    }

    /// The candidates: at most the cap, the stand-in in place of the folded
    /// ones, with the true count in its message.
    pub fn into_vec(mut self) -> Vec<Candidate> {
        let total = self.total();
        if total <= self.cap {
            return self.items;
        }
        self.fold();
        let Some(o) = self.over.take() else {
            return self.items;
        };
        // A live dropped candidate makes the stand-in live, starting where
        // that one starts (so the source rule of `scan_texts` agrees).
        let (source, start) = o.live.unwrap_or((o.first_source, o.start));
        let span = Span::new(start, o.end.max(start));
        let stand_in = Candidate {
            mode: o.mode,
            source,
            span,
            raw: String::new(),
            name: None,
            arguments: Err(ParseFailure::new(
                FailureKind::Malformed,
                cap_message(total, self.cap, o.count),
                span.start,
            )),
            repairs: Vec::new(),
        };
        let at = self.items.len() - 1;
        self.items.insert(at, stand_in);
        self.items
    }
}

// A slice, not the `Vec`: nothing can be added past the cap's bookkeeping.
impl std::ops::Deref for Found {
    type Target = [Candidate];
    fn deref(&self) -> &[Candidate] {
        &self.items
    }
}

impl std::ops::DerefMut for Found {
    fn deref_mut(&mut self) -> &mut [Candidate] {
        &mut self.items
    }
}

fn cap_message(total: usize, cap: usize, dropped: usize) -> String {
    format!(
        "{total} candidates, more than the cap of {cap}: {dropped} of them (between candidates #{} and #{}) were not read",
        cap - 3,
        total - 1
    )
}

/// The candidate cap (see the module docs). `cap` below 3 is read as 3 (the
/// first candidate, the stand-in for the dropped ones, the last one).
/// Returns the true count before capping.
pub fn cap_candidates(found: &mut Vec<Candidate>, cap: usize) -> usize {
    let total = found.len();
    let cap = cap.max(3);
    if total <= cap {
        return total;
    }
    // Keep 0..cap-2 and the last; the ones in between become one stand-in.
    let last = found.pop();
    let dropped: Vec<Candidate> = found.drain(cap - 2..).collect();
    let live = dropped.iter().any(Candidate::is_live);
    let first = &dropped[0];
    let source = if live {
        dropped
            .iter()
            .find(|c| c.is_live())
            .map_or(first.source, |c| c.source)
    } else {
        first.source
    };
    let span = Span::new(
        dropped.iter().map(|c| c.span.start).min().unwrap_or(0),
        dropped.iter().map(|c| c.span.end).max().unwrap_or(0),
    );
    let message = cap_message(total, cap, dropped.len());
    found.push(Candidate {
        mode: first.mode.clone(),
        source,
        span,
        raw: String::new(),
        name: None,
        arguments: Err(ParseFailure::new(
            FailureKind::Malformed,
            message,
            span.start,
        )),
        repairs: Vec::new(),
    });
    found.extend(last);
    total
}

/// An extractor with its row's shared rules applied: every built-in row,
/// and every declared format ([`crate::declared`]), whose row is built from
/// its declaration.
pub(crate) struct Ruled {
    pub inner: Box<dyn Extractor>,
    pub row: Format,
}

impl Extractor for Ruled {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn example(&self) -> &str {
        self.inner.example()
    }
    fn describe(&self) -> &str {
        self.inner.describe()
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        let mut found = self.inner.extract(input, strictness);
        missing_closer(&self.row, input, &mut found);
        found
    }
    fn openers(&self) -> Option<&'static [&'static str]> {
        self.row.openers
    }
}

/// The missing-closer rule (see the module docs).
pub fn missing_closer(row: &Format, input: &Input<'_>, found: &mut [Candidate]) {
    missing_closer_of(
        row.blocks.iter().copied(),
        row.stop_token.map(|s| s.token),
        row.payload.reads_json_arguments(),
        input,
        found,
    );
}

/// The missing-closer rule for any (opener, closer) pairs and stop token
/// (a row's, through [`missing_closer`]). With a
/// JSON payload (`json`), a closer inside a JSON string after the opener
/// is not one ([`util::closer_outside_strings`], the extractors' rule).
pub fn missing_closer_of<'b>(
    blocks: impl IntoIterator<Item = (&'b str, &'b str)>,
    stop_token: Option<&str>,
    json: bool,
    input: &Input<'_>,
    found: &mut [Candidate],
) {
    // The rule only marks candidates: with none from the output, there is
    // nothing to search for.
    if !found.iter().any(|c| c.source == Source::Output) {
        return;
    }
    let text = input.output;
    for (open, close) in blocks {
        if open.is_empty() || close.is_empty() {
            continue;
        }
        let Some(o) = last_occurrence(text, open) else {
            continue;
        };
        // An XML element that closes itself (`<tool name="x"/>`) has no
        // closer to miss.
        if open.starts_with('<') && self_closed(text, o) {
            continue;
        }
        let from = o + open.len();
        let closed = if json {
            util::closer_outside_strings(text, from, usize::MAX, &mut false, |p| {
                util::find_from(text, close, p)
            })
            .is_some()
        } else {
            util::find_from(text, close, from).is_some()
        };
        if closed {
            continue;
        }
        if !input.hit_length_limit && stop_token == Some(close) {
            continue;
        }
        if let Some(c) = found
            .iter_mut()
            .rev()
            .find(|c| c.source == Source::Output && c.span.end > o)
            && c.arguments.is_ok()
        {
            c.arguments = Err(ParseFailure::new(
                FailureKind::Truncated,
                format!("output ends before `{close}`"),
                text.len(),
            ));
        }
    }
}

/// Whether the tag starting at `at` ends with `/>` (its first `>` follows
/// a `/`).
fn self_closed(text: &str, at: usize) -> bool {
    let b = text.as_bytes();
    memchr::memchr(b'>', b.get(at..).unwrap_or_default())
        .is_some_and(|i| i > 0 && b[at + i - 1] == b'/')
}

/// Where the last occurrence of `needle` starts in `text` (overlapping
/// occurrences included, as a reverse search finds them): forward searches
/// resumed one byte after each hit, with the thread's cached SIMD finder,
/// cost far less than a reverse search over the whole text, and openers
/// occur only a few times in an output.
fn last_occurrence(text: &str, needle: &str) -> Option<usize> {
    let finder = crate::find::finder(needle);
    let bytes = text.as_bytes();
    let mut last = None;
    let mut at = 0;
    while let Some(i) = bytes.get(at..).and_then(|rest| finder.find(rest)) {
        last = Some(at + i);
        at += i + 1;
    }
    last
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    #[test]
    fn the_last_occurrence_is_the_reverse_search_s_overlaps_included() {
        for (text, needle) in [
            ("a <x> b <x> c", "<x>"),
            ("aaaa", "aa"),
            ("no opener here", "<x>"),
            ("<x>", "<x>"),
            ("ééé<é>é", "<é>"),
        ] {
            assert_eq!(
                super::last_occurrence(text, needle),
                memchr::memmem::rfind(text.as_bytes(), needle.as_bytes()),
                "{text:?} {needle:?}"
            );
        }
    }

    use super::*;

    fn cand(i: usize, source: Source) -> Candidate {
        Candidate {
            mode: "m".into(),
            source,
            span: Span::new(i * 10, i * 10 + 5),
            raw: "x".into(),
            name: Some(format!("f{i}")),
            arguments: Ok(Default::default()),
            repairs: Vec::new(),
        }
    }

    #[test]
    fn the_cap_keeps_the_first_and_last_and_reports_the_true_count() {
        let mut found: Vec<Candidate> = (0..10).map(|i| cand(i, Source::Output)).collect();
        assert_eq!(cap_candidates(&mut found, 5), 10);
        assert_eq!(found.len(), 5);
        let names: Vec<_> = found.iter().map(|c| c.name.clone()).collect();
        assert_eq!(
            names,
            vec![
                Some("f0".into()),
                Some("f1".into()),
                Some("f2".into()),
                None,
                Some("f9".into())
            ]
        );
        let f = found[3].failure().unwrap();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert!(
            f.message
                .starts_with("10 candidates, more than the cap of 5: 6 of them"),
            "{}",
            f.message
        );
        assert_eq!(found[3].span, Span::new(30, 85));
        assert!(found[3].is_live());
        // Under the cap nothing changes.
        let mut few: Vec<Candidate> = (0..5).map(|i| cand(i, Source::Output)).collect();
        assert_eq!(cap_candidates(&mut few, 5), 5);
        assert!(few.iter().all(|c| c.call().is_some()));
    }

    #[test]
    fn found_gives_what_the_cap_gives_on_the_whole_list() {
        // Issue 22: the cap applied while scanning equals the cap applied
        // after it, for every length around the fold points and any mix of
        // live and reasoning candidates.
        for cap in [3, 4, 5, 10] {
            for n in 0..5 * cap {
                for pattern in 0..4usize {
                    let source = |i: usize| match pattern {
                        0 => Source::Output,
                        1 => Source::OutputReasoning,
                        2 if i.is_multiple_of(3) => Source::Output,
                        _ if i >= n / 2 => Source::Output,
                        _ => Source::ReasoningField,
                    };
                    let all: Vec<Candidate> = (0..n).map(|i| cand(i, source(i))).collect();
                    let mut want = all.clone();
                    cap_candidates(&mut want, cap);
                    let mut found = Found::with_cap(cap);
                    found.extend(all);
                    assert_eq!(found.total(), n);
                    let got = found.into_vec();
                    assert_eq!(got.len(), want.len(), "cap {cap} n {n} p {pattern}");
                    for (g, w) in got.iter().zip(&want) {
                        assert_eq!(g.name, w.name);
                        assert_eq!(g.is_live(), w.is_live(), "cap {cap} n {n} p {pattern}");
                        assert_eq!(
                            g.failure().map(|f| &f.message),
                            w.failure().map(|f| &f.message)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn dropped_reasoning_candidates_stay_reasoning() {
        let mut found: Vec<Candidate> = (0..10).map(|i| cand(i, Source::OutputReasoning)).collect();
        cap_candidates(&mut found, 4);
        assert_eq!(found.len(), 4);
        assert_eq!(found[2].source, Source::OutputReasoning);
    }
}
