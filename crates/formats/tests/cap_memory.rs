//! Issue 22: the candidate cap is enforced while an extractor scans, so its
//! memory is bounded by the cap, not by the output. 10 MB of repeated `[f(`
//! peaked at 1.1–1.6 GB before (the cap was applied after extraction).
//!
//! Every built-in extractor (every engine) runs over texts made of one
//! opener-like token repeated (the issue's tokens and every row's openers),
//! strict and lenient: it must return at most the cap's candidates, and the
//! peak resident memory of the extraction must stay within a small multiple
//! of the text (copies of spans) plus a constant — not grow with the number
//! of candidates the text holds. The crate forbids `unsafe`, so there is no
//! counting allocator: each mode runs in a child process (this test binary
//! again) that resets its peak RSS (`/proc/self/clear_refs`) before each
//! extraction and reads `VmHWM` after it, with glibc told to give freed
//! memory back at once (`MALLOC_TRIM_THRESHOLD_=0`) so that one text's
//! leftovers do not hide the next one's peak.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use toolgate_formats::FORMATS;
use toolgate_formats::{Input, Strictness, by_name};

/// The issue's tokens; every row's openers are added to them.
const TOKENS: &[&str] = &[
    "[f(",
    "[f(x=1)]",
    "<tool_call>{",
    "<tool_call>{\"name\": \"f\"}</tool_call>",
    "<function=",
    "<function=f>",
    "<function=f>{}</function>",
    "functools[",
    "[TOOL_CALLS]",
    "[TOOL_CALLS]f[ARGS]{}",
    "{\"name\":",
    "{\"name\": \"f\"}",
    "{\"name\": \"f\"};",
    "TOOL_CALL {\"name\": \"f\"}\n",
    "```json\n{\"name\": \"f\"}\n```\n",
    "<tool name=\"f\">{}</tool>",
    "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
    "<tool_call><function=f><parameter=a>1</parameter></function></tool_call>",
    "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>",
    "<|channel|>commentary to=functions.f<|message|>{}<|call|>",
    "<|tool_call>call:f{}<tool_call|>",
];

const SIZE: usize = 128 * 1024;

fn status_kb(field: &str) -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn tokens() -> Vec<String> {
    let mut tokens: Vec<String> = TOKENS.iter().map(|t| t.to_string()).collect();
    for f in FORMATS {
        for o in f.openers.unwrap_or(&[]) {
            tokens.push(o.to_string());
        }
    }
    tokens.sort();
    tokens.dedup();
    tokens
}

/// The child: one mode over every token text; one line per extraction:
/// `count<TAB>peak KiB<TAB>strictness<TAB>token`.
fn child(mode: &str) {
    let e = by_name(mode).unwrap();
    for token in tokens() {
        let text = token.repeat(SIZE / token.len());
        let input = Input::new(&text);
        for s in [Strictness::Strict, Strictness::Lenient] {
            std::fs::write("/proc/self/clear_refs", "5").unwrap();
            let before = status_kb("VmRSS:").unwrap();
            let found = e.extract(&input, s);
            let peak = status_kb("VmHWM:").unwrap().saturating_sub(before);
            println!("{}\t{peak}\t{s:?}\t{token:?}", found.len());
        }
    }
}

#[test]
fn every_extractor_stops_at_the_cap_while_scanning() {
    if let Ok(mode) = std::env::var("TOOLGATE_CAP_CHILD") {
        return child(&mode);
    }
    if std::fs::write("/proc/self/clear_refs", "5").is_err() || status_kb("VmHWM:").is_none() {
        eprintln!("skipped: no /proc/self/clear_refs or VmHWM here");
        return;
    }
    let cap = toolgate_formats::DEFAULT_MAX_CANDIDATES;
    // Spans' copies are linear in the text; candidates are not.
    let bound_kb = (24 * SIZE + (8 << 20)) >> 10;
    let exe = std::env::current_exe().unwrap();
    let mut failures = Vec::new();
    let mut lines = 0;
    for f in FORMATS.iter().filter(|f| f.name != "native") {
        let out = Command::new(&exe)
            .args([
                "--exact",
                "every_extractor_stops_at_the_cap_while_scanning",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("TOOLGATE_CAP_CHILD", f.name)
            .env("MALLOC_TRIM_THRESHOLD_", "0")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: the child failed: {}",
            f.name,
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let parts: Vec<&str> = line.splitn(4, '\t').collect();
            let [n, peak, s, token] = parts.as_slice() else {
                continue;
            };
            let (Ok(n), Ok(peak)) = (n.parse::<usize>(), peak.parse::<usize>()) else {
                continue;
            };
            lines += 1;
            if n > cap || peak > bound_kb {
                failures.push(format!(
                    "{} {s} on {token}: {n} candidates (cap {cap}), peak +{peak} KiB (bound {bound_kb} KiB)",
                    f.name
                ));
            }
        }
    }
    assert!(lines > 1000, "the children reported {lines} extractions");
    assert!(
        failures.is_empty(),
        "{} over the cap or the bound:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
