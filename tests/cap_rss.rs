//! Issue 22, end to end: `toolgate parse --profile P FILE` on megabytes of
//! one opener repeated stays under 100 MB of peak RSS, because every
//! extractor stops growing at the candidate cap while it scans (10 MB of
//! `[f(` peaked at 0.9–1.6 GB before, 10 MB of `<tool_call>{` at 600 MB,
//! growing with the input). Measured with `/usr/bin/time`'s maximum
//! resident set size (`%M`); skipped where that tool is missing. 10 MB for
//! the worst case, 4 MB for the others, to keep the debug binary's run
//! short. The decision must still be a rejection, with the cap reached
//! (`telemetry.candidate_count`).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

/// (profile, token, megabytes of it).
const CASES: &[(&str, &str, usize)] = &[
    ("default", "[f(", 10),
    ("hermes", "<tool_call>{", 4),
    ("qwen3-coder", "<function=", 4),
    ("qwen3-coder", "<function=f>", 4),
    ("functools", "functools[", 4),
    ("mistral", "[TOOL_CALLS]", 4),
    ("llama3", "{\"name\":", 4),
];

/// `toolgate ARGS` run in `dir` under `/usr/bin/time`: its output and its
/// peak resident set size in KiB; `None` where that tool is missing.
fn peak_kb(dir: &Path, args: &[&str]) -> Option<(std::process::Output, usize)> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        eprintln!("skipped: no /usr/bin/time");
        return None;
    }
    let report = dir.join("time.txt");
    let out = Command::new(time)
        .current_dir(dir)
        .arg("-o")
        .arg(&report)
        .arg("-f")
        .arg("%M")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .output()
        .unwrap();
    let peak = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap();
    Some((out, peak))
}

#[test]
fn megabytes_of_openers_stay_under_100_mb_in_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (profile, token, mb) in CASES {
        let file = dir.path().join("out.txt");
        std::fs::write(&file, token.repeat(mb * 1024 * 1024 / token.len())).unwrap();
        let Some((out, peak_kb)) = peak_kb(dir.path(), &["parse", "--profile", profile, "out.txt"])
        else {
            return;
        };
        let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let count = parsed["telemetry"]["candidate_count"].as_u64().unwrap_or(0);
        if peak_kb > 100 * 1024 || parsed["decision"] != "reject" || count < 1_000 {
            failures.push(format!(
                "{profile} on {token:?}: peak {peak_kb} KiB, decision {}, gate {}, candidates {count}",
                parsed["decision"], parsed["gate"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The fourth probe (stop 42): a `serde_json::Value` of tiny values costs
/// some 100 times their bytes, so one 50 MB transcript line of `[0,0,…]`
/// peaked at 4.3 GB in `label` (7 GB in `import` at 100 MB), bounded only
/// by `--max-file-size`. A document of more than ten million values is
/// refused before anything is built from it, in `label` and `import` alike,
/// naming the limit; the lines beside it are still read.
#[test]
fn a_document_of_too_many_values_is_refused_before_it_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let mut zeros = "0,".repeat(toolgate_core::nodes::MAX_DOCUMENT_VALUES);
    zeros.push('0');
    let ok = r#"{"id":"ok","output":"hi","tools":[]}"#;
    std::fs::write(
        dir.path().join("t.jsonl"),
        format!("{ok}\n{{\"id\":\"big\",\"output\":\"x\",\"z\":[{zeros}]}}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("answer.json"),
        format!(
            r#"{{"id":"x","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"hi"}},"finish_reason":"stop"}}],"usage":[{zeros}]}}"#
        ),
    )
    .unwrap();
    for args in [
        &["label", "--format", "jsonl", "t.jsonl"][..],
        &["import", "--out", "out", "answer.json"],
    ] {
        let Some((out, peak_kb)) = peak_kb(dir.path(), args) else {
            return;
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("holds more than 10000000 JSON values"),
            "{args:?}: {stderr}"
        );
        assert!(peak_kb < 300 * 1024, "{args:?}: peak {peak_kb} KiB");
        if args[0] == "label" {
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                stdout.contains("\"ok\""),
                "the line beside it is read: {stdout}"
            );
        }
    }
}

/// Regression (s47-files): `label` held every unreadable file or line until
/// the end, to name them on stderr after its output, so memory grew with
/// each one: 200,000 lines of `x` peaked at about 65 MiB, 300,000 at 87
/// MiB, a multi-GB file of them at gigabytes. The first thousand are held
/// now and the rest spooled to an unnamed temporary file; every one is
/// still named, in order, after the output.
#[test]
fn unreadable_lines_are_named_without_being_held() {
    const LINES: usize = 200_000;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.jsonl"), "x\n".repeat(LINES)).unwrap();
    let Some((out, peak_kb)) = peak_kb(dir.path(), &["label", "--jobs", "2", "bad.jsonl"]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let named: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("toolgate: bad.jsonl:"))
        .collect();
    assert_eq!(named.len(), LINES);
    for (i, line) in named.iter().enumerate() {
        let want = format!(
            "toolgate: bad.jsonl:{}: not valid JSON: expected value at line 1 column 1",
            i + 1
        );
        assert!(*line == want, "{line} is not {want}");
    }
    assert!(peak_kb < 45 * 1024, "peak {peak_kb} KiB");
}
