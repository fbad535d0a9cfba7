//! A built-in mode lends its name to its candidates (issue 24): no
//! allocation per candidate for `Candidate::mode`. Checked on every
//! built-in's own example, strict and lenient, and on a broken variant of
//! it (the failure paths build candidates too).

use std::borrow::Cow;
use toolgate_formats::{Input, Strictness, builtin};

#[test]
fn every_builtin_mode_lends_its_name_to_its_candidates() {
    let mut seen = 0;
    for m in builtin() {
        let example = m.example().to_string();
        let cut = &example[..example.floor_char_boundary(example.len() * 2 / 3)];
        for text in [example.as_str(), cut] {
            for strictness in [Strictness::Strict, Strictness::Lenient] {
                for c in m.extract(&Input::new(text), strictness) {
                    assert!(
                        matches!(c.mode, Cow::Borrowed(_)),
                        "{}: an owned mode on {text:?}",
                        m.name()
                    );
                    assert_eq!(c.mode, m.name());
                    seen += 1;
                }
            }
        }
    }
    // Every built-in's example reads as at least one candidate.
    assert!(seen >= builtin().len(), "{seen} candidates");
}
