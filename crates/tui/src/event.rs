//! The one event type every thread feeds into the UI loop, and the jobs the
//! app hands to the worker pool.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_core::load::{Fingerprint, LabelMap};
use toolgate_core::{Label, LoadError, Transcript};
use toolgate_validator::{Finding, ModeResult, Replay, Toolset};

/// Everything that can change the app's state. Produced by the input
/// thread, the file watcher, the worker pool and the ticker; consumed only
/// by [`App::update`](crate::App::update).
#[derive(Debug)]
pub enum Event {
    /// A key press, mouse event or resize from the terminal.
    Input(ratatui::crossterm::event::Event),
    /// Something the watcher saw.
    Watch(WatchEvent),
    /// A directory walk finished.
    Scanned {
        /// The directory (or file root) that was walked.
        dir: PathBuf,
        /// Transcript files found under it.
        files: Vec<PathBuf>,
        /// The files among them whose real path ([`load::real_path`]) is
        /// not the path they were found by (a symlink on the way): path →
        /// real path, so the app lists each real file once without touching
        /// the disk.
        ///
        /// [`load::real_path`]: toolgate_core::load::real_path
        aliases: HashMap<PathBuf, PathBuf>,
        /// Directories that could not be read.
        errors: Vec<LoadError>,
    },
    /// A file was loaded and every transcript in it replayed.
    Loaded {
        /// The file.
        path: PathBuf,
        /// The request number this answers (older answers are dropped).
        seq: u64,
        /// One item per transcript (one per line for JSONL).
        items: Vec<Item>,
        /// The file ends in a torn line ([`toolgate_core::load::TORN`],
        /// the last of `items`) and changed so recently that the line is
        /// taken for one still being written: how long yet it is held back
        /// before it is reported ([`crate::worker::WRITING_GRACE`]).
        writing: Option<std::time::Duration>,
    },
    /// A transcript was replayed again, whole, for the views that show the
    /// selected one ([`Job::Replay`]).
    Replayed {
        /// The transcript, as the store holds it (the answer is for this
        /// very entry: a reloaded file's entries are others).
        entry: Arc<Entry>,
        /// The whole replay, or why it failed.
        replay: Result<Arc<Replay>, String>,
    },
    /// Labels were written into a file (`a`).
    Written {
        /// The file.
        path: PathBuf,
        /// How many transcripts were updated, or why the write failed.
        result: Result<usize, String>,
        /// The write was refused because the file changed since its rows
        /// were read (the app reads it again).
        stale: bool,
    },
    /// Time passed: batched worker results are folded into the view.
    Tick,
}

/// A file-system change, already classified by the watcher thread (so the
/// app never touches the disk).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// The watcher is running on these roots.
    Started(Vec<PathBuf>),
    /// Paths changed; each is now a file, a directory, or gone.
    Changed(Vec<PathChange>),
    /// A watched root disappeared (it is re-watched when it comes back).
    RootGone(PathBuf),
    /// A watched root is back and watched again.
    RootBack(PathBuf),
    /// The watcher reported an error; watching goes on where it can.
    Error(String),
    /// Changes were lost (the kernel's event queue overflowed, or the
    /// watcher failed; the text says which): every root is walked and
    /// every file read again.
    Rescan(String),
}

/// One changed path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathChange {
    /// The path.
    pub path: PathBuf,
    /// What it is now.
    pub kind: PathKind,
    /// A file's real path ([`load::real_path`]) when a symlink makes it
    /// differ from `path`.
    ///
    /// [`load::real_path`]: toolgate_core::load::real_path
    pub real: Option<PathBuf>,
}

/// What a changed path is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// A file (or something that is not a directory).
    File,
    /// A directory.
    Dir,
    /// It no longer exists.
    Gone,
}

/// One transcript with its replay, or why it could not be read or replayed.
pub type Item = Result<Arc<Entry>, LoadError>;

/// A loaded and replayed transcript.
#[derive(Debug)]
pub struct Entry {
    /// The transcript as loaded (kept: the selected one is replayed again
    /// from it).
    pub transcript: Transcript,
    /// What the list, its filters, its order and the accept flows read of
    /// the replay. The whole [`Replay`] is made again for the selected
    /// transcript only ([`Job::Replay`]).
    pub replay: Summary,
    /// For each tool name a candidate used that is not allowlisted, the
    /// closest allowlisted name ([`Toolset::closest`]), if one is plausible.
    pub closest: Vec<(String, Option<String>)>,
    /// Stored labels exist and accepting would change them (as `toolgate
    /// label --check` compares: [`toolgate_core::relabel::differences`]).
    pub changed: bool,
    /// The profile that judged the transcript and why (`by name (qwen3)`,
    /// …), when the replayer says ([`crate::Replayer::judge`]).
    pub judge: Option<(toolgate_validator::Profile, String)>,
    /// The fingerprint of the file text the transcript was read from: `a`
    /// writes its labels only into that same text, never into a file that
    /// changed since (its lines may now be other transcripts). `None` for
    /// an entry made without reading a file (then the write is unchecked).
    pub fingerprint: Option<Fingerprint>,
}

impl Entry {
    /// Bundles a transcript with the summary of its replay and works out
    /// the closest allowlisted names (off the UI thread: it compiles the
    /// tool schemas). The replay itself is dropped.
    pub fn new(transcript: Transcript, replay: Replay) -> Entry {
        // Hash sets, not list scans: an output may name tens of thousands
        // of tools, and this must stay linear in their number.
        let allowed: HashSet<&str> = transcript.tools.iter().map(|t| t.name.as_str()).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut unknown: Vec<String> = Vec::new();
        for m in replay.strict.iter().chain(&replay.lenient) {
            for c in &m.candidates {
                if let Some(name) = &c.name
                    && !allowed.contains(name.as_str())
                    && seen.insert(name.as_str())
                {
                    unknown.push(name.clone());
                }
            }
        }
        let closest = if unknown.is_empty() {
            Vec::new()
        } else {
            let toolset = Toolset::new(&transcript.tools);
            unknown
                .into_iter()
                .map(|n| {
                    let near = toolset.closest(&n).map(str::to_string);
                    (n, near)
                })
                .collect()
        };
        let summary = Summary::of(&replay);
        drop(replay);
        let changed = {
            let (strict, lenient) = mode_labels(&summary);
            let stored = transcript.stored_labels.as_ref();
            let quiet = toolgate_core::relabel::quiet_label(transcript.expect.as_ref());
            !toolgate_core::relabel::differences(&strict, &lenient, quiet, stored).is_empty()
        };
        Entry {
            transcript,
            replay: summary,
            closest,
            changed,
            judge: None,
            fingerprint: None,
        }
    }

    /// The entry with the profile that judged it and why.
    pub fn with_judge(mut self, judge: Option<(toolgate_validator::Profile, String)>) -> Entry {
        self.judge = judge;
        self
    }

    /// The entry, read from the file text whose fingerprint is `fingerprint`.
    pub fn with_fingerprint(mut self, fingerprint: Option<Fingerprint>) -> Entry {
        self.fingerprint = fingerprint;
        self
    }
}

/// What the inspector keeps of a transcript's [`Replay`]: what the list,
/// the filters, sorting, the picker and `a` read. The
/// whole replay holds every mode's candidates, gates and telemetry, strict
/// and lenient: some 60 KB for a two-letter output, 589 MB of peak memory
/// for 10,000 of them. This is about a kilobyte: a few bytes a mode, the
/// mode names shared by every transcript ([`shared_names`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    strict: Modes,
    lenient: Modes,
    /// The profile pipeline's verdict.
    pub profile: ProfileSummary,
    /// Server and capture findings (usually none).
    pub findings: Vec<Finding>,
}

/// Every mode run, strict or lenient, in engine order.
#[derive(Clone, Debug, PartialEq)]
struct Modes {
    names: Arc<[Box<str>]>,
    results: Box<[ModeSummary]>,
}

/// One mode's result, as the list and the picker show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeSummary {
    /// Its label.
    pub label: Label,
    /// Its decision's kind.
    pub decision: DecisionKind,
    /// Whether it found any candidate (reasoning included).
    pub found: bool,
    /// Candidates outside reasoning.
    pub live: u32,
}

/// A decision's kind ([`toolgate_core::Decision::kind`]) in a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionKind {
    /// `execute`.
    Execute,
    /// `no_call`.
    NoCall,
    /// `reject`.
    Reject,
}

impl DecisionKind {
    /// The kind of `decision`.
    pub fn of(decision: &toolgate_core::Decision) -> DecisionKind {
        use toolgate_core::Decision;
        match decision {
            Decision::Execute { .. } => DecisionKind::Execute,
            Decision::NoCall => DecisionKind::NoCall,
            Decision::Reject { .. } => DecisionKind::Reject,
        }
    }

    /// As [`toolgate_core::Decision::kind`] spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Execute => "execute",
            DecisionKind::NoCall => "no_call",
            DecisionKind::Reject => "reject",
        }
    }
}

/// The profile pipeline's verdict, as the list shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileSummary {
    /// Its label.
    pub label: Label,
    /// Its decision's kind.
    pub decision: DecisionKind,
    /// The mode whose candidates it selected, if any.
    pub parse_mode: Option<String>,
}

impl Summary {
    /// The summary of `replay`.
    pub fn of(replay: &Replay) -> Summary {
        let modes = |results: &[ModeResult]| Modes {
            names: shared_names(results),
            results: results
                .iter()
                .map(|m| ModeSummary {
                    label: m.label,
                    decision: DecisionKind::of(&m.decision),
                    found: !m.candidates.is_empty(),
                    live: u32::try_from(m.candidates.iter().filter(|c| c.is_live()).count())
                        .unwrap_or(u32::MAX),
                })
                .collect(),
        };
        let p = &replay.profile;
        Summary {
            strict: modes(&replay.strict),
            lenient: modes(&replay.lenient),
            profile: ProfileSummary {
                label: p.label,
                decision: DecisionKind::of(&p.decision),
                parse_mode: p.parse_mode.clone(),
            },
            findings: replay.findings.clone(),
        }
    }

    /// Every mode run (strict or `lenient`) with its result, in engine
    /// order.
    pub fn modes(&self, lenient: bool) -> impl Iterator<Item = (&str, &ModeSummary)> {
        let modes = if lenient { &self.lenient } else { &self.strict };
        modes.names.iter().map(|n| &**n).zip(modes.results.iter())
    }

    /// `mode`'s result, strict or `lenient`.
    pub fn mode(&self, mode: &str, lenient: bool) -> Option<&ModeSummary> {
        self.modes(lenient)
            .find(|(m, _)| *m == mode)
            .map(|(_, r)| r)
    }
}

/// The names of `results`' modes, as one list every summary with the same
/// modes shares: an engine runs the same modes for most transcripts (the
/// lists differ by `native`, run only where there are `tool_calls`), and 46
/// names copied into each of 10,000 summaries were most of their bytes.
/// Past [`SHARED_LISTS`] distinct lists, a list is the summary's own.
fn shared_names(results: &[ModeResult]) -> Arc<[Box<str>]> {
    use std::sync::Mutex;
    static LISTS: Mutex<Vec<Arc<[Box<str>]>>> = Mutex::new(Vec::new());
    let same = |list: &Arc<[Box<str>]>| {
        list.len() == results.len() && list.iter().zip(results).all(|(n, m)| **n == m.mode)
    };
    // A poisoned lock (a panic mid-push) still holds whole lists.
    let mut lists = LISTS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(list) = lists.iter().find(|l| same(l)) {
        return Arc::clone(list);
    }
    let list: Arc<[Box<str>]> = results.iter().map(|m| Box::from(m.mode.as_str())).collect();
    if lists.len() < SHARED_LISTS {
        lists.push(Arc::clone(&list));
    }
    list
}

/// How many distinct mode lists [`shared_names`] keeps.
const SHARED_LISTS: usize = 64;

/// The strict and lenient label of every mode, in engine order.
pub fn mode_labels(
    summary: &Summary,
) -> (
    toolgate_core::relabel::ModeLabels,
    toolgate_core::relabel::ModeLabels,
) {
    let pairs = |lenient| {
        summary
            .modes(lenient)
            .map(|(mode, m)| (mode.to_string(), m.label))
            .collect::<Vec<_>>()
    };
    (pairs(false), pairs(true))
}

/// Work the app asks the worker pool to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Job {
    /// Walk a directory (or a file root) for transcript files.
    Scan {
        /// The directory or file.
        dir: PathBuf,
    },
    /// Load and replay one file.
    Load {
        /// The file.
        path: PathBuf,
        /// The request number, echoed in [`Event::Loaded`].
        seq: u64,
        /// Watcher-triggered loads go ahead of the initial bulk load.
        urgent: bool,
    },
    /// Replay one loaded transcript again, whole, by the profile that
    /// judged it: the views of the selected transcript read it.
    Replay(Again),
    /// Store labels in a file (atomic; JSONL by line), only if it still
    /// holds the text the transcripts were read from.
    WriteLabels {
        /// The file.
        path: PathBuf,
        /// `(line, labels)` per transcript; `None` line for `.json` files.
        updates: Vec<(Option<usize>, LabelMap)>,
        /// The fingerprint of the text the updated transcripts were read
        /// from ([`Entry::fingerprint`]): a file that no longer matches is
        /// not written, since its line numbers may name other transcripts.
        fingerprint: Option<Fingerprint>,
    },
}

/// The strict label of every mode, in engine order: what `a` writes.
pub fn current_labels(entry: &Entry) -> LabelMap {
    let (strict, lenient) = mode_labels(&entry.replay);
    let stored = entry.transcript.stored_labels.as_ref();
    let quiet = toolgate_core::relabel::quiet_label(entry.transcript.expect.as_ref());
    toolgate_core::relabel::to_store(&strict, &lenient, quiet, stored)
}

/// The transcript a [`Job::Replay`] replays. Jobs compare equal when they
/// name the same entry (the same load of it), not an equal one.
#[derive(Clone, Debug)]
pub struct Again(pub Arc<Entry>);

impl PartialEq for Again {
    fn eq(&self, other: &Again) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
