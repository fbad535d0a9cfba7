//! The inspector's replayer when the binary opens it: each transcript
//! judged by its model's `auto` profile ([`AutoReplayer`]), the choice over
//! every path made behind the screen by the batch engine
//! ([`toolgate_batch::choose`]), `p` picking one profile for all.

use crate::Replayer;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::RwLock;
use toolgate_core::Transcript;
use toolgate_validator::auto::Source;
use toolgate_validator::{Auto, Chosen, Engine, Profile, Replay};

/// The engine judging each transcript by its model's `auto` profile. The
/// choice over the given paths (detection reads them all) is made behind
/// the screen, which shows at once: until it is made, and for a model first
/// seen later, a transcript gets what `auto` can say without detection;
/// once it is made, every transcript is replayed again if a model's choice
/// moved ([`Replayer::revision`]). `p` in the inspector picks one profile
/// for every transcript instead ([`Replayer::pick`]).
pub struct AutoReplayer {
    engine: Engine,
    auto: Auto,
    choices: RwLock<Option<HashMap<Option<String>, Chosen>>>,
    revision: std::sync::atomic::AtomicU64,
    picked: RwLock<Option<Profile>>,
}

impl AutoReplayer {
    /// Judges by `auto`'s choice without detection until [`Self::detect`]
    /// has run.
    pub fn new(engine: Engine, auto: Auto) -> AutoReplayer {
        AutoReplayer {
            engine,
            auto,
            choices: RwLock::new(None),
            revision: std::sync::atomic::AtomicU64::new(0),
            picked: RwLock::new(None),
        }
    }

    /// Whether one profile is given for every model (`--profile`): then
    /// there is nothing to detect.
    pub fn is_given(&self) -> bool {
        self.auto.is_given()
    }

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
    pub fn detect(&self, paths: &[PathBuf]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn replayer(auto: Auto) -> AutoReplayer {
        AutoReplayer::new(Engine::new(Profile::default()), auto)
    }

    #[test]
    fn picking_a_profile_overrides_auto_for_every_model_until_cleared() {
        let r = replayer(Auto::new(Vec::new()));
        assert_eq!(r.profile_name(), "auto");
        assert!(!r.is_given());
        let loaded = toolgate_core::load::parse_transcript(
            r#"{"id": "t", "model": "m", "output": "hi"}"#,
            std::path::Path::new("t.json"),
            None,
            "t",
        );
        let Ok(t) = loaded else {
            panic!("a minimal transcript loads: {loaded:?}");
        };
        let before = r.judge(&t).map(|(p, _)| p.name);
        assert!(
            !r.pick(Some("no-such-profile")),
            "an unknown name is refused"
        );
        assert!(r.pick(Some("hermes")));
        let picked = r.judge(&t);
        assert_eq!(
            picked.as_ref().map(|(p, s)| (p.name.as_str(), s.as_str())),
            Some(("hermes", "picked with p, or --profile"))
        );
        assert!(r.pick(None));
        assert_eq!(r.judge(&t).map(|(p, _)| p.name), before);
        assert_eq!(r.revision(), 0, "picking is not a new detection");
    }

    #[test]
    fn a_given_profile_is_named_and_needs_no_detection() {
        let r = replayer(Auto::given(Profile::for_mode("tag")));
        assert!(r.is_given());
        assert_eq!(r.profile_name(), r.engine.profile.name);
        assert!(r.profiles().iter().any(|p| p == "tag"));
    }
}
