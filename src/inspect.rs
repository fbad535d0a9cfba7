//! `toolgate [inspect] [PATH…]`: hands over to the inspector crate, with
//! each transcript judged by its model's `auto` profile.

use crate::{EXIT_OK, InspectArgs};
use anyhow::Result;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_core::Transcript;
use toolgate_core::load::load_paths;
use toolgate_tui::Replayer;
use toolgate_validator::{Auto, Chosen, Engine, Replay};

/// The paths to inspect: as given, else `transcripts/` when it exists, else
/// the current directory.
fn default_paths(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    if !paths.is_empty() {
        return paths;
    }
    let transcripts = PathBuf::from("transcripts");
    if transcripts.is_dir() {
        vec![transcripts]
    } else {
        vec![PathBuf::from(".")]
    }
}

/// The engine judging each transcript by its model's `auto` profile, chosen
/// at start over the given paths (detection reads them all); a model first
/// seen later gets what `auto` can say without detection.
struct AutoReplayer {
    engine: Engine,
    auto: Auto,
    choices: HashMap<Option<String>, Chosen>,
}

impl Replayer for AutoReplayer {
    fn modes(&self) -> Vec<String> {
        Replayer::modes(&self.engine)
    }
    fn profile_name(&self) -> String {
        if self.auto.is_given() {
            self.engine.profile.name.clone()
        } else {
            "auto".into()
        }
    }
    fn replay(&self, transcript: &Transcript) -> Replay {
        let chosen = match self.choices.get(&transcript.model) {
            Some(c) => c.clone(),
            None => self.auto.choose(transcript.model.as_deref(), None),
        };
        self.engine.replay_as(transcript, &chosen.profile)
    }
}

/// Runs the inspector.
pub fn run(args: InspectArgs) -> Result<u8> {
    let engine = crate::setup::engine(&args.engine)?;
    let auto = crate::setup::auto(&args.engine, &engine)?;
    let paths = default_paths(args.paths);
    let choices = {
        let loaded = load_paths(&paths);
        let transcripts: Vec<&Transcript> = loaded.iter().filter_map(|l| l.as_ref().ok()).collect();
        crate::batch::choose(&engine, &auto, &transcripts)
    };
    let primary = engine.profile.primary.clone();
    let replayer: Arc<dyn Replayer> = Arc::new(AutoReplayer {
        engine,
        auto,
        choices,
    });
    match toolgate_tui::run_with(paths, replayer, &primary, args.mouse) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) => Err(anyhow::Error::new(e).context("inspector")),
    }
}
