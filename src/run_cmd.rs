//! `toolgate run SUITE --base-url URL --model M [--model M2…] -k K --out DIR`:
//! the suite against an OpenAI-compatible endpoint (`toolgate_proxy::runner`).

use crate::{EXIT_BAD, EXIT_OK};
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use toolgate_core::sanitize::one_line;
use toolgate_proxy::runner::{self, RunConfig, Suite};

/// `toolgate run`.
#[derive(Args, Debug)]
#[command(after_help = "Each (model, task, sample) is one transcript, \
OUT/<model>/<task>.<sample>.json, written atomically and never twice: a rerun \
(after a kill, a crash or run errors) sends only the samples that are missing. \
A request that still fails after every retry is a run error, appended to \
OUT/run-errors.log and never written as a transcript; the exit code is then 2. \
Each run starts that log afresh: it holds the last run's errors only. \
The API key is read from the environment variable named by --api-key-env and \
is never written to disk.")]
pub struct RunArgs {
    /// The suite: a JSONL file of tasks (e.g. suites/core.jsonl).
    #[arg(value_name = "SUITE")]
    suite: PathBuf,
    /// The endpoint's base URL as OpenAI clients take it, e.g. http://127.0.0.1:8000/v1.
    #[arg(long, value_name = "URL")]
    base_url: String,
    /// A model to run (repeat for several).
    #[arg(long = "model", value_name = "M", required = true)]
    models: Vec<String>,
    /// Samples per (model, task).
    #[arg(short = 'k', value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    k: u32,
    /// The output directory (created when missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Requests in flight at most.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    concurrency: u32,
    /// Timeout per request, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    timeout: f64,
    /// Retries after a network error or a retryable HTTP status (408, 409, 425, 429, 5xx).
    #[arg(long, value_name = "N", default_value_t = 4)]
    retries: u32,
    /// The first backoff in milliseconds; it doubles per attempt (with jitter, at most 30 s).
    #[arg(long, value_name = "MS", default_value_t = 500)]
    retry_delay_ms: u64,
    /// `temperature` for every request (overrides the suite's).
    #[arg(long, value_name = "T")]
    temperature: Option<f64>,
    /// `seed`: sample s is sent SEED + s - 1.
    #[arg(long, value_name = "SEED")]
    seed: Option<i64>,
    /// `max_tokens` for every request (overrides the suite's).
    #[arg(long, value_name = "N")]
    max_tokens: Option<u64>,
    /// Largest suite file read, in bytes (suffixes K, M, G: powers of 1024);
    /// a larger one is refused.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::parse_size)]
    max_file_size: u64,
    /// The environment variable holding the API key (sent as a bearer token).
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    api_key_env: String,
    /// No progress bar (it is drawn on stderr only when stderr is a terminal).
    #[arg(long)]
    no_progress: bool,
}

/// Runs `toolgate run`.
pub fn run(args: RunArgs) -> Result<u8> {
    if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 86_400.0) {
        bail!("--timeout must be between 0 and 86400 seconds");
    }
    if let Some(t) = args.temperature
        && !(t.is_finite() && (0.0..=100.0).contains(&t))
    {
        bail!("--temperature must be a finite number from 0");
    }
    let suite = match Suite::load_with(&args.suite, args.max_file_size) {
        Ok(s) => s,
        Err(errors) => {
            for e in &errors.0 {
                eprintln!("toolgate: {}", one_line(&e.to_string()));
            }
            return Ok(EXIT_BAD);
        }
    };
    // A key that is set but cannot be sent is refused, never dropped: the
    // requests would go without it. Neither message shows the key.
    let api_key = match std::env::var(&args.api_key_env) {
        Ok(k) if k.is_empty() => None,
        Ok(k) => {
            runner::check_api_key(&k)
                .map_err(|e| anyhow::anyhow!("${}: {e}", one_line(&args.api_key_env)))?;
            Some(k)
        }
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(_)) => bail!(
            "${}: the API key is not valid UTF-8: it cannot be sent as a header",
            one_line(&args.api_key_env)
        ),
    };
    // Each model once: a second `--model m` would ask (and pay for) every
    // sample twice.
    let mut models: Vec<String> = Vec::with_capacity(args.models.len());
    for m in args.models {
        if models.contains(&m) {
            eprintln!(
                "toolgate: --model {} is given more than once: it is run once",
                one_line(&m)
            );
        } else {
            models.push(m);
        }
    }
    let mut cfg = RunConfig {
        base_url: args.base_url,
        models,
        k: args.k,
        out: args.out,
        concurrency: args.concurrency as usize,
        timeout: Duration::from_secs_f64(args.timeout),
        retries: args.retries,
        retry_delay: Duration::from_millis(args.retry_delay_ms),
        temperature: args.temperature,
        seed: args.seed,
        max_tokens: args.max_tokens,
        api_key,
        progress: !args.no_progress,
        on_sample: None,
    };
    let traces = crate::traces::start("toolgate-run")?;
    if let Some(t) = &traces {
        cfg.on_sample = Some(t.sample_hook(crate::traces::judge()));
    }
    let summary = runner::run(&suite, &cfg);
    crate::traces::finish(traces);
    let summary = summary?;
    for e in &summary.errors {
        eprintln!(
            "toolgate: run error: {} {} sample {} after {} attempt(s): {}",
            one_line(&e.model),
            one_line(&e.task),
            e.sample,
            e.attempts,
            one_line(&e.error)
        );
    }
    eprintln!(
        "toolgate: {} samples ({} models × {} tasks × k={}): {} written, {} already there, {} run errors → {}",
        summary.planned,
        cfg.models.len(),
        suite.tasks.len(),
        cfg.k,
        summary.written,
        summary.skipped,
        summary.errors.len(),
        one_line(&cfg.out.display().to_string()),
    );
    if !summary.errors.is_empty() {
        eprintln!(
            "toolgate: rerun the same command to retry the failed samples (see {})",
            one_line(&cfg.out.join(runner::ERRORS_FILE).display().to_string())
        );
        return Ok(EXIT_BAD);
    }
    Ok(EXIT_OK)
}
