//! One pass over an output that tells which modes can find anything in it.
//!
//! Every built-in mode's row names the tokens a candidate can begin with
//! ([`crate::openers`]; a table test checks, over every example and the
//! bundled corpus, that no candidate starts before the first of them). When
//! none of a mode's tokens occurs in the output or the reasoning field, the
//! mode finds nothing there, strict or lenient, and replay need not run it:
//! it gets the shared empty result. All the tokens of all the modes are found
//! in one Aho-Corasick pass (linear, no backtracking) instead of one search
//! per mode.
//!
//! A mode whose candidates may begin without a token (functionary v3.2's
//! bare `NAME\n{` first segment: [`crate::openers::start_rule`]; custom regex
//! patterns) and `native` (which reads the server's `tool_calls`, not the
//! text) always run.

use aho_corasick::{AhoCorasick, MatchKind};

/// The trigger tokens of a list of modes, compiled once.
pub struct Prefilter {
    /// Every distinct token, as one automaton; `None` when no mode has one.
    automaton: Option<AhoCorasick>,
    /// For each token (pattern id), the modes it can begin a candidate of.
    modes_of: Vec<Vec<usize>>,
    /// One-byte tokens, and the modes each can begin a candidate of.
    single: Vec<(u8, Vec<usize>)>,
    /// Modes that run whatever the text holds.
    always: Vec<bool>,
}

impl Prefilter {
    /// The prefilter of `modes` (in replay order).
    pub fn new(modes: &[&str]) -> Prefilter {
        let mut tokens: Vec<&'static str> = Vec::new();
        let mut modes_of: Vec<Vec<usize>> = Vec::new();
        let mut always = vec![false; modes.len()];
        for (i, mode) in modes.iter().enumerate() {
            // A mode whose candidate may begin at byte 0 without a token
            // (functionary v3.2's bare first segment) always runs.
            let start_rule = crate::openers::start_rule(mode).is_some();
            match crate::openers::openers(mode) {
                Some(list) if !list.is_empty() && *mode != "native" && !start_rule => {
                    for token in list {
                        match tokens.iter().position(|t| t == token) {
                            Some(at) => {
                                if let Some(m) = modes_of.get_mut(at) {
                                    m.push(i);
                                }
                            }
                            None => {
                                tokens.push(token);
                                modes_of.push(vec![i]);
                            }
                        }
                    }
                }
                _ => {
                    if let Some(a) = always.get_mut(i) {
                        *a = true;
                    }
                }
            }
        }
        // One-byte tokens (`{`, `[`) occur in most text: they are looked
        // for with memchr, which stops at the first, instead of making the
        // automaton report every occurrence.
        let (bytes, long): (Vec<usize>, Vec<usize>) =
            (0..tokens.len()).partition(|&i| tokens[i].len() == 1);
        let single: Vec<(u8, Vec<usize>)> = bytes
            .iter()
            .map(|&i| (tokens[i].as_bytes()[0], modes_of[i].clone()))
            .collect();
        let long_tokens: Vec<&str> = long.iter().map(|&i| tokens[i]).collect();
        let modes_of: Vec<Vec<usize>> = long.iter().map(|&i| modes_of[i].clone()).collect();
        // Building fails only past the automaton's size limits, which a few
        // hundred short tokens never reach; a failure would make every mode
        // run (no automaton), which is slower but never wrong.
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(&long_tokens)
            .ok();
        if automaton.is_none() {
            always.iter_mut().for_each(|a| *a = true);
        }
        Prefilter {
            automaton,
            modes_of,
            single,
            always,
        }
    }

    /// For each mode (the order given to [`Prefilter::new`]), whether it can
    /// find a candidate in any of `texts` (the output and the reasoning field).
    pub fn reachable(&self, texts: &[&str]) -> Vec<bool> {
        let mut out = self.always.clone();
        let Some(ac) = &self.automaton else {
            return out;
        };
        for (byte, modes) in &self.single {
            if texts
                .iter()
                .any(|t| memchr::memchr(*byte, t.as_bytes()).is_some())
            {
                for &m in modes {
                    if let Some(o) = out.get_mut(m) {
                        *o = true;
                    }
                }
            }
        }
        let mut seen = vec![false; self.modes_of.len()];
        let mut left = seen.len();
        for text in texts {
            if left == 0 {
                break;
            }
            for m in ac.find_overlapping_iter(*text) {
                if let Some(s) = seen.get_mut(m.pattern().as_usize())
                    && !*s
                {
                    *s = true;
                    left -= 1;
                    if left == 0 {
                        break;
                    }
                }
            }
        }
        for (token, modes) in seen.iter().zip(&self.modes_of) {
            if *token {
                for &m in modes {
                    if let Some(o) = out.get_mut(m) {
                        *o = true;
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_runs_only_when_one_of_its_tokens_is_there() {
        let p = Prefilter::new(&["hermes", "kimi", "functionary", "native", "my_pattern"]);
        assert_eq!(
            p.reachable(&["plain prose"]),
            vec![false, false, true, true, true]
        );
        let h = Prefilter::new(&["harmony"]);
        assert_eq!(h.reachable(&["plain prose"]), vec![false]);
        assert_eq!(h.reachable(&["x <|channel|>commentary"]), vec![true]);
        assert_eq!(
            p.reachable(&["x <tool_call>{}"]),
            vec![true, false, true, true, true]
        );
        // The reasoning field counts as text too.
        assert_eq!(
            p.reachable(&["prose", "<|tool_calls_section_begin|>"]),
            vec![false, true, true, true, true]
        );
    }

    #[test]
    fn overlapping_tokens_are_all_seen() {
        // `[` (bracket) inside `[TOOL_CALLS]` (mistral): both modes run.
        let p = Prefilter::new(&["bracket", "mistral"]);
        assert_eq!(p.reachable(&["[TOOL_CALLS]"]), vec![true, true]);
        assert_eq!(p.reachable(&["no brackets"]), vec![false, false]);
    }
}
