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
    mock::run_blocking(mock, args.listen, |addr| {
        eprintln!("toolgate mock-upstream: {count} transcripts, serving http://{addr}/v1");
    })
    .with_context(|| format!("cannot serve on {}", args.listen))?;
    Ok(EXIT_OK)
}
