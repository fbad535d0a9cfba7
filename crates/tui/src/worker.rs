//! Loading and replay off the UI thread: a [`Replayer`] (the validator's
//! [`Engine`] or a test double), [`execute`] for one [`Job`], and a small
//! [`Pool`] of threads that runs jobs and sends the results as [`Event`]s.

use crate::event::{Again, Entry, Event, Item, Job};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use toolgate_core::load::{self, Fingerprint};
use toolgate_core::{LoadError, Transcript};
use toolgate_validator::{Engine, Profile, Replay};

/// What the inspector needs from a replay engine.
pub trait Replayer: Send + Sync {
    /// Every mode name, in engine order (built-ins, then custom patterns).
    fn modes(&self) -> Vec<String>;
    /// The profile's name.
    fn profile_name(&self) -> String;
    /// Replays one transcript.
    fn replay(&self, transcript: &Transcript) -> Replay;
    /// Replays `transcript` again as it was judged when loaded: by `judge`
    /// (its [`Replayer::judge`] then), so that the whole replay the views
    /// show agrees with the summary its row was made from, even when the
    /// replayer's choice moved since. `None`: as [`Replayer::replay`] does.
    fn replay_judged(&self, transcript: &Transcript, judge: Option<&Profile>) -> Replay {
        let _ = judge;
        self.replay(transcript)
    }
    /// The profile [`Replayer::replay`] judges `transcript` by, and why
    /// (`by name (qwen3)`, `detected from 4 transcripts`, …); `None` when
    /// there is one profile for every transcript.
    fn judge(&self, _transcript: &Transcript) -> Option<(Profile, String)> {
        None
    }
    /// The profiles [`Replayer::pick`] accepts, for the `p` prompt.
    fn profiles(&self) -> Vec<String> {
        Vec::new()
    }
    /// Judges every later replay by the profile `name` (`None`: back to the
    /// replayer's own choice). `false` when `name` is not a profile.
    fn pick(&self, _name: Option<&str>) -> bool {
        false
    }
    /// Goes up when the replayer's own choices change (a profile detected
    /// behind the screen): the inspector then replays every transcript
    /// again.
    fn revision(&self) -> u64 {
        0
    }
    /// Whether the replayer's choices come from detection over the
    /// transcripts, so that changed transcripts call for
    /// [`Replayer::redetect`].
    fn detects(&self) -> bool {
        false
    }
    /// Detects again for `models`, whose transcripts changed, over `files`
    /// (every file holding one of their transcripts); a moved choice goes
    /// up [`Replayer::revision`]. Runs off the UI thread.
    fn redetect(&self, _models: &[Option<String>], _files: &[PathBuf]) {}
    /// Each of the replayer's modes with the tokens that can begin one of
    /// its candidates (its extractor's, so a declared format streams by its
    /// own; `None` for a mode without fixed openers): what the Stream view
    /// holds back. Empty: the built-in rows decide.
    fn openers(&self) -> Vec<(String, Option<&'static [&'static str]>)> {
        Vec::new()
    }
}

impl Replayer for Engine {
    fn modes(&self) -> Vec<String> {
        self.extractors
            .iter()
            .map(|e| e.name().to_string())
            .collect()
    }
    fn profile_name(&self) -> String {
        self.profile.name.clone()
    }
    fn replay(&self, transcript: &Transcript) -> Replay {
        Engine::replay(self, transcript)
    }
    fn openers(&self) -> Vec<(String, Option<&'static [&'static str]>)> {
        self.extractors
            .iter()
            .map(|e| (e.name().to_string(), e.openers()))
            .collect()
    }
}

/// Runs one job to completion and returns the event that reports it. Never
/// panics: a panicking replay becomes an unreadable item with the reason.
pub fn execute(job: Job, replayer: &dyn Replayer) -> Event {
    match job {
        Job::Scan { dir } => {
            let (files, errors) = load::collect_files(std::slice::from_ref(&dir));
            let aliases = files
                .iter()
                .filter_map(|file| {
                    let real = load::real_path(file);
                    (real != *file).then(|| (file.clone(), real))
                })
                .collect();
            Event::Scanned {
                dir,
                files,
                aliases,
                errors,
            }
        }
        Job::Load { path, seq, .. } => {
            let (items, writing) = load_and_replay(&path, replayer);
            Event::Loaded {
                path,
                seq,
                items,
                writing,
            }
        }
        Job::Replay(Again(entry)) => {
            let replay = replay_again(&entry, replayer).map(Arc::new);
            Event::Replayed { entry, replay }
        }
        Job::WriteLabels {
            path,
            updates,
            fingerprint,
        } => {
            let result = load::write_labels_checked(&path, &updates, fingerprint)
                .map(|_| updates.len())
                .map_err(|e| e.to_string());
            // Refused because the text moved under the rows (the writer
            // says so only in its message): the app tells it apart and
            // reads the file again.
            let stale = result.is_err() && fingerprint.is_some_and(|f| changed_since(&path, f));
            Event::Written {
                path,
                result,
                stale,
            }
        }
    }
}

/// Whether the file at `path` (through a symlink, its target) reads, and
/// no longer as the text whose fingerprint is `read` (a file gone or
/// unreadable is another failure, reported as such).
fn changed_since(path: &Path, read: Fingerprint) -> bool {
    std::fs::read(path).is_ok_and(|bytes| Fingerprint::of(&bytes) != read)
}

/// The whole replay of a loaded transcript, made again by the profile that
/// judged it ([`Replayer::replay_judged`]); a panicking replay is the
/// reason, not a crash (the store's summary came from a replay that did not
/// panic, so this is not expected).
pub fn replay_again(entry: &Entry, replayer: &dyn Replayer) -> Result<Replay, String> {
    let judge = entry.judge.as_ref().map(|(p, _)| p);
    catch_unwind(AssertUnwindSafe(|| {
        replayer.replay_judged(&entry.transcript, judge)
    }))
    .map_err(|panic| {
        let what = panic_text(panic.as_ref());
        tracing::error!(path = %entry.transcript.location(), "replay panicked: {what}");
        format!("replay failed: {what}")
    })
}

/// What a caught panic says.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// How long after a file last changed a torn last line (JSON cut inside a
/// record, no newline after it: [`load::TORN`]) is taken for a line its
/// writer is still writing, and held back instead of reported. A writer
/// that stopped mid-line (a crash, a full disk) leaves the file quiet: the
/// line is then reported as `label` reports it, with the same message and
/// number.
pub const WRITING_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How long yet the torn last line of `loaded` (read from `path`) is held
/// back as a line being written: `None` when there is none, or when the
/// file has been quiet for [`WRITING_GRACE`] (at startup, a file at rest:
/// reported at once, as `label` reports it). A modification time in the
/// future counts as now.
pub fn still_writing(path: &Path, loaded: &[load::Loaded]) -> Option<std::time::Duration> {
    let torn = matches!(loaded.last(), Some(Err(e)) if e.reason == load::TORN);
    if !torn {
        return None;
    }
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let age = modified.elapsed().unwrap_or_default();
    WRITING_GRACE
        .checked_sub(age)
        .filter(|left| !left.is_zero())
}

fn load_and_replay(
    path: &Path,
    replayer: &dyn Replayer,
) -> (Vec<Item>, Option<std::time::Duration>) {
    // The fingerprint of the very text the rows come from: `a` writes into
    // that text only.
    let (loaded, fingerprint) = load::load_file_with(path, &load::LoadOptions::default());
    let writing = still_writing(path, &loaded);
    let items = loaded
        .into_iter()
        .map(|loaded| {
            let transcript = loaded?;
            match catch_unwind(AssertUnwindSafe(|| {
                (replayer.replay(&transcript), replayer.judge(&transcript))
            })) {
                Ok((replay, judge)) => Ok(Arc::new(
                    Entry::new(transcript, replay)
                        .with_judge(judge)
                        .with_fingerprint(fingerprint),
                )),
                Err(panic) => {
                    let what = panic_text(panic.as_ref());
                    tracing::error!(path = %transcript.location(), "replay panicked: {what}");
                    Err(LoadError {
                        path: transcript.path.clone(),
                        line: transcript.line,
                        reason: format!("replay failed: {what}"),
                    })
                }
            }
        })
        .collect();
    (items, writing)
}

#[derive(Default)]
struct Queues {
    urgent: VecDeque<Job>,
    bulk: VecDeque<Job>,
    /// For each path with a load queued, the request number of the newest
    /// one and how many are queued: an older one is skipped, not run. The store drops its
    /// answer anyway ([`crate::store::Store::loaded`]); running it only
    /// delayed the newest, so a file appended to faster than it loads fell
    /// further behind with every change (30 appends 0.3 s apart to a
    /// 30,000-line JSONL: the new rows showed 28 s after the last one).
    newest: std::collections::HashMap<PathBuf, (u64, usize)>,
    stop: bool,
}

impl Queues {
    /// Queues `job`: a load of a file the watcher saw change (and any
    /// other job) ahead of the bulk of an initial load.
    fn push(&mut self, job: Job) {
        if let Job::Load { path, seq, .. } = &job {
            let (newest, queued) = self.newest.entry(path.clone()).or_insert((*seq, 0));
            *newest = (*newest).max(*seq);
            *queued += 1;
        }
        if matches!(job, Job::Load { urgent: false, .. }) {
            self.bulk.push_back(job);
        } else {
            self.urgent.push_back(job);
        }
    }

    /// The next job to run: urgent first, a load that a newer load of
    /// the same file replaced left out.
    fn pop(&mut self) -> Option<Job> {
        while let Some(job) = self.urgent.pop_front().or_else(|| self.bulk.pop_front()) {
            if let Job::Load { path, seq, .. } = &job
                && let Some((newest, queued)) = self.newest.get_mut(path)
            {
                let replaced = *newest > *seq;
                // Counted when queued: at least this one.
                *queued = queued.saturating_sub(1);
                if *queued == 0 {
                    self.newest.remove(path);
                }
                if replaced {
                    continue;
                }
            }
            return Some(job);
        }
        None
    }
}

/// A fixed pool of worker threads with two queues: urgent jobs (watcher
/// changes, writes) run before the bulk of an initial load.
pub struct Pool {
    shared: Arc<(Mutex<Queues>, Condvar)>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Starts `n` workers that send their results to `tx`. `init` runs first
    /// on each worker thread (the inspector uses it to route logging).
    pub fn new(
        n: usize,
        replayer: Arc<dyn Replayer>,
        tx: Sender<Event>,
        init: Arc<dyn Fn() -> Box<dyn std::any::Any> + Send + Sync>,
    ) -> Pool {
        let shared = Arc::new((Mutex::new(Queues::default()), Condvar::new()));
        let threads = (0..n.max(1))
            .map(|i| {
                let shared = Arc::clone(&shared);
                let replayer = Arc::clone(&replayer);
                let tx = tx.clone();
                let init = Arc::clone(&init);
                std::thread::Builder::new()
                    .name(format!("toolgate-worker-{i}"))
                    .spawn(move || {
                        let _guard = init();
                        while let Some(job) = next_job(&shared) {
                            if tx.send(execute(job, replayer.as_ref())).is_err() {
                                break;
                            }
                        }
                    })
            })
            .filter_map(Result::ok)
            .collect();
        Pool { shared, threads }
    }

    /// Queues a job.
    pub fn submit(&self, job: Job) {
        let (lock, cv) = &*self.shared;
        lock.lock().unwrap_or_else(|p| p.into_inner()).push(job);
        cv.notify_one();
    }
}

fn next_job(shared: &(Mutex<Queues>, Condvar)) -> Option<Job> {
    let (lock, cv) = shared;
    let mut q = lock.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if q.stop {
            return None;
        }
        if let Some(job) = q.pop() {
            return Some(job);
        }
        q = cv.wait(q).unwrap_or_else(|p| p.into_inner());
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let (lock, cv) = &*self.shared;
        lock.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        cv.notify_all();
        // Not joined: a worker deep in a huge file must not delay quitting;
        // it stops at its next job or when the process exits.
        self.threads.clear();
    }
}

#[cfg(test)]
mod queue_tests {
    use super::*;

    fn load(path: &str, seq: u64, urgent: bool) -> Job {
        Job::Load {
            path: PathBuf::from(path),
            seq,
            urgent,
        }
    }

    fn loads(q: &mut Queues) -> Vec<(String, u64)> {
        std::iter::from_fn(|| q.pop())
            .map(|job| match job {
                Job::Load { path, seq, .. } => (path.display().to_string(), seq),
                other => panic!("not a load: {other:?}"),
            })
            .collect()
    }

    /// Regression: every change of a watched file queued a full load, and
    /// each ran though a newer one of the same file was queued behind it
    /// (its answer then dropped): a file appended to faster than it loads
    /// showed its new rows half a minute late. Only the newest runs.
    #[test]
    fn a_queued_load_replaced_by_a_newer_one_of_the_same_file_is_skipped() {
        let mut q = Queues::default();
        q.push(load("big.jsonl", 1, false));
        q.push(load("other.json", 2, false));
        for seq in 3..=30 {
            q.push(load("big.jsonl", seq, true));
        }
        assert_eq!(
            loads(&mut q),
            [("big.jsonl".to_string(), 30), ("other.json".to_string(), 2)]
        );
        // Nothing is remembered once it ran: the next change loads again.
        q.push(load("big.jsonl", 31, true));
        assert_eq!(loads(&mut q), [("big.jsonl".to_string(), 31)]);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod openers_tests {
    use super::*;

    #[test]
    fn an_engine_reports_its_declared_formats_openers() {
        let mut catalog = toolgate_formats::Catalog::new();
        catalog
            .add_formats(
                "[[format]]\nname = \"angle_call\"\nengine = \"json_block\"\nfamilies = \"t\"\n\
             opener = \"<<call>>\"\ncloser = \"<</call>>\"\n\
             example = '<<call>>{\"name\": \"f\", \"arguments\": {}}<</call>>'\n",
            )
            .unwrap();
        let mut extractors = toolgate_formats::builtin();
        extractors.extend(catalog.into_custom());
        let engine = Engine::with_extractors(extractors, Profile::for_mode("angle_call")).unwrap();
        let openers = Replayer::openers(&engine);
        let of = |mode: &str| openers.iter().find(|(m, _)| m == mode).map(|(_, o)| *o);
        assert_eq!(of("angle_call"), Some(Some(&["<<call>>"][..])));
        assert_eq!(of("hermes"), Some(Some(&["<tool_call>"][..])));
        // Every mode is reported, in engine order.
        assert_eq!(openers.len(), Replayer::modes(&engine).len());
    }
}
