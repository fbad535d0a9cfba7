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
//! A mode whose candidate may begin at byte 0 without a token (functionary
//! v3.2's bare `NAME\n{` first segment: [`crate::openers::start_rule`]) runs
//! when one of its tokens occurs or when its start rule, read over a whole
//! text, does not say `Never` (the rule streaming relies on: the openers
//! test checks that a candidate before the first token opens at byte 0 only
//! where the rule says so). Custom regex patterns and `native` (which reads
//! the server's `tool_calls`, not the text) always run.

use crate::table::Triggers;
use aho_corasick::{AhoCorasick, MatchKind};

/// The trigger tokens of a list of modes, compiled once.
pub struct Prefilter {
    /// Every distinct token, as one automaton; `None` when no mode has one.
    automaton: Option<AhoCorasick>,
    /// For each token (pattern id), the modes it can begin a candidate of.
    modes_of: Vec<Vec<usize>>,
    /// For each token (pattern id), the tokens that are prefixes of it
    /// (itself included): where it occurs, they do too.
    prefixes: Vec<Vec<usize>>,
    /// One-byte tokens, and the modes each can begin a candidate of.
    single: Vec<(u8, Vec<usize>)>,
    /// Bytes that trigger modes when a text begins with them (after
    /// whitespace, as the extractors skip it).
    leading: Vec<(u8, Vec<usize>)>,
    /// Modes that run whatever the text holds.
    always: Vec<bool>,
    /// Modes with a start rule ([`crate::openers::start_rule`]), which also
    /// run when a text may open a candidate at byte 0.
    starts: Vec<(usize, crate::openers::StartRule)>,
}

impl Prefilter {
    /// The prefilter of `modes` (in replay order).
    pub fn new(modes: &[&str]) -> Prefilter {
        let rows: Vec<Option<Triggers>> = modes
            .iter()
            .map(|mode| {
                // A row's own triggers, where its openers are too common.
                if let Some(t) = crate::table::row(mode).and_then(|r| r.triggers) {
                    return Some(t);
                }
                crate::openers::openers(mode)
                    .filter(|list| !list.is_empty() && *mode != "native")
                    .map(|tokens| Triggers {
                        tokens,
                        leading: None,
                    })
            })
            .collect();
        let mut p = Prefilter::of_triggers(&rows);
        // A mode whose candidate may begin at byte 0 without a token
        // (functionary v3.2's bare first segment) also runs where its start
        // rule allows one.
        p.starts = modes
            .iter()
            .enumerate()
            .filter_map(|(i, mode)| crate::openers::start_rule(mode).map(|r| (i, r)))
            .collect();
        p
    }

    /// The prefilter of modes given by their triggers (`None`: the mode
    /// always runs).
    fn of_triggers(rows: &[Option<Triggers>]) -> Prefilter {
        let mut tokens: Vec<&str> = Vec::new();
        let mut modes_of: Vec<Vec<usize>> = Vec::new();
        let mut always = vec![false; rows.len()];
        let mut leading: Vec<(u8, Vec<usize>)> = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            match row {
                Some(Triggers {
                    tokens: list,
                    leading: lead,
                }) => {
                    if let Some(byte) = lead {
                        match leading.iter_mut().find(|(b, _)| b == byte) {
                            Some((_, modes)) => modes.push(i),
                            None => leading.push((*byte, vec![i])),
                        }
                    }
                    for &token in list.iter() {
                        match tokens.iter().position(|t| *t == token) {
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
        let prefixes: Vec<Vec<usize>> = long_tokens
            .iter()
            .map(|t| {
                (0..long_tokens.len())
                    .filter(|&q| t.starts_with(long_tokens[q]))
                    .collect()
            })
            .collect();
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(&long_tokens)
            .ok();
        if automaton.is_none() {
            always.iter_mut().for_each(|a| *a = true);
        }
        Prefilter {
            automaton,
            modes_of,
            prefixes,
            single,
            leading,
            always,
            starts: Vec::new(),
        }
    }

    /// For each mode (the order given to [`Prefilter::new`]), whether it can
    /// find a candidate in any of `texts` (the output and the reasoning field).
    pub fn reachable(&self, texts: &[&str]) -> Vec<bool> {
        let mut out = self.always.clone();
        let Some(ac) = &self.automaton else {
            return out;
        };
        for (m, rule) in &self.starts {
            if texts.iter().any(|t| {
                let mut rule = *rule;
                rule.advance(t) != crate::openers::Start::Never
            }) && let Some(o) = out.get_mut(*m)
            {
                *o = true;
            }
        }
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
        // Every position where a token starts is reported, with the longest
        // token starting there (leftmost-longest, resuming one byte after
        // each match's start): the other tokens starting there are its
        // prefixes, and a token starting inside it is reported in turn. The
        // automaton's prefilter skips prose between matches; rescanning is
        // bounded by the longest token, so the pass stays linear.
        for (byte, modes) in &self.leading {
            if texts.iter().any(|t| {
                let b = t.as_bytes();
                b.get(crate::util::skip_ws(b, 0)) == Some(byte)
            }) {
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
            let mut at = 0;
            while left > 0 && at < text.len() {
                let input = aho_corasick::Input::new(*text).span(at..text.len());
                let Some(m) = ac.find(input) else { break };
                for &q in self
                    .prefixes
                    .get(m.pattern().as_usize())
                    .into_iter()
                    .flatten()
                {
                    if let Some(s) = seen.get_mut(q)
                        && !*s
                    {
                        *s = true;
                        left -= 1;
                    }
                }
                at = m.start() + 1;
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
        // `native` and custom patterns always run; functionary's start
        // rule says no call opens at byte 0 of these texts.
        let p = Prefilter::new(&["hermes", "kimi", "functionary", "native", "my_pattern"]);
        assert_eq!(
            p.reachable(&["plain prose"]),
            vec![false, false, false, true, true]
        );
        let h = Prefilter::new(&["harmony"]);
        assert_eq!(h.reachable(&["plain prose"]), vec![false]);
        assert_eq!(h.reachable(&["x <|channel|>commentary"]), vec![true]);
        assert_eq!(
            p.reachable(&["x <tool_call>{}"]),
            vec![true, false, false, true, true]
        );
        // The reasoning field counts as text too. (A text that is one
        // name-like word leaves functionary's rule undecided: it runs.)
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

    #[test]
    fn functionary_runs_on_its_tokens_or_where_its_start_rule_allows_a_call() {
        let p = Prefilter::new(&["functionary"]);
        assert_eq!(p.reachable(&["The weather is fine."]), vec![false]);
        assert_eq!(
            p.reachable(&["get_weather\n{\"city\": \"Oslo\"}"]),
            vec![true]
        );
        // Undecided at the end (a name and nothing after it): it runs.
        assert_eq!(p.reachable(&["get_weather"]), vec![true]);
        assert_eq!(p.reachable(&["prose", "get_weather\n{}"]), vec![true]);
        let token = crate::openers::openers("functionary").unwrap()[0];
        assert_eq!(p.reachable(&[&format!("prose {token}")]), vec![true]);
    }

    #[test]
    fn llama3_runs_on_its_tag_a_name_key_or_a_leading_brace_not_any_brace() {
        let p = Prefilter::new(&["llama3", "json"]);
        assert_eq!(
            p.reachable(&["prose with {braces} in it"]),
            vec![false, true]
        );
        assert_eq!(p.reachable(&[" \n {\"x\": 1}"]), vec![true, true]);
        assert_eq!(p.reachable(&["see {\"name\": \"f\"}"]), vec![true, true]);
        assert_eq!(
            p.reachable(&["x <|python_tag|>print(1)"]),
            vec![true, false]
        );
        // The reasoning field begins a text of its own.
        assert_eq!(p.reachable(&["prose", "{\"a\": 1}"]), vec![true, true]);
    }

    #[test]
    fn tokens_that_share_a_start_or_sit_inside_another_are_all_seen() {
        let t = |tokens: &'static [&'static str]| {
            Some(Triggers {
                tokens,
                leading: None,
            })
        };
        let rows = [
            t(&["<tool_call>"]),
            t(&["<tool_call"]),
            t(&["tool_call>"]),
            t(&["call"]),
            t(&["<tool_calls>"]),
        ];
        let p = Prefilter::of_triggers(&rows);
        assert_eq!(
            p.reachable(&["x <tool_call> y"]),
            vec![true, true, true, true, false]
        );
        assert_eq!(
            p.reachable(&["<tool_calls>"]),
            vec![false, true, false, true, true]
        );
        assert_eq!(
            p.reachable(&["<tool_cal", "l>"]),
            vec![false, false, false, false, false]
        );
        // Tokens overlapping across a match: `<tool_call` then `call>`-like.
        assert_eq!(
            p.reachable(&["<tool_<tool_call"]),
            vec![false, true, false, true, false]
        );
    }
}
