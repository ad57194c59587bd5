//! Lakes in the tiled stream-power step (`lakes: Carve` and `Fill`), between the routing
//! and the drainage: basin labels through the root, the basin graph reduced per tile and
//! solved at the root ([`crate::tiles::basins`], Barnes 2016), the chains from each pass
//! down to its pit reversed tile by tile (fastscapelib's carve); for `Fill`, the water
//! surface down the carved receivers solved in rounds like the implicit solve's exact
//! chain, then the receivers again over the raised surface, keeping the carved ones where
//! it is flat. Each part gives the whole map's result (`FlowRouter::resolve_sinks`).

use super::*;
use crate::tiles::basins::{self, TilePass, OUTLET};

const TAG_LABEL_UP: u32 = 20;
const TAG_LABEL_DOWN: u32 = 21;
const TAG_LABEL_HALO: u32 = 22;
const TAG_TREE_UP: u32 = 23;
const TAG_TREE_DOWN: u32 = 24;
const TAG_CARVE_UP: u32 = 25;
const TAG_CARVE_DOWN: u32 = 26;

impl TileStreamPower {
    /// Resolves the lakes after [`TileStreamPower::route`] (nothing for `lakes: None`, or
    /// when the whole map has no pit, as the whole map does): carves, and for `Fill` raises
    /// the heights and routes again. Returns how many passes this tile carved.
    pub(super) fn resolve_lakes(&mut self, comm: &mut impl Comm) -> Result<usize> {
        if self.lakes == SinkMode::None {
            return Ok(0);
        }
        if !self.label_basins(comm)? {
            return Ok(0);
        }
        let labels = std::mem::take(&mut self.labels);
        let passes = self.lake_passes(comm, &labels);
        self.labels = labels;
        let passes = passes?;
        let carved = passes.len();
        self.carve(comm, passes)?;
        if let SinkMode::Fill { epsilon } = self.lakes {
            // The crossing graph of the carved receivers (the drainage is redone later).
            self.accumulate(comm)?;
            self.fill(comm, epsilon)?;
            self.exchange_halo(comm)?;
            self.descend(true);
            self.build_order()?;
        }
        Ok(carved)
    }

    /// Every cell's basin-graph node (0 for an outlet basin, a pit's global index + 1), laid
    /// over the halo rectangle in `labels`; false when the whole map has no pit.
    fn label_basins(&mut self, comm: &mut impl Comm) -> Result<bool> {
        let (interior, halo) = (self.tile.interior, self.tile.halo);
        let n = interior.len();
        // Every cell is in the order, so each is written below.
        let mut node = std::mem::take(&mut self.node);
        node.resize(n, NONE);
        let mut has_pit = false;
        for k in 0..n {
            if let Some(&ahead) = self.order.get(k + PREFETCH_AHEAD) {
                prefetch(&self.local, ahead as usize);
                prefetch(&node, ahead as usize);
            }
            let c = self.order[k] as usize;
            let r = self.local[c];
            node[c] = if r == EXIT {
                NONE
            } else if r as usize == c {
                let h = self.heights
                    [halo.index(interior.x0 + c % interior.w, interior.y0 + c / interior.w)];
                if self.is_pit(c, h) {
                    has_pit = true;
                    self.global(c) + 1
                } else {
                    OUTLET
                }
            } else {
                node[r as usize]
            };
        }
        let (any_pit, node) =
            self.spread_labels(comm, (TAG_LABEL_UP, TAG_LABEL_DOWN), has_pit, node)?;
        if !any_pit {
            self.node = node;
            return Ok(false);
        }
        let labels = &mut self.labels;
        labels.clear();
        labels.resize(halo.len(), NONE);
        for (y, row) in (interior.y0..).zip(node.chunks_exact(interior.w)) {
            let at = halo.index(interior.x0, y);
            labels[at..at + interior.w].copy_from_slice(row);
        }
        self.node = node;
        exchange_halo(comm, &self.layout, 1, TAG_LABEL_HALO, &mut self.labels)?;
        Ok(true)
    }

    /// Each cell's label from `node`, which holds the label of every cell whose path ends
    /// in the tile (NONE for the others): the root follows the crossings and names the
    /// label at the end of each exit's path; the others take their exit's. Also whether any
    /// rank's `has_pit` was set. Every rank calls it together.
    pub(super) fn spread_labels(
        &mut self,
        comm: &mut impl Comm,
        tags: (u32, u32),
        has_pit: bool,
        mut node: Vec<u32>,
    ) -> Result<(bool, Vec<u32>)> {
        let mut w = Writer::with_capacity(12 + 8 * self.exits.len() + 12 * self.ring.len());
        w.u32(u32::from(has_pit));
        w.u32(self.exits.len() as u32);
        for &e in &self.exits {
            w.u32(self.global(e as usize));
            w.u32(self.receivers[e as usize]);
        }
        w.u32(self.ring.len() as u32);
        for &c in &self.ring {
            w.u32(self.global(c as usize));
            w.u32(self.term(c as usize));
            w.u32(node[c as usize]);
        }
        let reply = through_root(comm, ROOT, tags, w.into_bytes(), |all| {
            self.lake_root.labels(all)
        })?;
        let mut rd = Reader::new(&reply, "basin labels", ROOT);
        let any_pit = rd.u32()? != 0;
        let exit_nodes = (0..self.exits.len())
            .map(|_| rd.u32())
            .collect::<Result<Vec<u32>>>()?;
        rd.finish()?;
        for (c, v) in node.iter_mut().enumerate() {
            let s = self.term_slot[c];
            if s != NONE {
                *v = exit_nodes[s as usize];
            }
        }
        Ok((any_pit, node))
    }

    /// The passes of the lakes whose edge to their parent this tile owns: the tile's basin
    /// graph reduced to chains, the tree at the root, the chains' verdicts expanded.
    fn lake_passes(&mut self, comm: &mut impl Comm, nodes: &[u32]) -> Result<Vec<TilePass>> {
        let (g, interior, halo) = (self.layout.grid(), self.tile.interior, self.tile.halo);
        let edges = basins::tile_edges(g, (interior, halo), &self.heights, nodes, &self.dists);
        // Nodes other tiles may hold: those of the border ring and of the halo.
        let mut shared: Vec<u32> = Vec::new();
        for y in halo.y0..halo.y0 + halo.h {
            for x in halo.x0..halo.x0 + halo.w {
                if !interior.contains(x, y) || interior.on_ring(x, y) {
                    shared.push(nodes[halo.index(x, y)]);
                }
            }
        }
        shared.sort_unstable();
        shared.dedup();
        let red = basins::reduce(edges, &shared);
        let mut w = Writer::with_capacity(4 + 28 * red.chains.len());
        w.u32(red.chains.len() as u32);
        for c in &red.chains {
            w.u32(c.u);
            w.u32(c.v);
            let (h, a, b, na, nb) = red.edges[c.max as usize].key();
            [h, a, b, na, nb].into_iter().for_each(|v| w.u32(v));
        }
        let reply = through_root(
            comm,
            ROOT,
            (TAG_TREE_UP, TAG_TREE_DOWN),
            w.into_bytes(),
            |all| self.lake_root.tree(all),
        )?;
        let mut rd = Reader::new(&reply, "chain verdicts", ROOT);
        let count = rd.u32()? as usize;
        if rd.remaining() != count {
            return Err(OrogenError::invalid(
                format!("tiles rank {} lakes", self.tile.rank),
                format!("{count} verdicts in {} bytes", rd.remaining()),
            ));
        }
        basins::expand(&red, &reply[4..], self.tile.rank)
    }

    /// Reverses the receivers from each pass down to its pit (fastscapelib carve): this
    /// tile's passes whose lake-side cell it holds at once, the others and the chains that
    /// cross tile edges as the root sends them. Then the tile's order, reordered without a
    /// new traversal ([`TileStreamPower::restack`]).
    fn carve(&mut self, comm: &mut impl Comm, passes: Vec<TilePass>) -> Result<()> {
        let (g, interior) = (self.layout.grid(), self.tile.interior);
        let inside = |c: u32| interior.contains(c as usize % g.width, c as usize / g.width);
        let (mut remote, mut exits, mut local) = (Vec::new(), Vec::new(), Vec::new());
        for p in passes {
            if inside(p.from) {
                let li = interior.index(p.from as usize % g.width, p.from as usize / g.width);
                if self.term_slot[li] != NONE {
                    exits.push(self.term(li));
                }
                local.push((p.from, p.to));
            } else {
                remote.push((p.from, p.to));
            }
        }
        let mut w = Writer::with_capacity(8 + 8 * remote.len() + 4 * exits.len());
        w.u32(remote.len() as u32);
        for &(f, t) in &remote {
            w.u32(f);
            w.u32(t);
        }
        w.u32(exits.len() as u32);
        exits.iter().for_each(|&e| w.u32(e));
        let reply = through_root(
            comm,
            ROOT,
            (TAG_CARVE_UP, TAG_CARVE_DOWN),
            w.into_bytes(),
            |all| self.lake_root.carve(&self.layout, all),
        )?;
        let mut rd = Reader::new(&reply, "carve walks", ROOT);
        for _ in 0..rd.u32()? {
            local.push((rd.u32()?, rd.u32()?));
        }
        rd.finish()?;
        self.chain_cells.clear();
        self.chain_start.clear();
        for (cell, prev) in local {
            self.chain_start.push(self.chain_cells.len() as u32);
            self.reverse(cell, prev)?;
        }
        self.chain_start.push(self.chain_cells.len() as u32);
        self.restack()
    }

    /// Reverses the path from `cell` (which now drains into `prev`) down to its pit or the
    /// tile's edge: each cell drains into the one before it, at the distance between them.
    /// The donor masks follow; the cells go to `chain_cells`, receivers first.
    fn reverse(&mut self, mut cell: u32, mut prev: u32) -> Result<()> {
        let (g, interior) = (self.layout.grid(), self.tile.interior);
        let xy = |c: u32| (c as usize % g.width, c as usize / g.width);
        loop {
            let (x, y) = xy(cell);
            if !interior.contains(x, y) {
                return Err(OrogenError::invalid(
                    format!("tiles rank {} carve", self.tile.rank),
                    format!("cell ({x}, {y}) is outside the tile"),
                ));
            }
            let li = interior.index(x, y);
            let next = self.receivers[li];
            let (px, py) = xy(prev);
            let (dx, dy) = (px as isize - x as isize, py as isize - y as isize);
            let k = OFFSETS.iter().position(|&o| o == (dx, dy)).ok_or_else(|| {
                OrogenError::invalid(
                    format!("tiles rank {} carve", self.tile.rank),
                    format!("cell ({x}, {y}) cannot drain into ({px}, {py})"),
                )
            })?;
            // The donor bit at the old receiver goes, one at the new receiver comes.
            let old = self.local[li];
            if old != EXIT && old as usize != li {
                self.masks[old as usize] &= !(1u8 << (7 - self.dir[li]));
            }
            self.receivers[li] = prev;
            self.dir[li] = k as u8;
            self.local[li] = if interior.contains(px, py) {
                let to = interior.index(px, py);
                self.masks[to] |= 1u8 << (7 - k);
                to as u32
            } else {
                EXIT
            };
            self.chain_cells.push(li as u32);
            let (nx, ny) = xy(next);
            if next == cell || !interior.contains(nx, ny) {
                return Ok(());
            }
            (prev, cell) = (cell, next);
        }
    }

    /// `Fill`: the water surface down the carved receivers (`water_surface`: each cell at
    /// least its receiver's surface + `epsilon`), cells whose path leaves the tile in rounds
    /// through the root; the heights become the surface.
    pub(super) fn fill(&mut self, comm: &mut impl Comm, epsilon: f32) -> Result<()> {
        let mut h = std::mem::take(&mut self.scratch);
        self.heights_into(&mut h);
        self.clear_pending();
        for k in 0..self.order.len() {
            let c = self.order[k] as usize;
            let r = self.local[c];
            if r as usize == c {
                continue;
            }
            match self.term_slot[c] {
                NONE => h[c] = h[c].max(h[r as usize] + epsilon),
                s => self.push_pending(c as u32, s),
            }
        }
        self.chain_exact(comm, &mut h, Some(epsilon))?;
        self.set_interior(&h);
        self.scratch = h;
        Ok(())
    }
}
