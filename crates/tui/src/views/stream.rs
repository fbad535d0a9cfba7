//! The Stream view (`w`): a transcript's recorded `chunks` stepped through
//! the streaming hold-back ([`toolgate_validator::stream::Holdback`]) one
//! delta at a time — what a gateway would have forwarded so far, what it
//! holds back, the opener once seen — and, at the last delta, whether the
//! streamed result equals the batch one (the `stream_divergence` finding
//! of the replay, computed with the judging profile). Every piece of text
//! goes through [`toolgate_core::sanitize`] before it reaches the screen.

use super::Answer;
use super::popup::{self, Content, Window};
use crate::component::{Command, Component};
use crate::event::Entry;
use crate::keys::{Action, Key};
use crate::row::Row;
use crate::text;
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span as TSpan};
use toolgate_validator::stream::Holdback;
use toolgate_validator::{FindingKind, Profile};

/// The hold-back state after the first `step` deltas of a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamStep {
    /// How many deltas were pushed (1-based; clamped to the chunks).
    pub step: usize,
    /// How many deltas there are.
    pub total: usize,
    /// The last delta pushed.
    pub delta: String,
    /// The text forwarded so far.
    pub forwarded: String,
    /// The text held back so far.
    pub held: String,
    /// The first opener seen: its byte offset and token.
    pub opener: Option<(usize, &'static str)>,
    /// The hold-back holds everything (a mode without fixed openers).
    pub holds_all: bool,
}

/// The profile that judged `entry` (`judge`), else the session's profile by
/// name, else `None` (the view then holds everything: fail closed).
pub fn profile_of(entry: &Entry, session: &str) -> Option<Profile> {
    match &entry.judge {
        Some((p, _)) => Some(p.clone()),
        None => Profile::builtin(session),
    }
}

/// The replayer's modes with their stream openers
/// ([`crate::Replayer::openers`]).
pub type Openers = [(String, Option<&'static [&'static str]>)];

/// Pushes the first `step` of `chunks` through a hold-back for `profile`,
/// each mode's openers taken from `openers` (the engine's extractors, so a
/// declared format holds back at its own tokens) and else from the built-in
/// rows. `None` when there are no chunks.
pub fn step_through(
    chunks: &[String],
    profile: Option<&Profile>,
    openers: &Openers,
    step: usize,
) -> Option<StreamStep> {
    if chunks.is_empty() {
        return None;
    }
    let step = step.clamp(1, chunks.len());
    let mut hold = match profile {
        Some(p) => Holdback::for_profile_by(p, |mode| {
            openers.iter().find(|(m, _)| m == mode).map(|(_, o)| *o)
        }),
        None => Holdback::new(None),
    };
    for c in &chunks[..step] {
        hold.push(c);
    }
    let text = hold.text();
    // `forwarded` ends on a char boundary: the hold-back only cuts before
    // an opener's first byte.
    let (forwarded, held) = text.split_at(hold.forwarded().min(text.len()));
    Some(StreamStep {
        step,
        total: chunks.len(),
        delta: chunks[step - 1].clone(),
        forwarded: forwarded.to_string(),
        held: held.to_string(),
        opener: hold.opener(),
        holds_all: hold.bound().is_none(),
    })
}

/// The view's title and lines for the selected transcript (`row`) at
/// `step`, judged by the session's `profile` where the row names none.
pub fn view(
    row: Option<&Row>,
    profile: &str,
    openers: &Openers,
    theme: &Theme,
    step: usize,
) -> (String, Vec<Line<'static>>) {
    let Some(row) = row else {
        return (" Stream ".into(), vec![Line::raw("no transcript selected")]);
    };
    let entry = &row.entry;
    let t = &entry.transcript;
    let profile = profile_of(entry, profile);
    let chunks = t.chunks.as_deref().unwrap_or_default();
    let Some(s) = step_through(chunks, profile.as_ref(), openers, step) else {
        return (
            " Stream ".into(),
            vec![Line::styled(
                "this transcript has no recorded `chunks`",
                theme.dim(),
            )],
        );
    };
    let head = |s: &str| TSpan::styled(s.to_string(), theme.header());
    let mut lines = vec![
        Line::from(vec![
            head("delta "),
            TSpan::raw(format!("{}/{}", s.step, s.total)),
            TSpan::styled("  (←/→ or p/n step, g/G first/last)", theme.dim()),
        ]),
        Line::from(vec![
            head("this delta  "),
            TSpan::raw(text::one_line(&s.delta)),
        ]),
        Line::from(vec![
            head("opener      "),
            TSpan::raw(match s.opener {
                Some((at, token)) => format!("{} at byte {at}", text::one_line(token)),
                None if s.holds_all => {
                    "none fixed for this profile: everything is held".to_string()
                }
                None => "not seen yet".to_string(),
            }),
        ]),
        Line::raw(""),
        Line::from(head(&format!("forwarded ({} bytes)", s.forwarded.len()))),
    ];
    lines.extend(text::plain(&s.forwarded, ratatui::style::Style::new()));
    lines.push(Line::raw(""));
    lines.push(Line::from(head(&format!(
        "held back ({} bytes)",
        s.held.len()
    ))));
    lines.extend(text::plain(&s.held, theme.dim()));
    if s.step == s.total {
        lines.push(Line::raw(""));
        let divergence = entry
            .replay
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::StreamDivergence);
        lines.push(match divergence {
            Some(f) => Line::from(vec![
                head("end  "),
                TSpan::raw(format!("streamed ≠ batch: {}", text::one_line(&f.detail))),
            ]),
            None => Line::from(vec![
                head("end  "),
                TSpan::raw(format!(
                    "streamed = batch (decision `{}`)",
                    entry.replay.profile.decision.as_str()
                )),
            ]),
        });
    }
    (format!(" Stream: {} ", text::one_line(&t.id)), lines)
}

/// The Stream view: how many deltas are pushed (1-based).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamView {
    /// How many deltas are pushed.
    pub step: usize,
}

/// What the Stream view is drawn from.
pub struct StreamProps<'a> {
    /// The selected row.
    pub row: Option<&'a Row>,
    /// The session's profile (for rows no profile judged).
    pub profile: &'a str,
    /// The replayer's modes with their stream openers.
    pub openers: &'a Openers,
    /// The overlay window: colors and scroll.
    pub window: Window<'a>,
}

const BACK: &[Key] = &[Key::plain(KeyCode::Left), Key::ch('p')];
const ON: &[Key] = &[Key::plain(KeyCode::Right), Key::ch('n')];

impl StreamView {
    /// Title and rows.
    pub fn content(&self, props: &StreamProps<'_>) -> Content {
        view(
            props.row,
            props.profile,
            props.openers,
            props.window.theme,
            self.step,
        )
    }
}

impl Component for StreamView {
    type Props<'a> = StreamProps<'a>;
    type Answer = Answer<()>;

    fn draw(&self, props: &StreamProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        popup::draw(frame, area, self.content(props), props.window);
    }

    fn event(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        props: &StreamProps<'_>,
    ) -> Answer<()> {
        let total = props
            .row
            .and_then(|r| r.entry.transcript.chunks.as_ref())
            .map_or(1, |c| c.len().max(1));
        let step = self.step;
        self.step = if super::is_key(BACK, key) {
            step.saturating_sub(1).max(1)
        } else if super::is_key(ON, key) {
            (step + 1).min(total)
        } else {
            match action {
                Some(Action::Top) => 1,
                Some(Action::Bottom) => total,
                Some(Action::Close | Action::Stream | Action::Quit) => return Answer::Close,
                Some(a) => return Answer::Scroll(a),
                None => return Answer::Ignored,
            }
        };
        Answer::Handled
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command::bound(
                Action::Stream,
                "stream view: step the recorded chunks (←/→ or p/n)",
            ),
            Command::local(
                "stream view",
                BACK,
                "forwarded so far, held back, the opener; at the last delta streamed vs batch",
            ),
            Command::local("stream view", ON, ""),
            Command::also(Action::Close),
            Command::also(Action::Quit),
        ]
        .into_iter()
        .chain(super::movement())
        .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn steps_forward_text_and_hold_the_opener() {
        let chunks: Vec<String> = ["Hi <to", "ol_call>{", "}</tool_call>"]
            .map(String::from)
            .to_vec();
        let hermes = Profile::builtin("hermes").unwrap();
        let s = step_through(&chunks, Some(&hermes), &[], 1).unwrap();
        assert_eq!((s.forwarded.as_str(), s.held.as_str()), ("Hi ", "<to"));
        assert_eq!(s.opener, None);
        let s = step_through(&chunks, Some(&hermes), &[], 2).unwrap();
        assert_eq!(s.held, "<tool_call>{");
        assert_eq!(s.opener, Some((3, "<tool_call>")));
        // Past the end clamps to the last delta; no chunks, no view.
        assert_eq!(
            step_through(&chunks, Some(&hermes), &[], 9).unwrap().step,
            3
        );
        assert_eq!(step_through(&[], Some(&hermes), &[], 1), None);
        // No profile: hold everything.
        let s = step_through(&chunks, None, &[], 1).unwrap();
        assert_eq!((s.forwarded.as_str(), s.holds_all), ("", true));
    }

    #[test]
    fn a_declared_mode_holds_back_at_its_own_openers() {
        const OPEN: &[&str] = &["<<call>>"];
        let chunks: Vec<String> = ["Sure. <<ca", "ll>>{\"name\":\"f\"}"]
            .map(String::from)
            .to_vec();
        let profile = Profile::for_mode("mine");
        let openers = vec![("mine".to_string(), Some(OPEN))];
        let s = step_through(&chunks, Some(&profile), &openers, 1).unwrap();
        assert_eq!((s.forwarded.as_str(), s.held.as_str()), ("Sure. ", "<<ca"));
        assert!(!s.holds_all);
        let s = step_through(&chunks, Some(&profile), &openers, 2).unwrap();
        assert_eq!(s.opener, Some((6, "<<call>>")));
        // A mode the engine did not report and no built-in row names:
        // nothing is known about where a call begins, so hold everything.
        let s = step_through(&chunks, Some(&profile), &[], 1).unwrap();
        assert_eq!((s.forwarded.as_str(), s.holds_all), ("", true));
        // The engine says the mode has no fixed openers: the same.
        let none = vec![("mine".to_string(), None)];
        let s = step_through(&chunks, Some(&profile), &none, 1).unwrap();
        assert_eq!((s.forwarded.as_str(), s.holds_all), ("", true));
    }
}
