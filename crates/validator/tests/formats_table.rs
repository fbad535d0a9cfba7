//! The cross-format test table (issue 8): the same semantic cases run through
//! every row of `toolgate_formats::table::FORMATS` and every format declared
//! in `examples/formats.toml` (issue 8 item 4: declared rows obey the same
//! rules), each with one expected label, instead of per-module copies of the
//! rules.
//!
//! Cases, built from each row's own example:
//! - the example itself is `pass` (strict and lenient);
//! - the example with its closing markup cut off (each closer in turn, from
//!   the innermost: the call's closer, then the section's) is `truncation`,
//!   except a row's declared stop token (SPEC §9), which may be missing;
//! - the same cuts under `finish_reason: "length"` are `truncation` in every
//!   row, stop tokens included;
//! - double-encoded arguments (`"{\"city\": …}"` where the arguments object
//!   stood) are `escaping_error` in every row whose payload reads a JSON
//!   arguments object; the lenient replay repairs them (`pass`);
//! - in tagged-parameter rows, a value whose closer is missing so that it
//!   runs into the next parameter's markup is `malformed_json`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};
use toolgate_core::{Candidate, Label, ToolDef};
use toolgate_formats::table::{FORMATS, Row, closer_cuts_of};
use toolgate_formats::{Extractor, Input, Strictness, by_name, declared};
use toolgate_validator::{Toolset, labeler};

/// Rows whose example is not model output (the mode reads the transcript's
/// own `tool_calls`); its rules are pinned in `modes::native`'s tests.
const NOT_OUTPUT: &[&str] = &["native"];

/// Every row with its extractor: the built-in rows, then the declared
/// formats of `examples/formats.toml`.
fn rows() -> Vec<(Row, Box<dyn Extractor>)> {
    let mut all: Vec<(Row, Box<dyn Extractor>)> = FORMATS
        .iter()
        .filter(|f| !NOT_OUTPUT.contains(&f.name))
        .map(|f| {
            (
                f.to_row(),
                by_name(f.name).expect("every row has an extractor"),
            )
        })
        .collect();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/formats.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let formats = declared::load_formats(&text).unwrap();
    assert!(
        formats.len() >= 3,
        "the example declares one format per engine"
    );
    for e in declared::extractors(formats) {
        all.push((e.row().expect("a declared format has a row"), e));
    }
    all
}

fn extract(e: &dyn Extractor, text: &str, strictness: Strictness, length: bool) -> Vec<Candidate> {
    let mut input = Input::new(text);
    input.hit_length_limit = length;
    e.extract(&input, strictness)
}

/// A toolset allowing the example's calls with their argument keys.
fn toolset_for(calls: &[Candidate]) -> Toolset {
    let mut defs: Vec<ToolDef> = Vec::new();
    for c in calls.iter().filter_map(Candidate::call) {
        let props: Map<String, Value> =
            c.arguments.keys().map(|k| (k.clone(), json!({}))).collect();
        defs.push(ToolDef {
            name: c.name.clone(),
            description: None,
            parameters: Some(json!({"type": "object", "properties": props})),
        });
    }
    Toolset::new(&defs)
}

fn label(
    e: &dyn Extractor,
    tools: &Toolset,
    text: &str,
    strictness: Strictness,
    length: bool,
) -> Label {
    let found = extract(e, text, strictness, length);
    labeler::label(&found, None, tools, length).label
}

/// The text of the example's first arguments object, as a byte range: the
/// first `{` at which a JSON object equal to the parsed call's arguments
/// starts.
fn arguments_object(example: &str, args: &Map<String, Value>) -> Option<std::ops::Range<usize>> {
    for (i, _) in example.match_indices('{') {
        let mut it = serde_json::Deserializer::from_str(&example[i..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(m))) = it.next()
            && &m == args
        {
            return Some(i..i + it.byte_offset());
        }
    }
    None
}

#[test]
fn every_row_agrees_on_missing_closers_length_and_double_encoding() {
    let mut failures = Vec::new();
    let mut check = |row: &str, case: &str, got: Label, want: Label| {
        if got != want {
            failures.push(format!("{row}: {case}: got {got}, want {want}"));
        }
    };
    let rows = rows();
    for (f, e) in &rows {
        let e = e.as_ref();
        let example = e.example().to_string();
        let full = extract(e, &example, Strictness::Strict, false);
        let tools = toolset_for(&full);
        for s in [Strictness::Strict, Strictness::Lenient] {
            check(
                &f.name,
                &format!("{s:?} example"),
                label(e, &tools, &example, s, false),
                Label::Pass,
            );
        }
        let cuts = closer_cuts_of(&example, &f.closers);
        assert_eq!(
            cuts.len(),
            f.closers.len(),
            "{}: closers do not end the example",
            f.name
        );
        for (k, &cut) in cuts.iter().enumerate() {
            let text = &example[..cut];
            let stop = f
                .stop_token
                .as_ref()
                .is_some_and(|(t, _)| k + 1 == f.closers.len() && *t == f.closers[k]);
            for s in [Strictness::Strict, Strictness::Lenient] {
                let want = if stop { Label::Pass } else { Label::Truncation };
                let case = format!("{s:?} without {}", f.closers[k..].join(""));
                check(&f.name, &case, label(e, &tools, text, s, false), want);
                let case = format!(
                    "{s:?} without {} + finish_reason length",
                    f.closers[k..].join("")
                );
                check(
                    &f.name,
                    &case,
                    label(e, &tools, text, s, true),
                    Label::Truncation,
                );
            }
        }
        if let Some((open, close)) = &f.parameter {
            // The first value loses its closer and runs into a second parameter.
            let first = full.iter().find_map(Candidate::call).unwrap();
            let key = first.arguments.keys().next().unwrap();
            let second = format!(
                "{}3{}",
                open.replace("KEY", "days"),
                close.replace("KEY", "days")
            );
            let text = example.replacen(&close.replace("KEY", key), &second, 1);
            assert_ne!(
                text, example,
                "{}: parameter closer not in the example",
                f.name
            );
            for s in [Strictness::Strict, Strictness::Lenient] {
                let case = format!("{s:?} value swallowing the next parameter");
                check(
                    &f.name,
                    &case,
                    label(e, &tools, &text, s, false),
                    Label::MalformedJson,
                );
            }
        }
        if f.payload.reads_json_arguments() {
            let args = full.iter().find_map(Candidate::call).unwrap().arguments;
            let Some(r) = arguments_object(&example, &args) else {
                panic!("{}: no JSON arguments object in the example", f.name);
            };
            let encoded = serde_json::to_string(&example[r.clone()]).unwrap();
            let text = format!("{}{encoded}{}", &example[..r.start], &example[r.end..]);
            check(
                &f.name,
                "Strict double-encoded arguments",
                label(e, &tools, &text, Strictness::Strict, false),
                Label::EscapingError,
            );
            check(
                &f.name,
                "Lenient double-encoded arguments",
                label(e, &tools, &text, Strictness::Lenient, false),
                Label::Pass,
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Issue 22, SPEC §4 "tools unknown", in every row: a transcript without
/// `tools` whose output is the row's example is judged without the tool
/// definitions — `pass`, not `wrong_tool` — carries the finding
/// `tools_unknown`, and is rejected at `allowlist` with the row as the
/// primary mode; `tools: []` stays an empty allowlist (`wrong_tool`).
#[test]
fn every_row_judges_its_example_with_tools_unknown_and_fails_closed() {
    use toolgate_core::Gate;
    use toolgate_validator::{Engine, FindingKind, Profile};
    let mut failures = Vec::new();
    for (f, e) in rows() {
        let example = e.example().to_string();
        for s in [Strictness::Strict, Strictness::Lenient] {
            let got = label(e.as_ref(), &Toolset::unknown(), &example, s, false);
            if got != Label::Pass {
                failures.push(format!("{}: {s:?} tools unknown: got {got}", f.name));
            }
            let got = label(e.as_ref(), &Toolset::new(&[]), &example, s, false);
            if got != Label::WrongTool {
                failures.push(format!("{}: {s:?} tools []: got {got}", f.name));
            }
        }
        let name = f.name.clone();
        let engine = Engine::with_extractors(vec![e], Profile::for_mode(&name)).unwrap();
        let text = json!({"output": example}).to_string();
        let t = toolgate_core::load::parse_transcript(&text, "t.json".as_ref(), None, "t").unwrap();
        let r = engine.replay(&t);
        if r.profile.decision.gate() != Some(Gate::Allowlist) || r.profile.label != Label::Pass {
            failures.push(format!(
                "{name}: profile {} {:?}",
                r.profile.label, r.profile.decision
            ));
        }
        if !r
            .findings
            .iter()
            .any(|x| x.kind == FindingKind::ToolsUnknown)
        {
            failures.push(format!("{name}: no tools_unknown finding"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
