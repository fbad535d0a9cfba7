//! The client's credentials, echoed by an upstream, stay out of the
//! records and the log lines (probe 44, item 4): the README says the proxy
//! "forwards `Authorization` and never records or logs it", and `toolgate
//! run` scrubbed the key's text from its samples, but the proxy recorded an
//! echoed key in `output`, `response` and `proxy.error`, and logged it in
//! its `upstream stream broken` / `upstream answer refused` warnings. The
//! client, which sent the key, still gets the answer as it came. A test
//! binary of its own: it installs the process's log subscriber.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolgate_proxy::gateway::{self, Engines, Mode, ProxyConfig};
use toolgate_testkit::record::when_written;
use toolgate_validator::{Engine, Profile};

const KEY: &str = "sk-proj-LONGKEY0123456789abcdefXYZ";
const API_KEY: &str = "xk-API0123456789abcdef0123";
/// Under the 16-byte minimum: a placeholder, a word a model writes too.
const SHORT: &str = "EMPTY";

/// The log lines written so far.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// An upstream that echoes the request's credential headers, as the
/// request's `x-kind` says: in its answer's content, in a streamed error
/// event, or in its content type.
fn echoing_upstream() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for io in listener.incoming() {
            let Ok(mut io) = io else { return };
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                let head = loop {
                    let n = io.read(&mut buf).unwrap();
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got).into_owned();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        if got.len() >= end + 4 + len {
                            break text[..end].to_string();
                        }
                    }
                };
                let field = |name: &str| {
                    head.lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
                        })
                        .unwrap_or_default()
                };
                let auth = field("authorization");
                let answer = match field("x-kind").as_str() {
                    "content" => {
                        let content = format!(
                            "your key is {auth}, x-api-key {}, api-key {}",
                            field("x-api-key"),
                            field("api-key")
                        );
                        let body = serde_json::json!({"id": "c", "object": "chat.completion",
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                         "finish_reason": "stop"}]})
                        .to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    "sse" => format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {}\n\n",
                        serde_json::json!({"error": {"message": format!("bad key {auth}")}})
                    ),
                    _ => {
                        let body = serde_json::json!({"error": auth}).to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/{}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            auth.replace(' ', "-"),
                            body.len()
                        )
                    }
                };
                let _ = io.write_all(answer.as_bytes());
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_key_is_scrubbed_from_records_and_log_lines() {
    let logs = Logs::default();
    let writer = logs.clone();
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish(),
    )
    .unwrap();
    let up = echoing_upstream();
    for mode in [Mode::Enforce, Mode::Shadow] {
        for (kind, stream, warning) in [
            ("content", false, None),
            ("sse", true, Some("upstream stream broken")),
            ("ctype", false, Some("upstream answer refused")),
        ] {
            let what = format!("{mode:?} {kind}");
            let record = tempfile::tempdir().unwrap();
            let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
            cfg.mode = mode;
            cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
            cfg.record = Some(record.path().to_path_buf());
            cfg.timeout = Duration::from_secs(5);
            let proxy = gateway::spawn(cfg).unwrap();
            let logged_before = logs.text().len();
            let answer = reqwest::Client::new()
                .post(format!("{}/chat/completions", proxy.base_url()))
                .header("authorization", format!("Bearer {KEY}"))
                .header("x-api-key", API_KEY)
                .header("api-key", SHORT)
                .header("x-kind", kind)
                .timeout(Duration::from_secs(10))
                .json(&serde_json::json!({"model": "m", "stream": stream,
                    "messages": [{"role": "user", "content": "hi"}]}))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap_or_default();
            let lines = when_written(record.path(), 1);
            let recorded = serde_json::to_string(&lines).unwrap();
            assert!(!recorded.contains("LONGKEY"), "{what}: {recorded}");
            assert!(!recorded.contains(API_KEY), "{what}: {recorded}");
            assert!(recorded.contains("[redacted]"), "{what}: {recorded}");
            let logged = logs.text()[logged_before..].to_string();
            assert!(!logged.contains("LONGKEY"), "{what}: {logged}");
            match warning {
                Some(w) => {
                    let line = logged.lines().find(|l| l.contains(w)).unwrap_or_default();
                    assert!(line.contains("[redacted]"), "{what}: {logged}");
                }
                None => {
                    let l = &lines[0];
                    assert_eq!(
                        l["output"],
                        format!("your key is [redacted], x-api-key [redacted], api-key {SHORT}"),
                        "{what}: {l}"
                    );
                    assert!(
                        l["response"]["choices"][0]["message"]["content"]
                            .as_str()
                            .unwrap()
                            .contains("your key is [redacted],"),
                        "{what}: {l}"
                    );
                    // The client sent the key: its answer is as it came.
                    assert!(answer.contains(KEY), "{what}: {answer}");
                }
            }
        }
    }
}
