//! The `single` gate: a fallback may carry exactly one call. When it
//! carries more, the rejection asks the model to re-emit exactly one call
//! in the primary format, with an example of that format calling a tool of
//! the allowlist ([`reemit_example`], [`reemit_message`]). Primary
//! candidates may be several — unless the request set
//! `parallel_tool_calls: false`: then an output that would execute more
//! than one call is rejected whole at this gate ([`at_most_one_call`]).

use super::verdict::{GateCheck, Role, fail, not_applicable, pass};
use crate::profile::Profile;
use crate::toolset::Toolset;
use toolgate_core::{Candidate, Decision, Gate, Telemetry};

/// Why an output that would execute `n` (more than one) calls is rejected
/// when the request set `parallel_tool_calls: false`: a client that asked
/// for one call may run only the first. One wording for the proxy and the
/// LiteLLM guardrail ([`crate::output::Judged::one_call_at_most`]) and for
/// replay ([`at_most_one_call`]), so a recorded exchange is decided with
/// the proxy's gate and reason.
pub fn one_call_refusal(n: usize) -> String {
    format!("{n} calls, where the request set parallel_tool_calls: false (at most one)")
}

/// The request's `parallel_tool_calls: false` applied to a gated set of
/// candidates (a replayed transcript's profile result, or one mode's):
/// a decision to execute more than one call becomes `reject` at the
/// `single` gate with [`one_call_refusal`]'s reason (the gate shown failed,
/// the telemetry saying so); any other decision stands, and so does the
/// label (SPEC §5: gates never change it).
pub(crate) fn at_most_one_call(
    gates: &mut [GateCheck],
    decision: &mut Decision,
    telemetry: &mut Telemetry,
) {
    let n = decision.calls().len();
    if n < 2 {
        return;
    }
    let reason = one_call_refusal(n);
    if let Some(check) = gates.iter_mut().find(|g| g.gate == Gate::Single) {
        *check = fail(Gate::Single, reason.clone());
    }
    *decision = Decision::Reject {
        gate: Gate::Single,
        reason,
        reemit: None,
    };
    telemetry.gate = Some(Gate::Single);
    telemetry.decision = decision.kind().into();
}
use toolgate_formats::{Extractor, Input, Strictness, extract};

/// The `single` gate for the live candidates of `mode` met in `role`, and
/// the re-emit message when it fails. `primary` is the primary mode's
/// extractor, whose example the message shows.
pub(super) fn check(
    profile: &Profile,
    role: Role,
    mode: &str,
    live: &[(usize, &Candidate)],
    toolset: &Toolset,
    primary: Option<&dyn Extractor>,
) -> (GateCheck, Option<String>) {
    match role {
        Role::Primary => (not_applicable(Gate::Single), None),
        Role::Fallback if live.len() == 1 => (pass(Gate::Single, "exactly one candidate"), None),
        Role::Fallback => {
            let rejected: Vec<&Candidate> = live.iter().map(|(_, c)| *c).collect();
            let (example, tool) = match primary {
                Some(p) => reemit_example(p, toolset, &rejected),
                None => (None, toolset.names().first().cloned()),
            };
            let reemit = reemit_message(
                live.len(),
                mode,
                &profile.primary,
                example.as_deref(),
                tool.as_deref(),
            );
            let check = fail(
                Gate::Single,
                format!(
                    "{} fallback `{mode}` candidates; a fallback may carry exactly one call",
                    live.len()
                ),
            );
            (check, Some(reemit))
        }
    }
}

/// The re-emit example: the primary mode's own example, calling a tool of
/// the allowlist — the first the rejected candidates name that is
/// allowlisted, else the allowlist's first. When the example names another
/// tool, its name (and its argument names, mapped in order onto the tool's
/// declared properties, required first) are rewritten where they stand as
/// whole words, and the result is kept only if the primary mode reads it
/// back as a call of that tool (else the name-only rewrite, else `None`).
/// Returns the tool too (`None` when nothing is allowlisted).
pub fn reemit_example(
    primary: &dyn Extractor,
    toolset: &Toolset,
    candidates: &[&Candidate],
) -> (Option<String>, Option<String>) {
    let tool = candidates
        .iter()
        .filter_map(|c| c.name.as_deref())
        .find(|n| toolset.is_allowed(n))
        .or_else(|| toolset.names().first().map(String::as_str));
    let example = primary.example();
    let Some(tool) = tool else {
        return (Some(example.to_string()), None);
    };
    let read = |text: &str| -> Option<Candidate> {
        extract(primary, &Input::new(text), Strictness::Strict)
            .into_iter()
            .find(|c| c.is_live())
    };
    let Some(shown) = read(example) else {
        // The example cannot be read back (a test double): keep it only if
        // it already names the tool.
        let keep = contains_word(example, tool);
        return (keep.then(|| example.to_string()), Some(tool.to_string()));
    };
    if shown.name.as_deref() == Some(tool) {
        return (Some(example.to_string()), Some(tool.to_string()));
    }
    let Some(old) = shown.name.as_deref() else {
        return (None, Some(tool.to_string()));
    };
    let renamed = replace_word(example, old, tool);
    let mut full = renamed.clone();
    // The values the rejected call gave the tool, where the example's
    // value can be swapped for one: the example then reads as the model's
    // own call (`{"city": "Antwerp"}`), not as the example's value under a
    // renamed key (`{"city": "rust memchr"}`).
    let mut valued = None;
    if let (Ok(args), Some(schema)) = (&shown.arguments, toolset.schema(tool)) {
        let own = candidates
            .iter()
            .find(|c| c.name.as_deref() == Some(tool))
            .and_then(|c| c.arguments.as_ref().ok());
        let names = schema.property_names();
        let mut with_values = renamed.clone();
        for ((key, value), new) in args.iter().zip(names) {
            full = replace_word(&full, key, new);
            with_values = replace_word(&with_values, key, new);
            if let (Some(ex), Some(mine)) = (value.as_str(), own.and_then(|o| o.get(new))) {
                let (ex, mine) = (serde_json::Value::from(ex).to_string(), mine.to_string());
                if mine.len() <= 200 {
                    with_values = with_values.replacen(&ex, &mine, 1);
                }
            }
        }
        valued = Some(with_values);
    }
    for text in valued.into_iter().chain([full, renamed]) {
        if let Some(c) = read(&text)
            && c.name.as_deref() == Some(tool)
            && c.failure().is_none()
        {
            return (Some(text), Some(tool.to_string()));
        }
    }
    (None, Some(tool.to_string()))
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with every whole-word occurrence of `word` replaced (a word is a
/// run of ASCII letters, digits and `_`).
fn replace_word(text: &str, word: &str, new: &str) -> String {
    if word.is_empty() {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in text.match_indices(word) {
        let end = at + word.len();
        let before = at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
        let after = bytes.get(end).copied();
        if before.is_some_and(is_word_byte) || after.is_some_and(is_word_byte) || at < last {
            continue;
        }
        out.push_str(&text[last..at]);
        out.push_str(new);
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

fn contains_word(text: &str, word: &str) -> bool {
    replace_word(text, word, "") != text
}

/// The message asking the model to re-emit exactly one call in the primary
/// format; without an example in that format, it names an allowlisted tool.
pub fn reemit_message(
    count: usize,
    mode: &str,
    primary: &str,
    example: Option<&str>,
    tool: Option<&str>,
) -> String {
    let mut msg = format!(
        "Your reply contained {count} tool calls in the `{mode}` format, which cannot be executed. \
         Re-emit exactly one tool call, in the `{primary}` format"
    );
    match (example, tool) {
        (Some(example), _) => {
            msg.push_str(", for example:\n");
            msg.push_str(example);
        }
        (None, Some(tool)) => {
            msg.push_str(&format!(" (for example a call of `{tool}`)."));
        }
        (None, None) => msg.push('.'),
    }
    msg
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;

    #[test]
    fn one_fallback_call_passes_and_two_ask_for_one_in_the_primary_format() {
        let toolset = Toolset::new(&weather_tools());
        let profile = Profile::default();
        let a = ok("json", "get_weather", json!({"city": "Antwerp"}));
        let b = ok("json", "get_weather", json!({"city": "Ghent"}));
        let (primary, reemit) = check(
            &profile,
            Role::Primary,
            "tag",
            &[(0, &a), (1, &b)],
            &toolset,
            None,
        );
        assert_eq!((primary, reemit), (not_applicable(Gate::Single), None));
        let (one, reemit) = check(&profile, Role::Fallback, "json", &[(0, &a)], &toolset, None);
        assert_eq!(
            (one, reemit),
            (pass(Gate::Single, "exactly one candidate"), None)
        );
        let (two, reemit) = check(
            &profile,
            Role::Fallback,
            "json",
            &[(0, &a), (1, &b)],
            &toolset,
            None,
        );
        assert_eq!(
            two,
            fail(
                Gate::Single,
                "2 fallback `json` candidates; a fallback may carry exactly one call"
            )
        );
        assert_eq!(
            reemit.unwrap(),
            "Your reply contained 2 tool calls in the `json` format, which cannot be executed. \
             Re-emit exactly one tool call, in the `tag` format (for example a call of `get_weather`)."
        );
    }

    #[test]
    fn replace_word_replaces_whole_words_only() {
        assert_eq!(
            replace_word("city cityname city_x (city)", "city", "town"),
            "town cityname city_x (town)"
        );
        assert_eq!(replace_word("abc", "", "x"), "abc");
        assert!(contains_word("a get_weather(b)", "get_weather"));
        assert!(!contains_word("a get_weathers", "get_weather"));
    }
}
