//! The review flow (`r`), like `cargo insta review`: step through the shown
//! transcripts whose current labels differ from the stored ones (or were
//! never stored), one at a time, with the stored-vs-current diff and the
//! reason of every changed label; accept (store the current labels), reject
//! (keep the stored ones) or skip each.

use super::Answer;
use super::popup::{self, Content, Window};
use crate::component::{Command, Component};
use crate::keys::{Action, Key};
use crate::row::Row;
use crate::text;
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span as TSpan};
use std::path::PathBuf;

/// Where a review is and what was decided so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Review {
    /// The transcripts to review, by file and line, in list order.
    pub queue: Vec<(PathBuf, Option<usize>)>,
    /// The one shown.
    pub pos: usize,
    /// How many were accepted (their labels written).
    pub accepted: usize,
    /// How many were rejected (stored labels kept).
    pub rejected: usize,
    /// How many were skipped.
    pub skipped: usize,
    /// How many were accepted but not stored: their files are captures in
    /// another format ([`toolgate_batch::storable`]).
    pub not_stored: usize,
}

impl Review {
    /// What the status bar says when the review ends.
    pub fn summary(&self) -> String {
        let left = self.queue.len().saturating_sub(self.pos);
        let mut s = format!(
            "review: {} accepted, {} rejected, {} skipped",
            self.accepted, self.rejected, self.skipped
        );
        if left > 0 {
            s.push_str(&format!(", {left} not reviewed"));
        }
        if self.not_stored > 0 {
            s.push_str(&format!(
                "; {} not stored: {}",
                self.not_stored,
                toolgate_batch::NOT_STORABLE
            ));
        }
        s
    }
}

/// One label that changed: the mode, the stored label (`None`: never
/// stored), the current one and why the current one is what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The mode.
    pub mode: String,
    /// The stored label.
    pub stored: Option<String>,
    /// The current strict label.
    pub current: String,
    /// Why (the mode's label reason).
    pub reason: String,
}

/// Every label of `row` that differs from the stored one — as
/// `toolgate label --check` compares, only stored modes; every mode when
/// nothing is stored. The labels are its summary's; why each is what it
/// is comes from its whole replay (or says it is being made).
pub fn changes(row: &Row) -> Vec<Change> {
    let entry = &row.entry;
    let stored = entry.transcript.stored_labels.as_ref();
    entry
        .replay
        .modes(false)
        .filter_map(|(mode, m)| {
            let old = match stored {
                None => None,
                Some(map) => Some(map.get(mode)?.clone()),
            };
            let current = m.label.as_str().to_string();
            if old.as_deref() == Some(current.as_str()) {
                return None;
            }
            Some(Change {
                mode: mode.to_string(),
                stored: old,
                current,
                reason: match row.mode_result(mode, false) {
                    Some(whole) => whole.why(),
                    None => row.replay_note().to_string(),
                },
            })
        })
        .collect()
}

/// Title and rows of the review overlay: where `review` is, on the selected
/// transcript (`row`).
pub fn view(
    review: Option<&Review>,
    row: Option<&Row>,
    theme: &Theme,
) -> (String, Vec<Line<'static>>) {
    let Some(review) = review else {
        return (" Review ".into(), Vec::new());
    };
    let total = review.queue.len();
    let Some(row) = row else {
        return (
            " Review ".into(),
            vec![Line::styled("(nothing selected)", theme.dim())],
        );
    };
    let t = &row.entry.transcript;
    let at = match t.line {
        Some(l) => format!("{}:{l}", row.path),
        None => row.path.to_string(),
    };
    let title = format!(
        " Review {}/{total}: {} · {} ",
        (review.pos + 1).min(total),
        text::one_line(&t.id),
        text::one_line(&at)
    );
    let mut lines = vec![
        Line::styled(
            "a accept (store the current labels) · r reject (keep the stored) · s skip · Esc stop",
            theme.dim(),
        ),
        Line::raw(format!(
            "so far: {} accepted, {} rejected, {} skipped",
            review.accepted, review.rejected, review.skipped
        )),
        Line::raw(""),
        Line::styled("changed labels", theme.header()),
    ];
    for c in changes(row) {
        let stored = c.stored.unwrap_or_else(|| "(not stored)".into());
        lines.push(Line::from(vec![
            TSpan::styled(format!("  {}: ", text::one_line(&c.mode)), theme.header()),
            TSpan::styled(text::one_line(&stored), theme.removed()),
            TSpan::raw(" → "),
            TSpan::styled(c.current, theme.added()),
        ]));
        lines.push(Line::styled(
            format!("      why: {}", text::one_line(&c.reason)),
            theme.dim(),
        ));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("stored vs current", theme.header()));
    let (stored, current) = super::diff::stored_and_current(&row.entry);
    match super::diff::unified("stored", &stored, "current", &current) {
        None => lines.push(Line::styled("(no difference)", theme.ok())),
        Some(diff) => lines.extend(super::diff::colored(&diff, theme)),
    }
    (title, lines)
}

/// The review overlay: where the review is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReviewView {
    /// The queue and what was decided so far.
    pub review: Review,
}

/// What the review overlay is drawn from.
pub struct ReviewProps<'a> {
    /// The selected row (the review selects the transcript it is at).
    pub row: Option<&'a Row>,
    /// The overlay window: colors and scroll.
    pub window: Window<'a>,
}

/// What a review key asks of the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewStep {
    /// Write the current labels of the selected transcript, then go on.
    Accept,
    /// Go on to the next transcript.
    Next,
}

const ACCEPT: [Key; 2] = [Key::ch('a'), Key::plain(KeyCode::Enter)];
const REJECT: Key = Key::ch('r');
const SKIP: [Key; 2] = [Key::ch('s'), Key::ch(' ')];
const STOP: [Key; 2] = [Key::plain(KeyCode::Esc), Key::ch('q')];
const KEYS: &[Key] = &[
    ACCEPT[0], ACCEPT[1], REJECT, SKIP[0], SKIP[1], STOP[0], STOP[1],
];

impl ReviewView {
    /// Title and rows.
    pub fn content(&self, props: &ReviewProps<'_>) -> Content {
        view(Some(&self.review), props.row, props.window.theme)
    }
}

impl Component for ReviewView {
    type Props<'a> = ReviewProps<'a>;
    /// `Close` stops the review.
    type Answer = Answer<ReviewStep>;

    fn draw(&self, props: &ReviewProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        popup::draw(frame, area, self.content(props), props.window);
    }

    fn event(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        props: &ReviewProps<'_>,
    ) -> Answer<ReviewStep> {
        let review = &mut self.review;
        if super::is_key(&ACCEPT, key) {
            review.pos += 1;
            // The same rule as `label --write`: a provider's capture is not
            // rewritten, so accepting it stores nothing.
            if props
                .row
                .is_some_and(|r| !toolgate_batch::storable(&r.entry.transcript))
            {
                review.not_stored += 1;
                return Answer::Ask(ReviewStep::Next);
            }
            review.accepted += 1;
            Answer::Ask(ReviewStep::Accept)
        } else if super::is_key(&[REJECT], key) {
            review.rejected += 1;
            review.pos += 1;
            Answer::Ask(ReviewStep::Next)
        } else if super::is_key(&SKIP, key) {
            review.skipped += 1;
            review.pos += 1;
            Answer::Ask(ReviewStep::Next)
        } else if super::is_key(&STOP, key) {
            Answer::Close
        } else {
            action.map_or(Answer::Ignored, Answer::Scroll)
        }
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command::bound(
                Action::Review,
                "review changed labels one by one: a accept, r reject, s skip",
            ),
            Command::local(
                "review",
                KEYS,
                "a/Enter accept · r reject · s/Space skip · Esc/q stop",
            ),
        ]
        .into_iter()
        .chain(super::movement())
        .collect()
    }
}
