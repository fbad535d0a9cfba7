//! `toolgate matrix` over runs: `--compare`, pass^k and the stable / flaky /
//! failing split, `--by tag`, `--fail-under`, CSV, HTML and the routing
//! metadata of the JSON form, on run directories shaped like `toolgate run`
//! output (one transcript per model, task and sample).
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"], "additionalProperties": false}}}])
}

/// Writes one run: for each (model, task, tags, outcomes), one transcript per
/// sample; an outcome is `p` (a correct hermes call), `t` ("42" for a
/// string: type_coercion… here a number for the city) or `n` (prose).
fn write_run(dir: &Path, cells: &[(&str, &str, &[&str], &str)]) {
    for (model, task, tags, outcomes) in cells {
        let d = dir.join(model);
        std::fs::create_dir_all(&d).unwrap();
        for (i, o) in outcomes.chars().enumerate() {
            let output = match o {
                'p' => {
                    r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Gent"}}</tool_call>"#
                }
                't' => {
                    r#"<tool_call>{"name": "get_weather", "arguments": {"city": 42}}</tool_call>"#
                }
                _ => "It is sunny, probably.",
            };
            let t = json!({"model": model, "task": task, "sample": i + 1, "tags": tags,
                           "tools": tools(), "expect": {"calls": [{"name": "get_weather"}]},
                           "output": output});
            std::fs::write(d.join(format!("{task}.{}.json", i + 1)), t.to_string()).unwrap();
        }
    }
}

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // base: m1 solid on `a`, m1 fine on `b`, m2 mixed.
    write_run(
        &dir.path().join("base"),
        &[
            ("m1", "a", &["weather", "single"], "pppppppppp"),
            ("m1", "b", &["weather"], "ppp"),
            ("m2", "a", &["weather", "single"], "pnp"),
            ("m2", "gone", &[], "ppp"),
        ],
    );
    // new: m1 collapsed on `a`, unchanged on `b`, m2 slightly worse, a new task.
    write_run(
        &dir.path().join("new"),
        &[
            ("m1", "a", &["weather", "single"], "nnnnnnnnnt"),
            ("m1", "b", &["weather"], "ppp"),
            ("m2", "a", &["weather", "single"], "pnn"),
            ("m2", "fresh", &[], "ppp"),
        ],
    );
    dir
}

const HERMES: [&str; 2] = ["--profile", "hermes"];

#[test]
fn compare_flags_only_changes_the_interval_can_tell_from_noise() {
    let dir = setup();
    let mut args = vec!["matrix", "new", "--compare", "base", "--format", "json"];
    args.extend(HERMES);
    let o = toolgate(dir.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["schema_version"], 1);
    let rows = doc["compare"].as_array().unwrap();
    let row = |m: &str, t: &str| {
        rows.iter()
            .find(|r| r["keys"] == json!({"model": m, "task": t}))
            .unwrap()
            .clone()
    };
    // 10/10 → 0/10: Newcombe [-1, -0.6076] (√2 · 0.2775 from -1): regressed.
    let a = row("m1", "a");
    assert_eq!(a["change"], -1.0);
    assert_eq!(a["flag"], "regressed");
    assert!(a["ci_high"].as_f64().unwrap() < 0.0);
    // 3/3 → 3/3: no change.
    assert_eq!(row("m1", "b")["flag"], Value::Null);
    assert_eq!(row("m1", "b")["change"], 0.0);
    // 2/3 → 1/3 is within noise at k = 3: not flagged.
    let m2 = row("m2", "a");
    assert_eq!(m2["change"], -0.3333);
    assert_eq!(m2["flag"], Value::Null);
    assert!(m2["ci_low"].as_f64().unwrap() < 0.0 && m2["ci_high"].as_f64().unwrap() > 0.0);
    assert_eq!(row("m2", "gone")["flag"], "gone");
    assert_eq!(row("m2", "fresh")["flag"], "new");
    assert_eq!(row("m2", "fresh")["change"], Value::Null);

    // The table says the same, and --fail-on-regression makes it exit 1.
    let mut args = vec!["matrix", "new", "--compare", "base", "--fail-on-regression"];
    args.extend(HERMES);
    let o = toolgate(dir.path(), &args);
    assert_eq!(o.status.code(), Some(1));
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("m1") && l.contains(" a "))
        .unwrap()
        .to_string();
    assert_eq!(
        line.split_whitespace().collect::<Vec<_>>(),
        [
            "m1",
            "a",
            "10/10",
            "1.00",
            "0/10",
            "0.00",
            "-1.00",
            "[-1.00,",
            "-0.61]",
            "regressed"
        ]
    );
    assert!(
        stderr(&o).contains("regressed: m1 / a 1.00 → 0.00"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn pass_k_split_routing_and_by_tag() {
    let dir = setup();
    let mut args = vec!["matrix", "new", "--by", "model", "--format", "json"];
    args.extend(HERMES);
    let o = toolgate(dir.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cells = doc["cells"].as_array().unwrap();
    let m2 = cells.iter().find(|c| c["keys"]["model"] == "m2").unwrap();
    // m2: `a` 1/3 (flaky), `fresh` 3/3 (stable); k = 3; pass^3 = (0 + 1) / 2.
    assert_eq!(
        m2["samples"],
        json!({"stable": 1, "flaky": 1, "failing": 0})
    );
    assert_eq!(m2["pass_k"], json!({"k": 3, "rate": 0.5}));
    assert_eq!(m2["dominant_failure"], "no_call");
    assert_eq!(m2["retry_advice"], "fallback");
    let m1 = cells.iter().find(|c| c["keys"]["model"] == "m1").unwrap();
    assert_eq!(
        m1["samples"],
        json!({"stable": 1, "flaky": 0, "failing": 1})
    );
    // Routing metadata: per model and tag (`*` = every task).
    let routing = doc["routing"].as_array().unwrap();
    let r = |m: &str, tag: &str| {
        routing
            .iter()
            .find(|r| r["model"] == m && r["tag"] == tag)
            .unwrap()
            .clone()
    };
    let single = r("m1", "single");
    assert_eq!(
        (single["n"].clone(), single["passes"].clone()),
        (json!(10), json!(0))
    );
    assert_eq!(single["dominant_failure"], "no_call");
    assert_eq!(single["retry_advice"], "fallback");
    assert_eq!(r("m1", "weather")["n"], 13);
    assert_eq!(r("m1", "*")["n"], 13);
    assert_eq!(r("m2", "-")["n"], 3);
    assert_eq!(r("m2", "-")["dominant_failure"], Value::Null);
    assert_eq!(r("m2", "-")["retry_advice"], Value::Null);
    assert!(r("m1", "single")["ci_high"].as_f64().unwrap() < 0.31);

    // --by tag: a transcript counts in each of its tags.
    let mut args = vec!["matrix", "new", "--by", "tag", "--format", "json"];
    args.extend(HERMES);
    let doc: Value = serde_json::from_str(&stdout(&toolgate(dir.path(), &args))).unwrap();
    let tags: Vec<(String, u64)> = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["keys"]["tag"].as_str().unwrap().to_string(),
                c["n"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tags,
        [
            ("-".to_string(), 3),
            ("single".into(), 13),
            ("weather".into(), 16)
        ]
    );
}

#[test]
fn fail_under_is_a_ci_gate() {
    let dir = setup();
    let mut args = vec!["matrix", "new", "--by", "model", "--fail-under", "0.5"];
    args.extend(HERMES);
    let o = toolgate(dir.path(), &args);
    // m1: 3 of 13 < 0.5; m2: 4 of 6 ≥ 0.5.
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("below --fail-under 0.5: m1 rate 0.23 (3 of 13)"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("m2"), "{}", stderr(&o));
    let mut args = vec!["matrix", "new", "--by", "model", "--fail-under", "0.2"];
    args.extend(HERMES);
    assert_eq!(toolgate(dir.path(), &args).status.code(), Some(0));
    let mut args = vec!["matrix", "new", "--fail-under", "1.5"];
    args.extend(HERMES);
    assert_eq!(toolgate(dir.path(), &args).status.code(), Some(2));
}

#[test]
fn csv_and_html_carry_every_cell_and_escape_untrusted_names() {
    let dir = tempfile::tempdir().unwrap();
    write_run(
        &dir.path().join("run"),
        &[
            (
                "<script>alert(1)</script>",
                "=HYPERLINK(\"x\")",
                &["a,b"],
                "ppn",
            ),
            ("m", "t", &[], "ttt"),
        ],
    );
    let mut args = vec!["matrix", "run", "--format", "csv"];
    args.extend(HERMES);
    let o = toolgate(dir.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = stdout(&o);
    let lines: Vec<&str> = csv.split("\r\n").collect();
    assert_eq!(
        lines[0],
        "model,task,n,passes,rate,ci_low,ci_high,flag,pass_k_k,pass_k,stable,flaky,failing,dominant_failure,labels"
    );
    assert_eq!(
        lines[1],
        "<script>alert(1)</script>,\"'=HYPERLINK(\"\"x\"\")\",3,2,0.6667,0.2077,0.9385,inconclusive,3,0.0000,0,1,0,no_call,no_call:1 pass:2"
    );
    assert_eq!(
        lines[2],
        // 0 of 3 is as inconclusive as 3 of 3 (the flag is symmetric, issue 7).
        "m,t,3,0,0.0000,0.0000,0.5615,inconclusive,3,0.0000,0,0,1,type_coercion,type_coercion:3"
    );

    let mut args = vec!["matrix", "run", "--format", "html"];
    args.extend(HERMES);
    let html = stdout(&toolgate(dir.path(), &args));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // One interval plot per cell, nothing fetched.
    assert_eq!(html.matches("<svg ").count(), 2);
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("src="));
    assert!(html.contains("aria-label=\"rate 0.67, 95% interval 0.21 to 0.94\""));

    // The comparison as HTML plots the difference on [-1, 1].
    let mut args = vec!["matrix", "run", "--compare", "run", "--format", "html"];
    args.extend(HERMES);
    let html = stdout(&toolgate(dir.path(), &args));
    assert_eq!(html.matches("<svg ").count(), 2);
    assert!(html.contains("class=\"zero\""));
    assert!(!html.contains("<script"));
}

/// Probe p6: samples the endpoint failed (`OUT/run-errors.log`, no
/// transcript) were silently missing from the matrix, and a gate passed on
/// what was left: 1 answered sample of 3 made a cell rate 1.00 that
/// `--fail-under 0.8` accepted.
#[test]
fn failed_samples_of_a_run_are_named_and_a_gate_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    write_run(&out, &[("m1", "a", &[], "p")]);
    let log = r#"{"time":1,"model":"m1","task":"a","sample":2,"attempts":5,"error":"HTTP 503"}
{"time":1,"model":"m1","task":"a","sample":3,"attempts":5,"error":"HTTP 503"}
"#;
    std::fs::write(out.join("run-errors.log"), log).unwrap();
    let mut args = vec!["matrix", "out", "--by", "model"];
    args.extend(HERMES);
    let o = toolgate(dir.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("run-errors.log: 2 sample(s) of that run failed"),
        "{}",
        stderr(&o)
    );
    // Through a transcript's path too (OUT/<model>/<task>.<s>.json).
    let mut args = vec!["matrix", "out/m1", "--by", "model"];
    args.extend(HERMES);
    let o = toolgate(dir.path(), &args);
    assert!(
        stderr(&o).contains("2 sample(s) of that run failed"),
        "{}",
        stderr(&o)
    );
    let mut args = vec!["matrix", "out", "--by", "model", "--fail-under", "0.8"];
    args.extend(HERMES);
    let o = toolgate(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not decide on a run with failed samples"),
        "{}",
        stderr(&o)
    );
    // A run without errors: no note, the gate decides.
    std::fs::remove_file(out.join("run-errors.log")).unwrap();
    let o = toolgate(dir.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("run-errors.log"), "{}", stderr(&o));
}
