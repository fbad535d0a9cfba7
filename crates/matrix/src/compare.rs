//! `toolgate matrix NEW… --compare BASE_DIR`: per cell, the change in pass
//! rate from the base run to the new one, with a 95% interval for the
//! difference of two proportions (Newcombe's hybrid score interval). A cell
//! is `improved` or `regressed` only where that interval excludes 0: a
//! change the samples cannot tell from noise is not flagged.
//!
//! [`rows`] compares two runs' cells; [`json()`], [`header`]/[`values`] (CSV)
//! and [`html`] are the comparison's records. The plain and markdown tables
//! are the binary's.

use crate::cells::{Cells, Key, round4};
use crate::{export, stats};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::Path;

/// What a cell did between the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The interval lies above 0.
    Improved,
    /// The interval lies below 0.
    Regressed,
    /// The interval includes 0.
    Unclear,
    /// Only in the new run.
    New,
    /// Only in the base run.
    Gone,
}

impl Change {
    /// The flag text (`""` for an unclear change).
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Improved => "improved",
            Change::Regressed => "regressed",
            Change::Unclear => "",
            Change::New => "new",
            Change::Gone => "gone",
        }
    }
}

/// One compared cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The cell's key values.
    pub keys: Vec<String>,
    /// Base passes and n.
    pub base: (usize, usize),
    /// New passes and n.
    pub new: (usize, usize),
    /// New rate − base rate, when both have samples.
    pub diff: Option<f64>,
    /// Its 95% interval.
    pub ci: Option<(f64, f64)>,
    /// The flag.
    pub change: Change,
}

/// A side's pass rate (0 for no samples).
pub fn rate((x, n): (usize, usize)) -> f64 {
    x as f64 / n.max(1) as f64
}

/// Every cell of either run, in key order.
pub fn rows(base: &Cells, new: &Cells) -> Vec<Row> {
    let keys: BTreeSet<&Vec<String>> = base.keys().chain(new.keys()).collect();
    keys.into_iter()
        .map(|k| {
            let side = |cells: &Cells| cells.get(k).map(|c| (c.passes(), c.n())).unwrap_or((0, 0));
            let (b, n) = (side(base), side(new));
            let ci = stats::newcombe(n.0, n.1, b.0, b.1);
            let change = match ci {
                _ if b.1 == 0 => Change::New,
                _ if n.1 == 0 => Change::Gone,
                Some((low, _)) if low > 0.0 => Change::Improved,
                Some((_, high)) if high < 0.0 => Change::Regressed,
                _ => Change::Unclear,
            };
            Row {
                keys: k.clone(),
                base: b,
                new: n,
                diff: ci.map(|_| rate(n) - rate(b)),
                ci,
                change,
            }
        })
        .collect()
}

/// Why a `--compare` baseline (shown as `name`) cannot be compared with,
/// if it cannot: a file of it unreadable, no transcript, or no cell in
/// common with the run. A mistyped or unreadable baseline would otherwise
/// make every cell `new`, and a regression gate could not fail.
pub fn baseline_problem(
    name: &str,
    unreadable: usize,
    base_cells: &Cells,
    cells: &Cells,
) -> Option<String> {
    if unreadable > 0 {
        return Some(format!(
            "the --compare baseline {name} has {unreadable} unreadable file(s) or line(s) (named above)"
        ));
    }
    if base_cells.is_empty() {
        return Some(format!("the --compare baseline {name} holds no transcript"));
    }
    if !base_cells.keys().any(|k| cells.contains_key(k)) {
        return Some(format!(
            "the --compare baseline {name} shares no cell with the run ({} base cell(s), {} new; same --by keys?)",
            base_cells.len(),
            cells.len()
        ));
    }
    None
}

/// The header of the table, markdown and CSV forms.
pub fn header(by: &[Key]) -> Vec<String> {
    let mut h: Vec<String> = by.iter().map(|k| k.name().to_string()).collect();
    h.extend(
        [
            "base_n",
            "base_pass",
            "base_rate",
            "new_n",
            "new_pass",
            "new_rate",
            "change",
            "ci_low",
            "ci_high",
            "flag",
        ]
        .map(String::from),
    );
    h
}

/// One row's values for the CSV form (key columns raw).
pub fn values(r: &Row) -> Vec<String> {
    let mut v = r.keys.clone();
    let num = |x: Option<f64>| x.map(|x| format!("{:.4}", round4(x))).unwrap_or_default();
    v.extend([
        r.base.1.to_string(),
        r.base.0.to_string(),
        if r.base.1 > 0 {
            format!("{:.4}", round4(rate(r.base)))
        } else {
            String::new()
        },
        r.new.1.to_string(),
        r.new.0.to_string(),
        if r.new.1 > 0 {
            format!("{:.4}", round4(rate(r.new)))
        } else {
            String::new()
        },
        num(r.diff),
        num(r.ci.map(|c| c.0)),
        num(r.ci.map(|c| c.1)),
        r.change.as_str().to_string(),
    ]);
    v
}

/// The comparison as one JSON document (before `schema_version` is added):
/// the keys, the base's path and one record per cell.
pub fn json(by: &[Key], base: &Path, rows: &[Row]) -> Value {
    let list: Vec<Value> = rows
        .iter()
        .map(|r| {
            let keys: serde_json::Map<String, Value> = by
                .iter()
                .zip(&r.keys)
                .map(|(k, v)| (k.name().to_string(), json!(v)))
                .collect();
            json!({
                "keys": keys,
                "base": {"n": r.base.1, "passes": r.base.0,
                         "rate": (r.base.1 > 0).then(|| round4(rate(r.base)))},
                "new": {"n": r.new.1, "passes": r.new.0,
                        "rate": (r.new.1 > 0).then(|| round4(rate(r.new)))},
                "change": r.diff.map(round4),
                "ci_low": r.ci.map(|c| round4(c.0)),
                "ci_high": r.ci.map(|c| round4(c.1)),
                "flag": match r.change { Change::Unclear => None, c => Some(c.as_str()) },
            })
        })
        .collect();
    json!({
        "by": by.iter().map(|k| k.name()).collect::<Vec<_>>(),
        "base": base.display().to_string(),
        "compare": list,
    })
}

/// The comparison as one self-contained HTML page.
pub fn html(out: &mut impl Write, by: &[Key], base: &Path, rows: &[Row]) -> io::Result<()> {
    export::page_start(
        out,
        "toolgate matrix comparison",
        &format!(
            "Change in pass rate against {} with its 95% Newcombe interval (bar) on [-1, 1]; \
flagged where the interval excludes 0.",
            base.display()
        ),
    )?;
    write!(out, "<table>\n<thead><tr>")?;
    for k in by {
        write!(out, "<th>{}</th>", export::esc(k.name()))?;
    }
    write!(
        out,
        "<th>base</th><th>new</th><th>change</th><th>95% CI</th><th>interval</th><th>flag</th></tr></thead>\n<tbody>\n"
    )?;
    let side = |(x, n): (usize, usize)| {
        if n == 0 {
            "-".to_string()
        } else {
            format!("{x}/{n} ({:.2})", x as f64 / n as f64)
        }
    };
    for r in rows {
        write!(out, "<tr>")?;
        for k in &r.keys {
            write!(out, "<td>{}</td>", export::esc(k))?;
        }
        let flag = r.change.as_str();
        let (diff, ci, chart) = match (r.diff, r.ci) {
            (Some(d), Some((l, h))) => (
                format!("{d:+.2}"),
                format!("[{l:+.2}, {h:+.2}]"),
                export::plot(
                    l,
                    h,
                    d,
                    -1.0,
                    1.0,
                    flag,
                    &format!("change {d:+.2}, 95% interval {l:+.2} to {h:+.2}"),
                ),
            ),
            _ => ("-".into(), "-".into(), String::new()),
        };
        let class = if matches!(r.change, Change::Improved | Change::Regressed) {
            flag
        } else {
            ""
        };
        writeln!(
            out,
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{diff}</td>\
<td class=\"num\">{ci}</td><td>{chart}</td><td class=\"flag {class}\">{flag}</td></tr>",
            side(r.base),
            side(r.new),
        )?;
    }
    write!(out, "</tbody>\n</table>\n</body></html>\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::Cell;
    use toolgate_core::Label;

    fn cell(keys: &[&str], passes: usize, fails: usize) -> Cell {
        let mut labels = std::collections::BTreeMap::new();
        if passes > 0 {
            labels.insert(Label::Pass, passes);
        }
        if fails > 0 {
            labels.insert(Label::MalformedJson, fails);
        }
        Cell {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            labels,
            units: Default::default(),
            findings: Default::default(),
            profiles: Default::default(),
            lenient_changed: 0,
        }
    }

    fn cells(list: Vec<Cell>) -> Cells {
        list.into_iter().map(|c| (c.keys.clone(), c)).collect()
    }

    #[test]
    fn only_a_change_beyond_its_interval_is_flagged() {
        let base = cells(vec![
            cell(&["a"], 50, 50),
            cell(&["b"], 95, 5),
            cell(&["c"], 5, 5),
            cell(&["gone"], 1, 0),
        ]);
        let new = cells(vec![
            cell(&["a"], 95, 5),
            cell(&["b"], 50, 50),
            cell(&["c"], 6, 4),
            cell(&["new"], 1, 0),
        ]);
        let rows = rows(&base, &new);
        let flags: Vec<(&str, Change)> = rows
            .iter()
            .map(|r| (r.keys[0].as_str(), r.change))
            .collect();
        assert_eq!(
            flags,
            vec![
                ("a", Change::Improved),
                ("b", Change::Regressed),
                ("c", Change::Unclear),
                ("gone", Change::Gone),
                ("new", Change::New),
            ]
        );
        let a = &rows[0];
        assert_eq!((a.base, a.new), ((50, 100), (95, 100)));
        assert!((a.diff.unwrap_or(0.0) - 0.45).abs() < 1e-9);
        assert_eq!(rows[3].diff, None);
        assert_eq!(
            values(&rows[0]),
            ["a", "100", "50", "0.5000", "100", "95", "0.9500", "0.4500"]
                .iter()
                .map(|s| s.to_string())
                .chain(values(&rows[0]).into_iter().skip(8))
                .collect::<Vec<_>>()
        );
        assert_eq!(values(&rows[0])[10], "improved");
        assert_eq!(values(&rows[4])[3], "", "no base rate for a new cell");
    }

    #[test]
    fn a_baseline_that_cannot_gate_is_refused() {
        let run = cells(vec![cell(&["m"], 1, 1)]);
        let other = cells(vec![cell(&["x"], 1, 1)]);
        assert_eq!(baseline_problem("b", 0, &run, &run), None);
        let unreadable = baseline_problem("b", 2, &run, &run).unwrap_or_default();
        assert!(unreadable.contains("has 2 unreadable"), "{unreadable}");
        let empty = baseline_problem("b", 0, &Cells::new(), &run).unwrap_or_default();
        assert_eq!(empty, "the --compare baseline b holds no transcript");
        let apart = baseline_problem("b", 0, &other, &run).unwrap_or_default();
        assert!(
            apart.contains("shares no cell with the run (1 base cell(s), 1 new"),
            "{apart}"
        );
    }

    #[test]
    fn json_names_the_base_and_leaves_unclear_unflagged() {
        let base = cells(vec![cell(&["m"], 5, 5)]);
        let new = cells(vec![cell(&["m"], 6, 4)]);
        let doc = json(&[Key::Model], Path::new("base/"), &rows(&base, &new));
        assert_eq!(doc["by"], serde_json::json!(["model"]));
        assert_eq!(doc["base"], "base/");
        assert_eq!(doc["compare"][0]["keys"]["model"], "m");
        assert_eq!(doc["compare"][0]["base"]["rate"], 0.5);
        assert_eq!(doc["compare"][0]["flag"], Value::Null);
    }
}
