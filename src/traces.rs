//! OpenTelemetry traces of `toolgate proxy` and `toolgate run`: switched on
//! by the standard `OTEL_*` variables (`toolgate-otel` reads them), flushed
//! when the command ends.

use anyhow::{Context, Result};
use std::sync::Arc;
use std::time::Duration;
use toolgate_otel::{Judge, ProfileSource, Traces};
use toolgate_validator::Auto;

/// The longest a command waits at its end for the last spans to leave.
const FLUSH: Duration = Duration::from_secs(5);

/// Traces when an OTLP endpoint is set (a note on stderr says where they
/// go); `None` otherwise. Bad `OTEL_*` settings are an error, before
/// anything runs.
pub fn start(service: &str) -> Result<Option<Traces>> {
    let traces = Traces::from_env(service).context("OpenTelemetry settings")?;
    if let Some(t) = &traces {
        eprintln!(
            "toolgate: exporting traces to {} as {}{}",
            // The endpoint's user, password and query may be credentials.
            toolgate_core::sanitize::one_line(&toolgate_core::sanitize::url_shown(
                &t.settings().endpoint
            )),
            toolgate_core::sanitize::one_line(&t.settings().service_name),
            if t.settings().capture_content {
                " (with message content)"
            } else {
                ""
            }
        );
    }
    Ok(traces)
}

/// Exports what is left (at most [`FLUSH`] in all) and says what was
/// dropped.
pub fn finish(traces: Option<Traces>) {
    if let Some(t) = traces {
        let lost = t.shutdown(FLUSH);
        if lost > 0 {
            eprintln!(
                "toolgate: {lost} spans dropped (not exported within {} s: the collector did \
                 not take them)",
                FLUSH.as_secs()
            );
        }
        if t.dropped() > 0 {
            eprintln!(
                "toolgate: {} spans dropped (the trace queue was full)",
                t.dropped()
            );
        }
    }
}

/// Why the proxy judges a model with its profile: `auto` asks the chooser
/// (`[models]` of toolgate.toml, the family table, the default), a fixed
/// `--profile` is `given`, no `--profile` the `default`.
pub fn profile_source(args: &crate::EngineArgs, auto: bool) -> Result<ProfileSource> {
    if !auto {
        let kind = if args.given_profile().is_some() {
            "given"
        } else {
            "default"
        };
        return Ok(Arc::new(move |_| kind.to_string()));
    }
    let engine = crate::setup::engine(args)?;
    let chooser = crate::setup::auto(args, &engine)?;
    Ok(Arc::new(move |model| {
        chooser
            .by_model(model)
            .map_or("default", |c| c.source.kind())
            .to_string()
    }))
}

/// How the runner's samples are judged for their spans: `auto` with the
/// `[models]` table of toolgate.toml when it reads, else the built-in
/// family table alone.
pub fn judge() -> Judge {
    let args = crate::EngineArgs {
        profile: None,
        patterns: None,
        formats: None,
    };
    let auto = crate::setup::engine(&args)
        .and_then(|e| crate::setup::auto(&args, &e))
        .unwrap_or_else(|e| {
            eprintln!(
                "toolgate: traces judge samples without toolgate.toml: {}",
                toolgate_core::sanitize::one_line(&format!("{e:#}"))
            );
            Auto::default()
        });
    Judge::new(auto)
}
