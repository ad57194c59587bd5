//! Thermal erosion on the GPU (issue #42): orogen-core's `Thermal` step over a raster of
//! square cells (eroders/thermal.rs, Musgrave 1989 / Olsen 2004), as thermal.wgsl's three
//! passes from the old heights: sender factors, receiver scales, the gather. Deterministic
//! (no floating-point atomics; the largest excess is an integer max of its bits), so the
//! same heights give the same bytes run after run. The heights may be another process's
//! buffer ([`GpuThermal::share_heights`]): a `TimeLoop` of `StreamPower` and `Thermal`
//! keeps them on the GPU between the two.

use orogen_core::eroders::thermal::{Params, TalusAngle};
use orogen_core::{math, Grid, OrogenError, Result};

use crate::context::GpuContext;
use crate::stream_power::{bind, layout, module, pipeline};

/// Invocations per workgroup (thermal.wgsl's `WG`).
const WORKGROUP: u32 = 256;

/// thermal.wgsl's `Params`, 48 bytes.
#[derive(Clone, Copy)]
struct ShaderParams {
    width: u32,
    height: u32,
    n: u32,
    groups_x: u32,
    rate: f32,
    tolerance: f32,
    dist: [f32; 2],
    talus_height: f32,
    tan_below: f32,
    tan_above: f32,
}

impl ShaderParams {
    fn bytes(&self) -> Vec<u8> {
        let words: [u32; 12] = [
            self.width,
            self.height,
            self.n,
            self.groups_x,
            self.rate.to_bits(),
            self.tolerance.to_bits(),
            self.dist[0].to_bits(),
            self.dist[1].to_bits(),
            self.talus_height.to_bits(),
            self.tan_below.to_bits(),
            self.tan_above.to_bits(),
            0,
        ];
        bytemuck::cast_slice(&words).to_vec()
    }
}

/// The thermal process on the GPU over a raster, buffers and pipelines kept between steps.
pub struct GpuThermal {
    ctx: GpuContext,
    field: String,
    n: usize,
    groups: (u32, u32),
    params_buf: wgpu::Buffer,
    heights: wgpu::Buffer,
    tangents: wgpu::Buffer,
    k: wgpu::Buffer,
    s: wgpu::Buffer,
    next: wgpu::Buffer,
    stats: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    group: wgpu::BindGroup,
    /// thermal.wgsl's `talus`, `senders`, `receivers`, `settle`.
    pipes: [wgpu::ComputePipeline; 4],
    /// A `Height` talus: the tangents follow the heights from the second step on.
    height_talus: bool,
    steps: u64,
    has_heights: bool,
}

impl GpuThermal {
    /// Whether the GPU step runs these settings over `grid`: `Ok`, or the error naming
    /// the field at fault. Square cells only (the CPU walks other grids' true link
    /// lengths generically); `Material` only as the one material of a terrain without
    /// layers (the caller refuses layers).
    pub fn supports(grid: Grid, params: &Params, field: &str) -> Result<()> {
        params.validate(field)?;
        if !grid.is_square() {
            return Err(OrogenError::invalid(
                field,
                format!(
                    "the GPU thermal step needs square cells, got {} x {} m; use device: \
                     Cpu, or Auto to run this stage on the CPU",
                    grid.dx(),
                    grid.dy()
                ),
            ));
        }
        crate::context::check_nodes(grid)
    }

    /// Thermal erosion over `grid` with `params` and each cell's talus tangent
    /// (orogen-core's `talus_tangents`, resolved on the CPU once: the noise talus at the
    /// start heights). `field` prefixes error names.
    pub fn on_grid(
        ctx: &GpuContext,
        grid: Grid,
        params: &Params,
        tangents: &[f32],
        field: &str,
    ) -> Result<Self> {
        Self::supports(grid, params, field)?;
        let n = grid.len();
        if tangents.len() != n {
            return Err(OrogenError::invalid(
                format!("{field}.talus"),
                format!("{} tangents for {n} cells", tangents.len()),
            ));
        }
        crate::context::check_binding(ctx, grid, 4)?;
        let limits = ctx.limits();
        let tan = |deg: f32| math::tan((deg as f64).to_radians()) as f32;
        let (height_talus, talus_height, tan_below, tan_above) = match &params.talus {
            TalusAngle::Height(h) => (true, h.height, tan(h.below_deg), tan(h.above_deg)),
            _ => (false, 0.0, 0.0, 0.0),
        };
        let groups = n.div_ceil(WORKGROUP as usize) as u32;
        let gx = groups.min(limits.max_compute_workgroups_per_dimension.max(1));
        let groups = (gx, groups.div_ceil(gx));
        let sp = ShaderParams {
            width: grid.width as u32,
            height: grid.height as u32,
            n: n as u32,
            groups_x: groups.0,
            rate: params.rate,
            tolerance: params.tolerance,
            dist: [grid.cell_size, grid.cell_size * std::f32::consts::SQRT_2],
            talus_height,
            tan_below,
            tan_above,
        };
        let device = &ctx.device;
        device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let storage = |label: &str, size: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let bytes = 4 * n as u64;
        let params_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("thermal params"),
            size: 48,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        ctx.queue.write_buffer(&params_buf, 0, &sp.bytes());
        let heights = storage("thermal heights", bytes);
        let tangents_buf = storage("talus tangents", bytes);
        ctx.queue
            .write_buffer(&tangents_buf, 0, bytemuck::cast_slice(tangents));
        let k = storage("sender factors", bytes);
        let s = storage("receiver scales", bytes);
        let next = storage("next heights", bytes);
        let stats = storage("thermal stats", 4);
        let m = module(device, "thermal", include_str!("shaders/thermal.wgsl"));
        let l = layout(
            device,
            "thermal",
            &[true, false, false, false, false, false],
        );
        let pipes =
            ["talus", "senders", "receivers", "settle"].map(|e| pipeline(device, &l, &m, e));
        let group = bind(
            device,
            &l,
            &[&params_buf, &heights, &tangents_buf, &k, &s, &next, &stats],
        );
        if let Some(e) = pollster::block_on(device.pop_error_scope()) {
            return Err(OrogenError::invalid(
                "grid",
                format!(
                    "the GPU ran out of memory for {}x{} ({e})",
                    grid.width, grid.height
                ),
            ));
        }
        Ok(GpuThermal {
            ctx: ctx.clone(),
            field: field.to_string(),
            n,
            groups,
            params_buf,
            heights,
            tangents: tangents_buf,
            k,
            s,
            next,
            stats,
            layout: l,
            group,
            pipes,
            height_talus,
            steps: 0,
            has_heights: false,
        })
    }

    /// Steps `heights` (another process's buffer on the same GPU, e.g. a
    /// [`crate::GpuStreamPower`]'s, `4·n` bytes, storage and copy usages) from now on
    /// instead of its own: what it holds is the heights.
    pub fn share_heights(&mut self, heights: &wgpu::Buffer) -> Result<()> {
        if heights.size() != 4 * self.n as u64 {
            return Err(OrogenError::invalid(
                &self.field,
                format!(
                    "a shared heights buffer of {} bytes for {} cells",
                    heights.size(),
                    self.n
                ),
            ));
        }
        self.heights = heights.clone();
        self.group = bind(
            &self.ctx.device,
            &self.layout,
            &[
                &self.params_buf,
                &self.heights,
                &self.tangents,
                &self.k,
                &self.s,
                &self.next,
                &self.stats,
            ],
        );
        self.has_heights = true;
        Ok(())
    }

    /// The buffer of heights it steps (its own, or the one shared).
    pub fn heights_buffer(&self) -> &wgpu::Buffer {
        &self.heights
    }

    /// The heights to step from, metres, one per cell, finite.
    pub fn set_heights(&mut self, heights: &[f32]) -> Result<()> {
        if heights.len() != self.n {
            return Err(OrogenError::invalid(
                "heights",
                format!(
                    "has {} values, the grid has {} cells",
                    heights.len(),
                    self.n
                ),
            ));
        }
        if let Some(i) = heights.iter().position(|h| !h.is_finite()) {
            return Err(OrogenError::invalid(
                "heights",
                format!("cell {i} is {} (heights must be finite)", heights[i]),
            ));
        }
        self.ctx
            .queue
            .write_buffer(&self.heights, 0, bytemuck::cast_slice(heights));
        self.has_heights = true;
        Ok(())
    }

    /// One thermal step (submitted, not waited for): as the CPU's `Thermal::step_heights`,
    /// a `Height` talus re-evaluated from the heights from the second step on; nothing
    /// moves when no excess is over the tolerance.
    pub fn step(&mut self) -> Result<()> {
        if !self.has_heights {
            return Err(OrogenError::invalid(
                "heights",
                "the GPU thermal step has no heights yet (call set_heights first)",
            ));
        }
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.clear_buffer(&self.stats, 0, None);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("thermal"),
                timestamp_writes: None,
            });
            pass.set_bind_group(0, &self.group, &[]);
            let first = if self.height_talus && self.steps > 0 {
                0
            } else {
                1
            };
            for pipe in &self.pipes[first..] {
                pass.set_pipeline(pipe);
                pass.dispatch_workgroups(self.groups.0, self.groups.1, 1);
            }
        }
        encoder.copy_buffer_to_buffer(&self.next, 0, &self.heights, 0, 4 * self.n as u64);
        self.ctx.queue.submit([encoder.finish()]);
        self.steps += 1;
        Ok(())
    }

    /// The largest excess over the talus found before the last step, metres (0 before
    /// any); at or below the tolerance that step moved nothing. Waits for the GPU.
    pub fn max_excess(&self) -> Result<f32> {
        let bytes = self.read(&self.stats)?;
        Ok(f32::from_bits(u32::from_le_bytes([
            bytes[0], bytes[1], bytes[2], bytes[3],
        ])))
    }

    /// The heights on the GPU, metres (after the last step). Waits for the GPU.
    pub fn heights(&self) -> Result<Vec<f32>> {
        Ok(bytemuck::pod_collect_to_vec(&self.read(&self.heights)?))
    }

    /// Waits for the steps submitted; an error if the GPU failed.
    pub fn wait(&self) -> Result<()> {
        self.ctx.check(&self.field)
    }

    /// The GPU it runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    fn read(&self, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
        crate::stream_power::read_buffer(&self.ctx, buffer, &self.field)
    }
}
