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
//!              "label": "no_call", "calls": []},
//!  "stored":  {"hermes": "pass"}}
//! ```
//!
//! An unreadable file (or JSONL line) yields `{"path": …, "error": …}`.
//!
//! `profile.parse_mode` names the mode whose candidates the pipeline selected
//! (`hermes`, `json`, …) or `none`; unlike the telemetry record, which keeps
//! seed 000's wording (`primary` for the primary mode), it never says
//! `primary`, so records of different profiles compare directly.

use crate::batch::{self, Entry};
use crate::table::{Table, cell};
use crate::{EXIT_BAD, EXIT_FINDINGS, EXIT_OK, EngineArgs, jsonout};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;
use toolgate_core::load::{LabelMap, write_labels};
use toolgate_core::{Label, Transcript, sanitize};
use toolgate_validator::{Finding, Replay};

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
    /// Output format; `jsonl` is the machine interface.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Only transcripts whose labels differ from their stored `labels`
    /// (only the modes present in `labels` are compared).
    #[arg(long)]
    changed: bool,
    /// Exit 1 when any label differs from the stored one; print the differences.
    #[arg(long)]
    check: bool,
    /// Store the strict label of every mode in each file's `labels` member
    /// (atomically; nothing else in the file changes).
    #[arg(long)]
    write: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Json,
    Jsonl,
}

/// What `label` keeps of one replay.
pub struct Labels {
    /// Strict label per mode, engine order.
    pub strict: Vec<(String, Label)>,
    /// Lenient label per mode, engine order.
    pub lenient: Vec<(String, Label)>,
    /// The profile's summary (`profile` member of the record).
    pub profile: Value,
    /// The profile's label.
    pub profile_label: Label,
    /// `execute`, `no_call`, `reject (gate)`.
    pub decision: String,
    /// Server findings (apart from the labels).
    pub findings: Vec<Finding>,
}

/// Summarizes a replay for `label`.
pub fn summarize(_t: &Transcript, replay: &Replay) -> Labels {
    let p = &replay.profile;
    let calls: Vec<Value> = p.decision.calls().iter().map(|c| c.to_json()).collect();
    let profile = json!({
        "name": p.profile,
        "parse_mode": p.parse_mode.as_deref().unwrap_or("none"),
        "fallback_used": p.telemetry.fallback_used,
        "candidate_count": p.telemetry.candidate_count,
        "decision": p.decision.kind(),
        "gate": p.decision.gate().map(|g| g.as_str()),
        "label": p.label.as_str(),
        "calls": calls,
    });
    let decision = match p.decision.gate() {
        Some(gate) => format!("{} ({gate})", p.decision.kind()),
        None => p.decision.kind().to_string(),
    };
    Labels {
        strict: replay
            .strict
            .iter()
            .map(|m| (m.mode.clone(), m.label))
            .collect(),
        lenient: replay
            .lenient
            .iter()
            .map(|m| (m.mode.clone(), m.label))
            .collect(),
        profile,
        profile_label: p.label,
        decision,
        findings: replay.findings.clone(),
    }
}

/// The `findings` member: `[{"kind": …, "detail": …}, …]`.
pub fn findings_json(findings: &[Finding]) -> Value {
    Value::Array(
        findings
            .iter()
            .map(|f| json!({"kind": f.kind.as_str(), "detail": f.detail}))
            .collect(),
    )
}

/// One mode whose label differs from the stored one.
#[derive(Debug, PartialEq, Eq)]
pub struct Difference {
    /// The mode.
    pub mode: String,
    /// The stored label.
    pub stored: String,
    /// The label now (`None`: the mode no longer exists for this transcript).
    pub now: Option<Label>,
}

/// The differences between the stored labels and `labels`, for the modes
/// present in the stored map (in stored order).
pub fn differences(t: &Transcript, labels: &Labels) -> Vec<Difference> {
    let Some(Value::Object(stored)) = t.raw.get("labels") else {
        return Vec::new();
    };
    stored
        .iter()
        .filter_map(|(mode, old)| {
            let old = old.as_str().unwrap_or_default();
            let now = labels
                .strict
                .iter()
                .find(|(m, _)| m == mode)
                .map(|(_, l)| *l);
            (now.map(Label::as_str) != Some(old)).then(|| Difference {
                mode: mode.clone(),
                stored: old.to_string(),
                now,
            })
        })
        .collect()
}

fn label_map(labels: &[(String, Label)]) -> Value {
    let map: Map<String, Value> = labels
        .iter()
        .map(|(m, l)| (m.clone(), Value::String(l.as_str().into())))
        .collect();
    Value::Object(map)
}

/// The SPEC §7 record of one transcript.
pub fn record(t: &Transcript, labels: &Labels) -> Value {
    let mut obj = Map::new();
    obj.insert("path".into(), Value::String(t.path.display().to_string()));
    obj.insert("id".into(), Value::String(t.id.clone()));
    obj.insert(
        "model".into(),
        t.model.clone().map_or(Value::Null, Value::String),
    );
    obj.insert(
        "task".into(),
        t.task.clone().map_or(Value::Null, Value::String),
    );
    obj.insert("labels".into(), label_map(&labels.strict));
    obj.insert("lenient".into(), label_map(&labels.lenient));
    obj.insert("profile".into(), labels.profile.clone());
    let stored = match t.raw.get("labels") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => Value::Null,
    };
    obj.insert("stored".into(), stored);
    obj.insert("findings".into(), findings_json(&labels.findings));
    Value::Object(obj)
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

/// Runs `toolgate label`.
pub fn run(args: LabelArgs) -> Result<u8> {
    let engine = crate::setup::engine(&args.engine)?;
    let entries = batch::replay_paths(&engine, &args.paths, summarize);
    let filter = args.changed || args.check;

    let mut out = std::io::stdout().lock();
    let mut n_diff = 0usize;
    let mut n_unlabeled = 0usize;
    let mut json_records = Vec::new();
    let mut table = if filter {
        Table::new(&["TRANSCRIPT", "ID", "MODE", "STORED", "NOW"])
    } else {
        Table::new(&[
            "TRANSCRIPT",
            "ID",
            "MODEL",
            "TASK",
            "LABEL",
            "DECISION",
            "MODES",
        ])
    };
    for entry in &entries {
        let (t, labels) = match entry {
            Entry::Done { transcript, value } => (transcript, value),
            Entry::Bad(e) => {
                match args.format {
                    Format::Jsonl => writeln!(out, "{}", jsonout::line(&error_record(e)))?,
                    Format::Json => json_records.push(error_record(e)),
                    Format::Table => {}
                }
                continue;
            }
        };
        if t.raw.get("labels").is_none() {
            n_unlabeled += 1;
        }
        let diffs = differences(t, labels);
        if !diffs.is_empty() {
            n_diff += 1;
        }
        if filter && diffs.is_empty() {
            continue;
        }
        match args.format {
            Format::Jsonl => writeln!(out, "{}", jsonout::line(&record(t, labels)))?,
            Format::Json => json_records.push(record(t, labels)),
            Format::Table if filter => {
                for d in &diffs {
                    table.push(vec![
                        cell(&location(t), 60),
                        cell(&t.id, 40),
                        cell(&d.mode, 24),
                        cell(&d.stored, 24),
                        d.now.map_or("(absent)".to_string(), |l| l.to_string()),
                    ]);
                }
            }
            Format::Table => table.push(vec![
                cell(&location(t), 60),
                cell(&t.id, 40),
                cell(t.model.as_deref().unwrap_or("-"), 30),
                cell(t.task.as_deref().unwrap_or("-"), 30),
                labels.profile_label.to_string(),
                labels.decision.clone(),
                cell(&mode_summary(&labels.strict), 200),
            ]),
        }
    }
    match args.format {
        Format::Json => writeln!(out, "{}", jsonout::pretty(&Value::Array(json_records)))?,
        Format::Table if !table.is_empty() => write!(out, "{}", table.plain())?,
        _ => {}
    }
    out.flush()?;
    drop(out);

    let n_bad = batch::report_bad(&entries);
    if filter {
        eprintln!(
            "toolgate: {n_diff} transcript(s) with labels differing from the stored ones{}",
            if n_unlabeled > 0 {
                format!(" ({n_unlabeled} without stored labels, not compared)")
            } else {
                String::new()
            }
        );
    }
    let mut write_failed = false;
    if args.write {
        write_failed = !store(&entries);
    }
    Ok(if n_bad > 0 || write_failed {
        EXIT_BAD
    } else if args.check && n_diff > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

/// The label updates of one file: JSONL line (or `None`) → labels.
type Updates = Vec<(Option<usize>, LabelMap)>;

/// Stores the strict labels of every replayed transcript, one atomic write
/// per file. Returns whether every write succeeded.
fn store(entries: &[Entry<Labels>]) -> bool {
    let mut files: Vec<(PathBuf, Updates)> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    let mut seen: HashSet<(PathBuf, Option<usize>)> = HashSet::new();
    let mut skipped = 0usize;
    for entry in entries {
        let Entry::Done {
            transcript: t,
            value,
        } = entry
        else {
            continue;
        };
        let map: LabelMap = value
            .strict
            .iter()
            .map(|(m, l)| (m.clone(), l.as_str().to_string()))
            .collect();
        // Imported captures other than a chat pair (streams, Batch, Responses,
        // Anthropic, OTel, BFCL) are the provider's files: not rewritten.
        let from = t
            .raw
            .get("import")
            .and_then(|i| i.get("from"))
            .and_then(Value::as_str);
        if from.is_some_and(|f| f != "openai-chat")
            || t.raw.contains_key("sample") && from.is_some()
        {
            skipped += 1;
            continue;
        }
        // The same file named twice (directly and through a directory) is
        // loaded twice: store each transcript once.
        if !seen.insert((t.path.clone(), t.line)) {
            continue;
        }
        match index.get(&t.path).and_then(|&i| files.get_mut(i)) {
            Some((_, updates)) => updates.push((t.line, map)),
            None => {
                index.insert(t.path.clone(), files.len());
                files.push((t.path.clone(), vec![(t.line, map)]));
            }
        }
    }
    let mut ok = true;
    let mut n = 0;
    let mut written = 0;
    for (path, updates) in &files {
        match write_labels(path, updates) {
            Ok(()) => {
                n += updates.len();
                written += 1;
            }
            Err(e) => {
                ok = false;
                eprintln!(
                    "toolgate: cannot write labels to {}: {}",
                    sanitize::one_line(&path.display().to_string()),
                    sanitize::one_line(&e.to_string())
                );
            }
        }
    }
    eprintln!(
        "toolgate: {}",
        write_summary(n, written, files.len() - written)
    );
    if skipped > 0 {
        eprintln!(
            "toolgate: {skipped} imported transcript(s) not stored: their files are captures in another format (toolgate import them first)"
        );
    }
    ok
}

/// What `label --write` says at the end: the transcripts and files written,
/// and the files that could not be (counted apart, never mixed in).
fn write_summary(transcripts: usize, written: usize, failed: usize) -> String {
    let mut s = format!("stored labels of {transcripts} transcript(s) in {written} file(s)");
    if failed > 0 {
        s.push_str(&format!("; {failed} file(s) could not be written"));
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn write_summary_counts_failed_files_apart() {
        // Two transcripts written to two files, a third file failed: it used
        // to say "2 transcript(s) in 3 file(s)".
        assert_eq!(
            write_summary(2, 2, 1),
            "stored labels of 2 transcript(s) in 2 file(s); 1 file(s) could not be written"
        );
        assert_eq!(
            write_summary(5, 3, 0),
            "stored labels of 5 transcript(s) in 3 file(s)"
        );
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

    #[test]
    fn differences_compare_only_the_stored_modes() {
        let text =
            r#"{"output": "", "labels": {"hermes": "pass", "gone": "pass", "tag": "no_call"}}"#;
        let t =
            toolgate_core::load::parse_transcript(text, std::path::Path::new("t.json"), None, "t")
                .unwrap();
        let labels = Labels {
            strict: vec![
                ("tag".into(), Label::NoCall),
                ("hermes".into(), Label::MalformedJson),
                ("json".into(), Label::Pass),
            ],
            lenient: Vec::new(),
            profile: Value::Null,
            profile_label: Label::NoCall,
            decision: "no_call".into(),
            findings: Vec::new(),
        };
        assert_eq!(
            differences(&t, &labels),
            [
                Difference {
                    mode: "hermes".into(),
                    stored: "pass".into(),
                    now: Some(Label::MalformedJson)
                },
                Difference {
                    mode: "gone".into(),
                    stored: "pass".into(),
                    now: None
                },
            ]
        );
    }
}
