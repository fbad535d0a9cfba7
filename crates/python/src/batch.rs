//! Labeling many transcripts as `toolgate label` does: each transcript is
//! judged by the profile `auto` chooses for its model, and that choice
//! depends on what detection saw of all the model's transcripts in the
//! batch. [`label_all`] is toolgate-batch's [`label_list`]: the binary's two
//! steps on a list, and the binary's record writer.
//!
//! A dataset split over many workers (Ray) cannot see all of a model's
//! transcripts in one batch: [`detect`] counts per batch, [`Counts`] adds
//! the counts up, [`Choices`] holds the final choice per model, and
//! [`label_all`] given those choices judges every transcript by them — the
//! same records as the binary on the whole dataset.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use toolgate_batch::{Labeled, label_list};
use toolgate_core::Label;
use toolgate_core::LoadError;
use toolgate_core::import;
use toolgate_core::load::{self, BlockLine, JsonlBlocks, LineBlock, Loaded, parse_transcript};
use toolgate_validator::ModeOutcome;
use toolgate_validator::auto::{Detection, Source};
use toolgate_validator::{Auto, Chosen, Engine, Outcome, Profile};

/// One transcript of a JSONL file (or a `.json` file when `line` is
/// `None`), as the binary reads it: the id defaults to the file stem
/// (`stem:LINE` for a line). A BOM belongs to the file, so it is left out
/// only at the file's start — a `.json` file, or line 1 — as the binary
/// leaves it out; on any other line it is not JSON.
pub fn load_one(text: &str, path: &Path, line: Option<usize>) -> Loaded {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = if starts_file(line) {
        text.strip_prefix('\u{feff}').unwrap_or(text)
    } else {
        text
    };
    parse_transcript(text, path, line, &stem)
}

/// Whether a transcript read from `line` (`None`: a whole `.json` file)
/// begins at its file's start, where a BOM is the file's.
fn starts_file(line: Option<usize>) -> bool {
    line.is_none_or(|n| n == 1)
}

/// One row of an Arrow column: line `line` of `path` as the binary reads a
/// line of a JSONL file ([`load_one`]; `None`: a whole `.json` file). When
/// `ends_file`, the row is the file's last line with no newline after it,
/// and a record cut short there is the binary's torn last line
/// ([`load::torn`], [`load::TORN`]), checked as the binary checks it: on
/// the bytes, after a BOM of line 1, before UTF-8. A row that is not UTF-8
/// gets the binary's reason for such a line; a blank row reads as an empty
/// transcript (an error: a row stands for a transcript).
pub fn load_row(bytes: &[u8], path: &Path, line: Option<usize>, ends_file: bool) -> Loaded {
    let err = |reason: String| {
        Err(LoadError {
            path: path.to_path_buf(),
            line,
            reason,
        })
    };
    // A file of UTF-16 or a compressed one is refused at its start, as the
    // binary refuses it (before its BOM or a torn line is looked for).
    if starts_file(line)
        && let Some(why) = load::not_text(&bytes[..bytes.len().min(load::SNIFF_BYTES)])
    {
        return err(why);
    }
    let unmarked = if starts_file(line) {
        bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes)
    } else {
        bytes
    };
    if ends_file && line.is_some() && load::torn(unmarked) {
        return err(load::TORN.into());
    }
    let text = match load::line_text(unmarked) {
        Ok(Some(text)) => text,
        // Blank: UTF-8 (checked), read as it is.
        Ok(None) => std::str::from_utf8(unmarked).unwrap_or_default(),
        Err(reason) => return err(reason),
    };
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    parse_transcript(text, path, line, &stem)
}

/// The transcripts of a file's bytes as if read from `path`, as the binary
/// reads a file: UTF-8 text is [`load::load_str`]'s; a JSONL file of
/// toolgate transcripts that is not all UTF-8 is read line by line (the
/// binary's [`JsonlBlocks`]), so a line that is not UTF-8 is one error and
/// the other lines are read; any other file that is not UTF-8 is one error
/// for the whole file (`not valid UTF-8 (first bad byte at offset K)`).
/// Bytes of UTF-16/32 or of a compressed file are refused whole, naming
/// what they are ([`load::not_text`]).
pub fn load_bytes(bytes: &[u8], path: &Path) -> Vec<Loaded> {
    let jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
    if let Some(why) = load::not_text(&bytes[..bytes.len().min(load::SNIFF_BYTES)]) {
        // Refused whole, as the binary refuses the file: a JSONL file on
        // its line 1 (where its line reader stops), any other in one error.
        // UTF-16 without a byte-order mark is valid UTF-8 (with NULs): the
        // text path would have read it.
        return vec![Err(LoadError {
            path: path.to_path_buf(),
            line: jsonl.then_some(1),
            reason: why,
        })];
    }
    let not_utf8 = match std::str::from_utf8(bytes) {
        Ok(text) => return load::load_str(path, text),
        Err(e) => e,
    };
    let whole = || {
        vec![Err(LoadError {
            path: path.to_path_buf(),
            line: None,
            reason: format!(
                "not valid UTF-8 (first bad byte at offset {})",
                not_utf8.valid_up_to()
            ),
        })]
    };
    if !jsonl {
        return whole();
    }
    // No size limit per line: a str given to `label_text` has none either.
    let blocks: Vec<LineBlock> = JsonlBlocks::new(bytes, u64::MAX)
        .without_fingerprint()
        .collect();
    // The file's kind, from its first readable lines, as the binary decides it.
    let head: Vec<&str> = blocks
        .iter()
        .flat_map(|b| {
            b.lines.iter().filter_map(move |line| match line {
                BlockLine::Line(_, range) => b.text(range).ok().flatten(),
                BlockLine::Bad(..) => None,
            })
        })
        .take(load::DETECT_LINES)
        .collect();
    if !matches!(
        import::detect(path, &head.join("\n")),
        None | Some(import::Kind::Toolgate)
    ) {
        // Another tool's capture is read whole by its importer.
        return whole();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Each line by the binary's (and the inspector's) one line rule.
    blocks
        .iter()
        .flat_map(|b| {
            b.lines
                .iter()
                .filter_map(|line| load::jsonl_line(b, line, path, &stem, parse_transcript))
        })
        .collect()
}

/// The final choice per model.
#[derive(Default)]
pub struct Choices(pub HashMap<Option<String>, Chosen>);

impl Choices {
    /// The choices as JSON: `[{"model", "source", "mode", "transcripts"}]`.
    pub fn to_json(&self) -> Value {
        let mut rows: Vec<(&Option<String>, &Chosen)> = self.0.iter().collect();
        rows.sort_by(|a, b| a.0.cmp(b.0));
        Value::Array(
            rows.into_iter()
                .map(|(model, chosen)| {
                    let transcripts = match chosen.source {
                        Source::Detected { transcripts } => Some(transcripts),
                        _ => None,
                    };
                    json!({"model": model, "source": chosen.source.kind(),
                           "mode": chosen.profile.primary, "transcripts": transcripts})
                })
                .collect(),
        )
    }

    /// Choices read back from [`Choices::to_json`], made again with `auto`
    /// (which holds no `--profile` and no configured models).
    pub fn from_json(value: &Value, auto: &Auto, engine: &Engine) -> Result<Choices, String> {
        let bad = || "choices: expected the list that choose() returns".to_string();
        let rows = value.as_array().ok_or_else(bad)?;
        let mut map = HashMap::new();
        for row in rows {
            let model = row.get("model").and_then(Value::as_str).map(String::from);
            let source = row.get("source").and_then(Value::as_str).ok_or_else(bad)?;
            let chosen = match source {
                "detected" => {
                    let mode = row.get("mode").and_then(Value::as_str).ok_or_else(bad)?;
                    let transcripts = row
                        .get("transcripts")
                        .and_then(Value::as_u64)
                        .ok_or_else(bad)?;
                    if !engine.mode_names().contains(&mode) {
                        return Err(format!("choices: unknown mode `{mode}`"));
                    }
                    Chosen {
                        profile: Profile::reading(mode),
                        source: Source::Detected {
                            transcripts: usize::try_from(transcripts).map_err(|_| bad())?,
                        },
                    }
                }
                "default" => Chosen {
                    profile: Profile::default(),
                    source: Source::Default,
                },
                _ => match auto.by_model(model.as_deref()) {
                    Some(c) if c.source.kind() == source => c,
                    _ => return Err(bad()),
                },
            };
            map.insert(model, chosen);
        }
        Ok(Choices(map))
    }
}

/// Detection's counts per model, in first-seen order.
#[derive(Default)]
pub struct Counts(pub Vec<(Option<String>, Detection)>);

impl Counts {
    fn of(&mut self, model: &Option<String>) -> &mut Detection {
        let at = match self.0.iter().position(|(m, _)| m == model) {
            Some(at) => at,
            None => {
                self.0.push((model.clone(), Detection::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }

    /// Adds `other`'s counts.
    pub fn merge(&mut self, other: &Counts) {
        for (model, d) in &other.0 {
            self.of(model).merge(d);
        }
    }

    /// The counts as JSON: `[{"model", "transcripts", "modes": [[mode,
    /// parsed, passes, found], …]}]`.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.0
                .iter()
                .map(|(model, d)| {
                    let modes: Vec<Value> = d
                        .counts()
                        .iter()
                        .map(|(m, c)| json!([m, c.parsed, c.passes, c.found]))
                        .collect();
                    json!({"model": model, "transcripts": d.transcripts(), "modes": modes})
                })
                .collect(),
        )
    }

    /// Counts read back from [`Counts::to_json`].
    pub fn from_json(value: &Value, engine: &Engine) -> Result<Counts, String> {
        let bad = || "counts: expected the list that detect() returns".to_string();
        let mut counts = Counts::default();
        for row in value.as_array().ok_or_else(bad)? {
            let model = row.get("model").and_then(Value::as_str).map(String::from);
            let n = row
                .get("transcripts")
                .and_then(Value::as_u64)
                .ok_or_else(bad)?;
            let mut modes = Vec::new();
            for m in row.get("modes").and_then(Value::as_array).ok_or_else(bad)? {
                let name = m.get(0).and_then(Value::as_str).ok_or_else(bad)?;
                let num = |i: usize| -> Result<u64, String> {
                    m.get(i).and_then(Value::as_u64).ok_or_else(bad)
                };
                modes.push((name, num(1)?.min(n), num(2)?.min(n), num(3)?.min(n)));
            }
            let d = rebuild(engine, n, &modes)?;
            counts.of(&model).merge(&d);
        }
        Ok(counts)
    }

    /// The final choice for each model.
    pub fn choose(&self, auto: &Auto) -> Choices {
        Choices(
            self.0
                .iter()
                .map(|(model, d)| (model.clone(), auto.choose(model.as_deref(), Some(d))))
                .collect(),
        )
    }
}

/// A [`Detection`] with these counts: `n` transcripts, and per mode
/// (parsed, passes, found). `Detection` is built only by counting
/// outcomes, so it is rebuilt from outcomes: transcript `i` parses in a mode
/// when `i < parsed`, and so on; runs of equal transcripts are added by
/// doubling (`merge`), so the work is logarithmic in `n`.
fn rebuild(engine: &Engine, n: u64, modes: &[(&str, u64, u64, u64)]) -> Result<Detection, String> {
    let names = engine.mode_names();
    let mut owned: Vec<&str> = Vec::with_capacity(modes.len());
    for (m, ..) in modes {
        // Mode names borrowed from the engine (an outcome's lifetime).
        let Some(name) = names.iter().find(|name| *name == m) else {
            return Err(format!("counts: unknown mode `{m}`"));
        };
        owned.push(name);
    }
    let template = engine.parse_output("", &[], None);
    let mut cuts: Vec<u64> = vec![0, n];
    for (_, p, s, f) in modes {
        cuts.extend([*p, *s, *f]);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut total = Detection::default();
    for pair in cuts.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        let strict: Vec<ModeOutcome<'_>> = owned
            .iter()
            .zip(modes)
            .map(|(name, (_, p, s, f))| ModeOutcome {
                mode: name,
                label: if from < *s {
                    Label::Pass
                } else {
                    Label::NoCall
                },
                found: from < *f,
                parsed: from < *p,
            })
            .collect();
        let outcome = Outcome {
            strict,
            lenient: Vec::new(),
            profile: template.clone(),
            findings: Vec::new(),
        };
        let mut one = Detection::default();
        one.add_outcome(&outcome);
        let mut k = to - from;
        let mut power = one;
        while k > 0 {
            if k & 1 == 1 {
                total.merge(&power);
            }
            let copy = power.clone();
            power.merge(&copy);
            k >>= 1;
        }
    }
    Ok(total)
}

/// Counts what detection sees in `loaded` (unreadable items and replays
/// that panic count nothing, as in the binary).
pub fn detect(loaded: &[Loaded], engine: &Engine) -> Counts {
    let mut counts = Counts::default();
    for t in loaded.iter().flatten() {
        if let Ok(outcome) =
            catch_unwind(AssertUnwindSafe(|| engine.outcome_as(t, &engine.profile)))
        {
            counts.of(&t.model).add_outcome(&outcome);
        }
    }
    counts
}

/// The records of `toolgate label --format jsonl` for `loaded`, in order,
/// written by the binary's record writer ([`toolgate_batch::label_list`]).
/// With `choices`, every model's profile is that choice (a model missing
/// from them is judged as if it were the batch's only one); without, the
/// choices are made from this batch, as the binary makes them from its
/// whole input.
pub fn label_all(
    loaded: Vec<Loaded>,
    engine: &Engine,
    auto: &Auto,
    choices: Option<&Choices>,
) -> Vec<Labeled> {
    label_list(loaded, engine, auto, choices.map(|c| &c.0))
}
