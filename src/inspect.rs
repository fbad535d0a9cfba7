//! `toolgate [inspect] [PATH…]`: hands over to the inspector crate, with
//! each transcript judged by its model's `auto` profile.

use crate::{EXIT_OK, InspectArgs};
use anyhow::Result;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use toolgate_core::Transcript;
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

/// The engine judging each transcript by its model's `auto` profile. The
/// choice over the given paths (detection reads them all) is made behind
/// the screen, which shows at once: until it is made, and for a model first
/// seen later, a transcript gets what `auto` can say without detection;
/// once it is made, every transcript is replayed again if a model's choice
/// moved ([`Replayer::revision`]). `p` in the inspector picks one profile
/// for every transcript instead ([`Replayer::pick`]).
struct AutoReplayer {
    engine: Engine,
    auto: Auto,
    choices: RwLock<Option<HashMap<Option<String>, Chosen>>>,
    revision: std::sync::atomic::AtomicU64,
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
        // A poisoned lock (a panic while storing) falls back to auto too.
        let made = self
            .choices
            .read()
            .ok()
            .and_then(|c| c.as_ref()?.get(&transcript.model).cloned());
        made.unwrap_or_else(|| self.auto.choose(transcript.model.as_deref(), None))
    }

    /// Makes the choice over `paths` and stores it; a new revision when a
    /// model's choice differs from what was used until now.
    fn detect(&self, paths: &[PathBuf]) {
        let choices = toolgate_batch::choose(&self.engine, &self.auto, paths);
        let moved = choices
            .iter()
            .any(|(model, c)| *c != self.auto.choose(model.as_deref(), None));
        if let Ok(mut slot) = self.choices.write() {
            *slot = Some(choices);
        }
        if moved {
            self.revision
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
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
    fn openers(&self) -> Vec<(String, Option<&'static [&'static str]>)> {
        Replayer::openers(&self.engine)
    }
    fn revision(&self) -> u64 {
        self.revision.load(std::sync::atomic::Ordering::SeqCst)
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
    let primary = engine.profile.primary.clone();
    let given = auto.is_given();
    let auto_replayer = Arc::new(AutoReplayer {
        engine,
        auto,
        choices: RwLock::new(None),
        revision: std::sync::atomic::AtomicU64::new(0),
        picked: RwLock::new(None),
    });
    // Detection behind the screen (nothing to detect under --profile). The
    // thread ends with the process if the inspector quits first.
    if !given {
        let detecting = Arc::clone(&auto_replayer);
        let paths = paths.clone();
        let _ = std::thread::Builder::new()
            .name("toolgate-detect".into())
            .spawn(move || detecting.detect(&paths));
    }
    let replayer: Arc<dyn Replayer> = auto_replayer;
    match toolgate_tui::run_with(paths, replayer, &primary, args.mouse) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) => Err(anyhow::Error::new(e).context("inspector")),
    }
}
