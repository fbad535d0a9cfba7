//! The cells of the conformance matrix: what matrix keeps of each replay
//! ([`Judged`]), the grouping keys ([`Key`]) and the aggregation of a batch
//! into cells ([`aggregate`]).

use crate::stats;
use std::collections::BTreeMap;
use toolgate_batch::Entry;
use toolgate_core::{Label, Transcript};
use toolgate_validator::{Chosen, FindingKind, Outcome};

/// A grouping key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Key {
    /// The transcript's `model`.
    Model,
    /// The transcript's `task`.
    Task,
    /// The transcript's `sample`.
    Sample,
    /// The file the transcript came from.
    File,
    /// Each of the transcript's `tags` (a transcript counts in every one).
    Tag,
    /// Every mode (parser sensitivity); implies `model`.
    Mode,
}

impl Key {
    /// The key's name (`model`, `task`, …).
    pub fn name(self) -> &'static str {
        match self {
            Key::Model => "model",
            Key::Task => "task",
            Key::Sample => "sample",
            Key::File => "file",
            Key::Tag => "tag",
            Key::Mode => "mode",
        }
    }

    /// The `--by` keys as the matrix groups by them: each once, in the
    /// order given, `model` first when `mode` is asked for without it
    /// (parser sensitivity is per model).
    pub fn normalize(given: &[Key]) -> Vec<Key> {
        let mut by = Vec::new();
        if given.contains(&Key::Mode) && !given.contains(&Key::Model) {
            by.push(Key::Model);
        }
        for &k in given {
            if !by.contains(&k) {
                by.push(k);
            }
        }
        by
    }

    /// The transcript's values for this key: one, or one per tag.
    pub fn values(self, t: &Transcript, mode: &str) -> Vec<String> {
        if self != Key::Tag {
            return vec![self.value(t, mode)];
        }
        let mut tags: Vec<String> = t.tags().map(String::from).collect();
        tags.dedup();
        if tags.is_empty() {
            tags.push("-".into());
        }
        tags
    }

    /// The key's value; `mode` is the mode itself (`--by mode`).
    pub fn value(self, t: &Transcript, mode: &str) -> String {
        let missing = || "-".to_string();
        match self {
            Key::Model => t.model.clone().unwrap_or_else(missing),
            Key::Task => t.task.clone().unwrap_or_else(missing),
            Key::Sample => t.sample.map_or_else(missing, |s| s.to_string()),
            Key::File => t.path.display().to_string(),
            Key::Tag => self.values(t, mode).join(","),
            Key::Mode => mode.to_string(),
        }
    }
}

/// One cell of the matrix.
pub struct Cell {
    /// The cell's value of each grouping key, in `--by` order.
    pub keys: Vec<String>,
    /// Transcripts with each label.
    pub labels: BTreeMap<Label, usize>,
    /// Passes and n per (model, task): the repeated samples of one question.
    pub units: BTreeMap<(String, String), stats::Unit>,
    /// Transcripts with each server finding.
    pub findings: BTreeMap<FindingKind, usize>,
    /// The profiles that judged the cell: (name, source kind, source detail)
    /// → transcripts.
    pub profiles: BTreeMap<(String, String, String), usize>,
    /// Transcripts whose lenient label differs from the strict one (`--by mode`).
    pub lenient_changed: usize,
}

impl Cell {
    /// Transcripts in the cell.
    pub fn n(&self) -> usize {
        self.labels.values().sum()
    }
    /// Transcripts labeled `pass`.
    pub fn passes(&self) -> usize {
        self.labels.get(&Label::Pass).copied().unwrap_or(0)
    }
    /// The cell's repeated samples ([`stats::samples`]).
    pub fn samples(&self) -> stats::Samples {
        stats::samples(self.units.values())
    }

    /// The profile name, source kind and source detail; several profiles
    /// (a cell mixing models) are listed, the source then `per model`.
    pub fn profile(&self) -> (String, String, String) {
        let mut it = self.profiles.keys();
        match (it.next(), it.next()) {
            (Some(one), None) => one.clone(),
            (None, _) => ("-".into(), "-".into(), "-".into()),
            _ => {
                let mut names: Vec<&str> = self.profiles.keys().map(|k| k.0.as_str()).collect();
                names.dedup();
                let details: Vec<String> = self
                    .profiles
                    .iter()
                    .map(|(k, n)| format!("{}: {} ×{n}", k.0, k.2))
                    .collect();
                (names.join(", "), "per model".into(), details.join("; "))
            }
        }
    }
}

/// The cells of a matrix, by their keys.
pub type Cells = BTreeMap<Vec<String>, Cell>;

/// The cells whose pass rate is below `rate` (`--fail-under`), with their
/// rate, in key order.
pub fn under(cells: &Cells, rate: f64) -> Vec<(&Cell, f64)> {
    cells
        .values()
        .map(|c| (c, c.passes() as f64 / c.n().max(1) as f64))
        .filter(|&(_, r)| r < rate)
        .collect()
}

/// Leaves out the proxy recordings of exchanges cut short
/// ([`toolgate_batch::cut_short`]): not model answers. Returns how many.
pub fn drop_cut_short(entries: &mut Vec<Entry<Judged>>) -> usize {
    let before = entries.len();
    entries.retain(|e| match e {
        Entry::Done { transcript, .. } => toolgate_batch::cut_short(transcript).is_none(),
        _ => true,
    });
    before - entries.len()
}

/// The profile that judged a cell: (name, source kind, source detail).
type JudgedBy = (String, String, String);

/// One judgment of a transcript: (mode, label, profile, lenient label
/// differs). Several per transcript with `--by mode`.
type Item<'a> = (&'a str, Label, JudgedBy, bool);

/// The cells of `entries` grouped by `by` (a transcript with several tags
/// counts once in each tag's cell; with `--by mode`, once per mode).
pub fn aggregate(by: &[Key], entries: &[Entry<Judged>]) -> Cells {
    let by_mode = by.contains(&Key::Mode);
    let mut cells = Cells::new();
    for entry in entries {
        let Entry::Done {
            transcript: t,
            value: j,
        } = entry
        else {
            continue;
        };
        let items: Vec<Item<'_>> = if by_mode {
            j.modes
                .iter()
                .map(|(mode, strict, lenient)| {
                    let profile = (mode.clone(), "mode".to_string(), "--by mode".to_string());
                    (mode.as_str(), *strict, profile, strict != lenient)
                })
                .collect()
        } else {
            let profile = (j.profile.clone(), j.source.clone(), j.source_detail.clone());
            vec![("", j.label, profile, false)]
        };
        let unit = (Key::Model.value(t, ""), Key::Task.value(t, ""));
        for (mode, label, profile, changed) in items {
            let mut combos: Vec<Vec<String>> = vec![Vec::new()];
            for k in by {
                let values = k.values(t, mode);
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        values.iter().map(move |v| {
                            let mut c = c.clone();
                            c.push(v.clone());
                            c
                        })
                    })
                    .collect();
            }
            for keys in combos {
                let cell = cells.entry(keys.clone()).or_insert_with(|| Cell {
                    keys,
                    labels: BTreeMap::new(),
                    units: BTreeMap::new(),
                    findings: BTreeMap::new(),
                    profiles: BTreeMap::new(),
                    lenient_changed: 0,
                });
                *cell.labels.entry(label).or_insert(0) += 1;
                for kind in &j.findings {
                    *cell.findings.entry(*kind).or_insert(0) += 1;
                }
                *cell.profiles.entry(profile.clone()).or_insert(0) += 1;
                cell.lenient_changed += usize::from(changed);
                let u = cell.units.entry(unit.clone()).or_default();
                u.n += 1;
                u.passes += usize::from(label.is_pass());
            }
        }
    }
    if by_mode {
        // A (model, mode) whose every cell is all `no_call`, strict and
        // lenient, says nothing about the parser: leave it out.
        let model_at = by.iter().position(|k| *k == Key::Model).unwrap_or(0);
        let mode_at = by.iter().position(|k| *k == Key::Mode).unwrap_or(0);
        let pair = |keys: &[String]| {
            (
                keys.get(model_at).cloned().unwrap_or_default(),
                keys.get(mode_at).cloned().unwrap_or_default(),
            )
        };
        let mut speaks: std::collections::HashSet<(String, String)> = Default::default();
        for (keys, c) in &cells {
            if c.lenient_changed > 0 || c.labels.keys().any(|l| *l != Label::NoCall) {
                speaks.insert(pair(keys));
            }
        }
        cells.retain(|keys, _| speaks.contains(&pair(keys)));
    }
    cells
}

/// What matrix keeps of one replay.
pub struct Judged {
    label: Label,
    profile: String,
    source: String,
    source_detail: String,
    /// Per mode: (mode, strict label, lenient label), only with `--by mode`.
    modes: Vec<(String, Label, Label)>,
    /// The transcript's server findings, each kind once.
    pub findings: Vec<FindingKind>,
}

impl Judged {
    /// The profile's label.
    pub fn label(&self) -> Label {
        self.label
    }
}

/// What matrix keeps of one replay (run on the batch's workers); the
/// modes' own labels only when `by_mode` (`--by mode`).
pub fn summarize(replay: &Outcome<'_>, chosen: &Chosen, by_mode: bool) -> Judged {
    let modes = if by_mode {
        replay
            .strict
            .iter()
            .zip(&replay.lenient)
            .map(|(s, l)| (s.mode.to_string(), s.label, l.label))
            .collect()
    } else {
        Vec::new()
    };
    let mut findings: Vec<FindingKind> = replay.findings.iter().map(|f| f.kind).collect();
    findings.sort();
    findings.dedup();
    Judged {
        label: replay.profile.label,
        profile: chosen.profile.name.clone(),
        source: chosen.source.kind().into(),
        source_detail: chosen.source.to_string(),
        modes,
        findings,
    }
}

/// `x` rounded to four decimals (the JSON and CSV figures).
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_brings_model_first_and_keys_come_once() {
        assert_eq!(Key::normalize(&[Key::Mode]), [Key::Model, Key::Mode]);
        assert_eq!(
            Key::normalize(&[Key::Task, Key::Model, Key::Task, Key::Mode]),
            [Key::Task, Key::Model, Key::Mode]
        );
        assert_eq!(
            Key::normalize(&[Key::Tag, Key::File]),
            [Key::Tag, Key::File]
        );
    }

    #[test]
    fn under_names_the_cells_below_the_rate() {
        let cell = |key: &str, passes: usize, n: usize| {
            let mut labels = BTreeMap::new();
            labels.insert(Label::Pass, passes);
            labels.insert(Label::NoCall, n - passes);
            Cell {
                keys: vec![key.to_string()],
                labels,
                units: BTreeMap::new(),
                findings: BTreeMap::new(),
                profiles: BTreeMap::new(),
                lenient_changed: 0,
            }
        };
        let cells: Cells = [cell("a", 4, 5), cell("b", 2, 5), cell("c", 5, 5)]
            .into_iter()
            .map(|c| (c.keys.clone(), c))
            .collect();
        let under: Vec<(&str, f64)> = under(&cells, 0.8)
            .into_iter()
            .map(|(c, r)| (c.keys[0].as_str(), r))
            .collect();
        assert_eq!(under, [("b", 0.4)]);
    }
}
