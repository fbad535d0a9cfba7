//! `toolgate parse`: the profile pipeline on one raw output.
//!
//! Prints, as pretty JSON:
//!
//! ```json
//! {"decision": "reject", "gate": "allowlist",
//!  "reason": "tool `rm_rf` is not allowlisted", "reemit": null,
//!  "calls": [], "label": "wrong_tool",
//!  "telemetry": {"parse_mode": "tag", "fallback_used": false, …}}
//! ```
//!
//! The decision is data: the exit code is 0 whatever it is, and 2 only when
//! the input or the tools file cannot be read.

use crate::{EXIT_OK, EngineArgs, jsonout};
use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Map, Value, json};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use toolgate_core::{Decision, load};

/// `toolgate parse [--profile P] [--tools FILE] [FILE|-]`.
#[derive(Args, Debug)]
pub struct ParseArgs {
    /// The raw model output; `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    input: Option<PathBuf>,
    /// Tool definitions: a JSON array of tools (OpenAI style or bare), or a
    /// transcript object whose `tools` are used. Without it nothing is
    /// allowlisted, so every call is rejected.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
    /// The model that wrote the output: its profile is chosen as `auto`
    /// chooses it (the `[models]` table of toolgate.toml, else the built-in
    /// family table, else `default`; one output is too little to detect).
    /// Without it and without --profile: the default profile.
    #[arg(long, value_name = "NAME", conflicts_with = "profile")]
    model: Option<String>,
}

fn read_input(input: Option<&Path>) -> Result<(String, PathBuf)> {
    let (bytes, path) = match input {
        None => (read_stdin()?, PathBuf::from("<stdin>")),
        Some(p) if p.as_os_str() == "-" => (read_stdin()?, PathBuf::from("<stdin>")),
        Some(p) => (
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
            p.to_path_buf(),
        ),
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not valid UTF-8 (first bad byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok((text, path))
}

fn read_stdin() -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    Ok(bytes)
}

/// The `tools` value of a tools file.
fn read_tools(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read tools file {}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("tools file {} is not valid JSON", path.display()))?;
    match value {
        Value::Array(_) => Ok(value),
        Value::Object(mut obj) => match obj.remove("tools") {
            Some(tools @ Value::Array(_)) => Ok(tools),
            _ => bail!(
                "tools file {}: an object must be a transcript with a `tools` array",
                path.display()
            ),
        },
        _ => bail!(
            "tools file {}: expected an array of tool definitions or a transcript object",
            path.display()
        ),
    }
}

/// Runs `toolgate parse`.
pub fn run(args: ParseArgs) -> Result<u8> {
    let mut engine = crate::setup::engine(&args.engine)?;
    let source = match &args.model {
        Some(model) => {
            let auto = crate::setup::auto(&args.engine, &engine)?;
            let chosen = auto.choose(Some(model), None);
            engine.profile = chosen.profile;
            Some(chosen.source)
        }
        None => None,
    };
    let tools = match &args.tools {
        Some(path) => read_tools(path)?,
        None => Value::Array(Vec::new()),
    };
    let (output, path) = read_input(args.input.as_deref())?;
    // Read the tools the way transcripts are read (OpenAI or bare style).
    let mut raw = Map::new();
    raw.insert("output".into(), Value::String(output));
    raw.insert("tools".into(), tools);
    let transcript = load::from_object(raw, &path, None, "input".into())
        .map_err(|reason| anyhow::anyhow!("{reason}"))?;
    for problem in &transcript.tool_problems {
        eprintln!(
            "toolgate: tools: {}",
            toolgate_core::sanitize::one_line(problem)
        );
    }
    // A panic would be a bug in an extractor; report it as an error (exit 2)
    // instead of aborting with a backtrace and exit 101.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        engine.parse_output(&transcript.output, &transcript.tools, None)
    }))
    .map_err(|_| anyhow::anyhow!("internal error: the pipeline failed on this input"))?;
    let (reason, reemit) = match &result.decision {
        Decision::Reject { reason, reemit, .. } => (Some(reason.clone()), reemit.clone()),
        _ => (None, None),
    };
    let calls: Vec<Value> = result
        .decision
        .calls()
        .iter()
        .map(|c| c.to_json())
        .collect();
    let telemetry = serde_json::to_value(&result.telemetry).context("telemetry")?;
    let report = json!({
        "decision": result.decision.kind(),
        "gate": result.decision.gate().map(|g| g.as_str()),
        "reason": reason,
        "reemit": reemit,
        "calls": calls,
        "label": result.label.as_str(),
        "telemetry": telemetry,
    });
    let mut report = report;
    if let (Some(source), Some(obj)) = (source, report.as_object_mut()) {
        obj.insert(
            "profile".into(),
            json!({"name": engine.profile.name, "source": source.kind(),
                   "source_detail": source.to_string()}),
        );
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", jsonout::pretty(&jsonout::versioned(report)))?;
    out.flush()?;
    Ok(EXIT_OK)
}
