//! `enforce`'s edit of a non-streamed answer, written over the answer's own
//! bytes.
//!
//! When `enforce` changes a choice (a text call served as native
//! `tool_calls`, a rejected set taken out, the `finish_reason` that goes
//! with it), only the choice's `message` and `finish_reason` change. The
//! answer was read in the borrowed pass ([`super::check::read_completion`]),
//! which parsed every byte as serde_json's `Value` parse does; parsing it
//! again into a `Value` only to edit four fields and serialize the rest
//! back was most of what `enforce` cost over `shadow`. Here the edited
//! choices are rewritten member by member and every other byte is copied:
//! the upstream's other fields keep their text (numbers, escapes, order).
//!
//! The edit is the one [`Judged::enforce_choice`] makes on a `Value`, from
//! the same [`Served`] values: a field set keeps its place, a new one goes
//! last, in the same order, and a field removed closes the gap. The
//! property test `the_spliced_answer_is_the_edited_value` holds the two
//! together. Whatever the scan is unsure of (a key with an escape, a shape
//! the borrowed pass should have refused) gives `None`, and the caller
//! edits a `Value` as before.

use super::judge::{Judged, Served, ServedCall};
use super::members::{Members, own};
use serde_json::Value;
use std::ops::Range;
use toolgate_core::jsonstr;

/// One member of an object: where it starts (its key's opening quote), its
/// key as written (between the quotes) and its value.
struct Member {
    start: usize,
    key: Range<usize>,
    value: Range<usize>,
}

/// The index after the whitespace from `i`.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The index after the string whose opening quote is at `i`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        j += memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
        if b[j] == b'"' {
            return Some(j + 1);
        }
        j += 2;
    }
}

/// The index after the value that starts at `i` (the text is JSON that
/// serde_json read before). No recursion: a container's own brackets are
/// counted (in JSON text the other kind balances inside it), found with
/// one search for them and for quotes.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    let (open, close) = match *b.get(i)? {
        b'"' => return string_end(b, i),
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => {
            let mut j = i;
            while !matches!(
                b.get(j),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                j += 1;
            }
            return (j > i).then_some(j);
        }
    };
    let mut depth = 0usize;
    let mut j = i;
    loop {
        j += memchr::memchr3(b'"', open, close, b.get(j..)?)?;
        match b[j] {
            b'"' => {
                j = string_end(b, j)?;
                continue;
            }
            c if c == open => depth += 1,
            _ => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
        }
        j += 1;
    }
}

/// The members of the object whose `{` is at `i`, and the index after its
/// `}`. `take` is offered each value first (its key and where it starts):
/// it returns where the value ends when it read it, `None` to have it
/// skipped here, so that every byte is scanned once. A key with an escape
/// is not read here (its text is not its name).
fn object(
    b: &[u8],
    i: usize,
    mut take: impl FnMut(&[u8], usize) -> Option<Option<usize>>,
) -> Option<(Vec<Member>, usize)> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut out = Vec::with_capacity(8);
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Some((out, j + 1));
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, j)?;
        let key = j + 1..key_end - 1;
        if b[key.clone()].contains(&b'\\') {
            return None;
        }
        j = skip_ws(b, key_end);
        if b.get(j) != Some(&b':') {
            return None;
        }
        let v = skip_ws(b, j + 1);
        let v_end = match take(&b[key.clone()], v)? {
            Some(end) => end,
            None => value_end(b, v)?,
        };
        out.push(Member {
            start: key.start - 1,
            key,
            value: v..v_end,
        });
        j = skip_ws(b, v_end);
        match b.get(j)? {
            b',' => j = skip_ws(b, j + 1),
            b'}' => return Some((out, j + 1)),
            _ => return None,
        }
    }
}

/// [`object`] with every value skipped.
#[cfg(test)]
fn members(b: &[u8], i: usize) -> Option<(Vec<Member>, usize)> {
    object(b, i, |_, _| Some(None))
}

/// Walks the array whose `[` is at `i`: `each` gets each element's index
/// and start and returns where it ends when it read it (`None`: skipped
/// here). Returns the index after the `]` and the number of elements.
fn array(
    b: &[u8],
    i: usize,
    mut each: impl FnMut(usize, usize) -> Option<Option<usize>>,
) -> Option<(usize, usize)> {
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Some((j + 1, 0));
    }
    let mut n = 0;
    loop {
        let end = match each(n, j)? {
            Some(end) => end,
            None => value_end(b, j)?,
        };
        n += 1;
        j = skip_ws(b, end);
        match b.get(j)? {
            b',' => j = skip_ws(b, j + 1),
            b']' => return Some((j + 1, n)),
            _ => return None,
        }
    }
}

/// The elements of the array whose `[` is at `i`.
#[cfg(test)]
fn elements(b: &[u8], i: usize) -> Option<Vec<Range<usize>>> {
    let mut out = Vec::new();
    array(b, i, |_, start| {
        let end = value_end(b, start)?;
        out.push(start..end);
        Some(Some(end))
    })?;
    Some(out)
}

/// A choice to edit, as the scan found it: where it lies, its members,
/// and its `message`'s members.
struct Spans {
    span: Range<usize>,
    members: Vec<Member>,
    message: Vec<Member>,
}

/// The choice whose `{` is at `i`, and its message, in one pass.
fn spans(b: &[u8], i: usize) -> Option<Spans> {
    let mut message = None;
    let (members, end) = object(b, i, |key, v| {
        if key != b"message" {
            return Some(None);
        }
        // A second `message` is not read here (a `Value` keeps the last).
        if message.is_some() {
            return None;
        }
        let (ms, end) = object(b, v, |_, _| Some(None))?;
        message = Some(ms);
        Some(Some(end))
    })?;
    Some(Spans {
        span: i..end,
        members,
        message: message?,
    })
}

/// A value the splice writes: a `Value` (a string by [`jsonstr`], the
/// bytes serde_json writes; anything else by serde_json) or the served
/// calls ([`ServedCall::write`]).
trait Spliced {
    /// Appends the value (writing into a `Vec` cannot fail; were it ever
    /// to, `None`, and the splice is not used).
    fn put(&self, out: &mut Vec<u8>) -> Option<()>;
}

impl Spliced for Value {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        match self {
            Value::String(s) => {
                jsonstr::write(out, s);
                Some(())
            }
            v => serde_json::to_writer(&mut *out, v).ok(),
        }
    }
}

impl Spliced for [ServedCall<'_>] {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        out.push(b'[');
        for (i, c) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            c.write(out)?;
        }
        out.push(b']');
        Some(())
    }
}

/// Writes `v` ([`Spliced`]).
fn write<T: Spliced + ?Sized>(out: &mut Vec<u8>, v: &T) -> Option<()> {
    v.put(out)
}

/// The member as it came, as the next of `w`'s.
fn raw_member(w: &mut Members<'_>, b: &[u8], m: &Member) {
    w.next().extend_from_slice(&b[m.start..m.value.end]);
}

/// The member's key as it came (with its colon and spacing), as the next
/// of `w`'s, for a new value.
fn key_of<'w>(w: &'w mut Members<'_>, b: &[u8], m: &Member) -> &'w mut Vec<u8> {
    let out = w.next();
    out.extend_from_slice(&b[m.start..m.value.start]);
    out
}

/// One choice as `enforce` serves it (see [`Judged::enforce_choice`]).
fn choice(out: &mut Vec<u8>, b: &[u8], c: &Spans, served: &Served<'_>) -> Option<()> {
    let mut w = Members::open(out);
    let mut finish = false;
    for m in &c.members {
        match &b[m.key.clone()] {
            b"message" => message(key_of(&mut w, b, m), b, &c.message, served)?,
            b"finish_reason" => {
                finish = true;
                write(key_of(&mut w, b, m), &served.finish_reason)?;
            }
            _ => raw_member(&mut w, b, m),
        }
    }
    if !finish {
        write(w.key(own!("finish_reason")), &served.finish_reason)?;
    }
    w.close();
    Some(())
}

/// A choice's `message` as `enforce` serves it: `content` set when the
/// text's calls execute, `tool_calls` and `function_call` set or removed.
fn message(out: &mut Vec<u8>, b: &[u8], ms: &[Member], served: &Served<'_>) -> Option<()> {
    // The served calls, written as the array `enforce_choice` sets.
    let tool_calls = (!served.tool_calls.is_empty()).then_some(served.tool_calls.as_slice());
    let mut w = Members::open(out);
    let (mut content, mut calls, mut function_call) = (false, false, false);
    for m in ms {
        match &b[m.key.clone()] {
            b"content" => {
                content = true;
                match &served.content {
                    Some(v) => write(key_of(&mut w, b, m), v)?,
                    None => raw_member(&mut w, b, m),
                }
            }
            b"tool_calls" => {
                calls = true;
                if let Some(v) = tool_calls {
                    write(key_of(&mut w, b, m), v)?;
                }
            }
            b"function_call" => {
                function_call = true;
                if let Some(v) = served.function_call {
                    write(key_of(&mut w, b, m), v)?;
                }
            }
            _ => raw_member(&mut w, b, m),
        }
    }
    if let (false, Some(v)) = (content, &served.content) {
        write(w.key(own!("content")), v)?;
    }
    if let (false, Some(v)) = (calls, tool_calls) {
        write(w.key(own!("tool_calls")), v)?;
    }
    if let (false, Some(v)) = (function_call, served.function_call) {
        write(w.key(own!("function_call")), v)?;
    }
    w.close();
    Some(())
}

/// The answer `body` with each choice that has a [`Served`] in `edits`
/// (one per choice, in order) rewritten as `enforce` serves it; every
/// other byte as it came. `None`: not done here (the caller edits a
/// `Value`).
pub(crate) fn edited(body: &[u8], edits: &[Option<Served<'_>>]) -> Option<Vec<u8>> {
    // One pass: the top-level object, its `choices`, and only the choices
    // edited are read member by member; everything else is skipped once.
    let mut found: Vec<Spans> = Vec::new();
    let mut count = None;
    object(body, skip_ws(body, 0), |key, v| {
        if key != b"choices" {
            return Some(None);
        }
        // `choices` once (the borrowed pass refused a repeated one).
        if count.is_some() {
            return None;
        }
        let (end, n) = array(body, v, |k, start| match edits.get(k) {
            Some(Some(_)) => {
                let c = spans(body, start)?;
                let end = c.span.end;
                found.push(c);
                Some(Some(end))
            }
            _ => Some(None),
        })?;
        count = Some(n);
        Some(Some(end))
    })?;
    if count? != edits.len() {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() + 256);
    let mut copied = 0;
    for (c, served) in found.iter().zip(edits.iter().flatten()) {
        out.extend_from_slice(&body[copied..c.span.start]);
        choice(&mut out, body, c, served)?;
        copied = c.span.end;
    }
    out.extend_from_slice(&body[copied..]);
    Some(out)
}

/// What `enforce` serves for each choice it changes (`None`: served as it
/// came), from the borrowed read of the answer.
pub(crate) fn plan<'j>(
    judged: &'j [Judged],
    read: &super::check::Read<'_>,
) -> Vec<Option<Served<'j>>> {
    judged
        .iter()
        .zip(&read.choices)
        .map(|(j, c)| j.edit_of(c))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::check::{Read, parse_completion, read_completion};
    use super::super::judge::tests::{enforce_answer, tools};
    use super::super::judge::{Judged, judge_choice};
    use super::*;
    use serde_json::Value;
    use toolgate_validator::{Engine, Profile};

    const JSON: Option<&str> = Some("application/json");

    /// The answer as the Value path serves it: parsed, each choice edited
    /// by `enforce_choice`, serialized.
    fn edited_value(text: &str, judged: &[Judged]) -> Value {
        let mut v: Value = serde_json::from_str(text).unwrap();
        for (c, j) in v["choices"].as_array_mut().unwrap().iter_mut().zip(judged) {
            j.enforce_choice(c.as_object_mut().unwrap());
        }
        v
    }

    /// The splice of `text` when the borrowed pass read it, with the
    /// judgments it was planned from.
    fn spliced(engine: &Engine, text: &str) -> Option<(Option<Vec<u8>>, Vec<Judged>)> {
        let (_, out, judged) = splice_of(engine, text)?;
        Some((out, judged))
    }

    /// [`spliced`], with whether the splice was due (the borrowed pass
    /// read the answer and `enforce` changes it).
    fn splice_of(engine: &Engine, text: &str) -> Option<(bool, Option<Vec<u8>>, Vec<Judged>)> {
        parse_completion(JSON, text.as_bytes()).ok()?;
        let mut parsed = None;
        let read: Read = read_completion(
            JSON,
            text.as_bytes(),
            &mut parsed,
            true,
            super::super::check::DEFAULT_MAX_RESPONSE_NODES,
        )
        .ok()?;
        let judged: Vec<Judged> = read
            .choices
            .iter()
            .map(|c| judge_choice(engine, &tools(), c, true))
            .collect();
        let plan = plan(&judged, &read);
        let taken = plan.iter().any(Option::is_some) && parsed.is_none();
        let out = taken.then(|| edited(text.as_bytes(), &plan)).flatten();
        drop(plan);
        Some((taken, out, judged))
    }

    fn engine() -> Engine {
        Engine::new(Profile::builtin("hermes").unwrap())
    }

    /// A text call becomes a native call; every byte outside the choice
    /// is the upstream's (its spacing, its `1.50`, its `\u00e9`), and so is
    /// every member of the choice that is not edited.
    #[test]
    fn a_text_call_is_served_native_and_the_rest_kept_as_it_came() {
        let text = r#"{ "id": "x", "choices": [ {"index": 0, "logprobs": {"p": 1.50},
            "message": {"role": "assistant", "content": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>", "refusal": null},
            "finish_reason": "stop"} ], "note": "caf\u00e9", "usage": {"total_tokens": 3} }"#;
        let (out, judged) = spliced(&engine(), text).unwrap();
        let out = String::from_utf8(out.expect("spliced")).unwrap();
        let call_id = judged[0].tool_calls()[0]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let expected = format!(
            r#"{{ "id": "x", "choices": [ {{"index": 0,"logprobs": {{"p": 1.50}},"message": {{"role": "assistant","content": null,"refusal": null,"tool_calls":[{{"id":"{call_id}","type":"function","function":{{"name":"get_weather","arguments":"{{\"city\":\"Antwerp\"}}"}}}}]}},"finish_reason": "tool_calls"}} ], "note": "caf\u00e9", "usage": {{"total_tokens": 3}} }}"#
        );
        assert_eq!(out, expected);
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            edited_value(text, &judged)
        );
    }

    /// A rejected set is taken out (the native call removed, the gap
    /// closed, the finish reason with it); a prose choice beside it is
    /// left as its bytes.
    #[test]
    fn a_rejected_native_set_is_removed_and_an_unchanged_choice_kept() {
        let text = r#"{"choices":[{"message":{"tool_calls":[{"id":"c","type":"function","function":{"name":"rm_rf","arguments":"{}"}}],"content":"ok","role":"assistant"},"finish_reason":"tool_calls"},{"message":{"content":"prose" ,"role":"assistant"} , "finish_reason":"stop"}]}"#;
        let (out, judged) = spliced(&engine(), text).unwrap();
        let out = String::from_utf8(out.expect("spliced")).unwrap();
        assert_eq!(
            out,
            r#"{"choices":[{"message":{"content":"ok","role":"assistant"},"finish_reason":"stop"},{"message":{"content":"prose" ,"role":"assistant"} , "finish_reason":"stop"}]}"#
        );
        assert_eq!(
            serde_json::to_string(&serde_json::from_str::<Value>(&out).unwrap()).unwrap(),
            serde_json::to_string(&edited_value(text, &judged)).unwrap()
        );
    }

    /// What the scan does not read as the borrowed pass did is left to the
    /// `Value` edit: a key with an escape (its text is not its name).
    #[test]
    fn an_escaped_key_is_left_to_the_value_edit() {
        let text = r#"{"choices":[{"message":{"cont\u0065nt":"<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Gent\"}}</tool_call>"},"finish_reason":"stop"}]}"#;
        let (out, judged) = spliced(&engine(), text).unwrap();
        assert!(judged[0].executes(), "the borrowed pass read the call");
        assert_eq!(out, None);
    }

    /// The scan's own refusals, on text no borrowed pass would take.
    #[test]
    fn the_scan_refuses_what_it_cannot_place() {
        assert!(members(b"[1]", 0).is_none());
        assert!(members(br#"{"a" 1}"#, 0).is_none());
        assert!(members(br#"{"a":1"#, 0).is_none());
        assert!(elements(b"[1 2]", 0).is_none());
        assert!(value_end(b"\"open", 0).is_none());
        assert!(value_end(b"[[1]", 0).is_none());
        let (ms, end) = members(br#"{ "a" : [1,{"b":"}"}] , "c":"\"" }x"#, 0).unwrap();
        assert_eq!(end, 34, "after the closing brace");
        let keys: Vec<(usize, &[u8])> = ms
            .iter()
            .map(|m| {
                (
                    m.value.len(),
                    &br#"{ "a" : [1,{"b":"}"}] , "c":"\"" }x"#[m.key.clone()],
                )
            })
            .collect();
        assert_eq!(keys, [(13, &b"a"[..]), (4, &b"c"[..])]);
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1500))]
        /// The splice serves what editing the `Value` serves: the same
        /// fields, values and order, whatever the spacing and the place of
        /// each field; and it is used for every answer the borrowed pass
        /// read that `enforce` changes.
        #[test]
        fn the_spliced_answer_is_the_edited_value(t in enforce_answer()) {
            let engine = engine();
            let Some((taken, out, judged)) = splice_of(&engine, &t) else {
                return Ok(());
            };
            prop_assert_eq!(taken, out.is_some(), "a due splice was not made: {}", &t);
            if let Some(out) = out {
                let expected = serde_json::to_string(&edited_value(&t, &judged)).unwrap();
                let got: Value = serde_json::from_slice(&out).unwrap();
                prop_assert_eq!(serde_json::to_string(&got).unwrap(), expected, "{}", &t);
            }
        }
    }
}
