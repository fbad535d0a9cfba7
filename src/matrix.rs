//! `toolgate matrix`: the conformance matrix.
//!
//! Transcripts are grouped into cells by the `--by` keys; per cell: n, the
//! number of `pass` profile labels, the pass rate with a 95% Wilson score
//! interval, the count of every label, and a flag when the interval spans
//! both "fine" (≥ 0.8) and "broken" (< 0.5): the data cannot tell those
//! apart yet, so the cell needs more samples.
//!
//! Over runs (`toolgate run` output): pass^k and the stable / flaky /
//! failing split over repeated samples ([`stats`]), `--compare BASE_DIR`
//! ([`compare`]), `--format csv|html` ([`export`]), routing metadata in the
//! JSON ([`routing`]) and `--fail-under RATE` for CI. Server findings are
//! counted per cell too (`findings`), apart from the labels: they describe
//! the serving stack, not the model.

mod compare;
mod export;
mod routing;
mod stats;

use crate::batch::{self, Entry};
use crate::table::{Table, cell};
use crate::{EXIT_BAD, EXIT_OK, EngineArgs, jsonout};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use toolgate_core::{Label, Transcript};
use toolgate_validator::{FindingKind, Replay};

/// A pass rate at or above this is "fine".
pub const FINE: f64 = 0.8;
/// A pass rate below this is "broken".
pub const BROKEN: f64 = 0.5;
/// The standard normal quantile for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// `toolgate matrix [PATH…]`.
#[derive(Args, Debug)]
#[command(
    after_help = "Each cell's label is the profile label of each transcript. The rate \
is passes / n with a 95% Wilson score interval. A cell is flagged `inconclusive` when its \
interval spans both \"fine\" (pass rate >= 0.8) and \"broken\" (pass rate < 0.5), i.e. \
ci_low < 0.5 and ci_high >= 0.8: more samples are needed before routing on it."
)]
pub struct MatrixArgs {
    /// Files and directories (walked recursively for .json/.jsonl).
    #[arg(value_name = "PATH", default_value = "transcripts")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
    /// Group cells by these keys (comma-separated); a missing value is `-`.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "model,task")]
    by: Vec<Key>,
    /// Output format; JSON is routing metadata (`schema_version`, cells,
    /// and per model and tag: rate, interval, dominant failure, retry advice).
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
}

/// A grouping key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Key {
    /// The transcript's `model`.
    Model,
    /// The transcript's `task`.
    Task,
    /// The transcript's `sample`.
    Sample,
    /// The file the transcript came from.
    File,
    /// Each of the transcript's `tags` (a transcript counts in every one).
    Tag,
}

impl Key {
    fn name(self) -> &'static str {
        match self {
            Key::Model => "model",
            Key::Task => "task",
            Key::Sample => "sample",
            Key::File => "file",
            Key::Tag => "tag",
        }
    }

    /// The transcript's values for this key: one, or one per tag.
    fn values(self, t: &Transcript) -> Vec<String> {
        if self != Key::Tag {
            return vec![self.value(t)];
        }
        let mut tags: Vec<String> = t
            .raw
            .get("tags")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        tags.dedup();
        if tags.is_empty() {
            tags.push("-".into());
        }
        tags
    }

    fn value(self, t: &Transcript) -> String {
        let missing = || "-".to_string();
        match self {
            Key::Model => t.model.clone().unwrap_or_else(missing),
            Key::Task => t.task.clone().unwrap_or_else(missing),
            Key::Sample => t.sample.map_or_else(missing, |s| s.to_string()),
            Key::File => t.path.display().to_string(),
            Key::Tag => self.values(t).join(","),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MatrixFormat {
    Table,
    Markdown,
    Json,
    Csv,
    Html,
}

/// The 95% Wilson score interval of `passes` successes in `n` trials:
///
/// ```text
/// centre = (p̂ + z²/2n) / (1 + z²/n)
/// half   = z / (1 + z²/n) · √(p̂(1−p̂)/n + z²/4n²)
/// ```
///
/// with p̂ = passes / n and z = 1.95996…; `(0, 1)` for n = 0.
pub fn wilson(passes: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = passes.min(n as usize) as f64 / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Whether an interval spans both "fine" and "broken".
pub fn inconclusive(low: f64, high: f64) -> bool {
    low < BROKEN && high >= FINE
}

/// One cell of the matrix.
struct Cell {
    keys: Vec<String>,
    labels: BTreeMap<Label, usize>,
    /// Passes and n per (model, task): the repeated samples of one question.
    units: BTreeMap<(String, String), stats::Unit>,
    /// Transcripts with each server finding.
    findings: BTreeMap<FindingKind, usize>,
}

impl Cell {
    fn n(&self) -> usize {
        self.labels.values().sum()
    }
    fn passes(&self) -> usize {
        self.labels.get(&Label::Pass).copied().unwrap_or(0)
    }
    fn samples(&self) -> stats::Samples {
        stats::samples(self.units.values())
    }
}

type Cells = BTreeMap<Vec<String>, Cell>;

/// The cells of `entries` grouped by `by` (a transcript with several tags
/// counts once in each tag's cell).
fn aggregate(by: &[Key], entries: &[Entry<Summary>]) -> Cells {
    let mut cells = Cells::new();
    for entry in entries {
        let Entry::Done {
            transcript: t,
            value: (label, findings),
        } = entry
        else {
            continue;
        };
        let mut combos: Vec<Vec<String>> = vec![Vec::new()];
        for k in by {
            let values = k.values(t);
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(v.clone());
                        c
                    })
                })
                .collect();
        }
        let unit = (Key::Model.value(t), Key::Task.value(t));
        for keys in combos {
            let cell = cells.entry(keys.clone()).or_insert_with(|| Cell {
                keys,
                labels: BTreeMap::new(),
                units: BTreeMap::new(),
                findings: BTreeMap::new(),
            });
            *cell.labels.entry(*label).or_insert(0) += 1;
            for kind in findings {
                *cell.findings.entry(*kind).or_insert(0) += 1;
            }
            let u = cell.units.entry(unit.clone()).or_default();
            u.n += 1;
            u.passes += usize::from(label.is_pass());
        }
    }
    cells
}

/// What the matrix keeps of one replay: the profile's label and the
/// transcript's server findings (each kind once).
type Summary = (Label, Vec<FindingKind>);

fn summarize(_t: &Transcript, replay: &Replay) -> Summary {
    let mut kinds: Vec<FindingKind> = replay.findings.iter().map(|f| f.kind).collect();
    kinds.sort();
    kinds.dedup();
    (replay.profile.label, kinds)
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Runs `toolgate matrix`.
pub fn run(args: MatrixArgs) -> Result<u8> {
    let engine = crate::setup::engine(&args.engine)?;
    let entries = batch::replay_paths(&engine, &args.paths, summarize);
    let by: Vec<Key> = {
        let mut by = Vec::new();
        for k in args.by {
            if !by.contains(&k) {
                by.push(k);
            }
        }
        by
    };

    if let Some(r) = args.fail_under
        && !(0.0..=1.0).contains(&r)
    {
        anyhow::bail!("--fail-under must be a rate between 0 and 1");
    }
    let cells = aggregate(&by, &entries);

    let mut out = std::io::stdout().lock();
    let mut findings = false;
    if let Some(base) = &args.compare {
        let base_entries = batch::replay_paths(&engine, std::slice::from_ref(base), summarize);
        let base_cells = aggregate(&by, &base_entries);
        let rows = compare::rows(&base_cells, &cells);
        compare::write(&mut out, args.format, &by, base, &rows)?;
        findings |= args.fail_on_regression && compare::report_regressions(&rows);
        batch::report_bad(&base_entries);
    } else {
        match args.format {
            MatrixFormat::Json => {
                let list: Vec<Value> = cells.values().map(|c| cell_json(&by, c)).collect();
                let doc = json!({
                    "schema_version": SCHEMA_VERSION,
                    "by": by.iter().map(|k| k.name()).collect::<Vec<_>>(),
                    "cells": list,
                    "routing": routing::table(&entries),
                });
                writeln!(out, "{}", jsonout::pretty(&doc))?;
            }
            MatrixFormat::Csv => export::csv(&mut out, &by, &cells)?,
            MatrixFormat::Html => export::html(&mut out, &by, &cells)?,
            MatrixFormat::Table | MatrixFormat::Markdown => {
                let mut header: Vec<String> = by.iter().map(|k| k.name().to_uppercase()).collect();
                let n_keys = header.len();
                header.extend(
                    [
                        "N",
                        "PASS",
                        "RATE",
                        "95% CI",
                        "FLAG",
                        "PASS^K",
                        "STABLE/FLAKY/FAILING",
                        "LABELS",
                        "FINDINGS",
                    ]
                    .map(String::from),
                );
                if args.format == MatrixFormat::Markdown {
                    header = header.iter().map(|h| h.to_lowercase()).collect();
                }
                let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
                let mut table =
                    Table::new(&header_refs).align_right(&[n_keys, n_keys + 1, n_keys + 2]);
                for c in cells.values() {
                    let (n, passes) = (c.n(), c.passes());
                    let (low, high) = wilson(passes, n);
                    let mut row: Vec<String> = c.keys.iter().map(|k| cell(k, 40)).collect();
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
                    let sm = c.samples();
                    row.push(format!("{:.2} (k={})", sm.pass_k, sm.k));
                    row.push(format!("{}/{}/{}", sm.stable, sm.flaky, sm.failing));
                    let labels: Vec<String> = c
                        .labels
                        .iter()
                        .map(|(l, count)| format!("{l}:{count}"))
                        .collect();
                    row.push(labels.join(" "));
                    let findings: Vec<String> = c
                        .findings
                        .iter()
                        .map(|(k, count)| format!("{k}:{count}"))
                        .collect();
                    row.push(findings.join(" "));
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
    if let Some(rate) = args.fail_under {
        findings |= report_under(&cells, rate);
    }
    let n_bad = batch::report_bad(&entries);
    Ok(if n_bad > 0 {
        EXIT_BAD
    } else if findings {
        crate::EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

/// The version of the JSON document `--format json` prints; bumped when a
/// field changes meaning or goes away (new fields do not bump it).
pub const SCHEMA_VERSION: u32 = 1;

/// Names every cell whose pass rate is below `rate` on stderr; whether any was.
fn report_under(cells: &Cells, rate: f64) -> bool {
    let mut any = false;
    for c in cells.values() {
        let r = c.passes() as f64 / c.n().max(1) as f64;
        if r < rate {
            any = true;
            eprintln!(
                "toolgate: below --fail-under {rate}: {} rate {r:.2} ({} of {})",
                cell(&c.keys.join(" / "), 120),
                c.passes(),
                c.n()
            );
        }
    }
    any
}

fn cell_json(by: &[Key], c: &Cell) -> Value {
    let (n, passes) = (c.n(), c.passes());
    let (low, high) = wilson(passes, n);
    let keys: Map<String, Value> = by
        .iter()
        .zip(&c.keys)
        .map(|(k, v)| (k.name().to_string(), Value::String(v.clone())))
        .collect();
    let labels: Map<String, Value> = c
        .labels
        .iter()
        .map(|(l, count)| (l.as_str().to_string(), json!(count)))
        .collect();
    let findings: Map<String, Value> = c
        .findings
        .iter()
        .map(|(k, count)| (k.as_str().to_string(), json!(count)))
        .collect();
    json!({
        "keys": keys,
        "n": n,
        "passes": passes,
        "rate": round4(passes as f64 / n.max(1) as f64),
        "ci_low": round4(low),
        "ci_high": round4(high),
        "labels": labels,
        "flag": inconclusive(low, high),
        "pass_k": {"k": c.samples().k, "rate": round4(c.samples().pass_k)},
        "samples": {"stable": c.samples().stable, "flaky": c.samples().flaky, "failing": c.samples().failing},
        "dominant_failure": stats::dominant_failure(&c.labels).map(Label::as_str),
        "retry_advice": stats::dominant_failure(&c.labels).map(|l| l.retry_advice()),
        "findings": findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 5e-5 && (a.1 - b.1).abs() < 5e-5
    }

    // Reference values: Wilson (1927) score interval, z = 1.96 (two-sided 95%),
    // as tabulated by Newcombe (1998), Table I.
    #[test]
    fn wilson_matches_published_values() {
        assert!(
            close(wilson(81, 263), (0.2553, 0.3662)),
            "{:?}",
            wilson(81, 263)
        );
        assert!(
            close(wilson(15, 148), (0.0624, 0.1605)),
            "{:?}",
            wilson(15, 148)
        );
        assert!(close(wilson(0, 20), (0.0, 0.1611)), "{:?}", wilson(0, 20));
        assert!(
            close(wilson(1, 29), (0.0061, 0.1718)),
            "{:?}",
            wilson(1, 29)
        );
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn flag_needs_both_fine_and_broken_in_the_interval() {
        // 3 of 4: [0.3006, 0.9544] spans both.
        let (lo, hi) = wilson(3, 4);
        assert!(inconclusive(lo, hi));
        // 40 of 50: [0.6696, 0.8876] is never "broken".
        let (lo, hi) = wilson(40, 50);
        assert!(!inconclusive(lo, hi));
    }
}
