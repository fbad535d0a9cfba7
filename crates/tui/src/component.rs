//! What every view is (gitui's components): a value that owns its own
//! state, draws from the row it shows (its `Props`, never the whole app),
//! answers the keys it handles, and lists them as [`Command`]s. The help
//! overlay is built from those lists, so a key a view handles cannot be
//! missing from it.

use crate::keys::{Action, Key};
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

/// One thing on screen.
pub trait Component {
    /// What the view is drawn from: the row it shows and the few settings it
    /// reads.
    type Props<'a>;
    /// What an answered key asks of the app, beyond the view's own state.
    type Answer;

    /// Draws the view into `area`.
    fn draw(&self, props: &Self::Props<'_>, frame: &mut Frame<'_>, area: Rect);

    /// Answers a key (`action` is what the key map makes of it).
    fn event(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        props: &Self::Props<'_>,
    ) -> Self::Answer;

    /// Every key the view answers, with what the help says about it.
    fn commands(&self) -> Vec<Command>;
}

/// One entry of a view's commands. The help shows a bound action's first
/// non-empty help, in key-map order, then one line for each local or rest
/// command that has a help of its own (`name` first); keys of a command
/// without one are told by another line of the same view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// Which keys.
    pub keys: Keys,
    /// What the help says.
    pub help: &'static str,
}

/// How a command's keys are found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keys {
    /// The keys the key map binds to this action ([`crate::keys::KeyList`]):
    /// one line of the help, in key-map order.
    Bound(Action),
    /// Keys only this view answers, while it is open: the help's line for
    /// the view (`name`) says what they do.
    Local {
        /// The view, as the help names it.
        name: &'static str,
        /// The keys.
        keys: &'static [Key],
    },
    /// Every other key (typing into the view, or cancelling it).
    Rest {
        /// The view, as the help names it.
        name: &'static str,
    },
}

impl Command {
    /// A command bound through the key map.
    pub const fn bound(action: Action, help: &'static str) -> Command {
        Command {
            keys: Keys::Bound(action),
            help,
        }
    }

    /// An action this view answers too, told by the help line of the view
    /// that owns it (no help of its own).
    pub const fn also(action: Action) -> Command {
        Command::bound(action, "")
    }

    /// Every key the view's other commands do not name.
    pub const fn rest(name: &'static str, help: &'static str) -> Command {
        Command {
            keys: Keys::Rest { name },
            help,
        }
    }

    /// Keys of one open view.
    pub const fn local(name: &'static str, keys: &'static [Key], help: &'static str) -> Command {
        Command {
            keys: Keys::Local { name, keys },
            help,
        }
    }
}
