//! `toolgate import` as a library: a set of capture files converted into
//! transcript files, one JSONL file per input.
//!
//! The converters are [`crate::import`]'s and the reading is
//! [`crate::load`]'s; this module holds the steps between them that the
//! command line runs in turn:
//!
//! 1. [`read_as`]: the format each file is read as, detected or forced by
//!    `--from` (a forced format that contradicts the detected one is said);
//! 2. [`gather_beside`]: the companions found beside the files that need
//!    them, each folder searched once for Batch inputs and BFCL data;
//! 3. [`transcript_lines`]: one file's transcripts as JSONL lines, each
//!    object whole (its `tools` in place), with the unreadable documents as
//!    [`LoadError`]s;
//! 4. [`output_name`]: a name in the output directory no other input of
//!    the run took.
//!
//! Memory holds one input's text at a time: files are read again when
//! their turn comes, and a companion keeps only the bodies it supplies.

use crate::file::LoadError;
use crate::import::{Companions, Kind};
use crate::load;
use std::collections::HashSet;
use std::path::Path;

/// The format a file is read as, and the detected format `--from`
/// overrode (to be said on stderr), if any.
///
/// Without `allowed` (no `--from`), the detected format; with it, the
/// detected format when `--from` allows it, else the first kind `--from`
/// names.
pub fn read_as(detected: Option<Kind>, allowed: Option<&[Kind]>) -> (Option<Kind>, Option<Kind>) {
    match allowed {
        None => (detected, None),
        Some(kinds) => match detected {
            Some(k) if kinds.contains(&k) => (Some(k), None),
            other => (kinds.first().copied(), other),
        },
    }
}

/// Adds to `companions` what lies beside each of `inputs` (path, format)
/// that needs a companion; companions already known (given on the command
/// line, or found first) win. Batch inputs and BFCL data are read once per
/// folder: a folder of N outputs does not read its siblings N times (a
/// stream's request is looked up by its own stem).
pub fn gather_beside<'a>(
    companions: &mut Companions,
    inputs: impl IntoIterator<Item = (&'a Path, Kind)>,
) {
    let mut searched = HashSet::new();
    for (path, k) in inputs {
        if k.companion() {
            continue;
        }
        let folder = |p: &Path| p.parent().map(Path::to_path_buf);
        let real = std::fs::canonicalize(path).ok();
        let place = (folder(path), real.as_deref().and_then(folder), k);
        if matches!(k, Kind::BatchOutput | Kind::Bfcl) && !searched.insert(place) {
            continue;
        }
        merge(companions, Companions::beside(path, k));
    }
}

/// Adds what `more` holds and `into` does not. An id `more` found
/// ambiguous (two files beside an output naming it differently) stays so,
/// unless `into` knew it already: a companion given wins.
fn merge(into: &mut Companions, more: Companions) {
    for id in more.batch_ambiguous {
        if !into.batch.contains_key(&id) {
            into.batch_ambiguous.insert(id);
        }
    }
    for id in more.bfcl_ambiguous {
        if !into.bfcl_questions.contains_key(&id) && !into.bfcl_answers.contains_key(&id) {
            into.bfcl_ambiguous.insert(id);
        }
    }
    for (id, v) in more.batch {
        into.batch.entry(id).or_insert(v);
    }
    for (id, v) in more.bfcl_questions {
        into.bfcl_questions.entry(id).or_insert(v);
    }
    for (id, v) in more.bfcl_answers {
        into.bfcl_answers.entry(id).or_insert(v);
    }
    for (id, v) in more.requests {
        into.requests.entry(id).or_insert(v);
    }
    for e in more.unread {
        if !into.unread.contains(&e) {
            into.unread.push(e);
        }
    }
}

/// One input file's transcripts, converted.
#[derive(Debug, Default)]
pub struct Lines {
    /// One JSON object per transcript, in file order (no line breaks).
    pub lines: Vec<String>,
    /// How many of them are post-parse: the provider parsed the raw text
    /// away, so only the `native` mode judges them.
    pub native_only: usize,
    /// The documents that could not be read, in file order.
    pub errors: Vec<LoadError>,
    /// Ids more than one of the transcripts carry (a Batch `custom_id`, a
    /// chat choice's `index` or an OTel `spanId` the capture repeats), each
    /// once, with how many transcripts carry it: the transcripts are all
    /// kept (none is the capture's mistake more than another), but their
    /// ids no longer tell them apart, so the caller says so.
    pub repeated_ids: Vec<(String, usize)>,
}

/// The transcripts of the file `path` (text `text`, read as `kind`) as
/// JSONL lines, each object whole ([`load::load_kind_whole`]).
pub fn transcript_lines(
    path: &Path,
    text: &str,
    kind: Kind,
    companions: &Companions,
) -> serde_json::Result<Lines> {
    let mut out = Lines::default();
    // How many transcripts carry each id, and the ids in first-seen order.
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    let mut order = Vec::new();
    for loaded in load::load_kind_whole(path, text, Some(kind), companions) {
        match loaded {
            Ok(t) => {
                if !t.has_raw_text() {
                    out.native_only += 1;
                }
                out.lines.push(serde_json::to_string(&t.raw)?);
                let n = counts.entry(t.id.clone()).or_default();
                *n += 1;
                if *n == 1 {
                    order.push(t.id);
                }
            }
            Err(e) => out.errors.push(e),
        }
    }
    out.repeated_ids = order
        .into_iter()
        .filter_map(|id| {
            let n = counts.get(&id).copied().unwrap_or(0);
            (n > 1).then_some((id, n))
        })
        .collect();
    Ok(out)
}

/// `STEM.jsonl` for the input `path` (`capture.jsonl` without a stem), or
/// `STEM-2.jsonl`, `STEM-3.jsonl` … when an earlier input of the run took
/// the name; the name returned is added to `used`.
pub fn output_name(path: &Path, used: &mut HashSet<String>) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    let mut name = format!("{stem}.jsonl");
    let mut n = 2;
    while !used.insert(name.clone()) {
        name = format!("{stem}-{n}.jsonl");
        n += 1;
    }
    name
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn from_overrides_a_contradicting_detection_and_says_so() {
        let chat: &[Kind] = &[Kind::OpenaiChat, Kind::OpenaiStream];
        assert_eq!(read_as(Some(Kind::Bfcl), None), (Some(Kind::Bfcl), None));
        assert_eq!(read_as(None, None), (None, None));
        assert_eq!(
            read_as(Some(Kind::OpenaiStream), Some(chat)),
            (Some(Kind::OpenaiStream), None),
            "a detected kind --from allows is kept"
        );
        assert_eq!(
            read_as(Some(Kind::Anthropic), Some(chat)),
            (Some(Kind::OpenaiChat), Some(Kind::Anthropic))
        );
        assert_eq!(read_as(None, Some(chat)), (Some(Kind::OpenaiChat), None));
    }

    #[test]
    fn output_names_never_collide() {
        let mut used = HashSet::new();
        assert_eq!(output_name(Path::new("a/run.json"), &mut used), "run.jsonl");
        assert_eq!(
            output_name(Path::new("b/run.sse"), &mut used),
            "run-2.jsonl"
        );
        assert_eq!(
            output_name(Path::new("c/run.json"), &mut used),
            "run-3.jsonl"
        );
        assert_eq!(output_name(Path::new(""), &mut used), "capture.jsonl");
    }

    #[test]
    fn lines_keep_tools_and_name_the_bad_line() {
        let text = concat!(
            r#"{"id": "a", "output": "hi", "tools": [{"name": "f"}]}"#,
            "\n",
            "not json\n",
        );
        let got = transcript_lines(
            Path::new("t.jsonl"),
            text,
            Kind::Toolgate,
            &Companions::default(),
        )
        .unwrap();
        assert_eq!(got.lines.len(), 1);
        let v: serde_json::Value = serde_json::from_str(&got.lines[0]).unwrap();
        assert_eq!(v["tools"][0]["name"], "f");
        assert_eq!(got.native_only, 0);
        assert_eq!(got.errors.len(), 1);
        assert_eq!(got.errors[0].line, Some(2));
    }

    #[test]
    fn known_companions_win_over_those_found_beside() {
        let mut known = Companions::default();
        known.batch.insert("x".into(), serde_json::json!(1));
        let mut more = Companions::default();
        more.batch.insert("x".into(), serde_json::json!(2));
        more.batch.insert("y".into(), serde_json::json!(3));
        merge(&mut known, more);
        assert_eq!(known.batch["x"], 1);
        assert_eq!(known.batch["y"], 3);
    }
}
