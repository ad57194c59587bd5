//! The implicit solve for `n ≠ 1` of [`GpuStreamPower`], level by level: the nodes put in
//! order of depth (levels.wgsl), then one dispatch per level of the per-node Newton solve
//! (solve_n.wgsl).

use orogen_core::Result;

use super::GpuStreamPower;

impl GpuStreamPower {
    /// n ≠ 1, first half: each node's depth and the count of nodes at each depth
    /// (levels.wgsl).
    pub(super) fn encode_depths(&self, pass: &mut wgpu::ComputePass) {
        self.dispatch(pass, &self.levels[0], &self.levels_groups[0]);
        self.control(pass, 0);
        for r in 0..self.rounds as usize {
            self.dispatch_round(pass, &self.levels[1], &self.levels_groups[r % 2]);
            self.end_round(pass, r);
        }
        self.dispatch(pass, &self.levels[2], &self.levels_groups[0]);
    }

    /// n ≠ 1, second half: the counts per level read back and turned into offsets, the
    /// nodes put in level order, then one dispatch a level (solve_n.wgsl), from the roots up.
    pub(super) fn solve_by_levels(&mut self) -> Result<()> {
        let info: Vec<u32> = bytemuck::pod_collect_to_vec(&self.read_range(&self.info, 8)?);
        let deepest = info[0] as usize;
        self.level_counts.clear();
        self.level_offsets.clear();
        if deepest > 0 {
            let bytes = self.read_range(&self.jumps[1], 4 * (deepest as u64 + 1))?;
            self.level_counts = bytemuck::pod_collect_to_vec(&bytes);
        }
        // offsets[l] for levels 1..=deepest, then the end (entry 0 unused).
        self.level_offsets.resize(deepest + 2, 0);
        for l in 1..=deepest {
            self.level_offsets[l + 1] = self.level_offsets[l] + self.level_counts[l];
        }
        let queue = &self.ctx.queue;
        queue.write_buffer(&self.sums[1], 0, bytemuck::cast_slice(&self.level_offsets));
        if deepest > 0 {
            // The cursors start at the offsets.
            queue.write_buffer(
                &self.jumps[1],
                0,
                bytemuck::cast_slice(&self.level_offsets[..deepest + 1]),
            );
        }
        self.run(
            |_| {},
            |pass| {
                self.dispatch(pass, &self.levels[3], &self.levels_groups[0]);
                self.dispatch(pass, &self.solve_n[0], &self.solve_n_group);
                for l in 1..=deepest {
                    pass.set_pipeline(&self.solve_n[1]);
                    pass.set_bind_group(0, &self.solve_n_group, &[]);
                    pass.dispatch_workgroups(1, 1, 1);
                    let count = self.level_counts[l];
                    self.dispatch_count(pass, &self.solve_n[2], &self.solve_n_group, count);
                }
            },
        );
        Ok(())
    }
}
