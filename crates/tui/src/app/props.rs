//! What the views are drawn from: the app hands each view props built
//! from its navigation (the selected row, seen through the chosen mode),
//! never itself; and every view's commands, which the help is made of.

use super::{App, Focus, Overlay};
use crate::component::{Command, Component};
use crate::filter::Filter;
use crate::keys::Action;
use crate::views::confirm::{ConfirmProps, ConfirmView};
use crate::views::copy::{CopyProps, CopyView};
use crate::views::diff::{DiffProps, DiffView};
use crate::views::help::{HelpProps, HelpView};
use crate::views::list::ListProps;
use crate::views::modes::{ModesProps, ModesView};
use crate::views::picker::{PickerProps, PickerView};
use crate::views::popup::{self, Content, Window};
use crate::views::prompt::{Prompt, PromptKind, PromptProps};
use crate::views::review::{ReviewProps, ReviewView};
use crate::views::status::{StatusBar, StatusProps};
use crate::views::stream::{StreamProps, StreamView};
use crate::views::unreadable::{UnreadableProps, UnreadableView};
use crate::views::{Pane, Selected};
use ratatui::layout::Rect;

impl App {
    /// The selection the output, modes and detail panes show.
    pub fn selected_props(&self) -> Selected<'_> {
        let row = self.current();
        let mode = self.mode_shown();
        Selected {
            row,
            mode,
            result: row.and_then(|r| r.mode_result(mode, self.lenient)),
            lenient: self.lenient,
            modes: &self.session.modes,
            roots: &self.store.roots,
            theme: &self.theme,
        }
    }

    /// The mode shown, borrowed ([`App::mode_name`] without the copy).
    pub(super) fn mode_shown(&self) -> &str {
        if let Some(m) = &self.mode {
            return m;
        }
        let Some(row) = self.current() else {
            return &self.session.primary;
        };
        // The summary's, not the whole replay's: the mode shown is known
        // before the selected transcript's replay is made again.
        let summary = &row.entry.replay;
        summary
            .profile
            .parse_mode
            .as_deref()
            .or_else(|| {
                summary
                    .modes(false)
                    .find(|(_, m)| m.live > 0)
                    .map(|(mode, _)| mode)
            })
            .or_else(|| row.entry.judge.as_ref().map(|(p, _)| p.primary.as_str()))
            .unwrap_or(&self.session.primary)
    }

    /// A pane in `area`, focused or not.
    pub fn pane(&self, area: Rect, focused: bool) -> Pane<'_> {
        Pane {
            sel: self.selected_props(),
            area,
            focused,
        }
    }

    /// What the modes table in `area` is drawn from.
    pub fn modes_props(&self, area: Rect, focused: bool) -> ModesProps<'_> {
        ModesProps {
            pane: self.pane(area, focused),
            following: self.mode.is_none(),
            only_found: self.only_found,
        }
    }

    /// What the list in `area` is drawn from.
    pub fn list_props(&self, area: Rect, focused: bool) -> ListProps<'_> {
        ListProps {
            rows: &self.rows,
            selected: self.selected,
            total: self.store.total(),
            progress: self.store.progress(),
            roots: &self.store.roots,
            theme: &self.theme,
            focused,
            area,
        }
    }

    /// What the status bar is drawn from.
    pub fn status_props(&self) -> StatusProps<'_> {
        StatusProps {
            rows: &self.rows,
            roots: &self.store.roots,
            watch: &self.store.watch,
            watch_error: self.store.watch_error.as_deref(),
            progress: self.store.progress(),
            unreadable: self.unreadable.len(),
            message: self.message.as_deref(),
            keys: &self.keys,
            theme: &self.theme,
            focused: self.focus == Focus::Status,
        }
    }

    /// What the prompt line is drawn from.
    pub fn prompt_props(&self) -> PromptProps<'_> {
        PromptProps {
            total: self.store.total(),
            theme: &self.theme,
        }
    }

    /// Every view's commands (the help is made of them), the app's own
    /// (panes, overlays, quitting) first.
    pub fn commands(&self) -> Vec<Command> {
        self.view_commands().into_iter().flatten().collect()
    }

    /// The commands of each view, one list a view, in the help's order.
    pub fn view_commands(&self) -> Vec<Vec<Command>> {
        let own = vec![
            Command::bound(Action::NextPane, "next pane"),
            Command::bound(Action::PrevPane, "previous pane"),
            Command::bound(Action::Close, "close overlay / cancel"),
            Command::bound(Action::Quit, "quit"),
        ];
        let prompt = Prompt::new(
            PromptKind::Search,
            String::new(),
            0,
            Filter::default(),
            None,
        );
        vec![
            own,
            self.list.commands(),
            self.output.commands(),
            ModesView.commands(),
            self.detail.commands(),
            StatusBar.commands(),
            HelpView.commands(),
            UnreadableView.commands(),
            DiffView::default().commands(),
            StreamView::default().commands(),
            CopyView.commands(),
            ConfirmView.commands(),
            ReviewView::default().commands(),
            PickerView::default().commands(),
            prompt.commands(),
        ]
    }

    /// Title and rows of the open overlay (not yet wrapped).
    pub fn overlay_content(&self) -> Content {
        match &self.overlay {
            Overlay::None => (String::new(), Vec::new()),
            Overlay::Help => HelpView.content(&HelpProps {
                keys: &self.keys,
                commands: &self.commands(),
                window: self.window(),
            }),
            Overlay::Unreadable => UnreadableView.content(&self.unreadable_props()),
            Overlay::Diff(view) => view.content(&self.diff_props()),
            Overlay::ConfirmAccept => ConfirmView.content(&self.confirm_props()),
            Overlay::Review(view) => view.content(&self.review_props()),
            Overlay::Copy => CopyView.content(&self.copy_props()),
            Overlay::Stream(view) => view.content(&self.stream_props()),
            Overlay::ModePicker(view) => view.content(&self.picker_props()),
        }
    }

    /// What the unreadable-files overlay is drawn from.
    pub fn unreadable_props(&self) -> UnreadableProps<'_> {
        UnreadableProps {
            unreadable: &self.unreadable,
            roots: &self.store.roots,
            window: self.window(),
        }
    }

    /// What the diff overlay is drawn from.
    pub fn diff_props(&self) -> DiffProps<'_> {
        DiffProps {
            sel: self.selected_props(),
            window: self.window(),
        }
    }

    /// What the accept overlay is drawn from.
    pub fn confirm_props(&self) -> ConfirmProps<'_> {
        ConfirmProps {
            row: self.current(),
            rows: &self.rows,
            window: self.window(),
        }
    }

    /// What the review overlay is drawn from.
    pub fn review_props(&self) -> ReviewProps<'_> {
        ReviewProps {
            row: self.current(),
            window: self.window(),
        }
    }

    /// What the copy overlay is drawn from.
    pub fn copy_props(&self) -> CopyProps<'_> {
        CopyProps {
            mode: self.mode_shown(),
            window: self.window(),
        }
    }

    /// What the Stream view is drawn from.
    pub fn stream_props(&self) -> StreamProps<'_> {
        StreamProps {
            row: self.current(),
            profile: &self.session.profile,
            openers: &self.session.openers,
            window: self.window(),
        }
    }

    /// What the mode picker is drawn from.
    pub fn picker_props(&self) -> PickerProps<'_> {
        PickerProps {
            modes: &self.session.modes,
            row: self.current(),
            lenient: self.lenient,
            window: self.window(),
        }
    }

    /// The overlay window: colors and scroll.
    pub fn window(&self) -> Window<'_> {
        Window {
            theme: &self.theme,
            scroll: self.overlay_scroll,
        }
    }

    /// How many rows the open overlay has (for scrolling).
    pub fn overlay_rows(&self) -> usize {
        popup::wrapped(self.overlay_content(), self.size).1.len()
    }
}
