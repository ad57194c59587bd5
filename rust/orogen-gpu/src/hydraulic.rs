//! The pipe model of `Hydraulic` on the GPU (issue #42): orogen-core's `Hydraulic::step`
//! (eroders/hydraulic.rs, Mei, Decaudin & Hu 2007 §3 as the thesis uses it) as
//! hydraulic.wgsl's passes: sources in, pipe fluxes, depth + velocity + dissolve/deposit,
//! donor-cell sediment transport. One material (no layers), uniform rain or none, sources
//! as the CPU resolves them per cell (uploaded once). Deterministic: no atomics, each
//! invocation writes only its own cell from arrays no other invocation of its pass writes.

use glam::Vec2;
use orogen_core::eroders::hydraulic::{Borders, CapacityLaw, Params, Rain};
use orogen_core::stages::HydraulicState;
use orogen_core::{Grid, OrogenError, Result};

use crate::context::GpuContext;
use crate::stream_power::{bind, layout, module, pipeline};

/// Invocations per workgroup (hydraulic.wgsl's `WG`).
const WORKGROUP: u32 = 256;

/// The hydraulic process on the GPU over a raster, buffers and pipelines kept.
pub struct GpuHydraulic {
    ctx: GpuContext,
    field: String,
    n: usize,
    area: f32,
    groups: (u32, u32),
    bed: wgpu::Buffer,
    water: wgpu::Buffer,
    sed: wgpu::Buffer,
    flux: wgpu::Buffer,
    cellv: wgpu::Buffer,
    add: wgpu::Buffer,
    s_next: wgpu::Buffer,
    group: wgpu::BindGroup,
    /// hydraulic.wgsl's `water_in`, `fluxes`, `depth`, `sediment`.
    pipes: [wgpu::ComputePipeline; 4],
    /// The sources' depth per cell on every step after the first (None: no sources then).
    every: Option<Vec<f32>>,
    /// On the first step (None: no sources then).
    first: Option<Vec<f32>>,
    steps: u64,
    has_heights: bool,
}

impl GpuHydraulic {
    /// Whether the GPU step runs these settings: `Ok`, or the error naming the field at
    /// fault (`{field}.rain` for drops, whose hash needs 64-bit integers).
    pub fn supports(grid: Grid, params: &Params, field: &str) -> Result<()> {
        params.validate_on(&grid, field)?;
        if let Rain::Drops { .. } = params.rain {
            return Err(OrogenError::invalid(
                format!("{field}.rain"),
                "the GPU hydraulic step does not run Drops rain yet; use device: Cpu, or \
                 Auto to run this stage on the CPU",
            ));
        }
        crate::context::check_nodes(grid)
    }

    /// The pipe model over `grid` with `params`; `sources(step)` is the depth the sources
    /// add per cell on that step (orogen-core's `Hydraulic::source_depths`), asked for
    /// steps 0 and 1 (every later step adds what step 1 does); `dissolubility` that of the
    /// one material. `field` prefixes error names.
    pub fn on_grid(
        ctx: &GpuContext,
        grid: Grid,
        params: &Params,
        sources: impl Fn(u64) -> Vec<f32>,
        dissolubility: f32,
        field: &str,
    ) -> Result<Self> {
        Self::supports(grid, params, field)?;
        let n = grid.len();
        let (first, every) = (sources(0), sources(1));
        if first.len() != n || every.len() != n {
            return Err(OrogenError::invalid(
                format!("{field}.sources"),
                format!(
                    "{} source depths for {n} cells",
                    first.len().min(every.len())
                ),
            ));
        }
        crate::context::check_binding(ctx, grid, 16)?;
        let limits = ctx.limits();
        let p = params;
        let groups = n.div_ceil(WORKGROUP as usize) as u32;
        let gx = groups.min(limits.max_compute_workgroups_per_dimension.max(1));
        let groups = (gx, groups.div_ceil(gx));
        // The constants exactly as the CPU's step computes them.
        let l = grid.cell_size;
        let area = grid.cell_area();
        let dt = p.dt;
        let (pipe_a, pipe_l) = p.pipes(&grid);
        let rd = match p.rain {
            Rain::Uniform { rate_m_per_s } => rate_m_per_s * dt,
            _ => 0.0,
        };
        let kf = p.chezy.map_or(0.0, |cz| {
            dt * pipe_a * p.gravity / (cz * cz * pipe_l * pipe_l)
        });
        let open = p.borders == Borders::Open;
        let words: [u32; 24] = [
            grid.width as u32,
            grid.height as u32,
            n as u32,
            groups.0,
            rd.to_bits(),
            (dt * pipe_a * p.gravity / pipe_l).to_bits(),
            area.to_bits(),
            dt.to_bits(),
            l.to_bits(),
            (open as u32 as f32).to_bits(),
            p.min_slope.to_bits(),
            kf.to_bits(),
            (dt / area).to_bits(),
            (1.0 - p.evaporation * dt).to_bits(),
            (if p.evaporation > 0.0 {
                p.min_water_depth
            } else {
                0.0
            })
            .to_bits(),
            p.min_water_depth.to_bits(),
            p.capacity.to_bits(),
            ((p.capacity_law == CapacityLaw::StreamPower) as u32 as f32).to_bits(),
            p.dissolve.to_bits(),
            p.deposit.to_bits(),
            dissolubility.to_bits(),
            (kf > 0.0) as u32,
            open as u32,
            1.0f32.to_bits(),
        ];
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
        let params_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("hydraulic params"),
            size: 96,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        ctx.queue
            .write_buffer(&params_buf, 0, bytemuck::cast_slice(&words));
        let bytes = 4 * n as u64;
        let bed = storage("hydraulic bed", bytes);
        let water = storage("hydraulic water", bytes);
        let sed = storage("hydraulic sediment", bytes);
        let flux = storage("hydraulic flux", 4 * bytes);
        let cellv = storage("hydraulic velocity", 4 * bytes);
        let add = storage("hydraulic sources", bytes);
        let scratch = storage("hydraulic scratch", bytes);
        let s_next = storage("hydraulic next sediment", bytes);
        let m = module(device, "hydraulic", include_str!("shaders/hydraulic.wgsl"));
        let lay = layout(
            device,
            "hydraulic",
            &[false, false, false, false, false, true, false, false],
        );
        let pipes =
            ["water_in", "fluxes", "depth", "sediment"].map(|e| pipeline(device, &lay, &m, e));
        let group = bind(
            device,
            &lay,
            &[
                &params_buf,
                &bed,
                &water,
                &sed,
                &flux,
                &cellv,
                &add,
                &scratch,
                &s_next,
            ],
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
        let some = |v: Vec<f32>| v.iter().any(|&d| d != 0.0).then_some(v);
        Ok(GpuHydraulic {
            ctx: ctx.clone(),
            field: field.to_string(),
            n,
            area,
            groups,
            bed,
            water,
            sed,
            flux,
            cellv,
            add,
            s_next,
            group,
            pipes,
            every: some(every),
            first: some(first),
            steps: 0,
            has_heights: false,
        })
    }

    /// The state to step from: heights (metres, finite), and the water, sediment and
    /// fluxes of a run before (`None`: zero, as the CPU creates them).
    pub fn set_state(
        &mut self,
        heights: &[f32],
        water: Option<&[f32]>,
        sediment: Option<&[f32]>,
        flux: Option<&[[f32; 4]]>,
    ) -> Result<()> {
        let n = self.n;
        let check = |name: &str, len: usize| {
            if len != n {
                return Err(OrogenError::invalid(
                    name,
                    format!("has {len} values, the grid has {n} cells"),
                ));
            }
            Ok(())
        };
        check("heights", heights.len())?;
        if let Some(i) = heights.iter().position(|h| !h.is_finite()) {
            return Err(OrogenError::invalid(
                "heights",
                format!("cell {i} is {} (heights must be finite)", heights[i]),
            ));
        }
        let q = &self.ctx.queue;
        q.write_buffer(&self.bed, 0, bytemuck::cast_slice(heights));
        let zeros = vec![0.0f32; n];
        let w = water.unwrap_or(&zeros);
        check("water_depth", w.len())?;
        q.write_buffer(&self.water, 0, bytemuck::cast_slice(w));
        let s = sediment.unwrap_or(&zeros);
        check("sediment", s.len())?;
        q.write_buffer(&self.sed, 0, bytemuck::cast_slice(s));
        match flux {
            Some(f) => {
                check("flux", f.len())?;
                q.write_buffer(&self.flux, 0, bytemuck::cast_slice(f));
            }
            None => q.write_buffer(&self.flux, 0, bytemuck::cast_slice(&vec![0.0f32; 4 * n])),
        }
        self.has_heights = true;
        Ok(())
    }

    /// Only the heights, the water, sediment and fluxes kept (another process moved the
    /// bed between two steps).
    pub fn set_heights(&mut self, heights: &[f32]) -> Result<()> {
        if heights.len() != self.n || heights.iter().any(|h| !h.is_finite()) {
            return Err(OrogenError::invalid(
                "heights",
                format!("{} values for {} cells, all finite", heights.len(), self.n),
            ));
        }
        self.ctx
            .queue
            .write_buffer(&self.bed, 0, bytemuck::cast_slice(heights));
        Ok(())
    }

    /// One step (submitted, not waited for), as the CPU's `Hydraulic::step` over a
    /// terrain without layers.
    pub fn step(&mut self) -> Result<()> {
        if !self.has_heights {
            return Err(OrogenError::invalid(
                "heights",
                "the GPU hydraulic step has no heights yet (call set_state first)",
            ));
        }
        // The sources of this step: the first step's, then every step's (written when
        // they change).
        let add = match self.steps {
            0 => self.first.as_ref(),
            _ => self.every.as_ref(),
        };
        if let Some(a) = add {
            if self.steps <= 1 {
                self.ctx
                    .queue
                    .write_buffer(&self.add, 0, bytemuck::cast_slice(a));
            }
        }
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("hydraulic"),
                timestamp_writes: None,
            });
            pass.set_bind_group(0, &self.group, &[]);
            let first = if add.is_some() { 0 } else { 1 };
            for pipe in &self.pipes[first..] {
                pass.set_pipeline(pipe);
                pass.dispatch_workgroups(self.groups.0, self.groups.1, 1);
            }
        }
        encoder.copy_buffer_to_buffer(&self.s_next, 0, &self.sed, 0, 4 * self.n as u64);
        self.ctx.queue.submit([encoder.finish()]);
        self.steps += 1;
        Ok(())
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The heights after the last step, metres. Waits for the GPU.
    pub fn heights(&self) -> Result<Vec<f32>> {
        Ok(bytemuck::pod_collect_to_vec(&self.read(&self.bed)?))
    }

    /// Everything it holds after the last step. Waits for the GPU.
    pub fn state(&self) -> Result<HydraulicState> {
        let f32s = |b: &wgpu::Buffer| -> Result<Vec<f32>> {
            Ok(bytemuck::pod_collect_to_vec(&self.read(b)?))
        };
        let flux = f32s(&self.flux)?;
        let cellv = f32s(&self.cellv)?;
        let (mut wl, mut sl) = (0.0f64, 0.0f64);
        let mut velocity = Vec::with_capacity(self.n);
        for c in cellv.chunks_exact(4) {
            velocity.push(Vec2::new(c[0], c[1]));
            wl += c[2] as f64;
            sl += c[3] as f64;
        }
        Ok(HydraulicState {
            heights: f32s(&self.bed)?,
            water: f32s(&self.water)?,
            sediment: f32s(&self.sed)?,
            flux: flux
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect(),
            velocity,
            water_lost_m3: wl,
            sediment_lost_m3: sl * self.area as f64,
        })
    }

    /// Waits for the steps submitted; an error if the GPU failed.
    pub fn wait(&self) -> Result<()> {
        self.ctx.check(&self.field)
    }

    fn read(&self, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
        crate::stream_power::read_buffer(&self.ctx, buffer, &self.field)
    }
}
