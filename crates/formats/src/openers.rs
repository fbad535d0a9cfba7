//! The literal tokens that can begin a candidate in each built-in mode, for
//! streaming: a gateway forwards model text as it arrives, holding back only
//! text that could be the start of one of these tokens, and buffers
//! everything from the first one it sees until the output is complete.
//!
//! [`openers`] is `None` for a mode whose candidates can begin without any
//! fixed token (Functionary v3.2's bare `NAME\n{…}`, harmony's header without
//! `<|channel|>`, custom regex patterns): such a mode cannot be streamed
//! safely, and the whole output is held. `Some(&[])` means the mode never
//! finds a candidate in the text (`native` reads the server's `tool_calls`).
//!
//! The tokens are case-sensitive byte strings, as the extractors match them.
//! A table test checks, over every mode's example and the bundled corpus,
//! that no candidate starts before the first opener of its mode.

/// The tokens that can begin a candidate of `mode`; `None` when a candidate
/// can begin without a fixed token (hold the whole output), or when `mode` is
/// not a built-in mode.
pub fn openers(mode: &str) -> Option<&'static [&'static str]> {
    // The tokens live in the mode's row of the format table. Comments on
    // the less obvious rows: `json` is the whole trimmed output starting with
    // `{` or `[` (in lenient replay, also behind a stray code fence);
    // `llama3` reads bare `{"name": …}` objects anywhere; `llama4_pythonic`
    // also a bare pythonic list; `functionary` v3.2 starts the output with a
    // bare `NAME\n{…}` and harmony's header may stand without
    // `<|channel|>`, so both are `None`.
    crate::table::row(mode)?.openers
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::openers;
    use crate::{Input, Strictness, builtin};
    use toolgate_core::Source;

    /// The outputs of every bundled transcript (read through the loader the
    /// CLI uses), plus every mode's example.
    fn corpus() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../transcripts");
        let mut outputs: Vec<String> = toolgate_core::load_paths(&[root])
            .into_iter()
            .filter_map(Result::ok)
            .map(|t| t.output)
            .collect();
        outputs.extend(builtin().iter().map(|e| e.example().to_string()));
        outputs
    }

    #[test]
    fn no_candidate_starts_before_the_first_opener_of_its_mode() {
        let outputs = corpus();
        let mut bad = Vec::new();
        assert!(
            outputs.len() > 100,
            "the corpus was found: {}",
            outputs.len()
        );
        for mode in builtin() {
            let Some(tokens) = openers(mode.name()) else {
                continue;
            };
            for out in &outputs {
                let first = tokens
                    .iter()
                    .filter_map(|t| out.find(t))
                    .min()
                    .unwrap_or(out.len());
                for s in [Strictness::Strict, Strictness::Lenient] {
                    for c in mode.extract(&Input::new(out), s) {
                        if matches!(c.source, Source::Output | Source::OutputReasoning)
                            && c.span.start < first
                        {
                            bad.push(format!(
                                    "{} ({s:?}): a candidate at {} before the first opener at {first} in {out:?}",
                                    mode.name(),
                                    c.span.start
                                ));
                        }
                    }
                }
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn every_builtin_mode_is_in_the_table() {
        for mode in builtin() {
            let name = mode.name();
            let listed = openers(name).is_some() || matches!(name, "functionary" | "harmony");
            // Folded into the format table (issue 8): the row is the source.
            assert_eq!(
                openers(name),
                crate::table::row(name).and_then(|r| r.openers)
            );
            assert!(listed, "{name} has no openers entry");
        }
        assert_eq!(openers("native"), Some(&[][..]));
        assert_eq!(openers("my_custom_pattern"), None);
    }
}
