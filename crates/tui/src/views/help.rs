//! The help overlay (`?`), generated from the views' commands: one line a
//! key-map binding (in key-map order, with the keys the map gives it and
//! the help of the view that answers it), then each open view's own keys,
//! then what the symbols on screen mean.

use super::popup::{self, Content, Window};
use super::{Answer, close_or_scroll};
use crate::component::{Command, Component, Keys};
use crate::keys::{Action, KeyList};
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span as TSpan};

/// What the symbols on screen mean (not keys: no view answers them).
const LEGEND: [&str; 5] = [
    "gates column  intent single size parse allowlist schema: ✓ passed, ✗ failed, – not checked",
    "list marker   * current labels differ from the stored ones, ? tools unknown (no `tools`: nothing executes), ! server findings, + never labeled",
    "modes Δ       ≠ strict and lenient labels differ; n: live candidates (+r in reasoning)",
    "output        candidates of the selected mode highlighted, reasoning dimmed,",
    "              the parse-failure byte marked; control characters shown as \\x1b",
];

/// The help overlay (stateless).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HelpView;

/// What the help is drawn from.
pub struct HelpProps<'a> {
    /// The key map (which keys each action has).
    pub keys: &'a KeyList,
    /// Every view's commands.
    pub commands: &'a [Command],
    /// The overlay window: colors and scroll.
    pub window: Window<'a>,
}

impl HelpView {
    /// Title and rows.
    pub fn content(&self, props: &HelpProps<'_>) -> Content {
        let mut lines = Vec::new();
        for b in &props.keys.bindings {
            let Some(help) = props.commands.iter().find_map(|c| match c.keys {
                Keys::Bound(a) if a == b.action && !c.help.is_empty() => Some(c.help),
                _ => None,
            }) else {
                continue;
            };
            let keys: Vec<String> = b.keys.iter().map(|k| k.display()).collect();
            lines.push(Line::from(vec![
                TSpan::styled(
                    format!("{:<14}", keys.join(" ")),
                    props.window.theme.header(),
                ),
                TSpan::raw(help),
            ]));
        }
        lines.push(Line::raw(""));
        for c in props.commands {
            let name = match c.keys {
                Keys::Local { name, .. } | Keys::Rest { name } => name,
                Keys::Bound(_) => continue,
            };
            if !c.help.is_empty() {
                lines.push(Line::raw(format!("{name:<14}{}", c.help)));
            }
        }
        lines.extend(LEGEND.iter().map(|s| Line::raw(*s)));
        (" Keys ".to_string(), lines)
    }
}

impl Component for HelpView {
    type Props<'a> = HelpProps<'a>;
    type Answer = Answer<()>;

    fn draw(&self, props: &HelpProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        popup::draw(frame, area, self.content(props), props.window);
    }

    fn event(&mut self, _key: &KeyEvent, action: Option<Action>, _: &HelpProps<'_>) -> Answer<()> {
        close_or_scroll(action, &[Action::Help, Action::Unreadable])
    }

    fn commands(&self) -> Vec<Command> {
        let mut commands = super::movement();
        commands.extend([
            Command::bound(Action::Help, "this help"),
            Command::also(Action::Unreadable),
            Command::also(Action::Close),
            Command::also(Action::Quit),
        ]);
        commands
    }
}
