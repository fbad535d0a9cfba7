//! What a transcript's stored `labels` hold ([`StoredLabels`]), and how they
//! are compared.
//!
//! One rule shared by `label --write`/`--check`, the inspector's accept key
//! and the corpus snapshots, so that relabeling and review agree:
//!
//! - The labels a reviewer needs are those of the modes whose strict or
//!   lenient label is not the one reading nothing gives ([`quiet_label`]:
//!   `no_call`, or `pass` when the transcript expects no call) — see
//!   [`reviewed`]: a new format changes only the transcripts it reads.
//! - `--write` stores ([`to_store`]) the strict label of every such mode,
//!   plus every mode already stored (a hand-written `no_call` intent stays,
//!   and a label that became `no_call` shows as a changed line, not a vanished
//!   one), in engine order; a stored mode that was not replayed (a custom
//!   pattern without `--patterns`) keeps its stored label, after the rest.
//! - `--check` ([`differences`]) reports exactly what `--write` would change:
//!   a stored label that differs, and a mode that now needs a label but has
//!   none stored. Stored modes that were not replayed are not compared
//!   ([`not_replayed`]). A transcript with no stored `labels` is not
//!   compared at all.
//!
//! So `--write` on a corpus whose labels are current changes nothing, and
//! after `--write`, `--check` finds nothing.

use crate::{Expectation, Label, StoredLabels};

/// The label of a mode that finds no live candidate (SPEC §5 rules 1–4):
/// `pass` when the transcript expects no call, else `no_call`.
pub fn quiet_label(expect: Option<&Expectation>) -> Label {
    match expect {
        Some(e) if e.calls.is_empty() => Label::Pass,
        _ => Label::NoCall,
    }
}

/// Labels to store for one transcript: mode → label name, in display order.
pub type LabelMap = Vec<(String, String)>;

/// A replay's label of every mode, in engine order.
pub type ModeLabels = Vec<(String, Label)>;

/// Whether a mode's labels are worth storing and reviewing.
fn needs_review(strict: Label, lenient: Option<Label>, quiet: Label) -> bool {
    strict != quiet || lenient.is_some_and(|l| l != quiet)
}

/// The modes whose strict or lenient label is not `quiet` (see
/// [`quiet_label`]), in `strict`'s (engine) order.
pub fn reviewed<'a>(
    strict: &'a [(String, Label)],
    lenient: &[(String, Label)],
    quiet: Label,
) -> Vec<&'a str> {
    strict
        .iter()
        .filter(|(mode, label)| needs_review(*label, find(lenient, mode), quiet))
        .map(|(mode, _)| mode.as_str())
        .collect()
}

fn find(labels: &[(String, Label)], mode: &str) -> Option<Label> {
    labels.iter().find(|(m, _)| m == mode).map(|(_, l)| *l)
}

/// What `label --write` stores, given the replay's labels and the stored
/// `labels` member (`None` when there is none).
pub fn to_store(
    strict: &[(String, Label)],
    lenient: &[(String, Label)],
    quiet: Label,
    stored: Option<&StoredLabels>,
) -> LabelMap {
    let is_stored = |mode: &str| stored.is_some_and(|s| s.contains_key(mode));
    let mut out: LabelMap = strict
        .iter()
        .filter(|(mode, label)| is_stored(mode) || needs_review(*label, find(lenient, mode), quiet))
        .map(|(mode, label)| (mode.clone(), label.as_str().to_string()))
        .collect();
    for (mode, label) in not_replayed_entries(strict, stored) {
        out.push((mode.to_string(), label.to_string()));
    }
    out
}

fn not_replayed_entries<'a>(
    strict: &[(String, Label)],
    stored: Option<&'a StoredLabels>,
) -> Vec<(&'a str, &'a str)> {
    stored
        .into_iter()
        .flat_map(StoredLabels::in_file_order)
        .filter(|(mode, _)| find(strict, mode).is_none())
        .map(|(mode, label)| (mode.as_str(), label.as_str()))
        .collect()
}

/// The stored modes that were not replayed (kept by `--write`, not compared
/// by `--check`), in stored order.
pub fn not_replayed(strict: &[(String, Label)], stored: Option<&StoredLabels>) -> Vec<String> {
    not_replayed_entries(strict, stored)
        .into_iter()
        .map(|(mode, _)| mode.to_string())
        .collect()
}

/// One mode whose stored label `--write` would change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The mode.
    pub mode: String,
    /// The stored label (`None`: the mode now needs a label and has none).
    pub stored: Option<String>,
    /// The label now.
    pub now: Label,
}

/// What `--write` would change in a transcript's stored labels (nothing when
/// it has none: it is not compared), in engine order.
pub fn differences(
    strict: &[(String, Label)],
    lenient: &[(String, Label)],
    quiet: Label,
    stored: Option<&StoredLabels>,
) -> Vec<Difference> {
    let Some(stored) = stored else {
        return Vec::new();
    };
    strict
        .iter()
        .filter_map(|(mode, now)| {
            let old = stored.get(mode).map(String::as_str);
            let differs = match old {
                Some(old) => old != now.as_str(),
                None => needs_review(*now, find(lenient, mode), quiet),
            };
            differs.then(|| Difference {
                mode: mode.clone(),
                stored: old.map(str::to_string),
                now: *now,
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use Label::*;

    fn labels(items: &[(&str, Label)]) -> Vec<(String, Label)> {
        items.iter().map(|(m, l)| (m.to_string(), *l)).collect()
    }

    fn map(json: &str) -> StoredLabels {
        StoredLabels::from_map(&serde_json::from_str(json).unwrap()).unwrap()
    }

    fn stored(labels: LabelMap) -> StoredLabels {
        let map: serde_json::Map<String, serde_json::Value> = labels
            .into_iter()
            .map(|(m, l)| (m, serde_json::Value::String(l)))
            .collect();
        StoredLabels::from_map(&map).unwrap()
    }

    #[test]
    fn stores_the_reviewed_modes_the_stored_ones_and_keeps_unreplayed_modes() {
        let strict = labels(&[
            ("tag", NoCall),
            ("json", Pass),
            ("bracket", NoCall),
            ("hermes", NoCall),
        ]);
        let lenient = labels(&[
            ("tag", NoCall),
            ("json", Pass),
            ("bracket", MalformedJson),
            ("hermes", NoCall),
        ]);
        assert_eq!(reviewed(&strict, &lenient, NoCall), ["json", "bracket"]);
        let stored = map(r#"{"my_pattern": "pass", "hermes": "pass", "tag": "no_call"}"#);
        let out = to_store(&strict, &lenient, NoCall, Some(&stored));
        let out: Vec<(&str, &str)> = out.iter().map(|(m, l)| (m.as_str(), l.as_str())).collect();
        assert_eq!(
            out,
            [
                ("tag", "no_call"),
                ("json", "pass"),
                ("bracket", "no_call"),
                ("hermes", "no_call"),
                ("my_pattern", "pass"),
            ]
        );
        assert_eq!(not_replayed(&strict, Some(&stored)), ["my_pattern"]);
    }

    #[test]
    fn check_reports_what_write_would_change_and_converges() {
        let strict = labels(&[("tag", NoCall), ("json", Pass), ("hermes", NoCall)]);
        let lenient = strict.clone();
        let stored = map(r#"{"hermes": "pass", "gone": "pass", "tag": "no_call"}"#);
        assert_eq!(
            differences(&strict, &lenient, NoCall, Some(&stored)),
            [
                Difference {
                    mode: "json".into(),
                    stored: None,
                    now: Pass
                },
                Difference {
                    mode: "hermes".into(),
                    stored: Some("pass".into()),
                    now: NoCall
                },
            ]
        );
        assert!(differences(&strict, &lenient, NoCall, None).is_empty());
        // After storing, nothing differs and storing again is the same.
        let written = self::stored(to_store(&strict, &lenient, NoCall, Some(&stored)));
        assert!(differences(&strict, &lenient, NoCall, Some(&written)).is_empty());
        let again = self::stored(to_store(&strict, &lenient, NoCall, Some(&written)));
        assert_eq!(again, written);
    }

    #[test]
    fn a_transcript_that_expects_no_call_stores_only_what_found_something() {
        let none = Expectation { calls: Vec::new() };
        assert_eq!(quiet_label(Some(&none)), Pass);
        assert_eq!(quiet_label(None), NoCall);
        let strict = labels(&[("tag", Pass), ("json", SpuriousCall), ("hermes", Pass)]);
        let quiet = quiet_label(Some(&none));
        assert_eq!(reviewed(&strict, &strict, quiet), ["json"]);
    }
}
