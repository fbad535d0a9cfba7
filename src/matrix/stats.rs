//! Statistics over a matrix cell beyond its Wilson interval: the difference
//! of two proportions (Newcombe's hybrid score interval), pass^k and the
//! stable / flaky / failing split over repeated samples, the dominant
//! failure.

use super::wilson;
use std::collections::BTreeMap;
use toolgate_core::Label;

/// The 95% interval for the difference `p1 − p2` of two independent
/// proportions (`x1` of `n1` against `x2` of `n2`): Newcombe's hybrid score
/// interval (Newcombe 1998, method 10), built from each proportion's Wilson
/// interval:
///
/// ```text
/// L = (p1 − p2) − √((p1 − l1)² + (u2 − p2)²)
/// U = (p1 − p2) + √((u1 − p1)² + (p2 − l2)²)
/// ```
///
/// It stays inside [−1, 1], needs no continuity fudge at 0 or n, and is
/// well behaved for the small n of a k-sample matrix. `None` when either
/// side has no trials.
pub fn newcombe(x1: usize, n1: usize, x2: usize, n2: usize) -> Option<(f64, f64)> {
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (p1, p2) = (x1 as f64 / n1 as f64, x2 as f64 / n2 as f64);
    let (l1, u1) = wilson(x1, n1);
    let (l2, u2) = wilson(x2, n2);
    let d = p1 - p2;
    let low = d - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
    let high = d + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
    Some((low.max(-1.0), high.min(1.0)))
}

/// C(n, k) as a float (exact for the small n of a matrix cell).
fn choose(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Repeated samples of one question: a (model, task) unit's passes and n.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unit {
    /// Samples labeled `pass`.
    pub passes: usize,
    /// Samples.
    pub n: usize,
}

/// How a cell's units behave over their samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Samples {
    /// Units whose every sample passes.
    pub stable: usize,
    /// Units with some passing and some failing samples.
    pub flaky: usize,
    /// Units whose every sample fails.
    pub failing: usize,
    /// The k of pass^k: the fewest samples any unit of the cell has.
    pub k: usize,
    /// pass^k: the chance that k samples of a unit all pass, estimated per
    /// unit without bias as C(passes, k) / C(n, k) and averaged over units.
    pub pass_k: f64,
}

/// The split and pass^k of a cell's units.
pub fn samples<'a>(units: impl IntoIterator<Item = &'a Unit>) -> Samples {
    let units: Vec<&Unit> = units.into_iter().filter(|u| u.n > 0).collect();
    let mut s = Samples::default();
    if units.is_empty() {
        return s;
    }
    s.k = units.iter().map(|u| u.n).min().unwrap_or(1);
    let mut sum = 0.0;
    for u in &units {
        if u.passes == u.n {
            s.stable += 1;
        } else if u.passes == 0 {
            s.failing += 1;
        } else {
            s.flaky += 1;
        }
        sum += choose(u.passes, s.k) / choose(u.n, s.k);
    }
    s.pass_k = sum / units.len() as f64;
    s
}

/// The most frequent failure label (ties: the one first in SPEC §5's rule
/// order), or `None` when every sample passed.
pub fn dominant_failure(labels: &BTreeMap<Label, usize>) -> Option<Label> {
    let mut best: Option<(Label, usize)> = None;
    // BTreeMap order is `Label`'s order: the rule order.
    for (&label, &count) in labels {
        if label.is_pass() || count == 0 {
            continue;
        }
        if best.is_none_or(|(_, c)| count > c) {
            best = Some((label, count));
        }
    }
    best.map(|(l, _)| l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<(f64, f64)>, b: (f64, f64)) -> bool {
        a.is_some_and(|a| (a.0 - b.0).abs() < 5e-5 && (a.1 - b.1).abs() < 5e-5)
    }

    // Reference values: Newcombe (1998), "Interval estimation for the
    // difference between independent proportions", Table II, method 10.
    #[test]
    fn newcombe_matches_published_values() {
        assert!(
            close(newcombe(56, 70, 48, 80), (0.0524, 0.3339)),
            "{:?}",
            newcombe(56, 70, 48, 80)
        );
        assert!(
            close(newcombe(9, 10, 3, 10), (0.1705, 0.8090)),
            "{:?}",
            newcombe(9, 10, 3, 10)
        );
        assert!(
            close(newcombe(5, 56, 0, 29), (-0.0381, 0.1926)),
            "{:?}",
            newcombe(5, 56, 0, 29)
        );
        assert!(
            close(newcombe(0, 10, 0, 20), (-0.1611, 0.2775)),
            "{:?}",
            newcombe(0, 10, 0, 20)
        );
        assert!(
            close(newcombe(0, 10, 0, 10), (-0.2775, 0.2775)),
            "{:?}",
            newcombe(0, 10, 0, 10)
        );
        assert_eq!(newcombe(1, 0, 1, 1), None);
    }

    #[test]
    fn pass_k_and_the_split_over_samples() {
        let units = [
            Unit { passes: 3, n: 3 },
            Unit { passes: 2, n: 3 },
            Unit { passes: 0, n: 3 },
            Unit { passes: 5, n: 6 },
        ];
        let s = samples(&units);
        assert_eq!((s.stable, s.flaky, s.failing, s.k), (1, 2, 1, 3));
        // Units: 1, 0, 0, C(5,3)/C(6,3) = 10/20.
        assert!((s.pass_k - 1.5 / 4.0).abs() < 1e-12, "{}", s.pass_k);
        assert_eq!(samples(&[]).k, 0);
    }

    #[test]
    fn the_dominant_failure_breaks_ties_by_rule_order() {
        let mut labels = BTreeMap::new();
        labels.insert(Label::Pass, 9);
        labels.insert(Label::TypeCoercion, 2);
        labels.insert(Label::MalformedJson, 2);
        assert_eq!(dominant_failure(&labels), Some(Label::MalformedJson));
        labels.insert(Label::TypeCoercion, 3);
        assert_eq!(dominant_failure(&labels), Some(Label::TypeCoercion));
        let only_pass: BTreeMap<Label, usize> = [(Label::Pass, 3)].into();
        assert_eq!(dominant_failure(&only_pass), None);
    }
}
