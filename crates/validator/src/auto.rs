//! `auto`: each transcript judged by its model's own profile (SPEC §4).
//!
//! The profile is chosen per model; the first source that has an answer wins,
//! and the answer always carries its [`Source`]:
//!
//! 1. `--profile` ([`Source::Given`]): one profile for every model;
//! 2. `configured` ([`Source::Configured`]): the `[models]` table of
//!    `toolgate.toml`, glob → profile, first matching glob in file order;
//! 3. `by name` ([`Source::ByName`]): the built-in family table
//!    [`toolgate_formats::mode_for_model`] (the mode the model family emits, read by
//!    [`Profile::reading`]) — unless that mode parses nothing in any of the
//!    model's transcripts while another mode does (the deployment prompts
//!    another format), when detection decides;
//! 4. `detected` ([`Source::Detected`]): across that model's transcripts in
//!    the batch, the mode whose live candidates parse most often, else (none
//!    parse) the one that finds them most often ([`Detection::best`]); a
//!    mode that found nothing is never chosen;
//! 5. `default` ([`Source::Default`]): the default profile.
//!
//! A transcript without a `model` has no model to name or to group by: it
//! is judged by `--profile`, else by the default profile.
//!
//! ```
//! use toolgate_validator::auto::{Auto, Source};
//! let auto = Auto::new(Vec::new());
//! let chosen = auto.by_model(Some("Qwen/Qwen3-Coder-30B-A3B-Instruct")).unwrap();
//! assert_eq!(chosen.profile.name, "qwen3-coder");
//! assert_eq!(chosen.source, Source::ByName { fragment: "qwen3-coder".into() });
//! assert_eq!(chosen.source.to_string(), "by name (qwen3-coder)");
//! assert!(auto.by_model(Some("my-finetune")).is_none());
//! ```

use crate::outcome::{ModeOutcome, Outcome};
use crate::profile::Profile;
use crate::replay::Replay;
use std::fmt;

/// Why a transcript was judged by the profile it was judged by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `--profile` named it.
    Given,
    /// The `[models]` table of `toolgate.toml`: the glob that matched.
    Configured {
        /// The glob.
        glob: String,
    },
    /// The built-in family table: the name fragment that matched.
    ByName {
        /// The fragment of the model name.
        fragment: String,
    },
    /// The mode whose candidates parse most often across the model's
    /// transcripts.
    Detected {
        /// How many transcripts of the model the detection read.
        transcripts: usize,
    },
    /// Nothing else applied.
    Default,
}

impl Source {
    /// The short machine name: `given`, `configured`, `by name`, `detected`,
    /// `default`.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Given => "given",
            Source::Configured { .. } => "configured",
            Source::ByName { .. } => "by name",
            Source::Detected { .. } => "detected",
            Source::Default => "default",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Given => f.write_str("--profile"),
            Source::Configured { glob } => write!(f, "configured ({glob})"),
            Source::ByName { fragment } => write!(f, "by name ({fragment})"),
            Source::Detected { transcripts: 1 } => f.write_str("detected from 1 transcript"),
            Source::Detected { transcripts } => {
                write!(f, "detected from {transcripts} transcripts")
            }
            Source::Default => f.write_str("default"),
        }
    }
}

/// A profile and why it was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    /// The profile.
    pub profile: Profile,
    /// Why.
    pub source: Source,
}

/// What detection counts of one model's transcripts within one batch job,
/// the mode names borrowed from the engine that replayed them (the
/// [`ModeOutcome::mode`]s): counting a transcript copies no name, and a mode
/// is found at its index by address — the same `&str` of a live engine is
/// the same name — with a comparison of the text only when the address
/// differs. [`Detection::merge_job`] adds it to a model's counts. (Counted
/// into a [`Detection`], each job's first transcript of each model copied
/// every mode name, and the writer thread freed them all.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobDetection<'e> {
    transcripts: usize,
    /// Engine order (the order of the first outcome added).
    modes: Vec<(&'e str, ModeCount)>,
}

impl<'e> JobDetection<'e> {
    /// Counts one transcript's [`Outcome`] (the batch fast path).
    pub fn add_outcome(&mut self, outcome: &Outcome<'e>) {
        self.transcripts += 1;
        if self.modes.is_empty() {
            // A first outcome: its modes are distinct (engine names), so
            // nothing is looked up.
            self.modes = outcome.strict.iter().map(|m| (m.mode, m.count())).collect();
            return;
        }
        for (i, m) in outcome.strict.iter().enumerate() {
            let same = |name: &&str| std::ptr::eq(*name, m.mode) || *name == m.mode;
            *count_of(&mut self.modes, i, same, || m.mode) += m.count();
        }
    }
}

/// The counts of the mode `same` recognizes in `modes`, looked at first at
/// index `hint` (modes are mostly added in the engine's order, so that is
/// where it usually is); added (named by `name`) when absent.
fn count_of<K>(
    modes: &mut Vec<(K, ModeCount)>,
    hint: usize,
    same: impl Fn(&K) -> bool,
    name: impl FnOnce() -> K,
) -> &mut ModeCount {
    let at = match modes.get(hint) {
        Some((k, _)) if same(k) => hint,
        _ => match modes.iter().position(|(k, _)| same(k)) {
            Some(at) => at,
            None => {
                modes.push((name(), ModeCount::default()));
                modes.len() - 1
            }
        },
    };
    // `at` is an index found in `modes` or the one just pushed.
    &mut modes[at].1
}

/// The `auto` profile chooser.
#[derive(Clone, Debug, Default)]
pub struct Auto {
    given: Option<Profile>,
    configured: Vec<(String, Profile)>,
}

impl Auto {
    /// `auto` with the `[models]` table of `toolgate.toml` (glob → profile,
    /// in file order).
    pub fn new(configured: Vec<(String, Profile)>) -> Auto {
        Auto {
            given: None,
            configured,
        }
    }

    /// One profile for every model (`--profile`).
    pub fn given(profile: Profile) -> Auto {
        Auto {
            given: Some(profile),
            configured: Vec::new(),
        }
    }

    /// Whether `--profile` fixed the profile.
    pub fn is_given(&self) -> bool {
        self.given.is_some()
    }

    /// The choice every source but detection can make: `--profile`, the
    /// `[models]` table, the built-in family table; for a transcript without
    /// a model, `--profile` or the default. `None`: detection decides.
    pub fn by_model(&self, model: Option<&str>) -> Option<Chosen> {
        if let Some(p) = &self.given {
            return Some(Chosen {
                profile: p.clone(),
                source: Source::Given,
            });
        }
        let Some(model) = model else {
            return Some(Chosen {
                profile: Profile::default(),
                source: Source::Default,
            });
        };
        if let Some((glob, p)) = self.configured.iter().find(|(g, _)| glob_match(g, model)) {
            return Some(Chosen {
                profile: p.clone(),
                source: Source::Configured { glob: glob.clone() },
            });
        }
        let (mode, fragment) = toolgate_formats::mode_for_model(model)?;
        Some(Chosen {
            profile: Profile::reading(mode),
            source: Source::ByName {
                fragment: fragment.into(),
            },
        })
    }

    /// The choice for `model`, given what detection saw of its transcripts.
    ///
    /// A `by name` choice yields to detection when its primary mode parses
    /// nothing in any of the model's transcripts while another mode does:
    /// the family table names the model's chat-template format, and a
    /// deployment that prompts the model with another format shows it in
    /// every output. It yields too when its mode finds nothing at all while
    /// detection's choice is `native` (the server parsed every call, and
    /// none of them parses): the family's mode never reads those calls, and
    /// would rate them `no_call`. `--profile` and `configured` never yield.
    pub fn choose(&self, model: Option<&str>, detection: Option<&Detection>) -> Chosen {
        if let Some(chosen) = self.by_model(model) {
            let reads_nothing = |d: &Detection| {
                let own = d.count(&chosen.profile.primary);
                own.parsed == 0
                    && d.best().is_some_and(|mode| {
                        d.count(mode).parsed > 0 || (mode == "native" && own.found == 0)
                    })
            };
            if !matches!(chosen.source, Source::ByName { .. })
                || !detection.is_some_and(reads_nothing)
            {
                return chosen;
            }
        }
        match detection.and_then(|d| d.best().map(|mode| (mode, d.transcripts()))) {
            Some((mode, transcripts)) => Chosen {
                profile: Profile::reading(mode),
                source: Source::Detected { transcripts },
            },
            None => Chosen {
                profile: Profile::default(),
                source: Source::Default,
            },
        }
    }
}

/// Per mode, over one model's transcripts: in how many the mode's live
/// candidates all parse, how many are labeled `pass`, and in how many it
/// finds a live candidate at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModeCount {
    /// Transcripts where the mode finds live candidates and every one parses.
    pub parsed: usize,
    /// Transcripts where the mode's label is `pass`.
    pub passes: usize,
    /// Transcripts where the mode finds a live candidate.
    pub found: usize,
}

impl std::ops::AddAssign for ModeCount {
    fn add_assign(&mut self, other: ModeCount) {
        self.parsed += other.parsed;
        self.passes += other.passes;
        self.found += other.found;
    }
}

impl ModeOutcome<'_> {
    /// What this outcome adds to its mode's [`ModeCount`].
    fn count(&self) -> ModeCount {
        ModeCount {
            parsed: usize::from(self.parsed),
            passes: usize::from(self.label.is_pass()),
            found: usize::from(self.found),
        }
    }
}

/// What detection has seen of one model's transcripts (strict extraction).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Detection {
    transcripts: usize,
    /// Engine order (the order of the first replay added).
    modes: Vec<(String, ModeCount)>,
}

impl Detection {
    /// Counts one transcript's replay.
    pub fn add(&mut self, replay: &Replay) {
        self.transcripts += 1;
        for m in &replay.strict {
            let (found, parsed) = crate::outcome::found_and_parsed(&m.candidates);
            self.tally(&m.mode, found, parsed, m.label.is_pass());
        }
    }

    /// Counts one transcript's [`Outcome`] (the batch fast path).
    pub fn add_outcome(&mut self, outcome: &Outcome<'_>) {
        self.transcripts += 1;
        if self.modes.is_empty() {
            // A first outcome: its modes are distinct (engine names), so
            // nothing is looked up.
            self.modes = outcome
                .strict
                .iter()
                .map(|m| (m.mode.to_string(), m.count()))
                .collect();
            return;
        }
        for (i, m) in outcome.strict.iter().enumerate() {
            self.tally_at(i, m.mode, m.found, m.parsed, m.label.is_pass());
        }
    }

    fn tally(&mut self, mode: &str, found: bool, parsed: bool, pass: bool) {
        self.tally_at(usize::MAX, mode, found, parsed, pass);
    }

    /// [`Detection::tally`], looking first at index `hint` (modes are mostly
    /// added in the engine's order, so that is where `mode` usually is).
    fn tally_at(&mut self, hint: usize, mode: &str, found: bool, parsed: bool, pass: bool) {
        *count_of(&mut self.modes, hint, |k| k == mode, || mode.to_string()) += ModeCount {
            parsed: usize::from(parsed),
            passes: usize::from(pass),
            found: usize::from(found),
        };
    }

    /// Adds what `other` counted (for detection split over threads).
    pub fn merge(&mut self, other: &Detection) {
        let modes = other.modes.iter().map(|(m, c)| (m.as_str(), c));
        self.merge_counts(other.transcripts, modes);
    }

    /// Adds what a batch job counted ([`JobDetection`]).
    pub fn merge_job(&mut self, other: &JobDetection<'_>) {
        let modes = other.modes.iter().map(|(m, c)| (*m, c));
        self.merge_counts(other.transcripts, modes);
    }

    fn merge_counts<'a>(
        &mut self,
        transcripts: usize,
        modes: impl Iterator<Item = (&'a str, &'a ModeCount)>,
    ) {
        self.transcripts += transcripts;
        for (i, (mode, c)) in modes.enumerate() {
            *count_of(&mut self.modes, i, |k| k == mode, || mode.to_string()) += *c;
        }
    }

    /// How many transcripts were added.
    pub fn transcripts(&self) -> usize {
        self.transcripts
    }

    /// The counts of `mode` (zero when it was never replayed).
    pub fn count(&self, mode: &str) -> ModeCount {
        self.modes
            .iter()
            .find(|(m, _)| m == mode)
            .map(|(_, c)| *c)
            .unwrap_or_default()
    }

    /// Every mode's counts, in engine order.
    pub fn counts(&self) -> &[(String, ModeCount)] {
        &self.modes
    }

    /// The detected mode: the most transcripts whose live candidates all
    /// parse; ties broken by more `pass` labels, then by more transcripts
    /// with any live candidate, then by a mode that needs its family's markup
    /// over one that reads a bare payload anywhere
    /// ([`toolgate_formats::BARE_READERS`]: `llama3` reads the JSON
    /// inside Nemotron's `<TOOLCALL>` as well as `nemotron` does), then by the
    /// earlier mode in engine order (`toolgate formats` order: seed modes,
    /// families, `native`, custom patterns). A mode that found no live
    /// candidate in any transcript is never chosen: `None` when no mode found
    /// one. When no mode's candidates parse anywhere, the mode that finds
    /// them is still the evidence: a model whose every native call is
    /// malformed is rated by `native` (`malformed_json`, re-roll advice), not
    /// by the default profile, which sees no call (`no_call`).
    pub fn best(&self) -> Option<&str> {
        /// (parsed, passes, found, needs markup): compared in that order.
        type Score = (usize, usize, usize, bool);
        let mut best: Option<(&str, Score)> = None;
        for (mode, c) in &self.modes {
            let marked = !toolgate_formats::BARE_READERS.contains(&mode.as_str());
            let score = (c.parsed, c.passes, c.found, marked);
            if c.found > 0 && best.is_none_or(|(_, b)| score > b) {
                best = Some((mode, score));
            }
        }
        match best {
            Some((mode, (parsed, ..))) if parsed > 0 => Some(mode),
            // No mode's candidates parse anywhere: only the server's own
            // calls (`native`) are evidence then; a stray `[f(` or `{` in
            // prose found by a text mode is not.
            _ => self
                .modes
                .iter()
                .find(|(mode, c)| mode == "native" && c.found > 0)
                .map(|(mode, _)| mode.as_str()),
        }
    }
}

/// Whether `text` matches the glob `pattern`, case-insensitively: `*` is any
/// run of characters, `?` one character, everything else itself. Time is
/// O(|pattern| · |text|) at worst (one backtrack point, the last `*`).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::profile::Profile;
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::Transcript;
    use toolgate_formats::Extractor;

    #[test]
    fn globs() {
        assert!(glob_match("qwen*", "Qwen3-8B"));
        assert!(glob_match("*coder*", "qwen3-coder-30b"));
        assert!(glob_match("gpt-oss-??b", "gpt-oss-20b"));
        assert!(!glob_match("gpt-oss-??b", "gpt-oss-120b"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("a*b", "acbd"));
        assert!(glob_match("a*b*", "acbd"));
        assert!(glob_match("my-model", "MY-MODEL"));
    }

    fn mine() -> Auto {
        Auto::new(vec![
            ("acme-*".into(), Profile::for_mode("glm")),
            ("*".into(), Profile::builtin("mistral").unwrap()),
        ])
    }

    /// Source 1: `--profile` wins over everything.
    #[test]
    fn given_profile_wins() {
        let auto = Auto::given(Profile::builtin("kimi").unwrap());
        let c = auto.choose(Some("qwen3-8b"), None);
        assert_eq!((c.profile.name.as_str(), c.source), ("kimi", Source::Given));
        assert_eq!(Source::Given.to_string(), "--profile");
    }

    /// Source 2: the `[models]` table, first glob in file order, before the
    /// built-in table.
    #[test]
    fn configured_glob_wins_over_the_name_table() {
        let c = mine().choose(Some("acme-qwen3-8b"), None);
        assert_eq!(c.profile.name, "glm");
        assert_eq!(
            c.source,
            Source::Configured {
                glob: "acme-*".into()
            }
        );
        assert_eq!(c.source.to_string(), "configured (acme-*)");
        let c = mine().choose(Some("qwen3-8b"), None);
        assert_eq!(c.profile.name, "mistral");
        assert_eq!(c.source.kind(), "configured");
    }

    /// Source 3: the built-in family table.
    #[test]
    fn by_name_reads_the_family_table() {
        let c = Auto::default().choose(Some("glm-4.5-air"), None);
        assert_eq!(c.profile, Profile::builtin("glm").unwrap());
        assert_eq!(
            c.source,
            Source::ByName {
                fragment: "glm-4.5".into()
            }
        );
        let c = Auto::default().choose(Some("apertus-8b-instruct-2509"), None);
        assert_eq!(c.profile, Profile::for_mode("apertus"));
        assert_eq!(c.source.to_string(), "by name (apertus)");
    }

    /// A family-table choice whose mode reads nothing in the batch yields to
    /// detection (a qwen2.5 deployment prompted with GLM markup); one whose
    /// mode reads something stays, and so does a configured choice.
    #[test]
    fn by_name_yields_to_detection_only_when_its_mode_reads_nothing() {
        let engine = Engine::new(Profile::default());
        let glm_only = detect(&engine, &[GLM, GLM]);
        let c = Auto::default().choose(Some("qwen2.5-14b-instruct"), Some(&glm_only));
        assert_eq!(c.profile.name, "glm");
        assert_eq!(c.source, Source::Detected { transcripts: 2 });
        let hermes = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Gent\"}}</tool_call>";
        let mixed = detect(&engine, &[GLM, GLM, hermes]);
        let c = Auto::default().choose(Some("qwen2.5-14b-instruct"), Some(&mixed));
        assert_eq!(
            (c.profile.name.as_str(), c.source.kind()),
            ("hermes", "by name")
        );
        let prose = detect(&engine, &["It is sunny."]);
        let c = Auto::default().choose(Some("qwen2.5-14b-instruct"), Some(&prose));
        assert_eq!(
            c.source.kind(),
            "by name",
            "nothing parses: the name stands"
        );
        let c = mine().choose(Some("acme-1"), Some(&glm_only));
        assert_eq!(c.source.kind(), "configured");
    }

    fn weather(output: &str) -> Transcript {
        transcript(json!({"model": "m", "output": output}))
    }

    fn detect(engine: &Engine, outputs: &[&str]) -> Detection {
        let mut d = Detection::default();
        for o in outputs {
            d.add(&engine.replay(&weather(o)));
        }
        d
    }

    const GLM: &str = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Gent</arg_value>\n</tool_call>";

    /// A batch job's counts (names borrowed, found by address) merged into a
    /// model's give what counting each outcome into a `Detection` gives:
    /// whatever the jobs' split, with a mode's name at another address
    /// (compared by text) and with the modes in another order.
    #[test]
    fn job_counts_merged_equal_counts_of_each_outcome() {
        let engine = Engine::new(Profile::default());
        let hermes = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Gent\"}}</tool_call>";
        let outputs = [
            GLM,
            hermes,
            "It is sunny.",
            GLM,
            "[get_weather(city='Gent')]",
        ];
        let transcripts: Vec<_> = outputs.iter().map(|o| weather(o)).collect();
        let outcomes: Vec<Outcome<'_>> = transcripts
            .iter()
            .map(|t| engine.outcome_as(t, &engine.profile))
            .collect();
        let mut want = Detection::default();
        for o in &outcomes {
            want.add_outcome(o);
        }
        assert_eq!(want.transcripts(), 5);
        assert!(want.count("glm").parsed == 2 && want.count("hermes").parsed == 1);
        for split in 0..=outcomes.len() {
            let mut got = Detection::default();
            for part in [&outcomes[..split], &outcomes[split..]] {
                let mut job = JobDetection::default();
                part.iter().for_each(|o| job.add_outcome(o));
                got.merge_job(&job);
            }
            assert_eq!(got, want, "split at {split}");
        }
        // The same names at other addresses, in reverse order, after a job
        // began with the engine's.
        let copies: Vec<String> = outcomes[0]
            .strict
            .iter()
            .map(|m| m.mode.to_string())
            .collect();
        let mut moved = outcomes[3].clone();
        for (m, name) in moved.strict.iter_mut().zip(&copies) {
            m.mode = name;
        }
        moved.strict.reverse();
        let mut job = JobDetection::default();
        for o in [
            &outcomes[0],
            &outcomes[1],
            &outcomes[2],
            &moved,
            &outcomes[4],
        ] {
            job.add_outcome(o);
        }
        let mut got = Detection::default();
        got.merge_job(&job);
        assert_eq!(got, want);
    }

    /// Source 4: detection, over the real extractors.
    #[test]
    fn detected_is_the_mode_whose_candidates_parse_most_often() {
        let engine = Engine::new(Profile::default());
        let d = detect(&engine, &[GLM, GLM, "It is sunny."]);
        assert_eq!(d.best(), Some("glm"));
        let c = Auto::default().choose(Some("house-model-7b"), Some(&d));
        assert_eq!(c.profile, Profile::builtin("glm").unwrap());
        assert_eq!(c.source, Source::Detected { transcripts: 3 });
        assert_eq!(c.source.to_string(), "detected from 3 transcripts");
    }

    /// Source 5: the default, when no mode found anything, and never a mode
    /// that found nothing.
    #[test]
    fn prose_only_models_get_the_default_profile() {
        let engine = Engine::new(Profile::default());
        let d = detect(&engine, &["It is sunny.", "I cannot do that."]);
        assert_eq!(d.best(), None);
        let c = Auto::default().choose(Some("house-model-7b"), Some(&d));
        assert_eq!((c.profile, c.source), (Profile::default(), Source::Default));
        // No model at all: the default, whatever detection says.
        let c = Auto::default().choose(None, Some(&detect(&engine, &[GLM])));
        assert_eq!(c.source, Source::Default);
    }

    /// A model whose every native call is malformed (Python-style
    /// arguments) was rated `no_call` by the default profile, which never
    /// reads `tool_calls`, as if it made no call at all; `native` found the
    /// calls, so it is the evidence, and the label says what went wrong.
    #[test]
    fn a_model_whose_native_calls_never_parse_is_judged_by_native() {
        let engine = Engine::new(Profile::default());
        let call = json!({"model": "acme-chat-7b", "output": "", "finish_reason": "tool_calls",
            "tool_calls": [{"id": "c", "type": "function",
                "function": {"name": "get_weather", "arguments": "{'city': 'Paris'}"}}]});
        let mut d = Detection::default();
        for _ in 0..3 {
            d.add(&engine.replay(&transcript(call.clone())));
        }
        assert_eq!(d.count("native").parsed, 0, "{:?}", d.counts());
        assert_eq!(d.best(), Some("native"), "{:?}", d.counts());
        let c = Auto::default().choose(Some("acme-chat-7b"), Some(&d));
        assert_eq!(c.profile.primary, "native");
        assert_eq!(c.source, Source::Detected { transcripts: 3 });
        let replay = Engine::new(c.profile).replay(&transcript(call.clone()));
        assert_eq!(replay.profile.label.to_string(), "malformed_json");

        // Also for a model the family table names: hermes finds nothing
        // in the text, native's calls are the evidence.
        let mut qwen = call;
        qwen["model"] = json!("Qwen/Qwen3-8B");
        let mut d = Detection::default();
        for _ in 0..3 {
            d.add(&engine.replay(&transcript(qwen.clone())));
        }
        let c = Auto::default().choose(Some("Qwen/Qwen3-8B"), Some(&d));
        assert_eq!(c.profile.primary, "native");
        assert_eq!(c.source, Source::Detected { transcripts: 3 });
        // Not when the family's own mode finds something of its own.
        let hermes_cut = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": ";
        let mut own = qwen.clone();
        own["output"] = json!(hermes_cut);
        d.add(&engine.replay(&transcript(own)));
        let c = Auto::default().choose(Some("Qwen/Qwen3-8B"), Some(&d));
        assert_eq!(c.source.kind(), "by name");
    }

    fn counts(modes: &[(&str, usize, usize, usize)]) -> Detection {
        Detection {
            transcripts: 4,
            modes: modes
                .iter()
                .map(|&(m, parsed, passes, found)| {
                    (
                        m.to_string(),
                        ModeCount {
                            parsed,
                            passes,
                            found,
                        },
                    )
                })
                .collect(),
        }
    }

    /// The tie rule: most parsed, then most passes, then most found, then
    /// a mode that needs markup over a bare reader, then engine order.
    #[test]
    fn ties_go_to_passes_then_found_then_markup_then_engine_order() {
        let d = counts(&[("a", 2, 0, 2), ("b", 3, 0, 3)]);
        assert_eq!(d.best(), Some("b"), "more parsed");
        let d = counts(&[("a", 3, 1, 3), ("b", 3, 2, 3)]);
        assert_eq!(d.best(), Some("b"), "parsed tie: more passes");
        let d = counts(&[("a", 3, 2, 3), ("b", 3, 2, 4)]);
        assert_eq!(d.best(), Some("b"), "then more found");
        let d = counts(&[("llama3", 3, 2, 4), ("nemotron", 3, 2, 4)]);
        assert_eq!(d.best(), Some("nemotron"), "then markup over a bare reader");
        let d = counts(&[("json", 3, 2, 4), ("llama3", 3, 2, 4)]);
        assert_eq!(d.best(), Some("json"), "then engine order");
        let d = counts(&[("a", 3, 2, 4), ("b", 3, 2, 4)]);
        assert_eq!(d.best(), Some("a"), "then engine order");
        let d = counts(&[("a", 0, 0, 0), ("b", 0, 0, 0)]);
        assert_eq!(d.best(), None, "found nothing: never chosen");
        let d = counts(&[("a", 0, 0, 0), ("b", 0, 0, 4), ("c", 0, 0, 2)]);
        assert_eq!(
            d.best(),
            None,
            "none parsed: a text mode's finds are no evidence"
        );
        let d = counts(&[("b", 0, 0, 4), ("native", 0, 0, 2)]);
        assert_eq!(
            d.best(),
            Some("native"),
            "none parsed: the server's calls are"
        );
        let d = counts(&[("a", 0, 0, 4), ("b", 1, 0, 1)]);
        assert_eq!(d.best(), Some("b"), "any parse beats finding more");
    }

    /// The markup tie-break on real extractors: `llama3` reads the JSON
    /// inside Nemotron's markup as well as `nemotron` does, but `nemotron`
    /// reads the markup too.
    #[test]
    fn a_family_mode_beats_a_bare_json_reader_on_its_own_markup() {
        let engine = Engine::new(Profile::default());
        let nemotron = "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Gent\"}}]</TOOLCALL>";
        let d = detect(&engine, &[nemotron]);
        assert_eq!(d.count("llama3").parsed, 1, "{:?}", d.counts());
        assert_eq!(d.count("nemotron").passes, d.count("llama3").passes);
        assert_eq!(d.best(), Some("nemotron"), "{:?}", d.counts());
    }

    /// A live candidate that fails to parse is found, not parsed; a
    /// reasoning-only candidate is neither.
    #[test]
    fn detection_counts_live_parsed_candidates() {
        let broken = failed(
            "a",
            Some("get_weather"),
            toolgate_core::FailureKind::Malformed,
            "bad",
        );
        let good = ok("b", "get_weather", json!({"city": "Gent"}));
        let ex: Vec<Box<dyn Extractor>> = vec![
            Fixed::boxed("a", vec![broken]),
            Fixed::boxed("b", vec![good.clone()]),
            Fixed::boxed("c", vec![in_reasoning(good)]),
        ];
        let engine = Engine::with_extractors(ex, Profile::for_mode("a")).unwrap();
        let d = detect(&engine, &["o", "p"]);
        assert_eq!(d.transcripts(), 2);
        let got: Vec<(&str, ModeCount)> =
            d.counts().iter().map(|(m, c)| (m.as_str(), *c)).collect();
        assert_eq!(
            got,
            [
                (
                    "a",
                    ModeCount {
                        parsed: 0,
                        passes: 0,
                        found: 2,
                    }
                ),
                (
                    "b",
                    ModeCount {
                        parsed: 2,
                        passes: 2,
                        found: 2,
                    }
                ),
                (
                    "c",
                    ModeCount {
                        parsed: 0,
                        passes: 0,
                        found: 0,
                    }
                ),
            ]
        );
        assert_eq!(d.best(), Some("b"));
    }
}
