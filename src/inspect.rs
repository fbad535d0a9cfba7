//! `toolgate [inspect] [PATH…]`: hands over to the inspector crate, with
//! each transcript judged by its model's `auto` profile.

use crate::{EXIT_OK, InspectArgs};
use anyhow::Result;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use toolgate_core::Transcript;
use toolgate_core::load::load_paths;
use toolgate_tui::Replayer;
use toolgate_validator::auto::Source;
use toolgate_validator::{Auto, Chosen, Engine, Profile, Replay};

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
/// seen later gets what `auto` can say without detection. `p` in the
/// inspector picks one profile for every transcript instead ([`Replayer::pick`]).
struct AutoReplayer {
    engine: Engine,
    auto: Auto,
    choices: HashMap<Option<String>, Chosen>,
    picked: RwLock<Option<Profile>>,
}

impl AutoReplayer {
    fn chosen(&self, transcript: &Transcript) -> Chosen {
        // A poisoned lock (a panic while picking) falls back to auto.
        if let Ok(picked) = self.picked.read()
            && let Some(p) = picked.as_ref()
        {
            return Chosen {
                profile: p.clone(),
                source: Source::Given,
            };
        }
        match self.choices.get(&transcript.model) {
            Some(c) => c.clone(),
            None => self.auto.choose(transcript.model.as_deref(), None),
        }
    }
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
        self.engine
            .replay_as(transcript, &self.chosen(transcript).profile)
    }
    fn judge(&self, transcript: &Transcript) -> Option<(Profile, String)> {
        let chosen = self.chosen(transcript);
        let source = match chosen.source {
            Source::Given => "picked with p, or --profile".to_string(),
            other => other.to_string(),
        };
        Some((chosen.profile, source))
    }
    fn profiles(&self) -> Vec<String> {
        let mut names: Vec<String> = Profile::builtin_names()
            .into_iter()
            .map(String::from)
            .collect();
        for mode in self.engine.mode_names() {
            if !names.iter().any(|n| n == mode) {
                names.push(mode.to_string());
            }
        }
        names
    }
    fn pick(&self, name: Option<&str>) -> bool {
        let profile = match name {
            None => None,
            Some(name) => match Profile::builtin(name) {
                Some(p) => Some(p),
                None if self.engine.mode_names().contains(&name) => Some(Profile::for_mode(name)),
                None => return false,
            },
        };
        match self.picked.write() {
            Ok(mut picked) => {
                *picked = profile;
                true
            }
            Err(_) => false,
        }
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
        picked: RwLock::new(None),
    });
    match toolgate_tui::run_with(paths, replayer, &primary, args.mouse) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) => Err(anyhow::Error::new(e).context("inspector")),
    }
}
