//! Key bindings as data (gitui's `key_list.rs`): every [`Action`] has one or
//! more [`Key`]s and a help text; [`KeyList::default`] is the stock layout
//! and the help overlay is generated from it, so it always lists every key.

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

/// One action's keys and help text.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// The action.
    pub action: Action,
    /// Every key that triggers it.
    pub keys: Vec<Key>,
    /// What the help overlay says about it.
    pub help: &'static str,
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
        let b = |action, keys: Vec<Key>, help| Binding { action, keys, help };
        KeyList {
            bindings: vec![
                b(
                    Down,
                    vec![Key::ch('j'), Key::plain(KeyCode::Down)],
                    "down one line",
                ),
                b(
                    Up,
                    vec![Key::ch('k'), Key::plain(KeyCode::Up)],
                    "up one line",
                ),
                b(
                    Top,
                    vec![Key::ch('g'), Key::plain(KeyCode::Home)],
                    "first line",
                ),
                b(
                    Bottom,
                    vec![Key::ch('G'), Key::plain(KeyCode::End)],
                    "last line",
                ),
                b(PageDown, vec![Key::plain(KeyCode::PageDown)], "page down"),
                b(PageUp, vec![Key::plain(KeyCode::PageUp)], "page up"),
                b(NextPane, vec![Key::plain(KeyCode::Tab)], "next pane"),
                b(
                    PrevPane,
                    vec![Key::plain(KeyCode::BackTab)],
                    "previous pane",
                ),
                b(
                    Search,
                    vec![Key::ch('/')],
                    "search id/path/model/task (live; Esc puts back)",
                ),
                b(SearchNext, vec![Key::ch('n')], "next match"),
                b(SearchPrev, vec![Key::ch('N')], "previous match"),
                b(
                    Filter,
                    vec![Key::ch('f')],
                    "filter (live): label:L mode:M model:X changed new, words",
                ),
                b(Sort, vec![Key::ch('s')], "cycle sort order"),
                b(ReverseSort, vec![Key::ch('S')], "reverse the sort order"),
                b(
                    Copy,
                    vec![Key::ch('y')],
                    "copy (OSC 52): o raw output, c calls, r repro transcript",
                ),
                b(
                    Edit,
                    vec![Key::ch('e')],
                    "open the file in $VISUAL / $EDITOR",
                ),
                b(
                    Profile,
                    vec![Key::ch('p')],
                    "profile for this session (empty: auto)",
                ),
                b(NextMode, vec![Key::ch('m')], "next parse mode"),
                b(PrevMode, vec![Key::ch('M')], "previous parse mode"),
                b(
                    PickMode,
                    vec![Key::ch('o')],
                    "pick a mode: type to narrow, ↑/↓, Enter",
                ),
                b(
                    FollowProfile,
                    vec![Key::ch('F')],
                    "follow the profile's mode again",
                ),
                b(
                    OnlyFound,
                    vec![Key::ch('c')],
                    "modes table: only modes with candidates / all",
                ),
                b(Diff, vec![Key::ch('d')], "diff view (Tab: what to compare)"),
                b(
                    Stream,
                    vec![Key::ch('w')],
                    "stream view: step the recorded chunks (←/→ or p/n)",
                ),
                b(
                    ToggleLenient,
                    vec![Key::ch('l')],
                    "strict / lenient results",
                ),
                b(
                    Accept,
                    vec![Key::ch('a')],
                    "accept labels: y this one, a all shown",
                ),
                b(
                    Review,
                    vec![Key::ch('r')],
                    "review changed labels one by one: a accept, r reject, s skip",
                ),
                b(Unreadable, vec![Key::ch('u')], "unreadable files and why"),
                b(
                    Open,
                    vec![Key::plain(KeyCode::Enter)],
                    "open (status bar: unreadable)",
                ),
                b(
                    Close,
                    vec![Key::plain(KeyCode::Esc)],
                    "close overlay / cancel",
                ),
                b(Help, vec![Key::ch('?')], "this help"),
                b(Quit, vec![Key::ch('q'), Key::ctrl('c')], "quit"),
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
