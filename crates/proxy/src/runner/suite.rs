//! Task suites: a JSONL file, one task per line.
//!
//! ```json
//! {"task": "weather_one_city", "tags": ["single"],
//!  "messages": [{"role": "user", "content": "Weather in Antwerp?"}],
//!  "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {…}}}],
//!  "expect": {"calls": [{"name": "get_weather", "arguments": {"properties": {"city": {"const": "Antwerp"}}}}]},
//!  "tool_choice": "auto", "request": {"max_tokens": 512}}
//! ```
//!
//! | field | required | meaning |
//! |---|---|---|
//! | `task` | yes | the task's name: unique in the suite, the matrix row |
//! | `messages` | yes | the chat messages sent (at least one `user` message) |
//! | `tools` | yes | tool definitions, OpenAI style or bare `{name, description, parameters}` (sent OpenAI style); may be empty |
//! | `expect` | yes | what a correct answer does (SPEC §2): `{"calls": […]}`, each expected call naming one of `tools` |
//! | `tool_choice` | no | sent as is: `none`, `auto`, `required` or `{"type": "function", "function": {"name": …}}` |
//! | `tags` | no | strings; `toolgate matrix --by tag` groups by them |
//! | `request` | no | extra request fields (`max_tokens`, `parallel_tool_calls`, …); may not set `model`, `messages`, `tools`, `tool_choice`, `stream` or `n` |
//! | `description` | no | free text for people |
//!
//! Blank lines are skipped. Any other key is an error (a typo such as
//! `expects` would otherwise silently run a task with no expectation), and so
//! is every other problem: loading reports each bad line with its number and
//! the reason (the first [`MAX_REPORTED`], then a count), and a suite with
//! any bad line does not run. The file is read as other commands read
//! theirs: a regular file, within a size limit ([`Suite::load_with`]).

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toolgate_formats::json_type_name as type_name;

/// The keys a task line may have.
pub const TASK_KEYS: [&str; 8] = [
    "task",
    "messages",
    "tools",
    "expect",
    "tool_choice",
    "tags",
    "request",
    "description",
];

/// Request fields a task's `request` may not set: the runner owns them.
pub const RESERVED_REQUEST_KEYS: [&str; 6] =
    ["model", "messages", "tools", "tool_choice", "stream", "n"];

/// One task of a suite.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The task's name.
    pub task: String,
    /// The 1-based line it was read from.
    pub line: usize,
    /// The chat messages, as written.
    pub messages: Vec<Value>,
    /// The tool definitions, normalized to the OpenAI shape.
    pub tools: Vec<Value>,
    /// The expectation, as written (`{"calls": […]}`).
    pub expect: Value,
    /// `tool_choice`, as written.
    pub tool_choice: Option<Value>,
    /// Tags.
    pub tags: Vec<String>,
    /// Extra request fields.
    pub request: Map<String, Value>,
}

impl Task {
    /// The content of the last `user` message when it is a string (what a
    /// mock server selects its answer by).
    pub fn last_user_text(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
    }

    /// The tool names, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().filter_map(tool_name).collect()
    }
}

/// A loaded suite.
#[derive(Clone, Debug, PartialEq)]
pub struct Suite {
    /// The file it came from.
    pub path: PathBuf,
    /// The tasks, in file order.
    pub tasks: Vec<Task>,
}

/// One problem with a suite file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteError {
    /// The suite file.
    pub path: PathBuf,
    /// The 1-based line, when the problem is on one.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for SuiteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path.display(), line, self.reason),
            None => write!(f, "{}: {}", self.path.display(), self.reason),
        }
    }
}

impl std::error::Error for SuiteError {}

/// The bad lines of a suite reported one by one; the rest are counted in
/// one more error. A file of garbage is not hundreds of thousands of
/// messages (nor their memory).
pub const MAX_REPORTED: usize = 20;

/// Every problem found in a suite file (at least one): the first
/// [`MAX_REPORTED`] bad lines, then how many more there are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteErrors(pub Vec<SuiteError>);

impl fmt::Display for SuiteErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SuiteErrors {}

impl Suite {
    /// Reads and checks a suite file, at most
    /// [`DEFAULT_MAX_FILE_SIZE`](toolgate_core::load::DEFAULT_MAX_FILE_SIZE) bytes.
    pub fn load(path: &Path) -> Result<Suite, SuiteErrors> {
        Suite::load_with(path, toolgate_core::load::DEFAULT_MAX_FILE_SIZE)
    }

    /// Reads and checks a suite file of at most `max_file_size` bytes. It is
    /// read as every other command reads a file: a regular file only (a FIFO
    /// would block, `/dev/zero` never ends), within the limit
    /// (`--max-file-size`), so a wrong path cannot fill the memory.
    pub fn load_with(path: &Path, max_file_size: u64) -> Result<Suite, SuiteErrors> {
        let opts = toolgate_core::load::LoadOptions {
            max_file_size,
            ..Default::default()
        };
        let bytes = toolgate_core::load::read_transcript_file(path, &opts).map_err(|e| {
            SuiteErrors(vec![SuiteError {
                path: path.to_path_buf(),
                line: None,
                reason: format!("cannot read: {e}"),
            }])
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            SuiteErrors(vec![SuiteError {
                path: path.to_path_buf(),
                line: None,
                reason: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
            }])
        })?;
        Suite::parse(path, &text)
    }

    /// Checks a suite's text; `path` is only for messages.
    pub fn parse(path: &Path, text: &str) -> Result<Suite, SuiteErrors> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut tasks = Vec::new();
        let mut errors = Vec::new();
        let mut unshown = 0usize;
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let mut err = |reason: String| {
                if errors.len() < MAX_REPORTED {
                    errors.push(SuiteError {
                        path: path.to_path_buf(),
                        line: Some(n),
                        reason: capped(reason),
                    })
                } else {
                    unshown += 1;
                }
            };
            match parse_task(line, n) {
                Err(reason) => err(reason),
                Ok(task) => match seen.get(&task.task) {
                    Some(first) => err(format!(
                        "task `{}` is already defined on line {first}",
                        task.task
                    )),
                    None => {
                        seen.insert(task.task.clone(), n);
                        tasks.push(task);
                    }
                },
            }
        }
        if unshown > 0 {
            errors.push(SuiteError {
                path: path.to_path_buf(),
                line: None,
                reason: format!(
                    "{unshown} more bad lines (only the first {MAX_REPORTED} are reported)"
                ),
            });
        }
        if tasks.is_empty() && errors.is_empty() {
            errors.push(SuiteError {
                path: path.to_path_buf(),
                line: None,
                reason: "no tasks".into(),
            });
        }
        if errors.is_empty() {
            Ok(Suite {
                path: path.to_path_buf(),
                tasks,
            })
        } else {
            Err(SuiteErrors(errors))
        }
    }
}

/// The most characters a suite error's reason keeps: it quotes what the
/// line holds (a name, a role, a value), and a line may be hundreds of
/// megabytes, which went to stderr whole.
pub const MAX_REASON: usize = 1000;

/// `reason`, cut to [`MAX_REASON`] characters with `…`.
fn capped(reason: String) -> String {
    if reason.chars().count() <= MAX_REASON {
        return reason;
    }
    let mut out: String = reason.chars().take(MAX_REASON - 1).collect();
    out.push('…');
    out
}

/// The name of a tool definition (OpenAI style or bare).
fn tool_name(tool: &Value) -> Option<&str> {
    tool.get("function")
        .filter(|f| f.is_object())
        .unwrap_or(tool)
        .get("name")
        .and_then(Value::as_str)
}

/// The most JSON values one task line may hold. A sample holds the task's
/// `tools` twice (its own and the request's), its `messages` and `expect`
/// once, beside an answer of up to `exec::MAX_RESPONSE_VALUES` and its
/// calls' copy: with this bound that stays under the
/// [`MAX_DOCUMENT_VALUES`](toolgate_core::nodes::MAX_DOCUMENT_VALUES) a
/// transcript is read with (a task of 5 million values made samples the
/// loader refused, and a rerun never asked again), and no task line is
/// built into gigabytes. A real task holds some thousands.
pub const MAX_TASK_VALUES: usize = 500_000;
const _: () = assert!(
    2 * super::exec::MAX_RESPONSE_VALUES + 2 * MAX_TASK_VALUES
        < toolgate_core::nodes::MAX_DOCUMENT_VALUES
);

fn parse_task(line: &str, n: usize) -> Result<Task, String> {
    // Fewer bytes than two a value cannot hold more (`0,`): not counted.
    if line.len() >= 2 * MAX_TASK_VALUES
        && toolgate_core::nodes::too_many_nodes(
            line.as_bytes(),
            &toolgate_core::nodes::Nodes::new(MAX_TASK_VALUES),
        )
    {
        return Err(format!(
            "the task holds more than {MAX_TASK_VALUES} JSON values: its samples, which hold it twice beside the answer, could not be read"
        ));
    }
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(obj) = value else {
        return Err(format!(
            "a task must be a JSON object, not {}",
            type_name(&value)
        ));
    };
    if let Some(key) = obj.keys().find(|k| !TASK_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key `{key}` (a task has {})",
            TASK_KEYS.map(|k| format!("`{k}`")).join(", ")
        ));
    }

    let task = match obj.get("task") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => return Err("`task` is empty".into()),
        Some(v) => return Err(format!("`task` must be a string, not {}", type_name(v))),
        None => return Err("missing `task`".into()),
    };
    let ctx = |reason: String| format!("task `{task}`: {reason}");
    // A sample holds `messages` and `tools` one level deeper (under
    // `request`): a task as deep as serde_json reads would make samples
    // no reader reads, each paid for, and never asked again by a rerun.
    let depth = 1 + obj
        .values()
        .map(toolgate_core::nodes::nesting)
        .max()
        .unwrap_or(0);
    let max = toolgate_core::nodes::MAX_READ_DEPTH;
    if depth >= max {
        return Err(ctx(format!(
            "the task nests {depth} levels deep: a sample holds its `messages` and `tools` one level deeper, past the {max} levels a transcript is read with"
        )));
    }

    let messages = match obj.get("messages") {
        Some(Value::Array(m)) if !m.is_empty() => m.clone(),
        Some(Value::Array(_)) => return Err(ctx("`messages` is empty".into())),
        Some(v) => {
            return Err(ctx(format!(
                "`messages` must be an array, not {}",
                type_name(v)
            )));
        }
        None => return Err(ctx("missing `messages`".into())),
    };
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str);
        match role {
            Some("system" | "developer" | "user" | "assistant" | "tool") => {}
            Some(other) => {
                return Err(ctx(format!(
                    "`messages[{i}]` has an unknown role `{other}`"
                )));
            }
            None => return Err(ctx(format!("`messages[{i}]` needs a string `role`"))),
        }
    }
    if !messages
        .iter()
        .any(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    {
        return Err(ctx("`messages` has no `user` message".into()));
    }

    let tools = match obj.get("tools") {
        Some(Value::Array(t)) => t,
        Some(v) => {
            return Err(ctx(format!(
                "`tools` must be an array, not {}",
                type_name(v)
            )));
        }
        None => return Err(ctx("missing `tools` (write `[]` for none)".into())),
    };
    let mut names: Vec<String> = Vec::new();
    let mut normalized = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let (tool, def) = normalize_tool(tool).map_err(|r| ctx(format!("`tools[{i}]` {r}")))?;
        let name = def;
        if names.contains(&name) {
            return Err(ctx(format!("tool `{name}` is defined twice")));
        }
        names.push(name);
        normalized.push(tool);
    }

    let expect = obj.get("expect").cloned().ok_or_else(|| {
        ctx("missing `expect` (write {\"calls\": []} when no tool is needed)".into())
    })?;
    let calls = expect
        .get("calls")
        .and_then(Value::as_array)
        .ok_or_else(|| ctx("`expect` must be an object with a `calls` array".into()))?;
    if let Some(key) = expect
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "calls"))
    {
        return Err(ctx(format!("`expect` has an unknown key `{key}`")));
    }
    for (i, call) in calls.iter().enumerate() {
        let name = call
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ctx(format!("`expect.calls[{i}]` needs a string `name`")))?;
        if !names.iter().any(|n| n == name) {
            return Err(ctx(format!(
                "`expect.calls[{i}]` names `{name}`, which is not one of the task's tools"
            )));
        }
        match call.get("arguments") {
            None | Some(Value::Object(_)) | Some(Value::Bool(_)) => {}
            Some(v) => {
                return Err(ctx(format!(
                    "`expect.calls[{i}].arguments` must be a JSON Schema (an object), not {}",
                    type_name(v)
                )));
            }
        }
        if let Some(key) = call
            .as_object()
            .and_then(|o| o.keys().find(|k| *k != "name" && *k != "arguments"))
        {
            return Err(ctx(format!(
                "`expect.calls[{i}]` has an unknown key `{key}`"
            )));
        }
    }

    let tool_choice = obj.get("tool_choice").cloned();
    match &tool_choice {
        None => {}
        Some(Value::String(s)) if matches!(s.as_str(), "none" | "auto" | "required") => {}
        Some(v @ Value::Object(_)) => {
            let name = v
                .get("function")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    ctx("`tool_choice` must be {\"type\": \"function\", \"function\": {\"name\": …}}".into())
                })?;
            if !names.iter().any(|n| n == name) {
                return Err(ctx(format!(
                    "`tool_choice` names `{name}`, which is not one of the task's tools"
                )));
            }
        }
        Some(v) => {
            return Err(ctx(format!(
                "`tool_choice` must be \"none\", \"auto\", \"required\" or a function object, not {v}"
            )));
        }
    }

    let tags = match obj.get("tags") {
        None => Vec::new(),
        Some(Value::Array(a)) => {
            let mut tags = Vec::new();
            for t in a {
                match t {
                    Value::String(s) if !s.is_empty() => tags.push(s.clone()),
                    _ => return Err(ctx("`tags` must be an array of non-empty strings".into())),
                }
            }
            tags
        }
        Some(v) => {
            return Err(ctx(format!(
                "`tags` must be an array, not {}",
                type_name(v)
            )));
        }
    };

    let request = match obj.get("request") {
        None => Map::new(),
        Some(Value::Object(r)) => {
            if let Some(key) = r
                .keys()
                .find(|k| RESERVED_REQUEST_KEYS.contains(&k.as_str()))
            {
                return Err(ctx(format!(
                    "`request.{key}` is set by the runner; a task may not override it"
                )));
            }
            r.clone()
        }
        Some(v) => {
            return Err(ctx(format!(
                "`request` must be an object, not {}",
                type_name(v)
            )));
        }
    };
    if let Some(Value::String(_)) | None = obj.get("description") {
    } else {
        return Err(ctx("`description` must be a string".into()));
    }

    Ok(Task {
        task,
        line: n,
        messages,
        tools: normalized,
        expect,
        tool_choice,
        tags,
        request,
    })
}

/// A tool definition in the OpenAI shape, and its name.
fn normalize_tool(tool: &Value) -> Result<(Value, String), String> {
    let Value::Object(obj) = tool else {
        return Err(format!("must be an object, not {}", type_name(tool)));
    };
    let (openai, def) = match obj.get("function") {
        Some(Value::Object(f)) => (tool.clone(), f),
        Some(v) => {
            return Err(format!(
                "`function` must be an object, not {}",
                type_name(v)
            ));
        }
        None => {
            let mut wrapped = Map::new();
            wrapped.insert("type".into(), Value::String("function".into()));
            wrapped.insert("function".into(), tool.clone());
            (Value::Object(wrapped), obj)
        }
    };
    let name = match def.get("name") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err("needs a non-empty string `name`".into()),
    };
    match def.get("parameters") {
        None | Some(Value::Object(_)) | Some(Value::Bool(_)) => {}
        Some(v) => {
            return Err(format!(
                "(`{name}`): `parameters` must be a JSON Schema, not {}",
                type_name(v)
            ));
        }
    }
    Ok((openai, name))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const TOOLS: &str = r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]"#;

    fn line(extra: &str) -> String {
        format!(
            r#"{{"task":"t","messages":[{{"role":"user","content":"hi"}}],"tools":{TOOLS},"expect":{{"calls":[{{"name":"get_weather"}}]}}{extra}}}"#
        )
    }

    fn errors(text: &str) -> Vec<String> {
        match Suite::parse(Path::new("s.jsonl"), text) {
            Ok(_) => Vec::new(),
            Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
        }
    }

    /// s50 audit: a task line of 5 million values (a tool's `enum`) ran,
    /// and each sample, holding the tools twice, was more values than the
    /// loader reads: `label` refused every sample and a rerun never asked
    /// again. Past [`MAX_TASK_VALUES`] the line is refused, not built.
    #[test]
    fn a_task_of_too_many_json_values_is_refused() {
        let task = |n: usize| {
            let zeros = vec!["0"; n].join(",");
            format!(
                r#"{{"task":"t","messages":[{{"role":"user","content":"x"}}],"tools":[{{"type":"function","function":{{"name":"f","parameters":{{"enum":[{zeros}]}}}}}}],"expect":{{"calls":[]}}}}"#
            )
        };
        assert_eq!(
            errors(&task(MAX_TASK_VALUES)),
            [
                "s.jsonl:1: the task holds more than 500000 JSON values: its samples, which hold it twice beside the answer, could not be read"
            ]
        );
        assert_eq!(errors(&task(MAX_TASK_VALUES - 100)), Vec::<String>::new());
    }

    /// s50 audit: a reason quotes what the line holds, whole: a role of a
    /// million characters (or a `tool_choice` of any size) put all of it
    /// on stderr. A reason is cut at [`MAX_REASON`] characters.
    #[test]
    fn a_reason_quoting_a_huge_value_is_cut() {
        let role = "r".repeat(1_000_000);
        let text = format!(
            r#"{{"task":"t","messages":[{{"role":"{role}","content":"x"}}],"tools":[],"expect":{{"calls":[]}}}}"#
        );
        let e = errors(&text);
        let start = "s.jsonl:1: task `t`: `messages[0]` has an unknown role `rrr";
        assert!(e[0].starts_with(start), "{}", &e[0][..80]);
        assert!(e[0].ends_with("rr…"), "{}", &e[0][e[0].len() - 80..]);
        assert_eq!(e[0].chars().count(), "s.jsonl:1: ".len() + MAX_REASON);
    }

    #[test]
    fn a_good_task_loads_with_its_line_number() {
        let text = format!(
            "\n{}\n",
            line(r#","tags":["a"],"request":{"max_tokens":9}"#)
        );
        let suite = Suite::parse(Path::new("s.jsonl"), &text).unwrap();
        let t = &suite.tasks[0];
        assert_eq!((t.task.as_str(), t.line), ("t", 2));
        assert_eq!(t.tags, vec!["a"]);
        assert_eq!(t.request.get("max_tokens"), Some(&serde_json::json!(9)));
        assert_eq!(t.last_user_text(), Some("hi"));
    }

    #[test]
    fn bare_tools_are_sent_in_the_openai_shape() {
        let text = r#"{"task":"t","messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","parameters":{"type":"object"}}],"expect":{"calls":[]}}"#;
        let suite = Suite::parse(Path::new("s.jsonl"), text).unwrap();
        assert_eq!(
            suite.tasks[0].tools[0],
            serde_json::json!({"type":"function","function":{"name":"f","parameters":{"type":"object"}}})
        );
    }

    #[test]
    fn every_bad_line_is_reported_with_its_number() {
        let text = [
            line(""),
            "{not json".to_string(),
            line(r#","expects":{}"#).replace(r#""task":"t""#, r#""task":"u""#),
            line(""),
            line(r#","request":{"model":"x"}"#).replace(r#""task":"t""#, r#""task":"v""#),
        ]
        .join("\n");
        let errs = errors(&text);
        assert_eq!(errs.len(), 4, "{errs:#?}");
        assert!(
            errs[0].starts_with("s.jsonl:2: not valid JSON"),
            "{}",
            errs[0]
        );
        assert!(
            errs[1].starts_with("s.jsonl:3: unknown key `expects`"),
            "{}",
            errs[1]
        );
        assert_eq!(errs[2], "s.jsonl:4: task `t` is already defined on line 1");
        assert_eq!(
            errs[3],
            "s.jsonl:5: task `v`: `request.model` is set by the runner; a task may not override it"
        );
    }

    #[test]
    fn an_expected_call_must_name_one_of_the_tools() {
        let text = line("").replace(r#"{"name":"get_weather"}]"#, r#"{"name":"get_wether"}]"#);
        assert_eq!(
            errors(&text),
            vec![
                "s.jsonl:1: task `t`: `expect.calls[0]` names `get_wether`, which is not one of the task's tools"
            ]
        );
    }

    #[test]
    fn missing_pieces_are_named() {
        assert_eq!(
            errors(r#"{"task":"t","messages":[{"role":"user","content":"x"}],"tools":[]}"#),
            vec![
                "s.jsonl:1: task `t`: missing `expect` (write {\"calls\": []} when no tool is needed)"
            ]
        );
        assert_eq!(
            errors(
                r#"{"task":"t","messages":[{"role":"system","content":"x"}],"tools":[],"expect":{"calls":[]}}"#
            ),
            vec!["s.jsonl:1: task `t`: `messages` has no `user` message"]
        );
        assert_eq!(
            errors(&line(
                r#","tool_choice":{"type":"function","function":{"name":"nope"}}"#
            )),
            vec![
                "s.jsonl:1: task `t`: `tool_choice` names `nope`, which is not one of the task's tools"
            ]
        );
        assert_eq!(errors("\n\n"), vec!["s.jsonl: no tasks"]);
        assert_eq!(
            errors("[1]"),
            vec!["s.jsonl:1: a task must be a JSON object, not an array"]
        );
    }

    /// Probe 42, bug 3: a suite was read whole whatever it was (`/dev/zero`
    /// grew without end) and every bad line printed (200k messages). It is
    /// read as other commands read files, and the bad lines past the first
    /// 20 are counted.
    #[test]
    fn a_suite_is_a_regular_file_within_the_limit_and_its_errors_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, line("")).unwrap();
        assert_eq!(Suite::load_with(&path, 4096).unwrap().tasks.len(), 1);
        let err = Suite::load_with(&path, 16).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}: cannot read: {} bytes, over the 16-byte limit (--max-file-size): not read",
                path.display(),
                line("").len()
            )
        );
        #[cfg(unix)]
        {
            let err = Suite::load_with(Path::new("/dev/zero"), 1 << 20)
                .unwrap_err()
                .to_string();
            assert_eq!(
                err,
                "/dev/zero: cannot read: a character device: only regular files are read"
            );
        }

        let garbage = vec!["{not json"; MAX_REPORTED + 5].join("\n");
        let errs = errors(&garbage);
        assert_eq!(errs.len(), MAX_REPORTED + 1);
        assert!(errs[MAX_REPORTED - 1].starts_with("s.jsonl:20: not valid JSON"));
        assert_eq!(
            errs[MAX_REPORTED],
            "s.jsonl: 5 more bad lines (only the first 20 are reported)"
        );
    }
}
