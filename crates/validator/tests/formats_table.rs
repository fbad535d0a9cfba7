//! The cross-format test table (issue 8): the same semantic cases run through
//! every row of `toolgate_formats::FORMATS` and every format declared
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
//! - a call the model wrote without its opener, beside the example's call
//!   (after it, closed or not, and before it), is `malformed_json`; `STRAY`
//!   lists every row, with the reason where the concept does not apply.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};
use toolgate_core::{Candidate, Label, ToolDef};
use toolgate_formats::{Catalog, Extractor, Input, Strictness, by_name};
use toolgate_formats::{FORMATS, Row, closer_cuts_of};
use toolgate_validator::Toolset;

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
    let mut catalog = Catalog::new();
    catalog.add_formats(&text).unwrap();
    let formats = catalog.into_custom();
    assert!(
        formats.len() >= 4,
        "the example declares one format per engine"
    );
    for e in formats {
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
    toolgate_validator::label(&found, None, tools, length).label
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

/// Call-object texts of modes whose own example is not a call object but
/// that read call objects too (mistral's `[TOOL_CALLS]` list).
const MORE_CALL_OBJECTS: &[(&str, &str)] = &[(
    "mistral",
    r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]"#,
)];

/// SPEC §9 (issue 22): a call object with an unknown key is `malformed` in
/// every mode that reads call objects, from the one reader
/// (`callobj::from_value`); lenient replay reads `args` (`input`, `kwargs`)
/// as the argument key when there is none, with the repair `argument_key`.
/// `{"name": "test", "args": {"x": 1}}` executed `test({})` in the json,
/// llama3 and hermes modes before: arguments were dropped silently.
#[test]
fn every_call_object_row_refuses_unknown_keys() {
    let mut failures = Vec::new();
    let mut check = |row: &str, case: &str, got: Label, want: Label| {
        if got != want {
            failures.push(format!("{row}: {case}: got {got}, want {want}"));
        }
    };
    let mut texts: Vec<(String, Box<dyn Extractor>, String)> = Vec::new();
    for (f, e) in rows() {
        if f.payload == toolgate_formats::PayloadKind::JsonCall {
            let example = e.example().to_string();
            texts.push((f.name.clone(), e, example));
        }
    }
    for (mode, text) in MORE_CALL_OBJECTS {
        texts.push((mode.to_string(), by_name(mode).unwrap(), text.to_string()));
    }
    let mut modes: Vec<&str> = texts.iter().map(|(m, _, _)| m.as_str()).collect();
    modes.sort();
    for must in [
        "json",
        "fence",
        "marker",
        "hermes",
        "mistral",
        "llama3",
        "granite",
        "functools",
        "command_r",
    ] {
        assert!(modes.contains(&must), "{must} is not checked: {modes:?}");
    }
    for (mode, e, example) in &texts {
        let e = e.as_ref();
        let full = extract(e, example, Strictness::Strict, false);
        let tools = toolset_for(&full);
        // A row whose own arguments key is `args` (inkling) is checked with
        // another key only lenient replay reads, `input`.
        let key = ["\"arguments\"", "\"parameters\"", "\"params\"", "\"args\""]
            .into_iter()
            .find(|k| example.contains(k))
            .unwrap_or_else(|| panic!("{mode}: no argument key in {example:?}"));
        let other = if key == "\"args\"" {
            "\"input\""
        } else {
            "\"args\""
        };
        // The arguments under a key only lenient replay reads: strict
        // refuses, lenient repairs.
        let renamed = example.replacen(key, other, 1);
        check(
            mode,
            "Strict `args`",
            label(e, &tools, &renamed, Strictness::Strict, false),
            Label::MalformedJson,
        );
        check(
            mode,
            "Lenient `args`",
            label(e, &tools, &renamed, Strictness::Lenient, false),
            Label::Pass,
        );
        let lenient = extract(e, &renamed, Strictness::Lenient, false);
        let repaired = lenient
            .iter()
            .any(|c| c.repairs.contains(&toolgate_core::Repair::ArgumentKey));
        check(
            mode,
            "Lenient `args` records argument_key (pass: yes)",
            if repaired { Label::Pass } else { Label::NoCall },
            Label::Pass,
        );
        // Any other key beside the arguments: malformed, strict and lenient.
        let extra = example.replacen(key, &format!("\"argumentz\": {{\"x\": 1}}, {key}"), 1);
        for s in [Strictness::Strict, Strictness::Lenient] {
            check(
                mode,
                &format!("{s:?} unknown key beside the arguments"),
                label(e, &tools, &extra, s, false),
                Label::MalformedJson,
            );
        }
        // Metadata keys stay allowed.
        let meta = example.replacen(key, &format!("\"id\": \"call_1\", \"index\": 0, {key}"), 1);
        check(
            mode,
            "Strict `id` and `index` beside the arguments",
            label(e, &tools, &meta, Strictness::Strict, false),
            Label::Pass,
        );
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Issue 22: a closer is only a closer outside JSON strings, in every
/// JSON-payload format (`util::closer_outside_strings`): Command R's
/// `<|END_ACTION|>` or `</tool_call>` inside a string argument made the call
/// malformed before.
#[test]
fn a_closer_inside_a_json_string_does_not_end_the_payload() {
    let mut failures = Vec::new();
    for (f, e) in rows() {
        if !f.payload.reads_json_arguments() || f.closers.is_empty() {
            continue;
        }
        let e = e.as_ref();
        let example = e.example().to_string();
        let full = extract(e, &example, Strictness::Strict, false);
        let call = full.iter().find_map(Candidate::call).unwrap();
        let r = arguments_object(&example, &call.arguments).unwrap();
        for closer in &f.closers {
            let value = format!("a {closer} b");
            let args = serde_json::to_string(&json!({ "note": value })).unwrap();
            let text = format!("{}{args}{}", &example[..r.start], &example[r.end..]);
            let tools = Toolset::new(&[ToolDef {
                name: call.name.clone(),
                description: None,
                parameters: Some(json!({"type": "object", "properties": {"note": {}}})),
            }]);
            let found = extract(e, &text, Strictness::Strict, false);
            let got = toolgate_validator::label(&found, None, &tools, false).label;
            let read = found
                .iter()
                .find_map(Candidate::call)
                .map(|c| c.arguments.get("note").cloned());
            if got != Label::Pass || read != Some(Some(json!(value))) {
                failures.push(format!(
                    "{}: {closer} in a string: {got}, read {read:?}",
                    f.name
                ));
            }
            // The same text without its closing markup: the closer in the
            // string does not close the block (SPEC §9: truncation; a
            // declared stop token may be missing).
            let cuts = closer_cuts_of(&text, &f.closers);
            if let Some(&cut) = cuts.first() {
                let stop = f.closers.len() == 1
                    && f.stop_token
                        .as_ref()
                        .is_some_and(|(t, _)| *t == f.closers[0]);
                let want = if stop { Label::Pass } else { Label::Truncation };
                let found = extract(e, &text[..cut], Strictness::Strict, false);
                let got = toolgate_validator::label(&found, None, &tools, false).label;
                if got != want {
                    failures.push(format!(
                        "{}: {closer} in a string, closers cut: {got}, want {want}",
                        f.name
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Issue 22: markup attributes are the tag form of call-object keys. In
/// every row whose call or parameter tags carry a `name="…"` attribute (or
/// Kimi K3's `tool="…"` / `key="…"`), an
/// attribute the format does not define is `malformed` (it was dropped, so
/// `<invoke name="f" city="Paris">` ran `f` without `city`).
#[test]
fn every_name_attribute_row_refuses_unknown_attributes() {
    let mut failures = Vec::new();
    let mut checked = Vec::new();
    for (f, e) in rows() {
        let e = e.as_ref();
        let example = e.example().to_string();
        let full = extract(e, &example, Strictness::Strict, false);
        let tools = toolset_for(&full);
        // The attribute that names the tool or the key: `name="…"`, or Kimi
        // K3's `tool="…"` and `key="…"`.
        let mut named: Vec<(usize, usize)> = ["name=\"", " tool=\"", " key=\""]
            .iter()
            .flat_map(|m| example.match_indices(m).map(|(at, m)| (at, m.len())))
            .collect();
        named.sort_unstable();
        for (k, &(at, len)) in named.iter().enumerate().take(2) {
            let Some(q) = example[at + len..].find('"') else {
                continue;
            };
            let end = at + len + q + 1;
            let text = format!("{} city=\"Paris\"{}", &example[..end], &example[end..]);
            let tag = if k == 0 { "call" } else { "parameter" };
            checked.push(format!("{} {tag}", f.name));
            for s in [Strictness::Strict, Strictness::Lenient] {
                let got = label(e, &tools, &text, s, false);
                if got != Label::MalformedJson {
                    failures.push(format!("{} {tag} tag, {s:?}: {got}", f.name));
                }
            }
        }
    }
    for must in [
        "tag call",
        "minimax_m2 call",
        "minimax_m2 parameter",
        "deepseek_dsml parameter",
        // formats-a (issue 27 item 6)
        "kimi_k3 call",
        "kimi_k3 parameter",
        "minimax_m3 call",
        "deepseek_dsml_plain call",
        "deepseek_dsml_plain parameter",
    ] {
        assert!(
            checked.iter().any(|c| c == must),
            "{must} not checked: {checked:?}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A tool name written twice is ambiguous, as two name keys of a call
/// object are (SPEC §9): in every row whose call or parameter tags carry a
/// `name="…"` attribute (or Kimi K3's `tool="…"` / `key="…"`), the same
/// attribute given a second time with another value is `malformed_json`,
/// and so is a harmony header with two recipients (in the role header and
/// after the channel, or twice after the channel). The first name won, so
/// `<tool name="run" name="get_weather">` ran `run`. The second name is
/// allowlisted too, so that reading either one would pass.
#[test]
fn every_name_attribute_row_refuses_a_name_written_twice() {
    const OTHER: &str = "other_tool";
    let mut failures = Vec::new();
    let mut checked = Vec::new();
    for (f, e) in rows() {
        let e = e.as_ref();
        let example = e.example().to_string();
        let full = extract(e, &example, Strictness::Strict, false);
        let mut defs: Vec<ToolDef> = Vec::new();
        for c in full.iter().filter_map(Candidate::call) {
            let props: Map<String, Value> =
                c.arguments.keys().map(|k| (k.clone(), json!({}))).collect();
            for name in [c.name.as_str(), OTHER] {
                defs.push(ToolDef {
                    name: name.to_string(),
                    description: None,
                    parameters: Some(json!({"type": "object", "properties": props})),
                });
            }
        }
        let tools = Toolset::new(&defs);
        let mut cases: Vec<(String, String)> = Vec::new();
        // The attribute that names the tool or the key, written again right
        // after itself with another value.
        let mut named: Vec<(usize, &str)> = ["name", " tool", " key"]
            .iter()
            .flat_map(|k| {
                let marker = format!("{k}=\"");
                example
                    .match_indices(&marker)
                    .map(|(at, _)| (at, k.trim()))
                    .collect::<Vec<_>>()
            })
            .collect();
        named.sort_unstable();
        for (k, &(at, key)) in named.iter().enumerate().take(2) {
            let len = key.len() + 2 + usize::from(example[at..].starts_with(' '));
            let Some(q) = example[at + len..].find('"') else {
                continue;
            };
            let end = at + len + q + 1;
            let value = if k == 0 { OTHER } else { "town" };
            let text = format!("{} {key}=\"{value}\"{}", &example[..end], &example[end..]);
            let tag = if k == 0 { "call" } else { "parameter" };
            cases.push((format!("{} {tag}", f.name), text));
        }
        // A harmony recipient, written again in the role header or after
        // the channel.
        let to = " to=functions.";
        if let Some(at) = example.find(to) {
            let end = example[at + to.len()..]
                .find(|c: char| c.is_whitespace() || c == '<')
                .map_or(example.len(), |n| at + to.len() + n);
            let header = format!("<|start|>assistant{to}{OTHER}{example}");
            let channel = format!("{}{to}{OTHER}{}", &example[..end], &example[end..]);
            cases.push((format!("{} role header", f.name), header));
            cases.push((format!("{} channel", f.name), channel));
        }
        for (case, text) in cases {
            for s in [Strictness::Strict, Strictness::Lenient] {
                let got = label(e, &tools, &text, s, false);
                if got != Label::MalformedJson {
                    failures.push(format!("{case}, {s:?}: {got}\n  {text}"));
                }
            }
            checked.push(case);
        }
    }
    for must in [
        "tag call",
        "minimax_m2 call",
        "minimax_m2 parameter",
        "minimax_m3 call",
        "deepseek_dsml parameter",
        "deepseek_dsml_plain call",
        "deepseek_dsml_plain parameter",
        "kimi_k3 call",
        "kimi_k3 parameter",
        "harmony role header",
        "harmony channel",
    ] {
        assert!(
            checked.iter().any(|c| c == must),
            "{must} not checked: {checked:?}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A reasoning marker written inside a call's string argument is that
/// argument's text, in every row (`toolgate_formats::extract`): the output
/// of two calls, the first with `<think>`, `[THINK]`, the harmony analysis
/// header, Solar Open 2's `<|think:start|>` or an orphan `</think>` or
/// `<|think:end|>` in the middle of its first string value,
/// has as many live candidates as the same output with plain text there,
/// and the same label unless its label is a failure (a tagged-parameter
/// row reads `<think>` in a value as an element of its own: `malformed`).
/// A `<think>` in the first call's argument made the second call
/// reasoning, so a second call that was not allowed went unjudged and the
/// first executed alone; an orphan `</think>` made the calls before it
/// reasoning.
#[test]
fn a_reasoning_marker_inside_a_call_is_the_call_s_text() {
    // Modes that read a bare payload only after setting reasoning aside
    // (SPEC §9, `json`): an orphan closer (`</think>`, `<|think:end|>`) there makes the text before
    // it reasoning before any candidate exists, so the output has no
    // candidate (`no_call`: nothing executes) where the plain text has two.
    let sets_reasoning_aside = |name: &str, marker: &str| {
        name == "json" && (marker.starts_with("</") || marker == "<|think:end|>")
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for (f, e) in rows() {
        let e = e.as_ref();
        let example = e.example().to_string();
        let full = toolgate_formats::extract(e, &Input::new(&example), Strictness::Strict);
        let Some(call) = full.iter().find_map(Candidate::call) else {
            continue;
        };
        // The first string value of the call, as it stands in the example.
        let Some(at) = call.arguments.values().find_map(|v| {
            let s = v.as_str().filter(|s| s.len() >= 2 && s.is_ascii())?;
            example.find(s).map(|i| i + s.len() / 2)
        }) else {
            continue;
        };
        let tools = toolset_for(&full);
        let judge = |text: &str| {
            let found = toolgate_formats::extract(e, &Input::new(text), Strictness::Strict);
            let live: Vec<_> = found
                .iter()
                .filter(|c| c.is_live())
                .map(|c| (c.name.clone(), c.arguments.is_ok()))
                .collect();
            let label = toolgate_validator::label(&found, None, &tools, false).label;
            (live, label)
        };
        for marker in [
            "<think>",
            "</think>",
            "[THINK]",
            "<|channel|>analysis<|message|>",
            "<|think:start|>",
            "<|think:end|>",
        ] {
            let with = |inner: &str| {
                let first = format!("{}{inner}{}", &example[..at], &example[at..]);
                format!("{first}\n{example}")
            };
            let (plain, marked) = (judge(&with("x")), judge(&with(marker)));
            checked += 1;
            let same =
                plain.0.len() == marked.0.len() && (plain.1 == marked.1 || marked.1 != Label::Pass);
            if !same && !sets_reasoning_aside(&f.name, marker) {
                failures.push(format!(
                    "{}: {marker} in an argument: {marked:?}, plain text: {plain:?}",
                    f.name
                ));
            }
        }
    }
    assert!(checked > 100, "{checked} cases");
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Probe 44: a block that opens with a row's own call markup but is not a
/// well-formed call in that row is a `malformed` candidate, so the whole
/// output is refused. It was skipped as "another family's syntax", and the
/// well-formed call beside it executed alone (`pass`). Each case is the
/// row's good call `get_weather(city)` and a broken `delete_all` in the
/// row's own markup.
#[test]
fn a_broken_call_in_the_row_s_own_markup_is_malformed_not_another_family() {
    const W: &str = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n";
    const Q: &str = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n";
    const K: &str = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>";
    const F: &str = "<function=get_weather>{\"city\": \"Paris\"}</function>";
    const G: &str = "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n";
    const H: &str = "<tool_calls><tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n";
    const L: &str = "<longcat_tool_call>get_weather\n<longcat_arg_key>city</longcat_arg_key>\n<longcat_arg_value>Paris</longcat_arg_value>\n</longcat_tool_call>\n";
    const K2: &str = "<ifm|tool_calls><ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Paris</ifm|arg_value></ifm|tool_call>\n";
    const SO: &str = "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Paris<|tool_arg:end|>\n<|tool_call:end|>\n";
    const S: &str = "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>\n";
    let cases: Vec<(&str, String, String)> = vec![
        // GLM: a value without its key; GLM-4-0414's `NAME\n{json}`.
        ("glm", W.into(), "<tool_call>delete_all\n<arg_value>/</arg_value>\n</tool_call>".into()),
        ("glm", W.into(), "<tool_call>delete_all\n{\"path\": \"/\"}\n</tool_call>".into()),
        // Qwen3-Coder: the function tag spelled with an attribute or a space.
        ("qwen_xml", Q.into(), "<tool_call>\n<function name=\"delete_all\">\n<parameter=path>\n/\n</parameter>\n</function>\n</tool_call>".into()),
        ("qwen_xml", Q.into(), "<tool_call>\n<function delete_all>\n<parameter=path>\n/\n</parameter>\n</function>\n</tool_call>".into()),
        // Invoke rows: an invoke without a name.
        (
            "minimax_m2",
            "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n".into(),
            "<invoke>\n<parameter name=\"path\">/</parameter>\n</invoke>\n</minimax:tool_call>".into(),
        ),
        (
            "deepseek_dsml",
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n".into(),
            "<｜DSML｜invoke>\n<｜DSML｜parameter name=\"path\" string=\"true\">/</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>".into(),
        ),
        // Kimi: a header and arguments without `<|tool_call_begin|>`.
        (
            "kimi",
            format!("{K}<|tool_calls_section_end|>"),
            format!("{K}functions.delete_all:1<|tool_call_argument_begin|>{{\"path\": \"/\"}}<|tool_call_end|><|tool_calls_section_end|>"),
        ),
        // Seed-OSS (the qwen_xml engine, its own wrapper).
        (
            "seed_oss",
            "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>\n".into(),
            "<seed:tool_call>\n<function name=\"delete_all\">\n<parameter=path>/</parameter>\n</function>\n</seed:tool_call>".into(),
        ),
        // Probe 44b. Key/value rows: words that the call's own closer ends.
        ("glm", W.into(), "<tool_call>delete_all path=/</tool_call>".into()),
        ("glm", W.into(), "<tool_call>rm -rf /</tool_call>".into()),
        ("hy_v4", H.into(), "<tool_call>delete_all path=/</tool_call></tool_calls>".into()),
        ("hy_v4", H.into(), "<tool_call>rm -rf /</tool_call></tool_calls>".into()),
        ("longcat_xml", L.into(), "<longcat_tool_call>delete_all path=/</longcat_tool_call>".into()),
        ("longcat_xml", L.into(), "<longcat_tool_call>rm -rf /</longcat_tool_call>".into()),
        ("hyperclovax_seed_think", W.into(), "<tool_call>delete_all path=/</tool_call>".into()),
        ("k2_horizon", K2.into(), "<ifm|tool_call>delete_all path=/</ifm|tool_call></ifm|tool_calls>".into()),
        ("k2_horizon", K2.into(), "<ifm|tool_call>rm -rf /</ifm|tool_call></ifm|tool_calls>".into()),
        ("solar_open2", SO.into(), "<|tool_call:start|>delete_all path=/<|tool_call:end|>".into()),
        ("solar_open2", SO.into(), "<|tool_call:start|>rm -rf /<|tool_call:end|>".into()),
        // A value without its key (the key/value rows' own markup).
        ("k2_horizon", K2.into(), "<ifm|tool_call>delete_all<ifm|arg_value>/</ifm|arg_value></ifm|tool_call></ifm|tool_calls>".into()),
        ("solar_open2", SO.into(), "<|tool_call:start|>delete_all\n<|tool_arg:value|>/<|tool_arg:end|>\n<|tool_call:end|>".into()),
        // Seed-OSS: words in its wrapper.
        ("seed_oss", S.into(), "<seed:tool_call>delete_all path=/</seed:tool_call>".into()),
        // GigaChat: its role header (a special token, though not `<`-led)
        // followed by something that is not a call object.
        ("gigachat", G.into(), "<|message_sep|>\n\nfunction call<|role_sep|>\ndelete_all".into()),
        // Functionary v3.1: no arguments object, or a name it cannot read.
        ("functionary", F.into(), "<function=delete_all></function>".into()),
        ("functionary", F.into(), "<function=delete_all>path=/</function>".into()),
        ("functionary", F.into(), "<function=delete all>{\"path\": \"/\"}</function>".into()),
    ];
    let tools = Toolset::new(&[
        ToolDef {
            name: "get_weather".into(),
            description: None,
            parameters: Some(json!({"type": "object", "properties": {"city": {"type": "string"}}})),
        },
        ToolDef {
            name: "delete_all".into(),
            description: None,
            parameters: Some(json!({"type": "object", "properties": {"path": {"type": "string"}}})),
        },
    ]);
    let mut failures = Vec::new();
    for (row, good, broken) in &cases {
        let e = by_name(row).expect("a built-in row");
        // Kimi's `broken` repeats its good call; the others follow it.
        let both = if *row == "kimi" {
            broken.clone()
        } else {
            format!("{good}{broken}")
        };
        let got = label(e.as_ref(), &tools, &both, Strictness::Strict, false);
        let live = extract(e.as_ref(), &both, Strictness::Strict, false);
        let broken_found = live
            .iter()
            .any(|c| c.call().is_none() && c.failure().is_some());
        if got != Label::MalformedJson || !broken_found {
            failures.push(format!("{row}: {got:?} for {both:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The call object in `text`: the first `{` at which a JSON object with a
/// SPEC §9 name key starts, as a byte range.
fn call_object(text: &str) -> Option<std::ops::Range<usize>> {
    for (i, _) in text.match_indices('{') {
        let mut it = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(m))) = it.next()
            && ["name", "tool", "tool_name"]
                .iter()
                .any(|k| m.contains_key(*k))
        {
            return Some(i..i + it.byte_offset());
        }
    }
    None
}

/// Call lists of modes whose own example holds none, or reads the list
/// another way (llama3's tagged list and `;` objects, sarashina's Python
/// literals): `(mode, text with one call, where the other element goes)`;
/// `{X}` stands for the element.
const MORE_CALL_LISTS: &[(&str, &str)] = &[
    (
        "mistral",
        r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}{X}]"#,
    ),
    (
        "llama3",
        r#"<|python_tag|>[{"name": "get_weather", "parameters": {"city": "Paris"}}{X}]"#,
    ),
    (
        "llama3",
        r#"{"name": "get_weather", "parameters": {"city": "Paris"}}; {X}"#,
    ),
    (
        "sarashina",
        "<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}{X}]",
    ),
    (
        "sarashina",
        "[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}{X}]",
    ),
];

/// Probe 44 (item 1): a call list one of whose elements is not a call
/// object (a string, a number, null, an object without a name key) is
/// `malformed_json` in every mode that reads JSON call lists, from one rule
/// (`json_array::CallList`). The `json`, `fence`, `sarashina` and `llama3`
/// modes dropped the element and executed the rest of the list before;
/// the marked formats already refused it.
#[test]
fn a_call_list_with_an_element_that_is_not_a_call_is_malformed() {
    let mut failures = Vec::new();
    let mut texts: Vec<(String, Box<dyn Extractor>, String)> = Vec::new();
    for (f, e) in rows() {
        if f.payload != toolgate_formats::PayloadKind::JsonCall {
            continue;
        }
        let example = e.example().to_string();
        let r = call_object(&example).unwrap_or_else(|| panic!("{}: no call object", f.name));
        // Inside the example's own list, or the object made a list.
        let in_list = example[..r.start].trim_end().ends_with('[');
        let text = if in_list {
            format!("{}{{X}}{}", &example[..r.end], &example[r.end..])
        } else {
            format!(
                "{}[{}{{X}}]{}",
                &example[..r.start],
                &example[r.clone()],
                &example[r.end..]
            )
        };
        texts.push((f.name.clone(), e, text));
    }
    for (mode, text) in MORE_CALL_LISTS {
        texts.push((mode.to_string(), by_name(mode).unwrap(), text.to_string()));
    }
    let mut modes: Vec<&str> = texts.iter().map(|(m, _, _)| m.as_str()).collect();
    modes.sort();
    for must in [
        "json",
        "fence",
        "hermes",
        "mistral",
        "llama3",
        "granite",
        "functools",
        "xlam",
        "sarashina",
        "command_r",
    ] {
        assert!(modes.contains(&must), "{must} is not checked: {modes:?}");
    }
    for (mode, e, text) in &texts {
        let e = e.as_ref();
        let whole = text.replace("{X}", "");
        let full = extract(e, &whole, Strictness::Strict, false);
        let tools = toolset_for(&full);
        let got = label(e, &tools, &whole, Strictness::Strict, false);
        if got != Label::Pass {
            failures.push(format!("{mode}: the list alone: got {got} in {whole:?}"));
            continue;
        }
        let sep = if text.contains(";") { "" } else { ", " };
        for other in ["\"junk\"", "42", "null", "{}", "{\"arguments\": {}}"] {
            let other = if mode == "sarashina" {
                other.replace('"', "'").replace("null", "None")
            } else {
                other.to_string()
            };
            let bad = text.replace("{X}", &format!("{sep}{other}"));
            for s in [Strictness::Strict, Strictness::Lenient] {
                let got = label(e, &tools, &bad, s, false);
                if got != Label::MalformedJson {
                    failures.push(format!("{mode}: {s:?} {bad:?}: got {got}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Probe 44 (item 2): a call list that no closer bounds ends at its own
/// `]`; a second call list or call object right after it (`[…][…]`,
/// `[…]{…}`, with or without whitespace) is `malformed_json` in every mode
/// that reads such a list (`util::second_object_after`, the rule for a
/// second arguments object). The first list executed and the second was
/// dropped as text before (mistral, granite, xlam, sarashina, functools).
#[test]
fn a_second_call_list_after_a_list_without_a_closer_is_malformed() {
    let mut failures = Vec::new();
    let mut texts: Vec<(String, Box<dyn Extractor>, String)> = Vec::new();
    for (f, e) in rows() {
        if f.payload != toolgate_formats::PayloadKind::JsonCall || !f.closers.is_empty() {
            continue;
        }
        let example = e.example().to_string();
        let r = call_object(&example).unwrap_or_else(|| panic!("{}: no call object", f.name));
        // The example's own list, or the object made a list.
        let text = if example[..r.start].trim_end().ends_with('[') {
            example.clone()
        } else {
            format!(
                "{}[{}]{}",
                &example[..r.start],
                &example[r.clone()],
                &example[r.end..]
            )
        };
        texts.push((f.name.clone(), e, text));
    }
    for (mode, text) in MORE_CALL_LISTS {
        if !text.contains(';') {
            texts.push((
                mode.to_string(),
                by_name(mode).unwrap(),
                text.replace("{X}", ""),
            ));
        }
    }
    let mut modes: Vec<&str> = texts.iter().map(|(m, _, _)| m.as_str()).collect();
    modes.sort();
    for must in [
        "mistral",
        "llama3",
        "granite",
        "functools",
        "xlam",
        "sarashina",
        "marker",
    ] {
        assert!(modes.contains(&must), "{must} is not checked: {modes:?}");
    }
    for (mode, e, text) in &texts {
        let e = e.as_ref();
        let full = extract(e, text, Strictness::Strict, false);
        let tools = toolset_for(&full);
        let got = label(e, &tools, text, Strictness::Strict, false);
        if got != Label::Pass {
            failures.push(format!("{mode}: the list alone: got {got} in {text:?}"));
            continue;
        }
        let r = text.rfind(']').unwrap() + 1;
        let list_start = text.find("[{").unwrap();
        let list = &text[list_start..r];
        let object = &list[1..list.len() - 1];
        // Prose after the list stays content (the `json` mode's whole
        // output is the value: trailing text is malformed there anyway).
        let prose = format!("{text}\nDone.");
        if mode != "json" && label(e, &tools, &prose, Strictness::Strict, false) != Label::Pass {
            failures.push(format!("{mode}: prose after the list: not pass"));
        }
        for second in [list, object] {
            for gap in ["", " ", "\n", ",", ", ", ",\n"] {
                let bad = format!("{}{gap}{second}{}", &text[..r], &text[r..]);
                for s in [Strictness::Strict, Strictness::Lenient] {
                    let got = label(e, &tools, &bad, s, false);
                    if got != Label::MalformedJson {
                        failures.push(format!("{mode}: {s:?} {bad:?}: got {got}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// How the concept "a call the model wrote without its opener" meets a row
/// ([`a_call_without_its_opener_beside_a_call_is_malformed`]).
enum Stray {
    /// The call's own opener and closer as the example writes them (`""`:
    /// the call has no closer): the example's call written again without
    /// the opener is `malformed_json` after the call (closed by the closer,
    /// and with no closer at all) and before it (closed by the closer; with
    /// neither opener nor closer, text before the first call is content).
    Call(&'static str, &'static str),
    /// The concept does not apply to the row, for the reason given.
    No(&'static str),
}

/// No call opener of its own: the call is a bare value.
const BARE: Stray = Stray::No(
    "a call is a bare value with no opener of its own to leave out; a second value after it is `second_object_after`'s (a_second_call_list_after_a_list_without_a_closer_is_malformed)",
);
/// The block holds one call list (or one pythonic list), not calls with
/// their own opener.
const LIST: Stray = Stray::No(
    "the block holds one call list whose elements have no opener of their own; a second list or object after it is `second_object_after`'s",
);
/// A json_block row whose block has no closer.
const NO_CLOSER: Stray = Stray::No(
    "the block has no closer: call objects after the call are the payload's next calls (a sequence), read as calls",
);
/// Key/value rows whose call head is the function name alone, with no
/// markup of its own (`<tool_call>get_weather<arg_key>…`): written after a
/// call without its opener and without its parameters, it is a bare word
/// (`…</tool_call>get_weather`), which prose after a call also is
/// (`…</tool_call>\nDone`). It stays text (`pass`), as in vLLM's and
/// SGLang's GLM parsers, which read a call only between `<tool_call>` and
/// `</tool_call>`; with its key tag, closer or (Hunyuan) `<tool_sep>` it is
/// the row's call markup and `malformed_json` like every other case.
const NAME_ALONE_IS_TEXT: &[&str] = &[
    "glm",
    "longcat_xml",
    "hy_v4",
    "iquest_coder_v2",
    "hyperclovax_seed_think",
    "k2_horizon",
    "solar_open2",
];

/// Every row, and how the concept meets it.
const STRAY: &[(&str, Stray)] = &[
    ("hermes", Stray::Call("<tool_call>", "</tool_call>")),
    ("gemma", Stray::Call("<|tool_call>", "<tool_call|>")),
    (
        "deepseek",
        Stray::Call("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"),
    ),
    (
        "kimi",
        Stray::Call("<|tool_call_begin|>", "<|tool_call_end|>"),
    ),
    ("bracket_args", Stray::Call("[CALL]", "[/CALL]")),
    ("minimax_m2", Stray::Call("<invoke ", "</invoke>")),
    ("atem", Stray::Call("<atem:invoke ", "</atem:invoke>")),
    ("dots", Stray::Call("<invoke ", "</invoke>")),
    (
        "kimi_k3",
        Stray::Call("<|open|>call ", "<|close|>call<|sep|>"),
    ),
    ("deepseek_dsml_plain", Stray::Call("<invoke ", "</invoke>")),
    ("acme_xml", Stray::Call("<call ", "</call>")),
    ("mistral", Stray::Call("[TOOL_CALLS]", "")),
    (
        "deepseek_dsml",
        Stray::Call("<｜DSML｜invoke ", "</｜DSML｜invoke>"),
    ),
    (
        "deepseek_v41",
        Stray::Call("<｜DSML｜ invoke ", "</｜DSML｜ invoke>"),
    ),
    (
        "gigachat35",
        Stray::Call("<｜GCML｜invoke ", "</｜GCML｜invoke>"),
    ),
    (
        "step3",
        Stray::Call("<steptml:invoke ", "</steptml:invoke>"),
    ),
    ("minimax_m3", Stray::Call("<invoke ", "</invoke>")),
    ("minicpm5", Stray::Call("<function ", "</function>")),
    ("json", BARE),
    ("fence", BARE),
    ("bracket", BARE),
    ("llama3", BARE),
    (
        "react",
        Stray::No(
            "text after `Observation:` is the tool's result, not the model's markup; `Action Input:` without `Action:` is the name-then-JSON separator rule, unchanged",
        ),
    ),
    (
        "harmony",
        Stray::No(
            "each call is a whole message with its own header; a message without its start is the next message's text",
        ),
    ),
    ("marker", BARE),
    ("granite", LIST),
    ("hyperclovax_14b", LIST),
    ("granite_fc", NO_CLOSER),
    ("functools", LIST),
    ("xlam", LIST),
    ("sarashina", LIST),
    ("tool_calls_tag", LIST),
    ("nemotron", LIST),
    ("apertus", LIST),
    ("command_r", LIST),
    ("lfm2", LIST),
    ("llama4_pythonic", LIST),
    ("olmo", LIST),
    ("python_tags", LIST),
    ("tag", Stray::Call("<tool ", "</tool>")),
    ("angle_call", Stray::Call("<<call>>", "<</call>>")),
    (
        "internlm",
        Stray::Call("<|action_start|><|plugin|>", "<|action_end|>"),
    ),
    (
        "longcat",
        Stray::Call("<longcat_tool_call>", "</longcat_tool_call>"),
    ),
    ("gigachat", NO_CLOSER),
    (
        "inkling",
        Stray::Call("<|content_invoke_tool_json|>", "<|end_message|>"),
    ),
    ("functionary", Stray::Call("<function=", "</function>")),
    ("glm", Stray::Call("<tool_call>", "</tool_call>")),
    ("hunyuan", Stray::Call("<tool_call>", "</tool_call>")),
    (
        "longcat_xml",
        Stray::Call("<longcat_tool_call>", "</longcat_tool_call>"),
    ),
    ("hy_v4", Stray::Call("<tool_call>", "</tool_call>")),
    (
        "iquest_coder_v2",
        Stray::Call("<iquestcoder_tool_call>", "</iquestcoder_tool_call>"),
    ),
    (
        "hyperclovax_seed_think",
        Stray::Call("<tool_call>", "</tool_call>"),
    ),
    (
        "k2_horizon",
        Stray::Call("<ifm|tool_call>", "</ifm|tool_call>"),
    ),
    (
        "solar_open2",
        Stray::Call("<|tool_call:start|>", "<|tool_call:end|>"),
    ),
    ("qwen_xml", Stray::Call("<function=", "</function>")),
    ("seed_oss", Stray::Call("<function=", "</function>")),
    ("xml_call", Stray::Call("<tool_call ", "</tool_call>")),
];

/// A call the model wrote in the row's own markup without its opener
/// (p4-formats, f3-formats, s46): after a call, closed by the call's closer
/// or with no closer at all, and before the first call, closed by the
/// closer. The call beside it executed alone and the stray one was dropped
/// as text (`pass`, execute); each is `malformed_json`, rejected at the
/// parse gate, in replay as in the labeler. One expected label per row
/// (`STRAY`); rows where the concept does not apply say why.
#[test]
fn a_call_without_its_opener_beside_a_call_is_malformed() {
    use toolgate_core::{Decision, Gate};
    use toolgate_validator::{Engine, Profile};
    let mut failures = Vec::new();
    let rows = rows();
    for (f, _) in &rows {
        if !STRAY.iter().any(|(n, _)| *n == f.name) {
            failures.push(format!("{}: not in STRAY", f.name));
        }
    }
    for (name, stray) in STRAY {
        if !rows.iter().any(|(f, _)| f.name == *name) {
            failures.push(format!("{name}: in STRAY but no row"));
        }
        if let Stray::No(why) = stray
            && why.is_empty()
        {
            failures.push(format!("{name}: says not why the concept does not apply"));
        }
    }
    for (f, e) in rows {
        let Some(Stray::Call(open, close)) = STRAY.iter().find(|(n, _)| *n == f.name).map(|r| &r.1)
        else {
            continue;
        };
        let example = e.example().to_string();
        let o = example
            .find(open)
            .unwrap_or_else(|| panic!("{}: no {open}", f.name));
        let end = if close.is_empty() {
            example.len()
        } else {
            o + example[o..]
                .find(close)
                .unwrap_or_else(|| panic!("{}: no {close}", f.name))
                + close.len()
        };
        let stray = &example[o + open.len()..end];
        let bare = &stray[..stray.len() - close.len()];
        let malformed = Label::MalformedJson;
        let mut cases = vec![(
            "after the call, no closer",
            format!("{}{bare}{}", &example[..end], &example[end..]),
            malformed,
        )];
        // Tagged rows: the call's head alone, without its parameters (they
        // are a broken call on their own, the parameter rule).
        if let Some((param, _)) = &f.parameter
            && let Some(head) = param.split("KEY").next()
            && let Some(p) = bare.find(head)
        {
            let name_alone = NAME_ALONE_IS_TEXT.contains(&f.name.as_str());
            cases.push((
                "after the call, no closer, no parameters",
                format!("{}{}{}", &example[..end], &bare[..p], &example[end..]),
                if name_alone { Label::Pass } else { malformed },
            ));
        }
        if !close.is_empty() {
            cases.push((
                "after the call, closed",
                format!("{}{stray}{}", &example[..end], &example[end..]),
                malformed,
            ));
            cases.push((
                "before the first call, closed",
                format!("{}{stray}{}", &example[..o], &example[o..]),
                malformed,
            ));
        }
        for (case, out, want) in &cases {
            let got = label(
                e.as_ref(),
                &Toolset::unknown(),
                out,
                Strictness::Strict,
                false,
            );
            if got != *want {
                failures.push(format!("{}: {case}: label {got} for {out:?}", f.name));
            }
        }
        let engine = Engine::with_extractors(vec![e], Profile::for_mode(&f.name)).unwrap();
        for (case, out, want) in &cases {
            let text = json!({"output": out}).to_string();
            let t =
                toolgate_core::load::parse_transcript(&text, "t.json".as_ref(), None, "t").unwrap();
            let r = engine.replay(&t);
            let rejected = matches!(
                r.profile.decision,
                Decision::Reject {
                    gate: Gate::Parse,
                    ..
                }
            );
            if rejected != (*want == malformed) || r.profile.label != *want {
                failures.push(format!(
                    "{}: {case}: profile {} {:?}",
                    f.name, r.profile.label, r.profile.decision
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
