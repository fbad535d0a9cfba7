//! The prompt line: `/` search, `f` filter, `p` profile. It owns the text
//! being edited and what to put back on Esc; the app applies the text
//! live, as it is typed (it is the app's list that changes).

use crate::component::{Command, Component};
use crate::filter::Filter;
use crate::keys::Action;
use crate::text;
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::crossterm::event::{Event as TermEvent, KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::Paragraph;
use tui_input::backend::crossterm::EventHandler;

/// What the prompt line edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// `/` search.
    Search,
    /// `f` filter.
    Filter,
    /// `p` profile for the session.
    Profile,
}

/// The prompt line. Search and filter apply live, as the text is typed;
/// Esc puts back what was there before the prompt opened.
#[derive(Clone, Debug)]
pub struct Prompt {
    /// What it is for.
    pub kind: PromptKind,
    /// The text being edited.
    pub input: tui_input::Input,
    /// The selected row when the prompt opened (search starts there).
    pub origin: usize,
    /// The filter when the prompt opened.
    pub before: Filter,
    /// The search when the prompt opened.
    pub before_search: Option<String>,
    /// Rows matching the text so far (search), or shown (filter).
    pub matches: usize,
    /// Why the text so far is not a valid filter (it is kept, not applied).
    pub error: Option<String>,
}

impl Prompt {
    /// A prompt of `kind` holding `text`, opened on row `origin` while
    /// `before` and `before_search` were in force.
    pub fn new(
        kind: PromptKind,
        text: String,
        origin: usize,
        before: Filter,
        before_search: Option<String>,
    ) -> Prompt {
        Prompt {
            kind,
            input: tui_input::Input::new(text),
            origin,
            before,
            before_search,
            matches: 0,
            error: None,
        }
    }
}

const KEYS: &[crate::keys::Key] = &[
    crate::keys::Key::plain(KeyCode::Enter),
    crate::keys::Key::plain(KeyCode::Esc),
];

/// What the prompt line is drawn from.
pub struct PromptProps<'a> {
    /// Transcripts loaded before filtering.
    pub total: usize,
    /// Colors or not.
    pub theme: &'a Theme,
}

/// What a key did to the prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptAnswer {
    /// Esc: put back what was there before.
    Cancel,
    /// Enter: take the text.
    Submit,
    /// The text changed: apply it live.
    Edited,
    /// Nothing changed (a cursor move).
    Unchanged,
}

impl Component for Prompt {
    type Props<'a> = PromptProps<'a>;
    type Answer = PromptAnswer;

    fn draw(&self, props: &PromptProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        let prompt = self;
        let theme = props.theme;
        let label = match prompt.kind {
            PromptKind::Search => "/",
            PromptKind::Filter => "filter (label:L mode:M model:X changed new words): ",
            PromptKind::Profile => "profile (a profile or mode name; empty: auto): ",
        };
        // Right-aligned: how many rows match, or why the filter is not valid.
        let (note, note_style) = match (&prompt.error, prompt.kind) {
            (Some(e), _) => (format!(" {} ", text::one_line(e)), theme.bad()),
            (None, PromptKind::Search) if prompt.input.value().trim().is_empty() => {
                (String::new(), theme.dim())
            }
            (None, PromptKind::Search) => (
                format!(
                    " {} ",
                    match prompt.matches {
                        0 => "no match".to_string(),
                        1 => "1 match".to_string(),
                        n => format!("{n} matches"),
                    }
                ),
                theme.dim(),
            ),
            (None, PromptKind::Filter) => (
                format!(" {} of {} ", prompt.matches, props.total),
                theme.dim(),
            ),
            (None, PromptKind::Profile) => (String::new(), theme.dim()),
        };
        let note_width = u16::try_from(unicode_width::UnicodeWidthStr::width(note.as_str()))
            .unwrap_or(u16::MAX)
            .min(area.width / 2);
        let [area, note_area] =
            Layout::horizontal([Constraint::Fill(1), Constraint::Length(note_width)]).areas(area);
        frame.render_widget(
            Paragraph::new(Line::styled(note, note_style))
                .alignment(ratatui::layout::Alignment::Right),
            note_area,
        );
        let width = usize::from(area.width).saturating_sub(label.chars().count() + 1);
        let scroll = prompt.input.visual_scroll(width);
        let value: String = text::one_line(prompt.input.value())
            .chars()
            .skip(scroll)
            .collect();
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                TSpan::styled(label, theme.header()),
                TSpan::raw(value),
            ])),
            area,
        );
        let x = label.chars().count() + prompt.input.visual_cursor().saturating_sub(scroll);
        frame.set_cursor_position((
            area.x + u16::try_from(x).unwrap_or(u16::MAX).min(area.width),
            area.y,
        ));
    }

    fn event(&mut self, key: &KeyEvent, _: Option<Action>, _: &PromptProps<'_>) -> PromptAnswer {
        match key.code {
            KeyCode::Esc => PromptAnswer::Cancel,
            KeyCode::Enter => PromptAnswer::Submit,
            _ => {
                let before = self.input.value().to_string();
                self.input.handle_event(&TermEvent::Key(*key));
                if self.input.value() != before {
                    PromptAnswer::Edited
                } else {
                    PromptAnswer::Unchanged
                }
            }
        }
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command::bound(Action::Profile, "profile for this session (empty: auto)"),
            Command::local("prompt", KEYS, ""),
            Command::rest(
                "prompt",
                "type the search, filter or profile (applied as typed) · Enter keeps it · Esc puts back",
            ),
        ]
    }
}
