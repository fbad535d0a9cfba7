//! Which tools a request lets the model call: its `tool_choice` (and the
//! legacy `function_call` beside `functions`).
//!
//! The allowlist is the request's tools, narrowed by what the request
//! forces or allows: a named tool only that one, `allowed_tools` (OpenAI,
//! 2025) only those it lists. `"none"` is said apart ([`Allowed::NoCall`]):
//! the proxy keeps the whole list for it, as vLLM without a tool parser
//! needs `"none"` to accept tools and the proxy then reads the calls from
//! the text itself (DECISIONS.md, the proxy's allowlist). An upstream that
//! ignores the choice (many OpenAI-compatible servers ignore
//! `allowed_tools`, and a model can call another tool when the server does
//! not constrain its decoding) must not get a call of a tool the client
//! left out executed: judged against the narrowed list, it is
//! `wrong_tool`. A choice that cannot be read is an error: which tools are
//! allowed is then unknown, and the whole list is not the answer.
//!
//! The proxy reads it from every chat request; the importers read the
//! `allowed_tools` form ([`crate::import`]), `"none"` and a named tool
//! being there the transcript's expectation.

use serde_json::Value;

/// What a request lets the model call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// Any of its tools (`auto`, `required`, no choice).
    Any,
    /// Only the tools named.
    Only(Vec<String>),
    /// No call asked for (`"none"`).
    NoCall,
}

impl Allowed {
    /// Both at once: what `self` and `other` both allow.
    fn and(self, other: Allowed) -> Allowed {
        match (self, other) {
            (Allowed::Any, o) | (o, Allowed::Any) => o,
            (Allowed::NoCall, o) | (o, Allowed::NoCall) => o,
            (Allowed::Only(a), Allowed::Only(b)) => {
                Allowed::Only(a.into_iter().filter(|n| b.contains(n)).collect())
            }
        }
    }

    /// Whether the tool named `name` may be called (under
    /// [`Allowed::NoCall`], none may).
    pub fn allows(&self, name: &str) -> bool {
        match self {
            Allowed::Any => true,
            Allowed::Only(names) => names.iter().any(|n| n == name),
            Allowed::NoCall => false,
        }
    }
}

/// What `request` (a chat request object) lets the model call: its
/// `tool_choice` and its legacy `function_call`, both when both are given.
pub fn allowed(request: &Value) -> Result<Allowed, String> {
    let choice = of_tool_choice(request.get("tool_choice"))?;
    let legacy = of_function_call(request.get("function_call"))?;
    Ok(choice.and(legacy))
}

/// Whether a request's `parallel_tool_calls` (`value`, the member as
/// written; `None` when absent) lets at most one call execute: `false` does;
/// `true`, `null` and no member set no limit. Anything else cannot be read
/// (an error naming the member and the value): pydantic reads `"false"` or
/// `0` as `false` (vLLM then keeps one call), so reading them as no limit
/// would serve calls the client will not run. The one rule the proxy reads
/// it by (its request reader refuses such a request before, 400 in
/// enforce), the importers (a load error) and the loader (the transcript's
/// own `parallel_tool_calls` member, else its request's).
pub fn one_call_at_most(value: Option<&Value>) -> Result<bool, String> {
    one_call_by(value, "parallel_tool_calls", false)
}

/// Whether an Anthropic Messages request's
/// `tool_choice.disable_parallel_tool_use` (`value`, the member as written)
/// lets at most one call execute: the same limit as `parallel_tool_calls:
/// false`, spelled the other way round (`true` does; `false`, `null` and
/// no member set no limit), read by the same rule ([`one_call_at_most`]):
/// anything else is an error naming the member.
pub fn parallel_disabled(value: Option<&Value>) -> Result<bool, String> {
    one_call_by(value, "tool_choice.disable_parallel_tool_use", true)
}

/// The one reading of a request's one-call limit: the boolean `member`
/// equal to `limiting` sets it; the other boolean, `null` and no member do
/// not; any other value cannot be read.
fn one_call_by(value: Option<&Value>, member: &str, limiting: bool) -> Result<bool, String> {
    match value {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b == limiting),
        Some(other) => Err(format!(
            "`{member}` must be true or false, not {}: how many calls may execute cannot be read",
            shown(other)
        )),
    }
}

/// The tool names a `tool_choice` alone narrows the allowlist to (a named
/// tool, `allowed_tools`, a hosted tool: none), or `None` when it does not
/// narrow it (`auto`, `required`, `none`, no choice): the importers' reading
/// of a capture's request, the proxy's rule ([`allowed`]).
pub(crate) fn narrowing(choice: Option<&Value>) -> Result<Option<Vec<String>>, String> {
    Ok(match of_tool_choice(choice)? {
        Allowed::Only(names) => Some(names),
        Allowed::Any | Allowed::NoCall => None,
    })
}

/// The tool names a `tool_choice` of type `allowed_tools` lets the model
/// call, when it is one (OpenAI, 2025): Chat Completions nests them,
/// `{"type": "allowed_tools", "allowed_tools": {"mode", "tools": [{"type":
/// "function", "function": {"name"}}]}}`, the Responses API does not,
/// `{"type": "allowed_tools", "mode", "tools": [{"type": "function",
/// "name"}]}`. It narrows the allowlist to those of `tools` it names: a
/// call of another of the request's tools was not allowed, and judged
/// against every tool it would pass and run (fail open). Entries of
/// built-in tools (`mcp`, `image_generation`: no function name) name no
/// function tool. A list that cannot be read — no `tools` array, a
/// function entry without a name — is an error: which tools were allowed
/// is unknown, and the whole list is not the answer.
fn allowed_tool_names(choice: Option<&Value>) -> Result<Option<Vec<String>>, String> {
    let Some(choice) = choice.filter(|c| str_of(c, "type") == Some("allowed_tools")) else {
        return Ok(None);
    };
    let unreadable = |why: &str| {
        format!(
            "the request's `tool_choice` is `allowed_tools` {why}: which tools the model was \
             allowed to call cannot be read"
        )
    };
    let body = choice
        .get("allowed_tools")
        .filter(|a| a.is_object())
        .unwrap_or(choice);
    let entries = body
        .get("tools")
        .and_then(Value::as_array)
        .ok_or_else(|| unreadable("without a `tools` list"))?;
    let mut names = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let kind = str_of(entry, "type");
        let name = entry
            .get("function")
            .and_then(|f| str_of(f, "name"))
            .or_else(|| str_of(entry, "name"));
        match (kind, name) {
            (_, Some(name)) => names.push(name.to_string()),
            (Some("function") | None, None) => {
                return Err(unreadable(&format!("whose `tools[{i}]` names no function")));
            }
            // A built-in tool (`mcp`, `image_generation`, …).
            (Some(_), None) => {}
        }
    }
    Ok(Some(names))
}

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn shown(v: &Value) -> String {
    let text = v.to_string();
    let cut: String = text.chars().take(60).collect();
    let cut = crate::sanitize::one_line(&cut).into_owned();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// `tool_choice` as OpenAI's Chat Completions and Responses APIs, vLLM,
/// Mistral (`"any"`) and Anthropic-shaped gateways (`{"type": "tool",
/// "name"}`, `{"type": "any"}`) write it.
fn of_tool_choice(choice: Option<&Value>) -> Result<Allowed, String> {
    let unreadable = |v: &Value, why: &str| {
        format!(
            "the request's `tool_choice` {} {why}: which tools the model may call cannot be read",
            shown(v)
        )
    };
    let Some(v) = choice.filter(|v| !v.is_null()) else {
        return Ok(Allowed::Any);
    };
    match v {
        // Cohere writes them in capitals (`REQUIRED`, `NONE`).
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "auto" | "required" | "any" => Ok(Allowed::Any),
            "none" => Ok(Allowed::NoCall),
            _ => Err(unreadable(v, "is none of `none`, `auto`, `required`")),
        },
        Value::Object(_) => match str_of(v, "type") {
            Some("auto" | "required" | "any") => Ok(Allowed::Any),
            Some("none") => Ok(Allowed::NoCall),
            Some("allowed_tools") => match allowed_tool_names(Some(v)) {
                Ok(Some(names)) => Ok(Allowed::Only(names)),
                Ok(None) => Ok(Allowed::Any),
                Err(why) => Err(why),
            },
            // Chat nests the name (`function.name`, `custom.name`); the
            // Responses API and Anthropic's shape do not.
            Some(kind @ ("function" | "custom" | "tool")) => v
                .get(kind)
                .and_then(|f| str_of(f, "name"))
                .or_else(|| str_of(v, "name"))
                .map(|n| Allowed::Only(vec![n.to_string()]))
                .ok_or_else(|| unreadable(v, "names no tool")),
            // A hosted tool forced (the Responses API's `file_search`,
            // `web_search_preview`, `mcp`, `code_interpreter`, …): no
            // function tool may be called.
            Some(_) => Ok(Allowed::Only(Vec::new())),
            // No type: a name alone still names the one tool.
            None => v
                .get("function")
                .and_then(|f| str_of(f, "name"))
                .or_else(|| str_of(v, "name"))
                .map(|n| Allowed::Only(vec![n.to_string()]))
                .ok_or_else(|| unreadable(v, "names no type and no tool")),
        },
        _ => Err(unreadable(v, "is neither a string nor an object")),
    }
}

/// The legacy `function_call` of a request (`"none"`, `"auto"`,
/// `{"name"}`).
fn of_function_call(call: Option<&Value>) -> Result<Allowed, String> {
    let Some(v) = call.filter(|v| !v.is_null()) else {
        return Ok(Allowed::Any);
    };
    match v {
        Value::String(s) if s == "auto" => Ok(Allowed::Any),
        Value::String(s) if s == "none" => Ok(Allowed::NoCall),
        Value::Object(_) => str_of(v, "name")
            .map(|n| Allowed::Only(vec![n.to_string()]))
            .ok_or_else(|| {
                format!(
                    "the request's `function_call` {} names no function: which functions the \
                     model may call cannot be read",
                    shown(v)
                )
            }),
        _ => Err(format!(
            "the request's `function_call` {} is none of `none`, `auto`, `{{\"name\": …}}`: \
             which functions the model may call cannot be read",
            shown(v)
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn only(names: &[&str]) -> Allowed {
        Allowed::Only(names.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn every_shape_of_tool_choice_says_which_tools_may_be_called() {
        let cases = [
            (json!({}), Allowed::Any),
            (json!({"tool_choice": null}), Allowed::Any),
            (json!({"tool_choice": "auto"}), Allowed::Any),
            (json!({"tool_choice": "required"}), Allowed::Any),
            (json!({"tool_choice": "any"}), Allowed::Any),
            (json!({"tool_choice": {"type": "any"}}), Allowed::Any),
            (json!({"tool_choice": "none"}), Allowed::NoCall),
            (json!({"tool_choice": {"type": "none"}}), Allowed::NoCall),
            (
                json!({"tool_choice": {"type": "function", "function": {"name": "a"}}}),
                only(&["a"]),
            ),
            (
                json!({"tool_choice": {"type": "function", "name": "a"}}),
                only(&["a"]),
            ),
            (
                json!({"tool_choice": {"type": "tool", "name": "a"}}),
                only(&["a"]),
            ),
            (
                json!({"tool_choice": {"type": "custom", "custom": {"name": "g"}}}),
                only(&["g"]),
            ),
            (
                json!({"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto",
                    "tools": [{"type": "function", "function": {"name": "a"}},
                              {"type": "function", "function": {"name": "b"}}]}}}),
                only(&["a", "b"]),
            ),
            (
                json!({"tool_choice": {"type": "allowed_tools", "mode": "required",
                    "tools": [{"type": "function", "name": "b"}]}}),
                only(&["b"]),
            ),
            (json!({"tool_choice": "REQUIRED"}), Allowed::Any),
            (json!({"tool_choice": "NONE"}), Allowed::NoCall),
            (json!({"tool_choice": {"type": "file_search"}}), only(&[])),
            (
                json!({"tool_choice": {"type": "mcp", "server_label": "s"}}),
                only(&[]),
            ),
            (
                json!({"tool_choice": {"function": {"name": "a"}}}),
                only(&["a"]),
            ),
            (json!({"function_call": "auto"}), Allowed::Any),
            (json!({"function_call": "none"}), Allowed::NoCall),
            // `none` beside a named tool: the named tool.
            (
                json!({"tool_choice": "none", "function_call": {"name": "a"}}),
                only(&["a"]),
            ),
            (json!({"function_call": {"name": "a"}}), only(&["a"])),
            // Both: what both allow.
            (
                json!({"tool_choice": {"type": "function", "function": {"name": "a"}},
                       "function_call": {"name": "b"}}),
                only(&[]),
            ),
        ];
        for (request, expected) in cases {
            assert_eq!(allowed(&request), Ok(expected), "{request}");
        }
    }

    #[test]
    fn parallel_tool_calls_false_alone_limits_to_one_call() {
        assert_eq!(one_call_at_most(None), Ok(false));
        assert_eq!(one_call_at_most(Some(&json!(null))), Ok(false));
        assert_eq!(one_call_at_most(Some(&json!(true))), Ok(false));
        assert_eq!(one_call_at_most(Some(&json!(false))), Ok(true));
        for (value, shown) in [
            (json!("false"), "\"false\""),
            (json!(0), "0"),
            (json!([false]), "[false]"),
        ] {
            let err = one_call_at_most(Some(&value)).unwrap_err();
            assert!(
                err.starts_with(&format!(
                    "`parallel_tool_calls` must be true or false, not {shown}"
                )),
                "{err}"
            );
        }
    }

    /// Anthropic's `disable_parallel_tool_use` is the same limit the other
    /// way round, read by the same rule (probe s48).
    #[test]
    fn disable_parallel_tool_use_true_alone_limits_to_one_call() {
        assert_eq!(parallel_disabled(None), Ok(false));
        assert_eq!(parallel_disabled(Some(&json!(null))), Ok(false));
        assert_eq!(parallel_disabled(Some(&json!(false))), Ok(false));
        assert_eq!(parallel_disabled(Some(&json!(true))), Ok(true));
        let err = parallel_disabled(Some(&json!("true"))).unwrap_err();
        assert_eq!(
            err,
            "`tool_choice.disable_parallel_tool_use` must be true or false, not \"true\": how \
             many calls may execute cannot be read"
        );
    }

    #[test]
    fn a_choice_that_cannot_be_read_is_an_error_naming_it() {
        for (request, says) in [
            (
                json!({"tool_choice": "sometimes"}),
                "`tool_choice` \"sometimes\" is none of",
            ),
            (json!({"tool_choice": 1}), "neither a string nor an object"),
            (
                json!({"tool_choice": {"type": "function"}}),
                "names no tool",
            ),
            (
                json!({"tool_choice": {"mode": "auto"}}),
                "names no type and no tool",
            ),
            (
                json!({"tool_choice": {"type": "allowed_tools", "allowed_tools": {}}}),
                "without a `tools` list",
            ),
            (
                json!({"function_call": {"arguments": "{}"}}),
                "names no function",
            ),
            (
                json!({"function_call": "always"}),
                "`function_call` \"always\" is none of",
            ),
            (json!({"tool_choice": "\u{1b}[2J"}), "\\u001b[2J"),
        ] {
            let err = allowed(&request).unwrap_err();
            assert!(err.contains(says), "{request}: {err}");
            assert!(!err.contains('\u{1b}'), "{err}");
        }
    }
}
