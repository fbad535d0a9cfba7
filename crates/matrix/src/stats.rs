//! Statistics over a matrix cell: its pass rate's Wilson interval and
//! whether that interval can tell "fine" from "broken", the difference of
//! two proportions (Newcombe's hybrid score interval), pass^k and the
//! stable / flaky / failing split over repeated samples, the dominant
//! failure.

use std::collections::BTreeMap;
use toolgate_core::Label;

/// A pass rate at or above this is "fine".
pub const FINE: f64 = 0.8;
/// A pass rate below this is "broken".
pub const BROKEN: f64 = 0.5;
/// The standard normal quantile for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

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

/// Whether an interval spans both "fine" and "broken", or the failure
/// rate's interval `(1 − high, 1 − low)` does. The Wilson interval of k
/// failures mirrors that of k passes, so the flag is symmetric: 0/1 is as
/// inconclusive as 1/1 (the one-sided rule flagged [0.21, 1] but not
/// [0, 0.79]).
pub fn inconclusive(low: f64, high: f64) -> bool {
    let spans = |low: f64, high: f64| low < BROKEN && high >= FINE;
    spans(low, high) || spans(1.0 - high, 1.0 - low)
}

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

/// The unbiased estimate C(passes, k) / C(n, k) of the chance that k
/// samples all pass, as the product Π_{i<k} (passes − i) / (n − i): every
/// factor is at most 1, so it stays finite where C(n, k) itself passes
/// f64's range (C(1030, 515) already does) and the quotient of two
/// infinities would be NaN.
fn all_pass(passes: usize, n: usize, k: usize) -> f64 {
    if k > passes {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (passes - i) as f64 / (n - i) as f64)
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
        // k ≤ u.n: k is the fewest samples of any unit.
        sum += all_pass(u.passes.min(u.n), u.n, s.k);
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

    /// Probe p6: two units of 1200 and 2400 samples made pass^k NaN
    /// (C(1800, 1200) / C(2400, 1200) is ∞ / ∞ in f64); the matrix printed
    /// `NaN (k=1200)` and its JSON `"rate": null`.
    #[test]
    fn pass_k_stays_finite_for_large_cells() {
        let units = [
            Unit {
                passes: 900,
                n: 1200,
            },
            Unit {
                passes: 1800,
                n: 2400,
            },
        ];
        let s = samples(&units);
        assert_eq!(s.k, 1200);
        assert!(s.pass_k.is_finite(), "{}", s.pass_k);
        assert!(s.pass_k < 1e-100, "{}", s.pass_k);
        // k = n everywhere: 1 for an all-pass unit, 0 otherwise.
        let units = [
            Unit {
                passes: 1100,
                n: 1100,
            },
            Unit {
                passes: 1099,
                n: 1100,
            },
        ];
        assert_eq!(samples(&units).pass_k, 0.5);
        // The old quotient where it was finite: C(5, 3) / C(6, 3) = 1/2.
        let units = [Unit { passes: 5, n: 6 }, Unit { passes: 3, n: 3 }];
        assert!((samples(&units).pass_k - 0.75).abs() < 1e-12);
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

    fn close_pair(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 5e-5 && (a.1 - b.1).abs() < 5e-5
    }

    // Reference values: Wilson (1927) score interval, z = 1.96 (two-sided 95%),
    // as tabulated by Newcombe (1998), Table I.
    #[test]
    fn wilson_matches_published_values() {
        assert!(
            close_pair(wilson(81, 263), (0.2553, 0.3662)),
            "{:?}",
            wilson(81, 263)
        );
        assert!(
            close_pair(wilson(15, 148), (0.0624, 0.1605)),
            "{:?}",
            wilson(15, 148)
        );
        assert!(
            close_pair(wilson(0, 20), (0.0, 0.1611)),
            "{:?}",
            wilson(0, 20)
        );
        assert!(
            close_pair(wilson(1, 29), (0.0061, 0.1718)),
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

    /// Issue 7: 0/1 was not flagged while 1/1 was; k failures and k passes
    /// now get the same flag.
    #[test]
    fn flag_is_symmetric_in_passes_and_failures() {
        for n in 1..=40 {
            for k in 0..=n {
                let (lo, hi) = wilson(k, n);
                let (mlo, mhi) = wilson(n - k, n);
                assert_eq!(inconclusive(lo, hi), inconclusive(mlo, mhi), "{k}/{n}");
            }
        }
        let (lo, hi) = wilson(0, 1);
        assert!(inconclusive(lo, hi), "0/1 [{lo}, {hi}]");
        let (lo, hi) = wilson(1, 1);
        assert!(inconclusive(lo, hi));
        // 0 of 20: [0, 0.16] is clearly broken, 20 of 20 clearly fine.
        let (lo, hi) = wilson(0, 20);
        assert!(!inconclusive(lo, hi));
        let (lo, hi) = wilson(20, 20);
        assert!(!inconclusive(lo, hi));
    }
}
