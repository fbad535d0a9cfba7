//! The unreadable-files overlay (`u`, or Enter on the status bar): every
//! file or line that could not be read, with the reason.

use super::popup::{self, Content, Window};
use super::{Answer, close_or_scroll};
use crate::component::{Command, Component};
use crate::keys::Action;
use crate::row::display_path;
use crate::text;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span as TSpan};
use std::path::PathBuf;
use toolgate_core::LoadError;

/// The unreadable-files overlay (stateless).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnreadableView;

/// What it is drawn from.
pub struct UnreadableProps<'a> {
    /// Every unreadable file or line.
    pub unreadable: &'a [LoadError],
    /// Watched roots and how the user wrote them.
    pub roots: &'a [(PathBuf, String)],
    /// The overlay window: colors and scroll.
    pub window: Window<'a>,
}

impl UnreadableView {
    /// Title and rows.
    pub fn content(&self, props: &UnreadableProps<'_>) -> Content {
        let theme = props.window.theme;
        (
            format!(" Unreadable files ({}) ", props.unreadable.len()),
            if props.unreadable.is_empty() {
                vec![Line::styled("every file was read", theme.dim())]
            } else {
                props
                    .unreadable
                    .iter()
                    .map(|e| {
                        let at = match e.line {
                            Some(l) => format!("{}:{l}", display_path(props.roots, &e.path)),
                            None => display_path(props.roots, &e.path),
                        };
                        Line::from(vec![
                            TSpan::styled(text::one_line(&at), theme.header()),
                            TSpan::raw(format!("  {}", text::one_line(&e.reason))),
                        ])
                    })
                    .collect()
            },
        )
    }
}

impl Component for UnreadableView {
    type Props<'a> = UnreadableProps<'a>;
    type Answer = Answer<()>;

    fn draw(&self, props: &UnreadableProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        popup::draw(frame, area, self.content(props), props.window);
    }

    fn event(
        &mut self,
        _key: &KeyEvent,
        action: Option<Action>,
        _: &UnreadableProps<'_>,
    ) -> Answer<()> {
        close_or_scroll(action, &[Action::Help, Action::Unreadable])
    }

    fn commands(&self) -> Vec<Command> {
        let mut commands = super::movement();
        commands.extend([
            Command::bound(Action::Unreadable, "unreadable files and why"),
            Command::also(Action::Help),
            Command::also(Action::Close),
            Command::also(Action::Quit),
        ]);
        commands
    }
}
