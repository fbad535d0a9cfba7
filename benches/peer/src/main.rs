//! toolgate against SGLang's `tool-parser` crate (1.10), side by side in one
//! process, on the same generated outputs per format (issue 24).
//!
//! For each format, N outputs are generated: a third prose only, a third
//! bare calls (one or two), a third prose then a call. Each side runs over
//! all N outputs, the sides interleaved for `--rounds` rounds; each figure is
//! the fastest round. Three columns are timed:
//!
//! - `tool-parser`: `ToolParser::parse_complete` of the format's parser;
//! - toolgate extraction: the built-in extractor, strict (what the parser
//!   does: text to calls);
//! - toolgate pipeline: the whole fail-closed path of the one-mode profile
//!   (extract, allowlist, strict schema, decision, label, telemetry record),
//!   with the tool list held as an embedding holds it: shared with the
//!   engine once (`Engine::share_tools`, as the Python `Gate` does), so the
//!   engine finds its compiled form by address. `--unshared-tools` passes a
//!   plain `Vec` instead, whose schemas the engine compares on every output.
//!
//! A ratio is tool-parser's time over toolgate's: above 1, toolgate is
//! faster. Before timing, every output is parsed by both sides and the calls
//! compared (names and arguments as JSON values); the table says how many
//! outputs agree, and `--show-disagreements` prints the first few that do not.
//!
//! Run (release, from this folder):
//! `cargo run --release -- [--n 20000] [--rounds 5] [--show-disagreements] [--only MODE] [--unshared-tools]`
//! (`--only llama3`: one format, e.g. under `perf record`).

use serde_json::{Map, Value, json};
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tool_parser::{ParserFactory, ToolParser};
use toolgate_core::{Source, ToolDef};
use toolgate_formats::{Extractor, Input, Strictness};
use toolgate_validator::{Engine, Profile};

/// One format on both sides.
struct Format {
    /// toolgate's mode (and one-mode profile).
    mode: &'static str,
    /// tool-parser's registered parser name.
    peer: &'static str,
    /// Writes calls in the format's wire syntax.
    write: fn(&[(&str, Map<String, Value>)]) -> String,
}

fn json_args(args: &Map<String, Value>) -> String {
    // serde_json's writer: `{"city":"Antwerp"}`; a space after the colon
    // would be closer to real models, but both sides read either.
    Value::Object(args.clone()).to_string()
}

fn hermes(calls: &[(&str, Map<String, Value>)]) -> String {
    calls
        .iter()
        .map(|(n, a)| {
            format!(
                "<tool_call>\n{{\"name\": \"{n}\", \"arguments\": {}}}\n</tool_call>",
                json_args(a)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn llama3(calls: &[(&str, Map<String, Value>)]) -> String {
    let body = calls
        .iter()
        .map(|(n, a)| format!("{{\"name\": \"{n}\", \"parameters\": {}}}", json_args(a)))
        .collect::<Vec<_>>()
        .join("; ");
    format!("<|python_tag|>{body}")
}

fn mistral(calls: &[(&str, Map<String, Value>)]) -> String {
    let body = calls
        .iter()
        .map(|(n, a)| format!("{{\"name\": \"{n}\", \"arguments\": {}}}", json_args(a)))
        .collect::<Vec<_>>()
        .join(", ");
    format!("[TOOL_CALLS] [{body}]")
}

fn deepseek(calls: &[(&str, Map<String, Value>)]) -> String {
    let body = calls
        .iter()
        .map(|(n, a)| {
            format!(
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{}\n```<｜tool▁call▁end｜>",
                json_args(a)
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    format!("<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>")
}

fn kimi(calls: &[(&str, Map<String, Value>)]) -> String {
    let body: String = calls
        .iter()
        .enumerate()
        .map(|(i, (n, a))| {
            format!(
                "<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{}<|tool_call_end|>",
                json_args(a)
            )
        })
        .collect();
    format!("<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>")
}

/// The XML-like formats carry string values only here: both sides then read
/// them the same way without the tool schemas.
fn text_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn glm(calls: &[(&str, Map<String, Value>)]) -> String {
    calls
        .iter()
        .map(|(n, a)| {
            let params: String = a
                .iter()
                .map(|(k, v)| {
                    format!(
                        "<arg_key>{k}</arg_key>\n<arg_value>{}</arg_value>\n",
                        text_value(v)
                    )
                })
                .collect();
            format!("<tool_call>{n}\n{params}</tool_call>")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn qwen_xml(calls: &[(&str, Map<String, Value>)]) -> String {
    calls
        .iter()
        .map(|(n, a)| {
            let params: String = a
                .iter()
                .map(|(k, v)| format!("<parameter={k}>\n{}\n</parameter>\n", text_value(v)))
                .collect();
            format!("<tool_call>\n<function={n}>\n{params}</function>\n</tool_call>")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn minimax_m2(calls: &[(&str, Map<String, Value>)]) -> String {
    let body: String = calls
        .iter()
        .map(|(n, a)| {
            let params: String = a
                .iter()
                .map(|(k, v)| format!("<parameter name=\"{k}\">{}</parameter>\n", text_value(v)))
                .collect();
            format!("<invoke name=\"{n}\">\n{params}</invoke>\n")
        })
        .collect();
    format!("<minimax:tool_call>\n{body}</minimax:tool_call>")
}

const FORMATS: &[Format] = &[
    Format {
        mode: "hermes",
        peer: "qwen",
        write: hermes,
    },
    Format {
        mode: "llama3",
        peer: "llama",
        write: llama3,
    },
    Format {
        mode: "mistral",
        peer: "mistral",
        write: mistral,
    },
    Format {
        mode: "deepseek",
        peer: "deepseek",
        write: deepseek,
    },
    Format {
        mode: "kimi",
        peer: "kimik2",
        write: kimi,
    },
    Format {
        mode: "glm",
        peer: "glm45_moe",
        write: glm,
    },
    Format {
        mode: "qwen_xml",
        peer: "qwen_coder",
        write: qwen_xml,
    },
    Format {
        mode: "minimax_m2",
        peer: "minimax_m2",
        write: minimax_m2,
    },
];

const CITIES: &[&str] = &[
    "Antwerp", "Ghent", "Lisbon", "Porto", "Kyoto", "Osaka", "Nairobi", "Lima", "Quito", "Oslo",
    "Bergen", "Turku",
];

const PROSE: &[&str] = &[
    "Sure, let me look that up for you.",
    "The forecast depends on the region; coastal towns are usually milder than the interior, and the wind picks up in the afternoon.",
    "I can help with that. First I will check the current conditions, then the time zone.",
    "Here is what I know so far about the trip you are planning, and what I still need to check before I can answer properly.",
];

/// A small deterministic generator (xorshift64*): the same outputs on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        // The modulo of a u64 by a slice length fits in usize.
        of[(self.next() % of.len() as u64) as usize]
    }
}

fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "get_weather".into(),
            description: None,
            parameters: Some(json!({
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": false
            })),
        },
        ToolDef {
            name: "get_time".into(),
            description: None,
            parameters: Some(json!({
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
                "additionalProperties": false
            })),
        },
    ]
}

fn outputs(format: &Format, n: usize) -> Vec<String> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|i| {
            let prose = rng.pick(PROSE);
            let city = rng.pick(CITIES);
            let mut weather = Map::new();
            weather.insert("city".into(), Value::String(city.into()));
            if i % 2 == 0 {
                weather.insert("unit".into(), Value::String("celsius".into()));
            }
            let mut time = Map::new();
            time.insert(
                "tz".into(),
                Value::String(format!("Europe/{}", rng.pick(CITIES))),
            );
            match i % 3 {
                0 => format!("{prose} {prose}"),
                1 if i % 2 == 0 => (format.write)(&[("get_weather", weather), ("get_time", time)]),
                1 => (format.write)(&[("get_weather", weather)]),
                _ => format!("{prose}\n\n{}", (format.write)(&[("get_weather", weather)])),
            }
        })
        .collect()
}

/// Drives one of tool-parser's futures to its end. Its parsers do no I/O:
/// every `parse_complete` is ready at its first poll, but this loops anyway.
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

type Calls = Vec<(String, Value)>;

fn peer_calls(parser: &dyn ToolParser, text: &str) -> Calls {
    match block_on(parser.parse_complete(text)) {
        Ok((_, calls)) => calls
            .into_iter()
            .map(|c| {
                let args = serde_json::from_str(&c.function.arguments).unwrap_or(Value::Null);
                (c.function.name, args)
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn toolgate_calls(extractor: &dyn Extractor, text: &str) -> Calls {
    extractor
        .extract(&Input::new(text), Strictness::Strict)
        .into_iter()
        .filter(|c| c.source == Source::Output)
        .filter_map(|c| c.call())
        .map(|c| {
            (
                c.name,
                Value::Object(std::sync::Arc::unwrap_or_clone(c.arguments)),
            )
        })
        .collect()
}

fn time(f: &mut dyn FnMut()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

struct Row {
    mode: &'static str,
    agree: usize,
    peer: Duration,
    extract: Duration,
    pipeline: Duration,
    executed: usize,
}

fn main() {
    let mut n = 20_000;
    let mut rounds = 5;
    let mut show = false;
    let mut only: Option<String> = None;
    let mut unshared = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--n" => n = args.next().and_then(|v| v.parse().ok()).unwrap_or(n),
            "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()).unwrap_or(rounds),
            "--show-disagreements" => show = true,
            "--only" => only = args.next(),
            "--unshared-tools" => unshared = true,
            other => {
                eprintln!(
                    "unknown argument {other:?}; usage: [--n N] [--rounds R] [--show-disagreements] [--only MODE] [--unshared-tools]"
                );
                std::process::exit(2);
            }
        }
    }
    let factory = ParserFactory::new();
    let tools = Arc::new(tools());
    // A copy, equal but not shared: found by comparing its schemas.
    let unshared_tools = tools.to_vec();
    let mut rows = Vec::new();
    for format in FORMATS {
        if only.as_deref().is_some_and(|m| m != format.mode) {
            continue;
        }
        let Some(peer) = factory.registry().create_parser(format.peer) else {
            eprintln!("tool-parser has no parser {:?}", format.peer);
            std::process::exit(2);
        };
        let Some(extractor) = toolgate_formats::by_name(format.mode) else {
            eprintln!("toolgate has no mode {:?}", format.mode);
            std::process::exit(2);
        };
        let engine = Engine::new(Profile::for_mode(format.mode));
        let tools: &[ToolDef] = if unshared {
            &unshared_tools
        } else {
            engine.share_tools(&tools);
            &tools
        };
        let texts = outputs(format, n);

        let mut agree = 0;
        let mut shown = 0;
        for t in &texts {
            let (a, b) = (peer_calls(&*peer, t), toolgate_calls(&*extractor, t));
            if a == b {
                agree += 1;
            } else if show && shown < 3 {
                shown += 1;
                eprintln!(
                    "{}: disagree on {t:?}\n  tool-parser: {a:?}\n  toolgate:    {b:?}",
                    format.mode
                );
            }
        }
        let executed = texts
            .iter()
            .filter(|t| {
                !engine
                    .parse_output(t, tools, None)
                    .decision
                    .calls()
                    .is_empty()
            })
            .count();

        let (mut best_peer, mut best_extract, mut best_pipeline) =
            (Duration::MAX, Duration::MAX, Duration::MAX);
        for _ in 0..rounds {
            best_peer = best_peer.min(time(&mut || {
                for t in &texts {
                    black_box(block_on(peer.parse_complete(black_box(t))).ok());
                }
            }));
            best_extract = best_extract.min(time(&mut || {
                for t in &texts {
                    black_box(extractor.extract(&Input::new(black_box(t)), Strictness::Strict));
                }
            }));
            best_pipeline = best_pipeline.min(time(&mut || {
                for t in &texts {
                    black_box(engine.parse_output(black_box(t), tools, None));
                }
            }));
        }
        rows.push(Row {
            mode: format.mode,
            agree,
            peer: best_peer,
            extract: best_extract,
            pipeline: best_pipeline,
            executed,
        });
    }

    println!(
        "{n} outputs per format, fastest of {rounds} interleaved rounds; ratio = tool-parser time / toolgate time (>1: toolgate faster)\n"
    );
    println!(
        "| format | same calls | tool-parser | toolgate extraction | extraction ratio | toolgate pipeline | pipeline ratio | executed by the pipeline |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (mut log_e, mut log_p) = (0.0, 0.0);
    for r in &rows {
        let (re, rp) = (ms(r.peer) / ms(r.extract), ms(r.peer) / ms(r.pipeline));
        log_e += re.ln();
        log_p += rp.ln();
        println!(
            "| {} | {}/{n} | {:.1} ms | {:.1} ms | {:.2}× | {:.1} ms | {:.2}× | {} |",
            r.mode,
            r.agree,
            ms(r.peer),
            ms(r.extract),
            re,
            ms(r.pipeline),
            rp,
            r.executed
        );
    }
    let k = rows.len() as f64;
    println!(
        "\ngeometric mean: extraction {:.2}×, pipeline {:.2}×",
        (log_e / k).exp(),
        (log_p / k).exp()
    );
}
