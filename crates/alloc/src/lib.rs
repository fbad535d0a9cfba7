//! The global allocator of every toolgate process (the binary, the Python
//! module, the benches): mimalloc, asked the way it is fastest.
//!
//! The `mimalloc` crate hands every Rust allocation to
//! `mi_malloc_aligned(size, align)`. In mimalloc 3 that call takes its fast
//! path only when a free block of the size class happens to sit at the
//! alignment, and otherwise falls back to a generic path that serves the
//! block the plain way only for power-of-two sizes: a 1,500-byte `Vec<u8>`
//! (alignment 1) is over-allocated and offset, at several times the
//! instructions of a plain `mi_malloc` (BENCHMARKS.md, "The allocator
//! asked the plain way"; the same finding is purpleprotocol/mimalloc_rust
//! pull request 170). [`Mimalloc`] asks for a plain block whenever a plain
//! block is aligned enough, which is what Rust's own `System` allocator
//! does with `malloc`, and keeps the aligned calls for the rest.
//!
//! When a plain block is aligned enough: mimalloc rounds every size class
//! to a whole number of words and, on targets whose `max_align_t` is two
//! words (x86-64, aarch64), size classes of two words and up to whole
//! double words; every page's first block is [`MAX_ALIGN`]-aligned. So a
//! block of `size` bytes is aligned to `min(MAX_ALIGN, the size class's
//! power-of-two factor)`, and that is at least `align` whenever `align <=
//! MAX_ALIGN` and `align <= size` (an alignment is a power of two: `align
//! <= size` puts `size` in a class that is a multiple of `align`). The test
//! `every_layout_is_aligned` allocates, grows and frees across sizes and
//! alignments around every boundary and checks each address.

#![no_std]

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;

/// mimalloc's `MI_MAX_ALIGN_SIZE` (`sizeof(max_align_t)`): the alignment of
/// every plain block of at least this size.
pub const MAX_ALIGN: usize = 16;

/// mimalloc as the global allocator: plain calls where they are aligned
/// enough (see the module documentation), aligned calls otherwise.
pub struct Mimalloc;

/// Whether a plain block of `size` bytes is aligned to `align`.
#[inline]
fn plain(size: usize, align: usize) -> bool {
    align <= MAX_ALIGN && align <= size
}

#[allow(unsafe_code)]
mod imp {
    use super::{GlobalAlloc, Layout, Mimalloc, c_void, plain};
    use libmimalloc_sys as ffi;

    // SAFETY (the whole impl): every pointer returned comes from mimalloc
    // for at least `layout.size()` bytes at `layout.align()` (plain calls
    // only where `plain` holds, see the module documentation), and every
    // pointer given back was returned by this allocator: `mi_free` and
    // `mi_realloc` take blocks of either kind of call.
    unsafe impl GlobalAlloc for Mimalloc {
        #[inline]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: see the impl.
            unsafe {
                if plain(layout.size(), layout.align()) {
                    ffi::mi_malloc(layout.size()).cast()
                } else {
                    ffi::mi_malloc_aligned(layout.size(), layout.align()).cast()
                }
            }
        }

        #[inline]
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            // SAFETY: see the impl.
            unsafe {
                if plain(layout.size(), layout.align()) {
                    ffi::mi_zalloc(layout.size()).cast()
                } else {
                    ffi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
                }
            }
        }

        #[inline]
        unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
            // SAFETY: see the impl.
            unsafe { ffi::mi_free(ptr.cast::<c_void>()) }
        }

        #[inline]
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: see the impl.
            unsafe {
                if plain(new_size, layout.align()) {
                    ffi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
                } else {
                    ffi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// Sizes around every size-class and alignment boundary that matters:
    /// below, at and past each power of two, the odd multiples of a word
    /// (24, 40, 56: classes that are not double words on their own), and
    /// sizes past the small-object limit.
    fn sizes() -> Vec<usize> {
        let mut s: Vec<usize> = (1..=80).collect();
        for p in 4..=17 {
            let n = 1usize << p;
            s.extend([n - 8, n - 1, n, n + 1, n + 8, n + n / 2]);
        }
        s.extend([1500, 3000, 100_000, 1 << 20]);
        s
    }

    #[allow(unsafe_code)]
    #[test]
    fn every_layout_is_aligned() {
        let a = Mimalloc;
        let mut plain_seen = 0;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in sizes() {
                let layout = Layout::from_size_align(size, align).expect("a power of two");
                plain_seen += usize::from(plain(size, align));
                // SAFETY: the layout's size is not zero; every pointer is
                // checked for null, written within its size and freed once.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc {size} at {align}");
                    p.write_bytes(0xa5, size);
                    let z = a.alloc_zeroed(layout);
                    assert!(!z.is_null());
                    assert_eq!(z as usize % align, 0, "alloc_zeroed {size} at {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                    // Grown, then shrunk: the address aligned, the bytes kept.
                    let grown = size * 3 + 5;
                    let q = a.realloc(p, layout, grown);
                    assert!(!q.is_null());
                    assert_eq!(q as usize % align, 0, "realloc {size}→{grown} at {align}");
                    assert!((0..size).all(|i| *q.add(i) == 0xa5));
                    let shrunk = size.div_ceil(2);
                    let grown = Layout::from_size_align(grown, align).expect("a power of two");
                    let r = a.realloc(q, grown, shrunk);
                    assert!(!r.is_null());
                    assert_eq!(r as usize % align, 0, "realloc →{shrunk} at {align}");
                    assert!((0..shrunk).all(|i| *r.add(i) == 0xa5));
                    a.dealloc(
                        r,
                        Layout::from_size_align(shrunk, align).expect("a power of two"),
                    );
                }
            }
        }
        // The plain calls were taken (the test checks them, not only the
        // aligned ones).
        assert!(plain_seen > 500, "{plain_seen}");
    }

    #[test]
    fn plain_only_where_a_plain_block_is_aligned_enough() {
        assert!(plain(1, 1));
        assert!(plain(1500, 1));
        assert!(plain(24, 8));
        assert!(plain(16, 16));
        assert!(plain(48, 16));
        assert!(!plain(8, 16), "a 16-aligned request smaller than 16 bytes");
        assert!(!plain(64, 32), "past max_align_t");
        assert!(!plain(0, 1), "zero bytes");
    }
}
