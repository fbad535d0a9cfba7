//! Plain-text and markdown tables. Cells must already be one-line,
//! terminal-safe text (see [`cell`]).

use toolgate_core::sanitize::one_line;

/// Untrusted text as a table cell: one line, no control characters, at most
/// `max` characters (cut with `…`).
pub fn cell(text: &str, max: usize) -> String {
    let safe = one_line(text);
    if safe.chars().count() <= max {
        return safe.into_owned();
    }
    let mut out: String = safe.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A table: a header row and data rows of the same width.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Columns aligned to the right (numbers).
    right: Vec<bool>,
}

impl Table {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            right: vec![false; header.len()],
        }
    }

    /// Aligns column `i` to the right.
    pub fn align_right(mut self, columns: &[usize]) -> Table {
        for &i in columns {
            if let Some(r) = self.right.get_mut(i) {
                *r = true;
            }
        }
        self
    }

    /// Adds a row (missing cells are empty, extra cells are dropped).
    pub fn push(&mut self, mut row: Vec<String>) {
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
    }

    /// Whether there are no data rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        widths
    }

    /// Columns separated by two spaces, the header underlined by nothing
    /// (it is in capitals by convention); no trailing spaces.
    pub fn plain(&self) -> String {
        let widths = self.widths();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = w.saturating_sub(c.chars().count());
                if self.right[i] {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(c);
                } else {
                    line.push_str(c);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured markdown table (`|` in cells escaped).
    pub fn markdown(&self) -> String {
        let esc = |c: &str| c.replace('|', "\\|");
        let mut out = String::new();
        let row_line = |row: &[String]| {
            let cells: Vec<String> = row.iter().map(|c| esc(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        out.push_str(&row_line(&self.header));
        let rule: Vec<&str> = self
            .right
            .iter()
            .map(|&r| if r { "---:" } else { "---" })
            .collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for row in &self.rows {
            out.push_str(&row_line(row));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_aligns_and_markdown_escapes_pipes() {
        let mut t = Table::new(&["NAME", "N"]).align_right(&[1]);
        t.push(vec!["a|b".into(), "10".into()]);
        t.push(vec!["long name".into(), "3".into()]);
        assert_eq!(t.plain(), "NAME        N\na|b        10\nlong name   3\n");
        assert_eq!(
            t.markdown(),
            "| NAME | N |\n| --- | ---: |\n| a\\|b | 10 |\n| long name | 3 |\n"
        );
    }

    #[test]
    fn cells_are_one_line_and_cut() {
        assert_eq!(cell("a\nb\u{1b}", 20), "a\\nb\\x1b");
        assert_eq!(cell("abcdef", 4), "abc…");
    }
}
