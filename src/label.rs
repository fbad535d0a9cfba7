//! `toolgate label`: replay transcripts and print, compare or store labels.
//!
//! The label engine (what is kept of each replay, the `--format jsonl`
//! record of SPEC §7, `--write`) is [`toolgate_batch`]'s; this module parses
//! the arguments and prints.

use toolgate_batch::review;

use crate::table::{CELL_MAX, Table, cell};
use crate::{BatchArgs, EXIT_BAD, EXIT_FINDINGS, EXIT_OK, jsonout};
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::io::Write;
use toolgate_batch::{self as batch, Entry, LabelStore, Record, Summarizer, error_record};
use toolgate_core::{Transcript, sanitize};
use toolgate_validator::{Chosen, Outcome};

/// `toolgate label [PATH…]`.
#[derive(Args, Debug)]
#[command(
    after_help = "Exit codes: 0 ok; 1 with --check when a label differs from the \
stored one; 2 bad usage or an unreadable file (every readable file is still processed)."
)]
pub struct LabelArgs {
    #[command(flatten)]
    batch: BatchArgs,
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
    /// reviewed) is a difference too, and fails the check (not an imported
    /// capture, which cannot store labels).
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

fn location(t: &Transcript) -> String {
    t.location()
}

/// Runs `toolgate label`: transcripts are replayed, printed and (with
/// `--write`) stored as the batch streams ([`batch::stream_paths`]); only
/// `--format json` (one array) and `--format table` (aligned columns) wait for
/// the end to print.
pub fn run(args: LabelArgs) -> Result<u8> {
    let mut engine = crate::setup::engine(&args.batch.engine)?;
    crate::setup::select_modes(&mut engine, args.modes.as_deref())?;
    let auto = crate::setup::auto(&args.batch.engine, &engine)?;
    let filter = args.changed || args.check;
    let format = args.format;
    if args.require_labels && !filter {
        anyhow::bail!("--require-labels needs --check or --changed");
    }
    if format == Format::Github && !filter {
        anyhow::bail!("--format github needs --check or --changed");
    }
    let summarizer = Summarizer {
        engine: &engine,
        compare: filter,
        require_labels: args.require_labels,
        record: match format {
            Format::Jsonl => Some(Record::Line),
            Format::Json => Some(Record::Pretty),
            Format::Table | Format::Markdown | Format::Github => None,
        },
    };
    let summarize = |t: &Transcript, outcome: &Outcome<'_>, chosen: &Chosen| {
        summarizer.summarize(t, outcome, chosen)
    };
    let mut sections: Vec<review::Section> = Vec::new();
    let mut tally = review::Tally::default();

    let mut out =
        std::io::BufWriter::with_capacity(1 << 16, toolgate_core::stdio::QuietStdout::lock());
    let mut write_error: Option<std::io::Error> = None;
    // `--format json` streams too: the array's brackets around records
    // rendered (pretty, on the workers) as they come.
    let mut json_records = 0usize;
    // Named on stderr once the output is out; held only up to a bound.
    let mut bad = batch::BadInputs::default();
    let mut store = args.write.then(LabelStore::default);
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
        &args.batch.paths,
        &{
            let mut opts = args.batch.input.batch_options();
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
            if !tally.add(&t, &labels) {
                return;
            }
            if let Some(store) = store.as_mut() {
                store.add(&t, &labels);
            }
            // One failing `--require-labels` is named in every format, even
            // with no mode to store (every one quiet): it fails the check.
            if filter && labels.diffs.is_empty() && !labels.unlabeled {
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
                        path: t.path.clone(),
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
                    if labels.diffs.is_empty() {
                        // Unlabeled, every mode quiet: `--write` would store
                        // an empty `labels` member.
                        table.push(vec![
                            cell(&location(&t), CELL_MAX),
                            cell(&t.id, CELL_MAX),
                            "(every mode)".to_string(),
                            "(absent)".to_string(),
                            "{}".to_string(),
                        ]);
                    }
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
                    cell(&batch::mode_summary(&labels.strict_pairs()), CELL_MAX),
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
            let counts = tally.counts(args.require_labels);
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

    let n_bad = bad.report();
    batch::report_cut_short(tally.cut_short);
    let counts = tally.counts(args.require_labels);
    let review::Tally {
        checked: n_checked,
        changed: n_diff,
        unlabeled: n_unlabeled,
        unlabeled_failing: n_unlabeled_failing,
        tools_unknown: n_tools_unknown,
        not_replayed,
        ..
    } = tally;
    if n_tools_unknown > 0 {
        eprintln!("toolgate: {}", tools_unknown_summary(n_tools_unknown));
    }
    if filter {
        eprintln!(
            "toolgate: {n_diff} transcript(s) with labels differing from the stored ones{}",
            if n_unlabeled > 0 {
                format!("; {}", counts.unlabeled_note(str::to_string))
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
