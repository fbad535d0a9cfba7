//! `toolgate proxy` and `toolgate mock-upstream`: the network commands. The
//! servers live in `toolgate-proxy` (the only crate that links tokio); this
//! module only reads the flags and reports.

use crate::EXIT_OK;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use toolgate_core::sanitize::one_line;
use toolgate_proxy::mock::{self, Mock, MockOptions};

/// `toolgate mock-upstream DIR [--listen ADDR]`.
#[derive(Args, Debug)]
pub struct MockArgs {
    /// Directory (or file) of transcripts whose outputs are the answers.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8001")]
    listen: SocketAddr,
    /// Characters per streamed delta.
    #[arg(long, value_name = "N", default_value_t = 4)]
    delta_chars: usize,
    /// End a streamed delta after every `<`, `[`, `{`, `|`, so that tool-call
    /// openers arrive split across deltas.
    #[arg(long)]
    split_openers: bool,
    /// Return the transcripts' `tool_calls` and `reasoning` as the server's
    /// parsed `tool_calls` and `reasoning_content`.
    #[arg(long)]
    native: bool,
    /// Pause between streamed deltas, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    delay_ms: u64,
    /// Serve connections on N single-threaded runtimes, one connection on
    /// one (0: one per core), as `toolgate proxy` does; without it, on
    /// tokio's work-stealing pool, the upstream the proxy benchmarks use.
    /// At most 256.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=256))]
    workers: Option<u16>,
}

/// Runs the mock upstream until Ctrl-C.
pub fn mock_upstream(args: MockArgs) -> Result<u8> {
    let options = MockOptions {
        delta_chars: args.delta_chars,
        split_openers: args.split_openers,
        native: args.native,
        delta_delay: Duration::from_millis(args.delay_ms),
    };
    let (mock, errors) = Mock::load(&args.dir, options);
    for e in &errors {
        eprintln!("toolgate: skipped {}", one_line(&e.to_string()));
    }
    if mock.is_empty() {
        bail!(
            "no transcript to answer with under {}",
            one_line(&args.dir.display().to_string())
        );
    }
    let count = mock.len();
    mock::run_blocking(mock, args.listen, args.workers.map(usize::from), |addr| {
        eprintln!("toolgate mock-upstream: {count} transcripts, serving http://{addr}/v1");
    })
    .with_context(|| format!("cannot serve on {}", args.listen))?;
    Ok(EXIT_OK)
}

/// `toolgate proxy --upstream URL [--listen ADDR] [--profile P|auto]
/// [--mode observe|shadow|enforce] [--record DIR]`.
#[derive(Args, Debug)]
pub struct ProxyArgs {
    /// The upstream's OpenAI base URL, e.g. `http://127.0.0.1:8000/v1`.
    #[arg(long, value_name = "URL")]
    upstream: String,
    /// Address to listen on. Loopback by default: the proxy forwards the
    /// client's credentials, so exposing it is a decision to take on purpose.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// `observe` (forward unchanged, record), `shadow` (also decision
    /// headers) or `enforce` (serve the pipeline's decision).
    #[arg(long, value_enum, default_value_t = ModeArg::Observe)]
    mode: ModeArg,
    /// Profile: a built-in name, a TOML file, or `auto` (the default: per
    /// model, the `[models]` globs of `toolgate.toml`, then the built-in
    /// family table, else `default`).
    #[arg(long, value_name = "P|auto")]
    profile: Option<String>,
    /// Custom patterns file (TOML); `toolgate.toml` is read too when present.
    #[arg(long, value_name = "FILE")]
    patterns: Option<PathBuf>,
    /// Declared formats file (TOML); `toolgate.toml` is read too when present.
    #[arg(long, value_name = "FILE")]
    formats: Option<PathBuf>,
    /// Record every exchange as a transcript in this directory.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// A JSON pointer into the request (e.g. `/messages/0/content`) whose
    /// value is recorded as "[redacted]", in the recorded request and in
    /// the record's copies of it (`model`, `tools`, `tool_choice`). Logs,
    /// /metrics labels and trace span names still name the model; the
    /// upstream's answer is recorded as it came. Repeatable.
    #[arg(long, value_name = "POINTER")]
    redact: Vec<String>,
    /// In `enforce`, re-roll a sampling artifact (malformed_json,
    /// truncation, escaping_error) up to N times before the first byte.
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,
    /// Upstream timeout in seconds: the whole answer, or the pause between
    /// two reads of a stream.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    timeout: u64,
    /// Seconds a client may take to send a request's headers, and its body;
    /// and how long an answer's write may wait for the client to read (a
    /// client that reads nothing for that long is disconnected).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    client_timeout: u64,
    /// The largest request body accepted, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    max_request_mib: usize,
    /// The most JSON values (objects, arrays, strings, numbers, booleans,
    /// nulls, and object keys, one each) a chat request body may hold;
    /// more get a 413. Bounds what reading a body costs: a small value
    /// costs far more memory than its bytes.
    #[arg(long, value_name = "N", default_value_t = toolgate_proxy::gateway::DEFAULT_MAX_REQUEST_NODES)]
    max_request_nodes: usize,
    /// The largest upstream answer (or streamed output) read, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    max_response_mib: usize,
    /// The most JSON values (counted as for --max-request-nodes) an
    /// upstream answer, or one event of a stream, may hold; more is an
    /// answer that could not be checked (enforce: a 502, or a broken
    /// stream). Bounds what reading an answer costs.
    #[arg(long, value_name = "N", default_value_t = toolgate_proxy::gateway::DEFAULT_MAX_RESPONSE_NODES)]
    max_response_nodes: usize,
    /// Chat completions served at once; more get a 503.
    #[arg(long, value_name = "N", default_value_t = 512)]
    max_exchanges: usize,
    /// Streamed chat completions served at once; more get a 503.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_streams: usize,
    /// Client connections open at once; more wait to be accepted.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    max_connections: usize,
    /// Threads serving client connections, each connection staying on one
    /// (0: one per core; at most 256).
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u16).range(0..=256))]
    workers: u16,
    /// Seconds in-flight exchanges get to finish after SIGTERM or Ctrl-C (a
    /// second signal exits at once).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    grace: u64,
}

/// `--mode`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum ModeArg {
    Observe,
    Shadow,
    Enforce,
}

/// Runs the proxy until Ctrl-C or SIGTERM.
pub fn proxy(args: ProxyArgs) -> Result<u8> {
    use toolgate_proxy::gateway::{Engines, Mode, ProxyConfig};
    // Like every other command, `auto` unless --profile names one.
    let auto = matches!(args.profile.as_deref(), None | Some("auto"));
    let engine_args = crate::EngineArgs {
        profile: if auto { None } else { args.profile.clone() },
        patterns: args.patterns.clone(),
        formats: args.formats.clone(),
    };
    // Checks the profile and the patterns now, before listening.
    let engine = crate::setup::engine(&engine_args)?;
    let engines = if auto {
        // `auto` as one request can choose it: `[models]` in toolgate.toml,
        // then the built-in family table, else the default profile (one
        // output is too little to detect a format from).
        let chooser = crate::setup::auto(&engine_args, &engine)?;
        let patterns = args.patterns.clone();
        let formats = args.formats.clone();
        Engines::per_model(
            move |model| {
                chooser
                    .by_model(model)
                    .map(|c| (c.profile, c.source.to_string()))
                    .unwrap_or_else(|| (Default::default(), "default".into()))
            },
            move || {
                let mut modes = toolgate_formats::builtin();
                // Already loaded once above: a failure now cannot happen
                // unless the files changed; then only the built-ins are used.
                if let Ok(custom) =
                    crate::setup::custom_modes(patterns.as_deref(), formats.as_deref())
                {
                    modes.extend(custom);
                }
                modes
            },
        )
    } else {
        Engines::fixed(engine)
    };
    let mut cfg = ProxyConfig::new(args.upstream.clone());
    cfg.mode = match args.mode {
        ModeArg::Observe => Mode::Observe,
        ModeArg::Shadow => Mode::Shadow,
        ModeArg::Enforce => Mode::Enforce,
    };
    cfg.engines = engines;
    cfg.record = args.record.clone();
    cfg.redact = args.redact.clone();
    cfg.retries = args.retries;
    cfg.timeout = Duration::from_secs(args.timeout.max(1));
    cfg.client_timeout = Duration::from_secs(args.client_timeout.max(1));
    cfg.max_request = args.max_request_mib.max(1).saturating_mul(1024 * 1024);
    cfg.max_request_nodes = args.max_request_nodes.max(1);
    cfg.max_response = args.max_response_mib.max(1).saturating_mul(1024 * 1024);
    cfg.max_response_nodes = args.max_response_nodes.max(1);
    cfg.max_exchanges = args.max_exchanges.max(1);
    cfg.max_streams = args.max_streams.max(1);
    let serve = toolgate_proxy::ServeOptions {
        max_connections: args.max_connections.max(1),
        grace: Duration::from_secs(args.grace),
        header_timeout: Duration::from_secs(args.client_timeout.max(1)),
        write_timeout: Duration::from_secs(args.client_timeout.max(1)),
        workers: Some(usize::from(args.workers)),
    };
    for pointer in &cfg.redact {
        if !pointer.is_empty() && !pointer.starts_with('/') {
            bail!(
                "--redact takes JSON pointers such as /messages/0/content, not `{}`",
                one_line(pointer)
            );
        }
    }
    let traces = crate::traces::start("toolgate-proxy")?;
    if let Some(t) = &traces {
        let source = crate::traces::profile_source(&engine_args, auto)?;
        cfg.on_exchange = Some(t.exchange_hook(toolgate_otel::ExchangeContext {
            profile_source: Some(source),
            redact: cfg.redact.clone(),
            upstream: Some(cfg.upstream.clone()),
        }));
    }
    let mode = cfg.mode.as_str();
    // Credentials in the URL (`http://user:key@host`) never reach the
    // terminal or a log.
    let upstream = one_line(&toolgate_core::sanitize::url_shown(&args.upstream)).into_owned();
    let profile = if auto {
        "auto".to_string()
    } else {
        one_line(args.profile.as_deref().unwrap_or("default")).into_owned()
    };
    let record = args
        .record
        .as_ref()
        .map(|d| one_line(&d.display().to_string()).into_owned());
    let served = toolgate_proxy::gateway::run_blocking(cfg, args.listen, serve, |addr| {
        eprintln!(
            "toolgate proxy: {mode} (profile {profile}) in front of {upstream}, serving http://{addr}/v1{}",
            record
                .map(|r| format!(", recording into {r}"))
                .unwrap_or_default()
        );
    })
    .map_err(|e| {
        // A configuration the proxy refuses (`--record` not a directory, …)
        // is not about the address.
        if e.downcast_ref::<toolgate_proxy::gateway::ConfigError>().is_some() {
            anyhow::anyhow!("{e}")
        } else {
            anyhow::anyhow!("cannot serve on {}: {e}", args.listen)
        }
    });
    crate::traces::finish(traces);
    served?;
    Ok(EXIT_OK)
}
