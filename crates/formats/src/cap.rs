//! The candidate cap (issue 9), one rule for every mode: at most [`crate::Input::max_candidates`]
//! candidates per mode per output ([`DEFAULT_MAX_CANDIDATES`] unless the
//! caller sets another), applied by [`cap_candidates`] wherever candidates
//! are handed to the validator (replay and the pipeline, built-in and
//! custom modes alike). Past the cap the first `cap - 2` candidates and the
//! last one are kept, and the ones between are replaced by one `malformed`
//! candidate whose message gives the true count and says the cap was hit:
//! count rules see at least `cap` candidates, a cut-off last call still
//! decides `truncation`, and a capped mode never executes (its `parse` gate
//! fails).
//!
//! Extractors enforce the cap while they scan (issue 22): they collect
//! their candidates in a [`Found`], which folds the candidates past the
//! cap into the stand-in as it goes, so an extractor's memory is bounded
//! by the cap, not by the output (10 MB of `[f(` held 3.5 million
//! candidates before being capped). [`Found::into_vec`] gives exactly what
//! [`cap_candidates`] gives on the uncapped list, so the later cap is a
//! no-op for built-in modes.

use std::cell::RefCell;
use toolgate_core::{Candidate, FailureKind, ParseFailure, Source, Span};

/// How many candidates one mode may report for one output by default
/// (defined beside [`crate::Input`], whose default it is).
pub use crate::input::DEFAULT_MAX_CANDIDATES;

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
    mode: std::borrow::Cow<'static, str>,
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

    /// [`Found::extend`] by a vector, taken as it is when nothing was found
    /// before it (no copy into a second vector; the same items).
    pub fn extend_vec(&mut self, more: Vec<Candidate>) {
        if self.items.is_empty() && self.over.is_none() && more.len() < 2 * self.cap {
            self.items = more;
        } else {
            self.extend(more);
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
        let stand_in = stand_in(o.mode, source, span, cap_message(total, self.cap, o.count));
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

/// The candidate that stands in for the dropped ones: `malformed`, with
/// `message` (see [`cap_message`]) as its failure.
fn stand_in(
    mode: std::borrow::Cow<'static, str>,
    source: Source,
    span: Span,
    message: String,
) -> Candidate {
    Candidate {
        mode,
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
    found.push(stand_in(first.mode.clone(), source, span, message));
    found.extend(last);
    total
}
