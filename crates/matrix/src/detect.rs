//! Detection: which wire format does each model emit?
//!
//! Per model (or per file for transcripts without a model): for each mode,
//! the share of outputs where it finds live candidates and its `pass` count;
//! the best mode, chosen as `auto` detects one (the mode whose live
//! candidates parse in the most outputs, else `native` when the server
//! returned calls none of which parse; ties: more passes, more outputs with candidates, then
//! `toolgate formats` order; never a mode that found nothing); how many outputs show "leaked" tool syntax (tool-call markup
//! outside reasoning that no text mode turns into a candidate); and the
//! recommended profile with its source: `auto`'s choice for the model
//! (`--profile`, `[models]`, the family table, else the profile reading the
//! best mode — a mode name when no built-in profile makes it primary — else
//! `default`). Every group gets a recommendation.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;
use toolgate_batch::Entry;
use toolgate_core::Transcript;
use toolgate_formats as formats;
use toolgate_validator::auto::{Detection, Source};
use toolgate_validator::{Auto, Chosen, Outcome, Profile};

/// One kind of markup that shows a tool call was meant: an opener of a
/// row of the format table, with text that must follow it.
struct Probe {
    /// The row's mode.
    mode: &'static str,
    /// Which of the row's openers.
    opener: usize,
    /// What must follow the opener (`<tool` then a space: not `<tools>`).
    then: &'static str,
}

/// The markup [`tool_markup`] looks for, as openers of the format table
/// ([`toolgate_formats::FORMATS`]), so no token is spelled twice.
const PROBES: [Probe; 8] = [
    probe("xml_call", 0, ""),
    probe("mistral", 0, ""),
    probe("llama3", 0, ""),
    probe("deepseek", 0, ""),
    probe("harmony", 1, "commentary to="),
    probe("functionary", 0, ""),
    probe("marker", 0, ""),
    probe("tag", 0, " "),
];

const fn probe(mode: &'static str, opener: usize, then: &'static str) -> Probe {
    Probe { mode, opener, then }
}

/// The prefix of several rows' call tokens (gemma's, granite's, kimi's,
/// lfm2's): a prefix, not any row's token, so it is written here.
const CALL_TOKEN_PREFIX: &str = "<|tool_call";

/// Markup that shows a tool call was meant, whatever the format: the
/// [`PROBES`] read from the format table, and [`CALL_TOKEN_PREFIX`].
pub fn tool_markup() -> &'static [String] {
    static MARKUP: LazyLock<Vec<String>> = LazyLock::new(|| {
        let mut out: Vec<String> = PROBES
            .iter()
            .filter_map(|p| {
                let opener = formats::row(p.mode)?.openers?.get(p.opener)?;
                Some(format!("{opener}{}", p.then))
            })
            .collect();
        out.insert(3, CALL_TOKEN_PREFIX.to_string());
        out
    });
    &MARKUP
}

/// What detect keeps of one replay.
pub struct Seen {
    /// Per mode (engine order): live candidates found, label is `pass`.
    pub modes: Vec<(String, bool, bool)>,
    /// Markup present but no text mode found a live candidate.
    pub leaked: bool,
    /// What auto's detection counts of this output.
    pub detection: Detection,
}

/// What detect keeps of one replay (run on the batch's workers).
pub fn seen(t: &Transcript, outcome: &Outcome<'_>) -> Seen {
    let mut detection = Detection::default();
    detection.add_outcome(outcome);
    let modes: Vec<(String, bool, bool)> = outcome
        .strict
        .iter()
        .map(|m| (m.mode.to_string(), m.found, m.label.is_pass()))
        .collect();
    let found_in_text = modes
        .iter()
        .any(|(mode, found, _)| *found && mode != "native");
    let markup = outside_reasoning(&t.output)
        .any(|text| tool_markup().iter().any(|m| text.contains(m.as_str())));
    Seen {
        modes,
        leaked: markup && !found_in_text,
        detection,
    }
}

/// The parts of `output` outside its reasoning spans: markup a model wrote
/// while thinking is a reasoning-only call (reported as such), not leaked
/// tool syntax.
fn outside_reasoning(output: &str) -> impl Iterator<Item = &str> {
    let spans = toolgate_formats::reasoning_spans(output);
    let mut bounds = Vec::with_capacity(spans.len() + 1);
    let mut at = 0;
    for s in spans {
        bounds.push((at, s.start.max(at)));
        at = s.end.max(at);
    }
    bounds.push((at, output.len()));
    bounds
        .into_iter()
        .filter_map(move |(a, b)| output.get(a..b))
}

/// Per-mode counts in one group.
#[derive(Default, Clone)]
pub struct ModeStats {
    /// Outputs where the mode finds live candidates.
    pub found: usize,
    /// Outputs it labels `pass`.
    pub passes: usize,
}

/// One group (a model or a file).
#[derive(Default)]
pub struct Group {
    /// Outputs in the group.
    pub n: usize,
    /// Outputs with leaked tool syntax ([`Seen::leaked`]).
    pub leaked: usize,
    /// Per mode, engine order.
    pub modes: Vec<(String, ModeStats)>,
    detection: Detection,
}

impl Group {
    /// Counts one output.
    pub fn add(&mut self, seen: &Seen) {
        self.n += 1;
        self.leaked += usize::from(seen.leaked);
        self.detection.merge(&seen.detection);
        for (mode, found, pass) in &seen.modes {
            let i = match self.modes.iter().position(|(m, _)| m == mode) {
                Some(i) => i,
                None => {
                    self.modes.push((mode.clone(), ModeStats::default()));
                    self.modes.len() - 1
                }
            };
            if let Some((_, stats)) = self.modes.get_mut(i) {
                stats.found += usize::from(*found);
                stats.passes += usize::from(*pass);
            }
        }
    }

    /// The counts of `mode` (zero when the group never saw it).
    pub fn stats(&self, mode: &str) -> ModeStats {
        self.modes
            .iter()
            .find(|(m, _)| m == mode)
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    /// The best mode, as `auto` detects it, with its passes.
    pub fn best_mode(&self) -> Option<(&str, usize)> {
        let mode = self.detection.best()?;
        Some((mode, self.stats(mode).passes))
    }

    /// The recommended profile: `auto`'s choice for the model; for a group
    /// of one file without a model, the profile reading its best mode.
    pub fn recommend(&self, auto: &Auto, model: Option<&str>) -> Chosen {
        if model.is_some() || auto.is_given() {
            return auto.choose(model, Some(&self.detection));
        }
        match self.detection.best() {
            Some(mode) => Chosen {
                profile: Profile::reading(mode),
                source: Source::Detected {
                    transcripts: self.detection.transcripts(),
                },
            },
            None => Chosen {
                profile: Profile::default(),
                source: Source::Default,
            },
        }
    }
}

/// `part` of `n` as a fraction (0 for an empty group).
pub fn share(part: usize, n: usize) -> f64 {
    if n == 0 { 0.0 } else { part as f64 / n as f64 }
}

/// How detect groups outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupBy {
    /// By model; transcripts without a model by file.
    Model,
    /// Always by file.
    File,
}

/// The groups of a collected batch, keyed (is a file, name): models first,
/// then files, each in name order.
pub fn groups(entries: &[Entry<Seen>], by: GroupBy) -> BTreeMap<(bool, String), Group> {
    let mut groups: BTreeMap<(bool, String), Group> = BTreeMap::new();
    for entry in entries {
        let Entry::Done {
            transcript: t,
            value,
        } = entry
        else {
            continue;
        };
        // Models first, then files without a model.
        let key = match (&t.model, by) {
            (Some(model), GroupBy::Model) => (false, model.clone()),
            _ => (true, t.path.display().to_string()),
        };
        groups.entry(key).or_default().add(value);
    }
    groups
}

/// A group's record in `toolgate detect --format json`.
pub fn group_json(is_file: bool, name: &str, g: &Group, auto: &Auto) -> Value {
    let modes: Map<String, Value> = g
        .modes
        .iter()
        .map(|(mode, s)| {
            let share = (share(s.found, g.n) * 10_000.0).round() / 10_000.0;
            (
                mode.clone(),
                json!({"found_share": share, "found": s.found, "passes": s.passes}),
            )
        })
        .collect();
    let chosen = g.recommend(auto, (!is_file).then_some(name));
    let (best, best_passes) = match g.best_mode() {
        Some((m, p)) => (Value::String(m.to_string()), p),
        None => (Value::Null, 0),
    };
    json!({
        "model": if is_file { Value::Null } else { Value::String(name.to_string()) },
        "file": if is_file { Value::String(name.to_string()) } else { Value::Null },
        "n": g.n,
        "modes": modes,
        "best_mode": best,
        "best_mode_passes": best_passes,
        "leaked": g.leaked,
        "recommended_profile": chosen.profile.name,
        "profile_source": chosen.source.kind(),
        "profile_source_detail": chosen.source.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markup_is_read_from_the_format_table() {
        // The list detect used when it spelled the tokens itself: the
        // leaked counts do not change.
        assert_eq!(
            tool_markup(),
            [
                "<tool_call",
                "[TOOL_CALLS]",
                "<|python_tag|>",
                "<|tool_call",
                "<｜tool▁calls▁begin｜>",
                "<|channel|>commentary to=",
                "<function=",
                "TOOL_CALL",
                "<tool ",
            ]
        );
    }

    #[test]
    fn markup_inside_reasoning_is_not_leaked() {
        let outside: Vec<&str> =
            outside_reasoning("a<think><tool_call>{}</tool_call></think>b <tool_call>").collect();
        assert_eq!(outside, vec!["a", "b <tool_call>"]);
        let outside: Vec<&str> = outside_reasoning("plan</think>answer").collect();
        assert_eq!(outside, vec!["", "answer"]);
    }
}
