//! Issue 7: the inspector shows which profile judged each row, `p` picks
//! another profile for the session, and Detail describes a mode outside the
//! profile "if this mode were primary".
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::KeyCode;
use std::sync::RwLock;
use toolgate_core::Transcript;
use toolgate_testkit::inspector::*;
use toolgate_tui::{App, Event, Replayer};
use toolgate_validator::{Auto, Engine, Profile, Replay};

/// The real engine, each transcript judged by `auto` (no detection), or by
/// the picked profile.
struct Judging {
    engine: Engine,
    picked: RwLock<Option<Profile>>,
}

impl Judging {
    fn profile(&self, t: &Transcript) -> (Profile, String) {
        if let Some(p) = self.picked.read().unwrap().clone() {
            return (p, "picked".into());
        }
        let c = Auto::default().choose(t.model.as_deref(), None);
        (c.profile, c.source.to_string())
    }
}

impl Replayer for Judging {
    fn modes(&self) -> Vec<String> {
        self.engine
            .mode_names()
            .iter()
            .map(|m| m.to_string())
            .collect()
    }
    fn profile_name(&self) -> String {
        "auto".into()
    }
    fn replay(&self, t: &Transcript) -> Replay {
        self.engine.replay_as(t, &self.profile(t).0)
    }
    fn judge(&self, t: &Transcript) -> Option<(Profile, String)> {
        Some(self.profile(t))
    }
    fn profiles(&self) -> Vec<String> {
        vec!["default".into(), "hermes".into(), "glm".into()]
    }
    fn pick(&self, name: Option<&str>) -> bool {
        *self.picked.write().unwrap() = name.and_then(Profile::builtin);
        true
    }
}

const GLM: &str =
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Gent</arg_value>\n</tool_call>";

#[test]
fn rows_name_their_profile_and_p_picks_another() {
    let dir = tempfile::tempdir().unwrap();
    let expect = r#", "expect": {"calls": [{"name": "get_weather"}]}"#;
    std::fs::write(
        dir.path().join("g.json"),
        transcript("g", "glm-4.5-air", "weather", GLM, expect),
    )
    .unwrap();
    let replayer = Judging {
        engine: Engine::new(Profile::default()),
        picked: RwLock::new(None),
    };
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut app = App::new(
        vec![(root, "transcripts".into())],
        replayer.modes(),
        "auto".into(),
        "tag",
    );
    app.session.profiles = replayer.profiles();
    settle_with(&mut app, &replayer);
    sized(&mut app, 160, 50);

    let row = app.current().unwrap();
    assert_eq!(row.label, Some(toolgate_core::Label::Pass));
    let screen_text = screen(&render(&app, 160, 50));
    assert!(screen_text.contains("profile"), "{screen_text}");
    assert!(
        screen_text.contains("judged by glm (by name (glm-4.5))"),
        "{screen_text}"
    );
    assert!(
        screen_text.contains("the profile's primary"),
        "{screen_text}"
    );

    // A mode outside the profile: its gates as if it were primary.
    app.mode = Some("hermes".into());
    let screen_text = screen(&render(&app, 160, 50));
    assert!(
        screen_text.contains("gates: if this mode were primary"),
        "{screen_text}"
    );
    assert!(
        !screen_text.contains("need explicit tool intent"),
        "{screen_text}"
    );
    app.mode = None;

    // `p`: an unknown name is refused and named.
    key(&mut app, KeyCode::Char('p'));
    keys(&mut app, "nope");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.profile_request, None);
    assert!(
        app.message
            .as_deref()
            .unwrap()
            .contains("no profile `nope`")
    );

    // `p hermes`: the event loop hands it to the replayer and replays every file.
    key(&mut app, KeyCode::Char('p'));
    keys(&mut app, "hermes");
    key(&mut app, KeyCode::Enter);
    let request = app.profile_request.take().unwrap();
    assert_eq!(request.as_deref(), Some("hermes"));
    assert!(replayer.pick(request.as_deref()));
    app.reload_all();
    settle_with(&mut app, &replayer);
    let row = app.current().unwrap();
    assert_eq!(row.entry.judge.as_ref().unwrap().0.name, "hermes");
    assert_eq!(row.label, Some(toolgate_core::Label::NoCall));
    assert_eq!(app.session.profile, "hermes");

    // Empty: back to auto.
    key(&mut app, KeyCode::Char('p'));
    key(&mut app, KeyCode::Enter);
    let request = app.profile_request.take().unwrap();
    assert_eq!(request, None);
    replayer.pick(None);
    app.reload_all();
    settle_with(&mut app, &replayer);
    assert_eq!(
        app.current().unwrap().entry.judge.as_ref().unwrap().0.name,
        "glm"
    );
    app.update(Event::Tick);
}
