//! # One file per format
//!
//! Every built-in mode is one file here, `format/<mode>.rs`, holding one
//! [`Def`]: the format's row of the [format table](crate::table) (its
//! wire description), the extractor that reads it, the model families
//! whose chat templates emit it, the built-in profile that makes it primary
//! and its position in the replay order. Where a format is an engine
//! configuration, the configuration lives in its file too, so each of its
//! distinctive tokens is spelled there and nowhere else; an irregular
//! format's file points at its hand-written extractor.
//!
//! Registration needs no other file: the crate's `build.rs` lists
//! `src/format/*.rs` and writes the `mod` lines and [`ALL`], ordered by each
//! file's `position`. Everything else is derived from [`ALL`]: the table
//! rows ([`crate::table::FORMATS`], shown by `toolgate formats`), the replay
//! order ([`crate::builtin`]), the model table of `auto`
//! ([`crate::models::FAMILIES`]) and the validator's built-in profiles
//! ([`profiles`]).
//!
//! Adding a format: a new `format/<mode>.rs` with a free `position`, a
//! fixture folder `transcripts/<mode>/` and its snapshots.

use crate::Extractor;
use crate::description::{Format, ModelFamily};

/// What a format file brings into scope.
#[allow(unused_imports)]
mod prelude {
    pub(crate) use super::{CALL_KEYS, Def, Group, NO_EXTRAS, Profile};
    pub(crate) use crate::Extractor;
    pub(crate) use crate::description::{Engine, Format, PayloadKind, StopToken, Triggers};
}

/// A row with none of the optional parts (no separator, tagged parameter,
/// prefilter triggers or strippable stop token). A format file names the
/// parts it has and ends its row with `..NO_EXTRAS`, so a row reads as what
/// is its own. The required parts here are empty placeholders a row always
/// overrides: `every_row_is_its_own` fails for a row that takes its name,
/// families, opener or conventions from here.
pub(crate) const NO_EXTRAS: Format = Format {
    name: "",
    families: "",
    engine: crate::description::Engine::JsonBlock,
    opener: "",
    separator: None,
    closers: &[],
    blocks: &[],
    parameter: None,
    openers: None,
    triggers: None,
    stop_token: None,
    payload: crate::description::PayloadKind::JsonCall,
    conventions: "",
};

/// Joins string constants at compile time, so a row's display strings are
/// built from the same token constants its engine configuration uses:
/// `cat!(SECTION, INVOKE, "NAME\">")`.
macro_rules! cat {
    ($($s:expr),+ $(,)?) => {{
        const LEN: usize = 0 $(+ $s.len())+;
        const BYTES: [u8; LEN] = {
            let mut out = [0u8; LEN];
            let mut at = 0;
            $({
                let b = $s.as_bytes();
                let mut i = 0;
                while i < b.len() {
                    out[at] = b[i];
                    at += 1;
                    i += 1;
                }
            })+
            out
        };
        match ::core::str::from_utf8(&BYTES) {
            Ok(s) => s,
            // Unreachable: the bytes are whole `&str`s laid end to end.
            Err(_) => panic!("cat!: not UTF-8"),
        }
    }};
}

include!(concat!(env!("OUT_DIR"), "/formats.rs"));

/// The call-object key conventions every JSON-call row shares.
pub(crate) const CALL_KEYS: &str =
    "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9)";

/// A built-in profile that makes a format its primary mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The profile's name (`gpt-oss` for `harmony`).
    pub name: &'static str,
    /// Where `toolgate profiles` lists it (`default` is 0).
    pub rank: u32,
}

/// The folder of engines a format's extractor belongs to (the engines'
/// own tests and the peer-corpus tests run one group at a time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// The seed modes and `native` ([`crate::irregular`]).
    Seed,
    /// [`crate::families::tagged`].
    Tagged,
    /// [`crate::families::jsonlike`].
    JsonLike,
}

/// The raw extractors (without the shared rules of [`crate::rules`]) of
/// `group`'s formats, in replay order.
pub fn group(group: Group) -> Vec<Box<dyn Extractor>> {
    ALL.iter()
        .filter(|d| d.group == group)
        .map(|d| (d.extractor)())
        .collect()
}

/// One built-in format: everything the project knows about it.
pub(crate) struct Def {
    /// Its place in the replay order (the order of `toolgate formats`,
    /// replay, labels and snapshots): ascending, unique, with gaps so a new
    /// format can go between two others. `build.rs` reads it from the
    /// source text to order [`ALL`]; the code reads it only in tests.
    #[cfg_attr(not(test), allow(dead_code))]
    pub position: u32,
    /// The extractor that reads it (its engine with its configuration).
    pub extractor: fn() -> Box<dyn Extractor>,
    /// The folder of engines its extractor belongs to.
    pub group: Group,
    /// Lowercase fragments of the model names whose families emit it
    /// ([`crate::models::mode_for_model`]).
    pub models: &'static [&'static str],
    /// Whether it reads a bare payload (a JSON call object, a pythonic list)
    /// without a family's own markup ([`crate::models::BARE_READERS`]).
    pub bare_reader: bool,
    /// The built-in model profile that makes it primary, if any.
    pub profile: Option<Profile>,
    /// Its row of the format table.
    pub row: Format,
}

/// The built-in profiles as (profile name, primary mode), in listing order
/// (`default` first).
pub fn profiles() -> Vec<(&'static str, &'static str)> {
    let mut found: Vec<(u32, &'static str, &'static str)> = ALL
        .iter()
        .filter_map(|d| d.profile.map(|p| (p.rank, p.name, d.row.name)))
        .collect();
    found.sort_unstable();
    found
        .into_iter()
        .map(|(_, name, mode)| (name, mode))
        .collect()
}

/// How many formats are bare readers.
const BARE_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < ALL.len() {
        if ALL[i].bare_reader {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The modes that read a bare payload ([`Def::bare_reader`]), in replay order.
pub(crate) const BARE_READERS: [&str; BARE_COUNT] = {
    let mut out = [""; BARE_COUNT];
    let (mut i, mut k) = (0, 0);
    while i < ALL.len() {
        if ALL[i].bare_reader {
            out[k] = ALL[i].row.name;
            k += 1;
        }
        i += 1;
    }
    out
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_names_its_own_mode_and_positions_ascend() {
        for pair in ALL.windows(2) {
            assert!(pair[0].position < pair[1].position);
        }
        for d in ALL {
            assert_eq!((d.extractor)().name(), d.row.name);
        }
    }

    #[test]
    fn every_row_is_its_own() {
        for d in ALL {
            let r = &d.row;
            for (field, value) in [
                ("families", r.families),
                ("opener", r.opener),
                ("conventions", r.conventions),
            ] {
                assert!(!value.is_empty(), "{}: {field} is empty", r.name);
            }
        }
    }

    #[test]
    fn profiles_have_unique_names_and_ranks() {
        let mut ranks: Vec<u32> = ALL
            .iter()
            .filter_map(|d| d.profile.map(|p| p.rank))
            .collect();
        let n = ranks.len();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), n);
        let names: Vec<&str> = profiles().iter().map(|p| p.0).collect();
        assert_eq!(names[0], "default");
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n}");
        }
    }

    #[test]
    fn cat_joins_constants_at_compile_time() {
        const A: &str = "<a>";
        const JOINED: &str = cat!(A, "x", A);
        assert_eq!(JOINED, "<a>x<a>");
    }

    #[test]
    fn no_model_fragment_names_two_modes() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                for f in a.models {
                    assert!(
                        !b.models.contains(f),
                        "{f}: {} and {}",
                        a.row.name,
                        b.row.name
                    );
                }
            }
        }
    }
}
