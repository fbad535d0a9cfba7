//! `toolgate detect`: which wire format does each model emit?
//!
//! Per model (or per file for transcripts without a model): for each mode,
//! the share of outputs where it finds live candidates and its `pass` count;
//! the best mode, chosen as `auto` detects one (the mode whose live
//! candidates parse in the most outputs, else `native` when the server
//! returned calls none of which parse; ties: more passes, more outputs with candidates, then
//! `toolgate formats` order; never a mode that found nothing); how many outputs show "leaked" tool syntax (tool-call markup
//! outside reasoning that no text mode turns into a candidate); and the
//! recommended profile with its source: `auto`'s choice for the model
//! (`--profile`, `[models]`, the family table, else the profile reading the
//! best mode — a mode name when no built-in profile makes it primary — else
//! `default`). Every group gets a recommendation.

//!
//! The statistics are [`toolgate_matrix`]'s; this module parses the
//! arguments and prints.

use crate::table::{Table, cell};
use crate::{BatchArgs, EXIT_BAD, EXIT_OK};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::Value;
use std::io::Write;
use toolgate_batch as batch;
use toolgate_matrix::detect::{self, GroupBy};
use toolgate_validator::Auto;

/// `toolgate detect [PATH…]`.
#[derive(Args, Debug)]
#[command(after_help = after_help())]
pub struct DetectArgs {
    #[command(flatten)]
    batch: BatchArgs,
    /// Group by model (transcripts without one: by file), or always by file.
    #[arg(long, value_enum, default_value_t = By::Model)]
    by: By,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DetectFormat::Table)]
    format: DetectFormat,
}

/// The help's column notes, with the markup `LEAKED` looks for (read from
/// the format table by [`detect::tool_markup`]).
fn after_help() -> String {
    format!(
        "Columns: N outputs in the group; BEST MODE the mode whose live \
candidates parse in the most outputs, else (none parse) `native` when the server returned calls \
(ties: more passes, then more outputs with candidates, then `toolgate formats` order; `-` \
when none is chosen); PASS its pass count; \
LEAKED outputs that hold tool-call markup outside reasoning ({}) while no text mode finds \
a candidate in them: the model meant to call a tool in a syntax no mode reads (write a \
pattern, or it is broken markup); PROFILE the profile `auto` judges the model by and SOURCE \
why (configured, by name, detected, default).",
        detect::tool_markup().join(", ")
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum By {
    Model,
    File,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DetectFormat {
    Table,
    Json,
}

/// Runs `toolgate detect`.
pub fn run(args: DetectArgs) -> Result<u8> {
    let engine = crate::setup::engine(&args.batch.engine)?;
    let auto = crate::setup::auto(&args.batch.engine, &engine)?;
    // Detect reads every mode's labels, which no profile changes: one
    // replay per transcript, under the engine's profile.
    let once = Auto::given(engine.profile.clone());
    let entries = batch::collect(
        &engine,
        &once,
        &args.batch.paths,
        &args.batch.input.batch_options(),
        |t, outcome, _| detect::seen(t, outcome),
    );

    let by = match args.by {
        By::Model => GroupBy::Model,
        By::File => GroupBy::File,
    };
    let groups = detect::groups(&entries, by);

    let mut out = toolgate_core::stdio::QuietStdout::lock();
    match args.format {
        DetectFormat::Json => {
            let list: Vec<Value> = groups
                .iter()
                .map(|((is_file, name), g)| detect::group_json(*is_file, name, g, &auto))
                .collect();
            crate::print_json_list(&mut out, list)?;
        }
        // Nothing read (the paths are named on stderr): no empty table.
        DetectFormat::Table if groups.is_empty() => {}
        DetectFormat::Table => {
            let mut summary = Table::new(&[
                "GROUP",
                "N",
                "BEST MODE",
                "PASS",
                "LEAKED",
                "PROFILE",
                "SOURCE",
            ])
            .align_right(&[1, 3, 4]);
            for ((is_file, name), g) in &groups {
                let group = if *is_file {
                    format!("file {name}")
                } else {
                    name.clone()
                };
                let (best, passes) = g.best_mode().unwrap_or(("-", 0));
                let chosen = g.recommend(&auto, (!*is_file).then_some(name.as_str()));
                summary.push(vec![
                    cell(&group, 60),
                    g.n.to_string(),
                    cell(best, 30),
                    passes.to_string(),
                    g.leaked.to_string(),
                    cell(&chosen.profile.name, 30),
                    cell(&chosen.source.to_string(), 40),
                ]);
            }
            write!(out, "{}", summary.plain())?;
            for ((is_file, name), g) in &groups {
                let group = if *is_file {
                    format!("file {name}")
                } else {
                    name.clone()
                };
                writeln!(out, "\n{} ({} outputs)", cell(&group, 120), g.n)?;
                let mut modes = Table::new(&["MODE", "FOUND", "PASS"]).align_right(&[1, 2]);
                for (mode, s) in g.modes.iter().filter(|(_, s)| s.found > 0) {
                    modes.push(vec![
                        cell(mode, 30),
                        format!("{:.0}%", 100.0 * detect::share(s.found, g.n)),
                        s.passes.to_string(),
                    ]);
                }
                if modes.is_empty() {
                    writeln!(out, "  no mode finds a candidate")?;
                } else {
                    for line in modes.plain().lines() {
                        writeln!(out, "  {line}")?;
                    }
                    let silent = g.modes.iter().filter(|(_, s)| s.found == 0).count();
                    if silent > 0 {
                        writeln!(
                            out,
                            "  ({silent} other modes find no candidate; see --format json)"
                        )?;
                    }
                }
            }
        }
    }
    out.flush()?;
    drop(out);
    let n_bad = batch::report_bad(&entries);
    Ok(if n_bad > 0 { EXIT_BAD } else { EXIT_OK })
}
