//! One judging path for a stored transcript: [`Engine::judge`] at a
//! requested [`Depth`].
//!
//! | depth    | result             | what runs                                                        |
//! |----------|--------------------|------------------------------------------------------------------|
//! | [`Labels`] | [`Outcome`]      | the batch fast path ([`crate::outcome`]): labels per mode, the profile's pipeline, findings |
//! | [`Full`]   | [`Replay`]       | every mode strict and lenient with gates and reasons ([`crate::replay`]) |
//! | [`Row`]    | [`PipelineResult`] | only the profile's pipeline: the replay's `profile` row       |
//!
//! Every depth starts from the same set-up, written once (`engine::Case`): a
//! post-parse import (no raw text for a text mode to read) is judged by the
//! one-mode `native` profile whatever profile is asked for; the tool list is
//! compiled once per distinct list ([`Engine`]'s cache), or stands for
//! [`Toolset::unknown`](crate::Toolset::unknown) when the transcript has
//! none; the extraction input carries the engine's candidate cap. The depths
//! agree where they overlap: `Labels` equals the summary of `Full`, and
//! `Row` equals `Full`'s `profile` (`tests/fast_path.rs`).
//!
//! The older names are one-line wrappers: [`Engine::replay`],
//! [`Engine::replay_as`], [`Engine::outcome_as`], [`Engine::outcome_plain`].
//! [`Engine::rejudge`] judges a replay's candidates again without
//! extracting, from the same set-up. A live output (no transcript: `toolgate
//! parse`, the proxy, the streaming parser) goes through
//! [`Engine::judge_output`].

use crate::engine::Engine;
use crate::outcome::Outcome;
use crate::pipeline::PipelineResult;
use crate::profile::Profile;
use crate::replay::Replay;
use toolgate_core::Transcript;

/// How deep [`Engine::judge`] goes, and what it returns. Implemented by
/// [`Labels`], [`Full`] and [`Row`] only.
pub trait Depth: sealed::Sealed {
    /// What judging at this depth returns.
    type Judged<'e>;
    /// Judges `transcript` with `profile` at this depth (call it as
    /// [`Engine::judge`]).
    #[doc(hidden)]
    fn judge<'e>(
        self,
        engine: &'e Engine,
        transcript: &Transcript,
        profile: &Profile,
    ) -> Self::Judged<'e>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Labels {}
    impl Sealed for super::Full {}
    impl Sealed for super::Row {}
}

/// Labels only: each reported mode's label and whether it found and parsed
/// something, the profile's result and the findings (the batch fast path).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Labels;

/// The full replay: every mode strict and lenient, with candidates, calls,
/// labels and reasons, gates, decisions and telemetry, plus the profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Full;

/// The profile row only: the profile pipeline's result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Row;

impl Depth for Labels {
    type Judged<'e> = Outcome<'e>;
    fn judge<'e>(self, engine: &'e Engine, t: &Transcript, profile: &Profile) -> Outcome<'e> {
        engine.outcome_case(t, &engine.case(t, profile), true)
    }
}

impl Depth for Full {
    type Judged<'e> = Replay;
    fn judge(self, engine: &Engine, t: &Transcript, profile: &Profile) -> Replay {
        engine.replay_case(t, &engine.case(t, profile))
    }
}

impl Depth for Row {
    type Judged<'e> = PipelineResult;
    fn judge(self, engine: &Engine, t: &Transcript, profile: &Profile) -> PipelineResult {
        engine
            .outcome_case(t, &engine.case(t, profile), false)
            .profile
    }
}

impl Engine {
    /// Judges `transcript` with `profile` at `depth`: the one path every
    /// caller takes (module docs).
    ///
    /// ```
    /// use toolgate_core::load::parse_transcript;
    /// use toolgate_validator::{Engine, Full, Labels, Profile, Row};
    ///
    /// let t = parse_transcript(
    ///     r#"{"tools": [{"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}}],
    ///         "output": "<tool name=\"ping\">{}</tool>"}"#,
    ///     std::path::Path::new("t.json"), None, "t",
    /// ).unwrap();
    /// let engine = Engine::new(Profile::default());
    /// let full = engine.judge(&t, &engine.profile, Full);
    /// assert_eq!(full.profile.decision.kind(), "execute");
    /// assert_eq!(engine.judge(&t, &engine.profile, Row), full.profile);
    /// assert_eq!(engine.judge(&t, &engine.profile, Labels), engine.outcome_of(full));
    /// ```
    pub fn judge<D: Depth>(
        &self,
        transcript: &Transcript,
        profile: &Profile,
        depth: D,
    ) -> D::Judged<'_> {
        depth.judge(self, transcript, profile)
    }

    /// Replays one transcript with the engine's profile:
    /// [`Engine::judge`] at [`Full`] depth.
    ///
    /// A post-parse import (`"import": {"raw_text": false}`: Responses,
    /// Anthropic, OTel, FC-mode BFCL) has no raw text for a text mode to
    /// read, so the one-mode `native` profile judges it, whatever profile is
    /// given (here and at every depth).
    pub fn replay(&self, transcript: &Transcript) -> Replay {
        self.judge(transcript, &self.profile, Full)
    }

    /// Replays one transcript with `profile` (an `auto` choice, a profile
    /// picked in the inspector): its primary mode meets the primary rules,
    /// every other mode the fallback rules, and its pipeline is the
    /// replay's `profile` result. [`Engine::judge`] at [`Full`] depth.
    pub fn replay_as(&self, transcript: &Transcript, profile: &Profile) -> Replay {
        self.judge(transcript, profile, Full)
    }

    /// `replay` judged again by another profile without extracting again:
    /// labels are the same (they do not depend on the profile); gates,
    /// decisions and the profile result are `profile`'s.
    pub fn rejudge(&self, transcript: &Transcript, replay: &Replay, profile: &Profile) -> Replay {
        self.rejudge_case(transcript, &self.case(transcript, profile), replay)
    }

    /// The outcome of replaying `transcript` with `profile`, on the fast
    /// path: [`Engine::judge`] at [`Labels`] depth.
    pub fn outcome_as(&self, transcript: &Transcript, profile: &Profile) -> Outcome<'_> {
        self.judge(transcript, profile, Labels)
    }

    /// [`Engine::outcome_as`] from the full replay: every mode extracted and
    /// judged, then summarized (the reference the fast path is tested
    /// against).
    pub fn outcome_plain(&self, transcript: &Transcript, profile: &Profile) -> Outcome<'_> {
        self.outcome_of(self.judge(transcript, profile, Full))
    }
}
