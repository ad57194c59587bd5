//! The node sets every process walks: anything with neighbours, link lengths, node areas,
//! positions and an outlet mask.
//!
//! Routing, lakes, accumulation and the eroders are written once over [`Neighbourhood`],
//! so the regular grid ([`RasterGrid`]), the random-point stream graph (Cordonnier 2016's
//! graph G, `crate::mesh`) and the sphere share them, as fastscapelib's grids share its
//! flow operators. Processes take areas and link lengths from here, never a cell size.
//!
//! Outlets are a node mask ([`Neighbourhood::is_outlet`]): a raster builds it from its open
//! sides, a graph from its hull, and [`WithOutlets`] lays any mask over any neighbourhood.

mod outlets;
pub(crate) mod raster;

use glam::DVec2;
use rayon::prelude::*;

pub use outlets::OutletParams;
pub use raster::{RasterGrid, Side, SELF_LINK};

/// A set of nodes with neighbours: what flow routing needs to know about a grid or a graph.
pub trait Neighbourhood: Sync {
    /// Number of nodes (at most `u32::MAX - 1`).
    fn len(&self) -> usize;

    /// True when there is no node.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f(neighbour, distance)` for every neighbour of `node`, distance in metres,
    /// always in the same order.
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, f: F);

    /// True when `node` is an outlet (base level): water reaching it leaves the domain.
    /// The outlet mask: open raster sides, a graph's hull, or any mask ([`WithOutlets`]).
    fn is_outlet(&self, node: usize) -> bool;

    /// Horizontal area a node stands for, m² (a cell's area on a grid, a Voronoi cell's on
    /// a graph).
    fn node_area(&self, node: usize) -> f32;

    /// Where `node` stands on the plane, metres (a grid cell's centre is `(x, y)·cell_size`).
    fn position(&self, node: usize) -> DVec2;

    /// The shortest link between two neighbours, metres; `None` when no node has one.
    fn shortest_link(&self) -> Option<f32> {
        // A minimum is the same in any order, so the parallel reduction is exact.
        let m = (0..self.len())
            .into_par_iter()
            .map(|i| {
                let mut m = f32::INFINITY;
                self.for_each_neighbour(i, |_, d| m = m.min(d));
                m
            })
            .reduce(|| f32::INFINITY, f32::min);
        m.is_finite().then_some(m)
    }

    /// The regular grid this neighbourhood is, if it is one: routing then takes row-wise
    /// fast paths with the same results as the generic walk.
    fn as_raster(&self) -> Option<&RasterGrid> {
        None
    }

    /// Steepest-descent receiver of every node, in parallel (each node independent).
    /// Outlets (open boundary, or height `<= sea`) receive themselves. Otherwise the
    /// receiver is the neighbour of largest slope `(h_i - h_j) / d_ij > 0`, ties going to
    /// the lowest index; a node without a lower neighbour receives itself, or keeps its
    /// current receiver when `keep` (re-routing over a filled surface) or when it already
    /// receives itself then. `dist` gets the distance to the receiver (0 for itself).
    fn steepest_receivers(
        &self,
        heights: &[f32],
        sea: f32,
        receivers: &mut [u32],
        dist: &mut [f32],
        keep: bool,
    ) {
        descend_generic(self, heights, sea, receivers, dist, keep);
    }
}

/// The generic steepest-descent walk over every node, in parallel chunks (each node
/// independent, so the result does not depend on the thread count).
pub(crate) fn descend_generic<N: Neighbourhood + ?Sized>(
    nb: &N,
    heights: &[f32],
    sea: f32,
    receivers: &mut [u32],
    dist: &mut [f32],
    keep: bool,
) {
    const CHUNK: usize = 8192;
    receivers
        .par_chunks_mut(CHUNK)
        .zip(dist.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(k, (rs, ds))| {
            for (o, (r, d)) in rs.iter_mut().zip(ds.iter_mut()).enumerate() {
                descend_node(nb, heights, sea, k * CHUNK + o, r, d, keep);
            }
        });
}

/// One node of [`Neighbourhood::steepest_receivers`].
#[inline(always)]
pub(crate) fn descend_node<N: Neighbourhood + ?Sized>(
    nb: &N,
    heights: &[f32],
    sea: f32,
    i: usize,
    r: &mut u32,
    d: &mut f32,
    keep: bool,
) {
    let hi = heights[i];
    if hi <= sea || nb.is_outlet(i) || (keep && *r as usize == i) {
        *r = i as u32;
        *d = 0.0;
        return;
    }
    let mut best = 0.0f32;
    let mut best_j = u32::MAX;
    let mut best_d = 0.0f32;
    nb.for_each_neighbour(i, |j, dj| {
        let s = (hi - heights[j as usize]) / dj;
        if s > best || (s == best && s > 0.0 && j < best_j) {
            best = s;
            best_j = j;
            best_d = dj;
        }
    });
    if best_j != u32::MAX {
        *r = best_j;
        *d = best_d;
    } else if !keep {
        *r = i as u32;
        *d = 0.0;
    }
}

/// A shared neighbourhood (the stream graph several stages walk) is one too.
impl<N: Neighbourhood + Send> Neighbourhood for std::sync::Arc<N> {
    #[inline(always)]
    fn len(&self) -> usize {
        (**self).len()
    }

    #[inline(always)]
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, f: F) {
        (**self).for_each_neighbour(node, f)
    }

    #[inline(always)]
    fn is_outlet(&self, node: usize) -> bool {
        (**self).is_outlet(node)
    }

    #[inline(always)]
    fn node_area(&self, node: usize) -> f32 {
        (**self).node_area(node)
    }

    #[inline(always)]
    fn position(&self, node: usize) -> DVec2 {
        (**self).position(node)
    }

    fn shortest_link(&self) -> Option<f32> {
        (**self).shortest_link()
    }

    fn as_raster(&self) -> Option<&RasterGrid> {
        (**self).as_raster()
    }
}

/// Any neighbourhood with an outlet mask laid over it: a node is an outlet when the mask
/// says so or the inner neighbourhood does (e.g. nodata cells of a DEM, a painted sea).
#[derive(Clone, Debug)]
pub struct WithOutlets<N> {
    inner: N,
    mask: Vec<bool>,
}

impl<N: Neighbourhood> WithOutlets<N> {
    /// `mask` has one entry per node of `inner` (`None` when the lengths differ).
    pub fn new(inner: N, mask: Vec<bool>) -> Option<Self> {
        (mask.len() == inner.len()).then_some(WithOutlets { inner, mask })
    }

    /// The neighbourhood under the mask.
    pub fn inner(&self) -> &N {
        &self.inner
    }
}

impl<N: Neighbourhood> Neighbourhood for WithOutlets<N> {
    fn len(&self) -> usize {
        self.inner.len()
    }

    #[inline(always)]
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, f: F) {
        self.inner.for_each_neighbour(node, f)
    }

    #[inline(always)]
    fn is_outlet(&self, node: usize) -> bool {
        self.mask[node] || self.inner.is_outlet(node)
    }

    fn node_area(&self, node: usize) -> f32 {
        self.inner.node_area(node)
    }

    fn position(&self, node: usize) -> DVec2 {
        self.inner.position(node)
    }

    fn shortest_link(&self) -> Option<f32> {
        self.inner.shortest_link()
    }
}
