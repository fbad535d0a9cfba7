//! Loading transcripts from files and directories (SPEC §2).
//!
//! Bad input is data: every file that cannot be read, is not UTF-8, is not
//! JSON or misses `output` yields a [`LoadError`] naming the path (and line)
//! and the reason; the rest of the batch is loaded regardless.

use crate::import;
use crate::jsontext;
use crate::transcript::{Expectation, ExpectedCall, ToolDef, Transcript};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A file (or JSONL line) that could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line for `.jsonl` files.
    pub line: Option<usize>,
    /// Why.
    pub reason: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path.display(), line, self.reason),
            None => write!(f, "{}: {}", self.path.display(), self.reason),
        }
    }
}

impl std::error::Error for LoadError {}

/// One loaded transcript, or why it could not be loaded.
pub type Loaded = Result<Transcript, LoadError>;

/// Whether `path` names a transcript file (`.json`, `.jsonl`, or `.sse`
/// for a captured stream).
pub fn is_transcript_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("json") | Some("jsonl") | Some("sse")
    )
}

/// Every transcript file under `paths`: files as given (whatever their
/// extension), directories walked recursively for `.json`/`.jsonl`, sorted
/// within each directory. Unreadable directories and missing paths are
/// reported as errors in the second vector.
pub fn collect_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<LoadError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, &mut files, &mut errors),
            Ok(_) => files.push(path.clone()),
            Err(e) => errors.push(LoadError {
                path: path.clone(),
                line: None,
                reason: e.to_string(),
            }),
        }
    }
    (files, errors)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<LoadError>) {
    // An explicit stack instead of recursion: directory depth is untrusted.
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                errors.push(LoadError {
                    path: dir.clone(),
                    line: None,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let mut here: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        here.sort();
        let mut subdirs = Vec::new();
        for path in here {
            // file_type does not follow symlinks, so a link loop cannot trap us.
            let is_dir = std::fs::symlink_metadata(&path)
                .map(|m| m.is_dir())
                .unwrap_or(false);
            if is_dir {
                subdirs.push(path);
            } else if is_transcript_file(&path) {
                files.push(path);
            }
        }
        // Push in reverse so that directories are visited in sorted order.
        stack.extend(subdirs.into_iter().rev());
    }
}

/// Loads every transcript under `paths` (see [`collect_files`]), in a stable order.
pub fn load_paths(paths: &[PathBuf]) -> Vec<Loaded> {
    let (files, errors) = collect_files(paths);
    let mut out: Vec<Loaded> = errors.into_iter().map(Err).collect();
    for file in files {
        out.extend(load_file(&file));
    }
    out
}

/// Loads one file: one transcript for `.json`, one per non-blank line for `.jsonl`.
pub fn load_file(path: &Path) -> Vec<Loaded> {
    let err = |line, reason: String| LoadError {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => return vec![Err(err(None, e.to_string()))],
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            return vec![Err(err(
                None,
                format!(
                    "not valid UTF-8 (first bad byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            ))];
        }
    };
    let kind = import::detect(path, &text);
    let companions = kind
        .map(|k| import::Companions::beside(path, k))
        .unwrap_or_default();
    load_kind(path, &text, kind, &companions)
}

/// Loads transcripts from `text` as if read from `path`: its format is
/// detected ([`import::detect`]); toolgate's own format is JSON or JSONL by
/// extension. Companion files (Batch inputs, BFCL questions) are not looked
/// for: [`load_file`] does that.
pub fn load_str(path: &Path, text: &str) -> Vec<Loaded> {
    load_kind(
        path,
        text,
        import::detect(path, text),
        &import::Companions::default(),
    )
}

/// Loads transcripts from `text` read as `kind` (`None`: toolgate's own
/// format), joining `companions`.
pub fn load_kind(
    path: &Path,
    text: &str,
    kind: Option<import::Kind>,
    companions: &import::Companions,
) -> Vec<Loaded> {
    match kind {
        None | Some(import::Kind::Toolgate) => load_toolgate(path, text),
        Some(kind) => import::convert(path, text, kind, companions)
            .into_iter()
            .map(|r| {
                let rec = r?;
                from_object(rec.object, path, rec.line, rec.id.clone()).map_err(|reason| {
                    LoadError {
                        path: path.to_path_buf(),
                        line: rec.line,
                        reason,
                    }
                })
            })
            .collect(),
    }
}

fn load_toolgate(path: &Path, text: &str) -> Vec<Loaded> {
    let jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !jsonl {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        return vec![parse_transcript(text, path, None, &stem)];
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| parse_transcript(line, path, Some(i + 1), &stem))
        .collect()
}

/// Parses one transcript object.
pub fn parse_transcript(text: &str, path: &Path, line: Option<usize>, stem: &str) -> Loaded {
    let err = |reason: String| LoadError {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| err(format!("not valid JSON: {e}")))?;
    let Value::Object(raw) = value else {
        return Err(err("not a JSON object".into()));
    };
    let default_id = match line {
        Some(n) => format!("{stem}:{n}"),
        None => stem.to_string(),
    };
    let mut transcript = from_object(raw, path, line, default_id).map_err(err)?;
    keep_argument_text(&mut transcript, text);
    Ok(transcript)
}

/// Replaces every native call's `arguments` given as a JSON object by its
/// exact text from the file, as a string: `serde_json` has already kept the
/// last of duplicate keys, rounded floats and turned 30-digit integers into
/// floats, and the `native` mode must read the arguments with the same
/// reader, and the same rules, as arguments given as a string.
fn keep_argument_text(t: &mut Transcript, text: &str) {
    use jsontext::Step;
    let Some(calls) = t.tool_calls.as_mut() else {
        return;
    };
    let mut base = Vec::new();
    if !t.raw.contains_key("output") {
        base.extend([
            Step::Key("response"),
            Step::Key("choices"),
            Step::Index(0),
            Step::Key("message"),
        ]);
    }
    base.push(Step::Key("tool_calls"));
    for (i, call) in calls.iter_mut().enumerate() {
        let nested = call.get("function").is_some_and(Value::is_object);
        let func = if nested {
            call.get_mut("function")
        } else {
            Some(&mut *call)
        };
        let Some(args) = func.and_then(|f| f.get_mut("arguments")) else {
            continue;
        };
        if !args.is_object() {
            continue;
        }
        let mut path = base.clone();
        path.push(Step::Index(i));
        if nested {
            path.push(Step::Key("function"));
        }
        path.push(Step::Key("arguments"));
        if let Some(range) = jsontext::value_at(text, &path) {
            *args = Value::String(text[range].to_string());
        }
    }
}

fn opt_str(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

/// Builds a transcript from a JSON object (flat or `request`/`response` form).
pub fn from_object(
    raw: Map<String, Value>,
    path: &Path,
    line: Option<usize>,
    default_id: String,
) -> Result<Transcript, String> {
    let mut warnings = Vec::new();
    let id = opt_str(&raw, "id")?.unwrap_or(default_id);
    let model = opt_str(&raw, "model")?;
    let task = opt_str(&raw, "task")?;
    let sample = match raw.get("sample") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().ok_or("`sample` must be an integer")?),
    };

    let (tools_value, output, reasoning, tool_calls, finish_reason, model) =
        if raw.contains_key("output") {
            let output = match raw.get("output") {
                Some(Value::String(s)) => s.clone(),
                _ => return Err("`output` must be a string".into()),
            };
            let tool_calls = match raw.get("tool_calls") {
                None => None,
                Some(Value::Null) => Some(Vec::new()),
                Some(Value::Array(a)) => Some(a.clone()),
                Some(_) => return Err("`tool_calls` must be an array".into()),
            };
            (
                raw.get("tools").cloned(),
                output,
                opt_str(&raw, "reasoning")?,
                tool_calls,
                opt_str(&raw, "finish_reason")?,
                model,
            )
        } else if let Some(response) = raw.get("response") {
            from_response(&raw, response, model)?
        } else {
            return Err("missing `output` (and no `response`)".into());
        };

    let (tools, tool_problems) = read_tools(tools_value.as_ref())?;

    let chunks = match raw.get("chunks") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => {
            let chunks: Option<Vec<String>> =
                a.iter().map(|c| c.as_str().map(str::to_string)).collect();
            let chunks = chunks.ok_or("`chunks` must be an array of strings")?;
            if chunks.concat() != output {
                warnings.push("the concatenated `chunks` differ from `output`".to_string());
            }
            Some(chunks)
        }
        Some(_) => return Err("`chunks` must be an array of strings".into()),
    };

    let expect = match raw.get("expect") {
        None | Some(Value::Null) => None,
        Some(v) => Some(read_expect(v)?),
    };

    let stored_labels = match raw.get("labels") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => {
            let mut labels = BTreeMap::new();
            for (k, v) in m {
                let v = v.as_str().ok_or("`labels` values must be strings")?;
                labels.insert(k.clone(), v.to_string());
            }
            Some(labels)
        }
        Some(_) => return Err("`labels` must be an object".into()),
    };

    Ok(Transcript {
        path: path.to_path_buf(),
        line,
        id,
        model,
        task,
        sample,
        tools,
        tool_problems,
        output,
        reasoning,
        tool_calls,
        finish_reason,
        chunks,
        expect,
        stored_labels,
        warnings,
        raw,
    })
}

type ResponseParts = (
    Option<Value>,
    String,
    Option<String>,
    Option<Vec<Value>>,
    Option<String>,
    Option<String>,
);

fn from_response(
    raw: &Map<String, Value>,
    response: &Value,
    model: Option<String>,
) -> Result<ResponseParts, String> {
    let request = raw.get("request");
    let tools = request.and_then(|r| r.get("tools")).cloned();
    let choice = response
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or("`response` has no `choices[0]`")?;
    let message = choice
        .get("message")
        .ok_or("`response.choices[0]` has no `message`")?;
    let output = match message.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("`message.content` must be a string or null".into()),
    };
    let reasoning = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| message.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    let tool_calls = match message.get("tool_calls") {
        None => None,
        Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(a)) => Some(a.clone()),
        Some(_) => return Err("`message.tool_calls` must be an array".into()),
    };
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    let model = model.or_else(|| {
        response
            .get("model")
            .or_else(|| request.and_then(|r| r.get("model")))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    Ok((tools, output, reasoning, tool_calls, finish_reason, model))
}

fn read_tools(value: Option<&Value>) -> Result<(Vec<ToolDef>, Vec<String>), String> {
    let mut tools = Vec::new();
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let items = match value {
        None | Some(Value::Null) => return Ok((tools, problems)),
        Some(Value::Array(items)) => items,
        Some(_) => return Err("`tools` must be an array".into()),
    };
    for (i, item) in items.iter().enumerate() {
        let def = item
            .get("function")
            .filter(|f| f.is_object())
            .unwrap_or(item);
        match def.get("name").and_then(Value::as_str) {
            Some(name) if !name.is_empty() => {
                if !seen.insert(name) {
                    // Both definitions are kept; the validator makes the
                    // tool unusable: which one applies would be a guess.
                    problems.push(format!(
                        "tools[{i}] repeats the name `{name}`: the tool is unusable"
                    ));
                }
                tools.push(ToolDef {
                    name: name.to_string(),
                    description: def
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    parameters: def.get("parameters").filter(|p| !p.is_null()).cloned(),
                });
            }
            _ => problems.push(format!("tools[{i}] has no `name`: ignored")),
        }
    }
    Ok((tools, problems))
}

fn read_expect(v: &Value) -> Result<Expectation, String> {
    let calls = v
        .get("calls")
        .and_then(Value::as_array)
        .ok_or("`expect` must be an object with a `calls` array")?;
    let mut out = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("`expect.calls[{i}]` has no `name`"))?;
        let arguments = c.get("arguments").filter(|a| !a.is_null()).cloned();
        if let Some(a) = &arguments
            && !(a.is_object() || a.is_boolean())
        {
            return Err(format!(
                "`expect.calls[{i}].arguments` must be a JSON Schema"
            ));
        }
        out.push(ExpectedCall {
            name: name.to_string(),
            arguments,
        });
    }
    Ok(Expectation { calls: out })
}

/// Labels to store for one transcript: mode → label name, in display order.
pub type LabelMap = Vec<(String, String)>;

/// Stores `labels` in the transcripts of `path` (keyed by JSONL line, `None`
/// for a `.json` file), changing only their `labels` member, and replaces the
/// file atomically (temporary file in the same directory, then rename).
pub fn write_labels(path: &Path, updates: &[(Option<usize>, LabelMap)]) -> std::io::Result<()> {
    let text = std::fs::read_to_string(path)?;
    let jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
    let invalid = |e: jsontext::EditError| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    let new_text = if jsonl {
        // Index the updates by line once: a JSONL file may hold many thousands.
        let by_line: std::collections::HashMap<usize, &LabelMap> = updates
            .iter()
            .filter_map(|(line, labels)| line.map(|n| (n, labels)))
            .collect();
        let mut out = String::with_capacity(text.len() + 256);
        for (i, line) in text.split_inclusive('\n').enumerate() {
            let n = i + 1;
            match by_line.get(&n) {
                Some(labels) => {
                    let (body, nl) = split_newline(line);
                    out.push_str(
                        &jsontext::set_member(body, "labels", &labels_json(labels, None))
                            .map_err(invalid)?,
                    );
                    out.push_str(nl);
                }
                None => out.push_str(line),
            }
        }
        out
    } else {
        match updates.iter().find(|(l, _)| l.is_none()) {
            None => return Ok(()),
            Some((_, labels)) => {
                let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
                let bom = &text[..text.len() - body.len()];
                let indent = jsontext::members(body)
                    .ok()
                    .and_then(|(m, _)| {
                        m.first()
                            .map(|m| jsontext::indentation_before(body, m.key_start).to_string())
                    })
                    .filter(|_| body.trim_start().starts_with('{') && body.contains('\n'));
                let json = labels_json(labels, indent.as_deref());
                format!(
                    "{bom}{}",
                    jsontext::set_member(body, "labels", &json).map_err(invalid)?
                )
            }
        }
    };
    if new_text == text {
        return Ok(());
    }
    atomic_write(path, new_text.as_bytes())
}

fn split_newline(line: &str) -> (&str, &str) {
    let body = line.trim_end_matches(['\n', '\r']);
    (body, &line[body.len()..])
}

/// `{"mode": "label", …}`; one member per line when `indent` is given (the
/// indentation of the enclosing object's members), so that a PR diff shows
/// one changed line per changed label.
pub fn labels_json(labels: &LabelMap, indent: Option<&str>) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    if labels.is_empty() {
        return "{}".into();
    }
    match indent {
        None => {
            let parts: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{}: {}", q(k), q(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Some(indent) => {
            let inner = format!("{indent}{indent}");
            let inner = if indent.is_empty() {
                "  ".to_string()
            } else {
                inner
            };
            let parts: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{inner}{}: {}", q(k), q(v)))
                .collect();
            format!("{{\n{}\n{indent}}}", parts.join(",\n"))
        }
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so that readers (and the watcher) never see a half-written file.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.toolgate-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            let _ = std::fs::set_permissions(&tmp, meta.permissions());
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn bad_files_are_reported_and_the_batch_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("a.json"),
            r#"{"output": "hi", "tools": []}"#,
        )
        .unwrap();
        fs::write(dir.path().join("b.json"), b"\xff\xfe").unwrap();
        fs::write(dir.path().join("c.json"), "{not json").unwrap();
        fs::write(dir.path().join("d.json"), r#"{"tools": []}"#).unwrap();
        fs::write(
            dir.path().join("e.jsonl"),
            "{\"output\": \"x\"}\n\n{\"output\": 3}\n",
        )
        .unwrap();
        fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let loaded = load_paths(&[dir.path().to_path_buf()]);
        let summary: Vec<String> = loaded
            .iter()
            .map(|l| match l {
                Ok(t) => format!("ok {}", t.id),
                Err(e) => format!(
                    "err {}{} {}",
                    e.path.file_name().unwrap().to_string_lossy(),
                    e.line.map(|l| format!(":{l}")).unwrap_or_default(),
                    e.reason.split(':').next().unwrap()
                ),
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                "ok a",
                "err b.json not valid UTF-8 (first bad byte at offset 0)",
                "err c.json not valid JSON",
                "err d.json missing `output` (and no `response`)",
                "ok e:1",
                "err e.jsonl:3 `output` must be a string",
            ]
        );
    }

    #[test]
    fn object_arguments_keep_their_exact_text() {
        let flat = r#"{"output": "", "tool_calls": [
            {"function": {"name": "f", "arguments": {"a": 1, "a": 2}}},
            {"name": "g", "arguments": {"n": 1.9999999999999999}},
            {"function": {"name": "h", "arguments": "{\"s\": 1}"}}]}"#;
        let t = parse_transcript(flat, Path::new("t.json"), None, "t").unwrap();
        let calls = t.tool_calls.unwrap();
        assert_eq!(calls[0]["function"]["arguments"], r#"{"a": 1, "a": 2}"#);
        assert_eq!(calls[1]["arguments"], r#"{"n": 1.9999999999999999}"#);
        assert_eq!(calls[2]["function"]["arguments"], r#"{"s": 1}"#);
        let resp = r#"{"response": {"choices": [{"message": {"tool_calls": [
            {"function": {"name": "f", "arguments": {"id": 123456789012345678901234567890}}}]}}]}}"#;
        let t = parse_transcript(resp, Path::new("r.json"), None, "r").unwrap();
        assert_eq!(
            t.tool_calls.unwrap()[0]["function"]["arguments"],
            r#"{"id": 123456789012345678901234567890}"#
        );
    }

    #[test]
    fn a_repeated_tool_name_is_a_problem_and_both_definitions_are_kept() {
        let text = r#"{"output": "", "tools": [{"name": "f"}, {"name": "g"},
            {"type": "function", "function": {"name": "f", "parameters": {}}}, {}]}"#;
        let t = parse_transcript(text, Path::new("t.json"), None, "t").unwrap();
        assert_eq!(t.tools.len(), 3);
        assert_eq!(
            t.tool_problems,
            [
                "tools[2] repeats the name `f`: the tool is unusable",
                "tools[3] has no `name`: ignored"
            ]
        );
    }

    #[test]
    fn request_response_form_is_normalized() {
        let text = r#"{"request": {"model": "m", "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]},
            "response": {"choices": [{"finish_reason": "tool_calls", "message": {"content": null, "reasoning_content": "hmm",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}}"#;
        let t = parse_transcript(text, Path::new("x/r.json"), None, "r").unwrap();
        assert_eq!(t.id, "r");
        assert_eq!(t.model.as_deref(), Some("m"));
        assert_eq!(t.tools[0].name, "f");
        assert_eq!(t.output, "");
        assert_eq!(t.reasoning.as_deref(), Some("hmm"));
        assert_eq!(t.tool_calls.as_ref().map(Vec::len), Some(1));
        assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn write_labels_changes_only_the_labels_member() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        fs::write(
            &json,
            "{\n  \"output\": \"hi\",\n  \"big\": 18446744073709551616\n}\n",
        )
        .unwrap();
        let labels = vec![
            ("tag".to_string(), "no_call".to_string()),
            ("json".into(), "pass".into()),
        ];
        write_labels(&json, &[(None, labels.clone())]).unwrap();
        assert_eq!(
            fs::read_to_string(&json).unwrap(),
            "{\n  \"output\": \"hi\",\n  \"big\": 18446744073709551616,\n  \"labels\": {\n    \"tag\": \"no_call\",\n    \"json\": \"pass\"\n  }\n}\n"
        );
        let jsonl = dir.path().join("t.jsonl");
        fs::write(
            &jsonl,
            "{\"output\": \"a\"}\n{\"output\": \"b\", \"labels\": {\"tag\": \"pass\"}}\n",
        )
        .unwrap();
        write_labels(&jsonl, &[(Some(2), labels)]).unwrap();
        assert_eq!(
            fs::read_to_string(&jsonl).unwrap(),
            "{\"output\": \"a\"}\n{\"output\": \"b\", \"labels\": {\"tag\": \"no_call\", \"json\": \"pass\"}}\n"
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }
}
