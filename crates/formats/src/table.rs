//! The table of wire formats: one row per built-in mode, with what the rest
//! of the project needs to know about it as data (SPEC §3, issue 8).
//!
//! A row says which model families emit the format, which engine (shape)
//! reads it, its opener / separator / closer tokens, whether a missing
//! closer may be a stop token a serving stack strips (and which stack), what
//! the payload is and how the name and arguments are spelled. The row feeds
//! `toolgate formats`, the docs and the cross-format test table
//! (`crates/validator/tests/formats_table.rs`), which runs the same semantic
//! cases (missing closer, missing closer with `finish_reason: "length"`,
//! double-encoded arguments, …) through every row.
//!
//! Each row is written in its format's own file ([`crate::format`]), beside
//! the extractor it names, its models and its profile; [`FORMATS`] is
//! derived from those files and [`row`] finds the row of a mode by name.
//!
//! Adding a format: one file `format/<mode>.rs` (its row, usually a few
//! lines of engine configuration, its models), its fixture folder under
//! `transcripts/` and its snapshots; the cross-format table then checks the
//! shared rules.

pub use crate::description::{Engine, Format, PayloadKind, Row, StopToken, Triggers};
// Named through this module by unit tests (`declared`, the tests below).
#[cfg(test)]
pub(crate) use crate::description::closer_cuts_of;

/// Every built-in mode, in replay order: the rows of the format files
/// ([`crate::format`]).
pub const FORMATS: &[Format] = crate::format::ROWS;

/// The row of mode `name`.
pub fn row(name: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_mode_has_one_row_in_replay_order() {
        let modes: Vec<String> = crate::builtin()
            .iter()
            .map(|e| e.name().to_string())
            .collect();
        let rows: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
        assert_eq!(modes, rows);
    }

    #[test]
    fn every_closer_run_ends_its_example_and_stop_tokens_are_last() {
        for f in FORMATS {
            let Some(e) = crate::by_name(f.name) else {
                panic!("no extractor for row {}", f.name);
            };
            let cuts = closer_cuts_of(e.example(), f.closers);
            assert_eq!(cuts.len(), f.closers.len(), "{}: closers not found", f.name);
            if let Some(s) = f.stop_token {
                assert_eq!(f.closers.last(), Some(&s.token), "{}", f.name);
            }
        }
    }

    #[test]
    fn raw_text_stays_within_each_candidates_span_in_every_row() {
        // Issue 9 item 7: a failed candidate's raw text is its own span, so
        // N cut-off calls cost O(N) bytes, not O(N²). Each row's example cut
        // before its first closer (or its last byte), repeated.
        for f in FORMATS {
            let e = crate::by_name(f.name).unwrap_or_else(|| panic!("{}", f.name));
            let ex = e.example();
            let cut = closer_cuts_of(ex, f.closers)
                .first()
                .copied()
                .unwrap_or(ex.len() - 1);
            let mut half = ex.len() / 2;
            while !ex.is_char_boundary(half) {
                half += 1;
            }
            for unit in [&ex[..cut], &ex[..half]] {
                let out = unit.repeat(500);
                for s in [crate::Strictness::Strict, crate::Strictness::Lenient] {
                    let found = e.extract(&crate::Input::new(&out), s);
                    let raw: usize = found.iter().map(|c| c.raw.len()).sum();
                    assert!(
                        raw <= 2 * out.len(),
                        "{}: {raw} raw bytes for a {}-byte output ({} candidates)",
                        f.name,
                        out.len(),
                        found.len()
                    );
                }
            }
        }
    }
}
