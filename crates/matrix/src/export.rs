//! The matrix's records: `--format json` (one cell, [`cell_json`]),
//! `--format csv` and `--format html`, and the CSV and HTML pieces the
//! comparison's own page ([`crate::compare`]) writes with.
//!
//! CSV follows RFC 4180 (a field with a comma, quote or line break is
//! quoted, quotes doubled); a key value (model, task, tag — untrusted text)
//! that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR
//! first) gets a leading `'`. HTML is one self-contained file — inline CSS
//! and SVG, no script, nothing fetched — with every untrusted string escaped.

use crate::cells::{Cell, Cells, Key, round4};
use crate::stats::{self, inconclusive, wilson};
use serde_json::{Map, Value, json};
use std::io::{self, Write};
use toolgate_core::Label;
use toolgate_core::sanitize::one_line;

/// One CSV field. Control characters (C0 but for nothing, DEL, C1), bidi
/// controls and invisible characters are written as the tables write them
/// (`\x1b`, `\u{202e}`, `\n`: [`one_line`], one rule for every format),
/// so a CSV printed to a terminal runs no escape sequence.
fn csv_field(text: &str, key: bool) -> String {
    let text = one_line(text);
    let text = text.as_ref();
    let guarded;
    let text = if key && text.starts_with(['=', '+', '-', '@', '\t', '\r']) && text != "-" {
        guarded = format!("'{text}");
        guarded.as_str()
    } else {
        text
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Writes a header and rows; the first `n_keys` columns are untrusted keys.
pub fn write_csv(
    out: &mut impl Write,
    header: &[String],
    rows: impl Iterator<Item = Vec<String>>,
    n_keys: usize,
) -> io::Result<()> {
    let line = |fields: &[String], keys: usize| {
        fields
            .iter()
            .enumerate()
            .map(|(i, f)| csv_field(f, i < keys))
            .collect::<Vec<_>>()
            .join(",")
    };
    write!(out, "{}\r\n", line(header, 0))?;
    for row in rows {
        write!(out, "{}\r\n", line(&row, n_keys))?;
    }
    Ok(())
}

fn labels_text(c: &Cell) -> String {
    c.labels
        .iter()
        .map(|(l, n)| format!("{l}:{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The matrix as CSV.
pub fn csv(out: &mut impl Write, by: &[Key], cells: &Cells) -> io::Result<()> {
    let mut header: Vec<String> = by.iter().map(|k| k.name().to_string()).collect();
    header.extend(
        [
            "n",
            "passes",
            "rate",
            "ci_low",
            "ci_high",
            "flag",
            "pass_k_k",
            "pass_k",
            "stable",
            "flaky",
            "failing",
            "dominant_failure",
            "labels",
        ]
        .map(String::from),
    );
    let rows = cells.values().map(|c| {
        let (n, passes) = (c.n(), c.passes());
        let (low, high) = wilson(passes, n);
        let sm = c.samples();
        let mut row = c.keys.clone();
        row.extend([
            n.to_string(),
            passes.to_string(),
            format!("{:.4}", round4(passes as f64 / n.max(1) as f64)),
            format!("{:.4}", round4(low)),
            format!("{:.4}", round4(high)),
            if inconclusive(low, high) {
                "inconclusive"
            } else {
                ""
            }
            .to_string(),
            sm.k.to_string(),
            format!("{:.4}", round4(sm.pass_k)),
            sm.stable.to_string(),
            sm.flaky.to_string(),
            sm.failing.to_string(),
            stats::dominant_failure(&c.labels)
                .map(|l| l.as_str().to_string())
                .unwrap_or_default(),
            labels_text(c),
        ]);
        row
    });
    write_csv(out, &header, rows, by.len())
}

/// Escapes text for HTML element content and attribute values (control
/// characters made visible first).
pub fn esc(text: &str) -> String {
    let text = one_line(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse}th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left}\
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4}\
.flag{font-weight:600}.regressed{color:#b00020}.improved{color:#1b7f3b}.inconclusive{color:#a15c00}\
svg .axis{fill:#f1f1f1}svg .zone-broken{fill:#fde8e8}svg .zone-fine{fill:#e6f4ea}\
svg .ci{fill:#4a6fa5}svg .point{fill:#111}svg .zero{stroke:#666;stroke-width:1}\
svg .ci.regressed{fill:#b00020}svg .ci.improved{fill:#1b7f3b}small{color:#666}";

const PLOT_W: f64 = 150.0;
const PAD: f64 = 5.0;

fn x_of(v: f64, lo: f64, hi: f64) -> f64 {
    PAD + (v.clamp(lo, hi) - lo) / (hi - lo) * PLOT_W
}

/// The interval [low, high] with a point at `at`, on an axis from `lo` to `hi`.
pub fn plot(low: f64, high: f64, at: f64, lo: f64, hi: f64, class: &str, label: &str) -> String {
    let mut s = format!(
        "<svg width=\"160\" height=\"16\" viewBox=\"0 0 160 16\" role=\"img\" aria-label=\"{}\">",
        esc(label)
    );
    s.push_str(&format!(
        "<rect class=\"axis\" x=\"{PAD}\" y=\"2\" width=\"{PLOT_W}\" height=\"12\"/>"
    ));
    if lo >= 0.0 {
        // Rates: shade "broken" (< 0.5) and "fine" (≥ 0.8).
        let (b, f) = (x_of(stats::BROKEN, lo, hi), x_of(stats::FINE, lo, hi));
        s.push_str(&format!(
            "<rect class=\"zone-broken\" x=\"{PAD}\" y=\"2\" width=\"{:.1}\" height=\"12\"/>",
            b - PAD
        ));
        s.push_str(&format!(
            "<rect class=\"zone-fine\" x=\"{f:.1}\" y=\"2\" width=\"{:.1}\" height=\"12\"/>",
            PAD + PLOT_W - f
        ));
    } else {
        let z = x_of(0.0, lo, hi);
        s.push_str(&format!(
            "<line class=\"zero\" x1=\"{z:.1}\" y1=\"0\" x2=\"{z:.1}\" y2=\"16\"/>"
        ));
    }
    let (a, b) = (x_of(low, lo, hi), x_of(high, lo, hi));
    s.push_str(&format!(
        "<rect class=\"ci {class}\" x=\"{a:.1}\" y=\"6\" width=\"{:.1}\" height=\"4\"/>",
        (b - a).max(1.0)
    ));
    s.push_str(&format!(
        "<circle class=\"point\" cx=\"{:.1}\" cy=\"8\" r=\"3\"/></svg>",
        x_of(at, lo, hi)
    ));
    s
}

/// The start of a self-contained HTML page: doctype, inline style, the
/// title as heading and a note under it.
pub fn page_start(out: &mut impl Write, title: &str, note: &str) -> io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"generator\" content=\"toolgate\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n<h1>{}</h1>\n<p><small>{}</small></p>\n",
        esc(title),
        esc(title),
        esc(note)
    )
}

/// The matrix as one self-contained HTML page.
pub fn html(out: &mut impl Write, by: &[Key], cells: &Cells) -> io::Result<()> {
    page_start(
        out,
        "toolgate conformance matrix",
        "Pass rate per cell with its 95% Wilson interval (bar) on [0, 1]; red zone: broken (< 0.5), \
green zone: fine (≥ 0.8). inconclusive: the interval spans both. pass^k: the chance that k samples \
of a task all pass.",
    )?;
    write!(out, "<table>\n<thead><tr>")?;
    for k in by {
        write!(out, "<th>{}</th>", esc(k.name()))?;
    }
    write!(
        out,
        "<th>n</th><th>pass</th><th>rate</th><th>95% CI</th><th>interval</th><th>flag</th>\
<th>pass^k</th><th>stable / flaky / failing</th><th>labels</th></tr></thead>\n<tbody>\n"
    )?;
    for c in cells.values() {
        let (n, passes) = (c.n(), c.passes());
        let (low, high) = wilson(passes, n);
        let rate = passes as f64 / n.max(1) as f64;
        let flag = if inconclusive(low, high) {
            "inconclusive"
        } else {
            ""
        };
        let sm = c.samples();
        write!(out, "<tr>")?;
        for k in &c.keys {
            write!(out, "<td>{}</td>", esc(k))?;
        }
        let label = format!("rate {rate:.2}, 95% interval {low:.2} to {high:.2}");
        writeln!(
            out,
            "<td class=\"num\">{n}</td><td class=\"num\">{passes}</td><td class=\"num\">{rate:.2}</td>\
<td class=\"num\">[{low:.2}, {high:.2}]</td><td>{}</td><td class=\"flag {flag}\">{flag}</td>\
<td class=\"num\">{:.2} <small>k={}</small></td><td class=\"num\">{} / {} / {}</td><td>{}</td></tr>",
            plot(low, high, rate, 0.0, 1.0, flag, &label),
            sm.pass_k,
            sm.k,
            sm.stable,
            sm.flaky,
            sm.failing,
            esc(&labels_text(c)),
        )?;
    }
    write!(out, "</tbody>\n</table>\n</body></html>\n")
}

/// One cell as the JSON record of `--format json` (`by`: the keys; with
/// `by_mode`, the lenient count instead of the profile).
pub fn cell_json(by: &[Key], c: &Cell, by_mode: bool) -> Value {
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
    let mut cell = json!({
        "keys": keys,
        "n": n,
        "passes": passes,
        "rate": round4(passes as f64 / n.max(1) as f64),
        "ci_low": round4(low),
        "ci_high": round4(high),
        "labels": labels,
        // `flag` was the only name of this until schema 1 said what it flags:
        // kept, the same value as `inconclusive`.
        "flag": inconclusive(low, high),
        "inconclusive": inconclusive(low, high),
        "pass_k": {"k": c.samples().k, "rate": round4(c.samples().pass_k)},
        "samples": {"stable": c.samples().stable, "flaky": c.samples().flaky, "failing": c.samples().failing},
        "dominant_failure": stats::dominant_failure(&c.labels).map(Label::as_str),
        "retry_advice": stats::dominant_failure(&c.labels).map(|l| l.retry_advice()),
        "findings": findings,
    });
    if let Some(obj) = cell.as_object_mut() {
        if by_mode {
            obj.insert("lenient_changed".into(), json!(c.lenient_changed));
        } else {
            let (name, source, detail) = c.profile();
            obj.insert(
                "profile".into(),
                json!({"name": name, "source": source, "source_detail": detail}),
            );
        }
    }
    cell
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Probe bug D: `matrix --format csv` printed ESC, OSC, BEL, CR, BS
    /// and U+202E from model and task names raw.
    #[test]
    fn csv_escapes_control_and_bidi_characters_as_the_tables_do() {
        assert_eq!(
            csv_field(
                "m\u{1b}[31m\u{1b}]0;t\u{7}\r\u{8}\u{202e}x\u{9b}\u{7f}",
                true
            ),
            "m\\x1b[31m\\x1b]0;t\\x07\\x0d\\x08\\u{202e}x\\x9b\\x7f"
        );
        assert_eq!(csv_field("a\nb,c", false), "\"a\\nb,c\"");
        // A leading tab is text once escaped: no formula guard needed.
        assert_eq!(csv_field("\t=1", true), "\\t=1");
    }

    #[test]
    fn csv_quotes_and_defuses_formulas_in_keys_only() {
        assert_eq!(csv_field("a,b", true), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\"", false), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=cmd|' /C calc'!A0", true), "'=cmd|' /C calc'!A0");
        assert_eq!(csv_field("-0.25", false), "-0.25");
        assert_eq!(csv_field("-", true), "-");
    }

    #[test]
    fn html_escapes_markup_quotes_and_controls() {
        assert_eq!(
            esc("<script>alert('x')</script>&\"\u{1b}[31m"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;\\x1b[31m"
        );
    }
}

#[cfg(test)]
mod record_tests {
    use super::*;
    use std::collections::BTreeMap;

    fn one_cell(key: &str) -> Cells {
        let mut labels = BTreeMap::new();
        labels.insert(Label::Pass, 3);
        labels.insert(Label::MalformedJson, 1);
        let c = Cell {
            keys: vec![key.to_string()],
            labels,
            units: Default::default(),
            findings: Default::default(),
            profiles: Default::default(),
            lenient_changed: 2,
        };
        [(c.keys.clone(), c)].into_iter().collect()
    }

    #[test]
    fn csv_defuses_a_formula_key_and_counts_the_labels() {
        let mut out = Vec::new();
        csv(&mut out, &[Key::Model], &one_cell("=evil")).unwrap_or(());
        let text = String::from_utf8(out).unwrap_or_default();
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert!(lines[0].starts_with("model,n,passes,rate,ci_low,ci_high,flag,"));
        assert!(lines[1].starts_with("'=evil,4,3,0.7500,"), "{}", lines[1]);
        assert!(lines[1].ends_with(",malformed_json,malformed_json:1 pass:3"));
    }

    #[test]
    fn html_escapes_keys_and_draws_one_interval_per_cell() {
        let mut out = Vec::new();
        html(&mut out, &[Key::Model], &one_cell("<b>m</b>")).unwrap_or(());
        let page = String::from_utf8(out).unwrap_or_default();
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<td>&lt;b&gt;m&lt;/b&gt;</td>"));
        assert!(!page.contains("<b>m"));
        assert_eq!(page.matches("<svg ").count(), 1);
        assert!(page.ends_with("</body></html>\n"));
    }

    #[test]
    fn json_record_has_the_rate_interval_and_profile_or_lenient_count() {
        let cells = one_cell("m");
        let c = cells.values().next();
        let Some(c) = c else { return };
        let v = cell_json(&[Key::Model], c, false);
        assert_eq!(v["keys"]["model"], "m");
        assert_eq!(v["n"], 4);
        assert_eq!(v["rate"], 0.75);
        assert_eq!(v["dominant_failure"], "malformed_json");
        assert_eq!(v["flag"], v["inconclusive"]);
        assert_eq!(v["profile"]["name"], "-");
        let by_mode = cell_json(&[Key::Model], c, true);
        assert_eq!(by_mode["lenient_changed"], 2);
        assert!(by_mode.get("profile").is_none());
    }
}
