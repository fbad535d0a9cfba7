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
    let on = |pane| app.focus == pane;
    let (list, output) = (areas.list, areas.output);
    let (modes, detail) = (areas.modes, areas.detail);
    app.list
        .draw(&app.list_props(list, on(Focus::List)), frame, list);
    app.output
        .draw(&app.pane(output, on(Focus::Output)), frame, output);
    ModesView.draw(&app.modes_props(modes, on(Focus::Modes)), frame, modes);
    app.detail
        .draw(&app.pane(detail, on(Focus::Detail)), frame, detail);
    if let (Some(area), Some(prompt)) = (areas.prompt, &app.prompt) {
        prompt.draw(&app.prompt_props(), frame, area);
    }
    StatusBar.draw(&app.status_props(), frame, areas.status);
    if app.overlay != Overlay::None {
        popup::draw(frame, frame.area(), app.overlay_content(), app.window());
    }
}
