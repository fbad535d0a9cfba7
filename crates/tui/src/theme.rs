//! Colors, or — with `NO_COLOR` set — modifiers and markers only.

use ratatui::style::{Color, Modifier, Style};
use toolgate_core::Label;

/// How things look. With `color == false` (the `NO_COLOR` convention) no
/// color is ever emitted: bold, underline, dim and reverse carry the meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    /// Whether colors may be used.
    pub color: bool,
}

const MODE_COLORS: [Color; 8] = [
    Color::Cyan,
    Color::Green,
    Color::Yellow,
    Color::Magenta,
    Color::LightBlue,
    Color::LightRed,
    Color::LightGreen,
    Color::LightMagenta,
];

impl Theme {
    /// Colors unless the `NO_COLOR` environment variable is set and non-empty.
    pub fn from_env() -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !no_color }
    }

    fn pick(&self, colored: Style, plain: Style) -> Style {
        if self.color { colored } else { plain }
    }

    /// A label's style: green pass, red parse failures, magenta capability
    /// gaps, yellow schema failures; bold failures without color.
    pub fn label(&self, label: Label) -> Style {
        let color = match label {
            Label::Pass => Color::Green,
            Label::NoCall => Color::Blue,
            Label::SpuriousCall | Label::ParallelCollapse | Label::WrongTool => Color::Magenta,
            Label::Truncation | Label::EscapingError | Label::MalformedJson => Color::Red,
            Label::MissingRequired
            | Label::HallucinatedParam
            | Label::TypeCoercion
            | Label::SchemaViolation => Color::Yellow,
        };
        let plain = if label.is_pass() {
            Style::new()
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        self.pick(Style::new().fg(color), plain)
    }

    /// A decision's style (`execute`, `no_call`, `reject`).
    pub fn decision(&self, kind: &str) -> Style {
        match kind {
            "execute" => self.pick(Style::new().fg(Color::Green), Style::new()),
            "reject" => self.pick(
                Style::new().fg(Color::Red),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            _ => self.dim(),
        }
    }

    /// A candidate span of the mode at `mode_index` (engine order).
    pub fn candidate(&self, mode_index: usize) -> Style {
        let color = MODE_COLORS[mode_index % MODE_COLORS.len()];
        self.pick(
            Style::new().fg(Color::Black).bg(color),
            Style::new().add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
        )
    }

    /// The byte where a parse failure was noticed.
    pub fn failure(&self) -> Style {
        self.pick(
            Style::new()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    /// Reasoning text (never searched for executable calls): dimmed.
    pub fn reasoning(&self) -> Style {
        self.pick(
            Style::new().fg(Color::DarkGray).add_modifier(Modifier::DIM),
            Style::new().add_modifier(Modifier::DIM),
        )
    }

    /// Secondary text.
    pub fn dim(&self) -> Style {
        self.pick(
            Style::new().fg(Color::DarkGray),
            Style::new().add_modifier(Modifier::DIM),
        )
    }

    /// Search and filter matches in the list.
    pub fn matched(&self) -> Style {
        // No background: the selected row's background is drawn over cells.
        self.pick(
            Style::new()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            Style::new().add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
        )
    }

    /// Table headers and section titles.
    pub fn header(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// The border of the focused pane.
    pub fn focused(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// The selected row of a table.
    pub fn selected(&self, focused: bool) -> Style {
        if focused {
            self.pick(
                Style::new()
                    .bg(Color::DarkGray)
                    .add_modifier(Modifier::BOLD),
                Style::new().add_modifier(Modifier::REVERSED),
            )
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        }
    }

    /// A passing gate.
    pub fn ok(&self) -> Style {
        self.pick(Style::new().fg(Color::Green), Style::new())
    }

    /// A failing gate or an error message.
    pub fn bad(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Red),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// An added diff line.
    pub fn added(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Green),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// A removed diff line.
    pub fn removed(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Red),
            Style::new().add_modifier(Modifier::DIM),
        )
    }

    /// A diff hunk header.
    pub fn hunk(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan),
            Style::new().add_modifier(Modifier::ITALIC),
        )
    }
}
