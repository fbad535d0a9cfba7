//! End to end through the binary: `toolgate mock-upstream`, `toolgate proxy
//! --mode enforce` and `toolgate run` against the proxy, both with the
//! standard `OTEL_*` variables pointing at an in-process OTLP/HTTP collector;
//! the proxy's spans arrive when it is stopped (SIGTERM flushes them), the
//! runner's when it ends; `toolgate import` of the collector's OTLP JSON
//! gives back the transcripts the proxy recorded.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use toolgate_otel::{Collector, Received};

const CALL: &str =
    r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>"#;

/// A child process killed when dropped (the test started it).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn toolgate(args: &[&str], otel: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args).env("RUST_LOG", "warn").stdin(Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in otel {
        cmd.env(k, v);
    }
    cmd
}

/// Starts a server and reads its stderr until the line naming the address
/// it serves (`… serving http://ADDR/v1…`); the lines before it are returned.
fn start(mut cmd: Command) -> (Server, String, Vec<String>) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut before = Vec::new();
    let url = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{before:?}");
        if let Some(at) = line.find("serving http://") {
            break line[at + "serving ".len()..]
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != ',')
                .collect::<String>();
        }
        before.push(line);
    };
    std::thread::spawn(move || {
        for l in stderr.lines().map_while(Result::ok) {
            eprintln!("[server] {l}");
        }
    });
    (Server(child), url, before)
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else if p.extension().is_some_and(|e| e == "json" || e == "jsonl") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn transcripts(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    for p in files(dir) {
        let text = std::fs::read_to_string(&p).unwrap();
        if p.extension().is_some_and(|e| e == "jsonl") {
            out.extend(text.lines().map(|l| serde_json::from_str(l).unwrap()));
        } else {
            out.push(serde_json::from_str(&text).unwrap());
        }
    }
    out
}

fn text(s: &Received, k: &str) -> String {
    s.attributes
        .get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Tool definitions as (name, parameters), OpenAI-nested or flat.
fn tool_defs(t: &Value) -> Vec<(Value, Value)> {
    t["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let f = d.get("function").unwrap_or(d);
            (f["name"].clone(), f["parameters"].clone())
        })
        .collect()
}

#[test]
fn proxy_and_runner_traces_reach_an_otlp_collector_and_import_back() {
    let collector = Collector::start().unwrap();
    let base = collector.base_url();
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers");
    std::fs::create_dir(&answers).unwrap();
    let t = |task: &str, out: &str| json!({"model": "qwen3-8b", "task": task, "output": out, "finish_reason": "stop"});
    std::fs::write(answers.join("a.json"), t("correct", CALL).to_string()).unwrap();
    std::fs::write(
        answers.join("b.json"),
        t(
            "forbidden",
            r#"<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>"#,
        )
        .to_string(),
    )
    .unwrap();
    let tools = json!([{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]);
    let suite = dir.path().join("suite.jsonl");
    let line = |task: &str| {
        json!({"task": task, "messages": [{"role": "user", "content": task}], "tools": tools,
               "expect": {"calls": [{"name": "get_weather"}]}})
        .to_string()
    };
    std::fs::write(
        &suite,
        format!("{}\n{}\n", line("correct"), line("forbidden")),
    )
    .unwrap();
    let record = dir.path().join("record");

    let (_mock, upstream, _) = start(toolgate(
        &[
            "mock-upstream",
            answers.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    ));
    let capture = ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
    let (mut proxy, url, before) = start(toolgate(
        &[
            "proxy",
            "--upstream",
            &upstream,
            "--listen",
            "127.0.0.1:0",
            "--mode",
            "enforce",
            "--profile",
            "hermes",
            "--record",
            record.to_str().unwrap(),
        ],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &base),
            ("OTEL_SERVICE_NAME", "gateway"),
            capture,
        ],
    ));
    assert!(
        before
            .iter()
            .any(|l| l.contains("exporting traces to") && l.contains("/v1/traces")),
        "{before:?}"
    );

    let out = dir.path().join("runs");
    let run = toolgate(
        &[
            "run",
            suite.to_str().unwrap(),
            "--base-url",
            &url,
            "--model",
            "qwen3-8b",
            "-k",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
            "--retry-delay-ms",
            "1",
        ],
        &[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &collector.endpoint()),
            capture,
        ],
    )
    .output()
    .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    // The runner flushed its spans before it exited.
    let runner: Vec<Received> = collector
        .spans()
        .into_iter()
        .filter(|s| s.service_name.as_deref() == Some("toolgate-run"))
        .collect();
    let chats: Vec<&Received> = runner
        .iter()
        .filter(|s| s.name == "chat qwen3-8b")
        .collect();
    assert_eq!(chats.len(), 2, "{runner:#?}");
    let tool = runner
        .iter()
        .find(|s| s.name == "execute_tool get_weather")
        .unwrap_or_else(|| panic!("{runner:#?}"));
    let parent = chats
        .iter()
        .find(|c| c.span_id == tool.parent_span_id)
        .unwrap();
    assert_eq!(text(parent, "toolgate.task"), "correct");
    assert_eq!(text(parent, "toolgate.decision"), "execute");

    // SIGTERM: the proxy drains, then flushes its spans.
    let stopped = Command::new("kill")
        .args(["-TERM", &proxy.0.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    while proxy.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the proxy did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let gateway: Vec<Received> = collector
        .spans()
        .into_iter()
        .filter(|s| s.service_name.as_deref() == Some("gateway"))
        .collect();
    assert_eq!(gateway.len(), 2, "{gateway:#?}");
    for s in &gateway {
        assert_eq!(text(s, "gen_ai.operation.name"), "chat");
        assert_eq!(text(s, "gen_ai.request.model"), "qwen3-8b");
        assert_eq!(text(s, "toolgate.profile"), "hermes");
        assert_eq!(text(s, "toolgate.profile.source"), "given");
    }
    let reject = gateway
        .iter()
        .find(|s| text(s, "toolgate.decision") == "reject")
        .unwrap();
    assert_eq!(text(reject, "error.type"), "toolgate.reject.allowlist");

    // `toolgate import` of the collector's OTLP JSON: the proxy's recordings.
    let spans_file = dir.path().join("spans.jsonl");
    std::fs::write(&spans_file, collector.otlp_json()).unwrap();
    let imported_dir = dir.path().join("imported");
    let import = toolgate(
        &[
            "import",
            spans_file.to_str().unwrap(),
            "--out",
            imported_dir.to_str().unwrap(),
        ],
        &[],
    )
    .output()
    .unwrap();
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    let imported = transcripts(&imported_dir);
    // Two proxy spans and two runner spans.
    assert_eq!(imported.len(), 4, "{imported:#?}");
    let recorded = transcripts(&record);
    assert_eq!(recorded.len(), 2);
    for rec in &recorded {
        let found = imported.iter().any(|imp| {
            ["model", "output", "finish_reason"]
                .iter()
                .all(|k| imp[k] == rec[k])
                && tool_defs(imp) == tool_defs(rec)
                && imp.get("tool_calls").cloned().unwrap_or(json!([]))
                    == rec.get("tool_calls").cloned().unwrap_or(json!([]))
        });
        assert!(found, "{rec:#} not in {imported:#?}");
    }
    // And they are judged alike: every mode's label of each recording is
    // the label of an imported transcript (raw text replayed, not only
    // `native`).
    let labels = |dir: &Path| -> Vec<Value> {
        let out = toolgate(
            &[
                "label",
                "--profile",
                "hermes",
                "--format",
                "jsonl",
                dir.to_str().unwrap(),
            ],
            &[],
        )
        .output()
        .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["labels"].clone())
            .collect()
    };
    let (from_record, from_import) = (labels(&record), labels(&imported_dir));
    assert_eq!(from_record.len(), 2);
    assert!(
        from_record.iter().any(
            |l| l["hermes"] == json!("wrong_tool") || l["hermes"] == json!("hallucinated_tool")
        ),
        "{from_record:?}"
    );
    for l in &from_record {
        assert!(from_import.contains(l), "{l} not in {from_import:?}");
    }
}

#[test]
fn traces_are_off_without_an_endpoint_and_bad_otel_settings_stop_the_command_before_it_starts() {
    // No OTEL_* variable: the first line is the serving line, no export note.
    let (_proxy, _, before) = start(toolgate(
        &[
            "proxy",
            "--upstream",
            "http://127.0.0.1:9/v1",
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    ));
    assert!(before.is_empty(), "{before:?}");
    for (k, v) in [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_TRACES_EXPORTER", "zipkin"),
    ] {
        let out = toolgate(
            &[
                "proxy",
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--listen",
                "127.0.0.1:0",
            ],
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
                (k, v),
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(2), "{k}={v}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{k}={v}")), "{err}");
    }
}

#[test]
fn with_profile_auto_the_proxy_s_spans_say_why_each_model_got_its_profile() {
    let collector = Collector::start().unwrap();
    let base = collector.base_url();
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers");
    std::fs::create_dir(&answers).unwrap();
    let answer =
        json!({"model": "qwen3-8b", "task": "correct", "output": CALL, "finish_reason": "stop"});
    std::fs::write(answers.join("a.json"), answer.to_string()).unwrap();
    let suite = dir.path().join("suite.jsonl");
    let task = json!({"task": "correct", "messages": [{"role": "user", "content": "correct"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
        "expect": {"calls": [{"name": "get_weather"}]}});
    std::fs::write(&suite, format!("{task}\n")).unwrap();
    let (_mock, upstream, _) = start(toolgate(
        &[
            "mock-upstream",
            answers.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    ));
    let (mut proxy, url, _) = start(toolgate(
        &[
            "proxy",
            "--upstream",
            &upstream,
            "--listen",
            "127.0.0.1:0",
            "--mode",
            "enforce",
            "--profile",
            "auto",
        ],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &base)],
    ));
    let out = dir.path().join("runs");
    let run = toolgate(
        &[
            "run",
            suite.to_str().unwrap(),
            "--base-url",
            &url,
            "--model",
            "qwen3-8b",
            "--model",
            "some-unknown-model",
            "-k",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
        ],
        &[],
    )
    .output()
    .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    Command::new("kill")
        .args(["-TERM", &proxy.0.id().to_string()])
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while proxy.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the proxy did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let spans = collector.spans();
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let by_model = |m: &str| {
        spans
            .iter()
            .find(|s| text(s, "gen_ai.request.model") == m)
            .unwrap_or_else(|| panic!("{m}: {spans:#?}"))
    };
    let known = by_model("qwen3-8b");
    assert_eq!(text(known, "toolgate.profile.source"), "by name");
    assert_eq!(text(known, "toolgate.profile"), "hermes");
    assert_eq!(text(known, "toolgate.decision"), "execute");
    assert_eq!(
        text(by_model("some-unknown-model"), "toolgate.profile.source"),
        "default"
    );
    // No content without the opt-in.
    assert!(
        spans
            .iter()
            .all(|s| !s.attributes.contains_key("gen_ai.output.messages"))
    );
}

/// Probe (stop 43): the banner printed the OTLP endpoint whole, user,
/// password and query included (`http://usr:PW@…/v1/traces?key=Q`), where
/// the upstream's credentials on the next line were masked. One rule for
/// both now (`sanitize::url_shown`).
#[test]
fn the_banner_never_shows_the_endpoints_credentials() {
    let (_proxy, _, before) = start(toolgate(
        &[
            "proxy",
            "--upstream",
            "http://u:sk-upstream-secret@127.0.0.1:9/v1",
            "--listen",
            "127.0.0.1:0",
        ],
        &[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://usr:otlp-password@127.0.0.1:9/v1/traces?key=otlp-query-key",
        )],
    ));
    let banner = before
        .iter()
        .find(|l| l.contains("exporting traces to"))
        .unwrap_or_else(|| panic!("{before:?}"));
    assert!(
        banner.contains("http://***@127.0.0.1:9/v1/traces?***"),
        "{banner}"
    );
    for secret in ["otlp-password", "otlp-query-key", "sk-upstream-secret"] {
        assert!(before.iter().all(|l| !l.contains(secret)), "{before:?}");
    }
}
