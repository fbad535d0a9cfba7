//! The proxy at the pass-through floor (issue 24): what `toolgate proxy`
//! costs in front of an upstream, measured side by side in one run.
//!
//! A small load generator of its own (`wrk` cannot time a stream's first
//! content; `benches/proxy/wrk.sh` runs both): C keep-alive
//! connections (default 32), each a loop of requests over raw HTTP/1.1, so
//! the client costs little next to the servers. Five targets, interleaved
//! round by round so that a noisy neighbour hits all of them alike:
//!
//! - `direct`: the mock upstream itself;
//! - `observe`, `enforce` (profile `hermes`): the proxy in front of it;
//! - `observe --record`, `enforce --record`: the same, recording into a
//!   temporary directory.
//!
//! Two phases per target and round:
//!
//! 1. throughput: non-streamed requests (half a hermes tool call, half
//!    prose) as fast as the C connections go, for S seconds;
//! 2. streamed time to first byte: streamed prose requests against a mock
//!    that paces its deltas (16 characters every 5 ms, as a fast model
//!    would) over SC connections (default 64), for SS seconds (default S);
//!    TTFB is the time from sending the request to the first byte of the
//!    first non-empty `content` delta. A p99 needs thousands of streams to
//!    mean anything: the table gives the sample count beside it.
//!
//! Everything runs in one process with the `toolgate` binary's allocator
//! (mimalloc), each server on its own two-worker tokio runtime, unless
//! `TOOLGATE_BENCH_TARGETS` names servers run elsewhere (`benches/proxy/wrk.sh`
//! starts the `toolgate` binaries and passes their addresses): then only the
//! load generator runs here.
//!
//! Every response is checked (status 200; a tool call served as
//! `tool_calls` in enforce; a stream ending with `data: [DONE]`); the run
//! exits non-zero if one is not.
//!
//! ```sh
//! flock /work/wt/release.lock cargo run --release -p toolgate-proxy --example passthrough
//! TOOLGATE_BENCH_CONNS=32 TOOLGATE_BENCH_SECS=3 TOOLGATE_BENCH_ROUNDS=3 \
//!   TOOLGATE_BENCH_STREAM_CONNS=64 TOOLGATE_BENCH_STREAM_SECS=3 \
//!   cargo run --release -p toolgate-proxy --example passthrough
//! ```
//!
//! `TOOLGATE_BENCH_ONLY=observe,enforce` runs `direct` and those targets
//! only; `TOOLGATE_BENCH_RECORD_DIR` is where the recordings go (default: the
//! system's temporary directory).
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The `toolgate` binary's allocator (src/main.rs): the proxy and the mock
/// upstream run with it there.
#[global_allocator]
static GLOBAL: toolgate_alloc::Mimalloc = toolgate_alloc::Mimalloc;

mod common;

use common::{env_usize, paced_mock, proxy_cfg, request_body, transcripts};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolgate_proxy::gateway::{self, Mode};
use toolgate_proxy::mock::{self, Mock, MockOptions};

fn request(task: &str, stream: bool) -> Vec<u8> {
    let body = request_body(task, stream).to_string();
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// A response read off a [`Conn`].
struct Resp {
    status: u16,
    body: Vec<u8>,
    /// From the request's write to the first non-empty content delta.
    ttfb: Option<Duration>,
}

/// Where the first non-empty `content` of an SSE body starts.
fn first_content(body: &[u8]) -> bool {
    let mut from = 0;
    while let Some(i) = find(&body[from..], b"\"content\":\"") {
        let at = from + i + 11;
        match body.get(at) {
            Some(b'"') => from = at,
            Some(_) => return true,
            None => return false,
        }
    }
    false
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Conn {
            stream,
            buf: Vec::with_capacity(16 * 1024),
        }
    }

    async fn fill(&mut self) -> std::io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    /// Sends `req` and reads the response (`Content-Length` or chunked).
    async fn exchange(&mut self, req: &[u8], watch_content: bool) -> std::io::Result<Resp> {
        let t0 = Instant::now();
        self.stream.write_all(req).await?;
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i + 4;
            }
            self.fill().await?;
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).to_ascii_lowercase();
        let status: u16 = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
        let length = head.lines().find_map(|l| {
            l.strip_prefix("content-length:")
                .and_then(|v| v.trim().parse::<usize>().ok())
        });
        let chunked = head
            .lines()
            .any(|l| l.starts_with("transfer-encoding:") && l.contains("chunked"));
        let mut body = Vec::new();
        let mut ttfb = None;
        let mut pos = head_end;
        if let Some(len) = length {
            while self.buf.len() < head_end + len {
                self.fill().await?;
            }
            body.extend_from_slice(&self.buf[head_end..head_end + len]);
            pos = head_end + len;
        } else if chunked {
            loop {
                // The chunk-size line.
                let line_end = loop {
                    if let Some(i) = find(&self.buf[pos..], b"\r\n") {
                        break pos + i;
                    }
                    self.fill().await?;
                };
                let size_text = String::from_utf8_lossy(&self.buf[pos..line_end]).to_string();
                let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
                    .map_err(|_| {
                    std::io::Error::other(format!("bad chunk size {size_text:?}"))
                })?;
                pos = line_end + 2;
                while self.buf.len() < pos + size + 2 {
                    self.fill().await?;
                }
                body.extend_from_slice(&self.buf[pos..pos + size]);
                pos += size + 2;
                if watch_content && ttfb.is_none() && first_content(&body) {
                    ttfb = Some(t0.elapsed());
                }
                if size == 0 {
                    break;
                }
            }
        } else {
            return Err(std::io::Error::other("neither content-length nor chunked"));
        }
        self.buf.drain(..pos);
        Ok(Resp { status, body, ttfb })
    }
}

/// What one target serves in one phase.
#[derive(Default, Clone)]
struct Tally {
    requests: usize,
    secs: f64,
    ttfb_ms: Vec<f64>,
    errors: usize,
}

fn check(resp: &Resp, task: &str, stream: bool, enforce: bool) -> Result<(), String> {
    if resp.status != 200 {
        return Err(format!("status {}", resp.status));
    }
    let body = String::from_utf8_lossy(&resp.body);
    if stream {
        if !body.trim_end().ends_with("data: [DONE]") {
            return Err(format!("stream without [DONE]: {body}"));
        }
        if resp.ttfb.is_none() {
            return Err(format!("stream without content: {body}"));
        }
        return Ok(());
    }
    let v: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
    let message = &v["choices"][0]["message"];
    let ok = match (task, enforce) {
        ("call", true) => message["tool_calls"][0]["function"]["name"] == "get_weather",
        ("call", false) => message["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("<tool_call>")),
        _ => message["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("The weather")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("unexpected answer for {task}: {body}"))
    }
}

/// C connections to `addr` for `secs`: non-streamed (alternating tasks per
/// connection) or streamed prose.
async fn phase(addr: SocketAddr, conns: usize, secs: f64, stream: bool, enforce: bool) -> Tally {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..conns {
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::open(addr).await;
            let task = if stream || c % 2 == 1 {
                "prose"
            } else {
                "call"
            };
            let req = request(task, stream);
            let mut t = Tally::default();
            while Instant::now() < deadline {
                match conn.exchange(&req, stream).await {
                    Ok(resp) => match check(&resp, task, stream, enforce) {
                        Ok(()) => {
                            t.requests += 1;
                            if let Some(d) = resp.ttfb {
                                t.ttfb_ms.push(d.as_secs_f64() * 1000.0);
                            }
                        }
                        Err(e) => {
                            t.errors += 1;
                            if t.errors == 1 {
                                eprintln!("error: {}", e.chars().take(300).collect::<String>());
                            }
                        }
                    },
                    Err(e) => {
                        t.errors += 1;
                        eprintln!("connection error {addr}: {e}");
                        conn = Conn::open(addr).await;
                    }
                }
            }
            t
        }));
    }
    let mut all = Tally::default();
    for task in tasks {
        let t = task.await.unwrap();
        all.requests += t.requests;
        all.errors += t.errors;
        all.ttfb_ms.extend(t.ttfb_ms);
    }
    all.secs = started.elapsed().as_secs_f64();
    all
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

struct Target {
    name: String,
    enforce: bool,
    fast: SocketAddr,
    paced: SocketAddr,
    _servers: Vec<toolgate_proxy::Background>,
    throughput: Tally,
    streamed: Tally,
}

async fn run() -> usize {
    let conns = env_usize("TOOLGATE_BENCH_CONNS", 32);
    let secs = env_usize("TOOLGATE_BENCH_SECS", 3) as f64;
    let rounds = env_usize("TOOLGATE_BENCH_ROUNDS", 3);
    let stream_conns = env_usize("TOOLGATE_BENCH_STREAM_CONNS", 64);
    let stream_secs = env_usize("TOOLGATE_BENCH_STREAM_SECS", secs as usize) as f64;
    let record = tempfile::tempdir_in(
        std::env::var("TOOLGATE_BENCH_RECORD_DIR")
            .unwrap_or_else(|_| std::env::temp_dir().display().to_string()),
    )
    .unwrap();
    let mut targets = match std::env::var("TOOLGATE_BENCH_TARGETS") {
        Ok(list) => external(&list),
        Err(_) => spawned(record.path(), stream_conns),
    };
    // TOOLGATE_BENCH_ONLY=observe,enforce keeps `direct` and those (profiling).
    if let Ok(only) = std::env::var("TOOLGATE_BENCH_ONLY") {
        let keep: Vec<&str> = only.split(',').map(str::trim).collect();
        targets.retain(|t| t.name == "direct" || keep.contains(&t.name.as_str()));
    }
    // Warm-up: connections, engines, tool caches.
    for t in &targets {
        phase(t.fast, 4, 0.3, false, t.enforce).await;
        phase(t.paced, 4, 0.3, true, t.enforce).await;
    }
    let mut errors = 0;
    for round in 0..rounds {
        for t in targets.iter_mut() {
            let a = phase(t.fast, conns, secs, false, t.enforce).await;
            let b = phase(t.paced, stream_conns, stream_secs, true, t.enforce).await;
            eprintln!(
                "round {round} {:>18}: {:>8.0} req/s, streamed {:>6.0} req/s",
                t.name,
                a.requests as f64 / a.secs,
                b.requests as f64 / b.secs
            );
            errors += a.errors + b.errors;
            t.throughput.requests += a.requests;
            t.throughput.secs += a.secs;
            t.streamed.requests += b.requests;
            t.streamed.secs += b.secs;
            t.streamed.ttfb_ms.extend(b.ttfb_ms);
        }
    }
    for t in targets.iter_mut() {
        t.streamed.ttfb_ms.sort_by(f64::total_cmp);
    }
    let rps = |t: &Tally| t.requests as f64 / t.secs;
    let direct = targets[0].clone_stats();
    println!(
        "{conns} connections × {secs} s (non-streamed), {stream_conns} × {stream_secs} s (streamed), {rounds} rounds, targets interleaved\n"
    );
    println!(
        "| target | req/s (non-streamed) | × direct | × same mode without --record | streamed req/s | streams (TTFB samples) | TTFB p50 ms | TTFB p99 ms | p50 × direct | p99 × direct |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let plain: Vec<(String, f64)> = targets
        .iter()
        .map(|t| (t.name.clone(), rps(&t.throughput)))
        .collect();
    for t in &targets {
        let r = rps(&t.throughput);
        let vs_plain = t
            .name
            .strip_suffix(" --record")
            .and_then(|base| plain.iter().find(|(n, _)| n == base))
            .map_or("".to_string(), |(_, b)| format!("{:.2}×", r / b));
        let (p50, p99) = (
            percentile(&t.streamed.ttfb_ms, 0.5),
            percentile(&t.streamed.ttfb_ms, 0.99),
        );
        println!(
            "| {} | {:.0} | {:.2}× | {} | {:.0} | {} | {:.2} | {:.2} | {:.2}× | {:.2}× |",
            t.name,
            r,
            r / direct.0,
            vs_plain,
            rps(&t.streamed),
            t.streamed.ttfb_ms.len(),
            p50,
            p99,
            p50 / direct.1,
            p99 / direct.2,
        );
    }
    for t in &targets[1..] {
        // Recorded here only when this process runs the proxies.
        if t.name.ends_with("--record") && !t._servers.is_empty() {
            let dir = record.path().join(t.name.replace(' ', "_"));
            let (files, lines) = count_records(&dir);
            println!(
                "\n{}: {} exchanges recorded in {} files",
                t.name, lines, files
            );
        }
    }
    errors
}

/// The five targets, each server spawned in this process: the mock
/// upstream (a fast one and a paced one) and the proxies in front of them.
fn spawned(record: &std::path::Path, stream_conns: usize) -> Vec<Target> {
    let fast = mock::spawn(Mock::from_transcripts(
        &transcripts(),
        MockOptions::default(),
    ))
    .unwrap();
    let paced = paced_mock(16, Duration::from_millis(5));
    let mut targets = vec![Target {
        name: "direct".into(),
        enforce: false,
        fast: fast.addr(),
        paced: paced.addr(),
        throughput: Tally::default(),
        streamed: Tally::default(),
        _servers: Vec::new(),
    }];
    for (name, mode, rec) in [
        ("observe", Mode::Observe, false),
        ("enforce", Mode::Enforce, false),
        ("observe --record", Mode::Observe, true),
        ("enforce --record", Mode::Enforce, true),
    ] {
        let dir = rec.then(|| record.join(name.replace(' ', "_")));
        let a = gateway::spawn(proxy_cfg(fast.base_url(), mode, dir.clone())).unwrap();
        let mut streamed = proxy_cfg(paced.base_url(), mode, dir);
        // Every streamed connection is served (the default cap is 64).
        streamed.max_streams = streamed.max_streams.max(stream_conns);
        let b = gateway::spawn(streamed).unwrap();
        targets.push(Target {
            name: name.into(),
            enforce: mode == Mode::Enforce,
            fast: a.addr(),
            paced: b.addr(),
            _servers: vec![a, b],
            throughput: Tally::default(),
            streamed: Tally::default(),
        });
    }
    // The mocks live as long as the targets that forward to them.
    targets[0]._servers = vec![fast, paced];
    targets
}

/// Targets served by other processes (`benches/proxy/wrk.sh`):
/// `TOOLGATE_BENCH_TARGETS="direct=FAST,PACED;observe=FAST,PACED;…"`, each
/// address `127.0.0.1:PORT`; the first is the baseline, a name containing
/// `enforce` is checked as enforce.
fn external(list: &str) -> Vec<Target> {
    list.split(';')
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            let (name, addrs) = t
                .split_once('=')
                .unwrap_or_else(|| panic!("TOOLGATE_BENCH_TARGETS: `{t}` is not NAME=FAST,PACED"));
            let (fast, paced) = addrs
                .split_once(',')
                .unwrap_or_else(|| panic!("TOOLGATE_BENCH_TARGETS: `{addrs}` is not FAST,PACED"));
            Target {
                name: name.trim().to_string(),
                enforce: name.contains("enforce"),
                fast: fast.trim().parse().expect("FAST is an address"),
                paced: paced.trim().parse().expect("PACED is an address"),
                _servers: Vec::new(),
                throughput: Tally::default(),
                streamed: Tally::default(),
            }
        })
        .collect()
}

/// Files and lines in a record directory.
fn count_records(dir: &std::path::Path) -> (usize, usize) {
    let mut files = 0;
    let mut lines = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        files += 1;
        lines += std::fs::read_to_string(e.path())
            .map(|t| t.lines().count())
            .unwrap_or(0);
    }
    (files, lines)
}

impl Target {
    /// req/s, TTFB p50 and p99.
    fn clone_stats(&self) -> (f64, f64, f64) {
        (
            self.throughput.requests as f64 / self.throughput.secs,
            percentile(&self.streamed.ttfb_ms, 0.5),
            percentile(&self.streamed.ttfb_ms, 0.99),
        )
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let errors = rt.block_on(run());
    if errors > 0 {
        eprintln!("{errors} requests failed");
        std::process::exit(1);
    }
}
