//! `toolgate matrix`: the conformance matrix.
//!
//! Transcripts are grouped into cells by the `--by` keys; per cell: n, the
//! number of `pass` profile labels, the pass rate with a 95% Wilson score
//! interval, the count of every label, the profile that judged the cell and
//! why (`auto` unless `--profile`), and a flag when the interval spans both
//! "fine" (≥ 0.8) and "broken" (< 0.5) — or, symmetrically, when the
//! failure rate's interval does: the data cannot tell those apart yet, so the
//! cell needs more samples.
//!
//! `--by mode` is parser sensitivity: per model and mode, the mode's own
//! strict label (whatever the profile), its pass rate, and how many labels
//! change between strict and lenient extraction. Modes whose labels are all
//! `no_call` for a model, strict and lenient, are left out.
//!
//! Over runs (`toolgate run` output): pass^k and the stable / flaky /
//! failing split over repeated samples ([`toolgate_matrix::stats`]), `--compare BASE_DIR`
//! ([`toolgate_matrix::compare`]), `--format csv|html` ([`toolgate_matrix::export`]), routing metadata in the
//! JSON ([`toolgate_matrix::routing_table`]) and `--fail-under RATE` for CI. Server findings are
//! counted per cell too (`findings`), apart from the labels: they describe
//! the serving stack, not the model.

mod compare;

use crate::table::{Table, cell};
use crate::{BatchArgs, EXIT_BAD, EXIT_OK, jsonout};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use toolgate_batch::{self as batch, Entry};
use toolgate_core::Transcript;
use toolgate_matrix::export::{self, cell_json};
use toolgate_matrix::stats::{inconclusive, wilson};
use toolgate_matrix::{Cells, Judged, Key, aggregate, summarize};
use toolgate_validator::{Chosen, FindingKind, Outcome};

/// `toolgate matrix [PATH…]`.
#[derive(Args, Debug)]
#[command(
    after_help = "Each cell's label is the profile label of each transcript. Without \
--profile, each model is judged by its own profile (auto): the [models] table of \
toolgate.toml, else the built-in table of model families, else the mode whose candidates \
parse most often across that model's transcripts (when none parse, the one that finds them \
most often), else the default profile; the PROFILE \
and SOURCE columns say which and why. The rate is passes / n with a 95% Wilson score \
interval. A cell is flagged `inconclusive` when its interval spans both \"fine\" (pass \
rate >= 0.8) and \"broken\" (pass rate < 0.5), or the same holds for the failure rate \
(so 0/1 is as inconclusive as 1/1): more samples are needed before routing on it. \
--by mode gives, per model and mode, the mode's own label and LENIENT: how many labels \
change between strict and lenient extraction."
)]
pub struct MatrixArgs {
    #[command(flatten)]
    batch: BatchArgs,
    /// Group cells by these keys (comma-separated); a missing value is `-`.
    /// `mode` (always with `model`) judges each transcript by every mode.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "model,task")]
    by: Vec<Key>,
    /// Output format; JSON is routing metadata (cells, and per model and
    /// tag: rate, interval, dominant failure, retry advice; `schema_version`
    /// last). A cell's `inconclusive` (also named `flag`, its older name) is
    /// true when its interval cannot tell "fine" from "broken" yet.
    #[arg(long, value_enum, default_value_t = MatrixFormat::Table)]
    format: MatrixFormat,
    /// Compare with an earlier run: per cell, the change in pass rate with a
    /// 95% Newcombe interval, flagged `improved`/`regressed` where it excludes 0.
    #[arg(long, value_name = "BASE_DIR")]
    compare: Option<PathBuf>,
    /// Exit 1 when any cell's pass rate is below RATE (0 to 1): a CI gate.
    #[arg(long, value_name = "RATE")]
    fail_under: Option<f64>,
    /// With --compare: exit 1 when any cell regressed.
    #[arg(long, requires = "compare")]
    fail_on_regression: bool,
    /// Replay only these modes (comma-separated) besides each profile's own:
    /// what `--by mode` shows, and faster when only some modes matter.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    modes: Option<Vec<String>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MatrixFormat {
    Table,
    Markdown,
    Json,
    Csv,
    Html,
}

/// Runs `toolgate matrix`.
pub fn run(args: MatrixArgs) -> Result<u8> {
    let mut engine = crate::setup::engine(&args.batch.engine)?;
    crate::setup::select_modes(&mut engine, args.modes.as_deref())?;
    let auto = crate::setup::auto(&args.batch.engine, &engine)?;
    let by = Key::normalize(&args.by);
    let by_mode = by.contains(&Key::Mode);
    let summarize = |_: &Transcript, outcome: &Outcome<'_>, chosen: &Chosen| {
        summarize(outcome, chosen, by_mode)
    };
    // A gate decides only on what it was meant to read: its settings and
    // its baseline are checked before anything is replayed or printed.
    if let Some(r) = args.fail_under
        && !(0.0..=1.0).contains(&r)
    {
        anyhow::bail!("--fail-under must be a rate between 0 and 1");
    }
    if let Some(base) = &args.compare
        && let Err(e) = std::fs::metadata(base)
    {
        anyhow::bail!(
            "cannot read the --compare baseline {}: {e}",
            crate::table::cell(&base.display().to_string(), 400)
        );
    }
    let mut entries = batch::collect(
        &engine,
        &auto,
        &args.batch.paths,
        &args.batch.input.batch_options(),
        summarize,
    );
    let mut n_cut_short = toolgate_matrix::drop_cut_short(&mut entries);
    let cells = aggregate(&by, &entries);
    let gate = args.fail_under.is_some() || args.fail_on_regression;
    if gate && cells.is_empty() {
        batch::report_bad(&entries);
        anyhow::bail!(
            "no transcript was read: a gate (--fail-under, --fail-on-regression) cannot decide on nothing"
        );
    }

    let mut findings = false;
    let compared = match &args.compare {
        Some(base) => {
            let mut base_entries = batch::collect(
                &engine,
                &auto,
                std::slice::from_ref(base),
                &args.batch.input.batch_options(),
                summarize,
            );
            n_cut_short += toolgate_matrix::drop_cut_short(&mut base_entries);
            let base_cells = aggregate(&by, &base_entries);
            baseline_usable(base, &base_entries, &base_cells, &cells).inspect_err(|_| {
                batch::report_bad(&entries);
            })?;
            Some((base, toolgate_matrix::compare::rows(&base_cells, &cells)))
        }
        None => None,
    };

    let mut out = toolgate_core::stdio::QuietStdout::lock();
    if let Some((base, rows)) = compared {
        compare::write(&mut out, args.format, &by, base, &rows)?;
        findings |= args.fail_on_regression && compare::report_regressions(&rows);
    } else {
        match args.format {
            MatrixFormat::Json => {
                let list: Vec<Value> = cells.values().map(|c| cell_json(&by, c, by_mode)).collect();
                let doc = json!({
                    "by": by.iter().map(|k| k.name()).collect::<Vec<_>>(),
                    "cells": list,
                    "routing": toolgate_matrix::routing_table(&entries),
                });
                // `schema_version` last, as in every record toolgate prints.
                writeln!(out, "{}", jsonout::pretty(&jsonout::versioned(doc)))?;
            }
            MatrixFormat::Csv => export::csv(&mut out, &by, &cells)?,
            MatrixFormat::Html => export::html(&mut out, &by, &cells)?,
            // Nothing read (the paths are named on stderr): no empty table.
            MatrixFormat::Table | MatrixFormat::Markdown if cells.is_empty() => {}
            MatrixFormat::Table | MatrixFormat::Markdown => {
                let mut header: Vec<String> = by.iter().map(|k| k.name().to_uppercase()).collect();
                let n_keys = header.len();
                header.extend(["N", "PASS", "RATE", "95% CI", "FLAG"].map(String::from));
                if by_mode {
                    header.push("LENIENT".into());
                } else {
                    header.extend(["PROFILE", "SOURCE"].map(String::from));
                }
                header.extend(
                    ["PASS^K", "STABLE/FLAKY/FAILING", "LABELS", "FINDINGS"].map(String::from),
                );
                if args.format == MatrixFormat::Markdown {
                    header = header.iter().map(|h| h.to_lowercase()).collect();
                }
                let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
                let mut right = vec![n_keys, n_keys + 1, n_keys + 2];
                if by_mode {
                    right.push(n_keys + 5);
                }
                let mut table = fit_rules(Table::new(&header_refs).align_right(&right), &by);
                for c in cells.values() {
                    let (n, passes) = (c.n(), c.passes());
                    let (low, high) = wilson(passes, n);
                    let mut row: Vec<String> = c
                        .keys
                        .iter()
                        .map(|k| cell(k, crate::table::CELL_MAX))
                        .collect();
                    row.push(n.to_string());
                    row.push(passes.to_string());
                    row.push(format!("{:.2}", passes as f64 / n.max(1) as f64));
                    row.push(format!("[{low:.2}, {high:.2}]"));
                    row.push(
                        if inconclusive(low, high) {
                            "inconclusive"
                        } else {
                            ""
                        }
                        .into(),
                    );
                    if by_mode {
                        row.push(c.lenient_changed.to_string());
                    } else {
                        let (name, _, detail) = c.profile();
                        row.push(cell(&name, crate::table::CELL_MAX));
                        row.push(cell(&detail, crate::table::CELL_MAX));
                    }
                    let sm = c.samples();
                    row.push(format!("{:.2} (k={})", sm.pass_k, sm.k));
                    row.push(format!("{}/{}/{}", sm.stable, sm.flaky, sm.failing));
                    row.push(counts(&c.labels));
                    row.push(counts(&c.findings));
                    table.push(row);
                }
                if args.format == MatrixFormat::Markdown {
                    write!(out, "{}", table.markdown())?;
                } else {
                    write!(out, "{}", table.plain())?;
                }
            }
        }
    }
    out.flush()?;
    drop(out);
    // Counted in each cell's findings too (`tools_unknown`).
    let n_tools_unknown = entries
        .iter()
        .filter(|e| {
            matches!(e, Entry::Done { value, .. } if value.findings.contains(&FindingKind::ToolsUnknown))
        })
        .count();
    if n_tools_unknown > 0 {
        eprintln!(
            "toolgate: {}",
            crate::label::tools_unknown_summary(n_tools_unknown)
        );
    }
    if let Some(rate) = args.fail_under {
        findings |= report_under(&cells, rate);
    }
    let n_bad = batch::report_bad(&entries);
    batch::report_cut_short(n_cut_short);
    let n_run_errors = report_run_errors(&args.batch.paths, &entries);
    if gate && n_run_errors > 0 {
        eprintln!(
            "toolgate: a gate (--fail-under, --fail-on-regression) does not decide on a run with failed samples: rerun `toolgate run` to fill them in"
        );
    }
    Ok(if n_bad > 0 || (gate && n_run_errors > 0) {
        EXIT_BAD
    } else if findings {
        crate::EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

/// Says on stderr, for each `toolgate run` output directory read (a path
/// given, or the directory two levels above a transcript:
/// `OUT/<model>/<task>.<s>.json`), how many samples its `run-errors.log`
/// lists: samples the endpoint failed, which have no transcript and so are
/// in no cell's n (a run error is never a label). Without this a cell of
/// 1 answered sample out of k = 10 looked like a complete one. Returns the
/// total.
fn report_run_errors(paths: &[std::path::PathBuf], entries: &[Entry<Judged>]) -> usize {
    use std::io::BufRead;
    let log = toolgate_proxy::runner::ERRORS_FILE;
    let mut dirs = std::collections::BTreeSet::new();
    for path in paths {
        dirs.insert(path.join(log));
    }
    for entry in entries {
        if let Entry::Done { transcript, .. } = entry
            && let Some(out) = transcript.path.parent().and_then(|d| d.parent())
        {
            dirs.insert(out.join(log));
        }
    }
    let mut total = 0;
    for file in dirs {
        // Only a regular file (opening a FIFO would block).
        if !std::fs::metadata(&file).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let Ok(f) = std::fs::File::open(&file) else {
            continue;
        };
        let n = std::io::BufReader::new(f)
            .split(b'\n')
            .map_while(std::result::Result::ok)
            .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
            .count();
        if n > 0 {
            eprintln!(
                "toolgate: {}: {n} sample(s) of that run failed (run errors: no transcript, counted in no cell); rerun `toolgate run` to fill them in",
                cell(&file.display().to_string(), 400)
            );
            total += n;
        }
    }
    total
}

/// Whether a `--compare` baseline can be compared with: every file of it
/// read, at least one transcript, and at least one cell in common with the
/// run. A mistyped or unreadable baseline would otherwise make every cell
/// `new`, and a regression gate could not fail.
fn baseline_usable(
    base: &std::path::Path,
    entries: &[Entry<Judged>],
    base_cells: &Cells,
    cells: &Cells,
) -> Result<()> {
    let name = crate::table::cell(&base.display().to_string(), 400);
    let unreadable = batch::report_bad(entries);
    match toolgate_matrix::compare::baseline_problem(&name, unreadable, base_cells, cells) {
        Some(problem) => anyhow::bail!("{problem}"),
        None => Ok(()),
    }
}

/// How the matrix table fits a terminal: the counts, the rate, its interval
/// and the flag are never cut; the key columns keep what tells cells apart
/// (a file's end, the distinguishing part of a model name); the columns a
/// narrow terminal can spare go first, least telling first.
fn fit_rules(table: Table, by: &[Key]) -> Table {
    let find = |name: &str| {
        table
            .column(name)
            .or_else(|| table.column(&name.to_lowercase()))
    };
    let fixed: Vec<usize> = ["N", "PASS", "RATE", "95% CI", "FLAG"]
        .iter()
        .filter_map(|n| find(n))
        .collect();
    let droppable: Vec<usize> = [
        "FINDINGS",
        "LABELS",
        "SOURCE",
        "STABLE/FLAKY/FAILING",
        "PASS^K",
        "PROFILE",
    ]
    .iter()
    .filter_map(|n| find(n))
    .collect();
    let (files, names): (Vec<usize>, Vec<usize>) = (0..by.len()).partition(|&i| by[i] == Key::File);
    table
        .fixed(&fixed)
        .droppable(&droppable)
        .cut_left(&files)
        .cut_middle(&names)
        .keep_whole(&(0..by.len()).collect::<Vec<_>>())
}

/// Names every cell whose pass rate is below `rate` on stderr; whether any was.
fn report_under(cells: &Cells, rate: f64) -> bool {
    let under = toolgate_matrix::under(cells, rate);
    for (c, r) in &under {
        eprintln!(
            "toolgate: below --fail-under {rate}: {} rate {r:.2} ({} of {})",
            cell(&c.keys.join(" / "), 120),
            c.passes(),
            c.n()
        );
    }
    !under.is_empty()
}

/// `key:count` pairs, space-separated (a cell's labels or findings).
fn counts<'a, K: std::fmt::Display + 'a>(
    counts: impl IntoIterator<Item = (&'a K, &'a usize)>,
) -> String {
    let pairs: Vec<String> = counts
        .into_iter()
        .map(|(k, count)| format!("{k}:{count}"))
        .collect();
    pairs.join(" ")
}
