//! `toolgate label`: replay transcripts and print, compare or store labels.
//!
//! `--format jsonl` is the machine interface (SPEC §7), one line per
//! transcript with keys in this order:
//!
//! ```json
//! {"path": "transcripts/hermes/parallel.json", "id": "parallel",
//!  "model": "qwen3-8b", "task": "weather_two_cities",
//!  "labels":  {"tag": "no_call", "json": "no_call", "hermes": "pass"},
//!  "lenient": {"tag": "no_call", "json": "no_call", "hermes": "pass"},
//!  "profile": {"name": "default", "parse_mode": "none", "fallback_used": false,
//!              "candidate_count": 0, "decision": "no_call", "gate": null,
//!              "label": "no_call", "calls": [],
//!              "source": "default", "source_detail": "default"},
//!  "stored":  {"hermes": "pass"}}
//! ```
//!
//! An unreadable file (or JSONL line) yields `{"path": …, "error": …}`.
//!
//! `profile.parse_mode` names the mode whose candidates the pipeline selected
//! (`hermes`, `json`, …) or `none`; unlike the telemetry record, which keeps
//! seed 000's wording (`primary` for the primary mode), it never says
//! `primary`, so records of different profiles compare directly.
//!
//! The profile is `auto`'s choice for the transcript's model unless
//! `--profile` names one: `profile.source` says why (`given`, `configured`,
//! `by name`, `detected`, `default`) and `profile.source_detail` says it in
//! words (`by name (qwen3)`, `detected from 4 transcripts`, `--profile`).
//! Both come after the keys of SPEC §7.
//!
//! With `--check` (or `--changed`) each record also names what changed:
//! `"changed": [{"mode", "stored", "now", "why", "candidate"}, …]` before
//! `findings`; `--format markdown|github` render the same for a reviewer
//! ([`review`]).

mod review;

use crate::table::{CELL_MAX, Table, cell};
use crate::{EXIT_BAD, EXIT_FINDINGS, EXIT_OK, EngineArgs, InputArgs, jsonout};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_batch::{self as batch, Entry};
use toolgate_core::load::{Fingerprint, LabelMap, WriteOutcome, write_labels_checked};
use toolgate_core::relabel::{self, Difference};
use toolgate_core::{Label, Transcript, sanitize};
use toolgate_validator::{Chosen, Finding, Outcome};

/// `toolgate label [PATH…]`.
#[derive(Args, Debug)]
#[command(
    after_help = "Exit codes: 0 ok; 1 with --check when a label differs from the \
stored one; 2 bad usage or an unreadable file (every readable file is still processed)."
)]
pub struct LabelArgs {
    /// Files and directories (walked recursively for .json/.jsonl).
    #[arg(value_name = "PATH", default_value = "transcripts")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    input: InputArgs,
    /// Output format; `jsonl` is the machine interface.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Only transcripts whose stored `labels` `--write` would change
    /// (transcripts without stored labels are not compared).
    #[arg(long)]
    changed: bool,
    /// Exit 1 when `--write` would change a stored label; print the differences.
    #[arg(long, conflicts_with = "write")]
    check: bool,
    /// Store the labels a reviewer needs in each file's `labels` member: the
    /// strict label of every mode whose strict or lenient label is not
    /// `no_call`, and of every mode already stored (atomically; nothing else
    /// in the file changes).
    #[arg(long)]
    write: bool,
    /// Replay only these modes (comma-separated, e.g. `hermes,kimi`); the
    /// stored labels of the others are kept by `--write` and not compared.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    modes: Option<Vec<String>>,
    /// With --check or --changed: a transcript without stored labels (never
    /// reviewed) is a difference too, and fails the check.
    #[arg(long)]
    require_labels: bool,
    /// With --format markdown: put this before each file's path in its link
    /// (e.g. `https://github.com/OWNER/REPO/blob/SHA/`).
    #[arg(long, value_name = "URL")]
    link_base: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Aligned columns, fitted to the terminal.
    Table,
    /// One JSON array of records.
    Json,
    /// One record per line (the machine interface).
    Jsonl,
    /// With --check/--changed: a reviewer's summary for a PR comment
    /// (counts, each changed label and why); else the table in markdown.
    Markdown,
    /// With --check/--changed: GitHub workflow annotations on the files.
    Github,
}

/// What `label` keeps of one replay.
pub struct Labels {
    /// The replayed modes, engine order (one list shared by the batch).
    pub modes: Arc<ModeNames>,
    /// Strict label per mode, in the order of `modes`.
    pub strict: Vec<Label>,
    /// Lenient label per mode, same order.
    pub lenient: Vec<Label>,
    /// The profile's summary (`profile` member of the record).
    pub profile: ProfileSummary,
    /// The profile's label.
    pub profile_label: Label,
    /// Server findings (apart from the labels).
    pub findings: Vec<Finding>,
    /// The label of a mode that reads nothing ([`relabel::quiet_label`]).
    pub quiet: Label,
    /// What `--write` would change ([`differences`]), worked out on the worker.
    pub diffs: Vec<Difference>,
    /// Why each difference is what it is now (only with `--check` or
    /// `--changed`, for transcripts that differ), worked out on the worker.
    whys: Vec<review::Why>,
    /// No stored labels, and `--require-labels` makes that a difference.
    unlabeled: bool,
    /// The `--format jsonl` line (or `--format json` record), rendered on
    /// the worker when it will be printed: UTF-8 bytes, printed as they are.
    pub line: Option<Vec<u8>>,
}

/// The `profile` member of a record.
#[derive(Clone, Debug)]
pub struct ProfileSummary {
    name: String,
    parse_mode: String,
    fallback_used: bool,
    candidate_count: usize,
    decision: &'static str,
    gate: Option<&'static str>,
    label: &'static str,
    /// The executed calls, rendered as JSON when summarized (no copy of
    /// their arguments kept).
    calls: Vec<u8>,
    source: &'static str,
    source_detail: String,
}

impl ProfileSummary {
    /// Appends the member's JSON object (keys in this order).
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"name\":");
        jsonout::write_line(out, &self.name);
        out.extend_from_slice(b",\"parse_mode\":");
        jsonout::write_line(out, &self.parse_mode);
        out.extend_from_slice(b",\"fallback_used\":");
        out.extend_from_slice(if self.fallback_used {
            b"true"
        } else {
            b"false"
        });
        out.extend_from_slice(b",\"candidate_count\":");
        out.extend_from_slice(self.candidate_count.to_string().as_bytes());
        // Decision kinds, gates, labels and sources are plain identifiers.
        let ident = |out: &mut Vec<u8>, s: &str| {
            out.push(b'"');
            out.extend_from_slice(s.as_bytes());
            out.push(b'"');
        };
        out.extend_from_slice(b",\"decision\":");
        ident(out, self.decision);
        out.extend_from_slice(b",\"gate\":");
        match self.gate {
            Some(g) => ident(out, g),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"label\":");
        ident(out, self.label);
        out.extend_from_slice(b",\"calls\":");
        out.extend_from_slice(&self.calls);
        out.extend_from_slice(b",\"source\":");
        ident(out, self.source);
        out.extend_from_slice(b",\"source_detail\":");
        jsonout::write_line(out, &self.source_detail);
        out.push(b'}');
    }
}

/// Summarizes a replay for `label`.
pub fn summarize(t: &Transcript, replay: &Outcome<'_>, chosen: &Chosen) -> Labels {
    let p = &replay.profile;
    let profile = ProfileSummary {
        name: p.profile.clone(),
        parse_mode: p.parse_mode.as_deref().unwrap_or("none").to_string(),
        fallback_used: p.telemetry.fallback_used,
        candidate_count: p.telemetry.candidate_count,
        decision: p.decision.kind(),
        gate: p.decision.gate().map(|g| g.as_str()),
        label: p.label.as_str(),
        calls: {
            // Room for typical calls (none: just `[]`), at most 64 KiB.
            let calls_len = p.decision.calls().len();
            let room = if calls_len == 0 {
                2
            } else {
                calls_len.saturating_mul(512)
            };
            let mut calls = Vec::with_capacity(room.min(1 << 16));
            write_calls(&mut calls, p.decision.calls());
            calls
        },
        source: chosen.source.kind(),
        source_detail: chosen.source.to_string(),
    };
    Labels {
        modes: shared_modes(replay),
        strict: replay.strict.iter().map(|m| m.label).collect(),
        lenient: replay.lenient.iter().map(|m| m.label).collect(),
        profile,
        profile_label: p.label,
        findings: replay.findings.clone(),
        quiet: relabel::quiet_label(t.expect.as_ref()),
        diffs: Vec::new(),
        whys: Vec::new(),
        unlabeled: false,
        line: None,
    }
}

/// Appends `calls` as JSON, byte for byte as serde_json writes them
/// (`[{"name": …, "arguments": {…}}, …]`), strings and values by
/// [`jsonout::write_str`] and [`jsonout::write_map`].
fn write_calls(out: &mut Vec<u8>, calls: &[toolgate_core::Call]) {
    out.push(b'[');
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"name\":");
        jsonout::write_str(out, &call.name);
        out.extend_from_slice(b",\"arguments\":");
        jsonout::write_map(out, &call.arguments);
        out.push(b'}');
    }
    out.push(b']');
}

/// Appends `s` as a JSON string, `null` when absent.
fn write_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => jsonout::write_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// The replay's mode names, shared with the previous transcript this thread
/// summarized when they are the same (they are, but for `auto` profiles
/// whose modes are not reported): no name is copied per transcript.
fn shared_modes(replay: &Outcome<'_>) -> Arc<ModeNames> {
    use std::cell::RefCell;
    thread_local! {
        static LAST: RefCell<Option<Arc<ModeNames>>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some(names) = last.as_ref()
            && names.names.len() == replay.strict.len()
            && names
                .names
                .iter()
                .zip(&replay.strict)
                .all(|(n, m)| n == m.mode)
        {
            return Arc::clone(names);
        }
        let names = Arc::new(ModeNames::new(
            replay.strict.iter().map(|m| m.mode.to_string()).collect(),
        ));
        *last = Some(Arc::clone(&names));
        names
    })
}

/// Mode names, with each one's JSON member for every label rendered once
/// (`"hermes":"pass"`).
pub struct ModeNames {
    names: Vec<String>,
    /// Per mode, per label (`Label::ALL` order), the member's bytes.
    members: Vec<Vec<Vec<u8>>>,
}

impl ModeNames {
    fn new(names: Vec<String>) -> ModeNames {
        let members = names
            .iter()
            .map(|name| {
                let mut key = Vec::with_capacity(name.len() + 3);
                jsonout::write_line(&mut key, name.as_str());
                key.push(b':');
                Label::ALL
                    .iter()
                    .map(|label| {
                        // Label names are plain ASCII identifiers.
                        let mut member = key.clone();
                        member.push(b'"');
                        member.extend_from_slice(label.as_str().as_bytes());
                        member.push(b'"');
                        member
                    })
                    .collect()
            })
            .collect();
        ModeNames { names, members }
    }
}

impl Labels {
    /// `execute`, `no_call`, `reject (gate)`: made only for the table.
    pub fn decision(&self) -> String {
        match self.profile.gate {
            Some(gate) => format!("{} ({gate})", self.profile.decision),
            None => self.profile.decision.to_string(),
        }
    }

    /// `(mode, strict label)` pairs, engine order.
    pub fn strict_pairs(&self) -> Vec<(String, Label)> {
        pairs(&self.modes.names, &self.strict)
    }

    /// `(mode, lenient label)` pairs, engine order.
    pub fn lenient_pairs(&self) -> Vec<(String, Label)> {
        pairs(&self.modes.names, &self.lenient)
    }
}

fn pairs(modes: &[String], labels: &[Label]) -> Vec<(String, Label)> {
    modes.iter().cloned().zip(labels.iter().copied()).collect()
}

/// The `findings` member: `[{"kind": …, "detail": …}, …]`.
struct Findings<'a>(&'a [Finding]);

impl Serialize for Findings<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct One<'a> {
            kind: &'a str,
            detail: &'a str,
        }
        s.collect_seq(self.0.iter().map(|f| One {
            kind: f.kind.as_str(),
            detail: &f.detail,
        }))
    }
}

/// The `changed` member: `[{"mode", "stored", "now", "why", "candidate"}, …]`.
struct Changed<'a>(&'a [review::Why]);

impl Serialize for Changed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct One<'a> {
            mode: &'a str,
            stored: Option<&'a str>,
            now: &'a str,
            why: &'a str,
            candidate: Option<&'a str>,
        }
        s.collect_seq(self.0.iter().map(|w| One {
            mode: &w.mode,
            stored: w.stored.as_deref(),
            now: w.now.as_str(),
            why: &w.why,
            candidate: w.candidate.as_deref(),
        }))
    }
}

/// Whether `label --write` stores labels in this transcript's file: not in
/// imported captures other than a chat pair (streams, Batch, Responses,
/// Anthropic, OTel, BFCL), which are the provider's files.
fn storable(t: &Transcript) -> bool {
    let from = t
        .raw
        .get("import")
        .and_then(|i| i.get("from"))
        .and_then(Value::as_str);
    !(from.is_some_and(|f| f != "openai-chat") || t.raw.contains_key("sample") && from.is_some())
}

/// Whether nothing was ever stored in the transcript's `labels`.
fn unlabeled(t: &Transcript) -> bool {
    t.stored_labels.is_none() && t.raw.get("labels").is_none()
}

/// The stored `labels` member of a transcript, when it is an object.
fn stored(t: &Transcript) -> Option<&Map<String, Value>> {
    // The loader reads `stored_labels` from that member, and only from an
    // object there: without them there is none to look up (no key hashed).
    t.stored_labels.as_ref()?;
    t.raw.get("labels").and_then(Value::as_object)
}

/// What `--write` would change in the stored labels (see
/// [`toolgate_core::relabel`]).
pub fn differences(t: &Transcript, labels: &Labels) -> Vec<Difference> {
    // Nothing is compared without stored labels: no pairs built for it.
    match stored(t) {
        Some(stored) => relabel::differences(
            &labels.strict_pairs(),
            &labels.lenient_pairs(),
            labels.quiet,
            Some(stored),
        ),
        None => Vec::new(),
    }
}

/// The SPEC §7 record of one transcript as one line of JSON, written
/// directly (no `Value` tree; the labels, the bulk of it, as plain bytes).
fn record_line(t: &Transcript, labels: &Labels, changed: Option<&[review::Why]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(3072);
    out.extend_from_slice(b"{\"path\":");
    // A UTF-8 path displays as itself: no text made for it.
    match t.path.to_str() {
        Some(path) => jsonout::write_str(&mut out, path),
        None => jsonout::write_str(&mut out, &t.path.display().to_string()),
    }
    out.extend_from_slice(b",\"id\":");
    jsonout::write_str(&mut out, &t.id);
    out.extend_from_slice(b",\"model\":");
    write_opt_str(&mut out, t.model.as_deref());
    out.extend_from_slice(b",\"task\":");
    write_opt_str(&mut out, t.task.as_deref());
    out.extend_from_slice(b",\"labels\":");
    let start = out.len();
    write_mode_labels(&mut out, &labels.modes, &labels.strict);
    let end = out.len();
    out.extend_from_slice(b",\"lenient\":");
    if labels.lenient == labels.strict {
        // Mostly so: the same object again, copied rather than rendered.
        out.extend_from_within(start..end);
    } else {
        write_mode_labels(&mut out, &labels.modes, &labels.lenient);
    }
    out.extend_from_slice(b",\"profile\":");
    labels.profile.write(&mut out);
    out.extend_from_slice(b",\"stored\":");
    match stored(t) {
        Some(stored) => jsonout::write_map(&mut out, stored),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(whys) = changed {
        out.extend_from_slice(b",\"changed\":");
        jsonout::write_line(&mut out, &Changed(whys));
    }
    out.extend_from_slice(b",\"findings\":");
    jsonout::write_line(&mut out, &Findings(&labels.findings));
    out.extend_from_slice(b",\"schema_version\":");
    out.extend_from_slice(jsonout::SCHEMA_VERSION.to_string().as_bytes());
    out.push(b'}');
    out
}

/// The record of `--format json`: [`record_line`] read back, so both
/// formats hold the same members in the same order.
fn record_pretty(t: &Transcript, labels: &Labels, changed: Option<&[review::Why]>) -> String {
    match serde_json::from_slice::<Value>(&record_line(t, labels, changed)) {
        Ok(value) => jsonout::pretty(&value),
        // `record_line` writes valid JSON; this branch is never taken.
        Err(e) => {
            jsonout::pretty(&json!({"path": t.path.display().to_string(), "error": e.to_string()}))
        }
    }
}

/// Labels per mode as a JSON object, engine order, from the rendered members.
fn write_mode_labels(out: &mut Vec<u8>, modes: &ModeNames, labels: &[Label]) {
    out.push(b'{');
    for (i, (members, label)) in modes.members.iter().zip(labels).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // `Label::ALL` lists the variants in declaration order: the
        // discriminant is the index (looked for if it ever were not).
        let at = match Label::ALL.get(*label as usize) {
            Some(l) if l == label => Some(*label as usize),
            _ => Label::ALL.iter().position(|l| l == label),
        };
        match at.and_then(|k| members.get(k)) {
            Some(member) => out.extend_from_slice(member),
            // Every label is in `Label::ALL`; rendered here if one were not.
            None => {
                jsonout::write_line(out, modes.names.get(i).map_or("", String::as_str));
                out.push(b':');
                jsonout::write_line(out, label.as_str());
            }
        }
    }
    out.push(b'}');
}

/// The record of an unreadable file or line.
fn error_record(e: &toolgate_core::LoadError) -> Value {
    let reason = match e.line {
        Some(line) => format!("line {line}: {}", e.reason),
        None => e.reason.clone(),
    };
    json!({"path": e.path.display().to_string(), "error": reason})
}

/// The per-mode label summary of the table: the most common label stands for
/// the rest (`hermes:pass fence:malformed_json +12 no_call`).
fn mode_summary(labels: &[(String, Label)]) -> String {
    let mut counts: Vec<(Label, usize)> = Vec::new();
    for (_, l) in labels {
        match counts.iter_mut().find(|(c, _)| c == l) {
            Some((_, n)) => *n += 1,
            None => counts.push((*l, 1)),
        }
    }
    let Some(&(common, n_common)) = counts
        .iter()
        .max_by_key(|(l, n)| (*n, std::cmp::Reverse(*l)))
    else {
        return String::new();
    };
    let mut parts: Vec<String> = labels
        .iter()
        .filter(|(_, l)| *l != common)
        .map(|(m, l)| format!("{m}:{l}"))
        .collect();
    if parts.is_empty() {
        parts.push(format!("all {common}"));
    } else {
        parts.push(format!("+{n_common} {common}"));
    }
    parts.join(" ")
}

fn location(t: &Transcript) -> String {
    t.location()
}

/// Runs `toolgate label`: transcripts are replayed, printed and (with
/// `--write`) stored as the batch streams ([`batch::stream_paths`]); only
/// `--format json` (one array) and `--format table` (aligned columns) wait for
/// the end to print.
pub fn run(args: LabelArgs) -> Result<u8> {
    let mut engine = crate::setup::engine(&args.engine)?;
    crate::setup::select_modes(&mut engine, args.modes.as_deref())?;
    let auto = crate::setup::auto(&args.engine, &engine)?;
    let filter = args.changed || args.check;
    let format = args.format;
    if args.require_labels && !filter {
        anyhow::bail!("--require-labels needs --check or --changed");
    }
    if format == Format::Github && !filter {
        anyhow::bail!("--format github needs --check or --changed");
    }
    let require_labels = args.require_labels;
    let engine_ref = &engine;
    let summarize = |t: &Transcript, outcome: &Outcome<'_>, chosen: &Chosen| {
        let mut labels = summarize(t, outcome, chosen);
        labels.diffs = differences(t, &labels);
        if filter && require_labels && unlabeled(t) && storable(t) {
            // Never reviewed: every label `--write` would store is new.
            let store = relabel::to_store(
                &labels.strict_pairs(),
                &labels.lenient_pairs(),
                labels.quiet,
                None,
            );
            labels.unlabeled = true;
            labels.diffs = labels
                .strict_pairs()
                .into_iter()
                .filter(|(mode, _)| store.iter().any(|(m, _)| m == mode))
                .map(|(mode, now)| Difference {
                    mode,
                    stored: None,
                    now,
                })
                .collect();
        }
        if filter && !labels.diffs.is_empty() {
            labels.whys = review::whys(engine_ref, t, chosen, &labels.diffs);
        }
        if !filter || !labels.diffs.is_empty() {
            let changed = filter.then_some(labels.whys.as_slice());
            labels.line = match format {
                Format::Jsonl => Some(record_line(t, &labels, changed)),
                Format::Json => Some(record_pretty(t, &labels, changed).into_bytes()),
                Format::Table | Format::Markdown | Format::Github => None,
            };
        }
        labels
    };
    let mut sections: Vec<review::Section> = Vec::new();
    let mut n_checked = 0usize;
    let mut n_cut_short = 0usize;
    let mut n_unlabeled_failing = 0usize;

    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut write_error: Option<std::io::Error> = None;
    let mut n_diff = 0usize;
    let mut n_unlabeled = 0usize;
    // Transcripts judged with tools unknown (SPEC §4): counted apart.
    let mut n_tools_unknown = 0usize;
    let mut not_replayed: Vec<String> = Vec::new();
    // `--format json` streams too: the array's brackets around records
    // rendered (pretty, on the workers) as they come.
    let mut json_records = 0usize;
    let mut bad: Vec<toolgate_core::LoadError> = Vec::new();
    let mut store = args.write.then(Store::default);
    let mut table = if filter {
        Table::new(&["TRANSCRIPT", "ID", "MODE", "STORED", "NOW"])
            .fixed(&[2, 3, 4])
            .cut_left(&[0])
            .cut_middle(&[1])
            .keep_whole(&[0])
            .narrow_first(&[1])
    } else {
        // At 100 columns: MODES and TASK go first, LABEL and DECISION stay whole.
        Table::new(&[
            "TRANSCRIPT",
            "ID",
            "MODEL",
            "TASK",
            "LABEL",
            "DECISION",
            "MODES",
        ])
        .min_widths(&[40, 12, 16, 14, 0, 0, 16])
        .fixed(&[4, 5])
        .droppable(&[6, 3, 2])
        .cut_left(&[0])
        .cut_middle(&[1, 2, 3])
        // The path (and line) tells rows apart; id, task and model come after.
        .narrow_first(&[3, 2, 1])
    };
    batch::stream_paths(
        &engine,
        &auto,
        &args.paths,
        &{
            let mut opts = args.input.batch_options();
            opts.load.fingerprint = args.write;
            opts
        },
        summarize,
        |entry| {
            // A line of `--format jsonl`, or a record of `--format json`.
            let mut emit = |text: &[u8]| {
                if write_error.is_some() {
                    return;
                }
                let result = match format {
                    Format::Json => {
                        let head: &[u8] = if json_records == 0 {
                            b"[\n  "
                        } else {
                            b",\n  "
                        };
                        json_records += 1;
                        // Every line of the record indented by two spaces.
                        let mut result = out.write_all(head);
                        for (i, part) in text.split(|&b| b == b'\n').enumerate() {
                            if i > 0 {
                                result = result.and_then(|()| out.write_all(b"\n  "));
                            }
                            result = result.and_then(|()| out.write_all(part));
                        }
                        result
                    }
                    _ => out.write_all(text).and_then(|()| out.write_all(b"\n")),
                };
                if let Err(e) = result {
                    write_error = Some(e);
                }
            };
            let (t, labels) = match entry {
                Entry::Done { transcript, value } => (transcript, value),
                Entry::Bad(e) => {
                    match format {
                        Format::Jsonl => {
                            emit(jsonout::line(&jsonout::versioned(error_record(&e))).as_bytes())
                        }
                        Format::Json => {
                            emit(jsonout::pretty(&jsonout::versioned(error_record(&e))).as_bytes())
                        }
                        Format::Github => {
                            let line = review::annotation_bad(&e);
                            emit(line.trim_end().as_bytes())
                        }
                        Format::Table | Format::Markdown => {}
                    }
                    bad.push(e);
                    return;
                }
                Entry::FileEnd { path, fingerprint } => {
                    if let Some(store) = store.as_mut() {
                        store.file_end(&path, fingerprint);
                    }
                    return;
                }
            };
            if batch::cut_short(&t).is_some() {
                n_cut_short += 1;
                return;
            }
            n_checked += 1;
            if unlabeled(&t) {
                n_unlabeled += 1;
            }
            n_tools_unknown += usize::from(t.tools_unknown());
            if labels.unlabeled {
                n_unlabeled_failing += 1;
            }
            let not_now = match stored(&t) {
                Some(stored) => relabel::not_replayed(&labels.strict_pairs(), Some(stored)),
                None => Vec::new(),
            };
            for mode in not_now {
                if !not_replayed.contains(&mode) {
                    not_replayed.push(mode);
                }
            }
            if !labels.diffs.is_empty() && !labels.unlabeled {
                n_diff += 1;
            }
            if let Some(store) = store.as_mut() {
                store.add(&t, &labels);
            }
            if filter && labels.diffs.is_empty() {
                return;
            }
            match format {
                Format::Jsonl => {
                    if let Some(line) = &labels.line {
                        emit(line);
                    }
                }
                Format::Json => {
                    if let Some(record) = &labels.line {
                        emit(record);
                    }
                }
                Format::Markdown | Format::Github if filter => {
                    let section = review::Section {
                        path: t.path.display().to_string(),
                        line: t.line,
                        id: t.id.clone(),
                        model: t.model.clone(),
                        unlabeled: labels.unlabeled,
                        whys: labels.whys.clone(),
                    };
                    if format == Format::Github {
                        let text = review::annotations(&section);
                        emit(text.trim_end().as_bytes());
                    } else {
                        sections.push(section);
                    }
                }
                Format::Table | Format::Markdown | Format::Github if filter => {
                    for d in &labels.diffs {
                        table.push(vec![
                            cell(&location(&t), CELL_MAX),
                            cell(&t.id, CELL_MAX),
                            cell(&d.mode, CELL_MAX),
                            cell(d.stored.as_deref().unwrap_or("(absent)"), CELL_MAX),
                            d.now.to_string(),
                        ]);
                    }
                }
                Format::Table | Format::Markdown | Format::Github => table.push(vec![
                    cell(&location(&t), CELL_MAX),
                    cell(&t.id, CELL_MAX),
                    cell(t.model.as_deref().unwrap_or("-"), CELL_MAX),
                    cell(t.task.as_deref().unwrap_or("-"), CELL_MAX),
                    labels.profile_label.to_string(),
                    labels.decision(),
                    cell(&mode_summary(&labels.strict_pairs()), CELL_MAX),
                ]),
            }
        },
    );
    if let Some(e) = write_error {
        return Err(e.into());
    }
    match format {
        Format::Json if json_records == 0 => writeln!(out, "[]")?,
        Format::Json => writeln!(out, "\n]")?,
        Format::Table if !table.is_empty() => write!(out, "{}", table.plain())?,
        Format::Markdown if filter => {
            let counts = review::Counts {
                checked: n_checked,
                changed: n_diff,
                unlabeled: n_unlabeled,
                require_labels: args.require_labels,
            };
            write!(
                out,
                "{}",
                review::markdown(&sections, &bad, &counts, args.link_base.as_deref())
            )?;
        }
        Format::Markdown if !table.is_empty() => write!(out, "{}", table.markdown())?,
        _ => {}
    }
    out.flush()?;
    drop(out);

    for e in &bad {
        eprintln!("toolgate: {}", sanitize::one_line(&e.to_string()));
    }
    batch::report_cut_short(n_cut_short);
    let n_bad = bad.len();
    if n_tools_unknown > 0 {
        eprintln!("toolgate: {}", tools_unknown_summary(n_tools_unknown));
    }
    if filter {
        eprintln!(
            "toolgate: {n_diff} transcript(s) with labels differing from the stored ones{}",
            if n_unlabeled_failing > 0 {
                format!(" ({n_unlabeled} without stored labels: failing, --require-labels)")
            } else if n_unlabeled > 0 {
                format!(" ({n_unlabeled} without stored labels, not compared)")
            } else {
                String::new()
            }
        );
    }
    if (filter || args.write) && !not_replayed.is_empty() {
        let names: Vec<String> = not_replayed
            .iter()
            .map(|m| sanitize::one_line(m).into_owned())
            .collect();
        eprintln!(
            "toolgate: stored labels of modes that were not replayed are kept, not compared: {} \
             (custom modes? pass --patterns or --formats)",
            names.join(", ")
        );
    }
    let write_failed = store.is_some_and(|s| !s.finish());
    // A check of nothing (an empty folder, every path mistyped) would pass.
    let checked_nothing = args.check && n_checked == 0;
    if checked_nothing && n_bad == 0 {
        eprintln!("toolgate: error: --check found no transcript to check");
    }
    Ok(if n_bad > 0 || write_failed || checked_nothing {
        EXIT_BAD
    } else if args.check && n_diff + n_unlabeled_failing > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

/// The summary line of the transcripts judged with tools unknown.
pub fn tools_unknown_summary(n: usize) -> String {
    format!(
        "{n} transcript(s) judged with tools unknown (no `tools`: labels decided without \
         the tool definitions, finding tools_unknown, nothing executes)"
    )
}

/// The label updates of one file: JSONL line (or `None`) → labels.
type Updates = Vec<(Option<usize>, LabelMap)>;

/// `--write` as the batch streams: the labels a reviewer needs
/// ([`relabel::to_store`]) of each file's transcripts, written atomically
/// once the file's last transcript is in, refusing a file that changed since
/// it was read.
#[derive(Default)]
struct Store {
    /// Updates of files whose end has not come yet.
    open: HashMap<PathBuf, Updates>,
    /// Files already written (or refused): the same file named twice
    /// (directly and through a directory) is stored once.
    done: HashSet<PathBuf>,
    /// Directories already cleaned of stale temp files.
    cleaned: HashSet<PathBuf>,
    written: usize,
    transcripts: usize,
    current: usize,
    failed: usize,
    skipped: usize,
}

impl Store {
    /// Queues the labels of one replayed transcript.
    fn add(&mut self, t: &Transcript, labels: &Labels) {
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
        self.open
            .entry(t.path.clone())
            .or_default()
            .push((t.line, map));
    }

    /// Writes `path`'s labels: every transcript of it has been given.
    fn file_end(&mut self, path: &PathBuf, fingerprint: Fingerprint) {
        let Some(updates) = self.open.remove(path) else {
            return;
        };
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
        match write_labels_checked(path, &updates, Some(fingerprint)) {
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

    /// Reports what was stored; whether every write succeeded.
    fn finish(self) -> bool {
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
                "toolgate: {} imported transcript(s) not stored: their files are captures in another format (toolgate import them first)",
                self.skipped
            );
        }
        self.failed == 0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn calls_written_by_hand_are_byte_for_byte_serde_json_s() {
        let calls = [
            toolgate_core::Call::new(
                "get_weather\u{202e}\"",
                json!({"city": "東京 \u{7f}\n", "days": 3, "f": 1.5, "x": {"y": [null, true]}}),
            ),
            toolgate_core::Call::new("time_now", json!({})),
        ];
        for calls in [&calls[..], &calls[..1], &[]] {
            let mut by_hand = Vec::new();
            write_calls(&mut by_hand, calls);
            let mut by_serde = Vec::new();
            jsonout::write_line(&mut by_serde, calls);
            assert_eq!(
                String::from_utf8_lossy(&by_hand),
                String::from_utf8_lossy(&by_serde)
            );
        }
    }

    #[test]
    fn summary_names_the_exceptions_and_counts_the_rest() {
        let labels = vec![
            ("tag".to_string(), Label::NoCall),
            ("json".to_string(), Label::NoCall),
            ("hermes".to_string(), Label::Pass),
            ("fence".to_string(), Label::NoCall),
        ];
        assert_eq!(mode_summary(&labels), "hermes:pass +3 no_call");
        assert_eq!(mode_summary(&labels[..2]), "all no_call");
        assert_eq!(mode_summary(&[]), "");
    }
}
