//! Key bindings as data (gitui's `key_list.rs`): every [`Action`] has one or
//! more [`Key`]s; [`KeyList::default`] is the stock layout, in the order the
//! help overlay lists them. What each does is said by the view that answers
//! it ([`crate::component::Component::commands`]).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Something the user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Move the selection (or scroll) down one line.
    Down,
    /// Move the selection (or scroll) up one line.
    Up,
    /// Jump to the first line.
    Top,
    /// Jump to the last line.
    Bottom,
    /// One page down.
    PageDown,
    /// One page up.
    PageUp,
    /// Focus the next pane.
    NextPane,
    /// Focus the previous pane.
    PrevPane,
    /// Open the search prompt.
    Search,
    /// Next search match.
    SearchNext,
    /// Previous search match.
    SearchPrev,
    /// Open the filter prompt.
    Filter,
    /// Cycle the sort order of the list.
    Sort,
    /// Reverse the sort order.
    ReverseSort,
    /// Copy the raw output, the calls or a repro transcript (OSC 52).
    Copy,
    /// Open the transcript's file in `$EDITOR`.
    Edit,
    /// Pick the profile that judges every transcript (this session).
    Profile,
    /// Select the next parse mode.
    NextMode,
    /// Select the previous parse mode.
    PrevMode,
    /// Open the mode picker (type to narrow).
    PickMode,
    /// Follow the profile's mode again.
    FollowProfile,
    /// Show only the modes that found candidates.
    OnlyFound,
    /// Open the diff view.
    Diff,
    /// Open the Stream view: step through the recorded `chunks`.
    Stream,
    /// Toggle strict / lenient results.
    ToggleLenient,
    /// Accept the current labels into the file.
    Accept,
    /// Review changed transcripts one by one.
    Review,
    /// Show the unreadable files with their reasons.
    Unreadable,
    /// Open (Enter): the unreadable list when the status bar is focused.
    Open,
    /// Close an overlay or cancel a prompt.
    Close,
    /// Show the help overlay.
    Help,
    /// Quit.
    Quit,
}

impl Action {
    /// Whether the action moves a selection or scrolls.
    pub fn is_movement(self) -> bool {
        matches!(
            self,
            Action::Down
                | Action::Up
                | Action::Top
                | Action::Bottom
                | Action::PageDown
                | Action::PageUp
        )
    }
}

/// One key: a code plus modifiers. For characters, Shift is part of the
/// character itself (`G`), so it is ignored when matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The key code.
    pub code: KeyCode,
    /// Required modifiers (Ctrl, Alt).
    pub modifiers: KeyModifiers,
}

impl Key {
    /// A key without modifiers.
    pub const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            modifiers: KeyModifiers::NONE,
        }
    }

    /// A character key without modifiers.
    pub const fn ch(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    /// A key with Ctrl held.
    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::CONTROL,
        }
    }

    /// Whether `event` is this key.
    pub fn matches(&self, event: &KeyEvent) -> bool {
        let relevant = KeyModifiers::CONTROL | KeyModifiers::ALT;
        match (self.code, event.code) {
            // Terminals report Shift-Tab as BackTab, with or without SHIFT.
            (KeyCode::BackTab, KeyCode::BackTab) => true,
            (a, b) => a == b && (event.modifiers & relevant) == (self.modifiers & relevant),
        }
    }

    /// How the key is written in the help overlay (`j`, `Ctrl-c`, `PgDn`).
    pub fn display(&self) -> String {
        let name = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift-Tab".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            other => format!("{other:?}"),
        };
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            format!("Ctrl-{name}")
        } else if self.modifiers.contains(KeyModifiers::ALT) {
            format!("Alt-{name}")
        } else {
            name
        }
    }
}

/// One action's keys. What the help says about it is the answering
/// view's ([`crate::component::Component::commands`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// The action.
    pub action: Action,
    /// Every key that triggers it.
    pub keys: Vec<Key>,
}

/// The key map.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyList {
    /// Every binding, in help-overlay order.
    pub bindings: Vec<Binding>,
}

impl KeyList {
    /// The action bound to `event`, if any.
    pub fn action(&self, event: &KeyEvent) -> Option<Action> {
        self.bindings
            .iter()
            .find(|b| b.keys.iter().any(|k| k.matches(event)))
            .map(|b| b.action)
    }

    /// The keys of `action`, written for the user (`j/↓`).
    pub fn keys_of(&self, action: Action) -> String {
        self.bindings
            .iter()
            .find(|b| b.action == action)
            .map(|b| {
                b.keys
                    .iter()
                    .map(Key::display)
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default()
    }
}

impl Default for KeyList {
    fn default() -> KeyList {
        use Action::*;
        let b = |action, keys: Vec<Key>| Binding { action, keys };
        KeyList {
            bindings: vec![
                b(Down, vec![Key::ch('j'), Key::plain(KeyCode::Down)]),
                b(Up, vec![Key::ch('k'), Key::plain(KeyCode::Up)]),
                b(Top, vec![Key::ch('g'), Key::plain(KeyCode::Home)]),
                b(Bottom, vec![Key::ch('G'), Key::plain(KeyCode::End)]),
                b(PageDown, vec![Key::plain(KeyCode::PageDown)]),
                b(PageUp, vec![Key::plain(KeyCode::PageUp)]),
                b(NextPane, vec![Key::plain(KeyCode::Tab)]),
                b(PrevPane, vec![Key::plain(KeyCode::BackTab)]),
                b(Search, vec![Key::ch('/')]),
                b(SearchNext, vec![Key::ch('n')]),
                b(SearchPrev, vec![Key::ch('N')]),
                b(Filter, vec![Key::ch('f')]),
                b(Sort, vec![Key::ch('s')]),
                b(ReverseSort, vec![Key::ch('S')]),
                b(Copy, vec![Key::ch('y')]),
                b(Edit, vec![Key::ch('e')]),
                b(Profile, vec![Key::ch('p')]),
                b(NextMode, vec![Key::ch('m')]),
                b(PrevMode, vec![Key::ch('M')]),
                b(PickMode, vec![Key::ch('o')]),
                b(FollowProfile, vec![Key::ch('F')]),
                b(OnlyFound, vec![Key::ch('c')]),
                b(Diff, vec![Key::ch('d')]),
                b(Stream, vec![Key::ch('w')]),
                b(ToggleLenient, vec![Key::ch('l')]),
                b(Accept, vec![Key::ch('a')]),
                b(Review, vec![Key::ch('r')]),
                b(Unreadable, vec![Key::ch('u')]),
                b(Open, vec![Key::plain(KeyCode::Enter)]),
                b(Close, vec![Key::plain(KeyCode::Esc)]),
                b(Help, vec![Key::ch('?')]),
                b(Quit, vec![Key::ch('q'), Key::ctrl('c')]),
            ],
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn shift_is_part_of_the_character_and_backtab_matches_any_modifiers() {
        let keys = KeyList::default();
        let ev = |code, modifiers| KeyEvent::new(code, modifiers);
        assert_eq!(
            keys.action(&ev(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Action::Bottom)
        );
        assert_eq!(
            keys.action(&ev(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Some(Action::PrevPane)
        );
        assert_eq!(
            keys.action(&ev(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            keys.action(&ev(KeyCode::Char('j'), KeyModifiers::CONTROL)),
            None
        );
        assert_eq!(keys.keys_of(Action::Down), "j/↓");
    }
}
