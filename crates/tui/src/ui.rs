//! Drawing: the screen composed of the views, each drawn from what the app
//! hands it ([`App`]'s props builders), never from the whole app. Every
//! string that came from a transcript passes through [`crate::text`] (and
//! so through `toolgate_core::sanitize`) before it reaches a cell.

use crate::app::{App, Focus, Overlay};
use crate::component::Component;
use crate::layout::layout;
use crate::views::modes::ModesView;
use crate::views::popup;
use crate::views::status::StatusBar;
use ratatui::Frame;

/// Draws the whole screen.
pub fn draw(app: &App, frame: &mut Frame<'_>) {
    let areas = layout(frame.area(), app.prompt.is_some());
    let focused = |pane| app.focus == pane;
    app.list.draw(
        &app.list_props(areas.list, focused(Focus::List)),
        frame,
        areas.list,
    );
    app.output.draw(
        &app.pane(areas.output, focused(Focus::Output)),
        frame,
        areas.output,
    );
    ModesView.draw(
        &app.modes_props(areas.modes, focused(Focus::Modes)),
        frame,
        areas.modes,
    );
    app.detail.draw(
        &app.pane(areas.detail, focused(Focus::Detail)),
        frame,
        areas.detail,
    );
    if let (Some(area), Some(prompt)) = (areas.prompt, &app.prompt) {
        prompt.draw(&app.prompt_props(), frame, area);
    }
    StatusBar.draw(&app.status_props(), frame, areas.status);
    if app.overlay != Overlay::None {
        let content = app.overlay_content(frame.area());
        popup::draw(frame, frame.area(), content, app.overlay_scroll, &app.theme);
    }
}
