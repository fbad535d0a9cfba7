//! End to end with the official OpenAI Python client: `toolgate
//! mock-upstream` and `toolgate proxy --mode enforce` on loopback ports,
//! `tests/py/scenarios.py` against the proxy (streaming and not), then
//! `toolgate label` over the recordings.
//!
//! Needs `TOOLGATE_TEST_PYTHON`: a Python with the `openai` package
//! (`.ci/run` creates `target/pyenv` and sets it). Without it the test says
//! so and skips.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process killed when dropped (the test started it).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `toolgate ARGS` and reads the address it serves from the first
/// line of its stderr (`… serving http://ADDR/v1…`).
fn start(args: &[&str]) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // Keep draining its stderr (log lines) so that it never writes to a
    // closed pipe; echo it for the test's output.
    std::thread::spawn(move || {
        for l in stderr.lines().map_while(Result::ok) {
            eprintln!("[server] {l}");
        }
    });
    let server = Server(child);
    let at = line
        .find("serving http://")
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    let url: String = line[at + "serving ".len()..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != ',')
        .collect();
    (server, url)
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn openai_client_through_the_enforcing_proxy() {
    let Some(python) = std::env::var_os("TOOLGATE_TEST_PYTHON") else {
        println!(
            "skipping: TOOLGATE_TEST_PYTHON is not set (a python with `openai`; .ci/run sets it)"
        );
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let record = tempfile::tempdir().unwrap();
    let upstream_dir = root.join("tests/py/upstream");
    let (_mock, mock_url) = start(&[
        "mock-upstream",
        upstream_dir.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--split-openers",
    ]);
    let (_proxy, proxy_url) = start(&[
        "proxy",
        "--upstream",
        &mock_url,
        "--listen",
        "127.0.0.1:0",
        "--mode",
        "enforce",
        "--profile",
        "hermes",
        "--retries",
        "2",
        "--record",
        record.path().to_str().unwrap(),
        "--timeout",
        "30",
    ]);

    let out = Command::new(&python)
        .arg(root.join("tests/py/scenarios.py"))
        .arg(&proxy_url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "scenarios failed:\n{stdout}\n{stderr}"
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        10,
        "{stdout}"
    );

    // Every exchange is recorded (written off the request path: wait a little).
    let deadline = Instant::now() + Duration::from_secs(10);
    while jsonl_files(record.path()).len() < 10 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let files = jsonl_files(record.path());
    assert_eq!(files.len(), 10, "one transcript per exchange: {files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(
            !text.contains("sk-toolgate-e2e-secret"),
            "no API key in {}",
            f.display()
        );
    }

    // `toolgate label` reads every recording: one line per attempt, no error.
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "label",
            record.path().to_str().unwrap(),
            "--format",
            "jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // correct 1, prose 1, malformed 3 (two re-rolls), forbidden 1, flaky 2; twice.
    assert_eq!(lines.len(), 16, "{lines:?}");
    assert!(lines.iter().all(|l| l.get("error").is_none()), "{lines:?}");
    let hermes = |label: &str| {
        lines
            .iter()
            .filter(|l| l["labels"]["hermes"] == label)
            .count()
    };
    // Without `expect`, prose is labeled as if a call were expected.
    assert_eq!(
        hermes("pass"),
        4,
        "correct and flaky's second attempt, twice"
    );
    assert_eq!(hermes("no_call"), 2);
    assert_eq!(hermes("truncation"), 2);
    assert_eq!(hermes("malformed_json"), 6);
    assert_eq!(hermes("wrong_tool"), 2);
}
