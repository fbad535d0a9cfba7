//! One row of the transcript list, which the views take to draw the
//! selected transcript.

use crate::event::{Entry, ModeSummary};
use std::path::Path;
use std::sync::Arc;
use toolgate_core::Label;
use toolgate_validator::{ModeResult, Replay};

/// One list row: a transcript with its derived columns.
#[derive(Clone, Debug)]
pub struct Row {
    /// The transcript and its replay.
    pub entry: Arc<Entry>,
    /// Its file, as the user would write the path (shared by the file's rows).
    pub path: Arc<str>,
    /// The label shown (profile's, or the filter mode's).
    pub label: Option<Label>,
    /// The decision shown.
    pub decision: &'static str,
    /// Stored labels exist and differ from the current strict ones.
    pub changed: bool,
    /// No labels stored yet.
    pub unlabeled: bool,
    /// The whole replay, on the selected row only (the app attaches it:
    /// [`crate::App`]); every other row has its summary alone.
    pub(crate) whole: Whole,
}

/// Where the selected row's whole replay is.
#[derive(Clone, Debug, Default)]
pub(crate) enum Whole {
    /// Not made yet (or the row is not selected).
    #[default]
    Waiting,
    /// Made.
    Ready(Arc<Replay>),
    /// The replay failed; why.
    Failed(Arc<str>),
}

impl Row {
    /// The row of `entry` (from the file shown as `path`), labelled by
    /// `mode`'s result (strict or `lenient`), or by the profile's.
    pub fn new(entry: &Arc<Entry>, path: &Arc<str>, mode: Option<&str>, lenient: bool) -> Row {
        let (label, decision) = match mode {
            Some(mode) => match entry.replay.mode(mode, lenient) {
                Some(m) => (Some(m.label), m.decision.as_str()),
                None => (None, "-"),
            },
            None => (
                Some(entry.replay.profile.label),
                entry.replay.profile.decision.as_str(),
            ),
        };
        let (changed, unlabeled) = (entry.changed, entry.transcript.stored_labels.is_none());
        Row {
            entry: Arc::clone(entry),
            path: Arc::clone(path),
            label,
            decision,
            changed,
            unlabeled,
            whole: Whole::Waiting,
        }
    }

    /// The transcript's whole replay: every mode's candidates, gates and
    /// telemetry. Only the selected row has one, once it is made.
    pub fn replay(&self) -> Option<&Replay> {
        match &self.whole {
            Whole::Ready(r) => Some(r),
            _ => None,
        }
    }

    /// What the views of the selected transcript say while its whole
    /// replay is not there: that it is being made, or why it failed.
    pub fn replay_note(&self) -> &str {
        match &self.whole {
            Whole::Ready(_) => "",
            Whole::Waiting => "replaying this transcript…",
            Whole::Failed(why) => why,
        }
    }

    /// `mode`'s whole result (strict or `lenient`), once the row has its
    /// replay.
    pub fn mode_result(&self, mode: &str, lenient: bool) -> Option<&ModeResult> {
        let replay = self.replay()?;
        if lenient {
            replay.lenient_mode(mode)
        } else {
            replay.strict_mode(mode)
        }
    }

    /// Whether `needle` (lowercase) occurs in the row's id, model, task or
    /// path (as shown), ignoring case.
    pub fn matches(&self, needle: &str) -> bool {
        let t = &self.entry.transcript;
        let has = |s: &str| s.to_lowercase().contains(needle);
        has(&t.id)
            || t.model.as_deref().is_some_and(has)
            || t.task.as_deref().is_some_and(has)
            || has(&self.path)
    }
}

/// `mode`'s summary in `entry`, strict or `lenient`.
pub fn mode_summary<'a>(entry: &'a Entry, mode: &str, lenient: bool) -> Option<&'a ModeSummary> {
    entry.replay.mode(mode, lenient)
}

/// A path as the user would write it: relative to its root's spelling.
pub fn display_path(roots: &[(std::path::PathBuf, String)], path: &Path) -> String {
    for (root, shown) in roots {
        if let Ok(rest) = path.strip_prefix(root) {
            if rest.as_os_str().is_empty() {
                return shown.clone();
            }
            let base = Path::new(shown);
            return base.join(rest).display().to_string();
        }
    }
    path.display().to_string()
}

/// List sort orders, cycled with `s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// File path, then line (load order).
    #[default]
    Path,
    /// Transcript id.
    Id,
    /// Model, then id.
    Model,
    /// Task, then id.
    Task,
    /// Label in taxonomy order (failures first), then id.
    Label,
    /// Decision, then id.
    Decision,
    /// Changed labels first, then path.
    Changed,
}

impl SortKey {
    const ORDER: [SortKey; 7] = [
        SortKey::Path,
        SortKey::Id,
        SortKey::Model,
        SortKey::Task,
        SortKey::Label,
        SortKey::Decision,
        SortKey::Changed,
    ];

    /// The name shown in the list title.
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Path => "path",
            SortKey::Id => "id",
            SortKey::Model => "model",
            SortKey::Task => "task",
            SortKey::Label => "label",
            SortKey::Decision => "decision",
            SortKey::Changed => "changed",
        }
    }

    /// The order after this one (`s`).
    pub fn next(self) -> SortKey {
        let i = SortKey::ORDER.iter().position(|s| *s == self).unwrap_or(0);
        SortKey::ORDER[(i + 1) % SortKey::ORDER.len()]
    }
}

/// Sorts `rows` by `key` (rows come in path order).
pub fn sort_rows(rows: &mut [Row], key: SortKey) {
    fn path_key(r: &Row) -> (&Path, Option<usize>) {
        (r.entry.transcript.path.as_path(), r.entry.transcript.line)
    }
    match key {
        // Rows are built in file order, then line order: already sorted.
        SortKey::Path => {}
        SortKey::Id => rows.sort_by(|a, b| a.entry.transcript.id.cmp(&b.entry.transcript.id)),
        SortKey::Model => rows.sort_by(|a, b| {
            (&a.entry.transcript.model, &a.entry.transcript.id)
                .cmp(&(&b.entry.transcript.model, &b.entry.transcript.id))
        }),
        SortKey::Task => rows.sort_by(|a, b| {
            (&a.entry.transcript.task, &a.entry.transcript.id)
                .cmp(&(&b.entry.transcript.task, &b.entry.transcript.id))
        }),
        SortKey::Label => rows.sort_by(|a, b| {
            (a.label, &a.entry.transcript.id).cmp(&(b.label, &b.entry.transcript.id))
        }),
        SortKey::Decision => rows.sort_by(|a, b| {
            (a.decision, &a.entry.transcript.id).cmp(&(b.decision, &b.entry.transcript.id))
        }),
        SortKey::Changed => {
            rows.sort_by(|a, b| (!a.changed, path_key(a)).cmp(&(!b.changed, path_key(b))))
        }
    }
}
