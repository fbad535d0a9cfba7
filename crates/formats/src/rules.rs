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
//! Each rule is linear: one reverse search per opener and one forward search
//! per closer over the output.

use crate::table::Format;
use crate::{Extractor, Input, Strictness, util};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Source, Span};

/// How many candidates one mode may report for one output by default.
pub const DEFAULT_MAX_CANDIDATES: usize = 1_000;

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
    let message = format!(
        "{total} candidates, more than the cap of {cap}: {} of them (between candidates #{} and #{}) were not read",
        dropped.len(),
        cap - 3,
        total - 1
    );
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

/// A built-in extractor with its row's shared rules applied.
pub(crate) struct Ruled {
    pub inner: Box<dyn Extractor>,
    pub row: &'static Format,
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
        missing_closer(self.row, input, &mut found);
        found
    }
}

/// The missing-closer rule (see the module docs).
pub fn missing_closer(row: &Format, input: &Input<'_>, found: &mut [Candidate]) {
    missing_closer_of(
        row.blocks.iter().copied(),
        row.stop_token.map(|s| s.token),
        input,
        found,
    );
}

/// The missing-closer rule for any (opener, closer) pairs and stop token:
/// built-in rows and declared formats ([`crate::declared`]) alike.
pub fn missing_closer_of<'b>(
    blocks: impl IntoIterator<Item = (&'b str, &'b str)>,
    stop_token: Option<&str>,
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
        if util::find_from(text, close, o + open.len()).is_some() {
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
    fn dropped_reasoning_candidates_stay_reasoning() {
        let mut found: Vec<Candidate> = (0..10).map(|i| cand(i, Source::OutputReasoning)).collect();
        cap_candidates(&mut found, 4);
        assert_eq!(found.len(), 4);
        assert_eq!(found[2].source, Source::OutputReasoning);
    }
}
