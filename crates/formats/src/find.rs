//! Finding fixed needles in linear time: the one memoized finder every
//! extractor and the reasoning spans use. A leaf module (it depends on
//! nothing else in the crate), so `input → reasoning → find` has no cycle;
//! `util` re-exports it.

use memchr::memmem::Finder;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// Byte offsets of every occurrence of `needle` in `haystack`, in order
/// (non-overlapping, `memchr::memmem`). An empty needle finds nothing.
pub fn find_all<'a>(haystack: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let hay = haystack.as_bytes();
    let mut pos = 0usize;
    let empty = needle.is_empty();
    std::iter::from_fn(move || {
        if empty || pos > hay.len() {
            return None;
        }
        let at = pos + finder.find(&hay[pos..])?;
        pos = at + finder.needle().len();
        Some(at)
    })
}

/// The first occurrence of `needle` at or after `from`.
pub fn find_from(haystack: &str, needle: &str, from: usize) -> Option<usize> {
    let hay = haystack.as_bytes().get(from..)?;
    if hay.len() < 64 {
        // memchr's one-off search: Rabin-Karp, nothing to build.
        return memchr::memmem::find(hay, needle.as_bytes()).map(|i| from + i);
    }
    finder(needle).find(hay).map(|i| from + i)
}

/// A finder for a fixed needle, built once per process on first use: for
/// the markers an extractor searches for in every output, where even the
/// thread's cache lookup in [`finder`] (hash, probe, reference count) costs
/// as much as searching a short output.
#[derive(Debug)]
pub struct StaticFinder {
    needle: &'static str,
    built: std::sync::OnceLock<Finder<'static>>,
}

impl StaticFinder {
    /// A finder for `needle`, built at its first search.
    pub const fn new(needle: &'static str) -> StaticFinder {
        StaticFinder {
            needle,
            built: std::sync::OnceLock::new(),
        }
    }

    /// The needle it finds.
    pub const fn needle(&self) -> &'static str {
        self.needle
    }

    /// The first occurrence of the needle in `haystack` at or after `from`
    /// (what [`find_from`] returns).
    pub fn find_from(&self, haystack: &str, from: usize) -> Option<usize> {
        let hay = haystack.as_bytes().get(from..)?;
        self.built
            .get_or_init(|| Finder::new(self.needle.as_bytes()))
            .find(hay)
            .map(|i| from + i)
    }
}

/// How many needles each thread keeps a built finder for (beyond that the
/// cache starts over: needles are mostly fixed markup, but some are built
/// from the output, e.g. a closing tag naming a parsed name).
pub(crate) const FINDER_CACHE_LIMIT: usize = 256;

thread_local! {
    /// Built `memmem` finders by needle. Building one (choosing the SIMD
    /// searcher, Two-Way factorization, prefilter) costs more than searching
    /// a typical few-KB output with it, and every extractor searches for the
    /// same markers in every output.
    pub(crate) static FINDERS: RefCell<HashMap<Vec<u8>, Arc<Finder<'static>>, FnvBuild>> =
        RefCell::new(HashMap::with_hasher(FnvBuild::default()));
}

/// FNV-1a: the cache is looked up for every needle of every scan, and
/// SipHash's setup costs more than hashing a few markup bytes. Needles built
/// from the output could collide on purpose, but the cache never holds more
/// than [`FINDER_CACHE_LIMIT`] of them, which bounds a lookup.
type FnvBuild = std::hash::BuildHasherDefault<Fnv>;

/// The FNV-1a hasher state.
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A `memmem` finder for `needle`, built once per thread and reused.
pub fn finder(needle: &str) -> Arc<Finder<'static>> {
    let build = || Arc::new(Finder::new(needle.as_bytes()).into_owned());
    FINDERS
        .try_with(|cell| {
            let Ok(mut map) = cell.try_borrow_mut() else {
                return build();
            };
            if let Some(found) = map.get(needle.as_bytes()) {
                return Arc::clone(found);
            }
            if map.len() >= FINDER_CACHE_LIMIT {
                map.clear();
            }
            let built = build();
            map.insert(needle.as_bytes().to_vec(), Arc::clone(&built));
            built
        })
        // The thread is exiting (its locals are gone): build one.
        .unwrap_or_else(|_| build())
}

/// Finds the next occurrence of a fixed needle at or after a moving
/// position, remembering the last hit so that a scan that asks again and
/// again (one closing tag per opener) stays linear overall.
#[derive(Clone, Debug)]
pub struct NextFinder<'n> {
    /// Fetched from the thread's cache at the first search over 64 bytes:
    /// many scans make a finder (a closer) that they never use.
    finder: Option<Arc<Finder<'static>>>,
    /// A process-wide finder to use instead of the thread's cache.
    fixed: Option<&'static StaticFinder>,
    needle: &'n str,
    /// `Some(Some(p))`: the next hit is `p`; `Some(None)`: none after the last search start.
    cached: Option<(usize, Option<usize>)>,
}

impl<'n> NextFinder<'n> {
    /// A finder for `needle`.
    pub fn new(needle: &'n str) -> NextFinder<'n> {
        NextFinder {
            finder: None,
            fixed: None,
            needle,
            cached: None,
        }
    }

    /// A finder for the needle of `fixed`, searching with it (no cache
    /// lookup at all).
    pub fn fixed(fixed: &'static StaticFinder) -> NextFinder<'static> {
        NextFinder {
            finder: None,
            fixed: Some(fixed),
            needle: fixed.needle,
            cached: None,
        }
    }

    /// The first occurrence at or after `from` in `text` (always the same
    /// text for one finder).
    pub fn next(&mut self, text: &str, from: usize) -> Option<usize> {
        if let Some((searched_from, hit)) = self.cached
            && searched_from <= from
        {
            match hit {
                None => return None,
                Some(p) if p >= from => return Some(p),
                Some(_) => {}
            }
        }
        if let Some(fixed) = self.fixed {
            let hit = fixed.find_from(text, from);
            self.cached = Some((from, hit));
            return hit;
        }
        let needle = self.needle;
        let built = &mut self.finder;
        let hit = text
            .as_bytes()
            .get(from..)
            .and_then(|h| match built {
                // memchr's one-off search: Rabin-Karp, nothing to build.
                None if h.len() < 64 => memchr::memmem::find(h, needle.as_bytes()),
                _ => built.get_or_insert_with(|| finder(needle)).find(h),
            })
            .map(|i| from + i);
        self.cached = Some((from, hit));
        hit
    }
}
