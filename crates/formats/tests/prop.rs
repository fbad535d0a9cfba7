//! The fail-closed invariants of every built-in extractor, on random and
//! mutated outputs: no panic, spans inside the text and on char boundaries,
//! failure offsets inside the text, strict candidates without repairs — and
//! time linear in the output on pathological inputs.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate_core::{Candidate, Source};
use toolgate_formats::{Input, Strictness, builtin};

/// Pieces that matter to some extractor: openers, closers, quotes, escapes.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "\"",
    "'",
    "\\",
    ":",
    ",",
    "=",
    "\n",
    " ",
    "`",
    "```",
    "```json\n",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "TOOL_CALL",
    "TOOL_CALL: ",
    "<tool name=\"f\">",
    "</tool>",
    "<tool name='g'/>",
    "[f(",
    "a=",
    "True",
    "None",
    "null",
    "1e5",
    "-0.5",
    "\\u00e9",
    "\\ud83d",
    "\"name\"",
    "\"arguments\"",
    "\"tool_name\"",
    "\"parameters\"",
    "é",
    "😀",
    "\u{0}",
    "\t",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<|channel|>analysis<|message|>",
    "<|channel|>commentary to=functions.f",
    "<|constrain|>json",
    "<|message|>",
    "<|call|>",
    "<|end|>",
    "<|start|>assistant",
    "<function=f>",
    "<parameter=city>",
    "</parameter>",
    "</function>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "functions.f:0",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "need_tool: yes\n",
    "CALL_TOOL\n",
    "'''",
    "\"\"\"",
];

/// Real call shapes of the seed modes and families.
const SHAPES: &[&str] = &[
    r#"<tool name="search_web">{"query": "rust memchr"}</tool>"#,
    r#"{"tool": "search_web", "arguments": {"query": "x", "n": [1, 2.5, true, null]}}"#,
    r#"[{"name": "a", "arguments": {}}, {"name": "b", "parameters": {"x": "y"}}]"#,
    r#"[get_weather(city="Antwerp", unit='c'), get_time(tz='UTC', d={'a': [1, (2, 3)]},)]"#,
    "TOOL_CALL: ```json\n{\"tool_name\": \"greet\", \"parameters\": {\"name\": \"Alice\"}}\n```",
    "Action:\n```json\n[{\"tool_name\": \"f\", \"parameters\": {\"arg1\": 1}}]\n```",
    "<think>hmm</think>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>",
    "I'm thinking\n</think>\n<tool_call>[{\"name\": \"a\"}]</tool_call><tool_call>{\"name\": \"b\"}</tool_call>",
    r#"[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}]"#,
    r#"[TOOL_CALLS]f[ARGS]{"a": "b"}"#,
    r#"<|python_tag|>{"name": "f", "parameters": {"a": 1}}; {"name": "g", "parameters": {}}"#,
    "<|channel|>analysis<|message|>Need it.<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|call|>",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nAntwerp\n</parameter>\n</function>\n</tool_call>",
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Antwerp</arg_value></tool_call>",
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_calls_section_end|>",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "{\"name\": \"say\", \"arguments\": {\"text\": \"he said \\\"hi\\\" \\u00e9 😀 \\d\"}}",
];

fn check(
    all: &[Box<dyn toolgate_formats::Extractor>],
    output: &str,
    reasoning: Option<&str>,
    calls: Option<&[Value]>,
) {
    let input = Input {
        reasoning_field: reasoning,
        tool_calls: calls,
        ..Input::new(output)
    };
    for s in input.reasoning.iter() {
        assert!(
            s.start <= s.end && s.end <= output.len(),
            "reasoning span {s:?}"
        );
        assert!(output.is_char_boundary(s.start) && output.is_char_boundary(s.end));
    }
    for e in all {
        for strictness in [Strictness::Strict, Strictness::Lenient] {
            for c in e.extract(&input, strictness) {
                check_candidate(e.name(), &c, output, reasoning, calls, strictness);
            }
        }
    }
}

fn check_candidate(
    mode: &str,
    c: &Candidate,
    output: &str,
    reasoning: Option<&str>,
    calls: Option<&[Value]>,
    strictness: Strictness,
) {
    let ctx = || format!("mode {mode} {strictness:?} candidate {c:?} on {output:?}");
    assert!(c.span.start <= c.span.end, "{}", ctx());
    let text = match c.source {
        Source::Output | Source::OutputReasoning => Some(output),
        Source::ReasoningField => {
            Some(reasoning.expect("a reasoning-field candidate needs the field"))
        }
        Source::Native => {
            assert!(c.span.end <= calls.map_or(0, <[Value]>::len), "{}", ctx());
            None
        }
    };
    if let Some(text) = text {
        assert!(c.span.end <= text.len(), "span out of bounds: {}", ctx());
        assert!(
            text.is_char_boundary(c.span.start) && text.is_char_boundary(c.span.end),
            "{}",
            ctx()
        );
        if let Err(f) = &c.arguments {
            assert!(f.offset <= text.len(), "offset out of bounds: {}", ctx());
        }
    } else if let Err(f) = &c.arguments {
        assert!(
            f.offset <= c.raw.len(),
            "native offset out of bounds: {}",
            ctx()
        );
    }
    if strictness == Strictness::Strict {
        assert!(
            c.repairs.is_empty(),
            "strict candidate with repairs: {}",
            ctx()
        );
    }
    assert_eq!(c.mode, mode, "{}", ctx());
}

#[derive(Clone, Debug)]
enum Mutation {
    Truncate(usize),
    Insert(usize, usize),
    Delete(usize, usize),
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(base: &str, muts: &[Mutation]) -> String {
    let mut s = base.to_string();
    for m in muts {
        match *m {
            Mutation::Truncate(i) => {
                let i = floor(&s, i % (s.len() + 1));
                s.truncate(i);
            }
            Mutation::Insert(i, p) => {
                let i = floor(&s, i % (s.len() + 1));
                s.insert_str(i, PIECES[p % PIECES.len()]);
            }
            Mutation::Delete(i, n) => {
                let a = floor(&s, i % (s.len() + 1));
                let b = floor(&s, a + n % 8);
                s.replace_range(a..b.max(a), "");
            }
        }
    }
    s
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>()).prop_map(|(i, p)| Mutation::Insert(i, p)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

fn native_calls() -> impl Strategy<Value = Option<Vec<Value>>> {
    let args = prop_oneof![
        Just(json!("")),
        Just(Value::Null),
        Just(json!("{}")),
        Just(json!({"a": 1})),
        Just(json!("\"{\\\"a\\\": 1}\"")),
        "[ -~]{0,20}".prop_map(Value::String),
    ];
    proptest::option::of(proptest::collection::vec(
        args.prop_map(
            |a| json!({"id": "c", "type": "function", "function": {"name": "f", "arguments": a}}),
        ),
        0..3,
    ))
}

/// 400 cases, or `PROPTEST_CASES` for a longer local run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_piece_soup(pieces in proptest::collection::vec(0..PIECES.len(), 0..40),
                         reasoning in proptest::option::of(proptest::collection::vec(0..PIECES.len(), 0..12)),
                         calls in native_calls()) {
        let all = builtin();
        let out: String = pieces.iter().map(|i| PIECES[*i]).collect();
        let reasoning: Option<String> = reasoning.map(|r| r.iter().map(|i| PIECES[*i]).collect());
        check(&all, &out, reasoning.as_deref(), calls.as_deref());
    }

    #[test]
    fn mutated_real_shapes(shape in 0..SHAPES.len(), prefix in "[ -~\n]{0,8}",
                           muts in proptest::collection::vec(mutation(), 0..5)) {
        let all = builtin();
        let out = format!("{prefix}{}", mutate(SHAPES[shape], &muts));
        check(&all, &out, None, None);
        check(&all, "", Some(&out), None);
    }

    #[test]
    fn arbitrary_unicode(out in "\\PC{0,64}") {
        let all = builtin();
        check(&all, &out, None, None);
    }
}
