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
    let (server, line) = start_line(args);
    let at = line
        .find("serving http://")
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    let url: String = line[at + "serving ".len()..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != ',')
        .collect();
    (server, url)
}

/// Starts `toolgate ARGS`; returns it and the first line of its stderr.
fn start_line(args: &[&str]) -> (Server, String) {
    let (server, line, stderr) = start_logging(args, Some("warn"));
    // Keep draining its stderr (log lines) so that it never writes to a
    // closed pipe; echo it for the test's output.
    std::thread::spawn(move || {
        for l in stderr.lines().map_while(Result::ok) {
            eprintln!("[server] {l}");
        }
    });
    (server, line)
}

/// Starts `toolgate ARGS` with `RUST_LOG` set to `log` (`None`: unset, the
/// command's default); returns it, the first line of its stderr and the
/// rest of its stderr, which the caller must keep reading.
fn start_logging(
    args: &[&str],
    log: Option<&str>,
) -> (Server, String, BufReader<std::process::ChildStderr>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    match log {
        Some(level) => cmd.env("RUST_LOG", level),
        None => cmd.env_remove("RUST_LOG"),
    };
    let mut child = cmd.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    (Server(child), line, stderr)
}

/// How many exchanges the record segments in `dir` hold (whole lines only:
/// a line still being written is left out).
fn recorded_exchanges(dir: &Path) -> usize {
    toolgate_testkit::record::exchanges(&toolgate_testkit::record::lines(dir))
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
    while recorded_exchanges(record.path()) < 10 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(recorded_exchanges(record.path()), 10, "every exchange");
    let files = jsonl_files(record.path());
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

#[test]
fn proxy_usage_errors_exit_2_before_listening() {
    for (args, says) in [
        (&["proxy", "--upstream", "localhost:8000"][..], "http"),
        (
            &[
                "proxy",
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--redact",
                "messages",
            ][..],
            "JSON pointers",
        ),
        (
            &[
                "proxy",
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--profile",
                "nope",
            ][..],
            "unknown profile",
        ),
        (
            &[
                "mock-upstream",
                "/nonexistent/dir",
                "--listen",
                "127.0.0.1:0",
            ][..],
            "no transcript",
        ),
        (
            &[
                "proxy",
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--workers",
                "300",
            ][..],
            "not in 0..=256",
        ),
        (
            &["mock-upstream", "transcripts", "--workers", "1000"][..],
            "not in 0..=256",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Starts mock-upstream on tests/py/upstream and a proxy in front of it with
/// `extra` arguments; returns both, the proxy's URL and its record dir.
fn proxy_in_front(extra: &[&str]) -> (Server, Server, String, tempfile::TempDir) {
    proxy_in_front_of(&[], extra)
}

/// [`proxy_in_front`] with `mock_extra` arguments for the mock.
fn proxy_in_front_of(
    mock_extra: &[&str],
    extra: &[&str],
) -> (Server, Server, String, tempfile::TempDir) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let record = tempfile::tempdir().unwrap();
    let upstream_dir = root.join("tests/py/upstream");
    let mut mock_args = vec![
        "mock-upstream",
        upstream_dir.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ];
    mock_args.extend_from_slice(mock_extra);
    let (mock, mock_url) = start(&mock_args);
    let mut args = vec![
        "proxy",
        "--upstream",
        &mock_url,
        "--listen",
        "127.0.0.1:0",
        "--mode",
        "enforce",
        "--record",
        record.path().to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (proxy, proxy_url) = start(&args);
    (mock, proxy, proxy_url, record)
}

/// Issue 21 with the official client: `auto` by default, unchecked answers,
/// broken streams and unparseable bodies (tests/py/faults.py), every
/// exchange recorded.
#[test]
fn openai_client_against_upstream_faults() {
    let Some(python) = std::env::var_os("TOOLGATE_TEST_PYTHON") else {
        println!("skipping: TOOLGATE_TEST_PYTHON is not set");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (_mock, _proxy, proxy_url, record) = proxy_in_front_of(&["--native"], &["--timeout", "1"]);
    let out = Command::new(&python)
        .arg(root.join("tests/py/faults.py"))
        .arg(&proxy_url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "faults failed:\n{stdout}\n{stderr}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        21,
        "{stdout}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while recorded_exchanges(record.path()) < 23 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    // 17 + 2 half plans + 2 × 2 legacy exchanges.
    assert_eq!(
        recorded_exchanges(record.path()),
        23,
        "every exchange recorded"
    );
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for the child to exit, at most `limit`; returns how long it took.
fn wait_exit(server: &mut Server, limit: Duration) -> Option<Duration> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if server.0.try_wait().unwrap().is_some() {
            return Some(t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// SIGTERM with a stream in flight: the proxy stops within its grace,
/// having recorded both the finished exchange and the one it cut; with a
/// long grace, a second SIGTERM stops it at once.
#[test]
fn sigterm_stops_within_the_grace_and_a_second_one_at_once() {
    let (_mock, mut proxy, url, record) = proxy_in_front(&["--grace", "3"]);
    let addr = url.trim_start_matches("http://").trim_end_matches("/v1");
    // A finished exchange whose recording (8 MiB) may still be being written
    // when the signal comes: it is on disk when the process has ended.
    let body = serde_json::json!({"model": "qwen3-8b", "padding": "p".repeat(8 << 20),
        "messages": [{"role": "user", "content": "prose"}]});
    let (status, _) = raw_http(
        addr,
        "/v1/chat/completions",
        &[],
        body.to_string().as_bytes(),
        false,
    );
    assert_eq!(status, 200);
    let _held = stream_in_flight(addr);
    signal(&proxy.0, "-TERM");
    let took = wait_exit(&mut proxy, Duration::from_secs(15)).expect("the proxy exits");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(6),
        "the grace (3 s) bounds the wait: {took:?}"
    );
    assert_eq!(
        recorded_exchanges(record.path()),
        2,
        "the finished exchange and the one cut by the grace are recorded"
    );

    let (_mock, mut proxy, url, _record) = proxy_in_front(&["--grace", "60"]);
    let addr = url.trim_start_matches("http://").trim_end_matches("/v1");
    let _held = stream_in_flight(addr);
    signal(&proxy.0, "-TERM");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        proxy.0.try_wait().unwrap().is_none(),
        "the first signal waits for the stream in flight"
    );
    signal(&proxy.0, "-TERM");
    let took = wait_exit(&mut proxy, Duration::from_secs(10)).expect("the second signal exits");
    assert!(took < Duration::from_secs(4), "{took:?}");
}

/// A streamed exchange that has started (its first bytes read) and whose
/// upstream then stalls: it holds the proxy until the grace ends.
fn stream_in_flight(addr: &str) -> std::net::TcpStream {
    use std::io::{Read, Write};
    let body = serde_json::json!({"model": "qwen3-8b", "stream": true,
        "messages": [{"role": "user", "content": "prose"}]})
    .to_string();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-mock-fault: stall\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    s
}

/// Credentials in the upstream URL never reach the banner.
#[test]
fn the_banner_hides_upstream_credentials_and_names_the_profile() {
    let (_proxy, line) = start_line(&[
        "proxy",
        "--upstream",
        "http://user:sk-banner-secret@127.0.0.1:9/v1",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert!(!line.contains("sk-banner-secret"), "{line}");
    assert!(line.contains("http://***@127.0.0.1:9/v1"), "{line}");
    assert!(line.contains("profile auto"), "{line}");
}

/// One raw HTTP/1.1 exchange (`connection: close`): the status and the raw
/// response bytes after the head (chunk framing included). `hang_up` closes
/// the connection after the first bytes of the answer.
fn raw_http(
    addr: &str,
    path: &str,
    headers: &[(&str, String)],
    body: &[u8],
    hang_up: bool,
) -> (u16, String) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return (0, String::new());
    };
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    if s.write_all(head.as_bytes()).is_err() || s.write_all(body).is_err() {
        return (0, String::new());
    }
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if hang_up {
                    break;
                }
            }
        }
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn vm_hwm_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Issue 21's load: 2,000 requests through `toolgate proxy --mode enforce`
/// with its default limits, mixing upstream faults and hostile clients
/// (unparseable bodies, 256 KiB model names, 4 MiB answers, 8 MiB requests,
/// clients that hang up, connections that never send a request). The
/// proxy's peak RSS stays under 300 MB, `/metrics` under 1 MB, no call
/// leaves a faulty exchange, every exchange is recorded, and SIGTERM ends
/// the process within its grace.
#[test]
fn two_thousand_hostile_requests_stay_bounded() {
    const N: usize = 2000;
    const THREADS: usize = 16;
    // Whole answers in one or two deltas: the load is the faults and the
    // clients, not the SSE framing of a debug build.
    let (_mock, mut proxy, url, record) = proxy_in_front_of(
        &["--delta-chars", "64"],
        &["--timeout", "6", "--grace", "2"],
    );
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    let idle: Vec<_> = (0..20)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    let started = Instant::now();
    let times = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::<
        usize,
        Duration,
    >::new()));
    let leaks = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let statuses = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::<
        u16,
        usize,
    >::new()));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let addr = addr.clone();
            let leaks = leaks.clone();
            let statuses = statuses.clone();
            let times = times.clone();
            std::thread::spawn(move || {
                for i in (t..N).step_by(THREADS) {
                    let t0 = Instant::now();
                    // Stream-only faults (14..=17) always stream; the
                    // long model names (19) never do (the mock would echo
                    // the name in every chunk).
                    let stream = (i % 2 == 1 || (14..=17).contains(&(i % 25))) && i % 25 != 19;
                    let chat = |task: &str| {
                        serde_json::json!({"model": "qwen3-8b", "stream": stream,
                            "messages": [{"role": "user", "content": task}],
                            "tools": [{"type": "function", "function": {"name": "get_weather",
                                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]})
                        .to_string()
                        .into_bytes()
                    };
                    let path = "/v1/chat/completions";
                    let task_header = ("x-toolgate-task", format!("load-{}", i % 7));
                    let (kind, (status, body)) = match i % 25 {
                        0..=9 => {
                            let task = ["correct", "prose", "malformed", "forbidden", "flaky"][i % 5];
                            ("plain", raw_http(&addr, path, &[task_header], &chat(task), false))
                        }
                        f @ 10..=17 => {
                            let fault = ["bad_utf8", "lone_surrogate", "wrong_type", "unknown_call_field",
                                "reset", "end_early", "error_event", "not_json"][f - 10];
                            let task = if f < 14 { "forbidden" } else { "correct" };
                            let h = [task_header, ("x-mock-fault", fault.to_string())];
                            ("fault", raw_http(&addr, path, &h, &chat(task), false))
                        }
                        18 => (
                            "unparseable",
                            raw_http(&addr, path, &[task_header], br#"{"model": "m", "temperature": NaN}"#, false),
                        ),
                        19 => {
                            let mut body: serde_json::Value = serde_json::from_slice(&chat("prose")).unwrap();
                            body["model"] = serde_json::json!(format!("{i:05}{}", "m".repeat(256 << 10)));
                            ("plain", raw_http(&addr, path, &[task_header], body.to_string().as_bytes(), false))
                        }
                        20 => ("hang_up", raw_http(&addr, path, &[task_header], &chat("prose"), true)),
                        21 if i % 200 == 21 => {
                            let h = [task_header, ("x-mock-fault", "huge".to_string())];
                            ("plain", raw_http(&addr, path, &h, &chat("prose"), false))
                        }
                        22 if i % 200 == 22 => {
                            let mut body: serde_json::Value = serde_json::from_slice(&chat("prose")).unwrap();
                            body["padding"] = serde_json::json!("p".repeat(8 << 20));
                            ("plain", raw_http(&addr, path, &[task_header], body.to_string().as_bytes(), false))
                        }
                        23 if i % 400 == 23 => {
                            let h = [task_header, ("x-mock-fault", "stall".to_string())];
                            ("fault", raw_http(&addr, path, &h, &chat("correct"), false))
                        }
                        _ => ("plain", raw_http(&addr, path, &[task_header], &chat("correct"), false)),
                    };
                    *statuses.lock().unwrap().entry(status).or_default() += 1;
                    *times.lock().unwrap().entry(i % 25).or_default() += t0.elapsed();
                    let call_out = body.contains("\"tool_calls\"") || body.contains("\"function_call\"");
                    let bad = match kind {
                        "fault" => call_out || body.contains("data: [DONE]"),
                        "unparseable" => status != 400,
                        "hang_up" => false,
                        _ => status != 200,
                    };
                    if bad {
                        leaks
                            .lock()
                            .unwrap()
                            .push(format!("#{i} {kind} {status}: {}", body.chars().take(300).collect::<String>()));
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let took = started.elapsed();
    let leaks = leaks.lock().unwrap().clone();
    println!(
        "{N} requests in {took:?}; statuses {:?}; time by kind {:?}",
        statuses.lock().unwrap(),
        times.lock().unwrap()
    );
    assert!(
        leaks.is_empty(),
        "{} bad answers, e.g. {:?}",
        leaks.len(),
        &leaks[..leaks.len().min(5)]
    );
    assert!(took < Duration::from_secs(120), "{took:?}");

    let (_, metrics) = {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        (0, out)
    };
    assert!(
        metrics.len() < 1_000_000,
        "/metrics is {} bytes",
        metrics.len()
    );
    let rss_mib = vm_hwm_kib(proxy.0.id()) / 1024;
    println!(
        "proxy peak RSS {rss_mib} MiB, /metrics {} bytes",
        metrics.len()
    );
    assert!(rss_mib > 0 && rss_mib <= 300, "peak RSS {rss_mib} MiB");

    let deadline = Instant::now() + Duration::from_secs(30);
    while recorded_exchanges(record.path()) < N && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        recorded_exchanges(record.path()),
        N,
        "every exchange is recorded"
    );

    signal(&proxy.0, "-TERM");
    let exit = wait_exit(&mut proxy, Duration::from_secs(15)).expect("the proxy exits");
    assert!(
        exit < Duration::from_secs(5),
        "SIGTERM took {exit:?} with a 2 s grace"
    );
    drop(idle);
}

/// The proxy's default log (`info`, no `--record`): one telemetry line and
/// one exchange line per exchange on stderr, the exchange line naming the
/// decision, label and gate (read from the judgment even though nothing
/// keeps the exchange), every line there when the proxy has exited.
#[test]
fn the_default_log_names_each_exchanges_decision_without_a_record() {
    use std::io::{Read, Write};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let upstream_dir = root.join("tests/py/upstream");
    let dir = upstream_dir.to_str().unwrap();
    let (_mock, mock_url) = start(&["mock-upstream", dir, "--listen", "127.0.0.1:0"]);
    let args =
        format!("proxy --upstream {mock_url} --listen 127.0.0.1:0 --mode enforce --profile hermes");
    let args: Vec<&str> = args.split(' ').collect();
    let (mut proxy, first, stderr) = start_logging(&args, None);
    let lines =
        std::thread::spawn(move || stderr.lines().map_while(Result::ok).collect::<Vec<_>>());
    let at = first.find("serving http://").expect("the address") + "serving http://".len();
    let addr: String = first[at..].chars().take_while(|c| *c != '/').collect();
    let tools = r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]"#;
    for task in ["correct", "forbidden", "prose"] {
        let body = format!(
            r#"{{"model":"qwen3-8b","messages":[{{"role":"user","content":"{task}"}}],"tools":{tools}}}"#
        );
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            s,
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{task}: {answer}");
    }
    signal(&proxy.0, "-TERM");
    wait_exit(&mut proxy, Duration::from_secs(15)).expect("the proxy exits");
    let lines = lines.join().unwrap();
    use serde_json::Value;
    let events: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let exchanges: Vec<(&str, &str, &str)> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "exchange")
        .map(|e| {
            let f = &e["fields"];
            (
                f["decision"].as_str().unwrap(),
                f["label"].as_str().unwrap(),
                f["gate"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        exchanges,
        [
            ("execute", "pass", ""),
            ("reject", "wrong_tool", "allowlist"),
            ("no_call", "no_call", "")
        ],
        "{lines:#?}"
    );
    let telemetry = events
        .iter()
        .filter(|e| e["target"] == "toolgate::telemetry")
        .count();
    assert_eq!(telemetry, 3, "{lines:#?}");
    for e in &events {
        let ts = e["timestamp"].as_str().expect("a timestamp");
        assert!(ts.ends_with('Z') && ts.len() == 27, "{ts}");
    }
}
