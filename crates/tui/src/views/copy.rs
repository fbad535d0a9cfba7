//! The copy overlay (`y`): what to put on the clipboard (OSC 52) for the
//! selected transcript; any other key cancels.

use super::popup::{self, Content, Window};
use super::{Answer, is_key};
use crate::clipboard::CopyWhat;
use crate::component::{Command, Component};
use crate::keys::{Action, Key};
use crate::text;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::Line;

/// The copy overlay (stateless).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyView;

/// What it is drawn from.
pub struct CopyProps<'a> {
    /// The mode whose calls `c` copies.
    pub mode: &'a str,
    /// The overlay window: colors and scroll.
    pub window: Window<'a>,
}

const OUTPUT: Key = Key::ch('o');
const CALLS: Key = Key::ch('c');
const REPRO: Key = Key::ch('r');

impl CopyView {
    /// Title and rows.
    pub fn content(&self, props: &CopyProps<'_>) -> Content {
        (
            " Copy to the clipboard ".to_string(),
            vec![
                Line::raw("Copy, through the terminal (OSC 52), for the selected transcript:"),
                Line::raw(""),
                Line::raw("  o   the raw output"),
                Line::raw(format!(
                    "  c   the calls of {} (normalized, JSON)",
                    text::one_line(props.mode)
                )),
                Line::raw(
                    "  r   a minimal repro transcript (output, expectation, the tools it names)",
                ),
                Line::raw("  any other key cancels"),
                Line::raw(""),
                Line::styled(
                    "inside tmux: set -g set-clipboard on",
                    props.window.theme.dim(),
                ),
            ],
        )
    }
}

impl Component for CopyView {
    type Props<'a> = CopyProps<'a>;
    /// What to copy; `Close` cancels.
    type Answer = Answer<CopyWhat>;

    fn draw(&self, props: &CopyProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        popup::draw(frame, area, self.content(props), props.window);
    }

    fn event(&mut self, key: &KeyEvent, _: Option<Action>, _: &CopyProps<'_>) -> Answer<CopyWhat> {
        if is_key(&[OUTPUT], key) {
            Answer::Ask(CopyWhat::Output)
        } else if is_key(&[CALLS], key) {
            Answer::Ask(CopyWhat::Calls)
        } else if is_key(&[REPRO], key) {
            Answer::Ask(CopyWhat::Repro)
        } else {
            Answer::Close
        }
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command::bound(
                Action::Copy,
                "copy (OSC 52): o raw output, c calls, r repro transcript",
            ),
            Command::local("copy", &[OUTPUT, CALLS, REPRO], ""),
            Command::rest(
                "copy",
                "o raw output · c calls · r repro transcript · any other key cancels",
            ),
        ]
    }
}
