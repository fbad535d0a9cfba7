//! Throughput of the streaming pipeline as a ratio of the batch pipeline's
//! on the same outputs (issue 15): the generated corpus of the `replay`
//! bench (`benches/support/gen.rs`, 1000 realistic outputs), the default
//! profile and one engine (tools compiled once, as a gateway does).
//!
//! - batch: `Engine::parse_finished` on each whole output;
//! - stream: `StreamParser` fed the output in deltas of 1–16 chars (split
//!   before timing: they come from the network), then `finish`.
//!
//! Each figure is the best of `TOOLGATE_BENCH_RUNS` (default 7) timed runs.
//! Run: `cargo run --release -p toolgate-validator --example stream_throughput`.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;
use toolgate_core::Transcript;
use toolgate_validator::stream::StreamParser;
use toolgate_validator::{Engine, Profile};

use toolgate_testkit::generate;

fn main() {
    let runs: usize = std::env::var("TOOLGATE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let samples = generate::corpus(1000);
    eprintln!("corpus: {}", generate::describe(&samples));
    let transcripts: Vec<Transcript> = samples
        .iter()
        .map(|s| {
            match toolgate_core::load::parse_transcript(
                &generate::transcript_json(&s.output),
                Path::new("bench.json"),
                None,
                "bench",
            ) {
                Ok(t) => t,
                Err(e) => panic!("generated transcript does not load: {}", e.reason),
            }
        })
        .collect();
    let bytes: usize = transcripts.iter().map(|t| t.output.len()).sum();
    let mut rng = generate::Rng::new(0x0005_7ea3);
    let deltas: Vec<Vec<&str>> = transcripts
        .iter()
        .map(|t| {
            let mut out = Vec::new();
            let mut at = 0;
            let text = t.output.as_str();
            while at < text.len() {
                let n = 1 + rng.below(16);
                let end = text[at..]
                    .char_indices()
                    .nth(n)
                    .map_or(text.len(), |(i, _)| at + i);
                out.push(&text[at..end]);
                at = end;
            }
            out
        })
        .collect();
    let engine = Engine::new(Profile::default());
    let tools = transcripts[0].tools.to_vec();
    let best = |f: &dyn Fn()| {
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let batch = best(&|| {
        for t in &transcripts {
            black_box(engine.parse_finished(&t.output, &tools, None, false));
        }
    });
    let stream = best(&|| {
        for d in &deltas {
            let mut s = StreamParser::new(&engine, tools.clone());
            for piece in d {
                black_box(s.push(piece));
            }
            black_box(s.finish(None, false));
        }
    });
    let mb = bytes as f64 / 1e6;
    println!(
        "outputs: {}, {:.2} MB, deltas: {}",
        transcripts.len(),
        mb,
        deltas.iter().map(Vec::len).sum::<usize>()
    );
    println!("batch : {:.1} MB/s ({:.2} ms)", mb / batch, batch * 1e3);
    println!("stream: {:.1} MB/s ({:.2} ms)", mb / stream, stream * 1e3);
    println!("stream / batch throughput: {:.3}", batch / stream);
}
