//! What `label --check` says to a reviewer: `--format markdown` renders a
//! summary short enough for a PR comment (counts, then one section per
//! transcript whose labels changed, each changed mode stored → now and why),
//! `--format github` prints GitHub workflow annotations on the transcript
//! files. The "why" of a changed label is [`ModeResult::why`](toolgate_validator::ModeResult::why), the same
//! line the inspector's review screen shows, plus the candidate it was
//! decided on ([`ModeResult::deciding_candidate`](toolgate_validator::ModeResult::deciding_candidate)).
//!
//! Everything shown comes from untrusted files (paths, ids, model names,
//! raw candidates): it is one line, without control characters, and
//! escaped for markdown (no table cell broken by `|`, no HTML, no
//! `@mention` pinging anyone from a PR comment).

use crate::{Labels, Why, cut_short, stored, unlabeled};
use std::path::{Path, PathBuf};
use toolgate_core::LoadError;
use toolgate_core::sanitize::{self, cell};
use toolgate_core::{Transcript, relabel};

/// One transcript of the review.
#[derive(Clone, Debug)]
pub struct Section {
    /// The file, as given on the command line or found under a directory.
    pub path: PathBuf,
    /// The JSONL line.
    pub line: Option<usize>,
    /// The transcript id.
    pub id: String,
    /// The model.
    pub model: Option<String>,
    /// Whether nothing was stored (`--require-labels`).
    pub unlabeled: bool,
    /// The changed labels.
    pub whys: Vec<Why>,
}

/// The counts the summary starts with.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// Transcripts replayed.
    pub checked: usize,
    /// Transcripts whose stored labels differ.
    pub changed: usize,
    /// Transcripts without stored labels.
    pub unlabeled: usize,
    /// Of those, the ones failing `--require-labels`: not the imported
    /// captures `label --write` cannot store labels in ([`storable`](crate::storable)).
    pub unlabeled_failing: usize,
    /// Whether unlabeled transcripts fail the check (`--require-labels`).
    pub require_labels: bool,
}

impl Counts {
    /// What the check says of the transcripts without stored labels;
    /// `flag` renders the option's name. The summary and the command's last
    /// line both say it, so that neither calls a transcript failing that the
    /// exit code lets pass: an imported capture cannot store labels, so
    /// `--require-labels` does not ask it to.
    pub fn unlabeled_note(&self, flag: impl Fn(&str) -> String) -> String {
        let exempt = self.unlabeled.saturating_sub(self.unlabeled_failing);
        let note = match (self.unlabeled_failing, exempt) {
            _ if !self.require_labels => "not compared".to_string(),
            (_, 0) => format!("failing: {}", flag("--require-labels")),
            (0, _) => "in captures that cannot store labels: not compared".to_string(),
            (n, exempt) => format!(
                "{n} failing: {}; {exempt} in captures that cannot store labels, not compared",
                flag("--require-labels")
            ),
        };
        format!("{} without stored labels ({note})", self.unlabeled)
    }
}

/// What a label run counts over the transcripts it replayed: the totals
/// `label --check`, `--changed` and `--write` report, and the exit code
/// decides on.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Transcripts replayed and counted (recordings cut short excepted).
    pub checked: usize,
    /// Transcripts with stored labels that differ from the current ones.
    pub changed: usize,
    /// Transcripts without a stored `labels` member.
    pub unlabeled: usize,
    /// Transcripts failing `--require-labels` for having none.
    pub unlabeled_failing: usize,
    /// Transcripts judged with tools unknown (SPEC §4).
    pub tools_unknown: usize,
    /// Proxy recordings of exchanges cut short ([`cut_short`]): not model
    /// answers, left out.
    pub cut_short: usize,
    /// Modes with stored labels that this run did not replay, first seen
    /// first: kept, not compared.
    pub not_replayed: Vec<String>,
}

impl Tally {
    /// Counts one replayed transcript; `false` when it is a recording cut
    /// short, which is counted as such and nothing else.
    pub fn add(&mut self, t: &Transcript, labels: &Labels) -> bool {
        if cut_short(t).is_some() {
            self.cut_short += 1;
            return false;
        }
        self.checked += 1;
        if unlabeled(t) {
            self.unlabeled += 1;
        }
        self.tools_unknown += usize::from(t.tools_unknown());
        if labels.unlabeled {
            self.unlabeled_failing += 1;
        }
        let not_now = match stored(t) {
            Some(stored) => relabel::not_replayed(&labels.strict_pairs(), Some(stored)),
            None => Vec::new(),
        };
        for mode in not_now {
            if !self.not_replayed.contains(&mode) {
                self.not_replayed.push(mode);
            }
        }
        if !labels.diffs.is_empty() && !labels.unlabeled {
            self.changed += 1;
        }
        true
    }

    /// The counts the reviewer's summary starts with.
    pub fn counts(&self, require_labels: bool) -> Counts {
        Counts {
            checked: self.checked,
            changed: self.changed,
            unlabeled: self.unlabeled,
            unlabeled_failing: self.unlabeled_failing,
            require_labels,
        }
    }
}

/// A PR comment stays well under GitHub's 65,536 characters.
const BUDGET: usize = 60_000;
/// Longest "why" and candidate shown, in characters.
const WHY_MAX: usize = 240;
const CANDIDATE_MAX: usize = 100;

/// Untrusted text as markdown inline text: one line, cut, escaped
/// ([`toolgate_core::sanitize::markdown_text`]).
fn text(s: &str, max: usize) -> String {
    toolgate_core::sanitize::markdown_text(&cell(s, max)).into_owned()
}

/// Untrusted text as a code span: one line, cut; the fence is one backtick
/// longer than the longest run inside, and `|` is escaped for tables.
fn code(s: &str, max: usize) -> String {
    let one = cell(s, max).replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in one.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if one.starts_with('`') || one.ends_with('`') || longest > 0 {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{one}{pad}{fence}")
}

/// A link target: the path percent-encoded where markdown or a URL would
/// misread it.
fn href(base: &str, path: &str) -> String {
    let path = path.trim_start_matches("./");
    let mut out = String::from(base);
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'/' | b'~' => {
                out.push(char::from(b))
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Section {
    fn location(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.path.display()),
            None => self.path.display().to_string(),
        }
    }

    fn markdown(&self, link_base: &str) -> String {
        let mut target = href(link_base, &self.path.display().to_string());
        if let Some(l) = self.line
            && !link_base.is_empty()
        {
            target.push_str(&format!("#L{l}"));
        }
        let mut out = format!(
            "### [{}]({target}) · {}",
            code(&self.location(), 200),
            code(&self.id, 80)
        );
        if let Some(model) = &self.model {
            out.push_str(&format!(" · {}", text(model, 80)));
        }
        out.push_str("\n\n");
        if self.unlabeled {
            out.push_str("No stored labels: nothing in this transcript was reviewed yet.\n\n");
        }
        if self.whys.is_empty() {
            // Unlabeled with every mode quiet: nothing to list but that.
            out.push_str(
                "Every mode is quiet: `label --write` stores an empty `labels` member.\n\n",
            );
            return out;
        }
        out.push_str("| mode | stored → now | why |\n| --- | --- | --- |\n");
        for w in &self.whys {
            let stored = match &w.stored {
                Some(s) => code(s, 40),
                None => "(none)".to_string(),
            };
            let mut why = text(&w.why, WHY_MAX);
            if let Some(c) = &w.candidate {
                why.push_str(&format!(" — candidate {}", code(c, CANDIDATE_MAX)));
            }
            out.push_str(&format!(
                "| {} | {stored} → **{}** | {why} |\n",
                code(&w.mode, 40),
                code(w.now.as_str(), 40)
            ));
        }
        out.push('\n');
        out
    }
}

/// The reviewer's summary: a title and counts, then one section per
/// changed transcript (as many as fit a PR comment), the unreadable files,
/// and how to accept the changes. `link_base` is put before each file's
/// path in its link (e.g. `https://github.com/OWNER/REPO/blob/SHA/`).
pub fn markdown(
    sections: &[Section],
    bad: &crate::BadInputs,
    counts: &Counts,
    link_base: Option<&str>,
) -> String {
    let link_base = link_base.unwrap_or("");
    let failing = counts.changed + counts.unlabeled_failing;
    let note = counts.unlabeled_note(|f| format!("`{f}`"));
    let mut out = String::from("## toolgate label check\n\n");
    if failing == 0 && bad.is_empty() {
        out.push_str(&format!(
            "No label changed in {} transcript(s)",
            counts.checked
        ));
        if counts.unlabeled > 0 {
            out.push_str(&format!("; {note}"));
        }
        out.push_str(".\n");
    } else {
        out.push_str(&format!(
            "**{}** of {} transcript(s) with labels differing from the stored ones",
            counts.changed, counts.checked
        ));
        out.push_str(&format!("; {note}"));
        out.push_str(&format!("; {} unreadable.\n", bad.len()));
    }
    out.push('\n');
    let mut shown = 0;
    for s in sections {
        let section = s.markdown(link_base);
        if out.len() + section.len() > BUDGET {
            break;
        }
        out.push_str(&section);
        shown += 1;
    }
    if shown < sections.len() {
        out.push_str(&format!(
            "…and {} more transcript(s) not shown here: run `toolgate label --check` locally.\n\n",
            sections.len() - shown
        ));
    }
    if !bad.is_empty() {
        out.push_str("### Unreadable\n\n");
        for (i, e) in bad.first().iter().enumerate() {
            if i == 20 {
                out.push_str(&format!("- …and {} more\n", bad.len() - 20));
                break;
            }
            let at = match e.line {
                Some(l) => format!("{}:{l}", e.path.display()),
                None => e.path.display().to_string(),
            };
            out.push_str(&format!("- {}: {}\n", code(&at, 200), text(&e.reason, 200)));
        }
        out.push('\n');
    }
    if failing > 0 {
        out.push_str(
            "If every change is intended, store the current labels with \
             `toolgate label --write PATH…` and commit the files.\n",
        );
    }
    out
}

/// A value of a GitHub workflow command: `%` is `%25`; in a property also
/// CR, LF, `:` and `,` (`%0D`, `%0A`, `%3A`, `%2C`), which GitHub decodes,
/// so that `file=` names the very file, a newline in its name included.
/// Any other control character, and CR and LF in a message, is shown as
/// an escape ([`sanitize::one_line`]): the command stays on one line, so
/// no text in it can start a workflow command of its own, and a message
/// cannot pass off a second annotation as its next line.
fn gh_escape(s: &str, property: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut buf = [0u8; 4];
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' if property => out.push_str("%0D"),
            '\n' if property => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            // A raw tab ends no line: the path stays exact.
            '\t' if property => out.push('\t'),
            c => out.push_str(&sanitize::one_line(c.encode_utf8(&mut buf))),
        }
    }
    out
}

/// `file=PATH[,line=N]`, and what a message says first of the file: `""`,
/// or, for a name that is not UTF-8, the name with each byte that is not
/// UTF-8 as `\xNN` (and `\` as `\\`, so that it reads back exactly).
/// GitHub decodes no escape but `%25`, `%0D`, `%0A`, `%3A` and `%2C` in a
/// property, and matches `file=` against the repository's paths as
/// UTF-8: such a name cannot be given losslessly, and given lossy (U+FFFD)
/// it names no file, so the annotation goes on the run (no `file=`), the
/// file named in its message.
fn gh_file(path: &Path, line: Option<usize>) -> (String, String) {
    let Some(name) = path.to_str() else {
        let mut shown = String::new();
        for chunk in path.as_os_str().as_encoded_bytes().utf8_chunks() {
            shown.push_str(&chunk.valid().replace('\\', "\\\\"));
            for b in chunk.invalid() {
                shown.push_str(&format!("\\x{b:02X}"));
            }
        }
        if let Some(l) = line {
            shown.push_str(&format!(":{l}"));
        }
        return (
            String::new(),
            format!("{shown} (file name not UTF-8, not annotated in place): "),
        );
    };
    let mut out = format!("file={}", gh_escape(name.trim_start_matches("./"), true));
    if let Some(l) = line {
        out.push_str(&format!(",line={l}"));
    }
    out.push(',');
    (out, String::new())
}

/// GitHub workflow annotations for one transcript: one `::warning` per
/// changed label, on the transcript's file (and JSONL line).
pub fn annotations(s: &Section) -> String {
    let mut out = String::new();
    let (file, named) = gh_file(&s.path, s.line);
    if s.unlabeled {
        out.push_str(&format!(
            "::warning {file}title=toolgate%3A no stored labels::{}: no stored labels (--require-labels); run toolgate label --write\n",
            gh_escape(&format!("{named}{}", s.id), false)
        ));
        return out;
    }
    for w in &s.whys {
        let stored = w.stored.as_deref().unwrap_or("(none)");
        let mut message = format!(
            "{named}{}: mode {}: label {stored} → {}: {}",
            s.id, w.mode, w.now, w.why
        );
        if let Some(c) = &w.candidate {
            message.push_str(&format!(" (candidate: {})", cell(c, CANDIDATE_MAX)));
        }
        out.push_str(&format!(
            "::warning {file}title=toolgate%3A label changed::{}\n",
            gh_escape(&message, false)
        ));
    }
    out
}

/// A GitHub `::error` annotation for an unreadable file or line.
pub fn annotation_bad(e: &LoadError) -> String {
    let (file, named) = gh_file(&e.path, e.line);
    format!(
        "::error {file}title=toolgate%3A unreadable::{}\n",
        gh_escape(&format!("{named}{}", e.reason), false)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_cannot_break_the_markdown() {
        assert_eq!(
            text("a|b <x> @me [l](u)", 100),
            "a\\|b &lt;x&gt; &#64;me \\[l\\](u)"
        );
        assert_eq!(code("a`b", 100), "`` a`b ``");
        assert_eq!(code("x|y", 100), "`x\\|y`");
        assert_eq!(code("line\nbreak", 100), "`line\\nbreak`");
        assert_eq!(href("B/", "./a b/(x).json"), "B/a%20b/%28x%29.json");
    }

    #[test]
    fn annotation_values_are_escaped() {
        assert_eq!(gh_escape("50%: a,b\r\nc", true), "50%25%3A a%2Cb%0D%0Ac");
        assert_eq!(gh_escape("50%: a,b", false), "50%25: a,b");
        // A message stays one line, its newline shown, not decoded.
        assert_eq!(gh_escape("a\n::error::x", false), "a\\n::error::x");
        assert_eq!(gh_escape("\u{1b}[2J", true), "\\x1b[2J");
    }

    /// A file name that is not UTF-8 went into `file=` with U+FFFD, a path
    /// GitHub has no file at: the annotation is now on the run, the name
    /// in its message byte for byte (`\xNN`, `\` doubled).
    #[cfg(unix)]
    #[test]
    fn a_file_name_that_is_not_utf8_is_named_in_the_message_not_in_file() {
        use std::os::unix::ffi::OsStrExt as _;
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(b"logs/a\\caf\xe9.jsonl"));
        let section = Section {
            path: path.clone(),
            line: Some(3),
            id: "t1".into(),
            model: None,
            unlabeled: true,
            whys: Vec::new(),
        };
        assert_eq!(
            annotations(&section),
            "::warning title=toolgate%3A no stored labels::logs/a\\\\caf\\xE9.jsonl:3 \
             (file name not UTF-8, not annotated in place): t1: no stored labels \
             (--require-labels); run toolgate label --write\n"
        );
        let bad = LoadError {
            path,
            line: None,
            reason: "not JSON".into(),
        };
        assert_eq!(
            annotation_bad(&bad),
            "::error title=toolgate%3A unreadable::logs/a\\\\caf\\xE9.jsonl \
             (file name not UTF-8, not annotated in place): not JSON\n"
        );
        // A UTF-8 name is still the annotation's file.
        let section = Section {
            path: "./logs/café.jsonl".into(),
            ..section
        };
        assert_eq!(
            annotations(&section),
            "::warning file=logs/café.jsonl,line=3,title=toolgate%3A no stored labels::t1: \
             no stored labels (--require-labels); run toolgate label --write\n"
        );
    }

    /// An imported capture without labels passed `--require-labels` (it
    /// cannot store any) while the summary called it failing.
    #[test]
    fn a_capture_without_labels_is_not_called_failing() {
        let counts = Counts {
            checked: 1,
            changed: 0,
            unlabeled: 1,
            unlabeled_failing: 0,
            require_labels: true,
        };
        assert_eq!(
            markdown(&[], &crate::BadInputs::default(), &counts, None),
            "## toolgate label check\n\nNo label changed in 1 transcript(s); 1 without \
             stored labels (in captures that cannot store labels: not compared).\n\n"
        );
        let counts = Counts {
            checked: 2,
            unlabeled: 2,
            unlabeled_failing: 1,
            ..counts
        };
        assert!(
            markdown(&[], &crate::BadInputs::default(), &counts, None).contains(
                "**0** of 2 transcript(s) with labels differing from the stored ones; 2 without \
                 stored labels (1 failing: `--require-labels`; 1 in captures that cannot store \
                 labels, not compared); 0 unreadable."
            )
        );
    }
}
