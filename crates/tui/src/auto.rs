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
/// the screen, which shows at once: until it is made, a transcript gets
/// what `auto` can say without detection; once it is made, every transcript
/// is replayed again if a model's choice moved ([`Replayer::revision`]).
/// When a model's transcripts change on disk, its choice is made again over
/// the files holding them ([`Replayer::redetect`]), the same way. `p` in the inspector picks one profile
/// for every transcript instead ([`Replayer::pick`]).
pub struct AutoReplayer {
    engine: Engine,
    auto: Auto,
    /// Each model's choice, with the number of the detection that made it:
    /// a detection that started earlier (the first one, over every path,
    /// can outlast later ones) never replaces a later one's choice.
    choices: RwLock<HashMap<Option<String>, (u64, Chosen)>>,
    /// Numbers detections in the order they start.
    detections: std::sync::atomic::AtomicU64,
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
            choices: RwLock::new(HashMap::new()),
            detections: std::sync::atomic::AtomicU64::new(0),
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
        self.made(&transcript.model)
    }

    /// The choice for `model`: detection's, else what `auto` says without.
    fn made(&self, model: &Option<String>) -> Chosen {
        let made = self
            .choices
            .read()
            .ok()
            .and_then(|c| c.get(model).map(|(_, chosen)| chosen.clone()));
        made.unwrap_or_else(|| self.auto.choose(model.as_deref(), None))
    }

    /// Makes the choice over `paths` and stores it; a new revision when a
    /// model's choice differs from what was used until now.
    pub fn detect(&self, paths: &[PathBuf]) {
        self.detect_models(paths, None);
    }

    /// Makes the choice over `files` for `models` (`None`: every model
    /// found) and stores it; a new revision when a model's choice differs
    /// from what was used until now. `files` must hold every transcript of
    /// `models`: the counts of other models found there are partial.
    fn detect_models(&self, files: &[PathBuf], models: Option<&[Option<String>]>) {
        use std::sync::atomic::Ordering;
        let number = self.detections.fetch_add(1, Ordering::SeqCst);
        let mut choices = toolgate_batch::choose(&self.engine, &self.auto, files);
        if let Some(models) = models {
            choices.retain(|model, _| models.contains(model));
            // A model with no transcript left goes back to `auto` alone.
            for model in models {
                choices
                    .entry(model.clone())
                    .or_insert_with(|| self.auto.choose(model.as_deref(), None));
            }
        }
        let mut moved = false;
        if let Ok(mut slot) = self.choices.write() {
            for (model, chosen) in choices {
                let was = match slot.get(&model) {
                    Some((made_by, _)) if *made_by > number => continue,
                    Some((_, was)) => was.clone(),
                    None => self.auto.choose(model.as_deref(), None),
                };
                moved |= was != chosen;
                slot.insert(model, (number, chosen));
            }
        }
        if moved {
            self.revision.fetch_add(1, Ordering::SeqCst);
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
    fn replay_judged(&self, transcript: &Transcript, judge: Option<&Profile>) -> Replay {
        match judge {
            Some(profile) => self.engine.replay_as(transcript, profile),
            None => Replayer::replay(self, transcript),
        }
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
    fn detects(&self) -> bool {
        !self.auto.is_given()
    }
    fn redetect(&self, models: &[Option<String>], files: &[PathBuf]) {
        if self.detects() {
            self.detect_models(files, Some(models));
        }
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

    /// Detection ran once, over the transcripts there at startup: two
    /// `zz-model` transcripts added later were judged by the default
    /// profile (`reject`), where `toolgate label` detects `bracket`
    /// (`pass`, `execute`). Their model is detected again now, and a moved
    /// choice is a new revision.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_model_whose_transcripts_came_later_is_detected_again() {
        let dir = tempfile::tempdir().unwrap();
        let r = replayer(Auto::new(Vec::new()));
        assert!(r.detects());
        r.detect(&[dir.path().to_path_buf()]);
        assert_eq!(r.revision(), 0, "nothing to detect from");
        let tools = serde_json::json!([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]);
        let mut files = Vec::new();
        for i in 1..=2 {
            let path = dir.path().join(format!("b{i}.json"));
            let t = serde_json::json!({"id": format!("b{i}"), "model": "zz-model", "tools": tools, "output": "[get_weather(city=\"Paris\")]"});
            std::fs::write(&path, t.to_string()).unwrap();
            files.push(path);
        }
        let t = toolgate_core::load::load_file(&files[0])
            .into_iter()
            .next()
            .unwrap()
            .unwrap();
        let before = r.judge(&t).unwrap();
        assert_eq!(before.1, "default");

        let model = Some("zz-model".to_string());
        r.redetect(std::slice::from_ref(&model), &files);
        assert_eq!(r.revision(), 1, "the choice moved: replay again");
        let (profile, source) = r.judge(&t).unwrap();
        assert_eq!(
            (profile.name.as_str(), source.as_str()),
            ("bracket", "detected from 2 transcripts")
        );
        assert_eq!(r.replay(&t).profile.decision.kind(), "execute");

        // The same again moves nothing.
        r.redetect(std::slice::from_ref(&model), &files);
        assert_eq!(r.revision(), 1);
        // A detection that started before the last one (the first one,
        // over every path, can run long) does not undo its choice: here
        // one that found no transcript of the model.
        r.detections.store(0, std::sync::atomic::Ordering::SeqCst);
        r.detect_models(&[], Some(std::slice::from_ref(&model)));
        assert_eq!(r.judge(&t).unwrap().0.name, "bracket");
    }

    #[test]
    fn a_given_profile_is_named_and_needs_no_detection() {
        let r = replayer(Auto::given(Profile::for_mode("tag")));
        assert!(r.is_given());
        assert_eq!(r.profile_name(), r.engine.profile.name);
        assert!(r.profiles().iter().any(|p| p == "tag"));
    }
}
