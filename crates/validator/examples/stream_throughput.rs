//! Throughput of the streaming pipeline as a ratio of the batch pipeline's
//! on the same outputs (issue 15): the generated corpus of the `replay`
//! bench (`benches/support/gen.rs`, 1000 realistic outputs), the default
//! profile and one engine (tools compiled once, as a gateway does).
//!
//! - batch: `Engine::parse_finished` on each whole output;
//! - stream: `StreamParser` fed the output in deltas of 1–16 chars (split
//!   before timing: they come from the network), then `finish`.
//!
//! Then, per wire format (issue 24: hermes, mistral, kimi), 10 MB of outputs
//! in that format only (prose of 0–2 KB, then — 70% of outputs — one call
//! with 50 B – 3 KB of arguments), each judged by the format's built-in
//! profile and by the default profile, batch against stream as above.
//! `TOOLGATE_BENCH_MB` changes the size per format (default 10).
//!
//! Each figure is the best of `TOOLGATE_BENCH_RUNS` (default 7) timed runs,
//! with mimalloc as the allocator (as in the `toolgate` binary).
//! Run: `cargo run --release -p toolgate-validator --example stream_throughput`.
//! With `-- --write DIR` it also writes each format's outputs, joined by a
//! newline, to `DIR/FORMAT.txt` (and the tools to `DIR/tools.json`): the
//! files the whole-process comparison of `toolgate parse --stream` with
//! `toolgate parse` reads.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;
use toolgate_core::Transcript;
use toolgate_validator::stream::StreamParser;
use toolgate_validator::{Engine, Profile};

use toolgate_testkit::generate;

#[global_allocator]
static GLOBAL: toolgate_alloc::Mimalloc = toolgate_alloc::Mimalloc;

/// Each output of `outputs` cut into deltas of 1–16 chars (as a network
/// delivers them; done before timing).
fn split<'a>(outputs: &'a [String], rng: &mut generate::Rng) -> Vec<Vec<&'a str>> {
    outputs
        .iter()
        .map(|text| {
            let mut out = Vec::new();
            let mut at = 0;
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
        .collect()
}

/// Outputs in wire format `format` (an index into [`generate::FORMATS`])
/// until they hold `bytes` bytes: the corpus generator's shape (an eighth
/// open with a `<think>` block, 30% are prose only) with one format.
fn format_outputs(format: usize, bytes: usize) -> Vec<String> {
    let mut rng = generate::Rng::new(0x24 + format as u64);
    let mut out = Vec::new();
    let mut total = 0;
    while total < bytes {
        let think = if rng.below(8) == 0 {
            format!("<think>{}</think>\n", generate::prose(&mut rng, 512))
        } else {
            String::new()
        };
        let before = generate::prose(&mut rng, 2048);
        let text = if rng.below(10) < 3 {
            format!("{think}{before}")
        } else {
            let size = 50 + rng.below(2951);
            let args = generate::arguments(&mut rng, size);
            format!("{think}{before}\n{}", generate::call_in(format, &args))
        };
        total += text.len();
        out.push(text);
    }
    out
}

/// The best of `runs` timings of `f`, in seconds.
fn best(runs: usize, f: &dyn Fn()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Batch and stream seconds for `outputs` (split into `deltas`) under
/// `engine`, allowlisting `tools`.
fn compare(
    runs: usize,
    engine: &Engine,
    tools: &[toolgate_core::ToolDef],
    outputs: &[String],
    deltas: &[Vec<&str>],
) -> (f64, f64) {
    let batch = best(runs, &|| {
        for o in outputs {
            black_box(engine.parse_finished(o, tools, None, false));
        }
    });
    let stream = best(runs, &|| {
        for d in deltas {
            let mut s = StreamParser::new(engine, tools.to_vec());
            for piece in d {
                black_box(s.push(piece));
            }
            black_box(s.finish(None, false));
        }
    });
    (batch, stream)
}

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
    let outputs: Vec<String> = transcripts.iter().map(|t| t.output.clone()).collect();
    let deltas = split(&outputs, &mut rng);
    let engine = Engine::new(Profile::default());
    let tools = transcripts[0].tools.to_vec();
    let (batch, stream) = compare(runs, &engine, &tools, &outputs, &deltas);
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

    let per_format: usize = std::env::var("TOOLGATE_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let args: Vec<String> = std::env::args().collect();
    let write = args
        .iter()
        .position(|a| a == "--write")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from);
    if let Some(dir) = &write {
        std::fs::create_dir_all(dir).expect("the --write directory can be created");
        std::fs::write(dir.join("tools.json"), generate::tools_json().to_string())
            .expect("the tools file can be written");
    }
    println!();
    println!("| format | profile | MB | deltas | batch MB/s | stream MB/s | stream / batch |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for name in ["hermes", "mistral", "kimi"] {
        let Some(format) = generate::FORMATS.iter().position(|f| *f == name) else {
            panic!("{name} is not a generated format");
        };
        let outputs = format_outputs(format, per_format * 1_000_000);
        if let Some(dir) = &write {
            std::fs::write(dir.join(format!("{name}.txt")), outputs.join("\n"))
                .expect("the outputs can be written");
        }
        let bytes: usize = outputs.iter().map(String::len).sum();
        let deltas = split(&outputs, &mut rng);
        for profile in [name, "default"] {
            let Some(p) = Profile::builtin(profile) else {
                panic!("no built-in profile {profile}");
            };
            let engine = Engine::new(p);
            let (batch, stream) = compare(runs, &engine, &tools, &outputs, &deltas);
            let mb = bytes as f64 / 1e6;
            println!(
                "| {name} | {profile} | {mb:.2} | {} | {:.1} | {:.1} | {:.3} |",
                deltas.iter().map(Vec::len).sum::<usize>(),
                mb / batch,
                mb / stream,
                batch / stream
            );
        }
    }
}
