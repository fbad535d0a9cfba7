//! A deterministic generator of realistic model outputs for the benchmarks
//! and the tests.
//!
//! Each output is 0 – 2 KB of prose, then (70% of outputs) one tool call whose
//! arguments JSON is 50 B – 3 KB, written in one of the wire formats real
//! models emit (seed modes and model families alike). 30% of outputs are
//! prose only. About one output in eight opens with a `<think>` block, and the
//! prose mixes ASCII with accented, CJK and emoji text. No `rand` dependency:
//! a xorshift PRNG with a fixed seed keeps every run identical.

use serde_json::{Value, json};

/// xorshift64: small, fast, deterministic.
pub struct Rng(u64);

impl Rng {
    /// A generator; seed 0 is replaced by 1 (xorshift's fixed point).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "the",
    "weather",
    "in",
    "Antwerp",
    "is",
    "mild",
    "today",
    "and",
    "I",
    "will",
    "check",
    "forecast",
    "for",
    "tomorrow",
    "using",
    "tool",
    "results",
    "show",
    "that",
    "rain",
    "is",
    "likely",
    "later",
    "so",
    "bring",
    "an",
    "umbrella",
    "données",
    "東京",
    "🙂",
    "{braces}",
    "[1, 2]",
    "a\"quote",
    "path/to/file.rs",
    "x < y",
    "let's",
];

/// Prose of 0 ..= `max` bytes (approximately: whole words).
pub fn prose(rng: &mut Rng, max: usize) -> String {
    let target = rng.below(max + 1);
    let mut s = String::with_capacity(target + 16);
    while s.len() < target {
        s.push_str(WORDS[rng.below(WORDS.len())]);
        s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    s
}

/// Arguments whose JSON text is about `size` bytes (at least ~45).
pub fn arguments(rng: &mut Rng, size: usize) -> Value {
    let mut text = String::new();
    let base = 45;
    while text.len() + base < size {
        text.push_str(WORDS[rng.below(WORDS.len())]);
        text.push(' ');
    }
    json!({"city": "Antwerp", "days": rng.below(14) as i64 + 1, "query": text})
}

/// The tool every generated call uses, as a transcript's `tools` JSON.
pub fn tools_json() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather forecast for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 14},
                    "query": {"type": "string"}
                },
                "required": ["city"],
                "additionalProperties": false
            }
        }
    }])
}

/// One hermes call of `get_weather` for Antwerp: what the proxy's tests
/// have the mock upstream answer.
pub const HERMES_CALL: &str =
    r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>"#;

/// `get_weather` with only its required `city`, as a request's `tools`
/// (the list the proxy's tests offer).
pub fn weather_tools() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])
}

/// The names of the wire formats [`output`] writes, by index.
pub const FORMATS: &[&str] = &[
    "tag", "hermes", "json", "bracket", "fence", "marker", "qwen_xml", "mistral", "llama3",
    "harmony", "deepseek", "kimi", "glm",
];

/// `s` as a JSON string literal.
fn quoted(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// One call to `get_weather` with `args` in wire format `format` (an index
/// into [`FORMATS`]).
pub fn call_in(format: usize, args: &Value) -> String {
    let a = args.to_string();
    let call = json!({"name": "get_weather", "arguments": args}).to_string();
    let city = args["city"].as_str().unwrap_or_default();
    let days = args["days"].as_i64().unwrap_or(1);
    let query = args["query"].as_str().unwrap_or_default();
    match format {
        0 => format!("<tool name=\"get_weather\">{a}</tool>"),
        1 => format!("<tool_call>\n{call}\n</tool_call>"),
        2 => format!(
            "need_tool: yes\n{}",
            json!({"tool": "get_weather", "arguments": args})
        ),
        3 => format!(
            "[get_weather(city={}, days={days}, query={})]",
            quoted(city),
            quoted(query)
        ),
        4 => format!("```json\n{call}\n```"),
        5 => format!(
            "TOOL_CALL: {}",
            json!({"tool_name": "get_weather", "parameters": args})
        ),
        6 => format!(
            "<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n<parameter=days>\n{days}\n</parameter>\n<parameter=query>\n{query}\n</parameter>\n</function>\n</tool_call>"
        ),
        7 => format!("[TOOL_CALLS]get_weather[ARGS]{a}"),
        8 => format!("<|python_tag|>{{\"name\": \"get_weather\", \"parameters\": {a}}}"),
        9 => format!(
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{a}<|call|>"
        ),
        10 => format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{a}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
        11 => format!(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{a}<|tool_call_end|><|tool_calls_section_end|>"
        ),
        _ => format!(
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>{city}</arg_value>\n<arg_key>days</arg_key>\n<arg_value>{days}</arg_value>\n<arg_key>query</arg_key>\n<arg_value>{query}</arg_value>\n</tool_call>"
        ),
    }
}

/// One generated output and what it holds.
pub struct Sample {
    /// The model output.
    pub output: String,
    /// The wire format of its call (a name from [`FORMATS`]); `None`: prose only.
    pub format: Option<&'static str>,
    /// The length of the call's arguments JSON (0 when prose only).
    pub payload: usize,
}

/// One output: prose, or prose and one call in a randomly chosen format.
pub fn output(rng: &mut Rng) -> Sample {
    let think = if rng.below(8) == 0 {
        format!("<think>{}</think>\n", prose(rng, 512))
    } else {
        String::new()
    };
    let before = prose(rng, 2048);
    if rng.below(10) < 3 {
        return Sample {
            output: format!("{think}{before}"),
            format: None,
            payload: 0,
        };
    }
    let size = 50 + rng.below(3000 - 50 + 1);
    let args = arguments(rng, size);
    let format = rng.below(FORMATS.len());
    let body = call_in(format, &args);
    Sample {
        output: format!("{think}{before}\n{body}"),
        format: Some(FORMATS[format]),
        payload: args.to_string().len(),
    }
}

/// `n` outputs, the same on every run.
pub fn corpus(n: usize) -> Vec<Sample> {
    let mut rng = Rng::new(0x5eed_1234_abcd_ef01);
    (0..n).map(|_| output(&mut rng)).collect()
}

/// A one-line description of a corpus: size, prose-only share, payload
/// range, formats used.
pub fn describe(samples: &[Sample]) -> String {
    let bytes: usize = samples.iter().map(|s| s.output.len()).sum();
    let calls: Vec<&Sample> = samples.iter().filter(|s| s.format.is_some()).collect();
    let min = calls.iter().map(|s| s.payload).min().unwrap_or(0);
    let max = calls.iter().map(|s| s.payload).max().unwrap_or(0);
    let thinking = samples
        .iter()
        .filter(|s| s.output.starts_with("<think>"))
        .count();
    let mut formats: Vec<&str> = calls.iter().filter_map(|s| s.format).collect();
    formats.sort_unstable();
    formats.dedup();
    format!(
        "{} outputs, {bytes} bytes (mean {}), {} prose-only ({:.0}%), {} with <think>, \
         arguments {min}-{max} B, {} formats: {}",
        samples.len(),
        bytes / samples.len().max(1),
        samples.len() - calls.len(),
        100.0 * (samples.len() - calls.len()) as f64 / samples.len().max(1) as f64,
        thinking,
        formats.len(),
        formats.join(" ")
    )
}

/// A transcript (JSON text) with [`tools_json`] and `output`.
pub fn transcript_json(output: &str) -> String {
    json!({"id": "bench", "tools": tools_json(), "output": output}).to_string()
}

/// `unit` repeated until the text is at least `bytes` long.
pub fn repeat_to(unit: &str, bytes: usize) -> String {
    let n = bytes.div_ceil(unit.len().max(1));
    unit.repeat(n)
}

/// 100 KiB: the unit every adversarial figure is normalized to.
pub const KB100: usize = 100 * 1024;

/// Openers of every family mode with no closer: each repeated to `bytes`.
pub const OPENERS: &[(&str, &str)] = &[
    ("tool_openers", "<tool name=\"f\">{"),
    ("tool_call_begin", "<|tool_call_begin|>"),
    (
        "tool_calls_section",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{",
    ),
    ("tool_calls_marker", "[TOOL_CALLS]"),
    ("tool_calls_args", "[TOOL_CALLS]f[ARGS]{"),
    ("function_eq", "<function="),
    ("parameter_eq", "<function=f><parameter="),
    ("channel", "<|channel|>"),
    (
        "channel_to",
        "<|channel|>commentary to=functions.f<|message|>{",
    ),
    ("bracket_call", "[f("),
    ("think_open", "<think>"),
    ("python_tag", "<|python_tag|>"),
    (
        "deepseek_begin",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>",
    ),
    ("arg_key", "<tool_call>f<arg_key>"),
    ("fence_json", "```json\n{"),
    ("need_tool_json", "need_tool: yes\n{\"tool\": "),
    ("quotes", "\""),
    ("backslashes_in_string", "{\"a\": \"\\"),
    ("invoke", "<invoke name=\""),
];

/// The adversarial inputs: (name, text). Issue 2 names the first four;
/// the rest open every family mode's syntax without ever closing it, so an
/// extractor that rescans from each opener shows up as quadratic. `scale`
/// multiplies every size (1 = the sizes the targets are stated for).
pub fn adversarial(scale: usize) -> Vec<(String, String)> {
    let kb = KB100 * scale;
    let mut out = vec![
        ("unclosed_braces_100k".to_string(), "{".repeat(kb)),
        ("nested_brackets_100k".to_string(), "[{".repeat(kb / 2)),
        (
            "tool_call_openers_10k".to_string(),
            "<tool_call>".repeat(10_000 * scale),
        ),
        ("prose_1m".to_string(), {
            let mut rng = Rng::new(7);
            let mut s = String::new();
            while s.len() < 10 * kb {
                s.push_str(&prose(&mut rng, 2048));
            }
            s
        }),
    ];
    for (name, unit) in OPENERS {
        out.push((format!("{name}_100k"), repeat_to(unit, kb)));
    }
    out
}

/// Per-mode adversarial inputs built from each extractor's own example:
/// the example cut in half (an opener with no end), and the whole example,
/// each repeated to `bytes`. New modes are covered without editing this list.
pub fn from_examples(examples: &[(String, String)], bytes: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (mode, example) in examples {
        if example.is_empty() {
            continue;
        }
        let mut cut = example.len() / 2;
        while !example.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut > 0 {
            out.push((
                format!("{mode}_half_example"),
                repeat_to(&example[..cut], bytes),
            ));
        }
        out.push((format!("{mode}_whole_example"), repeat_to(example, bytes)));
    }
    out
}
