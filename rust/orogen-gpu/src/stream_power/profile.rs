//! Where an n = 1 step's time goes: one step with its phases timed on the GPU (timestamp
//! queries at the start and end of each phase's compute pass) or, on a device without
//! them, by the wall clock with a wait after each phase.

use orogen_core::eroders::stream_power::MAX_DT;
use orogen_core::flow::SinkMode;
use orogen_core::{OrogenError, Result};

use super::{GpuStreamPower, PHASES};

/// The receivers' phase (with lakes, also control.wgsl's `gate`), before [`PHASES`].
pub const RECEIVERS: &str = "receivers (receivers.wgsl; with lakes enter and gate)";

impl GpuStreamPower {
    /// Runs one step of `dt` years (n = 1) phase by phase and returns each phase's time in
    /// milliseconds, the receivers first, then [`PHASES`], and whether the times are the
    /// GPU's own (timestamp queries) rather than the wall clock's (a wait after each phase,
    /// so they include the submit and the wait). The step is the one
    /// [`GpuStreamPower::step`] would run (speculative with lakes: settled later if it met
    /// a pit), its results the same.
    pub fn profile_step(&mut self, dt: f64) -> Result<(Vec<(&'static str, f64)>, bool)> {
        if self.params.slope_exp != 1.0 {
            return Err(OrogenError::invalid(
                format!("{}.n", self.field),
                "profile_step times the n = 1 step",
            ));
        }
        if !(dt > 0.0 && dt <= MAX_DT) {
            return Err(OrogenError::invalid(
                "dt",
                format!("must be > 0 and <= {MAX_DT} years, got {dt}"),
            ));
        }
        self.settle()?;
        self.need_heights()?;
        self.params.dt = dt as f32;
        self.params.count = 0;
        self.params.keep = 0;
        self.write_params();
        let gated = self.lakes != SinkMode::None;
        let names: Vec<&'static str> = std::iter::once(RECEIVERS).chain(PHASES).collect();
        let phase = |gp: &Self, pass: &mut wgpu::ComputePass, k: usize| {
            if k == 0 && gated {
                gp.encode_speculative_receivers(pass);
            } else if k == 0 {
                gp.dispatch(pass, &gp.descend.0, &gp.descend.1);
            } else {
                gp.encode_phase(pass, k - 1, gated);
            }
        };
        let device = &self.ctx.device;
        let timed = self.ctx.has_timestamps();
        let mut times = Vec::with_capacity(names.len());
        if timed {
            let count = 2 * names.len() as u32;
            let set = device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("phases"),
                ty: wgpu::QueryType::Timestamp,
                count,
            });
            let resolved = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("phase timestamps"),
                size: 8 * count as u64,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let mut encoder =
                device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            encoder.clear_buffer(&self.counter, 0, Some(8));
            for (k, name) in names.iter().enumerate() {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some(name),
                    timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                        query_set: &set,
                        beginning_of_pass_write_index: Some(2 * k as u32),
                        end_of_pass_write_index: Some(2 * k as u32 + 1),
                    }),
                });
                phase(self, &mut pass, k);
            }
            encoder.resolve_query_set(&set, 0..count, &resolved, 0);
            self.ctx.queue.submit([encoder.finish()]);
            let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&self.read(&resolved)?);
            let period = self.ctx.queue.get_timestamp_period() as f64;
            for (k, name) in names.iter().enumerate() {
                let span = ticks[2 * k + 1].wrapping_sub(ticks[2 * k]);
                times.push((*name, span as f64 * period * 1e-6));
            }
        } else {
            let counter = &self.counter;
            self.run(|e| e.clear_buffer(counter, 0, Some(8)), |_| {});
            self.ctx.check(&self.field)?;
            for (k, name) in names.iter().enumerate() {
                let t = std::time::Instant::now();
                self.run(|_| {}, |pass| phase(self, pass, k));
                self.ctx.check(&self.field)?;
                times.push((*name, t.elapsed().as_secs_f64() * 1e3));
            }
        }
        if gated {
            self.pending.push(dt as f32);
        }
        self.lake_count = Some(0);
        self.has_drainage = false;
        Ok((times, timed))
    }
}
