//! Plain-text and markdown tables for the command line (`toolgate label`,
//! `matrix`, `detect`, `profiles`), fitted to the terminal with the same
//! cutting the inspector's columns use (the `elide` module). Cells must
//! already be one-line, terminal-safe text (see [`cell`]).

use crate::elide::{Elide, cut, distinct_cuts, distinct_floor};

/// Untrusted text as a table cell: one line, no control characters, at most
/// `max` characters (cut with `…`).
pub use toolgate_core::sanitize::cell;

/// The longest cell a table keeps whole: a bound on untrusted input, far
/// above any real path or model name (tables fit the terminal by their own
/// cutting, which keeps what tells rows apart; a pipe gets whole cells).
pub const CELL_MAX: usize = 1000;

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
    /// Where each column is cut.
    elide: Vec<Elide>,
    /// Columns narrowed (to their floor) before any other, in this order.
    narrow_first: Vec<usize>,
    /// Columns kept whole, while there are columns to drop.
    keep_whole: Vec<bool>,
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
            elide: vec![Elide::End; header.len()],
            narrow_first: Vec::new(),
            keep_whole: vec![false; header.len()],
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

    /// Columns cut at the start (paths: the file name is what tells rows
    /// apart), keeping whatever part tells each cell from the others.
    pub fn cut_left(mut self, columns: &[usize]) -> Table {
        for &i in columns {
            if let Some(c) = self.elide.get_mut(i) {
                *c = Elide::Start;
            }
        }
        self
    }

    /// Columns cut in the middle (names: `llama-3.1…instruct`), keeping
    /// whatever part tells each cell from the others.
    pub fn cut_middle(mut self, columns: &[usize]) -> Table {
        for &i in columns {
            if let Some(c) = self.elide.get_mut(i) {
                *c = Elide::Middle;
            }
        }
        self
    }

    /// Columns given up first, in this order, when the table must be
    /// narrowed (each down to what still tells its cells apart): the
    /// others keep their width longer.
    pub fn narrow_first(mut self, columns: &[usize]) -> Table {
        self.narrow_first = columns.to_vec();
        self
    }

    /// Columns kept whole as long as droppable columns can make room.
    pub fn keep_whole(mut self, columns: &[usize]) -> Table {
        for &i in columns {
            if let Some(k) = self.keep_whole.get_mut(i) {
                *k = true;
            }
        }
        self
    }

    /// The index of the column named `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
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
        // A column that tells rows apart keeps, if it can, the width at
        // which every cell still differs from every other.
        let distinct: Vec<usize> = (0..natural.len())
            .map(|i| match self.elide[i] {
                Elide::End => 0,
                _ => {
                    let column: Vec<&str> = self.rows.iter().map(|r| r[i].as_str()).collect();
                    distinct_floor(&column)
                }
            })
            .collect();
        let floor = |i: usize| {
            if self.fixed[i] {
                natural[i]
            } else {
                self.min[i].max(distinct[i]).min(natural[i])
            }
        };
        // Columns that tell rows apart are kept whole while there are
        // columns to drop.
        let keep = |i: usize| {
            if self.keep_whole[i] {
                natural[i]
            } else {
                floor(i)
            }
        };
        for &d in &self.droppable {
            if need(&widths, &|i| natural[i]) <= total || need(&widths, &keep) <= total {
                break;
            }
            if let Some(w) = widths.get_mut(d) {
                *w = None;
            }
        }
        // The columns to narrow first, each down to its floor…
        for &i in &self.narrow_first {
            while need(&widths, &|i| widths[i].unwrap_or(0)) > total
                && !self.fixed.get(i).copied().unwrap_or(true)
                && widths
                    .get(i)
                    .copied()
                    .flatten()
                    .is_some_and(|w| w > floor(i))
            {
                widths[i] = widths[i].map(|w| w - 1);
            }
        }
        // …then the widest column that can still give, down to its floor…
        while need(&widths, &|i| widths[i].unwrap_or(0)) > total {
            let widest = (0..widths.len())
                .filter(|&i| !self.fixed[i] && widths[i].is_some_and(|w| w > floor(i)))
                .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)));
            match widest {
                Some(i) => widths[i] = widths[i].map(|w| w - 1),
                None => break,
            }
        }
        // …then, when that is not enough, down to its header.
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
        // The cut cells of the columns that keep what tells rows apart.
        let distinct: Vec<Option<Vec<String>>> = (0..widths.len())
            .map(|i| {
                let w = widths[i]?;
                let elide = self.elide[i];
                if elide == Elide::End || self.rows.iter().all(|r| r[i].chars().count() <= w) {
                    return None;
                }
                let column: Vec<&str> = self.rows.iter().map(|r| r[i].as_str()).collect();
                Some(distinct_cuts(&column, w, elide))
            })
            .collect();
        let mut out = String::new();
        for (r, row) in std::iter::once(&self.header).chain(&self.rows).enumerate() {
            let mut line = String::new();
            let mut first = true;
            for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
                let Some(w) = w else { continue };
                if !first {
                    line.push_str("  ");
                }
                first = false;
                let c = &match (&distinct[i], r.checked_sub(1)) {
                    (Some(cuts), Some(r)) => cuts[r].clone(),
                    _ => cut(c, *w, self.elide[i] == Elide::Start),
                };
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

    /// A GitHub-flavoured markdown table: cells through
    /// [`toolgate_core::sanitize::markdown_text`], the rule of
    /// `label --check`'s review (`|` and markdown syntax escaped, `<`, `>`,
    /// `&` as entities: no raw HTML, link or emphasis from a model name in
    /// a PR comment).
    pub fn markdown(&self) -> String {
        let esc = |c: &str| toolgate_core::sanitize::markdown_text(c).into_owned();
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
    fn a_pipe_gets_whole_cells_and_a_terminal_the_identifying_part() {
        let mut t = Table::new(&["MODEL", "N", "LABELS"])
            .fixed(&[1])
            .droppable(&[2])
            .cut_middle(&[0])
            .keep_whole(&[0]);
        let long = "a-very-long-model-name-that-goes-on-and-on-v1";
        t.push(vec![long.into(), "3".into(), "pass:3".into()]);
        t.push(vec![long.replace("v1", "v2"), "1".into(), "pass:1".into()]);
        let whole = t.plain_width(None);
        assert!(whole.contains(long) && whole.contains("pass:3"), "{whole}");
        let narrow = t.plain_width(Some(30));
        assert!(!narrow.contains("LABELS"), "dropped first: {narrow}");
        let rows: Vec<&str> = narrow.lines().skip(1).collect();
        assert_ne!(rows[0], rows[1], "{narrow}");
        assert!(rows[0].contains("v1") && rows[1].contains("v2"), "{narrow}");
    }

    /// Probe bug D: `label --format markdown` and matrix markdown kept
    /// `<script>` from a model name raw in output meant for PR comments.
    #[test]
    fn markdown_cells_hold_no_raw_html() {
        let mut t = Table::new(&["MODEL", "N"]);
        t.push(vec!["<script>alert(1)</script>&".into(), "1".into()]);
        let md = t.markdown();
        assert!(
            md.contains("| &lt;script&gt;alert(1)&lt;/script&gt;&amp; | 1 |"),
            "{md}"
        );
        assert!(!md.contains('<'), "{md}");
    }

    #[test]
    fn cells_are_one_line_and_cut() {
        assert_eq!(cell("a\nb\u{1b}", 20), "a\\nb\\x1b");
        assert_eq!(cell("abcdef", 4), "abc…");
    }
}
