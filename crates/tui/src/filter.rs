//! The list filter (`f`): `label:L mode:M model:X changed new` and words.

use crate::row::Row;
use toolgate_core::Label;

/// A parsed filter. Empty means "everything".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// The text it was parsed from (shown in the list title).
    pub text: String,
    /// Keep rows whose label is one of these (`label:fail` = every failure).
    pub labels: Vec<Label>,
    /// Labels, decisions and counts refer to this mode instead of the profile.
    pub mode: Option<String>,
    /// Keep rows whose model contains this (case-insensitive).
    pub model: Option<String>,
    /// Keep rows whose current labels differ from the stored ones.
    pub changed: bool,
    /// Keep rows that have no stored labels yet.
    pub unlabeled: bool,
    /// Keep rows whose id, task, model or path contains every word.
    pub words: Vec<String>,
    /// Keep no row: the text does not parse (`label:bogus`), and a filter
    /// that reads wrong must not show what a part of it matches (the
    /// word `label`).
    pub nothing: bool,
}

impl Filter {
    /// Parses `text`; an unknown label name or key is an error message.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let mut f = Filter {
            text: text.trim().to_string(),
            ..Filter::default()
        };
        for token in text.split_whitespace() {
            match token.split_once(':') {
                Some(("label", "fail")) => {
                    f.labels
                        .extend(Label::ALL.into_iter().filter(|l| !l.is_pass()));
                }
                Some(("label", name)) => {
                    let label = name.parse::<Label>().map_err(|e| e.to_string())?;
                    f.labels.push(label);
                }
                Some(("mode", name)) if !name.is_empty() => f.mode = Some(name.to_string()),
                Some(("model", name)) if !name.is_empty() => {
                    f.model = Some(name.to_lowercase());
                }
                Some((key, _)) if !key.is_empty() => {
                    return Err(format!(
                        "unknown filter `{key}:` (use label:, mode:, model:, changed, new)"
                    ));
                }
                _ if token == "changed" => f.changed = true,
                _ if token == "new" => f.unlabeled = true,
                _ => f.words.push(token.to_lowercase()),
            }
        }
        Ok(f)
    }

    /// The filter of a text that does not parse: it keeps no row.
    pub fn matching_nothing(text: &str) -> Filter {
        Filter {
            text: text.trim().to_string(),
            nothing: true,
            ..Filter::default()
        }
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        !self.nothing
            && self.labels.is_empty()
            && self.mode.is_none()
            && self.model.is_none()
            && !self.changed
            && !self.unlabeled
            && self.words.is_empty()
    }

    /// Whether the list shows `row` under this filter.
    pub fn keeps(&self, row: &Row) -> bool {
        let f = self;
        if f.nothing {
            return false;
        }
        let t = &row.entry.transcript;
        if !f.labels.is_empty() && !row.label.is_some_and(|l| f.labels.contains(&l)) {
            return false;
        }
        if let Some(model) = &f.model
            && !t
                .model
                .as_deref()
                .is_some_and(|m| m.to_lowercase().contains(model.as_str()))
        {
            return false;
        }
        if f.changed && !row.changed {
            return false;
        }
        if f.unlabeled && !row.unlabeled {
            return false;
        }
        f.words.iter().all(|w| row.matches(w))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_of_token() {
        let f =
            Filter::parse("label:pass label:no_call mode:hermes model:Qwen changed new Weather")
                .unwrap();
        assert_eq!(f.labels, vec![Label::Pass, Label::NoCall]);
        assert_eq!(f.mode.as_deref(), Some("hermes"));
        assert_eq!(f.model.as_deref(), Some("qwen"));
        assert!(f.changed && f.unlabeled);
        assert_eq!(f.words, vec!["weather"]);
        assert_eq!(Filter::parse("label:fail").unwrap().labels.len(), 11);
        assert_eq!(
            Filter::parse("label:nope").unwrap_err(),
            "unknown label `nope`"
        );
        assert!(
            Filter::parse("color:red")
                .unwrap_err()
                .starts_with("unknown filter `color:`")
        );
        assert!(Filter::parse("  ").unwrap().is_empty());
    }
}
