//! Labeling a list of transcripts already in memory: what the Python
//! package's `label_text` and `relabel_columns` do with the rows they are
//! given, with the records [`record_line`] writes — so that the package and
//! `toolgate label --format jsonl` cannot disagree on a record.
//!
//! The list is judged as the binary judges its whole input: each transcript
//! under the profile `auto` chooses for its model, first the tentative
//! choice (every source but detection, else the engine's profile) while
//! detection counts what each mode parses, then, once the list is counted,
//! again under the final choice for the transcripts whose model's choice
//! changed. Given `choices` (made from the counts of a whole dataset that a
//! caller split over many workers), every model in them is judged by its
//! choice and nothing is counted.

use crate::label::{Labels, Record, Summarizer, error_record};
use crate::stream::panic_text;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use toolgate_core::Transcript;
use toolgate_core::jsonout;
use toolgate_core::load::{LoadError, Loaded};
use toolgate_validator::auto::{Detection, Source};
use toolgate_validator::{Auto, Chosen, Engine};

/// One item of [`label_list`]'s answer, in input order.
pub struct Labeled {
    /// The transcript, when it was read and its first replay did not
    /// panic.
    pub transcript: Option<Transcript>,
    /// What `label` keeps of its replay; `None` for an unreadable item or a
    /// replay that panicked.
    pub labels: Option<Labels>,
    /// The `--format jsonl` line: the record, or the error record of an
    /// unreadable item or a replay that panicked.
    pub line: Vec<u8>,
}

/// Chosen profiles by model (`None`: transcripts without a model).
pub type ChoiceMap = HashMap<Option<String>, Chosen>;

/// The tentative choice for `model`: every source but detection, else the
/// engine's profile (as [`crate::stream_paths`] starts).
fn tentative(auto: &Auto, engine: &Engine, model: Option<&str>) -> Chosen {
    auto.by_model(model).unwrap_or_else(|| Chosen {
        profile: engine.profile.clone(),
        source: Source::Default,
    })
}

/// The error line of an unreadable item (or a panicked replay).
fn error_line(e: &LoadError) -> Vec<u8> {
    jsonout::line(&jsonout::versioned(error_record(e))).into_bytes()
}

/// Replays `t` under `chosen` and renders its record; a replay that panics
/// is that transcript's error (as in the batch engine), `Err` its line. The
/// detection of the replay goes to `count` when given.
fn judge(
    engine: &Engine,
    t: &Transcript,
    chosen: &Chosen,
    count: Option<&mut Detection>,
) -> Result<Labels, Vec<u8>> {
    let summarizer = Summarizer {
        engine,
        compare: false,
        require_labels: false,
        record: Some(Record::Line),
    };
    catch_unwind(AssertUnwindSafe(|| {
        let outcome = engine.outcome_as(t, &chosen.profile);
        if let Some(d) = count {
            d.add_outcome(&outcome);
        }
        summarizer.summarize(t, &outcome, chosen)
    }))
    .map_err(|panic| {
        error_line(&LoadError {
            path: t.path.clone(),
            line: t.line,
            reason: panic_text(panic),
        })
    })
}

/// The records of `toolgate label --format jsonl` for `loaded`, in order
/// (see the module docs). With `choices`, a model missing from them is
/// judged by its tentative choice, as if it were the list's only one.
pub fn label_list(
    loaded: Vec<Loaded>,
    engine: &Engine,
    auto: &Auto,
    choices: Option<&ChoiceMap>,
) -> Vec<Labeled> {
    let detect_here = choices.is_none() && !auto.is_given();
    let mut counts: Vec<(Option<String>, Detection)> = Vec::new();
    let mut chosen_of: ChoiceMap = HashMap::new();
    let mut out: Vec<(Labeled, Option<Chosen>)> = Vec::with_capacity(loaded.len());
    for item in loaded {
        let t = match item {
            Ok(t) => t,
            Err(e) => {
                let line = error_line(&e);
                out.push((
                    Labeled {
                        transcript: None,
                        labels: None,
                        line,
                    },
                    None,
                ));
                continue;
            }
        };
        let chosen = match choices.and_then(|c| c.get(&t.model)) {
            Some(c) => c.clone(),
            None => chosen_of
                .entry(t.model.clone())
                .or_insert_with(|| tentative(auto, engine, t.model.as_deref()))
                .clone(),
        };
        let count = detect_here.then(|| detection_of(&mut counts, &t.model));
        match judge(engine, &t, &chosen, count) {
            Ok(mut labels) => {
                let line = labels.line.take().unwrap_or_default();
                out.push((
                    Labeled {
                        transcript: Some(t),
                        labels: Some(labels),
                        line,
                    },
                    Some(chosen),
                ));
            }
            Err(line) => out.push((
                Labeled {
                    transcript: None,
                    labels: None,
                    line,
                },
                None,
            )),
        }
    }
    if detect_here {
        let finals: ChoiceMap = counts
            .iter()
            .map(|(model, d)| (model.clone(), auto.choose(model.as_deref(), Some(d))))
            .collect();
        for (item, chosen) in &mut out {
            let (Some(t), Some(was)) = (item.transcript.as_ref(), chosen.as_ref()) else {
                continue;
            };
            let Some(now) = finals.get(&t.model) else {
                continue;
            };
            if now != was {
                match judge(engine, t, now, None) {
                    Ok(mut labels) => {
                        item.line = labels.line.take().unwrap_or_default();
                        item.labels = Some(labels);
                    }
                    // The transcript stays: its error line is in its place.
                    Err(line) => {
                        item.line = line;
                        item.labels = None;
                    }
                }
            }
        }
    }
    out.into_iter().map(|(item, _)| item).collect()
}

/// The detection counts of `model`, added in first-seen order.
fn detection_of<'a>(
    counts: &'a mut Vec<(Option<String>, Detection)>,
    model: &Option<String>,
) -> &'a mut Detection {
    let at = match counts.iter().position(|(m, _)| m == model) {
        Some(at) => at,
        None => {
            counts.push((model.clone(), Detection::default()));
            counts.len() - 1
        }
    };
    &mut counts[at].1
}
