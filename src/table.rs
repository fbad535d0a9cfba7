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
    /// Width a column keeps before others are dropped (default: its header).
    min: Vec<usize>,
    /// Columns never narrowed (labels, decisions: cut, they would mislead).
    fixed: Vec<bool>,
    /// Columns left out, in this order, when the rest does not fit.
    droppable: Vec<usize>,
    /// Columns cut at the start (`…tail`: paths), not at the end.
    cut_left: Vec<bool>,
}

/// The width tables are fitted to: `COLUMNS` when set, else the terminal's
/// width when stdout is a terminal, else none (a pipe gets whole cells).
pub fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&n| n >= 20)
    {
        return Some(n);
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    ratatui::crossterm::terminal::size()
        .ok()
        .map(|(cols, _)| usize::from(cols))
        .filter(|&n| n >= 20)
}

/// `text` cut to `width` characters with `…` at the end (or the start).
fn cut(text: &str, width: usize, left: bool) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    if left {
        let tail: String = text.chars().skip(n - (width - 1)).collect();
        format!("…{tail}")
    } else {
        let head: String = text.chars().take(width - 1).collect();
        format!("{head}…")
    }
}

impl Table {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            right: vec![false; header.len()],
            min: header.iter().map(|h| h.chars().count()).collect(),
            fixed: vec![false; header.len()],
            droppable: Vec::new(),
            cut_left: vec![false; header.len()],
        }
    }

    /// The width each column keeps before a droppable column is left out.
    pub fn min_widths(mut self, widths: &[usize]) -> Table {
        for (m, &w) in self.min.iter_mut().zip(widths) {
            *m = w;
        }
        self
    }

    /// Columns never narrowed.
    pub fn fixed(mut self, columns: &[usize]) -> Table {
        for &i in columns {
            if let Some(f) = self.fixed.get_mut(i) {
                *f = true;
            }
        }
        self
    }

    /// Columns left out, in this order, when the table does not fit.
    pub fn droppable(mut self, columns: &[usize]) -> Table {
        self.droppable = columns.to_vec();
        self
    }

    /// Columns cut at the start (paths: the file name is what tells rows apart).
    pub fn cut_left(mut self, columns: &[usize]) -> Table {
        for &i in columns {
            if let Some(c) = self.cut_left.get_mut(i) {
                *c = true;
            }
        }
        self
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

    /// The width of every column fitted into `total` characters (`None`:
    /// a left-out column): droppable columns go first while the minimum
    /// widths do not fit, then the widest columns that are not fixed are
    /// narrowed one character at a time.
    fn fitted(&self, total: Option<usize>) -> Vec<Option<usize>> {
        let natural = self.widths();
        let mut widths: Vec<Option<usize>> = natural.iter().copied().map(Some).collect();
        let Some(total) = total else {
            return widths;
        };
        let need = |widths: &[Option<usize>], f: &dyn Fn(usize) -> usize| -> usize {
            let shown: Vec<usize> = (0..widths.len())
                .filter(|&i| widths[i].is_some())
                .map(f)
                .collect();
            shown.iter().sum::<usize>() + 2 * shown.len().saturating_sub(1)
        };
        let floor = |i: usize| {
            if self.fixed[i] {
                natural[i]
            } else {
                self.min[i].min(natural[i])
            }
        };
        for &d in &self.droppable {
            if need(&widths, &|i| natural[i]) <= total || need(&widths, &floor) <= total {
                break;
            }
            if let Some(w) = widths.get_mut(d) {
                *w = None;
            }
        }
        // Narrow the widest column that can still give, down to its header.
        while need(&widths, &|i| widths[i].unwrap_or(0)) > total {
            let header = |i: usize| self.header[i].chars().count().max(1);
            let widest = (0..widths.len())
                .filter(|&i| !self.fixed[i] && widths[i].is_some_and(|w| w > header(i)))
                .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)));
            match widest {
                Some(i) => widths[i] = widths[i].map(|w| w - 1),
                None => break,
            }
        }
        widths
    }

    /// Columns separated by two spaces, the header underlined by nothing
    /// (it is in capitals by convention); no trailing spaces. Fitted to the
    /// terminal ([`terminal_width`]).
    pub fn plain(&self) -> String {
        self.plain_width(terminal_width())
    }

    /// [`Table::plain`] fitted into `total` characters per line (`None`: no limit).
    pub fn plain_width(&self, total: Option<usize>) -> String {
        let widths = self.fitted(total);
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            let mut first = true;
            for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
                let Some(w) = w else { continue };
                if !first {
                    line.push_str("  ");
                }
                first = false;
                let c = &cut(c, *w, self.cut_left[i]);
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
        assert_eq!(
            t.plain_width(None),
            "NAME        N\na|b        10\nlong name   3\n"
        );
        assert_eq!(
            t.markdown(),
            "| NAME | N |\n| --- | ---: |\n| a\\|b | 10 |\n| long name | 3 |\n"
        );
    }

    #[test]
    fn plain_fits_a_width_dropping_then_narrowing() {
        let mut t = Table::new(&["PATH", "LABEL", "MODES"])
            .fixed(&[1])
            .droppable(&[2])
            .cut_left(&[0])
            .min_widths(&[10, 0, 16]);
        t.push(vec![
            "transcripts/hermes/a_long_name.json".into(),
            "hallucinated_param".into(),
            "hermes:pass +30 no_call".into(),
        ]);
        let wide = t.plain_width(None);
        assert!(wide.contains("+30 no_call"));
        let narrow = t.plain_width(Some(40));
        assert!(narrow.lines().all(|l| l.chars().count() <= 40), "{narrow}");
        assert!(!narrow.contains("MODES"), "{narrow}");
        assert!(narrow.contains("hallucinated_param"), "{narrow}");
        assert!(narrow.contains("…es/a_long_name.json"), "{narrow}");
    }

    #[test]
    fn cells_are_one_line_and_cut() {
        assert_eq!(cell("a\nb\u{1b}", 20), "a\\nb\\x1b");
        assert_eq!(cell("abcdef", 4), "abc…");
    }
}
