//! The root rank's part of a tiled stream-power step: the small graph of flow crossing
//! tile edges, solved once per step (accumulation, then the implicit solve's chain).
//!
//! Nodes are the exit cells (cells whose receiver lies in another tile). An exit `e`
//! drains into `r(e)`, a cell on another tile's border ring, whose flow path inside its
//! tile ends at that tile's exit `down(e)`, or at a root (an outlet or a pit).

use std::collections::HashMap;

use super::comm::{Reader, Writer};
use super::layout::TileLayout;
use crate::error::{OrogenError, Result};

/// No exit / no cell.
pub(crate) const NONE: u32 = u32::MAX;

struct Exit {
    /// The exit cell and its receiver, global indices.
    cell: u32,
    receiver: u32,
    /// Index (into `exits`) of the exit the receiver's path leaves its tile by, or NONE.
    down: u32,
    /// The receiver's place among the entries of its tile.
    entry: (u32, u32),
    /// The exit's rank and its place in that rank's list of exits.
    owner: (u32, u32),
}

/// The crossing graph of one step, kept at the root between the accumulation and the
/// solve.
#[derive(Default)]
pub(crate) struct CrossGraph {
    exits: Vec<Exit>,
    /// Exit indices, each after the exit it drains into (downstream first).
    order: Vec<u32>,
    /// Per rank, its entry cells (receivers of other tiles' exits), global indices.
    entries: Vec<Vec<u32>>,
    /// Per rank, its exits' indices in the order it listed them.
    rank_exits: Vec<Vec<u32>>,
    /// Per rank and entry, the exits draining into it.
    entry_exits: Vec<Vec<Vec<u32>>>,
    /// Exits whose receiver's new height went out in [`CrossGraph::resolve_round`].
    resolved: usize,
}

fn bad(what: &str, reason: String) -> OrogenError {
    OrogenError::invalid(format!("tiles root: {what}"), reason)
}

impl CrossGraph {
    /// Builds the graph from every rank's accumulation message (exits as cell, receiver,
    /// local outflow; border cells as cell, exit its path reaches) and resolves it
    /// (Barnes 2017, "Parallel non-divergent flow accumulation for trillion cell digital
    /// elevation models": local sums plus inflows over the graph of edge crossings).
    /// Returns, per rank, its message back: each entry cell with the flow entering it.
    pub(crate) fn accumulate(
        &mut self,
        layout: &TileLayout,
        messages: &[Vec<u8>],
    ) -> Result<Vec<Vec<u8>>> {
        let ranks = messages.len();
        self.exits.clear();
        self.rank_exits = vec![Vec::new(); ranks];
        self.entries = vec![Vec::new(); ranks];
        let mut outflow = Vec::new();
        let mut exit_of: HashMap<u32, u32> = HashMap::new();
        let mut ring: HashMap<u32, u32> = HashMap::new();
        for (rank, bytes) in messages.iter().enumerate() {
            let mut r = Reader::new(bytes, "accumulation", rank);
            for _ in 0..r.u32()? {
                let (cell, receiver, out) = (r.u32()?, r.u32()?, r.f64()?);
                exit_of.insert(cell, self.exits.len() as u32);
                let slot = self.rank_exits[rank].len() as u32;
                self.rank_exits[rank].push(self.exits.len() as u32);
                self.exits.push(Exit {
                    cell,
                    receiver,
                    down: NONE,
                    entry: (0, 0),
                    owner: (rank as u32, slot),
                });
                outflow.push(out);
            }
            for _ in 0..r.u32()? {
                let (cell, term) = (r.u32()?, r.u32()?);
                ring.insert(cell, term);
            }
            r.finish()?;
        }
        let width = layout.grid().width;
        let mut entry_at: HashMap<u32, (u32, u32)> = HashMap::new();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); self.exits.len()];
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        for (k, e) in self.exits.iter_mut().enumerate() {
            let term = *ring.get(&e.receiver).ok_or_else(|| {
                bad(
                    "crossings",
                    format!(
                        "cell {} drains into {}, which is on no tile's border",
                        e.cell, e.receiver
                    ),
                )
            })?;
            if term != NONE {
                e.down = *exit_of.get(&term).ok_or_else(|| {
                    bad(
                        "crossings",
                        format!("cell {term} is named as an exit but none sent it"),
                    )
                })?;
                children[e.down as usize].push(k as u32);
            } else {
                order.push(k as u32);
            }
            let (x, y) = (e.receiver as usize % width, e.receiver as usize / width);
            let rank = layout.rank_of(x, y);
            e.entry = *entry_at.entry(e.receiver).or_insert_with(|| {
                let list = &mut self.entries[rank];
                list.push(e.receiver);
                (rank as u32, list.len() as u32 - 1)
            });
        }
        // Breadth first from the exits whose flow ends in a tile: downstream first.
        let mut head = 0;
        while head < order.len() {
            let k = order[head] as usize;
            head += 1;
            order.extend_from_slice(&children[k]);
        }
        if order.len() != self.exits.len() {
            return Err(bad(
                "crossings",
                format!(
                    "the flow between tiles forms a cycle: {} of {} exits reach a root",
                    order.len(),
                    self.exits.len()
                ),
            ));
        }
        for &k in order.iter().rev() {
            let d = self.exits[k as usize].down;
            if d != NONE {
                outflow[d as usize] += outflow[k as usize];
            }
        }
        self.order = order;
        self.resolved = 0;
        self.entry_exits = self
            .entries
            .iter()
            .map(|l| vec![Vec::new(); l.len()])
            .collect();
        for (k, e) in self.exits.iter().enumerate() {
            self.entry_exits[e.entry.0 as usize][e.entry.1 as usize].push(k as u32);
        }
        let mut inflow: Vec<Vec<f64>> = self.entries.iter().map(|l| vec![0.0; l.len()]).collect();
        for (e, out) in self.exits.iter().zip(&outflow) {
            inflow[e.entry.0 as usize][e.entry.1 as usize] += out;
        }
        Ok(self
            .entries
            .iter()
            .zip(&inflow)
            .map(|(cells, flows)| {
                let mut w = Writer::with_capacity(4 + 12 * cells.len());
                w.u32(cells.len() as u32);
                for (&c, &f) in cells.iter().zip(flows) {
                    w.u32(c);
                    w.f64(f);
                }
                w.into_bytes()
            })
            .collect())
    }

    /// The implicit solve's chain (Braun & Willett 2013 for n = 1, each node's new height
    /// `min(a·h_r + b, c)` in its receiver's): from every rank, each entry cell's map composed
    /// down its path to the new height of the receiver of the exit it leaves by (a constant
    /// where the path ends in the tile); returns, per rank, the
    /// new heights of its exits' receivers (f32, as the whole map stores them).
    pub(crate) fn solve(&self, messages: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        let mut entry_maps: Vec<Vec<[f64; 3]>> = Vec::with_capacity(messages.len());
        let read3 = |r: &mut Reader| -> Result<[f64; 3]> { Ok([r.f64()?, r.f64()?, r.f64()?]) };
        for (rank, bytes) in messages.iter().enumerate() {
            let mut r = Reader::new(bytes, "solve", rank);
            let maps = (0..self.entries[rank].len())
                .map(|_| read3(&mut r))
                .collect::<Result<Vec<_>>>()?;
            r.finish()?;
            entry_maps.push(maps);
        }
        let mut h_receiver = vec![0.0f64; self.exits.len()];
        for &k in &self.order {
            let e = &self.exits[k as usize];
            let [a, b, c] = entry_maps[e.entry.0 as usize][e.entry.1 as usize];
            let y = if e.down == NONE {
                0.0
            } else {
                h_receiver[e.down as usize]
            };
            h_receiver[k as usize] = (a * y + b).min(c);
        }
        Ok(self
            .rank_exits
            .iter()
            .map(|ks| {
                let mut w = Writer::with_capacity(4 * ks.len());
                for &k in ks {
                    w.f32(h_receiver[k as usize] as f32);
                }
                w.into_bytes()
            })
            .collect())
    }

    /// One round of the exact chain solve: every rank's entry cells whose new height became
    /// final (as place among its entries, height); returns, per rank, a flag (1: more
    /// rounds follow) and its exits whose receiver's new height is now known (place among
    /// its exits, height). The heights are the tiles' own, computed with the whole map's
    /// arithmetic, so the chain is exact; it takes one round per crossing on the longest
    /// path.
    pub(crate) fn resolve_round(&mut self, messages: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        let mut out: Vec<Writer> = (0..messages.len()).map(|_| Writer::default()).collect();
        let mut counts = vec![0u32; messages.len()];
        let before = self.resolved;
        for (rank, bytes) in messages.iter().enumerate() {
            let mut r = Reader::new(bytes, "final heights", rank);
            for _ in 0..r.u32()? {
                let (pos, h) = (r.u32()? as usize, r.f32()?);
                let exits = self.entry_exits[rank].get(pos).ok_or_else(|| {
                    bad(
                        "final heights",
                        format!("rank {rank} names entry {pos}, unknown"),
                    )
                })?;
                for &k in exits {
                    let (owner, slot) = self.exits[k as usize].owner;
                    out[owner as usize].u32(slot);
                    out[owner as usize].f32(h);
                    counts[owner as usize] += 1;
                    self.resolved += 1;
                }
            }
            r.finish()?;
        }
        let more = self.resolved < self.exits.len();
        if more && self.resolved == before {
            return Err(bad(
                "crossings",
                format!(
                    "a round resolved no exit ({} of {} resolved)",
                    self.resolved,
                    self.exits.len()
                ),
            ));
        }
        Ok(out
            .into_iter()
            .zip(counts)
            .map(|(body, count)| {
                let mut w = Writer::with_capacity(8 + body.0.len());
                w.u32(u32::from(more));
                w.u32(count);
                w.0.extend_from_slice(&body.0);
                w.into_bytes()
            })
            .collect())
    }
}
