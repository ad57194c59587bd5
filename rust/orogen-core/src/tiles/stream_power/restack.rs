//! The tile's order after the carve without a new traversal, as the whole map's
//! `restack_after_carve` (`flow::router`) reorders its stack: the carve reverses each
//! chain from a pass down to its pit (or to the tile's edge), so only the trees those
//! chains end in change. Each such tree's block moves after the block of the tree it now
//! drains into, led by its reversed chain (receivers first), then its other cells in their
//! old order (their receivers did not change). The drainage sums add each cell's donors by
//! index whatever the order ([`TileStreamPower::sum_local`]), so the bytes are those of a
//! new breadth-first order.

use super::*;

/// Marks a cell of a moved tree in `term_slot` while restacking (with the tree's chain).
const MARK: u32 = 1 << 31;

impl TileStreamPower {
    /// Reorders the tile after the carve's reversals (`chain_cells` by `chain_start`):
    /// `order`, `exits` and `term_slot` as [`TileStreamPower::build_order`] would make them
    /// but for the moved blocks' order. Falls back to `build_order` where the chains do
    /// not each end at a tree's root (a case the carve does not make).
    pub(super) fn restack(&mut self) -> Result<()> {
        if !self.try_restack() {
            return self.build_order();
        }
        #[cfg(debug_assertions)]
        self.check_restack()?;
        Ok(())
    }

    /// Debug builds (the tests): the restacked tile against a new traversal: the same
    /// exits, slots and donor masks, and an order with every cell after its receiver.
    #[cfg(debug_assertions)]
    fn check_restack(&mut self) -> Result<()> {
        let order = self.order.clone();
        let (exits, slots, masks) = (
            self.exits.clone(),
            self.term_slot.clone(),
            self.masks.clone(),
        );
        self.build_order()?;
        assert_eq!(exits, self.exits, "restack: exits");
        assert!(slots == self.term_slot, "restack: exit slots");
        assert!(masks == self.masks, "restack: donor masks");
        let mut at = vec![u32::MAX; order.len()];
        for (k, &c) in order.iter().enumerate() {
            assert_eq!(at[c as usize], u32::MAX, "restack: cell {c} twice");
            at[c as usize] = k as u32;
        }
        for (c, &r) in self.local.iter().enumerate() {
            if r != EXIT && r as usize != c {
                assert!(
                    at[r as usize] < at[c],
                    "restack: cell {c} before its receiver"
                );
            }
        }
        self.order = order;
        self.block_root.clear();
        self.block_start.clear();
        Ok(())
    }

    /// [`TileStreamPower::restack`]; false (with `term_slot` and `order` left to be
    /// rebuilt) where a chain does not end at the root of a tree of its own.
    fn try_restack(&mut self) -> bool {
        let chains = self.chain_start.len().saturating_sub(1);
        if chains == 0 {
            // Nothing reversed: the order stands.
            return true;
        }
        if self.block_start.len() != self.block_root.len() + 1 || chains as u64 >= MARK as u64 {
            return false;
        }
        let (cells, starts) = (&self.chain_cells[..], &self.chain_start[..]);
        let chain = |s: usize| &cells[starts[s] as usize..starts[s + 1] as usize];
        let term_slot = &mut self.term_slot[..];
        let (order, local) = (&self.order[..], &self.local[..]);
        // 1. Each chain's tree: the block of the root its chain ends at (its pit, or the
        //    exit its path left the tile by); its cells marked with the chain.
        let mut block_of = Vec::with_capacity(chains);
        for s in 0..chains {
            let Some(&last) = chain(s).last() else {
                return false;
            };
            let Ok(b) = self.block_root.binary_search(&last) else {
                return false;
            };
            let (b0, b1) = (
                self.block_start[b] as usize,
                self.block_start[b + 1] as usize,
            );
            if is_marked(term_slot[last as usize]) {
                // Two chains in one tree.
                return false;
            }
            let block = &order[b0..b1];
            for (k, &c) in block.iter().enumerate() {
                // A block's cells lie all over its tree: ask for a later one's slot now.
                if let Some(&ahead) = block.get(k + PREFETCH_AHEAD) {
                    prefetch(term_slot, ahead as usize);
                }
                term_slot[c as usize] = MARK | s as u32;
            }
            if chain(s)
                .iter()
                .any(|&c| term_slot[c as usize] != MARK | s as u32)
            {
                return false;
            }
            block_of.push(b);
        }
        // 2. The exits: the old ones still leaving the tile and each chain's first cell that
        //    now does, by index; the unmoved cells' slots renumbered.
        let mut exits: Vec<u32> = self
            .exits
            .iter()
            .copied()
            .chain((0..chains).map(|s| chain(s)[0]))
            .filter(|&c| local[c as usize] == EXIT)
            .collect();
        exits.sort_unstable();
        exits.dedup();
        let remap: Vec<u32> = self
            .exits
            .iter()
            .map(|&e| match exits.binary_search(&e) {
                Ok(at) if local[e as usize] == EXIT => at as u32,
                _ => NONE,
            })
            .collect();
        for v in term_slot.iter_mut() {
            if *v != NONE && !is_marked(*v) {
                *v = remap[*v as usize];
            }
        }
        // 3. Each chain's parent (the chain whose tree its first cell drains into, or NONE)
        //    and its slot where the parent is not a moved tree.
        let mut parent = vec![NONE; chains];
        let mut slot = vec![NONE; chains];
        for s in 0..chains {
            let first = chain(s)[0] as usize;
            match local[first] {
                EXIT => match exits.binary_search(&(first as u32)) {
                    Ok(at) => slot[s] = at as u32,
                    Err(_) => return false,
                },
                r => match term_slot[r as usize] {
                    v if is_marked(v) => parent[s] = v & !MARK,
                    v => slot[s] = v,
                },
            }
        }
        // 4. Parents before children (Kahn's order; a cycle falls back and is found there).
        let mut children_start = vec![0u32; chains + 1];
        for &p in &parent {
            if p != NONE {
                children_start[p as usize + 1] += 1;
            }
        }
        for k in 0..chains {
            children_start[k + 1] += children_start[k];
        }
        let mut children = vec![0u32; children_start[chains] as usize];
        let mut fill = children_start.clone();
        for (s, &p) in parent.iter().enumerate() {
            if p != NONE {
                children[fill[p as usize] as usize] = s as u32;
                fill[p as usize] += 1;
            }
        }
        let mut topo: Vec<u32> = (0..chains as u32)
            .filter(|&s| parent[s as usize] == NONE)
            .collect();
        let mut head = 0;
        while head < topo.len() {
            let s = topo[head] as usize;
            head += 1;
            let (c0, c1) = (children_start[s] as usize, children_start[s + 1] as usize);
            for &c in &children[c0..c1] {
                slot[c as usize] = slot[s];
                topo.push(c);
            }
        }
        if topo.len() != chains {
            return false;
        }
        // 5. The moved blocks, parents first: the chain, then the tree's other cells in
        //    their old order.
        let moved = &mut self.moved;
        moved.clear();
        for &s in &topo {
            let s = s as usize;
            let v = slot[s];
            for &c in chain(s) {
                term_slot[c as usize] = v;
                moved.push(c);
            }
            let b = block_of[s];
            let (b0, b1) = (
                self.block_start[b] as usize,
                self.block_start[b + 1] as usize,
            );
            let block = &order[b0..b1];
            for (k, &c) in block.iter().enumerate() {
                if let Some(&ahead) = block.get(k + PREFETCH_AHEAD) {
                    prefetch(term_slot, ahead as usize);
                }
                if term_slot[c as usize] == MARK | s as u32 {
                    term_slot[c as usize] = v;
                    moved.push(c);
                }
            }
        }
        // 6. The blocks that stay, closed up in their order, then the moved ones.
        let mut gone = vec![false; self.block_root.len()];
        block_of.iter().for_each(|&b| gone[b] = true);
        let mut to = 0usize;
        for (b, &g) in gone.iter().enumerate() {
            let (b0, b1) = (
                self.block_start[b] as usize,
                self.block_start[b + 1] as usize,
            );
            if !g {
                self.order.copy_within(b0..b1, to);
                to += b1 - b0;
            }
        }
        self.order.truncate(to);
        self.order.extend_from_slice(moved);
        self.exits = exits;
        // The blocks are no longer laid out as recorded.
        self.block_root.clear();
        self.block_start.clear();
        self.order.len() == self.tile.interior.len()
    }
}

/// True for a `term_slot` value [`TileStreamPower::try_restack`] marked.
#[inline]
fn is_marked(v: u32) -> bool {
    v != NONE && v & MARK != 0
}
