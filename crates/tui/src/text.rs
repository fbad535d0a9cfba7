//! Untrusted text to styled, wrapped lines.
//!
//! Every character goes through [`toolgate_core::sanitize::visible`] one at a
//! time, so an escape sequence shows as `\x1b[31m` and never reaches the
//! terminal, while styles are still decided by the character's byte offset
//! in the original text: candidate spans, reasoning spans and parse-failure
//! offsets line up with what the extractors reported.

use ratatui::style::Style;
use ratatui::text::{Line, Span as TSpan};
use toolgate_core::Span;
use toolgate_core::sanitize;
use unicode_width::UnicodeWidthChar;

/// Text longer than this is cut for display (with a note saying so).
pub const DISPLAY_LIMIT: usize = 512 * 1024;

/// What to highlight in a text, by byte offsets into it.
#[derive(Clone, Debug, Default)]
pub struct Marks {
    /// Candidate spans and their style.
    pub candidates: Vec<(Span, Style)>,
    /// Reasoning spans (dimmed).
    pub reasoning: Vec<Span>,
    /// Parse-failure offsets (marked; an offset at the end of the text adds
    /// an end marker).
    pub failures: Vec<usize>,
    /// Dim the whole text (the separate reasoning field).
    pub all_reasoning: bool,
}

/// Pushes the visible form of `c` (escapes for control characters, spaces
/// for a tab) onto `out`.
pub fn push_visible(out: &mut String, c: char) {
    if c == '\t' {
        out.push_str("    ");
        return;
    }
    let mut buf = [0u8; 4];
    out.push_str(&sanitize::visible(c.encode_utf8(&mut buf)));
}

/// `text` as one safe line: newlines and tabs shown as `\n`, `\t`.
pub fn one_line(text: &str) -> String {
    sanitize::one_line(text).into_owned()
}

/// Logical lines of `text` in `base` style, sanitized.
pub fn plain(text: &str, base: Style) -> Vec<Line<'static>> {
    styled(text, &Marks::default(), base, base, Style::new())
}

/// Logical lines of `text` with `marks` applied over `base`.
pub fn styled(
    text: &str,
    marks: &Marks,
    base: Style,
    reasoning: Style,
    failure: Style,
) -> Vec<Line<'static>> {
    let (shown, cut) = if text.len() > DISPLAY_LIMIT {
        let mut end = DISPLAY_LIMIT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (&text[..end], text.len() - end)
    } else {
        (text, 0)
    };
    let n = shown.len();
    // Difference arrays: linear in text length plus number of spans, however
    // many spans overlap.
    let mut cand_depth = vec![0i32; n + 1];
    let mut cand_style: Vec<Option<Style>> = vec![None; n + 1];
    for (span, style) in &marks.candidates {
        let (s, e) = (span.start.min(n), span.end.min(n));
        if s < e {
            cand_depth[s] += 1;
            cand_depth[e] -= 1;
            cand_style[s].get_or_insert(*style);
        }
    }
    let mut reason_depth = vec![0i32; n + 1];
    for span in &marks.reasoning {
        let (s, e) = (span.start.min(n), span.end.min(n));
        if s < e {
            reason_depth[s] += 1;
            reason_depth[e] -= 1;
        }
    }
    let mut fail_at = vec![false; n + 1];
    let mut fail_at_end = false;
    for &off in &marks.failures {
        if off < n {
            fail_at[off] = true;
        } else if cut == 0 {
            fail_at_end = true;
        }
    }

    let mut lines = Vec::new();
    let mut line: Vec<TSpan<'static>> = Vec::new();
    let mut run = String::new();
    let mut run_style = base;
    let (mut cd, mut rd) = (0i32, 0i32);
    let mut current_cand = base;
    let mut last = 0;
    for (i, c) in shown.char_indices() {
        // Fold in every boundary between the previous char and this one.
        for j in last..=i {
            cd += cand_depth[j];
            rd += reason_depth[j];
            if let Some(s) = cand_style[j] {
                current_cand = s;
            }
        }
        last = i + 1;
        let mut style = base;
        if marks.all_reasoning || rd > 0 {
            style = style.patch(reasoning);
        }
        if cd > 0 {
            style = style.patch(current_cand);
        }
        if fail_at[i] {
            style = style.patch(failure);
        }
        if c == '\n' {
            if fail_at[i] {
                // Make a failure at a newline visible.
                flush(&mut line, &mut run, run_style);
                line.push(TSpan::styled("⏎", style));
            }
            flush(&mut line, &mut run, run_style);
            lines.push(Line::from(std::mem::take(&mut line)));
            continue;
        }
        if style != run_style {
            flush(&mut line, &mut run, run_style);
            run_style = style;
        }
        push_visible(&mut run, c);
    }
    flush(&mut line, &mut run, run_style);
    if fail_at_end {
        line.push(TSpan::styled("◀ end of text", failure));
    }
    if cut > 0 {
        if !line.is_empty() {
            lines.push(Line::from(std::mem::take(&mut line)));
        }
        line.push(TSpan::styled(
            format!("… {cut} more bytes not shown"),
            reasoning,
        ));
    }
    lines.push(Line::from(line));
    lines
}

fn flush(line: &mut Vec<TSpan<'static>>, run: &mut String, style: Style) {
    if !run.is_empty() {
        line.push(TSpan::styled(std::mem::take(run), style));
    }
}

/// Wraps lines at `width` columns, keeping styles, so that scrolling can
/// count rows exactly. A row breaks after its last space when that space
/// is in the second half of the row, else mid-word.
pub fn wrap(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    if width == 0 {
        return lines;
    }
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if line.width() <= width {
            out.push(line);
            continue;
        }
        let line_style = line.style;
        let cells: Vec<(char, Style)> = line
            .spans
            .iter()
            .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
            .collect();
        let mut start = 0;
        while start < cells.len() {
            // Take as many cells as fit.
            let mut used = 0;
            let mut end = start;
            while end < cells.len() {
                let w = cells[end].0.width().unwrap_or(0);
                if used + w > width && end > start {
                    break;
                }
                used += w;
                end += 1;
            }
            if end < cells.len()
                && let Some(space) = cells[start..end].iter().rposition(|(c, _)| *c == ' ')
                && space + 1 > (end - start) / 2
            {
                end = start + space + 1;
            }
            out.push(Line::from(group(&cells[start..end])).style(line_style));
            start = end;
        }
    }
    out
}

/// `shown` (already made safe) with every case-insensitive occurrence of
/// each of `needles` (lowercase) in `matched` style. Text whose lowercase
/// form has another length (rare scripts) is left unhighlighted rather than
/// misaligned.
pub fn highlight(shown: &str, needles: &[&str], matched: Style) -> Line<'static> {
    let lower = shown.to_lowercase();
    if needles.iter().all(|n| n.is_empty()) || lower.len() != shown.len() {
        return Line::raw(shown.to_string());
    }
    let mut marked = vec![false; shown.len()];
    for needle in needles.iter().filter(|n| !n.is_empty()) {
        let mut at = 0;
        while let Some(i) = lower[at..].find(needle) {
            let start = at + i;
            let end = start + needle.len();
            marked[start..end].iter_mut().for_each(|m| *m = true);
            at = end;
        }
    }
    let mut spans = Vec::new();
    let mut run = String::new();
    let mut on = false;
    for (i, c) in shown.char_indices() {
        if marked[i] != on && !run.is_empty() {
            let style = if on { matched } else { Style::new() };
            spans.push(TSpan::styled(std::mem::take(&mut run), style));
        }
        on = marked[i];
        run.push(c);
    }
    if !run.is_empty() {
        spans.push(TSpan::styled(run, if on { matched } else { Style::new() }));
    }
    Line::from(spans)
}

/// `spans` cut to at most `width` columns, the last one kept ending in `…`
/// when something was cut.
pub fn truncate_spans(spans: Vec<TSpan<'static>>, width: usize) -> Vec<TSpan<'static>> {
    let total: usize = spans.iter().map(TSpan::width).sum();
    if total <= width {
        return spans;
    }
    let mut out = Vec::new();
    let mut used = 0;
    let budget = width.saturating_sub(1);
    for span in spans {
        let mut content = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > budget {
                break;
            }
            used += w;
            content.push(c);
        }
        let full = content.len() == span.content.len();
        if !content.is_empty() {
            out.push(TSpan::styled(content, span.style));
        }
        if !full {
            if width > 0 {
                out.push(TSpan::styled("…", span.style));
            }
            break;
        }
    }
    out
}

fn group(cells: &[(char, Style)]) -> Vec<TSpan<'static>> {
    let mut spans = Vec::new();
    let mut run = String::new();
    let mut style = None;
    for (c, s) in cells {
        if style.is_some_and(|st| st != *s) {
            spans.push(TSpan::styled(
                std::mem::take(&mut run),
                style.unwrap_or_default(),
            ));
        }
        style = Some(*s);
        run.push(*c);
    }
    if !run.is_empty() {
        spans.push(TSpan::styled(run, style.unwrap_or_default()));
    }
    spans
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ratatui::style::Modifier;

    fn text_of(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn escapes_are_visible_and_spans_still_line_up() {
        let hl = Style::new().add_modifier(Modifier::BOLD);
        let text = "\u{1b}[2J<t>{\"a\":1}</t>";
        let start = text.find("<t>").unwrap();
        let marks = Marks {
            candidates: vec![(Span::new(start, text.len()), hl)],
            ..Marks::default()
        };
        let lines = styled(text, &marks, Style::new(), Style::new(), Style::new());
        assert_eq!(text_of(&lines), vec!["\\x1b[2J<t>{\"a\":1}</t>"]);
        let spans = &lines[0].spans;
        assert_eq!(spans[0].content, "\\x1b[2J");
        assert_eq!(spans[0].style, Style::new());
        assert_eq!(spans[1].content, "<t>{\"a\":1}</t>");
        assert_eq!(spans[1].style, hl);
    }

    #[test]
    fn failure_offsets_and_reasoning_are_marked() {
        let fail = Style::new().add_modifier(Modifier::REVERSED);
        let dim = Style::new().add_modifier(Modifier::DIM);
        let marks = Marks {
            reasoning: vec![Span::new(0, 3)],
            failures: vec![4, 6],
            ..Marks::default()
        };
        let lines = styled("abc\nde", &marks, Style::new(), dim, fail);
        assert_eq!(text_of(&lines), vec!["abc", "de◀ end of text"]);
        assert_eq!(lines[0].spans[0].style, dim);
        assert_eq!(lines[1].spans[0].content, "d");
        assert_eq!(lines[1].spans[0].style, fail);
    }

    #[test]
    fn wrapping_counts_columns_and_keeps_styles() {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let lines = wrap(
            vec![Line::from(vec![
                TSpan::raw("abcd"),
                TSpan::styled("efg", bold),
            ])],
            3,
        );
        assert_eq!(text_of(&lines), vec!["abc", "def", "g"]);
        assert_eq!(lines[1].spans[1].content, "ef");
        assert_eq!(lines[1].spans[1].style, bold);
        let words = wrap(vec![Line::raw("decision reject at intent")], 12);
        assert_eq!(text_of(&words), vec!["decision ", "reject at ", "intent"]);
    }
}
