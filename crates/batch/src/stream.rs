//! Loading and replaying a batch of transcripts as a stream: the caller's
//! thread reads, writes in input order and replays too, with
//! [`BatchOptions::workers`]` - 1` helper threads replaying beside it (see
//! `run_pass`: no thread waits on another in the steady state); progress on
//! stderr when it is a terminal.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{IsTerminal, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use toolgate_core::import;
use toolgate_core::load::{
    Fingerprint, JsonlFile, LineBlock, LoadError, LoadOptions, Loaded, collect_files, jsonl_line,
    load_file, load_file_text, open_jsonl, parse_transcript_for_replay, read_transcript_text,
    real_path,
};
use toolgate_core::{Transcript, sanitize};
use toolgate_validator::auto::{Detection, JobDetection, Source};
use toolgate_validator::{Auto, Chosen, Engine, Outcome};

/// How a batch reads its files and how many workers replay them.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// How each file is read.
    pub load: LoadOptions,
    /// Threads replaying, the calling thread included (`--jobs`;
    /// [`default_workers`] otherwise): `workers - 1` are spawned.
    pub workers: usize,
}

/// Replay workers when `--jobs` is not given: one per CPU, at least two, at
/// most 16.
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 16)
}
/// Batches at least this long show progress.
const PROGRESS_MIN: usize = 20;

/// One item of a batch, in input order.
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
    /// Every transcript of this file has been given; `fingerprint` is the
    /// file's text as it was read (for `label --write`). Not given for a
    /// JSONL file read without fingerprints ([`LoadOptions::fingerprint`]).
    FileEnd {
        /// The file.
        path: PathBuf,
        /// Its text when read.
        fingerprint: Fingerprint,
    },
}

/// Units of work between the reader and the writer at any time, per worker.
const JOBS_IN_FLIGHT_PER_WORKER: usize = 4;
/// Transcripts the writer may hold while a model's profile is undecided
/// (module docs of [`stream_paths`]); past it, the batch takes a second pass.
/// `TOOLGATE_PENDING_LIMIT` lowers it (tests of the second pass).
const PENDING_LIMIT: usize = 2_000;

fn pending_limit() -> usize {
    std::env::var("TOOLGATE_PENDING_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(PENDING_LIMIT)
}

/// A value on cache lines of its own (128 bytes: two lines, as adjacent-line
/// prefetching pairs them). What every transcript touches from two cores is
/// kept apart from what is written beside it: the choice a worker clones for
/// each transcript and the writer drops (an `Arc`'s counts are written by
/// both, and the profile next to them is read for every mode of every
/// replay), and the locks the workers take per transcript (which lived on
/// the writer's stack, among the locals it writes).
#[derive(Debug, Default, PartialEq)]
#[repr(align(128))]
struct Aligned<T>(T);

impl<T> std::ops::Deref for Aligned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A model's choice, shared by the workers and the writer ([`Aligned`]).
type Shared = Arc<Aligned<Chosen>>;

fn share(chosen: Chosen) -> Shared {
    Arc::new(Aligned(chosen))
}

/// What a unit of work reads.
enum Work {
    /// Lines of a toolgate JSONL file, read as a stream: a block of the
    /// file, its lines ranges of the block (handed over without copying).
    Lines {
        path: Arc<PathBuf>,
        stem: Arc<str>,
        block: LineBlock,
    },
    /// A `.json` transcript or an importer's capture, loaded whole.
    Whole { path: PathBuf, text: String },
    /// A file that could not be read.
    Unreadable(LoadError),
    /// Nothing to read (a file's end after its last lines).
    Nothing,
}

/// A unit of work: its place in input order, what to read, and whether a
/// file ends with it.
struct Job {
    seq: usize,
    work: Work,
    file_end: Option<(PathBuf, Fingerprint)>,
}

/// A worker's result for one transcript (or unreadable input).
enum Out<T> {
    Done {
        transcript: Box<Transcript>,
        /// `None` when the summary was not wanted (a second pass will make it).
        value: Option<T>,
        /// The choice it was replayed under.
        chosen: Shared,
    },
    Bad(LoadError),
    FileEnd(PathBuf, Fingerprint),
}

/// A worker's result for one job.
struct Done<'e, T> {
    seq: usize,
    items: Vec<Out<T>>,
    /// Detection counts by model (only when `auto` must detect).
    seen: JobSeen<'e>,
}

/// Where the second pass starts: job `seq`, its item `skip` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Position {
    seq: usize,
    skip: usize,
}

/// Every transcript file under `paths`, in order (a path without transcripts
/// is said on stderr), and the paths that could not be walked.
///
/// Overlapping paths are read once (`matrix transcripts/ transcripts/hermes`,
/// `label f.json f.json`): a file whose canonical path was already listed
/// is left out, so no transcript is counted twice.
fn walk(paths: &[PathBuf]) -> Vec<Result<PathBuf, LoadError>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for path in paths {
        let (files, errors) = collect_files(std::slice::from_ref(path));
        if files.is_empty() && errors.is_empty() {
            eprintln!(
                "toolgate: no transcripts (.json or .jsonl files) under {}",
                sanitize::one_line(&path.display().to_string())
            );
        }
        out.extend(errors.into_iter().map(Err));
        for file in files {
            if seen.insert(real_path(&file)) {
                out.push(Ok(file));
            }
        }
    }
    out
}

/// Reads every file and cuts it into jobs, in order; `send` returns false
/// when the batch is over (the writer stopped). A JSONL file of toolgate
/// transcripts is read as a stream of lines, never whole; any other file is
/// read whole (within the size limit) and loaded by one worker.
fn read_jobs(
    files: &[Result<PathBuf, LoadError>],
    opts: &LoadOptions,
    mut send: impl FnMut(Job) -> bool,
) {
    let mut seq = 0usize;
    let mut next = |work: Work, file_end: Option<(PathBuf, Fingerprint)>| {
        let job = Job {
            seq,
            work,
            file_end,
        };
        seq += 1;
        job
    };
    for file in files {
        let path = match file {
            Ok(path) => path,
            Err(e) => {
                if !send(next(Work::Unreadable(e.clone()), None)) {
                    return;
                }
                continue;
            }
        };
        let bad = |reason: String| {
            Work::Unreadable(LoadError {
                path: path.clone(),
                line: None,
                reason,
            })
        };
        let jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
        if jsonl {
            match stream_jsonl(path, opts, &mut |work, end| send(next(work, end))) {
                Streamed::Done => continue,
                Streamed::Stopped => return,
                Streamed::NotTranscripts => {}
                Streamed::Unreadable(reason) => {
                    if !send(next(bad(reason), None)) {
                        return;
                    }
                    continue;
                }
            }
        }
        let sent = match read_transcript_text(path, opts) {
            Ok((text, fingerprint)) => {
                let end = Some((path.clone(), fingerprint));
                send(next(
                    Work::Whole {
                        path: path.clone(),
                        text,
                    },
                    end,
                ))
            }
            Err(reason) => send(next(bad(reason), None)),
        };
        if !sent {
            return;
        }
    }
}

/// How streaming a JSONL file went.
enum Streamed {
    /// Every line was sent, then the file's end.
    Done,
    /// The writer stopped the batch.
    Stopped,
    /// The file is another tool's capture (read it whole, by its importer).
    NotTranscripts,
    /// The file could not be opened or read.
    Unreadable(String),
}

/// Sends the lines of a JSONL file of toolgate transcripts as jobs, one
/// block of lines each ([`toolgate_core::load::JsonlBlocks`]: the file is read into each job's
/// own buffer), then its end with its fingerprint.
fn stream_jsonl(
    path: &std::path::Path,
    opts: &LoadOptions,
    send: &mut dyn FnMut(Work, Option<(PathBuf, Fingerprint)>) -> bool,
) -> Streamed {
    // The inspector opens it the same way
    // ([`toolgate_core::load::load_file_with`]).
    let (first, mut blocks) = match open_jsonl(path, opts) {
        JsonlFile::Transcripts { first, rest } => (first, rest),
        JsonlFile::Other => return Streamed::NotTranscripts,
        JsonlFile::Unreadable(reason) => return Streamed::Unreadable(reason),
    };
    let shared = Arc::new(path.to_path_buf());
    let stem: Arc<str> = Arc::from(
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    for block in first.into_iter().chain(blocks.by_ref()) {
        let work = Work::Lines {
            path: Arc::clone(&shared),
            stem: Arc::clone(&stem),
            block,
        };
        if !send(work, None) {
            return Streamed::Stopped;
        }
    }
    if let Some(err) = blocks.read_failure(path) {
        return if send(Work::Unreadable(err), None) {
            Streamed::Done
        } else {
            Streamed::Stopped
        };
    }
    // Without a fingerprint (nothing is written back) the file's end is
    // not announced.
    let end = blocks.fingerprint().map(|f| (path.to_path_buf(), f));
    if send(Work::Nothing, end) {
        Streamed::Done
    } else {
        Streamed::Stopped
    }
}

/// The transcripts (or load errors) of one job.
fn load_job(work: Work) -> Vec<Loaded> {
    match work {
        // Each line as the inspector reads it.
        Work::Lines { path, stem, block } => block
            .lines
            .iter()
            .filter_map(|line| jsonl_line(&block, line, &path, &stem, parse_transcript_for_replay))
            .collect(),
        Work::Whole { path, text } => load_file_text(&path, &text),
        Work::Unreadable(e) => vec![Err(e)],
        Work::Nothing => Vec::new(),
    }
}

/// What a panic said, for the transcript's error.
pub(crate) fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    format!("internal error: replay failed: {what}")
}

/// Loads every transcript under `paths`, replays each with `engine` on the
/// fast path ([`Engine::outcome_as`]), judged by the profile `auto` chooses
/// for its model, and gives `sink` what `summarize` makes of it (with the
/// transcript, slimmed: output, tools and chunks dropped), in input order,
/// as the batch goes: the calling thread reads, writes in order and is one
/// of the [`BatchOptions::workers`] workers (`run_pass`). Memory does not grow with
/// the number of transcripts: a few jobs of one block of lines each (about
/// 128 KiB, `toolgate_core::load::BLOCK_BYTES`) are in flight at once.
///
/// A model's profile is final as soon as it is known: `--profile`,
/// `[models]`, no model at all, or a by-name choice once one of the model's
/// transcripts parses in its mode (module docs of `auto`). Until then the
/// writer holds that model's transcripts (each replayed under the tentative
/// choice) and everything after them; at the end, a held transcript whose
/// model's final choice differs is replayed again. Past `PENDING_LIMIT`
/// (2,000) held transcripts (a batch of models no name reveals), the writer stops
/// holding: the first pass only counts what each mode parses, and a second
/// pass reads the files again from the first transcript not yet given and
/// replays the rest under the final choices.
pub fn stream_paths<T, F, S>(
    engine: &Engine,
    auto: &Auto,
    paths: &[PathBuf],
    opts: &BatchOptions,
    summarize: F,
    mut sink: S,
) where
    T: Send,
    F: Fn(&Transcript, &Outcome<'_>, &Chosen) -> T + Sync,
    S: FnMut(Entry<T>),
{
    let files = walk(paths);
    let detect = !auto.is_given();
    // Each model's tentative choice, made once and shared.
    let tentatives: Aligned<std::sync::RwLock<HashMap<Option<String>, Shared>>> =
        Default::default();
    let tentative = |model: &Option<String>| -> Shared {
        if let Ok(map) = tentatives.read()
            && let Some(c) = map.get(model)
        {
            return Arc::clone(c);
        }
        let chosen = share(auto.by_model(model.as_deref()).unwrap_or_else(|| Chosen {
            profile: engine.profile.clone(),
            source: Source::Default,
        }));
        if let Ok(mut map) = tentatives.write() {
            map.insert(model.clone(), Arc::clone(&chosen));
        }
        chosen
    };
    // Settled models: their tentative choice is final.
    let settled = |model: Option<&str>, chosen: &Chosen, seen: Option<&Detection>| match chosen
        .source
    {
        Source::ByName { .. } => seen.is_some_and(|d| d.count(&chosen.profile.primary).parsed > 0),
        Source::Default => model.is_none() || auto.is_given(),
        _ => true,
    };
    let mut progress = Progress::new();
    let mut detections: HashMap<Option<String>, Detection> = HashMap::new();
    let mut pending: VecDeque<(Position, Out<T>)> = VecDeque::new();
    let mut second: Option<Position> = None;
    let settled_models: Aligned<std::sync::RwLock<std::collections::HashSet<Option<String>>>> =
        Default::default();
    let settled_models = &settled_models;
    let mut settled_here: std::collections::HashSet<Option<String>> = Default::default();
    let limit = pending_limit();
    let summarize = &summarize;
    run_pass(
        &files,
        opts,
        None,
        &|t: &Transcript, stop: bool, local: &mut Local<'_>| {
            // The thread's own copy first: the shared map's lock is written
            // by every reader, from every core.
            let chosen = match local.chosen.get(&t.model) {
                Some(chosen) => Arc::clone(chosen),
                None => {
                    let chosen = tentative(&t.model);
                    local.chosen.insert(t.model.clone(), Arc::clone(&chosen));
                    chosen
                }
            };
            // Once a second pass is coming, only detection's counts matter,
            // and only for models whose choice they can still change.
            if stop && !matches!(chosen.source, Source::ByName { .. } | Source::Default) {
                return (None, chosen, false);
            }
            let outcome = engine.outcome_as(t, &chosen.profile);
            let value = (!stop).then(|| summarize(t, &outcome, &chosen));
            // Counted once summarized: a transcript whose replay or summary
            // panics counts nothing, as before.
            if detect {
                detection_of(&mut local.seen, &t.model).add_outcome(&outcome);
            }
            let final_now = match chosen.source {
                Source::ByName { .. } | Source::Default if t.model.is_some() && detect => {
                    // A model once settled stays settled: the thread
                    // remembers it and asks the shared set only until then.
                    // A poisoned lock (a panic on the writer) keeps it whole.
                    local.settled.contains(&t.model)
                        || settled_models.read().is_ok_and(|s| s.contains(&t.model)) && {
                            local.settled.insert(t.model.clone());
                            true
                        }
                }
                _ => true,
            };
            let keep = value.is_some() && !final_now;
            (value, chosen, keep)
        },
        &mut |done: Done<'_, T>, stop: &AtomicBool| {
            for (model, seen) in done.seen {
                detections.entry(model).or_default().merge_job(&seen);
            }
            if second.is_some() {
                return;
            }
            for (skip, item) in done.items.into_iter().enumerate() {
                pending.push_back((
                    Position {
                        seq: done.seq,
                        skip,
                    },
                    item,
                ));
            }
            while let Some((_, front)) = pending.front() {
                let ready = match front {
                    Out::Done {
                        transcript, chosen, ..
                    } => settled(
                        transcript.model.as_deref(),
                        chosen,
                        detections.get(&transcript.model),
                    ),
                    _ => true,
                };
                if !ready {
                    break;
                }
                // The shared set is written once per model (the writer
                // keeps its own copy to ask), not locked per transcript.
                if let Out::Done { transcript, .. } = front
                    && !settled_here.contains(&transcript.model)
                {
                    settled_here.insert(transcript.model.clone());
                    if let Ok(mut s) = settled_models.write() {
                        s.insert(transcript.model.clone());
                    }
                }
                if let Some((_, item)) = pending.pop_front() {
                    give(item, &mut sink, &mut progress);
                }
            }
            if pending.len() > limit
                && let Some((at, _)) = pending.front()
            {
                second = Some(*at);
                pending.clear();
                stop.store(true, Ordering::Relaxed);
            }
        },
    );
    let finals: HashMap<Option<String>, Shared> = detections
        .iter()
        .map(|(model, d)| (model.clone(), share(auto.choose(model.as_deref(), Some(d)))))
        .collect();
    let final_of = |model: &Option<String>| {
        finals
            .get(model)
            .cloned()
            .unwrap_or_else(|| share(auto.choose(model.as_deref(), None)))
    };
    match second {
        None => {
            // Held to the end: replayed again only where the choice moved.
            for (_, item) in pending {
                let item = match item {
                    Out::Done {
                        transcript,
                        value: Some(value),
                        chosen,
                    } if final_of(&transcript.model) == chosen => Out::Done {
                        transcript,
                        value: Some(value),
                        chosen,
                    },
                    Out::Done { transcript, .. } => {
                        let chosen = final_of(&transcript.model);
                        redo(engine, summarize, transcript, chosen)
                    }
                    other => other,
                };
                give(item, &mut sink, &mut progress);
            }
        }
        Some(from) => {
            run_pass(
                &files,
                opts,
                Some(from),
                &|t: &Transcript, _, _: &mut Local<'_>| {
                    let chosen = final_of(&t.model);
                    let outcome = engine.outcome_as(t, &chosen.profile);
                    (Some(summarize(t, &outcome, &chosen)), chosen, false)
                },
                &mut |done: Done<'_, T>, _: &AtomicBool| {
                    for item in done.items {
                        give(item, &mut sink, &mut progress);
                    }
                },
            );
        }
    }
    progress.finish();
}

/// [`stream_paths`] collected: every transcript (slimmed) with its summary,
/// and every unreadable input, in input order. For `matrix` and
/// `detect`, which aggregate over the whole batch.
pub fn collect<T, F>(
    engine: &Engine,
    auto: &Auto,
    paths: &[PathBuf],
    opts: &BatchOptions,
    summarize: F,
) -> Vec<Entry<T>>
where
    T: Send,
    F: Fn(&Transcript, &Outcome<'_>, &Chosen) -> T + Sync,
{
    let mut out = Vec::new();
    stream_paths(engine, auto, paths, opts, summarize, |entry| match entry {
        Entry::Done { transcript, value } => out.push(Entry::Done { transcript, value }),
        Entry::Bad(e) => out.push(Entry::Bad(e)),
        Entry::FileEnd { .. } => {}
    });
    out
}

/// Drops what only replay reads from a transcript once it is summarized: the
/// sink gets its identity (path, line, id, model, task, sample), its stored
/// labels and the rest of `raw`, but not its output, tools, chunks or
/// native calls.
///
/// The members the loader read into typed fields (`id`, `model`, `task`,
/// `sample`, `expect`, `labels`, `import`, `proxy`, `finish_reason`) go from
/// `raw` too: readers take them from the typed fields, never from `raw`
/// ([`Transcript::raw`]), and the sink's thread would otherwise free each
/// of them (a transcript is summarized on a worker and dropped on the
/// writer). Everything else in `raw` (`tags`, `prompt`, unknown members)
/// stays. A `raw` left empty is freed here, on the worker, as is the rest.
fn slim(t: &mut Transcript) {
    t.output = String::new();
    t.reasoning = None;
    t.tools = empty_tools();
    t.tool_calls = None;
    t.chunks = None;
    // One pass over the members, no key hashed (`remove` hashes each key
    // looked for). The order of the members kept does not matter: a slimmed
    // transcript's members are only looked up by key.
    t.raw.retain(|key, _| {
        !matches!(
            key.as_str(),
            "output"
                | "tools"
                | "tool_calls"
                | "chunks"
                | "reasoning"
                | "response"
                | "request"
                | "messages"
                | "id"
                | "model"
                | "task"
                | "sample"
                | "expect"
                | "labels"
                | "finish_reason"
                | "proxy"
                | import::IMPORT_MEMBER
        )
    });
    if t.raw.is_empty() {
        t.raw = serde_json::Map::new();
    }
}

/// An empty tool list, one per worker thread: a slimmed transcript shares
/// it instead of allocating one (and having the writer free it).
fn empty_tools() -> Arc<Vec<toolgate_core::ToolDef>> {
    thread_local! {
        static EMPTY: Arc<Vec<toolgate_core::ToolDef>> = Arc::new(Vec::new());
    }
    EMPTY.with(Arc::clone)
}

/// What the work on one transcript gives: the summary (unless not wanted),
/// the choice it was replayed under, and whether the transcript must be
/// kept whole (it may be replayed again). Detection's counts go straight
/// into its job's [`JobSeen`].
type Worked<T> = (Option<T>, Shared, bool);

/// Detection counts by model of [`choose`]'s whole batch.
type Seen = Vec<(Option<String>, Detection)>;

/// Detection counts by model of one batch job, the mode names borrowed from
/// the engine ([`JobDetection`]: no name copied per job and model, none for
/// the writer to free).
type JobSeen<'e> = Vec<(Option<String>, JobDetection<'e>)>;

/// What a worker thread keeps from job to job: the detection counts of the
/// job at hand (handed on with its results), and what it learnt of the
/// models from the state all threads share — each one's tentative choice,
/// and the models it saw settled — so that it does not take the shared
/// locks (whose words every reader writes, from every core) per transcript.
#[derive(Default)]
struct Local<'e> {
    seen: JobSeen<'e>,
    chosen: HashMap<Option<String>, Shared>,
    settled: std::collections::HashSet<Option<String>>,
}

/// The counts of `model` in `seen` (added when absent). Transcripts are
/// counted into these directly: a count per transcript, merged, would copy
/// every mode name for each of them.
fn detection_of<'a, D: Default>(
    seen: &'a mut Vec<(Option<String>, D)>,
    model: &Option<String>,
) -> &'a mut D {
    let at = match seen.iter().position(|(m, _)| m == model) {
        Some(at) => at,
        None => {
            seen.push((model.clone(), D::default()));
            seen.len() - 1
        }
    };
    &mut seen[at].1
}

/// A held transcript replayed again under its final choice.
fn redo<T, F>(engine: &Engine, summarize: &F, transcript: Box<Transcript>, chosen: Shared) -> Out<T>
where
    F: Fn(&Transcript, &Outcome<'_>, &Chosen) -> T,
{
    match catch_unwind(AssertUnwindSafe(|| {
        let outcome = engine.outcome_as(&transcript, &chosen.profile);
        summarize(&transcript, &outcome, &chosen)
    })) {
        Ok(value) => Out::Done {
            transcript,
            value: Some(value),
            chosen,
        },
        Err(panic) => Out::Bad(LoadError {
            path: transcript.path.clone(),
            line: transcript.line,
            reason: panic_text(panic),
        }),
    }
}

/// Hands one item to the sink.
fn give<T>(item: Out<T>, sink: &mut impl FnMut(Entry<T>), progress: &mut Progress) {
    match item {
        Out::Done {
            transcript,
            value: Some(value),
            ..
        } => {
            progress.tick();
            sink(Entry::Done { transcript, value });
        }
        Out::Done { transcript, .. } => sink(Entry::Bad(LoadError {
            path: transcript.path.clone(),
            line: transcript.line,
            reason: "internal error: not replayed".into(),
        })),
        Out::Bad(e) => sink(Entry::Bad(e)),
        Out::FileEnd(path, fingerprint) => sink(Entry::FileEnd { path, fingerprint }),
    }
}

/// One pass over `files`, `work` run on each transcript and `take` on the
/// calling thread receiving each job's results in input order. `from`: skip
/// everything before this position. `work`'s flag: the writer no longer
/// wants summaries (set through `take`'s `AtomicBool`).
///
/// The calling thread is the reader, the in-order writer and one of the
/// [`BatchOptions::workers`] workers; `workers - 1` helper threads take
/// jobs from a shared queue. The calling thread reads while fewer than
/// `JOBS_IN_FLIGHT_PER_WORKER × workers` jobs are in flight (read, being
/// replayed, or done and waiting for their turn), hands on whatever is done
/// in order, and otherwise replays the next queued job itself; it sleeps
/// only when every job in flight is a helper's and none is done. A helper
/// sleeps only when the queue is empty, and is woken only then. So with as
/// many workers as cores no thread waits on another in the steady state:
/// a separate reader and writer (as this was before, four threads for two
/// workers) were woken for every job and took a core from a worker, and on
/// a two-core machine those wake-ups and context switches cost about a
/// fifth of `label`'s CPU (BENCHMARKS.md, "`label` against the floor,
/// fourth pass"). With one worker there is no other thread at all.
fn run_pass<'e, T, W>(
    files: &[Result<PathBuf, LoadError>],
    opts: &BatchOptions,
    from: Option<Position>,
    work: &W,
    take: &mut dyn FnMut(Done<'e, T>, &AtomicBool),
) where
    T: Send,
    W: Fn(&Transcript, bool, &mut Local<'e>) -> Worked<T> + Sync,
{
    let stop = AtomicBool::new(false);
    let workers = opts.workers.max(1);
    let limit = JOBS_IN_FLIGHT_PER_WORKER * workers;
    let queue = JobQueue::default();
    std::thread::scope(|scope| {
        // Closes the queue however this thread leaves the scope (a panic in
        // `take` included), so the helpers stop and the scope can end.
        let _close = CloseOnDrop(&queue);
        let (done_tx, done_rx) = mpsc::channel::<Done<'e, T>>();
        for _ in 1..workers {
            let done_tx = done_tx.clone();
            let (queue, stop) = (&queue, &stop);
            scope.spawn(move || {
                let mut local = Local::default();
                while let Some(job) = queue.pop_or_wait() {
                    let stopped = stop.load(Ordering::Relaxed);
                    let done = run_job(job, from, work, stopped, &mut local);
                    if done_tx.send(done).is_err() {
                        break;
                    }
                }
            });
        }
        // Only the helpers send: with all of them gone, `recv` says so.
        drop(done_tx);
        let mut order = InOrder {
            waiting: BTreeMap::new(),
            next: 0,
            in_flight: 0,
        };
        // Makes room for one more job (or, `drain`, finishes every job):
        // false when no result can come any more (every helper gone).
        let mut local = Local::default();
        let mut settle = |order: &mut InOrder<'e, T>, drain: bool| -> bool {
            loop {
                for done in done_rx.try_iter() {
                    order.accept(done, take, &stop);
                }
                let room = if drain {
                    order.in_flight == 0
                } else {
                    order.in_flight < limit
                };
                if room {
                    return true;
                }
                if let Some(job) = queue.pop() {
                    let stopped = stop.load(Ordering::Relaxed);
                    let done = run_job(job, from, work, stopped, &mut local);
                    order.accept(done, take, &stop);
                    continue;
                }
                match done_rx.recv() {
                    Ok(done) => order.accept(done, take, &stop),
                    Err(_) => return false,
                }
            }
        };
        read_jobs(files, &opts.load, |job| {
            queue.push(job);
            order.in_flight += 1;
            settle(&mut order, false)
        });
        queue.close();
        settle(&mut order, true);
    });
}

/// Job results put back in input order for `take`.
struct InOrder<'e, T> {
    /// Results that came before their turn, by job.
    waiting: BTreeMap<usize, Done<'e, T>>,
    /// The job whose results are given next.
    next: usize,
    /// Jobs read whose results are not given yet.
    in_flight: usize,
}

impl<'e, T> InOrder<'e, T> {
    /// Takes a job's results, and gives `take` every result now in turn.
    fn accept(
        &mut self,
        done: Done<'e, T>,
        take: &mut dyn FnMut(Done<'e, T>, &AtomicBool),
        stop: &AtomicBool,
    ) {
        self.waiting.insert(done.seq, done);
        while let Some(done) = self.waiting.remove(&self.next) {
            self.next += 1;
            self.in_flight = self.in_flight.saturating_sub(1);
            take(done, stop);
        }
    }
}

/// The jobs read and not yet taken, shared by the calling thread and the
/// helper workers of [`run_pass`].
#[derive(Default)]
struct JobQueue {
    state: Mutex<QueueState>,
    /// Signalled when a job comes while a helper waits, and on close.
    ready: Condvar,
}

#[derive(Default)]
struct QueueState {
    jobs: VecDeque<Job>,
    /// Helpers waiting for a job (the reader wakes one only then).
    idle: usize,
    /// No job will come any more.
    closed: bool,
}

impl JobQueue {
    /// The state. A poisoned lock is taken anyway: every change to the state
    /// under it is one `VecDeque` call or a field store, which leaves it
    /// whole.
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn push(&self, job: Job) {
        let mut state = self.lock();
        state.jobs.push_back(job);
        if state.idle > 0 {
            self.ready.notify_one();
        }
    }

    /// The next job, if one is queued.
    fn pop(&self) -> Option<Job> {
        self.lock().jobs.pop_front()
    }

    /// The next job, waiting for one; `None` once the queue is closed and
    /// empty.
    fn pop_or_wait(&self) -> Option<Job> {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.jobs.pop_front() {
                return Some(job);
            }
            if state.closed {
                return None;
            }
            state.idle += 1;
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.idle -= 1;
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }
}

/// Closes a [`JobQueue`] when dropped.
struct CloseOnDrop<'a>(&'a JobQueue);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Runs one job: loads it and replays each transcript.
fn run_job<'e, T, W>(
    job: Job,
    from: Option<Position>,
    work: &W,
    stop: bool,
    local: &mut Local<'e>,
) -> Done<'e, T>
where
    W: Fn(&Transcript, bool, &mut Local<'e>) -> Worked<T>,
{
    let skip = match from {
        Some(p) if job.seq < p.seq => usize::MAX,
        Some(p) if job.seq == p.seq => p.skip,
        _ => 0,
    };
    let mut items = Vec::new();
    local.seen.clear();
    if skip != usize::MAX {
        for (i, loaded) in load_job(job.work).into_iter().enumerate() {
            if i < skip {
                continue;
            }
            let t = match loaded {
                Ok(t) => t,
                Err(e) => {
                    items.push(Out::Bad(e));
                    continue;
                }
            };
            match catch_unwind(AssertUnwindSafe(|| work(&t, stop, local))) {
                Ok((value, chosen, keep)) => {
                    // Freed here, in parallel, rather than on the writer;
                    // kept whole only while it may be replayed again.
                    let mut t = t;
                    if !keep {
                        slim(&mut t);
                    }
                    items.push(Out::Done {
                        transcript: Box::new(t),
                        value,
                        chosen,
                    });
                }
                Err(panic) => items.push(Out::Bad(LoadError {
                    path: t.path.clone(),
                    line: t.line,
                    reason: panic_text(panic),
                })),
            }
        }
    }
    if let Some((path, fingerprint)) = job.file_end
        && skip != usize::MAX
    {
        items.push(Out::FileEnd(path, fingerprint));
    }
    Done {
        seq: job.seq,
        items,
        seen: std::mem::take(&mut local.seen),
    }
}

/// Transcripts [`choose`] holds and replays at a time: what detection keeps
/// in memory does not grow with the number of transcripts.
const CHOOSE_CHUNK: usize = 1_024;

/// The `auto` choice for every model of the transcripts under `paths`
/// (`None`: transcripts without a model), as [`stream_paths`] makes it:
/// every transcript is replayed once, through the batch fast path, to count
/// what each mode parses (unless `--profile` fixed the profile). Each file is
/// read whole, and its transcripts are replayed `CHOOSE_CHUNK` at a time
/// and dropped; none is kept for the whole batch. The inspector
/// runs it behind its screen, so it shows no progress and prints nothing;
/// unreadable files are the inspector's to report.
pub fn choose(engine: &Engine, auto: &Auto, paths: &[PathBuf]) -> HashMap<Option<String>, Chosen> {
    choose_in_chunks(engine, auto, paths, CHOOSE_CHUNK)
}

/// [`choose`], `chunk` transcripts at a time.
fn choose_in_chunks(
    engine: &Engine,
    auto: &Auto,
    paths: &[PathBuf],
    chunk: usize,
) -> HashMap<Option<String>, Chosen> {
    let mut seen: Seen = Vec::new();
    let mut models: Vec<Option<String>> = Vec::new();
    let mut held: Vec<Transcript> = Vec::with_capacity(chunk);
    let mut count = |held: &mut Vec<Transcript>| {
        let items: Vec<&Transcript> = held.iter().collect();
        let outcomes = replay_all(&items, &|t: &Transcript| {
            engine.outcome_as(t, &engine.profile)
        });
        // Counted straight into the model's counts ([`detection_of`]), as
        // the batch counts: no per-transcript counts to merge.
        for (t, outcome) in held.iter().zip(outcomes) {
            // A transcript whose replay panicked is left out of the count.
            if let Ok(outcome) = outcome {
                detection_of(&mut seen, &t.model).add_outcome(&outcome);
            }
        }
        held.clear();
    };
    let (files, _unreadable) = collect_files(paths);
    for file in files {
        for t in load_file(&file).into_iter().flatten() {
            if !models.contains(&t.model) {
                models.push(t.model.clone());
            }
            if !auto.is_given() {
                held.push(t);
                if held.len() >= chunk.max(1) {
                    count(&mut held);
                }
            }
        }
    }
    count(&mut held);
    models
        .into_iter()
        .map(|model| {
            let detection = seen.iter().find(|(m, _)| *m == model).map(|(_, d)| d);
            let chosen = auto.choose(model.as_deref(), detection);
            (model, chosen)
        })
        .collect()
}

/// Runs `work` on `items` on the workers; results in input order. A `work`
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
    // No progress line: its only caller runs it while the inspector owns
    // the terminal.
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..default_workers().min(n) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(t) = items.get(i) else { break };
                    let result = catch_unwind(AssertUnwindSafe(|| work(t))).map_err(panic_text);
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
        }
    });
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err("internal error: not replayed".into())))
        .collect()
}

/// `replayed 120` on stderr, rewritten in place; only on a terminal and
/// only for batches worth waiting for.
struct Progress {
    done: usize,
    enabled: bool,
    shown: bool,
}

impl Progress {
    fn new() -> Progress {
        Progress {
            done: 0,
            enabled: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn tick(&mut self) {
        self.done += 1;
        if self.enabled && self.done >= PROGRESS_MIN && self.done.is_multiple_of(10) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\rreplayed {}", self.done);
            let _ = err.flush();
            self.shown = true;
        }
    }

    fn finish(&self) {
        if self.shown {
            // Erase the progress line.
            eprint!("\r\x1b[K");
        }
    }
}

/// Why a transcript holds no model answer to judge, when it does not: a
/// `toolgate proxy` recording of an exchange cut short — the client went
/// away mid-answer (`proxy.client_disconnected`), or the upstream attempt
/// failed (`proxy.error`: a transport error, a timeout, a non-JSON
/// answer). Its output is whatever arrived, and scoring it would count a
/// network event as the model's `no_call` or `truncation`; `label` and
/// `matrix` leave it out and say how many they left out.
pub fn cut_short(t: &Transcript) -> Option<&'static str> {
    let proxy = t.proxy.as_ref()?;
    if proxy.client_disconnected {
        return Some("the client disconnected");
    }
    if proxy.error.is_some() {
        return Some("the upstream attempt failed");
    }
    None
}

/// Says on stderr how many proxy recordings [`cut_short`] left out.
pub fn report_cut_short(n: usize) {
    if n > 0 {
        eprintln!(
            "toolgate: {n} proxy recording(s) cut short (client disconnected or upstream attempt failed) left out: not model answers"
        );
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

/// The unreadable inputs of a batch that names them once its output is
/// out (`label`): the first [`BadInputs::KEPT`] are held (a review summary
/// lists some of them), every later one is spooled, as the line that names
/// it, to an unnamed temporary file, so that memory does not grow with a
/// file of millions of unreadable lines and none of them goes unnamed.
/// Where no temporary file can be made or written, a line is named on
/// stderr at once instead.
#[derive(Default)]
pub struct BadInputs {
    kept: Vec<LoadError>,
    count: usize,
    spool: Option<std::io::BufWriter<std::fs::File>>,
    spool_failed: bool,
}

impl BadInputs {
    /// How many are held in memory; the rest are spooled.
    pub const KEPT: usize = 1000;

    /// Notes one more unreadable input.
    pub fn push(&mut self, e: LoadError) {
        self.count += 1;
        if self.kept.len() < Self::KEPT {
            self.kept.push(e);
            return;
        }
        let line = format!("toolgate: {}\n", sanitize::one_line(&e.to_string()));
        if self.spool.is_none() && !self.spool_failed {
            match tempfile::tempfile() {
                Ok(file) => self.spool = Some(std::io::BufWriter::new(file)),
                Err(_) => self.spool_failed = true,
            }
        }
        let spooled = !self.spool_failed
            && self
                .spool
                .as_mut()
                .is_some_and(|s| s.write_all(line.as_bytes()).is_ok());
        if !spooled {
            // Named now rather than lost (a full disk, no temporary folder).
            self.spool_failed = true;
            eprint!("{line}");
        }
    }

    /// How many there were.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there were none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The first ones (at most [`BadInputs::KEPT`]), in input order.
    pub fn first(&self) -> &[LoadError] {
        &self.kept
    }

    /// Names each one on stderr, in input order (those not already named
    /// there); returns how many there were.
    pub fn report(self) -> usize {
        use std::io::{BufRead, Seek};
        for e in &self.kept {
            eprintln!("toolgate: {}", sanitize::one_line(&e.to_string()));
        }
        if let Some(spool) = self.spool {
            let replayed = spool.into_inner().ok().and_then(|mut file| {
                file.rewind().ok()?;
                for line in std::io::BufReader::new(file).lines() {
                    eprintln!("{}", line.ok()?);
                }
                Some(())
            });
            if replayed.is_none() {
                eprintln!("toolgate: the names of some unreadable inputs could not be read back");
            }
        }
        self.count
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use toolgate_core::load::load_paths;
    use toolgate_core::load::{BlockLine, JsonlBlocks};
    use toolgate_validator::Profile;

    /// Detection as the inspector made it before it streamed: every
    /// transcript loaded at once and fully replayed.
    fn choose_by_full_replay(
        engine: &Engine,
        auto: &Auto,
        paths: &[PathBuf],
    ) -> HashMap<Option<String>, Chosen> {
        let loaded = load_paths(paths);
        let transcripts: Vec<&Transcript> = loaded.iter().filter_map(|l| l.as_ref().ok()).collect();
        let mut detections: HashMap<&Option<String>, Detection> = HashMap::new();
        for t in &transcripts {
            detections
                .entry(&t.model)
                .or_default()
                .add(&engine.replay(t));
        }
        transcripts
            .iter()
            .map(|t| {
                let chosen = auto.choose(t.model.as_deref(), detections.get(&t.model));
                (t.model.clone(), chosen)
            })
            .collect()
    }

    #[test]
    fn a_slimmed_transcript_keeps_its_typed_fields_and_only_the_untyped_members() {
        let text = r#"{"id": "a", "model": "m", "task": "t", "sample": 2,
            "expect": {"calls": []}, "labels": {"json": "pass"}, "finish_reason": "stop",
            "proxy": {"error": ""}, "import": {"from": "openai-chat"},
            "tools": [], "output": "hi", "reasoning": "r", "chunks": ["hi"],
            "tags": ["x"], "prompt": "p", "x_peer": 1}"#;
        let mut t =
            parse_transcript_for_replay(text, std::path::Path::new("f.json"), None, "f").unwrap();
        let before = t.clone();
        slim(&mut t);
        let kept: Vec<&str> = t.raw.keys().map(String::as_str).collect();
        assert_eq!(kept, ["tags", "prompt", "x_peer"]);
        assert_eq!(t.tags().collect::<Vec<_>>(), ["x"]);
        assert_eq!(t.prompt(), Some("p"));
        assert!(t.output.is_empty() && t.reasoning.is_none() && t.chunks.is_none());
        assert!(t.tools.is_empty() && t.tools_known);
        // What the sinks read is the loader's typed fields, untouched.
        assert_eq!(
            (t.id.as_str(), t.model.as_deref(), t.task.as_deref()),
            ("a", Some("m"), Some("t"))
        );
        assert_eq!(t.sample, Some(2));
        assert_eq!(t.expect, before.expect);
        assert_eq!(t.stored_labels, before.stored_labels);
        assert!(t.labels_member);
        assert_eq!(t.finish_reason.as_deref(), Some("stop"));
        assert_eq!(t.proxy, before.proxy);
        assert_eq!(t.origin, before.origin);
        // Nothing untyped left.
        let mut bare = parse_transcript_for_replay(
            r#"{"id": "b", "output": "x"}"#,
            std::path::Path::new("f.json"),
            None,
            "f",
        )
        .unwrap();
        slim(&mut bare);
        assert!(bare.raw.is_empty());
        // Slimmed transcripts of one thread share one empty tool list.
        assert!(Arc::ptr_eq(&bare.tools, &t.tools));
    }

    #[test]
    fn choosing_in_chunks_through_the_fast_path_equals_a_full_replay_of_everything() {
        let engine = Engine::new(Profile::default());
        let auto = Auto::default();
        let paths = [PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../transcripts"
        ))];
        let want = choose_by_full_replay(&engine, &auto, &paths);
        assert!(want.len() > 20, "{} models", want.len());
        let detected = want
            .values()
            .filter(|c| matches!(c.source, Source::Detected { .. }))
            .count();
        assert!(detected >= 3, "{detected} models chosen by detection");
        for chunk in [1, 7, CHOOSE_CHUNK] {
            assert_eq!(
                choose_in_chunks(&engine, &auto, &paths, chunk),
                want,
                "chunks of {chunk}"
            );
        }
        // `--profile` given: nothing is replayed, every model gets it.
        let given = Auto::given(Profile::reading("hermes"));
        let chosen = choose(&engine, &given, &paths);
        assert_eq!(chosen.len(), want.len());
        assert!(chosen.values().all(|c| c.source == Source::Given));
    }

    /// Regression (s46-files): a JSONL file with fewer than four non-blank
    /// lines among many blank ones was held whole while its kind was
    /// decided, each block of 256 blank lines keeping a 128 KiB buffer and
    /// 8 KiB of lines (4 MiB of newlines: 1.2 GB). Only the blocks with a
    /// line that loads something (a record, or a line that is not read) are
    /// held, and only those lines.
    #[test]
    fn the_head_of_a_jsonl_file_holds_no_blank_lines() {
        let record = r#"{"id": "a", "output": "hi"}"#;
        let mut text = format!("{record}\n");
        text.push_str(&"\n".repeat(1 << 20));
        text.push_str("  \r\n\u{3000}\ncaf\u{fffd}\n");
        let mut bytes = text.into_bytes();
        bytes.extend_from_slice(b"caf\xe9\n");
        bytes.extend_from_slice("\n".repeat(1 << 20).as_bytes());
        bytes.extend_from_slice(format!("{record}\n").as_bytes());
        let mut blocks = JsonlBlocks::new(&bytes[..], 1 << 20);
        let (first, head) = toolgate_core::load::jsonl_head(&mut blocks);
        assert_eq!(head, [record, "caf\u{fffd}", record]);
        let held: usize = first
            .iter()
            .map(|b| b.bytes.capacity() + b.lines.capacity() * size_of::<BlockLine>())
            .sum();
        assert!(held < 1 << 20, "{held} bytes held for 4 lines");
        let lines: Vec<usize> = first
            .iter()
            .flat_map(|b| &b.lines)
            .map(|l| match l {
                BlockLine::Line(n, _) | BlockLine::Bad(n, _) => *n,
            })
            .collect();
        let n = 1 << 20;
        assert_eq!(lines, [1, n + 4, n + 5, 2 * n + 6]);
        assert!(blocks.next().is_none());
    }
}
