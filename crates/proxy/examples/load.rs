//! Load test of `toolgate proxy` on loopback, bounded in count and time:
//!
//! 1. added latency: N sequential non-streamed requests straight to the mock
//!    upstream and N through the proxy (`enforce`, profile `hermes`),
//!    interleaved; median and p95 of each, and the difference;
//! 2. the same through the proxy with `--record` (a transcript written per
//!    exchange, off the request path);
//! 3. 100 concurrent streamed requests through the proxy (the mock pauses
//!    between deltas so that they are all open at once): every stream must
//!    end with `data: [DONE]` and carry its tool call or its prose.
//!
//! ```sh
//! cargo run -p toolgate-proxy --example load            # N=300, 100 streams
//! TOOLGATE_LOAD_N=1000 TOOLGATE_LOAD_STREAMS=200 cargo run -p toolgate-proxy --example load
//! ```
//!
//! Exits non-zero when a request fails. The whole run is capped at 300 s.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{env_usize, paced_mock, request_body, transcripts};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use toolgate_proxy::gateway::{self, Mode, ProxyConfig};
use toolgate_proxy::mock::{self, Mock, MockOptions};

fn request(task: &str, stream: bool) -> Value {
    request_body(task, stream)
}

fn proxy_cfg(upstream: String, record: Option<PathBuf>) -> ProxyConfig {
    common::proxy_cfg(upstream, Mode::Enforce, record)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn one(client: &reqwest::Client, base: &str, task: &str) -> f64 {
    let t = Instant::now();
    let r = client
        .post(format!("{base}/chat/completions"))
        .json(&request(task, false))
        .send()
        .await
        .expect("request");
    assert!(r.status().is_success(), "status {}", r.status());
    let v: Value = r.json().await.expect("json");
    assert!(v["choices"][0].is_object());
    t.elapsed().as_secs_f64() * 1000.0
}

/// Interleaved sequential requests: (direct ms, proxied ms), sorted.
async fn latency(
    client: &reqwest::Client,
    direct: &str,
    proxied: &str,
    n: usize,
) -> (Vec<f64>, Vec<f64>) {
    for _ in 0..20 {
        one(client, direct, "call").await;
        one(client, proxied, "call").await;
    }
    let mut d = Vec::with_capacity(n);
    let mut p = Vec::with_capacity(n);
    for i in 0..n {
        let task = if i % 2 == 0 { "call" } else { "prose" };
        d.push(one(client, direct, task).await);
        p.push(one(client, proxied, task).await);
    }
    d.sort_by(f64::total_cmp);
    p.sort_by(f64::total_cmp);
    (d, p)
}

fn report(name: &str, d: &[f64], p: &[f64]) {
    let (dm, pm) = (percentile(d, 0.5), percentile(p, 0.5));
    let (d95, p95) = (percentile(d, 0.95), percentile(p, 0.95));
    println!(
        "| {name} | {} | {dm:.3} | {pm:.3} | **{:.3}** | {d95:.3} | {p95:.3} | {:.2}× |",
        d.len(),
        pm - dm,
        pm / dm
    );
}

async fn run() {
    let n = env_usize("TOOLGATE_LOAD_N", 300);
    let streams = env_usize("TOOLGATE_LOAD_STREAMS", 100);
    let mock = mock::spawn(Mock::from_transcripts(
        &transcripts(),
        MockOptions::default(),
    ))
    .unwrap();
    let proxy = gateway::spawn(proxy_cfg(mock.base_url(), None)).unwrap();
    let record = tempfile::tempdir().unwrap();
    let recording = gateway::spawn(proxy_cfg(
        mock.base_url(),
        Some(record.path().to_path_buf()),
    ))
    .unwrap();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .unwrap();

    println!(
        "| path | n | direct median ms | proxied median ms | added ms | direct p95 | proxied p95 | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let (d, p) = latency(&client, &mock.base_url(), &proxy.base_url(), n).await;
    report("non-streamed, enforce", &d, &p);
    let (d, p) = latency(&client, &mock.base_url(), &recording.base_url(), n).await;
    report("non-streamed, enforce + --record", &d, &p);

    // Concurrent streams: a slow mock keeps them open together.
    let slow = paced_mock(8, Duration::from_millis(20));
    let slow_proxy = gateway::spawn(proxy_cfg(slow.base_url(), None)).unwrap();
    let open = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..streams {
        let client = client.clone();
        let base = slow_proxy.base_url();
        let (open, peak) = (Arc::clone(&open), Arc::clone(&peak));
        tasks.push(tokio::spawn(async move {
            let task = if i % 2 == 0 { "call" } else { "prose" };
            let now = open.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            let r = client
                .post(format!("{base}/chat/completions"))
                .json(&request(task, true))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let body = r.text().await.map_err(|e| e.to_string());
            open.fetch_sub(1, Ordering::SeqCst);
            let body = body?;
            let content: String = body
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter_map(|d| serde_json::from_str::<Value>(d).ok())
                .filter_map(|c| {
                    c.pointer("/choices/0/delta/content")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .collect();
            let ok = body.trim_end().ends_with("data: [DONE]")
                && if task == "call" {
                    body.contains("\"tool_calls\"")
                        && body.contains("\"finish_reason\":\"tool_calls\"")
                } else {
                    content.starts_with("The weather in Antwerp is mild")
                        && !body.contains("\"tool_calls\"")
                };
            if ok {
                Ok(())
            } else {
                Err(format!("bad stream for {task}: {body}"))
            }
        }));
    }
    let mut errors = 0;
    for task in tasks {
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                errors += 1;
                eprintln!("stream error: {}", e.chars().take(300).collect::<String>());
            }
            Err(e) => {
                errors += 1;
                eprintln!("task error: {e}");
            }
        }
    }
    println!();
    println!(
        "concurrent streams through the proxy: {streams} started, {} ok, {errors} errors, peak {} in flight at once, {:.0} ms wall",
        streams - errors,
        peak.load(Ordering::SeqCst),
        t.elapsed().as_secs_f64() * 1000.0
    );
    let recorded = std::fs::read_dir(record.path()).unwrap().count();
    println!("recorded exchanges (with --record): {recorded}");
    if errors > 0 {
        std::process::exit(1);
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        if tokio::time::timeout(Duration::from_secs(300), run())
            .await
            .is_err()
        {
            eprintln!("load test: over 300 s, stopped");
            std::process::exit(2);
        }
    });
}
