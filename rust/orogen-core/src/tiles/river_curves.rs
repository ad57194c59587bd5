//! A tiled bake's river curves without whole maps (issue #41): the curves read only the
//! river cells ([`grid_rivers_sparse`]), a few per cent of the map, so each rank sends
//! rank 0 its river cells with their receiver, drainage and water surface; rank 0 traces
//! the whole map's curves from them (the same bits as from the whole maps) and sends each
//! rank the runs of the curves whose carve reaches its tile ([`clip_to_window`]), which
//! it carves
//! ([`carve_window`]: each cell's cut reads only its own height and the curves near it).
//!
//! Every cell downstream of a river cell is one (a river flows on to its outlet). Drainage
//! never falls downstream, so a tile's river cells are closed downstream already, but a
//! rank does not rely on it: it adds the cells downstream of its river cells within its
//! tile, and rank 0 asks the ranks for any receiver still missing (in rounds, until none
//! is), so the cells are always [`river_cells`](crate::rasterise::grid_rivers::river_cells)'s.

use crate::error::Result;
use crate::rasterise::grid_rivers::{
    carve_window, clip_to_window, grid_rivers_sparse, RiverCell, RiverCurveParams,
};
use crate::rasterise::River;
use crate::tiles::comm::{Comm, Reader, Writer};
use crate::tiles::layout::TileLayout;

/// The tags this module uses, from its `tag` on: 5.
pub const TAGS: u32 = 5;

/// One rank's part of the curves: all of them at rank 0 (for `rivers.json`), and the runs
/// of them that reach this rank's tile; the bytes every rank sent rank 0 for them (at rank 0).
pub struct TileCurves {
    pub all: Option<Vec<River>>,
    pub near: Vec<River>,
    /// Bytes of river cells sent to rank 0 (gathered and asked for), summed over the
    /// ranks; rank 0 only.
    pub cell_bytes: u64,
    /// Bytes of curves rank 0 sent to the tiles.
    pub curve_bytes: u64,
}

/// This tile's maps: `receivers` (global cell indices, as the tiles' router gives them),
/// `drainage`, `rivers` (non-zero for river cells) and `surface` (the water surface), one
/// value per cell of the tile's interior, row by row.
#[derive(Clone, Copy)]
pub struct TileRiverMaps<'a> {
    pub receivers: &'a [u32],
    pub drainage: &'a [f32],
    pub rivers: &'a [u8],
    pub surface: &'a [f32],
}

/// The curves of the whole map's rivers from every tile's maps; every rank calls it
/// together, with `tag..tag + TAGS` its own. With `send` false (no carve) the tiles get no
/// curves.
pub fn tile_river_curves<C: Comm>(
    comm: &mut C,
    layout: &TileLayout,
    maps: TileRiverMaps,
    p: &RiverCurveParams,
    send: bool,
    tag: u32,
) -> Result<TileCurves> {
    let rank = comm.rank();
    let root = crate::tiles::ROOT;
    let grid = layout.grid();
    let rect = layout.tile(rank).interior;
    let n = rect.len();
    for (what, len) in [
        ("receivers", maps.receivers.len()),
        ("drainage", maps.drainage.len()),
        ("rivers", maps.rivers.len()),
        ("surface", maps.surface.len()),
    ] {
        crate::tiles::layout::check_tile_len("river curves", what, rank, rect, len)?;
    }
    // The tile's position of a grid cell, if it lies in the tile.
    let local = |cell: u32| {
        let (x, y) = (cell as usize % grid.width, cell as usize / grid.width);
        rect.contains(x, y)
            .then(|| (y - rect.y0) * rect.w + (x - rect.x0))
    };
    // Cells already sent from this tile (so a cell is sent once).
    let mut sent = vec![false; n];
    // `starts` and every cell downstream of them within the tile, not sent before.
    let mut closure = |starts: &mut dyn Iterator<Item = usize>| {
        let mut w = Writer::with_capacity(0);
        for s in starts {
            let mut i = s;
            while !sent[i] {
                sent[i] = true;
                let r = maps.receivers[i];
                let cell = ((rect.y0 + i / rect.w) * grid.width + rect.x0 + i % rect.w) as u32;
                w.u32(cell);
                w.u32(r);
                w.f32(maps.drainage[i]);
                w.f32(maps.surface[i]);
                match local(r) {
                    Some(j) => i = j,
                    None => break,
                }
            }
        }
        w.into_bytes()
    };
    let mine = closure(&mut (0..n).filter(|&i| maps.rivers[i] != 0));
    let mut cell_bytes = mine.len() as u64;
    let parts = comm.gather(root, tag, mine)?;
    let mut cells: Vec<RiverCell> = Vec::new();
    read_cells(&parts, &mut cells)?;
    // Rounds: rank 0 asks each rank for the receivers it lacks; a round with nothing to
    // ask ends them.
    loop {
        let mut asks = Vec::new();
        if rank == root {
            cells.sort_unstable_by_key(|c| c.cell);
            cells.dedup_by_key(|c| c.cell);
            let mut want: Vec<Vec<u32>> = vec![Vec::new(); comm.size()];
            let mut any = false;
            for c in &cells {
                if cells.binary_search_by_key(&c.receiver, |c| c.cell).is_err() {
                    let r = c.receiver as usize;
                    let owner = layout.rank_of(r % grid.width, r / grid.width);
                    want[owner].push(c.receiver);
                    any = true;
                }
            }
            asks = want
                .into_iter()
                .map(|cells| {
                    let mut w = Writer::with_capacity(1 + 4 * cells.len());
                    w.u8(u8::from(any));
                    cells.iter().for_each(|&c| w.u32(c));
                    w.into_bytes()
                })
                .collect();
        }
        let ask = comm.scatter(root, tag + 1, asks)?;
        let mut rd = Reader::new(&ask, "river cells asked for", root);
        if rd.u8()? == 0 {
            rd.finish()?;
            break;
        }
        let mut wanted = Vec::new();
        while rd.remaining() > 0 {
            let cell = rd.u32()?;
            wanted.push(local(cell).ok_or_else(|| {
                crate::error::OrogenError::invalid(
                    "river curves",
                    format!("rank {root} asked rank {rank} for cell {cell}, not in its tile"),
                )
            })?);
        }
        let reply = closure(&mut wanted.into_iter());
        cell_bytes += reply.len() as u64;
        let parts = comm.gather(root, tag + 2, reply)?;
        read_cells(&parts, &mut cells)?;
    }
    // Every rank's count of bytes, summed at rank 0.
    let counts = comm.gather(root, tag + 3, cell_bytes.to_le_bytes().to_vec())?;
    let cell_bytes = counts
        .iter()
        .map(|b| u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])))
        .sum();
    let all = if rank == root {
        Some(grid_rivers_sparse(grid, std::mem::take(&mut cells), p)?)
    } else {
        None
    };
    if !send {
        return Ok(TileCurves {
            all,
            near: Vec::new(),
            cell_bytes,
            curve_bytes: 0,
        });
    }
    let mut parts = Vec::new();
    if let Some(all) = &all {
        for r in 0..comm.size() {
            let window = layout.tile(r).interior;
            let mut w = Writer::with_capacity(0);
            for river in all {
                for run in clip_to_window(grid, window, river, p)? {
                    write_river(&mut w, &run);
                }
            }
            parts.push(w.into_bytes());
        }
    }
    let curve_bytes = parts.iter().map(|p| p.len() as u64).sum();
    let part = comm.scatter(root, tag + 4, parts)?;
    let mut rd = Reader::new(&part, "river curves", root);
    let mut near = Vec::new();
    while rd.remaining() > 0 {
        near.push(read_river(&mut rd)?);
    }
    Ok(TileCurves {
        all,
        near,
        cell_bytes,
        curve_bytes,
    })
}

/// Carves `near` (the curves that reach the tile) into the tile's `heights` (its interior,
/// row by row), as the whole map's carve cuts these cells.
pub fn carve_tile(
    layout: &TileLayout,
    rank: usize,
    heights: &mut [f32],
    near: &[River],
    p: &RiverCurveParams,
) -> Result<usize> {
    let rect = layout.tile(rank).interior;
    carve_window(layout.grid(), rect, heights, near, p, None)
}

fn read_cells(parts: &[Vec<u8>], cells: &mut Vec<RiverCell>) -> Result<()> {
    for (from, part) in parts.iter().enumerate() {
        let mut rd = Reader::new(part, "river cells", from);
        while rd.remaining() > 0 {
            cells.push(RiverCell {
                cell: rd.u32()?,
                receiver: rd.u32()?,
                discharge: rd.f32()?,
                surface: rd.f32()?,
            });
        }
    }
    Ok(())
}

fn write_river(w: &mut Writer, r: &River) {
    w.u32(r.order);
    w.u32(r.points.len() as u32);
    for (k, p) in r.points.iter().enumerate() {
        p.iter().for_each(|&v| w.f64(v));
        w.f32(r.discharge.get(k).copied().unwrap_or(0.0));
        w.f32(r.width.get(k).copied().unwrap_or(0.0));
    }
}

fn read_river(rd: &mut Reader) -> Result<River> {
    let order = rd.u32()?;
    let m = rd.u32()? as usize;
    let mut r = River {
        points: Vec::with_capacity(m.min(rd.remaining())),
        discharge: Vec::new(),
        width: Vec::new(),
        order,
    };
    for _ in 0..m {
        r.points.push([rd.f64()?, rd.f64()?, rd.f64()?]);
        r.discharge.push(rd.f32()?);
        r.width.push(rd.f32()?);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Grid;
    use crate::rasterise::grid_rivers::{carve, grid_rivers};
    use crate::tiles::run_threads;
    use rand::{Rng, SeedableRng};

    /// Random stream forests whose river masks are not closed downstream (so a rank must
    /// add the cells below its river cells, and rank 0 ask other tiles for receivers in
    /// rounds), tiled 2x2, 3x3 and 4x1 over threads: the curves at rank 0 are the whole
    /// maps' bit for bit, and the tiles carved with the curves each got are the whole
    /// carve.
    #[test]
    fn tiled_curves_and_carve_equal_the_whole_maps() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut rounds_needed = 0;
        for case in 0..12 {
            let (w, h) = (rng.random_range(12..40), rng.random_range(12..40));
            let grid = Grid::new(w, h, 10.0).unwrap();
            let n = grid.len();
            let z: Vec<f32> = (0..n)
                .map(|i| (i % w + i / w) as f32 * 2.0 + rng.random_range(0.0..8.0))
                .collect();
            // Each cell drains to its lowest neighbour below it, or to itself.
            let recv: Vec<u32> = (0..n)
                .map(|i| {
                    let (x, y) = (i % w, i / w);
                    let mut best = i;
                    for &(ox, oy) in &crate::neighbourhood::raster::OFFSETS {
                        let (a, b) = (x as i64 + ox as i64, y as i64 + oy as i64);
                        if a < 0 || b < 0 || a >= w as i64 || b >= h as i64 {
                            continue;
                        }
                        let j = b as usize * w + a as usize;
                        if z[j] < z[best] {
                            best = j;
                        }
                    }
                    best as u32
                })
                .collect();
            let mask: Vec<u8> = (0..n).map(|_| u8::from(rng.random_bool(0.05))).collect();
            let q: Vec<f32> = (0..n).map(|_| rng.random_range(1e4..1e8)).collect();
            let surface: Vec<f32> = z.iter().map(|v| v + 0.5).collect();
            let p = RiverCurveParams {
                window: rng.random_range(0..5),
                min_half_width: 1.5,
                ..Default::default()
            };
            let want = grid_rivers(grid, &recv, &q, &mask, &surface, &p).unwrap();
            let mut carved = z.clone();
            carve(grid, &mut carved, &want, &p, None).unwrap();
            for (nx, ny) in [(2, 2), (3, 3), (4, 1)] {
                let layout = TileLayout::new(grid, nx, ny).unwrap();
                let out = run_threads(layout.count(), |comm| {
                    let rank = comm.rank();
                    let cut = |v: &[f32]| layout.cut(rank, v, "test").unwrap();
                    let (r, m) = (
                        layout.cut(rank, &recv, "receivers").unwrap(),
                        layout.cut(rank, &mask, "rivers").unwrap(),
                    );
                    let (d, s) = (cut(&q), cut(&surface));
                    let maps = TileRiverMaps {
                        receivers: &r,
                        drainage: &d,
                        rivers: &m,
                        surface: &s,
                    };
                    let curves = tile_river_curves(comm, &layout, maps, &p, true, 50)?;
                    let mut heights = cut(&z);
                    carve_tile(&layout, rank, &mut heights, &curves.near, &p)?;
                    Ok((curves.all, heights))
                })
                .unwrap();
                let all = out[0].0.as_ref().unwrap();
                assert_eq!(all, &want, "case {case} {nx}x{ny}: curves");
                let parts: Vec<Vec<f32>> = out.into_iter().map(|o| o.1).collect();
                let got = layout.assemble(&parts, "heights").unwrap();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&carved), "case {case} {nx}x{ny}: carve");
            }
            // Some river cell drains out of its tile into a cell that is no river cell.
            let layout = TileLayout::new(grid, 3, 3).unwrap();
            rounds_needed += (0..n)
                .filter(|&i| {
                    let r = recv[i] as usize;
                    let tile = |c: usize| layout.rank_of(c % w, c / w);
                    mask[i] != 0 && mask[r] == 0 && tile(i) != tile(r)
                })
                .count();
        }
        assert!(
            rounds_needed > 10,
            "{rounds_needed} open river ends at tile edges"
        );
    }
}
