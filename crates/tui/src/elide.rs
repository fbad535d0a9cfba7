//! Cutting cells to a width while keeping what tells them apart: the
//! tables of `toolgate label`/`matrix` and the inspector's list share it, so
//! that rows never read alike because their distinguishing part was cut
//! (`llama-3…` ×3, `1763900000000-4242-00000…` for every proxy recording).

/// Where a cell is cut when it does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elide {
    /// `head…`: free text.
    End,
    /// `…tail`: paths, whose end (the file name) tells rows apart.
    Start,
    /// `head…tail`: names (models, tasks) whose distinguishing part may sit
    /// anywhere (`llama-3.1-8b-instruct`, `llama-3.2-3b-instruct`).
    Middle,
}

/// Per cell: how many leading and trailing characters tell it from every
/// other cell of the column (its longest common prefix, and suffix, with any
/// other cell, plus one; the whole cell when another cell is the same).
fn distinguishing(cells: &[&str]) -> Vec<(usize, usize)> {
    // Equal cells show alike: each distinct text is measured once.
    let mut unique: Vec<&str> = cells.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let need = distinguishing_unique(&unique);
    cells
        .iter()
        .map(|c| match unique.binary_search(c) {
            Ok(k) => need[k],
            // Every cell is in `unique`.
            Err(_) => (0, 0),
        })
        .collect()
}

/// [`distinguishing`] of distinct cells.
fn distinguishing_unique(column: &[&str]) -> Vec<(usize, usize)> {
    let n = column.len();
    let mut need = vec![(0usize, 0usize); n];
    // Common prefix (in characters) of two cells.
    let lcp = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let lcs = |a: &str, b: &str| {
        a.chars()
            .rev()
            .zip(b.chars().rev())
            .take_while(|(x, y)| x == y)
            .count()
    };
    // The longest common prefix with any other cell is the one with a
    // neighbour in sorted order (and the same for suffixes, reversed).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| column[a].cmp(column[b]));
    for k in 1..n {
        let (a, b) = (order[k - 1], order[k]);
        let common = lcp(column[a], column[b]);
        need[a].0 = need[a].0.max(common + 1);
        need[b].0 = need[b].0.max(common + 1);
    }
    order.sort_by(|&a, &b| column[a].chars().rev().cmp(column[b].chars().rev()));
    for k in 1..n {
        let (a, b) = (order[k - 1], order[k]);
        let common = lcs(column[a], column[b]);
        need[a].1 = need[a].1.max(common + 1);
        need[b].1 = need[b].1.max(common + 1);
    }
    for (i, (h, t)) in need.iter_mut().enumerate() {
        let len = column[i].chars().count();
        *h = (*h).clamp(1, len.max(1));
        *t = (*t).clamp(1, len.max(1));
    }
    need
}

/// The narrowest width at which [`distinct_cuts`] tells every cell of the
/// column from the others (a cell the same as another aside).
pub fn distinct_floor(column: &[&str]) -> usize {
    distinguishing(column)
        .iter()
        .zip(column)
        .map(|(&(h, t), c)| {
            let len = c.chars().count();
            if h.min(t) >= len { len } else { h.min(t) + 1 }
        })
        .max()
        .unwrap_or(0)
}

/// Every cell of a column cut to `width` characters so that each keeps the
/// part that tells it from the others: the shortest distinguishing head or
/// tail, then as much of the rest as fits (`Start`: the tail first;
/// `Middle`: balanced). When nothing short enough tells a cell apart, the
/// window around where it first differs from its nearest neighbour.
pub fn distinct_cuts(column: &[&str], width: usize, elide: Elide) -> Vec<String> {
    let need = distinguishing(column);
    column
        .iter()
        .zip(need)
        .map(|(text, (head, tail))| {
            let chars: Vec<char> = text.chars().collect();
            let n = chars.len();
            if n <= width {
                return text.to_string();
            }
            if width < 3 {
                return cut(text, width, elide == Elide::Start);
            }
            let room = width - 1;
            let join = |a: usize, b: usize| -> String {
                let mut s: String = chars[..a].iter().collect();
                s.push('…');
                s.extend(&chars[n - b..]);
                s
            };
            match elide {
                Elide::Start if tail <= room => join(0, room),
                Elide::Middle if head <= room => {
                    let a = head.max(room / 2).min(room);
                    join(a, room - a)
                }
                _ if tail <= room => {
                    let b = tail.max(room / 2).min(room);
                    join(room - b, b)
                }
                _ if head <= room => join(head, room - head),
                _ => {
                    // `…window…` ending where the cell first differs.
                    let inner = width - 2;
                    let end = head.min(n);
                    let start = end.saturating_sub(inner);
                    let mut s = String::from('…');
                    s.extend(&chars[start..(start + inner).min(n)]);
                    s.push('…');
                    s
                }
            }
        })
        .collect()
}

/// `text` cut to `width` characters with `…` at the end (or the start).
pub fn cut(text: &str, width: usize, left: bool) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26: `llama-3…` ×3 at 120 columns; cut cells keep what tells
    /// them apart.
    #[test]
    fn cut_cells_keep_what_tells_them_apart() {
        let models = [
            "llama-3.1-8b-instruct",
            "llama-3.2-3b-instruct",
            "llama-3.3-70b-instruct",
            "llama-4-scout-17b-16e-instruct",
            "qwen2.5-7b-instruct",
            "qwen2.5-14b-instruct",
        ];
        for width in [8, 10, 12, 16] {
            let cuts = distinct_cuts(&models, width, Elide::Middle);
            let unique: std::collections::HashSet<&String> = cuts.iter().collect();
            assert_eq!(unique.len(), models.len(), "{width}: {cuts:?}");
            assert!(cuts.iter().all(|c| c.chars().count() <= width), "{cuts:?}");
        }
        let paths = [
            "transcripts/hermes/parallel.json",
            "transcripts/apertus/parallel.json",
            "transcripts/hermes/truncated.json",
        ];
        let cuts = distinct_cuts(&paths, 20, Elide::Start);
        assert_eq!(cuts[2], "…rmes/truncated.json");
        assert_ne!(cuts[0], cuts[1], "{cuts:?}");
        // Equal cells stay equal and do not widen the floor.
        assert_eq!(distinct_floor(&["muse-glimmer", "muse-glimmer", "a"]), 2);
    }
}
