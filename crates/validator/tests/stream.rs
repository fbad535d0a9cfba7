//! stream == batch: fed the bundled outputs in deltas of random sizes, the
//! streaming parser forwards a prefix of the output that holds no candidate
//! of the profile's modes, and ends with exactly the batch decision,
//! telemetry and label.
#![allow(clippy::unwrap_used)]

use toolgate_core::{Decision, Source, Transcript};
use toolgate_formats::{Input, Strictness};
use toolgate_testkit::generate::Rng;
use toolgate_validator::stream::StreamParser;
use toolgate_validator::{Engine, Profile};

fn corpus() -> Vec<Transcript> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../transcripts");
    toolgate_core::load_paths(&[root])
        .into_iter()
        .filter_map(Result::ok)
        .collect()
}

/// `text` split into deltas of 1..=max chars.
fn split(text: &str, rng: &mut Rng, max: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let n = 1 + rng.below(max);
        out.push(chars[i..(i + n).min(chars.len())].iter().collect());
        i += n;
    }
    out
}

#[test]
fn stream_equals_batch_and_forwards_no_call_markup() {
    let transcripts = corpus();
    assert!(transcripts.len() > 100);
    let mut rng = Rng::new(0x9e3779b97f4a7c15);
    let mut forwarded_some = 0;
    let mut held_calls = 0;
    for name in [
        "default",
        "hermes",
        "qwen3-coder",
        "mistral",
        "llama3",
        "gpt-oss",
        "deepseek",
        "kimi",
        "glm",
    ] {
        let engine = Engine::new(Profile::builtin(name).unwrap());
        let modes: Vec<String> = engine.profile.modes().map(str::to_string).collect();
        for t in &transcripts {
            let length = t.hit_length_limit();
            let batch = engine.parse_finished(&t.output, &t.tools, t.reasoning.as_deref(), length);
            for max in [1, 3, 16] {
                let mut s = StreamParser::new(&engine, t.tools.to_vec());
                let mut forwarded = String::new();
                for d in split(&t.output, &mut rng, max) {
                    forwarded.push_str(s.push(&d));
                }
                let end = s.finish(t.reasoning.as_deref(), length);
                assert_eq!(
                    end.result,
                    batch,
                    "{name} {}: stream != batch",
                    t.location()
                );
                assert!(t.output.starts_with(&forwarded), "{name} {}", t.location());
                assert_eq!(end.forwarded, forwarded.len());
                // No candidate of any of the profile's modes was forwarded.
                let input = Input::new(&t.output);
                for mode in &modes {
                    let Some(e) = engine.extractors.iter().find(|e| e.name() == mode) else {
                        continue;
                    };
                    for c in e.extract(&input, Strictness::Strict) {
                        if matches!(c.source, Source::Output | Source::OutputReasoning) {
                            assert!(
                                c.span.start >= forwarded.len(),
                                "{name} {}: {mode} candidate at {} but {} bytes forwarded",
                                t.location(),
                                c.span.start,
                                forwarded.len()
                            );
                        }
                    }
                }
                match end.result.decision {
                    Decision::Execute { .. } => {
                        held_calls += 1;
                        assert!(
                            !end.tail.contains(&end.result.candidates[0].raw)
                                || end.result.candidates[0].raw.is_empty()
                        );
                    }
                    _ => assert_eq!(format!("{forwarded}{}", end.tail), t.output),
                }
                if !forwarded.is_empty() {
                    forwarded_some += 1;
                }
            }
        }
    }
    // The test is not vacuous: some text streamed through, some calls executed.
    assert!(forwarded_some > 100, "{forwarded_some}");
    assert!(held_calls > 10, "{held_calls}");
}
