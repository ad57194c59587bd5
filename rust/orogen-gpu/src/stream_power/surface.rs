//! The water surface of a `Hydrology` stage on the GPU: FastFlow's Algorithm 6 over the
//! routed receivers and heights (fill.wgsl's pointer jumping, as `lakes: Fill` raises a
//! lake), with the stage's own ε.

use orogen_core::Result;

use super::GpuStreamPower;

impl GpuStreamPower {
    /// The water surface over the last [`GpuStreamPower::route`]'s receivers and heights
    /// (raised by `lakes: Fill`): `w = max(h, w_receiver + epsilon)` from the roots up, by
    /// pointer jumping (orogen-core's `water_surface`: bit for bit with `epsilon = 0`,
    /// where every value is a maximum of heights; within rounding otherwise, `k·ε` added
    /// over a jump of `k` links). The surface replaces the heights on the GPU: set them
    /// again before another step or route.
    pub fn water_surface(&mut self, epsilon: f32) -> Result<Vec<f32>> {
        self.need_heights()?;
        self.settle()?;
        let kept = self.params.epsilon;
        self.params.epsilon = epsilon;
        self.write_params();
        self.run(
            |_| {},
            |pass| {
                self.dispatch(pass, &self.fill[0], &self.fill_groups[0]);
                self.control(pass, 0);
                for r in 0..self.rounds as usize {
                    self.dispatch_round(pass, &self.fill[1], &self.fill_groups[r % 2]);
                    self.end_round(pass, r);
                }
                self.dispatch(pass, &self.fill[2], &self.fill_groups[0]);
            },
        );
        self.params.epsilon = kept;
        let surface = bytemuck::pod_collect_to_vec(&self.read(&self.heights)?);
        // The heights buffer holds the surface now: no step from it.
        self.has_heights = false;
        Ok(surface)
    }
}
