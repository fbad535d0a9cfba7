//! Peer conformance: what other parsers' test suites assert, replayed through
//! toolgate's full pipeline (extraction, labels, schema).
//!
//! Reads `../shared/corpora/peers/*.jsonl` (never copied into this
//! repository; the test skips when the folder is absent). For every record
//! whose `x_peer.mode` names a toolgate mode:
//! - `outcome: calls` agrees when that mode labels it `pass` (strict, or in
//!   the lenient replay — counted apart) with the expected call names;
//! - `outcome: none` agrees when that mode yields no executable call (no live
//!   candidate that parsed, is allowlisted and passes its schema).
//!
//! The peer tests assert extraction, not schemas: when a record's tools were
//! synthesized by the corpus converter (`x_peer.tools_from_test` not true),
//! their schemas list only the asserted keys, so they are opened here
//! (`additionalProperties: true`), and a record with no tools at all gets an
//! allowlist of the expected call names. Tools a peer test wrote itself are
//! used as written, except that an expected call name missing from them is
//! added as a free-form tool: the peers do not enforce an allowlist, so
//! toolgate's `wrong_tool` there is policy, not parsing (the bundled corpus
//! pins `wrong_tool` instead). A synthesized property schema `{}` is typed
//! from the peer's expected value (the converter dropped the tool's types;
//! XML-like modes type values by the schema, SPEC §9). A record whose calls
//! the peer holds as cut off (`arguments: null`, `args_asserted: raw`: a
//! streaming parser's partial call) agrees when the mode labels it
//! `truncation`. Where the peer asserts neither the names nor
//! the count of calls, agreement is: every live candidate parsed and the
//! label is `pass` or `wrong_tool`.
//!
//! For records with no SPEC mode (`x_peer.mode: null`) and `outcome: calls`,
//! some mode must label the output `pass` with the expected names.
//!
//! Every disagreement must carry a reason in `tests/conformance_reasons.toml`
//! (our bug, their bug, or a deliberate difference from SPEC).
//! `TOOLGATE_WRITE_CONFORMANCE=1 cargo test --test conformance`
//! rewrites CONFORMANCE.md from this run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use toolgate_core::{Label, Transcript};
use toolgate_validator::{Engine, ModeResult, Profile, Toolset};

#[derive(Default)]
struct Tally {
    n: usize,
    strict: usize,
    lenient_only: usize,
    disagree: Vec<(String, String)>,
}

#[derive(serde::Deserialize)]
struct Reasons {
    #[serde(default)]
    case: Vec<Reason>,
}

#[derive(serde::Deserialize)]
struct Reason {
    id: String,
    kind: String,
    reason: String,
}

fn names(v: &Value) -> Option<Vec<String>> {
    let mut out: Vec<String> = v
        .get("calls")?
        .as_array()?
        .iter()
        .map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
        .collect::<Option<_>>()?;
    out.sort();
    Some(out)
}

fn call_names(m: &ModeResult) -> Vec<String> {
    let mut out: Vec<String> = m.calls.iter().map(|c| c.name.clone()).collect();
    out.sort();
    out
}

fn passes(m: &ModeResult, want: &Option<Vec<String>>) -> bool {
    m.label == Label::Pass && want.as_ref().is_none_or(|w| *w == call_names(m))
}

fn executable(m: &ModeResult, toolset: &Toolset) -> bool {
    m.candidates.iter().any(|c| {
        c.is_live()
            && c.repairs.is_empty()
            && c.call()
                .is_some_and(|call| toolset.is_allowed(&call.name) && toolset.check(&call).is_ok())
    })
}

/// See the module docs: synthesized schemas are opened, expected names are
/// allowlisted.
fn adapt_tools(t: &mut Transcript, peer: &Value) {
    let synthesized = peer.get("tools_from_test").and_then(Value::as_bool) != Some(true);
    if synthesized {
        let calls = peer
            .get("calls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for tool in std::sync::Arc::make_mut(&mut t.tools).iter_mut() {
            if let Some(Value::Object(params)) = &mut tool.parameters {
                params.insert("additionalProperties".into(), Value::Bool(true));
                let expected_args = calls
                    .iter()
                    .filter(|c| c.get("name").and_then(Value::as_str) == Some(tool.name.as_str()))
                    .filter_map(|c| c.get("arguments").and_then(Value::as_object));
                let mut typed = serde_json::Map::new();
                for args in expected_args {
                    for (k, v) in args {
                        typed.insert(k.clone(), serde_json::json!({"type": json_type(v)}));
                    }
                }
                if let Some(Value::Object(props)) = params.get_mut("properties") {
                    for (k, schema) in props.iter_mut() {
                        if schema.as_object().is_some_and(|o| o.is_empty())
                            && let Some(ty) = typed.get(k)
                        {
                            *schema = ty.clone();
                        }
                    }
                }
            }
        }
    }
    let expected = peer
        .get("calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for name in expected.filter_map(|c| c.get("name").and_then(Value::as_str)) {
        if t.tool(name).is_none() {
            std::sync::Arc::make_mut(&mut t.tools).push(toolgate_core::ToolDef {
                name: name.to_string(),
                description: None,
                parameters: Some(
                    serde_json::json!({"type": "object", "additionalProperties": true}),
                ),
            });
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether the peer holds every expected call as cut off mid-stream.
fn peer_partial(peer: &Value) -> bool {
    let calls = peer.get("calls").and_then(Value::as_array);
    calls.is_some_and(|c| {
        !c.is_empty()
            && c.iter().all(|c| {
                c.get("arguments").is_some_and(Value::is_null)
                    && c.get("args_asserted").and_then(Value::as_str) == Some("raw")
            })
    })
}

/// What the peer asserts about the calls: their names (sorted) when every
/// name and the count are asserted.
fn asserted_names(peer: &Value) -> Option<Vec<String>> {
    if peer.get("count_asserted").and_then(Value::as_bool) == Some(false) {
        return None;
    }
    names(peer).filter(|n| !n.is_empty())
}

/// Agreement with an `outcome: calls` record in one mode.
fn agrees(m: &ModeResult, want: &Option<Vec<String>>) -> bool {
    match want {
        Some(_) => passes(m, want),
        None => {
            let live: Vec<_> = m.candidates.iter().filter(|c| c.is_live()).collect();
            !live.is_empty()
                && live.iter().all(|c| c.call().is_some())
                && matches!(m.label, Label::Pass | Label::WrongTool)
        }
    }
}

/// Issue 27 item 6: peer families the corpus files under a SPEC mode
/// (`x_peer.mode` set) that now have a family mode of their own or a model
/// mapping to another mode: (peer parser, the mode that reads the family).
/// Their records are also replayed through that mode, which must agree at
/// least as often as the SPEC mode the corpus names.
const FAMILY_MODES: &[(&str, &str)] = &[("xlam", "xlam"), ("ernie45_moe", "hermes")];

/// Whether `m` agrees with the record (`outcome` `calls` or `none`).
fn agrees_with(
    m: &ModeResult,
    outcome: &str,
    want: &Option<Vec<String>>,
    toolset: &Toolset,
) -> bool {
    match outcome {
        "calls" => agrees(m, want),
        _ => !executable(m, toolset),
    }
}

/// The heading of CONFORMANCE.md's hand-written part, kept on rewrite.
const OUTSIDE: &str = "## Outside suites";

#[test]
fn peers_agree() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/peers");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    let reasons: Reasons = toml::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance_reasons.toml"),
        )
        .unwrap(),
    )
    .unwrap();
    let reasons: HashMap<&str, &Reason> = reasons.case.iter().map(|r| (r.id.as_str(), r)).collect();

    let engine = Engine::new(Profile::default());
    let known: Vec<String> = engine
        .extractors
        .iter()
        .map(|e| e.name().to_string())
        .collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();

    let mut per_mode: BTreeMap<String, Tally> = BTreeMap::new();
    let mut null_mode: BTreeMap<String, Tally> = BTreeMap::new();
    let mut missing_modes: BTreeMap<String, usize> = BTreeMap::new();
    // (parser, family mode, corpus mode) -> (records, family agrees, corpus mode agrees)
    let mut family: BTreeMap<(String, String, String), (usize, usize, usize)> = BTreeMap::new();
    let mut read = 0;
    for file in &files {
        for loaded in toolgate_core::load::load_file(file) {
            let mut t: Transcript =
                loaded.unwrap_or_else(|e| panic!("peer record unreadable: {e}"));
            read += 1;
            let peer = t.raw.get("x_peer").cloned().unwrap_or(Value::Null);
            adapt_tools(&mut t, &peer);
            let outcome = peer.get("outcome").and_then(Value::as_str).unwrap_or("");
            let want = asserted_names(&peer);
            let mode = peer.get("mode").and_then(Value::as_str);
            let replay = engine.replay(&t);
            let parser = peer.get("parser").and_then(Value::as_str).unwrap_or("?");
            if let (Some((_, own)), Some(spec)) =
                (FAMILY_MODES.iter().find(|(p, _)| *p == parser), mode)
                && (outcome == "calls" || outcome == "none")
            {
                let toolset = Toolset::new(&t.tools);
                let ok = |m: &str| {
                    let (s, l) = (
                        replay.strict_mode(m).unwrap(),
                        replay.lenient_mode(m).unwrap(),
                    );
                    agrees_with(s, outcome, &want, &toolset)
                        || agrees_with(l, outcome, &want, &toolset)
                };
                let e = family
                    .entry((parser.to_string(), own.to_string(), spec.to_string()))
                    .or_default();
                e.0 += 1;
                e.1 += usize::from(ok(own));
                e.2 += usize::from(ok(spec));
            }
            match mode {
                Some(mode) if outcome == "calls" || outcome == "none" => {
                    if !known.iter().any(|k| k == mode) {
                        *missing_modes.entry(mode.to_string()).or_default() += 1;
                        continue;
                    }
                    let strict = replay.strict_mode(mode).unwrap();
                    let lenient = replay.lenient_mode(mode).unwrap();
                    let tally = per_mode.entry(mode.to_string()).or_default();
                    tally.n += 1;
                    let toolset = Toolset::new(&t.tools);
                    if outcome == "calls" && peer_partial(&peer) {
                        if strict.label == Label::Truncation {
                            tally.strict += 1;
                        } else {
                            tally.disagree.push((
                                t.id.clone(),
                                format!(
                                    "the peer holds the call as cut off; strict `{}` ({})",
                                    strict.label, strict.reason
                                ),
                            ));
                        }
                    } else if outcome == "calls" {
                        if agrees(strict, &want) {
                            tally.strict += 1;
                        } else if agrees(lenient, &want) {
                            tally.lenient_only += 1;
                        } else {
                            tally.disagree.push((
                                t.id.clone(),
                                format!(
                                    "expected calls {want:?}; strict `{}` ({}), lenient `{}`",
                                    strict.label, strict.reason, lenient.label
                                ),
                            ));
                        }
                    } else if !executable(strict, &toolset) {
                        tally.strict += 1;
                    } else {
                        tally.disagree.push((
                            t.id.clone(),
                            format!("expected no call; executable {:?}", call_names(strict)),
                        ));
                    }
                }
                None if outcome == "calls" && peer_partial(&peer) => {
                    let parser = peer
                        .get("parser")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string();
                    let tally = null_mode.entry(parser).or_default();
                    tally.n += 1;
                    if replay.strict.iter().any(|m| m.label == Label::Truncation) {
                        tally.strict += 1;
                    } else {
                        tally.disagree.push((
                            t.id.clone(),
                            "the peer holds the call as cut off; no mode labels it truncation"
                                .into(),
                        ));
                    }
                }
                None if outcome == "calls" => {
                    let parser = peer
                        .get("parser")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string();
                    let tally = null_mode.entry(parser).or_default();
                    tally.n += 1;
                    if replay.strict.iter().any(|m| agrees(m, &want)) {
                        tally.strict += 1;
                    } else if replay.lenient.iter().any(|m| agrees(m, &want)) {
                        tally.lenient_only += 1;
                    } else {
                        let seen: Vec<String> = replay
                            .strict
                            .iter()
                            .filter(|m| m.label != Label::NoCall)
                            .map(|m| format!("{}={}", m.mode, m.label))
                            .collect();
                        tally.disagree.push((
                            t.id.clone(),
                            format!(
                                "expected calls {want:?}; modes with candidates: {}",
                                seen.join(", ")
                            ),
                        ));
                    }
                }
                _ => {}
            }
        }
    }

    let mut report = String::new();
    let pct = |a: usize, n: usize| {
        if n == 0 {
            100.0
        } else {
            100.0 * a as f64 / n as f64
        }
    };
    // Cases whose expectation contradicts SPEC (`deliberate`) or is wrong
    // (`theirs`) are excused from the target; `ours` and unexplained are not.
    let excused = |t: &Tally| {
        t.disagree
            .iter()
            .filter(|(id, _)| reasons.get(id.as_str()).is_some_and(|r| r.kind != "ours"))
            .count()
    };
    writeln!(report, "Peer records read: {read}\n").unwrap();
    writeln!(report, "### SPEC modes\n\n| mode | cases | agree (strict) | agree (lenient only) | deliberate or theirs | raw agreement | agreement where the peer follows SPEC |\n|---|---:|---:|---:|---:|---:|---:|").unwrap();
    let mut failures = Vec::new();
    let mut unexplained = Vec::new();
    let (mut all_n, mut all_a, mut all_x) = (0, 0, 0);
    for (mode, t) in &per_mode {
        let agree = t.strict + t.lenient_only;
        let x = excused(t);
        let raw = pct(agree, t.n);
        let net = pct(agree, t.n - x);
        (all_n, all_a, all_x) = (all_n + t.n, all_a + agree, all_x + x);
        writeln!(
            report,
            "| `{mode}` | {} | {} | {} | {x} | {raw:.1}% | {net:.1}% |",
            t.n, t.strict, t.lenient_only
        )
        .unwrap();
        if net < 95.0 {
            failures.push(format!("mode {mode}: {net:.1}% < 95%"));
        }
    }
    writeln!(
        report,
        "| **all** | {all_n} | | | {all_x} | {:.1}% | {:.1}% |",
        pct(all_a, all_n),
        pct(all_a, all_n - all_x)
    )
    .unwrap();
    let (nn, na, nx) = null_mode.values().fold((0, 0, 0), |(n, a, x), t| {
        (n + t.n, a + t.strict + t.lenient_only, x + excused(t))
    });
    writeln!(report, "\n### Syntaxes the SPEC does not name (`x_peer.mode: null`, outcome `calls`): some mode must agree\n\n| peer parser | cases | agree (strict) | agree (lenient only) | deliberate or theirs |\n|---|---:|---:|---:|---:|").unwrap();
    for (parser, t) in &null_mode {
        writeln!(
            report,
            "| {parser} | {} | {} | {} | {} |",
            t.n,
            t.strict,
            t.lenient_only,
            excused(t)
        )
        .unwrap();
    }
    let null_raw = pct(na, nn);
    let null_net = pct(na, nn - nx);
    writeln!(report, "| **total** | {nn} | {na} agree | | {nx} | raw {null_raw:.1}%, where the peer follows SPEC {null_net:.1}% |").unwrap();
    if null_raw < 90.0 {
        failures.push(format!("null-mode families: {null_raw:.1}% < 90%"));
    }
    if !missing_modes.is_empty() {
        writeln!(
            report,
            "\nModes named by the corpus that toolgate lacks: {missing_modes:?}"
        )
        .unwrap();
        failures.push(format!("modes missing: {missing_modes:?}"));
    }
    writeln!(report, "\n### Peer families with a mode of their own (issue 27)\n\nRecords the corpus files under a SPEC mode, replayed through the mode that now reads their family (strict or lenient agreement).\n\n| peer parser | records | family mode | agree | corpus mode | agree |\n|---|---:|---|---:|---|---:|").unwrap();
    for ((parser, own, spec), (n, a_own, a_spec)) in &family {
        writeln!(
            report,
            "| {parser} | {n} | `{own}` | {a_own} | `{spec}` | {a_spec} |"
        )
        .unwrap();
        if a_own < a_spec {
            failures.push(format!(
                "{parser}: `{own}` agrees on {a_own}, `{spec}` on {a_spec}"
            ));
        }
    }
    writeln!(report, "\n### Every disagreement\n\n| case | mode | what toolgate did | kind | reason |\n|---|---|---|---|---|").unwrap();
    for (mode, t) in per_mode.iter().chain(null_mode.iter()) {
        for (id, what) in &t.disagree {
            let (kind, why) = match reasons.get(id.as_str()) {
                Some(r) => (r.kind.as_str(), r.reason.as_str()),
                None => {
                    unexplained.push(id.clone());
                    ("**unexplained**", "")
                }
            };
            writeln!(
                report,
                "| `{}` | {mode} | {} | {kind} | {} |",
                id.replace('|', "\\|"),
                what.replace('|', "\\|"),
                why.replace('|', "\\|")
            )
            .unwrap();
        }
    }
    println!("{report}");
    if std::env::var_os("TOOLGATE_WRITE_CONFORMANCE").is_some() {
        let head = "# Conformance with other parsers' test suites\n\nGenerated by `TOOLGATE_WRITE_CONFORMANCE=1 cargo test --test conformance -- --nocapture` \
                    from `../shared/corpora/peers/` (see `tests/conformance.rs` for what \"agree\" means). \
                    Reasons live in `tests/conformance_reasons.toml`: `ours` (our bug, not yet fixed), `theirs` (the peer's expectation is wrong), \
                    `deliberate` (toolgate follows SPEC where the peer does not).\n\n";
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("CONFORMANCE.md");
        // The hand-written sections from `## Outside suites` on (cases of
        // projects outside the peer corpus, pinned by
        // `crates/validator/tests/outside_suites.rs`) are kept as they are.
        let kept = std::fs::read_to_string(&path)
            .ok()
            .and_then(|old| old.find(OUTSIDE).map(|at| old[at..].to_string()))
            .unwrap_or_default();
        let sep = if kept.is_empty() { "" } else { "\n" };
        std::fs::write(&path, format!("{head}{report}{sep}{kept}")).unwrap();
    }
    assert!(
        failures.is_empty(),
        "conformance below target: {failures:#?}"
    );
    assert!(
        unexplained.is_empty(),
        "disagreements without a reason in tests/conformance_reasons.toml: {unexplained:#?}"
    );
}
