//! The closest allowlisted name to a name that is not allowlisted (the
//! allowlist gate's "did you mean"), by bounded edit distance, with the
//! recent answers remembered.

use super::{RECENT_CHECKS, Toolset};

impl Toolset {
    /// The allowlisted name nearest to `name` by edit distance (ASCII
    /// case-insensitive), when it is close enough to be a plausible intent:
    /// at most a third of the longer name's length, and at least 1 edit.
    /// Bounded work: names longer than `MAX_SUGGEST_NAME` (64) characters are
    /// never compared, and only the first `MAX_SUGGEST_CANDIDATES` (1,000)
    /// allowlisted names are candidates.
    pub fn closest(&self, name: &str) -> Option<&str> {
        // Replay asks for the same unknown name in every mode: remember.
        if let Ok(recent) = self.recent_closest.lock()
            && let Some((_, found)) = recent.iter().find(|(n, _)| n == name)
        {
            return found.and_then(|i| self.names.get(i)).map(String::as_str);
        }
        let found = self.closest_index(name);
        if let Ok(mut recent) = self.recent_closest.lock() {
            if recent.len() >= RECENT_CHECKS {
                let _oldest = recent.remove(0);
            }
            recent.push((name.to_string(), found));
        }
        found.and_then(|i| self.names.get(i)).map(String::as_str)
    }

    fn closest_index(&self, name: &str) -> Option<usize> {
        if name.len() > 4 * MAX_SUGGEST_NAME {
            return None;
        }
        let len = name.chars().count();
        if len > MAX_SUGGEST_NAME {
            return None;
        }
        let lower = name.to_ascii_lowercase();
        self.names
            .iter()
            .take(MAX_SUGGEST_CANDIDATES)
            .enumerate()
            .filter_map(|(i, n)| {
                let n_len = n.chars().count();
                if n_len > MAX_SUGGEST_NAME {
                    return None;
                }
                let allowed = n_len.max(len).div_ceil(3).max(1);
                // The length difference is a lower bound of the distance.
                if n_len.abs_diff(len) > allowed {
                    return None;
                }
                let d = edit_distance_within(&lower, &n.to_ascii_lowercase(), allowed)?;
                Some((d, i))
            })
            .min_by_key(|(d, _)| *d)
            .map(|(_, i)| i)
    }
}

/// Longest name (in characters) [`Toolset::closest`] compares; OpenAI caps
/// function names at 64.
pub const MAX_SUGGEST_NAME: usize = 64;

/// Most allowlisted names [`Toolset::closest`] compares against.
pub const MAX_SUGGEST_CANDIDATES: usize = 1000;

/// Levenshtein distance over chars, O(n·m) time and O(m) space; inputs are
/// clipped to [`MAX_SUGGEST_NAME`] chars (callers skip longer names).
/// `Some(distance)` when it is at most `max`; stops as soon as a whole row
/// exceeds `max` (the distance can only grow from there).
pub(super) fn edit_distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().take(MAX_SUGGEST_NAME).collect();
    let b: Vec<char> = b.chars().take(MAX_SUGGEST_NAME).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
        if prev.iter().min().is_some_and(|m| *m > max) {
            return None;
        }
    }
    Some(prev[b.len()]).filter(|d| *d <= max)
}
