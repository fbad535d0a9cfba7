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
//! Each rule is linear: one reverse search per opener and one forward search
//! per closer over the output.

use crate::table::Format;
use crate::{Extractor, Input, Strictness, util};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Source};

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
    let text = input.output;
    for &(open, close) in row.blocks {
        let Some(o) = memchr::memmem::rfind(text.as_bytes(), open.as_bytes()) else {
            continue;
        };
        if util::find_from(text, close, o + open.len()).is_some() {
            continue;
        }
        if !input.hit_length_limit && row.stop_token.is_some_and(|s| s.token == close) {
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
