//! Which call a streamed `tool_calls` fragment belongs to: one rule for the
//! proxy's stream judge and the importer of captured streams, so a stream
//! is read as the same calls live and recorded (DECISIONS, "Streamed
//! tool-call fragments").
//!
//! A fragment belongs to the call with its `id`, else to the latest call at
//! its `index` (its position in the chunk's list when it has none, as
//! OpenAI's index would be). It starts the next call at that place instead
//! when it carries a function name, the call there already has whole JSON
//! arguments, and
//!
//! - its `id` is new and the call there has another one (Ollama and
//!   Gemini's OpenAI shims stream parallel calls each at `index` 0, each
//!   under its own id), or
//! - it has no `index` and carries argument text (Gemini's OpenAI endpoint,
//!   older Ollama, LM Studio and llama.cpp servers send each call whole in
//!   one delta without `index`, some with an empty `id`), or an `index` a
//!   relay filled in ([`Fragment::index_filled`]: LiteLLM's `Delta` makes
//!   a missing `index` the fragment's position, 0 for those servers).
//!
//! Otherwise it continues that call (some proxies give every fragment a
//! fresh id, MiniMax through NVIDIA NIM repeats the name in every
//! fragment): a name piece that is not the call's name repeated is joined
//! to it ([`CallSlots::name`]), so no call runs under a name its arguments
//! were not given with. A fragment without `index` that adds argument text to a
//! call whose arguments are already whole JSON, and that starts no call by
//! the rule above, cannot be placed: the caller fails closed
//! ([`Placed::Unplaceable`]) rather than read `{…}{…}` as one call.

use std::collections::HashMap;

/// One `tool_calls` fragment, as read off the wire.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fragment<'a> {
    /// Its `index`, when it is a non-negative integer.
    pub index: Option<u64>,
    /// Its `index` may be a relay's filler, not the upstream's: LiteLLM's
    /// `Delta` sets a missing `index` to the fragment's position in its
    /// list, so a fragment sent without one reaches the LiteLLM guardrail
    /// at `index` 0. Such a fragment starts a call as one without `index`
    /// would ([`CallSlots::place`]); it is never [`Placed::Unplaceable`]
    /// (what it adds continues the call there, which then fails to parse
    /// if it is not that call's).
    pub index_filled: bool,
    /// Its place in its chunk's `tool_calls` list.
    pub position: u64,
    /// Its `id`, when a non-empty string (servers send `""` on
    /// continuation fragments).
    pub id: Option<&'a str>,
    /// Its `function.name`, when a non-empty string.
    pub name: Option<&'a str>,
    /// Its `function.arguments` text.
    pub arguments: Option<&'a str>,
}

impl<'a> Fragment<'a> {
    /// A legacy `delta.function_call` (the pre-`tools` API): its choice's
    /// one legacy call, placed in [`CallSlots`] of its own (after the
    /// `tool_calls`) at `index` 0 without an id, so every delta continues
    /// that one call and its name is read by the rule of every streamed
    /// call ([`CallSlots::name`]: a name repeated in every fragment is
    /// read once). Its `arguments` text, when a string.
    pub fn legacy(name: Option<&'a str>, arguments: Option<&'a str>) -> Fragment<'a> {
        Fragment {
            index: Some(0),
            index_filled: false,
            position: 0,
            id: None,
            name: name.filter(|n| !n.is_empty()),
            arguments,
        }
    }
}

/// Where a fragment goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// A call.
    Call {
        /// Its number, in arrival order.
        n: usize,
        /// This fragment began it.
        new: bool,
    },
    /// It would begin one call more than the cap given.
    Capped,
    /// It cannot be placed unambiguously ([`UNPLACEABLE`]).
    Unplaceable,
}

/// Why a fragment is [`Placed::Unplaceable`].
pub const UNPLACEABLE: &str = "a tool-call delta without `index` adds arguments to a call whose arguments are already whole JSON (neither that call's continuation nor a new call)";

/// The calls of one streamed choice, told apart by their fragments.
#[derive(Debug, Default)]
pub struct CallSlots {
    calls: Vec<Slot>,
    /// The latest call at each place (`index`, else position).
    latest: HashMap<u64, usize>,
    /// Calls by `id`.
    ids: HashMap<String, usize>,
    /// Wire indexes that distinct calls (by `id`) shared.
    reused: Vec<u64>,
}

#[derive(Debug, Default)]
struct Slot {
    place: u64,
    /// How many calls at `place` came before it.
    reuse: u32,
    has_id: bool,
    /// Its name: the first name piece, and any later piece that is not the
    /// name so far repeated.
    name: String,
    shape: JsonShape,
}

impl CallSlots {
    /// Places fragment `f`; a call it would begin past `cap` calls is
    /// [`Placed::Capped`] (nothing is recorded then).
    pub fn place(&mut self, f: &Fragment, cap: usize) -> Placed {
        let known = f.id.and_then(|id| self.ids.get(id)).copied();
        let (n, new) = match known {
            Some(n) => (n, false),
            None => {
                let place = f.index.unwrap_or(f.position);
                // The latest call at this place, and whether this fragment
                // begins the next one there.
                let (at, next) = match self.latest.get(&place).copied() {
                    None => (None, true),
                    Some(p) => {
                        let at = &self.calls[p];
                        let whole = at.shape.is_complete();
                        let by_id = f.id.is_some() && at.has_id;
                        let whole_delta = (f.index.is_none() || f.index_filled)
                            && !at.name.is_empty()
                            && f.arguments.is_some_and(|a| !a.is_empty());
                        if f.name.is_some() && whole && (by_id || whole_delta) {
                            if f.index.is_some() && by_id && !self.reused.contains(&place) {
                                self.reused.push(place);
                            }
                            (Some(p), true)
                        } else if f.index.is_none()
                            && whole
                            && f.arguments.is_some_and(|a| !a.trim().is_empty())
                        {
                            return Placed::Unplaceable;
                        } else {
                            (Some(p), false)
                        }
                    }
                };
                match (at, next) {
                    (Some(p), false) => (p, false),
                    _ => {
                        if self.calls.len() >= cap {
                            return Placed::Capped;
                        }
                        let reuse = at.map_or(0, |p| self.calls[p].reuse.saturating_add(1));
                        self.calls.push(Slot {
                            place,
                            reuse,
                            ..Slot::default()
                        });
                        let n = self.calls.len() - 1;
                        self.latest.insert(place, n);
                        (n, true)
                    }
                }
            }
        };
        if let Some(id) = f.id {
            self.ids.entry(id.to_string()).or_insert(n);
        }
        let call = &mut self.calls[n];
        call.has_id |= f.id.is_some();
        if let Some(name) = f.name
            && call.name != name
        {
            call.name.push_str(name);
        }
        if let Some(a) = f.arguments {
            call.shape.feed(a);
        }
        Placed::Call { n, new }
    }

    /// Call `n`'s place (`index`, else position) and how many calls at that
    /// place came before it: the calls are listed in this order.
    pub fn key(&self, n: usize) -> (u64, u32) {
        self.calls.get(n).map_or((0, 0), |c| (c.place, c.reuse))
    }

    /// Call `n`'s name: its first name piece, then every later piece that
    /// is not that name repeated (MiniMax through NVIDIA NIM repeats the
    /// whole name in every fragment), joined: a second name is one longer
    /// name, never a rename its arguments could run under.
    pub fn name(&self, n: usize) -> &str {
        self.calls.get(n).map_or("", |c| c.name.as_str())
    }

    /// How many calls were begun.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether no call was begun.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Wire indexes that distinct calls (by `id`) shared.
    pub fn reused(&self) -> &[u64] {
        &self.reused
    }
}

/// Whether a JSON text fed in pieces has closed its outermost object or
/// array: brackets counted outside strings, in one pass over each piece
/// (linear however many fragments there are).
#[derive(Debug, Default)]
pub(crate) struct JsonShape {
    depth: usize,
    in_string: bool,
    escaped: bool,
    closed: bool,
}

impl JsonShape {
    /// Reads the next piece.
    pub(crate) fn feed(&mut self, text: &str) {
        for b in text.bytes() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    self.closed = false;
                }
                b'}' | b']' if self.depth > 0 => {
                    self.depth -= 1;
                    self.closed = self.depth == 0;
                }
                _ => {}
            }
        }
    }

    /// Whether the outermost object or array has closed.
    pub(crate) fn is_complete(&self) -> bool {
        self.closed && self.depth == 0 && !self.in_string
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag<'a>(
        index: Option<u64>,
        id: Option<&'a str>,
        name: Option<&'a str>,
        arguments: Option<&'a str>,
    ) -> Fragment<'a> {
        Fragment {
            index,
            position: 0,
            id,
            name,
            arguments,
            ..Fragment::default()
        }
    }

    fn call(p: Placed) -> (usize, bool) {
        match p {
            Placed::Call { n, new } => (n, new),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn whole_indexless_calls_without_ids_are_calls_of_their_own() {
        let mut s = CallSlots::default();
        let a = frag(None, None, Some("w"), Some(r#"{"city":"A"}"#));
        let b = frag(None, None, Some("t"), Some(r#"{"tz":"UTC"}"#));
        assert_eq!(call(s.place(&a, 10)), (0, true));
        assert_eq!(call(s.place(&b, 10)), (1, true));
        assert_eq!((s.key(0), s.key(1)), ((0, 0), (0, 1)));
        assert_eq!((s.name(0), s.name(1)), ("w", "t"));
        // With an index, the index says which call it is: no new call
        // without a new id (the arguments join, malformed).
        let mut s = CallSlots::default();
        let a = frag(Some(0), None, Some("w"), Some("{}"));
        assert_eq!(call(s.place(&a, 10)), (0, true));
        assert_eq!(call(s.place(&a, 10)), (0, false));
        assert_eq!(s.name(0), "w");
    }

    #[test]
    fn indexless_arguments_after_whole_arguments_cannot_be_placed() {
        let mut s = CallSlots::default();
        s.place(&frag(None, None, Some("w"), Some("{}")), 10);
        assert_eq!(
            s.place(&frag(None, None, None, Some("{}")), 10),
            Placed::Unplaceable
        );
        // Whitespace, or no text, adds nothing a call could run with.
        assert_eq!(
            call(s.place(&frag(None, None, None, Some(" ")), 10)),
            (0, false)
        );
        assert_eq!(
            call(s.place(&frag(None, None, Some("w"), None), 10)),
            (0, false)
        );
        // A new call past the cap.
        assert_eq!(
            s.place(&frag(None, None, Some("x"), Some("{}")), 1),
            Placed::Capped
        );
    }

    #[test]
    fn a_different_name_joins_a_repeated_one_does_not() {
        let mut s = CallSlots::default();
        s.place(&frag(Some(0), Some("a"), Some("w"), Some("")), 10);
        s.place(&frag(Some(0), Some("a"), Some("w"), Some("{")), 10);
        s.place(&frag(Some(0), Some("b"), Some("rm"), Some("}")), 10);
        assert_eq!(s.len(), 1);
        assert_eq!(s.name(0), "wrm");
    }

    #[test]
    fn a_filled_in_index_starts_a_call_as_no_index_does_and_is_never_unplaceable() {
        let filled = |id, name, arguments| Fragment {
            index_filled: true,
            ..frag(Some(0), id, name, arguments)
        };
        let mut s = CallSlots::default();
        let a = filled(None, Some("w"), Some(r#"{"city":"A"}"#));
        let b = filled(None, Some("w"), Some(r#"{"city":"B"}"#));
        assert_eq!(call(s.place(&a, 10)), (0, true));
        assert_eq!(call(s.place(&b, 10)), (1, true));
        // Listed at index 0, in arrival order; not a reused index.
        assert_eq!((s.key(0), s.key(1)), ((0, 0), (0, 1)));
        assert!(s.reused().is_empty());
        // Argument text without a name after whole arguments continues the
        // call (it fails to parse there), never unplaceable.
        assert_eq!(
            call(s.place(&filled(None, None, Some(r#"{"city":"C"}"#)), 10)),
            (1, false)
        );
        // A name without argument text, or before the call is whole, does
        // not start one.
        let mut s = CallSlots::default();
        s.place(&filled(None, Some("w"), Some(r#"{"city":"#)), 10);
        assert_eq!(
            call(s.place(&filled(None, Some("w"), Some(r#""A"}"#)), 10)),
            (0, false)
        );
        assert_eq!(
            call(s.place(&filled(None, Some("w"), Some("")), 10)),
            (0, false)
        );
        assert_eq!(s.name(0), "w");
    }

    #[test]
    fn a_legacy_function_call_is_one_call_named_by_the_same_rule() {
        let mut s = CallSlots::default();
        for (i, (name, args)) in [
            (Some("get_weather"), Some("")),
            (Some("get_weather"), Some(r#"{"city":"Paris"}"#)),
            // Whole arguments again, and another name: still that call.
            (Some("get_weather"), Some("{}")),
            (Some("rm"), None),
            (Some(""), None),
        ]
        .into_iter()
        .enumerate()
        {
            let first = i == 0;
            assert_eq!(
                s.place(&Fragment::legacy(name, args), 1),
                Placed::Call { n: 0, new: first }
            );
        }
        assert_eq!(s.len(), 1);
        assert_eq!(s.name(0), "get_weatherrm");
    }
}
