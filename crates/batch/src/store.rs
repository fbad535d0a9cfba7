//! `label --write` as the batch streams: each file's labels written
//! atomically once its last transcript is in.

use crate::label::{Labels, NOT_STORABLE, storable, stored};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_core::load::{Fingerprint, LabelMap, OpenWriters, WriteOutcome, write_labels_guarded};
use toolgate_core::relabel;
use toolgate_core::{Transcript, sanitize};

/// The label updates of one file: JSONL line (or `None`) → labels, shared
/// with every other transcript of the same labels ([`LabelStore::maps`]).
type Updates = Vec<(Option<usize>, Arc<LabelMap>)>;

/// `--write` as the batch streams: the labels a reviewer needs
/// ([`relabel::to_store`]) of each file's transcripts, written atomically
/// once the file's last transcript is in, refusing a file that changed since
/// it was read.
#[derive(Default)]
pub struct LabelStore {
    /// Updates of files whose end has not come yet.
    open: HashMap<PathBuf, Updates>,
    /// Each distinct set of labels of the open files, once: a JSONL file
    /// of a million transcripts holds a pointer per transcript (its
    /// labels are few sets, mostly the same), not a million maps, which
    /// cost some 290 bytes each. Emptied when no file is open.
    maps: HashSet<Arc<LabelMap>>,
    /// Files already written (or refused): the same file named twice
    /// (directly and through a directory) is stored once.
    done: HashSet<PathBuf>,
    /// Directories already cleaned of stale temp files.
    cleaned: HashSet<PathBuf>,
    /// The files other processes hold open for writing (not replaced),
    /// scanned once, before the first write.
    writers: Option<OpenWriters>,
    written: usize,
    transcripts: usize,
    current: usize,
    failed: usize,
    skipped: usize,
}

impl LabelStore {
    /// Queues the labels of one replayed transcript.
    pub fn add(&mut self, t: &Transcript, labels: &Labels) {
        // Imported captures other than a chat pair are not rewritten.
        if !storable(t) {
            self.skipped += 1;
            return;
        }
        if self.done.contains(&t.path) {
            return;
        }
        let map: LabelMap = relabel::to_store(
            &labels.strict_pairs(),
            &labels.lenient_pairs(),
            labels.quiet,
            stored(t),
        );
        let map = match self.maps.get(&map) {
            Some(shared) => Arc::clone(shared),
            None => {
                let map = Arc::new(map);
                self.maps.insert(Arc::clone(&map));
                map
            }
        };
        self.open
            .entry(t.path.clone())
            .or_default()
            .push((t.line, map));
    }

    /// Writes `path`'s labels: every transcript of it has been given.
    pub fn file_end(&mut self, path: &PathBuf, fingerprint: Fingerprint) {
        let Some(updates) = self.open.remove(path) else {
            return;
        };
        if self.open.is_empty() {
            self.maps.clear();
        }
        if !self.done.insert(path.clone()) {
            return;
        }
        // What an interrupted run left behind, once per directory.
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let dir = real.parent().map(PathBuf::from).unwrap_or_default();
        if self.cleaned.insert(dir.clone()) {
            for removed in toolgate_core::load::clean_stale_temps(&dir) {
                eprintln!(
                    "toolgate: removed {}, left by an interrupted write",
                    sanitize::one_line(&removed.display().to_string())
                );
            }
        }
        let writers = self.writers.get_or_insert_with(OpenWriters::scan);
        match write_labels_guarded(path, &updates, Some(fingerprint), writers) {
            Ok(WriteOutcome::Written) => {
                self.written += 1;
                self.transcripts += updates.len();
            }
            Ok(WriteOutcome::Unchanged) => self.current += 1,
            Err(e) => {
                self.failed += 1;
                eprintln!(
                    "toolgate: cannot write labels to {}: {}",
                    sanitize::one_line(&path.display().to_string()),
                    sanitize::one_line(&e.to_string())
                );
            }
        }
    }

    /// How many label maps the updates of the open files hold (by
    /// allocation: shared ones count once).
    #[doc(hidden)]
    pub fn held_maps(&self) -> usize {
        let held: HashSet<*const LabelMap> = self
            .open
            .values()
            .flatten()
            .map(|(_, map)| Arc::as_ptr(map))
            .collect();
        held.len()
    }

    /// Reports what was stored; whether every write succeeded.
    pub fn finish(self) -> bool {
        let failed = if self.failed > 0 {
            format!("; {} file(s) not written", self.failed)
        } else {
            String::new()
        };
        eprintln!(
            "toolgate: stored labels of {} transcript(s) in {} file(s); \
             {} file(s) already current{failed}",
            self.transcripts, self.written, self.current
        );
        if self.skipped > 0 {
            eprintln!(
                "toolgate: {} imported transcript(s) not stored: {NOT_STORABLE}",
                self.skipped
            );
        }
        self.failed == 0
    }
}
