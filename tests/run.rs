//! `toolgate run` end to end against a stdlib mock endpoint
//! (`tests/mock_endpoint.py`, started here on a free loopback port):
//! killed mid-run and resumed, it ends with exactly one transcript per
//! (model, task, sample), every one readable, and the matrix rates the
//! always-correct model 1.0; endpoint failures are run errors, never labels.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "sk-test-NEVER-ON-DISK-4242";

/// The mock endpoint; killed when dropped.
struct Mock {
    child: Child,
    port: u16,
}

impl Mock {
    fn start(delay_ms: u64) -> Mock {
        let mut child = Command::new("python3")
            .arg("tests/mock_endpoint.py")
            .env("MOCK_API_KEY", KEY)
            .env("MOCK_DELAY_MS", delay_ms.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs tests/mock_endpoint.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the mock prints its port");
        Mock { child, port }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn stats(&self) -> Value {
        self.get("/stats")
    }

    /// Waits until the requests of a killed run have finished on the
    /// server, then restarts the in-flight high-water mark.
    fn reset(&self) -> Value {
        self.get("/reset")
    }

    fn get(&self, path: &str) -> Value {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap();
        serde_json::from_str(body).unwrap()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn weather_tools() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"], "additionalProperties": false}}}])
}

fn call_task(name: &str, city: &str) -> Value {
    let call = json!({"name": "get_weather", "arguments": {"city": city}});
    json!({"task": name, "tags": ["weather"],
           "messages": [{"role": "user", "content": format!("CALL {call}")}],
           "tools": weather_tools(),
           "expect": {"calls": [{"name": "get_weather", "arguments": {"properties": {"city": {"const": city}}}}]}})
}

/// Four tasks: three calls (one of them flaky at the endpoint) and one
/// where no tool is needed.
fn write_suite(dir: &Path) -> PathBuf {
    // Two calls at once, and the endpoint fails twice before answering.
    let mut flaky = call_task("two_cities_flaky", "Ghent");
    flaky["messages"][0]["content"] = json!(
        "CALL {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ghent\"}}\n\
         CALL {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bruges\"}}\nFLAKY"
    );
    flaky["expect"] = json!({"calls": [
        {"name": "get_weather", "arguments": {"properties": {"city": {"const": "Ghent"}}}},
        {"name": "get_weather", "arguments": {"properties": {"city": {"const": "Bruges"}}}}]});
    flaky["tags"] = json!(["weather", "parallel"]);
    let tasks = [
        call_task("antwerp", "Antwerp"),
        call_task("zurich", "Zürich"),
        flaky,
        json!({"task": "no_tool", "tags": ["chat"],
               "messages": [{"role": "user", "content": "NOCALL say hi"}],
               "tools": weather_tools(), "expect": {"calls": []}}),
    ];
    let text: Vec<String> = tasks.iter().map(|t| t.to_string()).collect();
    let path = dir.join("suite.jsonl");
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

fn toolgate(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args)
        .env("TOOLGATE_TEST_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn run_args<'a>(suite: &'a str, url: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        suite,
        "--base-url",
        url,
        "--model",
        "right",
        "--model",
        "prose",
        "-k",
        "3",
        "--out",
        out,
        "--api-key-env",
        "TOOLGATE_TEST_KEY",
        "--seed",
        "7",
        "--retry-delay-ms",
        "1",
        "--concurrency",
        "2",
        "--no-progress",
    ]
}

fn transcripts(out: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Every file under `dir`, as bytes, joined (to search for the key).
fn all_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.extend(std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn killed_and_resumed_run_ends_with_exactly_one_transcript_per_sample() {
    let mock = Mock::start(60);
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(dir.path());
    let out = dir.path().join("out");
    let (suite_s, out_s) = (suite.to_str().unwrap(), out.to_str().unwrap());
    let url = mock.base_url();

    // First run: killed once a few transcripts exist.
    let mut child = toolgate(&run_args(suite_s, &url, out_s)).spawn().unwrap();
    let start = Instant::now();
    loop {
        let n = if out.exists() {
            transcripts(&out).len()
        } else {
            0
        };
        if n >= 3 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no transcripts after 60 s"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "run ended before the kill"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let after_kill = transcripts(&out).len();
    assert!((3..24).contains(&after_kill), "{after_kill} after the kill");
    // The killed run's last requests may still be answered on the server:
    // the concurrency check below is about the second run alone.
    assert_eq!(mock.reset()["inflight"], 0);

    // Second run: completes the rest and skips what exists.
    let o = toolgate(&run_args(suite_s, &url, out_s)).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let files = transcripts(&out);
    assert_eq!(files.len(), 24, "{files:#?}");
    let already = transcripts_written_before(&err);
    assert!(already >= after_kill, "{err}");
    assert!(err.contains(&format!("{} written", 24 - already)), "{err}");

    // Exactly one transcript per (model, task, sample), each in its own file
    // and saying so.
    let mut cells = BTreeSet::new();
    for f in &files {
        let v: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        let cell = (
            v["model"].as_str().unwrap().to_string(),
            v["task"].as_str().unwrap().to_string(),
            v["sample"].as_u64().unwrap(),
        );
        assert!(cells.insert(cell.clone()), "duplicate {cell:?}");
        assert_eq!(v["request"]["seed"], json!(7 + cell.2 - 1));
        assert_eq!(v["request"]["model"], json!(cell.0));
    }
    assert_eq!(cells.len(), 24);
    // The flaky task was retried (in either run), never recorded as a failure.
    assert!(!out.join("run-errors.log").exists());

    // Never more requests in flight than --concurrency (in the second run).
    assert!(mock.stats()["max_inflight"].as_u64().unwrap() <= 2);

    // A third run sends nothing: every sample is there.
    let posts = mock.stats()["posts"].as_u64().unwrap();
    let o = toolgate(&run_args(suite_s, &url, out_s)).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("0 written, 24 already there, 0 run errors"),
        "{err}"
    );
    assert_eq!(mock.stats()["posts"].as_u64().unwrap(), posts);

    // All readable by `toolgate label`.
    let o = toolgate(&["label", out_s, "--format", "jsonl"])
        .output()
        .unwrap();
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 24);
    assert!(lines.iter().all(|l| l.get("error").is_none()));

    // The matrix rates the always-correct model 1.0 (and the prose model 1/4).
    let o = toolgate(&[
        "matrix",
        out_s,
        "--by",
        "model",
        "--profile",
        "hermes",
        "--format",
        "json",
    ])
    .output()
    .unwrap();
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let m: Value = serde_json::from_str(&stdout).unwrap();
    let cells = m.get("cells").unwrap_or(&m).as_array().unwrap();
    let rate = |model: &str| {
        cells
            .iter()
            .find(|c| c["keys"]["model"] == json!(model))
            .map(|c| (c["n"].as_u64().unwrap(), c["rate"].as_f64().unwrap()))
            .unwrap()
    };
    assert_eq!(rate("right"), (12, 1.0));
    assert_eq!(rate("prose"), (12, 0.25));

    // The API key was sent (the mock refuses requests without it) and is
    // nowhere on disk.
    let bytes = all_bytes(dir.path());
    assert!(
        !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the API key was written to disk"
    );
}

/// `N already there` from the summary line.
fn transcripts_written_before(stderr: &str) -> usize {
    let at = stderr.find(" already there").unwrap();
    let before = &stderr[..at];
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn endpoint_failures_are_run_errors_never_transcripts() {
    let mock = Mock::start(0);
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(dir.path());
    let out = dir.path().join("out");
    let url = mock.base_url();
    let o = toolgate(&[
        "run",
        suite.to_str().unwrap(),
        "--base-url",
        &url,
        "--model",
        "down",
        "--model",
        "refused",
        "--model",
        "right",
        "-k",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--api-key-env",
        "TOOLGATE_TEST_KEY",
        "--retries",
        "2",
        "--retry-delay-ms",
        "1",
        "--no-progress",
    ])
    .output()
    .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("4 written, 0 already there, 8 run errors"),
        "{err}"
    );
    // Only the answering model has transcripts.
    let files = transcripts(&out);
    assert_eq!(files.len(), 4);
    assert!(files.iter().all(|f| f.starts_with(out.join("right"))));
    // Two HTTP 500s, then an answer: retried, recorded with its attempts.
    let flaky: Value = serde_json::from_slice(
        &std::fs::read(out.join("right").join("two_cities_flaky.1.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(flaky["run"]["attempts"], json!(3));
    let log = std::fs::read_to_string(out.join("run-errors.log")).unwrap();
    let errors: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(errors.len(), 8);
    for e in &errors {
        match e["model"].as_str().unwrap() {
            // 503 is retried: 1 + 2 attempts.
            "down" => {
                assert_eq!(e["attempts"], json!(3));
                assert!(e["error"].as_str().unwrap().starts_with("HTTP 503"), "{e}");
            }
            // 400 is the request's fault: not retried.
            "refused" => {
                assert_eq!(e["attempts"], json!(1));
                assert!(e["error"].as_str().unwrap().starts_with("HTTP 400"), "{e}");
            }
            other => panic!("unexpected error for {other}: {e}"),
        }
    }
    // The matrix never sees the failures as model labels.
    let o = toolgate(&[
        "matrix",
        out.to_str().unwrap(),
        "--by",
        "model",
        "--format",
        "json",
    ])
    .output()
    .unwrap();
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        !stdout.contains("\"down\"") && !stdout.contains("\"refused\""),
        "{stdout}"
    );

    // A request that outlives --timeout is a run error too.
    let out3 = dir.path().join("out3");
    let o = toolgate(&[
        "run",
        suite.to_str().unwrap(),
        "--base-url",
        &url,
        "--model",
        "slow",
        "-k",
        "1",
        "--out",
        out3.to_str().unwrap(),
        "--api-key-env",
        "TOOLGATE_TEST_KEY",
        "--timeout",
        "0.3",
        "--retries",
        "0",
        "--no-progress",
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(transcripts(&out3).len(), 0);
    let log = std::fs::read_to_string(out3.join("run-errors.log")).unwrap();
    assert_eq!(log.lines().count(), 4);
    assert!(log.contains("timed out"), "{log}");

    // A wrong key: 401 is not retried, and the key does not leak into the log.
    let out2 = dir.path().join("out2");
    let o = toolgate(&[
        "run",
        suite.to_str().unwrap(),
        "--base-url",
        &url,
        "--model",
        "right",
        "-k",
        "1",
        "--out",
        out2.to_str().unwrap(),
        "--api-key-env",
        "NO_SUCH_VARIABLE_SET",
        "--no-progress",
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(transcripts(&out2).len(), 0);
    let log = std::fs::read_to_string(out2.join("run-errors.log")).unwrap();
    assert_eq!(log.lines().count(), 4);
    assert!(log.contains("HTTP 401"), "{log}");
}

#[test]
fn a_bad_suite_is_refused_with_line_numbers_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("bad.jsonl");
    std::fs::write(
        &suite,
        "{\"task\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"tools\": [], \"expect\": {\"calls\": []}}\n\n{\"task\": \"b\"}\n",
    )
    .unwrap();
    let o = toolgate(&[
        "run",
        suite.to_str().unwrap(),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("bad.jsonl:3: task `b`: missing `messages`"),
        "{err}"
    );
    assert!(!dir.path().join("out").exists());

    // A suite over --max-file-size is not read (nor is a device).
    for (path, limit, why) in [
        (
            suite.to_str().unwrap(),
            "64",
            "over the 64-byte limit (--max-file-size): not read",
        ),
        (
            "/dev/zero",
            "256M",
            "a character device: only regular files are read",
        ),
    ] {
        let o = toolgate(&[
            "run",
            path,
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--out",
            dir.path().join("out").to_str().unwrap(),
            "--max-file-size",
            limit,
        ])
        .output()
        .unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(!dir.path().join("out").exists());
    }

    // A temperature that is not a number never reaches a request.
    let o = toolgate(&[
        "run",
        suite.to_str().unwrap(),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--temperature",
        "NaN",
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("--temperature must be a finite number"),
        "{}",
        text(&o).1
    );
    assert!(!dir.path().join("out").exists());
}

/// Probe 42, bug 4: a key that is not UTF-8 was dropped (the requests went
/// without it); it is refused before anything runs, and not shown. A model
/// named twice is run once, and the command says so.
#[test]
#[cfg(unix)]
fn an_unusable_api_key_is_refused_and_a_repeated_model_runs_once() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(dir.path());
    let out = dir.path().join("out");
    let args = |model2: &str| {
        vec![
            "run".to_string(),
            suite.to_str().unwrap().into(),
            "--base-url".into(),
            "http://127.0.0.1:9/v1".into(),
            "--model".into(),
            "right".into(),
            "--model".into(),
            model2.into(),
            "-k".into(),
            "1".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
            "--api-key-env".into(),
            "TOOLGATE_TEST_KEY".into(),
            "--no-progress".into(),
        ]
    };
    let a = args("prose");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = toolgate(&a)
        .env(
            "TOOLGATE_TEST_KEY",
            std::ffi::OsStr::from_bytes(b"sk-NOT-UTF8-\xff-4242"),
        )
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("$TOOLGATE_TEST_KEY: the API key is not valid UTF-8"),
        "{err}"
    );
    assert!(!err.contains("NOT-UTF8"), "{err}");
    assert!(!out.exists());

    let mock = Mock::start(0);
    let url = mock.base_url();
    let mut a = args("right");
    a[3] = url;
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = toolgate(&a).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("toolgate: --model right is given more than once: it is run once"),
        "{err}"
    );
    assert!(
        err.contains("4 samples (1 models × 4 tasks × k=1): 4 written"),
        "{err}"
    );
    assert_eq!(
        mock.stats()["posts"],
        json!(4 + 2),
        "the flaky task fails twice"
    );
}
