//! The accept overlay (`a`): write the current labels of this transcript
//! (`y` / Enter) or of every shown one that changed (`a`); any other key
//! cancels.

use super::popup::{self, Content, Window};
use super::{Answer, is_key};
use crate::component::{Command, Component};
use crate::keys::{Action, Key};
use crate::row::Row;
use crate::text;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;

/// The accept overlay (stateless).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConfirmView;

/// What it is drawn from.
pub struct ConfirmProps<'a> {
    /// The selected row.
    pub row: Option<&'a Row>,
    /// The shown rows (`a` accepts those that changed).
    pub rows: &'a [Row],
    /// The overlay window: colors and scroll.
    pub window: Window<'a>,
}

const THIS: [Key; 2] = [Key::ch('y'), Key::plain(KeyCode::Enter)];
const ALL: Key = Key::ch('a');

impl ConfirmView {
    /// Title and rows.
    pub fn content(&self, props: &ConfirmProps<'_>) -> Content {
        let id = props
            .row
            .map(|r| text::one_line(&r.entry.transcript.id))
            .unwrap_or_default();
        let n = props
            .rows
            .iter()
            .filter(|r| r.changed || r.unlabeled)
            .count();
        (
            " Accept labels ".to_string(),
            vec![
                Line::raw("Write the current strict label of every mode into the transcript file"),
                Line::raw("(atomically; only its `labels` member changes)."),
                Line::raw(""),
                Line::raw(format!("  y / Enter   this transcript ({id})")),
                Line::raw(format!(
                    "  a           all {n} shown transcripts whose labels changed or were never stored"
                )),
                Line::raw("  any key     cancel"),
            ],
        )
    }
}

impl Component for ConfirmView {
    type Props<'a> = ConfirmProps<'a>;
    /// Accept all shown (`true`) or this one; `Close` cancels.
    type Answer = Answer<bool>;

    fn draw(&self, props: &ConfirmProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        popup::draw(frame, area, self.content(props), props.window);
    }

    fn event(&mut self, key: &KeyEvent, _: Option<Action>, _: &ConfirmProps<'_>) -> Answer<bool> {
        if is_key(&THIS, key) {
            Answer::Ask(false)
        } else if is_key(&[ALL], key) {
            Answer::Ask(true)
        } else {
            Answer::Close
        }
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command::bound(Action::Accept, "accept labels: y this one, a all shown"),
            Command::local("accept", &[THIS[0], THIS[1], ALL], ""),
            Command::rest(
                "accept",
                "y/Enter this transcript · a all shown · any other key cancels",
            ),
        ]
    }
}
