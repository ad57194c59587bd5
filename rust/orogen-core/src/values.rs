//! Per-node inputs of a process: one value everywhere, or one per node.
//!
//! The recipe's scalar sources (constant, image, noise) are resolved by the stages into
//! these; processes never see a file path or a noise description.

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
    pub fn from_slice(values: &'a [f32]) -> Self {
        match values.first() {
            Some(&v) if values.iter().all(|x| x.to_bits() == v.to_bits()) => NodeValues::Uniform(v),
            _ => NodeValues::PerNode(values),
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
