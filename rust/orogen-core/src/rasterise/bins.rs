//! Items sorted into bins as compressed rows: the one bin builder the rasterisers share
//! (triangles by band of rows, nodes by square cell, primitives by square cell).
//!
//! [`BinLists::build`] asks each item for its bins once, over chunks of items in
//! parallel, then counts and scatters them (a stable counting sort): every bin lists its
//! items in increasing order, whatever the thread count.

use rayon::prelude::*;

use crate::error::{OrogenError, Result};
use crate::state::buffer;

/// Items per chunk asked for their bins by one thread.
const CHUNK: usize = 1 << 13;

/// Items in bins, compressed rows: bin `b` holds `items[offsets[b]..offsets[b + 1]]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct BinLists {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl BinLists {
    /// Items `0..count` sorted into `bins` bins: `bins_of(k, add)` calls `add(b)` once for
    /// each bin `b < bins` item `k` belongs to. Each bin lists its items in increasing
    /// order. Errors naming `what` when memory runs out or there are more than 2³² − 1
    /// entries.
    pub(crate) fn build(
        bins: usize,
        count: usize,
        what: &str,
        bins_of: impl Fn(usize, &mut dyn FnMut(usize)) + Sync,
    ) -> Result<BinLists> {
        if count > u32::MAX as usize {
            return Err(OrogenError::invalid(
                what,
                format!("{count} items is more than 2^32 - 1"),
            ));
        }
        // Each chunk's bins, item by item, and how many each item has.
        let chunks: Vec<(Vec<u32>, Vec<u32>)> = (0..count.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let range = c * CHUNK..((c + 1) * CHUNK).min(count);
                let mut entries = Vec::with_capacity(range.len());
                let mut per_item = Vec::with_capacity(range.len());
                for k in range {
                    let before = entries.len();
                    bins_of(k, &mut |b| entries.push(b as u32));
                    per_item.push((entries.len() - before) as u32);
                }
                (entries, per_item)
            })
            .collect();
        let total: usize = chunks.iter().map(|(e, _)| e.len()).sum();
        if total > u32::MAX as usize {
            return Err(OrogenError::invalid(
                what,
                format!("{total} bin entries is more than 2^32 - 1"),
            ));
        }
        let mut offsets: Vec<u32> = buffer(bins + 1, 0, what)?;
        for (entries, _) in &chunks {
            for &b in entries {
                offsets[b as usize + 1] += 1;
            }
        }
        for b in 0..bins {
            offsets[b + 1] += offsets[b];
        }
        let mut items: Vec<u32> = buffer(total, 0, what)?;
        let mut fill: Vec<u32> = buffer(bins, 0, what)?;
        fill.copy_from_slice(&offsets[..bins]);
        for (c, (entries, per_item)) in chunks.iter().enumerate() {
            let mut e = entries.iter();
            for (j, &n) in per_item.iter().enumerate() {
                let k = (c * CHUNK + j) as u32;
                for &b in e.by_ref().take(n as usize) {
                    items[fill[b as usize] as usize] = k;
                    fill[b as usize] += 1;
                }
            }
        }
        Ok(BinLists { offsets, items })
    }

    /// The items of bin `b`, in increasing order (unless [`BinLists::sort_each_by`]).
    #[inline]
    pub(crate) fn bin(&self, b: usize) -> &[u32] {
        &self.items[self.offsets[b] as usize..self.offsets[b + 1] as usize]
    }

    /// Sorts each bin's items by `key` (ties by index), bins in parallel.
    pub(crate) fn sort_each_by(&mut self, key: impl Fn(u32) -> f64 + Sync) {
        let offsets = &self.offsets;
        let mut rest: &mut [u32] = &mut self.items;
        let mut slices = Vec::with_capacity(offsets.len().saturating_sub(1));
        for w in offsets.windows(2) {
            let (head, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
            slices.push(head);
            rest = tail;
        }
        slices.into_par_iter().for_each(|s| {
            s.sort_by(|&i, &j| key(i).total_cmp(&key(j)).then(i.cmp(&j)));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_each_bins_items_in_order() {
        // Item k in bins k % 7 and (k * 3) % 11, for more items than one chunk.
        let count = 3 * CHUNK + 17;
        let bins_of = |k: usize, add: &mut dyn FnMut(usize)| {
            add(k % 7);
            if (k * 3) % 11 != k % 7 {
                add((k * 3) % 11);
            }
        };
        let lists = BinLists::build(11, count, "test", bins_of).unwrap();
        for b in 0..11 {
            let want: Vec<u32> = (0..count)
                .filter(|&k| k % 7 == b || (k * 3) % 11 == b)
                .map(|k| k as u32)
                .collect();
            assert_eq!(lists.bin(b), &want[..], "bin {b}");
        }
    }

    #[test]
    fn empty_and_sorted() {
        let lists = BinLists::build(3, 0, "test", |_, _| {}).unwrap();
        assert!((0..3).all(|b| lists.bin(b).is_empty()));
        let mut lists = BinLists::build(2, 10, "test", |k, add| add(k % 2)).unwrap();
        lists.sort_each_by(|k| -(k as f64));
        assert_eq!(lists.bin(0), &[8, 6, 4, 2, 0]);
        assert_eq!(lists.bin(1), &[9, 7, 5, 3, 1]);
    }
}
