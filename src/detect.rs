//! `toolgate detect`: which wire format does each model emit?
//!
//! Per model (or per file for transcripts without a model): for each mode,
//! the share of outputs where it finds live candidates and its `pass` count;
//! the best mode, chosen as `auto` detects one (the mode whose live
//! candidates parse in the most outputs; ties: more passes, more outputs
//! with candidates, then `toolgate formats` order; never a mode that found
//! nothing); how many outputs show "leaked" tool syntax (tool-call markup
//! outside reasoning that no text mode turns into a candidate); and the
//! recommended profile with its source: `auto`'s choice for the model
//! (`--profile`, `[models]`, the family table, else the profile reading the
//! best mode — a mode name when no built-in profile makes it primary — else
//! `default`). Every group gets a recommendation.

use crate::table::{Table, cell};
use crate::{EXIT_BAD, EXIT_OK, EngineArgs, InputArgs, jsonout};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use toolgate_batch::{self as batch, Entry};
use toolgate_core::Transcript;
use toolgate_validator::auto::{Detection, Source};
use toolgate_validator::{Auto, Chosen, Outcome, Profile};

/// Markup that shows a tool call was meant, whatever the format.
pub const TOOL_MARKUP: [&str; 9] = [
    "<tool_call",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|tool_call",
    "<｜tool▁calls▁begin｜>",
    "<|channel|>commentary to=",
    "<function=",
    "TOOL_CALL",
    "<tool ",
];

/// `toolgate detect [PATH…]`.
#[derive(Args, Debug)]
#[command(
    after_help = "Columns: N outputs in the group; BEST MODE the mode whose live \
candidates parse in the most outputs (ties: more passes, then more outputs with candidates, \
then `toolgate formats` order; `-` when no mode parses anything); PASS its pass count; \
LEAKED outputs that hold tool-call markup outside reasoning (<tool_call, [TOOL_CALLS], \
<|python_tag|>, <|tool_call, <function=, TOOL_CALL, harmony commentary, DeepSeek call \
tokens, <tool ) while no text mode finds a candidate in them: the model meant to call a \
tool in a syntax no mode reads (write a pattern, or it is broken markup); PROFILE the \
profile `auto` judges the model by and SOURCE why (configured, by name, detected, \
default)."
)]
pub struct DetectArgs {
    /// Files and directories (walked recursively for .json/.jsonl).
    #[arg(value_name = "PATH", default_value = "transcripts")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    input: InputArgs,
    /// Group by model (transcripts without one: by file), or always by file.
    #[arg(long, value_enum, default_value_t = By::Model)]
    by: By,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DetectFormat::Table)]
    format: DetectFormat,
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

/// What detect keeps of one replay.
pub struct Seen {
    /// Per mode (engine order): live candidates found, label is `pass`.
    modes: Vec<(String, bool, bool)>,
    /// Markup present but no text mode found a live candidate.
    leaked: bool,
    /// What auto's detection counts of this output.
    detection: Detection,
}

fn summarize(t: &Transcript, outcome: &Outcome<'_>) -> Seen {
    let mut detection = Detection::default();
    detection.add_outcome(outcome);
    let modes: Vec<(String, bool, bool)> = outcome
        .strict
        .iter()
        .map(|m| (m.mode.to_string(), m.found, m.label.is_pass()))
        .collect();
    let found_in_text = modes
        .iter()
        .any(|(mode, found, _)| *found && mode != "native");
    let markup =
        outside_reasoning(&t.output).any(|text| TOOL_MARKUP.iter().any(|m| text.contains(m)));
    Seen {
        modes,
        leaked: markup && !found_in_text,
        detection,
    }
}

/// The parts of `output` outside its reasoning spans: markup a model wrote
/// while thinking is a reasoning-only call (reported as such), not leaked
/// tool syntax.
fn outside_reasoning(output: &str) -> impl Iterator<Item = &str> {
    let spans = toolgate_formats::reasoning::spans(output);
    let mut bounds = Vec::with_capacity(spans.len() + 1);
    let mut at = 0;
    for s in spans {
        bounds.push((at, s.start.max(at)));
        at = s.end.max(at);
    }
    bounds.push((at, output.len()));
    bounds
        .into_iter()
        .filter_map(move |(a, b)| output.get(a..b))
}

/// Per-mode counts in one group.
#[derive(Default, Clone)]
struct ModeStats {
    found: usize,
    passes: usize,
}

/// One group (a model or a file).
#[derive(Default)]
struct Group {
    n: usize,
    leaked: usize,
    /// Engine order.
    modes: Vec<(String, ModeStats)>,
    detection: Detection,
}

impl Group {
    fn add(&mut self, seen: &Seen) {
        self.n += 1;
        self.leaked += usize::from(seen.leaked);
        self.detection.merge(&seen.detection);
        for (mode, found, pass) in &seen.modes {
            let i = match self.modes.iter().position(|(m, _)| m == mode) {
                Some(i) => i,
                None => {
                    self.modes.push((mode.clone(), ModeStats::default()));
                    self.modes.len() - 1
                }
            };
            if let Some((_, stats)) = self.modes.get_mut(i) {
                stats.found += usize::from(*found);
                stats.passes += usize::from(*pass);
            }
        }
    }

    fn stats(&self, mode: &str) -> ModeStats {
        self.modes
            .iter()
            .find(|(m, _)| m == mode)
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    /// The best mode, as `auto` detects it, with its passes.
    fn best_mode(&self) -> Option<(&str, usize)> {
        let mode = self.detection.best()?;
        Some((mode, self.stats(mode).passes))
    }

    /// The recommended profile: `auto`'s choice for the model; for a group
    /// of one file without a model, the profile reading its best mode.
    fn recommend(&self, auto: &Auto, model: Option<&str>) -> Chosen {
        if model.is_some() || auto.is_given() {
            return auto.choose(model, Some(&self.detection));
        }
        match self.detection.best() {
            Some(mode) => Chosen {
                profile: Profile::reading(mode),
                source: Source::Detected {
                    transcripts: self.detection.transcripts(),
                },
            },
            None => Chosen {
                profile: Profile::default(),
                source: Source::Default,
            },
        }
    }
}

fn share(part: usize, n: usize) -> f64 {
    if n == 0 { 0.0 } else { part as f64 / n as f64 }
}

/// Runs `toolgate detect`.
pub fn run(args: DetectArgs) -> Result<u8> {
    let engine = crate::setup::engine(&args.engine)?;
    let auto = crate::setup::auto(&args.engine, &engine)?;
    // Detect reads every mode's labels, which no profile changes: one
    // replay per transcript, under the engine's profile.
    let once = Auto::given(engine.profile.clone());
    let entries = batch::collect(
        &engine,
        &once,
        &args.paths,
        &args.input.batch_options(),
        |t, outcome, _| summarize(t, outcome),
    );

    let mut groups: BTreeMap<(bool, String), Group> = BTreeMap::new();
    for entry in &entries {
        let Entry::Done {
            transcript: t,
            value,
        } = entry
        else {
            continue;
        };
        // Models first, then files without a model.
        let key = match (&t.model, args.by) {
            (Some(model), By::Model) => (false, model.clone()),
            _ => (true, t.path.display().to_string()),
        };
        groups.entry(key).or_default().add(value);
    }

    let mut out = std::io::stdout().lock();
    match args.format {
        DetectFormat::Json => {
            let list: Vec<Value> = groups
                .iter()
                .map(|((is_file, name), g)| group_json(*is_file, name, g, &auto))
                .collect();
            writeln!(
                out,
                "{}",
                jsonout::pretty(&jsonout::versioned(Value::Array(list)))
            )?;
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
                        format!("{:.0}%", 100.0 * share(s.found, g.n)),
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

fn group_json(is_file: bool, name: &str, g: &Group, auto: &Auto) -> Value {
    let modes: Map<String, Value> = g
        .modes
        .iter()
        .map(|(mode, s)| {
            let share = (share(s.found, g.n) * 10_000.0).round() / 10_000.0;
            (
                mode.clone(),
                json!({"found_share": share, "found": s.found, "passes": s.passes}),
            )
        })
        .collect();
    let chosen = g.recommend(auto, (!is_file).then_some(name));
    let (best, best_passes) = match g.best_mode() {
        Some((m, p)) => (Value::String(m.to_string()), p),
        None => (Value::Null, 0),
    };
    json!({
        "model": if is_file { Value::Null } else { Value::String(name.to_string()) },
        "file": if is_file { Value::String(name.to_string()) } else { Value::Null },
        "n": g.n,
        "modes": modes,
        "best_mode": best,
        "best_mode_passes": best_passes,
        "leaked": g.leaked,
        "recommended_profile": chosen.profile.name,
        "profile_source": chosen.source.kind(),
        "profile_source_detail": chosen.source.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_inside_reasoning_is_not_leaked() {
        let outside: Vec<&str> =
            outside_reasoning("a<think><tool_call>{}</tool_call></think>b <tool_call>").collect();
        assert_eq!(outside, vec!["a", "b <tool_call>"]);
        let outside: Vec<&str> = outside_reasoning("plan</think>answer").collect();
        assert_eq!(outside, vec!["", "answer"]);
    }
}
