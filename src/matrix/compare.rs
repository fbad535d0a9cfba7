//! `toolgate matrix NEW… --compare BASE_DIR`: prints the comparison
//! ([`toolgate_matrix::compare`]) in the chosen format and names the
//! regressed cells.

use super::{Key, MatrixFormat};
use crate::jsonout;
use crate::table::{Table, cell};
use anyhow::Result;
use std::io::Write;
use std::path::Path;
use toolgate_core::sanitize::one_line;
use toolgate_matrix::compare::{self, Change, Row, rate};
use toolgate_matrix::export;

/// Names every regressed cell on stderr; whether there was one.
pub fn report_regressions(rows: &[Row]) -> bool {
    let mut any = false;
    for r in rows.iter().filter(|r| r.change == Change::Regressed) {
        any = true;
        eprintln!(
            "toolgate: regressed: {} {:.2} → {:.2}",
            cell(&r.keys.join(" / "), 120),
            rate(r.base),
            rate(r.new)
        );
    }
    any
}

fn side_text((x, n): (usize, usize)) -> String {
    if n == 0 {
        "-".into()
    } else {
        format!("{x}/{n} {:.2}", rate((x, n)))
    }
}

/// Writes the comparison in `format`.
pub fn write(
    out: &mut impl Write,
    format: MatrixFormat,
    by: &[Key],
    base: &Path,
    rows: &[Row],
) -> Result<()> {
    match format {
        MatrixFormat::Json => {
            let doc = compare::json(by, base, rows);
            // `schema_version` last, as in every record toolgate prints.
            writeln!(out, "{}", jsonout::pretty(&jsonout::versioned(doc)))?;
        }
        MatrixFormat::Csv => export::write_csv(
            out,
            &compare::header(by),
            rows.iter().map(compare::values),
            by.len(),
        )?,
        MatrixFormat::Html => compare::html(out, by, base, rows)?,
        MatrixFormat::Table | MatrixFormat::Markdown => {
            let mut h: Vec<String> = by.iter().map(|k| k.name().to_uppercase()).collect();
            let n_keys = h.len();
            h.extend(["BASE", "NEW", "CHANGE", "95% CI", "FLAG"].map(String::from));
            if format == MatrixFormat::Markdown {
                h = h.iter().map(|x| x.to_lowercase()).collect();
            }
            let refs: Vec<&str> = h.iter().map(String::as_str).collect();
            let mut table = Table::new(&refs).align_right(&[n_keys, n_keys + 1, n_keys + 2]);
            for r in rows {
                let mut row: Vec<String> = r.keys.iter().map(|k| cell(k, 40)).collect();
                row.push(side_text(r.base));
                row.push(side_text(r.new));
                row.push(
                    r.diff
                        .map(|d| format!("{d:+.2}"))
                        .unwrap_or_else(|| "-".into()),
                );
                row.push(
                    r.ci.map(|(l, h)| format!("[{l:+.2}, {h:+.2}]"))
                        .unwrap_or_else(|| "-".into()),
                );
                row.push(r.change.as_str().into());
                table.push(row);
            }
            if format == MatrixFormat::Markdown {
                write!(out, "{}", table.markdown())?;
            } else {
                write!(out, "{}", table.plain())?;
            }
            let flagged = rows
                .iter()
                .filter(|r| matches!(r.change, Change::Improved | Change::Regressed))
                .count();
            eprintln!(
                "toolgate: compared with {}: {} cells, {flagged} changed beyond their 95% interval",
                one_line(&base.display().to_string()),
                rows.len()
            );
        }
    }
    Ok(())
}
