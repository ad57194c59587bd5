//! Per-node inputs of a process: one value everywhere, or one per node.
//!
//! The recipe's scalar sources (constant, image, noise) are resolved by the stages into
//! these; processes never see a file path or a noise description.

use rayon::prelude::*;

/// Values compared at once by [`NodeValues::from_slice`] (a vectorised block).
const BLOCK: usize = 256;
/// Values per parallel task of [`NodeValues::from_slice`], and the length from which it
/// goes parallel.
const PARALLEL_BLOCK: usize = 1 << 16;
const PARALLEL_LEN: usize = 1 << 18;

/// A per-node input that is often the same everywhere (erodibility, uplift, rain).
#[derive(Clone, Copy, Debug)]
pub enum NodeValues<'a> {
    /// One value for every node.
    Uniform(f32),
    /// One value per node.
    PerNode(&'a [f32]),
}

impl<'a> NodeValues<'a> {
    /// `Uniform` when every value of `values` is the same (bit for bit), else `PerNode`.
    ///
    /// Processes ask this every step of a whole map (a 2048² erodibility is 16 MB), so the
    /// values are compared a block at a time in a loop the compiler vectorises, the blocks
    /// of a long map in parallel; the first block that differs ends the search.
    pub fn from_slice(values: &'a [f32]) -> Self {
        let Some(&v) = values.first() else {
            return NodeValues::PerNode(values);
        };
        let bits = v.to_bits();
        let same = |block: &[f32]| block.iter().fold(true, |s, x| s & (x.to_bits() == bits));
        let uniform = if values.len() >= PARALLEL_LEN {
            values
                .par_chunks(PARALLEL_BLOCK)
                .all(|c| c.chunks(BLOCK).all(same))
        } else {
            values.chunks(BLOCK).all(same)
        };
        if uniform {
            NodeValues::Uniform(v)
        } else {
            NodeValues::PerNode(values)
        }
    }

    /// The value at `node`.
    #[inline(always)]
    pub fn at(&self, node: usize) -> f32 {
        match self {
            NodeValues::Uniform(v) => *v,
            NodeValues::PerNode(v) => v[node],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NodeValues;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// The definition, one value at a time.
    fn uniform_naive(values: &[f32]) -> bool {
        values
            .first()
            .is_some_and(|v| values.iter().all(|x| x.to_bits() == v.to_bits()))
    }

    #[test]
    fn from_slice_is_uniform_exactly_when_every_bit_pattern_is_the_same() {
        let mut rng = StdRng::seed_from_u64(7);
        // Values that compare equal as floats but differ in bits, and NaNs, among them.
        let odd = [
            0.0f32,
            -0.0,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7fc0_0001),
            1.0,
        ];
        for len in [
            1usize,
            2,
            255,
            256,
            257,
            4097,
            1 << 18,
            (1 << 18) + 3,
            1 << 20,
        ] {
            for trial in 0..6 {
                let v = odd[trial % odd.len()];
                let mut values = vec![v; len];
                match NodeValues::from_slice(&values) {
                    NodeValues::Uniform(u) => assert_eq!(u.to_bits(), v.to_bits()),
                    NodeValues::PerNode(_) => panic!("len {len}: {v} everywhere is uniform"),
                }
                // One value changed anywhere (the ends included) makes it per node.
                let at = match trial {
                    0 => len - 1,
                    1 => len / 2,
                    _ => rng.random_range(0..len),
                };
                values[at] = odd[(trial + 1 + rng.random_range(0..odd.len() - 1)) % odd.len()];
                let uniform = matches!(NodeValues::from_slice(&values), NodeValues::Uniform(_));
                assert_eq!(
                    uniform,
                    uniform_naive(&values),
                    "len {len}, changed at {at}"
                );
                if len > 1 {
                    assert!(!uniform, "len {len}, changed at {at}");
                }
            }
        }
        assert!(matches!(
            NodeValues::from_slice(&[]),
            NodeValues::PerNode(_)
        ));
    }
}
