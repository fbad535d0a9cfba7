//! Per-extractor adversarial timings (issue 2 item 8 (c), issue 3 item 6):
//! every extractor, strict and lenient, on every adversarial input, at the
//! stated size and at 4× that size. A linear extractor takes ~4× as long on
//! the 4× input; a quadratic one ~16×. Prints one markdown row per input:
//! the slowest extractor and its time per 100 KB, the largest growth factor
//! and whose it is; then every (input, extractor) over the 2 ms / 100 KB
//! target or growing super-linearly.
//!
//! Plain timing, not criterion: a quadratic extractor can take seconds per
//! run, and criterion's minimum sample count would make the bench take hours
//! exactly when it matters. Each figure is the minimum of 3 to 9 runs.
//!
//! The declared formats of `examples/formats.toml` run with the built-in
//! extractors.
//!
//! Run: `cargo bench --bench extractors [-- FILTER]` (FILTER: a substring of
//! the input names to run). `TOOLGATE_BENCH_SCALE=N` times the large input
//! at N× instead of 4× (a growth factor near N is linear, near N² quadratic).

use std::hint::black_box;
use std::time::{Duration, Instant};
use toolgate_formats::{Extractor, Input, Strictness};
use toolgate_testkit::generate;
use toolgate_testkit::generate::KB100;

/// Target: each extractor under this per 100 KB.
const TARGET: Duration = Duration::from_millis(2);
/// Growth factor (4× input) above which an extractor is reported as
/// super-linear, when its 4× time is long enough to measure reliably.
const GROWTH_LIMIT: f64 = 8.0;
/// Below this, a 4× time is too short for its growth factor to mean much
/// (and a 4× input may leave a cache the 1× one fits in: memchr over 1 MB
/// versus 4 MB of prose grows ×9 at well under a millisecond).
const MEASURABLE: Duration = Duration::from_millis(1);

/// The minimum time of `f` over 3 to 9 runs (fewer only when one run takes
/// over half a second): a run preempted by another process on a busy machine
/// must not decide the figure.
fn time(mut f: impl FnMut()) -> Duration {
    let mut best = Duration::MAX;
    let started = Instant::now();
    for run in 0..9 {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed());
        let spent = started.elapsed();
        if best > Duration::from_millis(500) || (run >= 2 && spent > Duration::from_millis(60)) {
            break;
        }
    }
    best
}

/// Time of one extraction of `text` (reasoning spans computed outside).
fn extract_time(e: &dyn Extractor, text: &str, s: Strictness) -> Duration {
    let input = Input::new(text);
    time(|| {
        black_box(e.extract(black_box(&input), s));
    })
}

fn per_100k(d: Duration, bytes: usize) -> Duration {
    d.mul_f64(KB100 as f64 / bytes.max(1) as f64)
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut extractors = toolgate_formats::builtin();
    // The declared formats of `examples/formats.toml` (issue 8 item 4) run
    // the same engines with user tokens: measured like the built-in rows.
    let declared = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/formats.toml"
    ))
    .ok()
    .and_then(|text| {
        let mut catalog = toolgate_formats::Catalog::new();
        catalog.add_formats(&text).ok()?;
        Some(catalog.into_custom())
    })
    .unwrap_or_default();
    extractors.extend(declared);
    let examples: Vec<(String, String)> = extractors
        .iter()
        .map(|e| (e.name().to_string(), e.example().to_string()))
        .collect();
    let mut inputs: Vec<(String, String, String)> = Vec::new();
    let small = generate::adversarial(1);
    let scale: usize = std::env::var("TOOLGATE_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n >= 2)
        .unwrap_or(4);
    let large = generate::adversarial(scale);
    for ((name, a), (_, b)) in small.into_iter().zip(large) {
        inputs.push((name, a, b));
    }
    let small = generate::from_examples(&examples, KB100);
    let large = generate::from_examples(&examples, scale * KB100);
    for ((name, a), (_, b)) in small.into_iter().zip(large) {
        inputs.push((format!("{name}_100k"), a, b));
    }
    if let Some(f) = &filter {
        inputs.retain(|(name, _, _)| name.contains(f.as_str()));
    }

    println!(
        "{} extractors × strict/lenient × {} inputs",
        extractors.len(),
        inputs.len()
    );
    println!();
    println!(
        "| input | bytes | slowest extractor | ms / 100 KB | worst growth ×{scale} input | of |"
    );
    println!("|---|---:|---|---:|---:|---|");
    // Linear is ×scale; flag anything past twice that.
    let growth_limit = GROWTH_LIMIT * scale as f64 / 4.0;
    let mut problems = Vec::new();
    let mut overall = Duration::ZERO;
    for (name, small, large) in &inputs {
        let mut slowest = (Duration::ZERO, String::new());
        let mut growth = (0.0f64, String::new());
        for e in &extractors {
            for s in [Strictness::Strict, Strictness::Lenient] {
                let who = format!("{} ({})", e.name(), strictness(s));
                let t1 = extract_time(e.as_ref(), small, s);
                let norm = per_100k(t1, small.len());
                if norm > slowest.0 {
                    slowest = (norm, who.clone());
                }
                // Only time the 4× input when the 1× one is not already
                // hopeless: a quadratic extractor is named either way.
                let t4 = if t1 < Duration::from_millis(200) {
                    Some(extract_time(e.as_ref(), large, s))
                } else {
                    None
                };
                let ratio = t4
                    .filter(|&t4| t4 >= MEASURABLE)
                    .map(|t4| t4.as_secs_f64() / t1.as_secs_f64().max(1e-9));
                if let Some(r) = ratio
                    && r > growth.0
                {
                    growth = (r, who.clone());
                }
                if norm >= TARGET || ratio.is_some_and(|r| r > growth_limit) {
                    problems.push(format!(
                        "{name}: {who} {} ms / 100 KB, growth ×{}",
                        ms(norm),
                        ratio.map_or("–".to_string(), |r| format!("{r:.1}"))
                    ));
                }
            }
        }
        overall = overall.max(slowest.0);
        let (g, gwho) = if growth.1.is_empty() {
            ("–".to_string(), format!("(all under 1 ms at {scale}×)"))
        } else {
            (format!("{:.1}", growth.0), growth.1)
        };
        println!(
            "| {name} | {} | {} | {} | {g} | {gwho} |",
            small.len(),
            slowest.1,
            ms(slowest.0)
        );
    }
    println!();
    println!(
        "slowest extractor on any input: {} ms / 100 KB (target < {} ms)",
        ms(overall),
        ms(TARGET)
    );
    if problems.is_empty() {
        println!("every extractor is under the target and grows linearly");
    } else {
        println!("over the target or super-linear ({}):", problems.len());
        for p in &problems {
            println!("  {p}");
        }
    }
}

fn strictness(s: Strictness) -> &'static str {
    if s.is_lenient() { "lenient" } else { "strict" }
}
