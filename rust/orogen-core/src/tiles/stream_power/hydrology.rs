//! The `Hydrology` stage's maps on one tile (issue #41), equal to the whole map's
//! [`Hydrology::compute`](crate::flow::hydrology::Hydrology::compute) cut to the tile: the
//! tile router's receivers, lakes and drainage (Barnes 2016 and 2017, as the tiled
//! stream-power step routes), FastFlow Algorithm 6's water surface down the routed
//! receivers with crossings resolved in rounds through the root (the exact chain's
//! rounds), and each cell's basin numbered as the whole map numbers its roots (outlets by
//! index, then pits by index), from per-row counts of roots: what crosses between tiles
//! grows with the tiles' sides, not their area.

use super::*;
use crate::flow::hydrology::{lakes_and_rivers, HydrologyMaps, Params as HydrologyParams};

const TAG_ROOTS_UP: u32 = 30;
const TAG_ROOTS_DOWN: u32 = 31;
const TAG_BASIN_UP: u32 = 32;
const TAG_BASIN_DOWN: u32 = 33;

impl TileStreamPower {
    /// A tile that only routes (no erosion): the heights of tile `rank` (row-major over its
    /// interior) and its precipitation (m/yr), for [`TileStreamPower::hydrology`].
    pub fn router(
        layout: &TileLayout,
        rank: usize,
        outlets: &OutletParams,
        lakes: SinkMode,
        heights: Vec<f32>,
        precipitation: Option<Vec<f32>>,
        field: &str,
    ) -> Result<Self> {
        let n = heights.len();
        let params = Params {
            lakes,
            ..Params::default()
        };
        let inputs = TileInputs {
            heights,
            k: vec![0.0; n],
            uplift: vec![0.0; n],
            precipitation,
        };
        let mut tile = TileStreamPower::new(layout, rank, outlets, &params, inputs, field)?;
        // The erosion's inputs are not used by the routing.
        (tile.k, tile.uplift) = (Vec::new(), Vec::new());
        Ok(tile)
    }

    /// The hydrology maps of the tile's heights, row-major over its interior: the whole
    /// map's `Hydrology::compute` cut to this tile (drainage, water surface, lake depth,
    /// rivers, basins; the drainage sums add the same terms, the inflows at entry cells
    /// first). Afterwards [`TileStreamPower::receivers`] are the routed receivers (lakes
    /// resolved) and the tile's heights the water surface. Every rank calls it together.
    pub fn hydrology(
        &mut self,
        comm: &mut impl Comm,
        params: &HydrologyParams,
    ) -> Result<HydrologyMaps> {
        params.validate(&self.field)?;
        let heights = self.heights();
        self.route(comm)?;
        self.resolve_lakes(comm)?;
        self.accumulate(comm)?;
        let drainage = self.drainage.clone();
        let basins = self.basins(comm)?;
        // FastFlow Algorithm 6 over the routed (with `Fill`, filled) heights: each cell at
        // least its receiver's surface + epsilon, as `fill` raises a lake.
        self.fill(comm, params.epsilon)?;
        let water_surface = self.heights();
        let (lake_depth, rivers) =
            lakes_and_rivers(&water_surface, &heights, &drainage, params.river_threshold);
        Ok(HydrologyMaps {
            drainage,
            water_surface,
            lake_depth,
            rivers,
            basins,
        })
    }

    /// Each cell's basin: the place of the root its path ends at among the whole map's
    /// roots, outlets by global index first, then pits by global index (`basin_labels` over
    /// the whole map's stack). The root turns each tile's count of roots per row into the
    /// count before each of its rows.
    fn basins(&mut self, comm: &mut impl Comm) -> Result<Vec<u32>> {
        let (interior, halo) = (self.tile.interior, self.tile.halo);
        let (w, rows) = (interior.w, interior.h);
        let is_root = |li: usize, local: &[u32]| local[li] as usize == li;
        // Per row: outlets, then (from `rows` on) pits.
        let mut counts = vec![0u32; 2 * rows];
        let mut pit = Vec::new();
        for li in 0..interior.len() {
            if is_root(li, &self.local) {
                let h = self.heights[halo.index(interior.x0 + li % w, interior.y0 + li / w)];
                let p = self.is_pit(li, h);
                counts[usize::from(p) * rows + li / w] += 1;
                pit.push(p);
            }
        }
        let mut up = Writer::with_capacity(4 * counts.len());
        counts.iter().for_each(|&c| up.u32(c));
        let layout = &self.layout;
        let reply = through_root(
            comm,
            ROOT,
            (TAG_ROOTS_UP, TAG_ROOTS_DOWN),
            up.into_bytes(),
            |all| roots_before(layout, all),
        )?;
        let mut rd = Reader::new(&reply, "roots before each row", ROOT);
        let mut next = (0..2 * rows)
            .map(|_| rd.u32())
            .collect::<Result<Vec<u32>>>()?;
        rd.finish()?;
        let mut node = vec![NONE; interior.len()];
        let mut roots = pit.into_iter();
        for li in 0..interior.len() {
            if is_root(li, &self.local) {
                let p = roots.next().unwrap_or(false);
                let at = &mut next[usize::from(p) * rows + li / w];
                node[li] = *at;
                *at += 1;
            }
        }
        for k in 0..self.order.len() {
            let c = self.order[k] as usize;
            let r = self.local[c];
            if r != EXIT && r as usize != c {
                node[c] = node[r as usize];
            }
        }
        let (_, basins) = self.spread_labels(comm, (TAG_BASIN_UP, TAG_BASIN_DOWN), false, node)?;
        Ok(basins)
    }
}

/// The root's part of [`TileStreamPower::basins`]: from each rank's count of outlets and pits
/// per row of its tile, the number of roots before each of its rows' first cell in the
/// whole map's order (outlets by global index, then pits by global index).
fn roots_before(layout: &TileLayout, all: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
    let count = layout.count();
    let mut counts = Vec::with_capacity(count);
    for (rank, bytes) in all.iter().enumerate() {
        let rows = layout.tile(rank).interior.h;
        let mut r = Reader::new(bytes, "roots per row", rank);
        counts.push(
            (0..2 * rows)
                .map(|_| r.u32())
                .collect::<Result<Vec<u32>>>()?,
        );
        r.finish()?;
    }
    // Ranks by their first cell: along a row of the grid, the tiles it crosses by x.
    let mut by_place: Vec<usize> = (0..count).collect();
    by_place.sort_by_key(|&r| {
        let t = layout.tile(r).interior;
        (t.y0, t.x0)
    });
    let mut before = vec![Vec::new(); count];
    for (rank, b) in before.iter_mut().enumerate() {
        b.resize(2 * layout.tile(rank).interior.h, 0u32);
    }
    let mut seen = 0u64;
    for kind in 0..2 {
        for y in 0..layout.grid().height {
            for &rank in &by_place {
                let t = layout.tile(rank).interior;
                if y < t.y0 || y >= t.y0 + t.h {
                    continue;
                }
                let at = kind * t.h + (y - t.y0);
                before[rank][at] = u32::try_from(seen).map_err(|_| {
                    OrogenError::invalid("basins", format!("{seen} roots overflow the labels"))
                })?;
                seen += u64::from(counts[rank][at]);
            }
        }
    }
    Ok(before
        .into_iter()
        .map(|b| {
            let mut w = Writer::with_capacity(4 * b.len());
            b.into_iter().for_each(|v| w.u32(v));
            w.into_bytes()
        })
        .collect())
}
