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
//!   candidates per mode per output, enforced while extractors scan; see
//!   [`crate::cap`].
//!
//! Each rule is linear: one reverse search per opener and one forward search
//! per closer over the output.

use crate::table::Format;
use crate::{Extractor, Input, Strictness, util};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Source};

// Named through this module by the engines' unit tests; production code
// reaches the cap through `crate::cap` and `crate::extract`.
#[cfg(test)]
pub(crate) use crate::cap::{DEFAULT_MAX_CANDIDATES, Found, cap_candidates};

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
    use toolgate_core::Span;

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
