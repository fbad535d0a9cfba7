//! The literal tokens that can begin a candidate in each built-in mode, for
//! streaming: a gateway forwards model text as it arrives, holding back only
//! text that could be the start of one of these tokens, and buffers
//! everything from the first one it sees until the output is complete.
//!
//! [`openers`] is `None` for a mode whose candidates can begin anywhere
//! without a fixed token (custom regex patterns): such a mode cannot be
//! streamed safely, and the whole output is held. `Some(&[])` means the mode
//! never finds a candidate in the text (`native` reads the server's
//! `tool_calls`).
//!
//! One built-in mode has a candidate that begins without a token, but only
//! at the start of the output: Functionary v3.2's first segment, a bare
//! `NAME\n{…}` (the generation prompt wrote its `>>>`). [`StartRule`] decides
//! it from the first bytes: the output is held while it is still one
//! name-like word (and its line break), and streams by the tokens as soon as
//! it cannot be such a segment. `harmony`'s calls begin at a header token
//! (`<|start|>`, `<|channel|>`, `<|constrain|>`) or at the recipient's
//! `to=functions.` (the extractor starts the span there, not at prose before
//! the markup).
//!
//! The tokens are case-sensitive byte strings, as the extractors match them.
//! A table test checks, over every mode's example and the bundled corpus,
//! that no candidate starts before the first opener of its mode, except at
//! byte 0 when the mode's [`StartRule`] says a candidate opens there.

/// The tokens that can begin a candidate of `mode`; `None` when a candidate
/// can begin without a fixed token (hold the whole output), or when `mode` is
/// not a built-in mode.
pub fn openers(mode: &str) -> Option<&'static [&'static str]> {
    // The tokens live in the mode's row of the format table. Comments on
    // the less obvious rows: `json` is the whole trimmed output starting with
    // `{` or `[` (in lenient replay, also behind a stray code fence);
    // `llama3` reads bare `{"name": …}` objects anywhere; `llama4_pythonic`
    // also a bare pythonic list; `functionary` adds [`StartRule`].
    crate::table::row(mode)?.openers
}

/// What the token of an `open` at byte 0 decided by a [`StartRule`] is
/// called (it is not a literal token).
pub const START_SEGMENT: &str = "NAME\n{";

/// A candidate of a mode that can begin at byte 0 of the output without any
/// opener token; `None` for every other mode.
pub fn start_rule(mode: &str) -> Option<StartRule> {
    (mode == "functionary").then_some(StartRule::default())
}

/// What the first bytes of an output say about a candidate at byte 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// The text so far can still grow into one: hold it.
    Maybe,
    /// No candidate can begin at byte 0, whatever follows.
    Never,
    /// A candidate begins at byte 0.
    Opens,
}

/// Functionary v3.2's first segment, `NAME` + `\n` (or `\r\n`) + `{`, where
/// `NAME` is one or more of `[A-Za-z0-9_.-]` and not `all` (the extractor's
/// `v32`). Fed the growing output, it resumes where it stopped, so deciding
/// is linear however the output is split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StartRule {
    /// Bytes of the output read so far.
    at: usize,
    /// Where the name ended (`None`: still in it).
    name_end: Option<usize>,
    /// The decision, once it is not `Maybe`.
    decided: Option<Start>,
}

impl StartRule {
    /// Reads `text` (the whole output so far: every call extends the text of
    /// the last) from where the last call stopped.
    pub fn advance(&mut self, text: &str) -> Start {
        if let Some(d) = self.decided {
            return d;
        }
        let b = text.as_bytes();
        while self.at < b.len() {
            let c = b[self.at];
            let step = match self.name_end {
                None if is_name_byte(c) => None,
                None if self.at == 0 || &b[..self.at] == b"all" => Some(Start::Never),
                None => {
                    self.name_end = Some(self.at);
                    continue;
                }
                Some(end) => match (self.at - end, c) {
                    (0, b'\r') => None,
                    (0, b'\n') => None,
                    (1, b'\n') if b[end] == b'\r' => None,
                    (1, b'{') if b[end] == b'\n' => Some(Start::Opens),
                    (2, b'{') => Some(Start::Opens),
                    _ => Some(Start::Never),
                },
            };
            if let Some(d) = step {
                self.decided = Some(d);
                return d;
            }
            self.at += 1;
        }
        Start::Maybe
    }
}

/// The name bytes of Functionary's extractor.
fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{Start, openers, start_rule};
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
                let mut first = tokens
                    .iter()
                    .filter_map(|t| out.find(t))
                    .min()
                    .unwrap_or(out.len());
                if start_rule(mode.name()).is_some_and(|mut r| r.advance(out) == Start::Opens) {
                    first = 0;
                }
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
            let listed = openers(name).is_some();
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

#[cfg(test)]
mod start_tests {
    use super::{Start, StartRule, start_rule};

    fn decide(pieces: &[&str]) -> Vec<Start> {
        let mut r = StartRule::default();
        let mut text = String::new();
        pieces
            .iter()
            .map(|p| {
                text.push_str(p);
                r.advance(&text)
            })
            .collect()
    }

    #[test]
    fn functionary_v32_first_segment_is_decided_from_the_first_bytes() {
        use Start::*;
        assert_eq!(
            decide(&["get_", "time", "\n", "{\"a"]),
            [Maybe, Maybe, Maybe, Opens]
        );
        assert_eq!(decide(&["f\r", "\n", "{"]), [Maybe, Maybe, Opens]);
        assert_eq!(decide(&["Let", " me"]), [Maybe, Never]);
        assert_eq!(decide(&["<function=f>"]), [Never]);
        assert_eq!(decide(&[">>>f\n{}"]), [Never]);
        assert_eq!(decide(&["\nf\n{}"]), [Never]);
        assert_eq!(decide(&["all", "\n{}"]), [Maybe, Never]);
        assert_eq!(decide(&["allow\n{"]), [Opens]);
        assert_eq!(decide(&["python\n", "print(1)"]), [Maybe, Never]);
        assert_eq!(decide(&["f\r{"]), [Never]);
        assert_eq!(decide(&["f\n\n{"]), [Never]);
        // Once decided, more text changes nothing.
        assert_eq!(decide(&["a b", "\n{"]), [Never, Never]);
        assert_eq!(decide(&["", "x"]), [Maybe, Maybe]);
        assert!(start_rule("functionary").is_some());
        assert!(start_rule("hermes").is_none() && start_rule("harmony").is_none());
    }
}
