//! `toolgate formats` and `toolgate profiles`: what this build knows.

use crate::table::{Table, cell};
use crate::{EXIT_OK, EngineArgs};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::io::Write;
use toolgate_core::sanitize::one_line;

/// Output format of the catalog commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CatalogFormat {
    /// Human-readable text.
    Text,
    /// A JSON array.
    Json,
}

/// What both catalog commands take after `--patterns`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Declared formats file to list with the built-in modes (`toolgate.toml`
    /// in the working directory is read too when present).
    #[arg(long, value_name = "FILE")]
    formats: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CatalogFormat::Text)]
    format: CatalogFormat,
}

/// `toolgate formats`.
#[derive(Args, Debug)]
pub struct FormatsArgs {
    /// Custom patterns file to list with the built-in modes (`toolgate.toml`
    /// in the working directory is read too when present).
    #[arg(long, value_name = "FILE")]
    patterns: Option<std::path::PathBuf>,
    /// `--formats` and `--format`.
    #[command(flatten)]
    list: ListArgs,
}

/// `toolgate profiles`.
#[derive(Args, Debug)]
pub struct ProfilesArgs {
    /// Custom patterns file whose patterns to list as one-mode profiles
    /// (`toolgate.toml` in the working directory is read too when present).
    #[arg(long, value_name = "FILE")]
    patterns: Option<std::path::PathBuf>,
    /// `--formats` and `--format`.
    #[command(flatten)]
    list: ListArgs,
}

/// Lists every mode in engine order with its description and example, and
/// for built-in modes their row of the format table (families, engine,
/// payload, closers, stop token).
pub fn formats(args: FormatsArgs) -> Result<u8> {
    let engine = crate::setup::engine(&EngineArgs {
        profile: None,
        patterns: args.patterns,
        formats: args.list.formats,
    })?;
    let mut out = toolgate_core::stdio::QuietStdout::lock();
    match args.list.format {
        CatalogFormat::Json => {
            let modes: Vec<Value> = engine
                .extractors
                .iter()
                .map(|e| {
                    let mut m = json!({"mode": e.name(), "description": e.describe(), "example": e.example()});
                    if let (Some(row), Some(obj)) = (e.row(), m.as_object_mut()) {
                        obj.insert("families".into(), json!(row.families));
                        obj.insert("engine".into(), json!(row.engine.as_str()));
                        obj.insert("opener".into(), json!(row.opener));
                        obj.insert("separator".into(), json!(row.separator));
                        obj.insert("closers".into(), json!(row.closers));
                        obj.insert(
                            "stop_token".into(),
                            json!(row.stop_token.map(|(token, by)| json!({"token": token, "stripped_by": by}))),
                        );
                        obj.insert("payload".into(), json!(row.payload.as_str()));
                        obj.insert("conventions".into(), json!(row.conventions));
                    }
                    m
                })
                .collect();
            crate::print_json_list(&mut out, modes)?;
        }
        CatalogFormat::Text => {
            let width = engine
                .extractors
                .iter()
                .map(|e| one_line(e.name()).chars().count())
                .max()
                .unwrap_or(0);
            for e in &engine.extractors {
                let name = one_line(e.name());
                let pad = " ".repeat(width.saturating_sub(name.chars().count()));
                let indent = " ".repeat(width + 2);
                writeln!(out, "{name}{pad}  {}", one_line(e.describe()))?;
                writeln!(out, "{indent}example: {}", one_line(e.example()))?;
                if let Some(row) = e.row() {
                    writeln!(out, "{indent}families: {}", one_line(&row.families))?;
                    let closers = if row.closers.is_empty() {
                        "none (the payload's own end)".to_string()
                    } else {
                        row.closers.join(" ")
                    };
                    writeln!(
                        out,
                        "{indent}engine: {}  payload: {}  closers: {}",
                        row.engine.as_str(),
                        row.payload.as_str(),
                        one_line(&closers)
                    )?;
                    if let Some((token, by)) = &row.stop_token {
                        writeln!(
                            out,
                            "{indent}stop token: {} may be missing (stripped by {}), except under finish_reason length",
                            one_line(token),
                            one_line(by)
                        )?;
                    }
                }
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// Lists the built-in profiles, then every mode as a one-mode profile (a
/// mode whose name is already a built-in profile's, like `hermes`, is listed
/// once: `--profile hermes` is the built-in).
pub fn profiles(args: ProfilesArgs) -> Result<u8> {
    let mut profiles = crate::setup::builtin_profiles();
    let extractors =
        crate::setup::extractors(args.patterns.as_deref(), args.list.formats.as_deref())?;
    for e in &extractors {
        if !profiles.iter().any(|p| p.name == e.name()) {
            profiles.push(toolgate_validator::Profile::for_mode(e.name()));
        }
    }
    let mut out = toolgate_core::stdio::QuietStdout::lock();
    match args.list.format {
        CatalogFormat::Json => {
            let list: Vec<Value> = profiles
                .iter()
                .map(|p| json!({"name": p.name, "primary": p.primary, "fallbacks": p.fallbacks}))
                .collect();
            crate::print_json_list(&mut out, list)?;
        }
        CatalogFormat::Text => {
            let mut table = Table::new(&["PROFILE", "PRIMARY", "FALLBACKS"]);
            for p in &profiles {
                let fallbacks = if p.fallbacks.is_empty() || !p.fallbacks_enabled {
                    "-".to_string()
                } else {
                    p.fallbacks.join(", ")
                };
                table.push(vec![
                    cell(&p.name, 40),
                    cell(&p.primary, 40),
                    cell(&fallbacks, 120),
                ]);
            }
            write!(out, "{}", table.plain())?;
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}
