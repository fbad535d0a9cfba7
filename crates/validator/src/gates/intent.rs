//! The `intent` gate: a fallback's candidates need the model to have
//! declared tool intent — a line of the output or of the reasoning field
//! that is exactly one of the profile's intent tokens (surrounding
//! whitespace ignored). Primary candidates need none.

use super::verdict::{GateCheck, Role, fail, not_applicable, pass};
use crate::profile::Profile;
use toolgate_core::Gate;
use toolgate_formats::Input;

/// The `intent` gate for candidates of `mode` met in `role`.
pub(super) fn check(profile: &Profile, role: Role, mode: &str, input: &Input<'_>) -> GateCheck {
    match role {
        Role::Primary => not_applicable(Gate::Intent),
        Role::Fallback => match intent_line(profile, input) {
            Some(token) => pass(
                Gate::Intent,
                format!("the output declares tool intent (`{token}`)"),
            ),
            None => fail(
                Gate::Intent,
                format!(
                    "fallback `{mode}` candidates need explicit tool intent: a line that is exactly one of {}",
                    quoted_list(&profile.intent_tokens)
                ),
            ),
        },
    }
}

/// The first intent token that stands alone on a line of the output or of the
/// reasoning field.
fn intent_line<'p>(profile: &'p Profile, input: &Input<'_>) -> Option<&'p str> {
    let texts = std::iter::once(input.output).chain(input.reasoning_field);
    for text in texts {
        // The first line (by position) that is, trimmed, a trimmed token;
        // on one line, the first such token of the profile. Each token is
        // searched for instead of splitting and trimming every line.
        let mut best: Option<(usize, &str)> = None;
        for token in &profile.intent_tokens {
            if let Some(at) = first_line_of(text, token.trim())
                && best.is_none_or(|(b, _)| at < b)
            {
                best = Some((at, token.as_str()));
            }
        }
        if let Some((_, token)) = best {
            return Some(token);
        }
    }
    None
}

/// The offset of the first occurrence of `word` (trimmed) in `text` that is
/// a whole line but for surrounding whitespace — as `str::lines` and
/// `str::trim` would find it. Linear: `word` starts and ends with a
/// non-whitespace character and holds no line break, so the non-overlapping
/// search misses no such occurrence (an overlapping earlier one would start
/// in the line's leading whitespace or on an earlier line), and the
/// whitespace checked around distinct occurrences never overlaps.
fn first_line_of(text: &str, word: &str) -> Option<usize> {
    if word.is_empty() || word.contains('\n') {
        return None;
    }
    let mut from = 0;
    while let Some(at) = toolgate_formats::find_from(text, word, from) {
        let before = text[..at].chars().rev().take_while(|&c| c != '\n');
        let after = text[at + word.len()..].chars().take_while(|&c| c != '\n');
        if before.chain(after).all(char::is_whitespace) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

fn quoted_list(items: &[String]) -> String {
    if items.is_empty() {
        return "(no intent tokens are configured)".into();
    }
    let quoted: Vec<String> = items.iter().map(|t| format!("`{t}`")).collect();
    quoted.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intent_lines_are_found_as_splitting_and_trimming_every_line_finds_them() {
        // The rule before `first_line_of`: every line split and trimmed.
        fn by_lines<'p>(tokens: &'p [String], text: &str) -> Option<&'p str> {
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .find_map(|l| tokens.iter().find(|t| t.trim() == l))
                .map(String::as_str)
        }
        let tokens: Vec<String> = ["need_tool: yes", " CALL_TOOL ", "CALL", "", "a\nb", "é x"]
            .iter()
            .map(|t| t.to_string())
            .collect();
        let profile = Profile {
            intent_tokens: tokens.clone(),
            ..Profile::default()
        };
        let pieces = [
            "need_tool: yes",
            "CALL_TOOL",
            "CALL",
            "\n",
            "\r\n",
            " ",
            "\t",
            "\u{3000}",
            "x",
            "é x",
            "a",
            "b",
            "_TOOL",
            "need_tool:",
            " yes",
        ];
        let mut rng = toolgate_testkit::generate::Rng::new(0x853c_49e6_748f_ea9b);
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..8 {
                text.push_str(pieces[rng.below(pieces.len())]);
            }
            let input = Input::new(&text);
            assert_eq!(
                intent_line(&profile, &input),
                by_lines(&tokens, &text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn primary_needs_no_intent_and_a_fallback_names_the_tokens() {
        let profile = Profile::default();
        let bare = Input::new("{}");
        assert_eq!(
            check(&profile, Role::Primary, "tag", &bare),
            not_applicable(Gate::Intent)
        );
        let missing = check(&profile, Role::Fallback, "json", &bare);
        assert!(!missing.passed);
        assert_eq!(
            missing.reason,
            "fallback `json` candidates need explicit tool intent: a line that is exactly one of `need_tool: yes`, `CALL_TOOL`"
        );
        let declared = check(
            &profile,
            Role::Fallback,
            "json",
            &Input::new("  need_tool: yes \n{}"),
        );
        assert_eq!(
            declared,
            pass(
                Gate::Intent,
                "the output declares tool intent (`need_tool: yes`)"
            )
        );
        let none = Profile {
            intent_tokens: Vec::new(),
            ..Profile::default()
        };
        assert!(
            check(&none, Role::Fallback, "json", &bare)
                .reason
                .ends_with("(no intent tokens are configured)")
        );
    }
}
