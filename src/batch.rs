//! Loading and replaying a batch of transcripts: two worker threads, output
//! in input order, progress on stderr when it is a terminal.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use toolgate_core::load::{
    Fingerprint, LoadError, LoadOptions, Loaded, collect_files, load_file_with,
};
use toolgate_core::{Transcript, sanitize};
use toolgate_validator::auto::{Detection, Source};
use toolgate_validator::{Auto, Chosen, Engine, Replay};

/// Replay workers: the machine this runs on is assumed to be shared.
const WORKERS: usize = 2;
/// Batches at least this long show progress.
const PROGRESS_MIN: usize = 20;

/// One entry of a batch, in load order.
pub enum Entry<T> {
    /// A transcript and what the caller's function made of its replay.
    Done {
        /// The transcript (for its path, id, model, …).
        transcript: Box<Transcript>,
        /// The caller's summary of the replay.
        value: T,
    },
    /// A file (or JSONL line) that could not be loaded, or whose replay failed.
    Bad(LoadError),
}

/// A replayed batch.
pub struct Batch<T> {
    /// One entry per transcript or unreadable input, in load order.
    pub entries: Vec<Entry<T>>,
    /// The fingerprint of every file as it was read (for `label --write`).
    pub fingerprints: HashMap<PathBuf, Fingerprint>,
}

/// Every transcript file under `paths`, loaded (regular files only, within
/// `opts`' size limit). A directory without transcripts is said on stderr.
fn load_all(paths: &[PathBuf], opts: &LoadOptions) -> (Vec<Loaded>, HashMap<PathBuf, Fingerprint>) {
    let mut loaded = Vec::new();
    let mut fingerprints = HashMap::new();
    for path in paths {
        let (files, errors) = collect_files(std::slice::from_ref(path));
        if files.is_empty() && errors.is_empty() {
            eprintln!(
                "toolgate: no transcripts (.json or .jsonl files) under {}",
                sanitize::one_line(&path.display().to_string())
            );
        }
        loaded.extend(errors.into_iter().map(Err));
        for file in files {
            let (items, fingerprint) = load_file_with(&file, opts);
            if let Some(fp) = fingerprint {
                fingerprints.insert(file, fp);
            }
            loaded.extend(items);
        }
    }
    (loaded, fingerprints)
}

/// Loads every transcript under `paths` and replays each with `engine`, each
/// judged by the profile `auto` chooses for its model, keeping only what
/// `summarize` makes of it (so that a large batch does not hold every replay
/// in memory). Entries come back in load order.
///
/// Every transcript is replayed once under its tentative profile (`--profile`,
/// `[models]`, the family table, else the engine's), counting what each mode
/// parses; once every model's counts are known, the transcripts whose model
/// ends up with another profile (detected) are replayed again under it.
pub fn replay_paths<T, F>(
    engine: &Engine,
    auto: &Auto,
    paths: &[PathBuf],
    opts: &LoadOptions,
    summarize: F,
) -> Batch<T>
where
    T: Send,
    F: Fn(&Transcript, &Replay, &Chosen) -> T + Sync,
{
    let (loaded, fingerprints) = load_all(paths, opts);
    let transcripts: Vec<&Transcript> = loaded.iter().filter_map(|l| l.as_ref().ok()).collect();
    let tentative = |t: &Transcript| {
        auto.by_model(t.model.as_deref()).unwrap_or_else(|| Chosen {
            profile: engine.profile.clone(),
            source: Source::Default,
        })
    };
    let first = replay_all(&transcripts, &|t: &Transcript| {
        let chosen = tentative(t);
        let replay = engine.replay_as(t, &chosen.profile);
        let mut seen = Detection::default();
        if !auto.is_given() {
            seen.add(&replay);
        }
        (summarize(t, &replay, &chosen), seen, chosen)
    });
    let mut detections: HashMap<&Option<String>, Detection> = HashMap::new();
    for (t, r) in transcripts.iter().zip(&first) {
        if let Ok((_, seen, _)) = r {
            detections.entry(&t.model).or_default().merge(seen);
        }
    }
    let mut finals: HashMap<&Option<String>, Chosen> = HashMap::new();
    for t in &transcripts {
        finals
            .entry(&t.model)
            .or_insert_with(|| auto.choose(t.model.as_deref(), detections.get(&t.model)));
    }
    let redo: Vec<usize> = transcripts
        .iter()
        .zip(&first)
        .enumerate()
        .filter(|(_, (t, r))| match (r, finals.get(&t.model)) {
            (Ok((_, _, was)), Some(now)) => was != now,
            _ => false,
        })
        .map(|(i, _)| i)
        .collect();
    let redo_items: Vec<&Transcript> = redo
        .iter()
        .filter_map(|&i| transcripts.get(i).copied())
        .collect();
    let again = replay_all(&redo_items, &|t: &Transcript| {
        let chosen = finals
            .get(&t.model)
            .cloned()
            .unwrap_or_else(|| tentative(t));
        let replay = engine.replay_as(t, &chosen.profile);
        summarize(t, &replay, &chosen)
    });
    let mut results: Vec<Result<T, String>> = first
        .into_iter()
        .map(|r| r.map(|(value, _, _)| value))
        .collect();
    for (i, r) in redo.into_iter().zip(again) {
        if let Some(slot) = results.get_mut(i) {
            *slot = r;
        }
    }
    let mut results = results.into_iter();
    let mut out = Vec::with_capacity(loaded.len());
    for item in loaded {
        let t = match item {
            Err(e) => {
                out.push(Entry::Bad(e));
                continue;
            }
            Ok(t) => t,
        };
        let result = results
            .next()
            .unwrap_or_else(|| Err("internal error: not replayed".into()));
        out.push(match result {
            Ok(value) => Entry::Done {
                transcript: Box::new(t),
                value,
            },
            Err(reason) => Entry::Bad(LoadError {
                path: t.path.clone(),
                line: t.line,
                reason,
            }),
        });
    }
    Batch {
        entries: out,
        fingerprints,
    }
}

/// The `auto` choice for every model of `transcripts` (`None`: transcripts
/// without a model), as [`replay_paths`] makes it: every transcript is
/// replayed once to count what each mode parses (unless `--profile` fixed
/// the profile). The inspector uses it at start.
pub fn choose(
    engine: &Engine,
    auto: &Auto,
    transcripts: &[&Transcript],
) -> HashMap<Option<String>, Chosen> {
    let items: Vec<&Transcript> = if auto.is_given() {
        Vec::new()
    } else {
        transcripts.to_vec()
    };
    let counted = replay_all(&items, &|t: &Transcript| {
        let mut d = Detection::default();
        d.add(&engine.replay(t));
        d
    });
    let mut detections: HashMap<&Option<String>, Detection> = HashMap::new();
    for (t, d) in items.iter().zip(counted) {
        // A transcript whose replay panicked is left out of the count.
        if let Ok(d) = d {
            detections.entry(&t.model).or_default().merge(&d);
        }
    }
    let mut choices: HashMap<Option<String>, Chosen> = HashMap::new();
    for t in transcripts {
        if !choices.contains_key(&t.model) {
            let chosen = auto.choose(t.model.as_deref(), detections.get(&t.model));
            choices.insert(t.model.clone(), chosen);
        }
    }
    choices
}

/// Runs `work` on `items` on two workers; results in input order. A `work`
/// that panics (a bug, never expected) becomes an error for that transcript
/// only.
fn replay_all<T, W>(items: &[&Transcript], work: &W) -> Vec<Result<T, String>>
where
    T: Send,
    W: Fn(&Transcript) -> T + Sync,
{
    let n = items.len();
    let mut out: Vec<Option<Result<T, String>>> = (0..n).map(|_| None).collect();
    let next = AtomicUsize::new(0);
    let mut progress = Progress::new(n);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..WORKERS.min(n) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(t) = items.get(i) else { break };
                    let result = catch_unwind(AssertUnwindSafe(|| work(t))).map_err(|panic| {
                        let what = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        format!("internal error: replay failed: {what}")
                    });
                    if tx.send((i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, result) in rx {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(result);
            }
            progress.tick();
        }
    });
    progress.finish();
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err("internal error: not replayed".into())))
        .collect()
}

/// `replayed 120/1000` on stderr, rewritten in place; only on a terminal and
/// only for batches worth waiting for.
struct Progress {
    total: usize,
    done: usize,
    enabled: bool,
}

impl Progress {
    fn new(total: usize) -> Progress {
        Progress {
            total,
            done: 0,
            enabled: total >= PROGRESS_MIN && std::io::stderr().is_terminal(),
        }
    }

    fn tick(&mut self) {
        self.done += 1;
        if self.enabled && (self.done.is_multiple_of(10) || self.done == self.total) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\rreplayed {}/{}", self.done, self.total);
            let _ = err.flush();
        }
    }

    fn finish(&self) {
        if self.enabled {
            // Erase the progress line.
            eprint!("\r\x1b[K");
        }
    }
}

/// Names each unreadable input on stderr; returns how many there were.
pub fn report_bad<T>(entries: &[Entry<T>]) -> usize {
    let mut n = 0;
    for entry in entries {
        if let Entry::Bad(e) = entry {
            eprintln!("toolgate: {}", sanitize::one_line(&e.to_string()));
            n += 1;
        }
    }
    n
}
