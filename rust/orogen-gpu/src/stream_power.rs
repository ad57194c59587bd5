//! The stream-power step on the GPU: D8 receivers, lake routing, drainage accumulation and
//! the implicit solve, with uplift, every phase a WGSL compute shader over the whole grid.
//!
//! The same step as orogen-core's `StreamPower` on a raster, with its lakes (`None`,
//! `Carve`, `Fill`): receivers are the CPU router's bit for bit, carved and filled lakes
//! too (the spanning tree of passes by Borůvka on the GPU, boruvka.wgsl; `lakes.rs` is the
//! CPU's Kruskal the tests compare it with); drainage is summed exactly in 64-bit fixed point; heights follow the CPU's
//! to f32 rounding (the CPU solves in f64). Deterministic: no floating-point atomics, so
//! the same inputs give the same bytes run after run on one GPU.
//!
//! `n ≠ 1` is solved per node by the CPU's Newton iteration, one level (depth below the
//! roots) at a time.
//!
//! Not done yet (the CPU path has them): closed domains (a grid with no open side), outlet
//! masks (nodata), layered terrain, graphs other than the raster.

use orogen_core::eroders::stream_power::{check_values, Inputs, Params, MAX_DT};
use orogen_core::flow::{OutletParams, SinkMode};
use orogen_core::neighbourhood::Side;
use orogen_core::{math, Grid, OrogenError, Result};

use std::sync::atomic::{AtomicU64, Ordering};

use crate::context::GpuContext;
use crate::lakes::LakePasses;

mod lake_routing;
mod levels;
mod profile;
mod surface;

/// Invocations per workgroup (`WG` in the shaders).
const WORKGROUP: u32 = 256;

/// The side of tiles.wgsl's tiles (`TILE`), cells: a workgroup per tile.
const TILE: u32 = 16;

/// The phases of an n = 1 step after its receivers, as [`GpuStreamPower::profile_step`]
/// names them.
pub const PHASES: [&str; 5] = [
    "tiles: in-tile drainage, exits listed (tile_a, link_a)",
    "exits: drainage rounds (exits.wgsl)",
    "tiles: drainage with inflow, in-tile maps (tile_b, link_b)",
    "exits: solve rounds (solve.wgsl)",
    "heights (solve_b)",
];

/// Speculative steps submitted at most before their skip count is read.
const MAX_PENDING: usize = 32;

/// Bytes of one candidate pass (basins.wgsl): five words.
const CANDIDATE_BYTES: u64 = 20;

/// The shaders' `Params` (common.wgsl), 80 bytes.
#[derive(Clone, Copy)]
struct ShaderParams {
    width: u32,
    height: u32,
    n: u32,
    open: u32,
    has_sea: u32,
    sea: f32,
    dt: f32,
    m: f32,
    dx: f32,
    dy: f32,
    diag: f32,
    inv_scale: f32,
    groups_x: u32,
    groups_y: u32,
    count: u32,
    keep: u32,
    epsilon: f32,
    slope_exp: f32,
    tiles_x: u32,
    tiles_y: u32,
}

impl ShaderParams {
    /// The uniform buffer's bytes, in the shader's field order.
    fn bytes(&self) -> Vec<u8> {
        let words = [
            self.width,
            self.height,
            self.n,
            self.open,
            self.has_sea,
            self.sea.to_bits(),
            self.dt.to_bits(),
            self.m.to_bits(),
            self.dx.to_bits(),
            self.dy.to_bits(),
            self.diag.to_bits(),
            self.inv_scale.to_bits(),
            self.groups_x,
            self.groups_y,
            self.count,
            self.keep,
            self.epsilon.to_bits(),
            self.slope_exp.to_bits(),
            self.tiles_x,
            self.tiles_y,
        ];
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

pub(crate) fn module(device: &wgpu::Device, label: &str, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

/// A bind group layout: binding 0 the uniform parameters, then storage buffers, `true`
/// where read-only.
pub(crate) fn layout(
    device: &wgpu::Device,
    label: &str,
    read_only: &[bool],
) -> wgpu::BindGroupLayout {
    let mut entries = vec![wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }];
    for (k, &ro) in read_only.iter().enumerate() {
        entries.push(wgpu::BindGroupLayoutEntry {
            binding: k as u32 + 1,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: ro },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        });
    }
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

pub(crate) fn pipeline(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    module: &wgpu::ShaderModule,
    entry: &str,
) -> wgpu::ComputePipeline {
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(entry),
        bind_group_layouts: &[layout],
        push_constant_ranges: &[],
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(&pl),
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

pub(crate) fn bind(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(k, b)| wgpu::BindGroupEntry {
            binding: k as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout,
        entries: &entries,
    })
}

/// The fixed-point scale of the drainage sums: the largest power of two `2^e` with
/// `total·2^e ≤ 2^62` (so no sum can overflow 64 bits), `e` kept where `2^-e` is a normal
/// f32 (the shaders multiply by it).
fn fixed_point_exponent(total: f64) -> i32 {
    if total > 0.0 {
        (62.0 - total.log2()).floor().clamp(-125.0, 125.0) as i32
    } else {
        0
    }
}

/// The stream-power process on the GPU over a raster, with its buffers and pipelines kept
/// between steps; heights stay on the GPU from step to step.
pub struct GpuStreamPower {
    ctx: GpuContext,
    field: String,
    n: usize,
    /// Pointer-jumping rounds at most: `ceil(log2 n)`, enough for the longest possible
    /// chain, rounded up to even (rounds run in pairs; control.wgsl stops them early).
    rounds: u32,
    /// The exits' rounds a speculative step encodes (even, at most `rounds`): learnt at
    /// each settle from the pairs the steps ran (`rounds` after a step they did not
    /// suffice for).
    spec_rounds: u32,
    groups: (u32, u32),
    params: ShaderParams,
    /// The drainage sums' scale, `2^scale_exp`.
    scale_exp: i32,
    /// Each node's drainage weight (cell area × precipitation) in fixed point, two words.
    weights: wgpu::Buffer,
    /// Each node's erodibility and uplift rate.
    coefs: wgpu::Buffer,
    grid: Grid,
    params_buf: wgpu::Buffer,
    heights: wgpu::Buffer,
    receivers: wgpu::Buffer,
    /// The drainage sums' two buffers: the result is in the first (rounds run in pairs).
    sums: [wgpu::Buffer; 2],
    /// The indirect dispatch arguments of the rounds.
    args: wgpu::Buffer,
    /// The basins' dispatches: the full grid where the receivers left a pit, else empty.
    lake_args: wgpu::Buffer,
    /// A speculative step's dispatches: the full grid where the receivers left no pit,
    /// else empty (control.wgsl's `gate`).
    gate_args: wgpu::Buffer,
    /// The `dt` of the speculative steps submitted since the last look at the skip count.
    pending: Vec<f32>,
    /// The skip count after each speculative step in flight, copied to a mappable buffer
    /// and mapped without waiting (with the map's state: 0 pending, 1 mapped, 2 failed),
    /// and the buffers free for reuse.
    probes: std::collections::VecDeque<(wgpu::Buffer, std::sync::Arc<std::sync::atomic::AtomicU8>)>,
    spare_probes: Vec<wgpu::Buffer>,
    /// `arm`, `reset`, `plan`, `arm_lakes`, `gate`, `arm_lakes_rounds`, `next_round`,
    /// `arm_fill`, `arm_exits`, `arm_x`, `rounds_done` and `enter` of control.wgsl, and
    /// their bind group.
    control: [wgpu::ComputePipeline; 12],
    control_group: wgpu::BindGroup,
    descend: (wgpu::ComputePipeline, wgpu::BindGroup),
    /// receivers.wgsl's `quotients` (the slope division alone, for the tests).
    quotients: wgpu::ComputePipeline,
    /// accumulate.wgsl's full-grid rounds (carve.wgsl's marking).
    acc_copy: wgpu::ComputePipeline,
    acc_scatter: wgpu::ComputePipeline,
    acc_groups: [wgpu::BindGroup; 2],
    /// tiles.wgsl's `tile_a`, `link_a`, `tile_b`, `tile_b_drain`, `link_b`, `solve_b`, and
    /// its bind group.
    tiles: [wgpu::ComputePipeline; 6],
    tiles_group: wgpu::BindGroup,
    /// exits.wgsl's `copy` and `scatter` (the exits' drainage rounds), bind groups a → b
    /// and b → a.
    x_copy: wgpu::ComputePipeline,
    x_scatter: wgpu::ComputePipeline,
    x_groups: [wgpu::BindGroup; 2],
    /// solve.wgsl's `compose` over the exits.
    compose: wgpu::ComputePipeline,
    solve_groups: [wgpu::BindGroup; 2],
    /// Lake routing: `None`, `Carve` or `Fill`.
    lakes: SinkMode,
    dists: wgpu::Buffer,
    jumps: [wgpu::Buffer; 2],
    maps: [wgpu::Buffer; 2],
    /// basins.wgsl's candidate passes (`room` of them fit), their counter, and the passes
    /// chosen on the CPU (`pass_room` fit), as carve.wgsl reads them.
    candidates: wgpu::Buffer,
    room: u64,
    counter: wgpu::Buffer,
    passes: wgpu::Buffer,
    pass_room: u64,
    /// basins.wgsl's entries `label_init`, `label_jump`, `label_key`, `mask`, `emit`.
    basins: [wgpu::ComputePipeline; 5],
    basins_layout: wgpu::BindGroupLayout,
    basins_group: wgpu::BindGroup,
    /// basins.wgsl's keys and masks (of the uncarved receivers).
    lake_keys: wgpu::Buffer,
    lake_masks: wgpu::Buffer,
    /// boruvka.wgsl's `init`, `reset`, `pick0` to `pick3`, `hook`, `carve`, `relabel`, and
    /// its bind group.
    boruvka: [wgpu::ComputePipeline; 9],
    boruvka_group: wgpu::BindGroup,
    /// carve.wgsl's entries `mark_init`, `mark_seed`, `flip_chain`, `flip_pass`,
    /// `flip_apply`.
    carve: [wgpu::ComputePipeline; 5],
    carve_layout: wgpu::BindGroupLayout,
    carve_group: wgpu::BindGroup,
    /// fill.wgsl's `init`, `round`, `finish`, and its two bind groups (maps a → b, b → a).
    fill: [wgpu::ComputePipeline; 3],
    fill_groups: [wgpu::BindGroup; 2],
    /// solve_n.wgsl's `init`, `next`, `level` (n ≠ 1), and its bind group.
    solve_n: [wgpu::ComputePipeline; 3],
    solve_n_group: wgpu::BindGroup,
    /// levels.wgsl's `depth_init`, `depth_round`, `histogram`, `scatter`, and its two bind
    /// groups (maps a → b, b → a).
    levels: [wgpu::ComputePipeline; 4],
    levels_groups: [wgpu::BindGroup; 2],
    /// The deepest level and the current one.
    info: wgpu::Buffer,
    /// The nodes per level and where each level starts, read back each step (n ≠ 1).
    level_counts: Vec<u32>,
    level_offsets: Vec<u32>,
    lake_passes: LakePasses,
    pass_list: Vec<[u32; 2]>,
    /// Lakes found by the last route or step when the CPU took the spanning tree; `None`
    /// where the GPU did (the count is then on the GPU, basins.wgsl's `counter[5]`).
    lake_count: Option<usize>,
    live: wgpu::Buffer,
    /// True once the heights were set.
    has_heights: bool,
    /// Dispatches encoded so far (receivers, drainage, solve and control; not the lakes'),
    /// for the bench's count per step.
    encoded: AtomicU64,
    /// True once drainage was accumulated on the current receivers.
    has_drainage: bool,
    /// The parameters' bytes last written to `params_buf`.
    written: std::sync::Mutex<Option<Vec<u8>>>,
    /// Speculative steps skipped so far (for a pit or too few exit rounds, or after
    /// another skipped step), and how `settle` ran them again: as full steps with the
    /// lakes routed, or speculatively again (the bench's count).
    redone: [u64; 3],
}

impl GpuStreamPower {
    /// Whether the GPU step can run these settings: `Ok` if so, else the error
    /// [`GpuStreamPower::on_grid`] would give, naming the field (`{field}.n`,
    /// `{field}.lakes.Fill.epsilon`, `{field}.outlets.borders`). No GPU needed: a
    /// `device: Auto` switch can ask this before choosing the CPU.
    pub fn supports(params: &Params, outlets: &OutletParams, field: &str) -> Result<()> {
        params.validate(field)?;
        outlets.validate(&format!("{field}.outlets"))?;
        if outlets.borders.is_empty() {
            return Err(OrogenError::invalid(
                format!("{field}.outlets.borders"),
                "the GPU step needs at least one open side (closed domains: use device: Cpu)",
            ));
        }
        Ok(())
    }

    /// Stream power on `grid` with `outlets`, as the CPU's `StreamPower::on_grid`. Refuses,
    /// with an error naming the field, what the GPU step does not do yet
    /// ([`GpuStreamPower::supports`]). `field` prefixes error names.
    pub fn on_grid(
        ctx: &GpuContext,
        grid: Grid,
        outlets: &OutletParams,
        params: &Params,
        inputs: Inputs,
        field: &str,
    ) -> Result<Self> {
        Self::supports(params, outlets, field)?;
        let lakes = params.lakes;
        let n = grid.len();
        check_values(&format!("{field}.k"), &inputs.k, n, false)?;
        check_values("uplift", &inputs.uplift, n, true)?;
        if let Some(p) = &inputs.precipitation {
            check_values(&format!("{field}.precipitation"), p, n, false)?;
        }
        if n < 2 || n >= u32::MAX as usize {
            return Err(OrogenError::invalid(
                "grid",
                format!("the GPU step needs 2 to {} nodes, got {n}", u32::MAX - 1),
            ));
        }
        // The largest binding: the solve's maps, 16 bytes a node.
        crate::context::check_binding(ctx, grid, 16)?;
        let limits = ctx.limits();
        let (fixed, scale_exp, coefs) = input_words(grid, &inputs);
        let mut open = 0u32;
        for side in &outlets.borders {
            open |= match side {
                Side::North => 1,
                Side::South => 2,
                Side::East => 4,
                Side::West => 8,
            };
        }
        // The CPU's RasterGrid distances.
        let diag = if grid.is_square() {
            grid.cell_size * std::f32::consts::SQRT_2
        } else {
            math::hypot(grid.dx() as f64, grid.dy() as f64) as f32
        };
        let mut params = ShaderParams {
            width: grid.width as u32,
            height: grid.height as u32,
            n: n as u32,
            open,
            has_sea: outlets.sea_level.is_some() as u32,
            sea: outlets.sea_level.unwrap_or(0.0),
            dt: 0.0,
            m: params.m,
            dx: grid.dx(),
            dy: grid.dy(),
            diag,
            inv_scale: 2f32.powi(-scale_exp),
            groups_x: 0,
            groups_y: 0,
            count: 0,
            keep: 0,
            epsilon: match params.lakes {
                SinkMode::Fill { epsilon } => epsilon,
                _ => 0.0,
            },
            slope_exp: params.n,
            tiles_x: 0,
            tiles_y: 0,
        };
        let groups = n.div_ceil(WORKGROUP as usize) as u32;
        let max_groups = limits.max_compute_workgroups_per_dimension.max(1);
        let gx = groups.min(max_groups);
        let groups = (gx, groups.div_ceil(gx));
        (params.groups_x, params.groups_y) = groups;
        params.tiles_x = (grid.width as u32).div_ceil(TILE);
        params.tiles_y = (grid.height as u32).div_ceil(TILE);
        let rounds = (usize::BITS - (n - 1).leading_zeros())
            .max(1)
            .next_multiple_of(2);

        let device = &ctx.device;
        device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        device.push_error_scope(wgpu::ErrorFilter::Validation);
        let storage = |label: &str, size: u64, extra: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE | extra,
                mapped_at_creation: false,
            })
        };
        let init = |label: &str, bytes: &[u8]| {
            let b = storage(label, bytes.len() as u64, wgpu::BufferUsages::COPY_DST);
            ctx.queue.write_buffer(&b, 0, bytes);
            b
        };
        let io = wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        let n64 = n as u64;
        let params_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: 80,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let heights = storage("heights", 4 * n64, io);
        let receivers = storage("receivers", 4 * n64, io);
        let dists = storage("dists", 4 * n64, io);
        let weights = init("weights", bytemuck::cast_slice(&fixed));
        let coefs = init("coefs", bytemuck::cast_slice(&coefs));
        let (weights_buf, coefs_buf) = (weights.clone(), coefs.clone());
        let sums = [
            storage("sums a", 8 * n64, io),
            storage("sums b", 8 * n64, io),
        ];
        let jumps = [
            storage("jump a", 4 * n64, io),
            storage("jump b", 4 * n64, io),
        ];
        let live = storage("live", 4, wgpu::BufferUsages::empty());
        // The `live` of the exits' first round of a pair, never read.
        let sink = storage("live sink", 4, wgpu::BufferUsages::empty());
        let lives = [&sink, &live];
        // control.wgsl's nine words.
        let args = storage(
            "round arguments",
            36,
            wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_SRC,
        );
        let maps = [
            storage("maps a", 16 * n64, wgpu::BufferUsages::empty()),
            storage("maps b", 16 * n64, wgpu::BufferUsages::empty()),
        ];
        // Room for a candidate pass per 16 nodes at first (grown when a step finds more).
        let room = (n64 / 16).max(1024);
        let candidates = storage(
            "candidate passes",
            room * CANDIDATE_BYTES,
            wgpu::BufferUsages::COPY_SRC,
        );
        // [0] the candidates found, [1] set when the receivers leave a pit, [2] the
        // speculative steps skipped for a pit, [3] 1 while the current one is skipped, [4]
        // set when a Borůvka round hooked some component, [5] the lakes (pits) found.
        // [6] the most pairs of exit rounds a speculative step ran, [7] the speculative
        // steps skipped for too few rounds.
        let counter = storage("candidate count", 32, io);
        let lake_args = storage("lake arguments", 12, wgpu::BufferUsages::INDIRECT);
        let gate_args = storage("step arguments", 48, wgpu::BufferUsages::INDIRECT);
        // tiles.wgsl: each cell's exit, each exit's id and the list of exits, their count;
        // the exits' maps' second buffer.
        let exit_of = storage("exit of", 4 * n64, wgpu::BufferUsages::empty());
        let cid = storage("exit ids", 4 * n64, wgpu::BufferUsages::empty());
        let exits = storage("exits", 4 * n64, wgpu::BufferUsages::empty());
        let xcount = storage("exit count", 8, wgpu::BufferUsages::empty());
        let exit_maps = storage("exit maps", 16 * n64, wgpu::BufferUsages::empty());
        let lake_keys = storage("lake keys", 4 * n64, wgpu::BufferUsages::empty());
        let lake_masks = storage("lake masks", 4 * n64, wgpu::BufferUsages::empty());
        let comp = storage("components", 4 * n64, wgpu::BufferUsages::empty());
        let hooks = storage("hooks", 8 * n64, wgpu::BufferUsages::empty());
        let pass_room = 1024u64;
        let passes = storage("passes", 8 * pass_room, wgpu::BufferUsages::COPY_DST);

        let common = include_str!("shaders/common.wgsl");
        let with_common =
            |label: &str, body: &str| module(device, label, &format!("{common}\n{body}"));
        let m_descend = with_common("receivers", include_str!("shaders/receivers.wgsl"));
        let m_acc = with_common("accumulate", include_str!("shaders/accumulate.wgsl"));
        let m_tiles = with_common("tiles", include_str!("shaders/tiles.wgsl"));
        let m_exits = with_common("exits", include_str!("shaders/exits.wgsl"));
        let m_solve = with_common("solve", include_str!("shaders/solve.wgsl"));
        let m_control = with_common("control", include_str!("shaders/control.wgsl"));
        let m_basins = with_common("basins", include_str!("shaders/basins.wgsl"));
        let m_carve = with_common("carve", include_str!("shaders/carve.wgsl"));
        let m_boruvka = with_common("boruvka", include_str!("shaders/boruvka.wgsl"));
        let m_fill = with_common("fill", include_str!("shaders/fill.wgsl"));
        let m_solve_n = with_common("solve_n", include_str!("shaders/solve_n.wgsl"));
        let m_levels = with_common("levels", include_str!("shaders/levels.wgsl"));

        let l_descend = layout(device, "receivers", &[true, false, false, false]);
        let l_acc = layout(
            device,
            "accumulate",
            &[true, true, false, false, false, false, false],
        );
        let l_tiles = layout(
            device,
            "tiles",
            &[
                true, true, false, false, false, false, false, false, false, false, true, true,
                false, false,
            ],
        );
        let l_exits = layout(device, "exits", &[true, false, false, false, false, false]);
        let l_solve = layout(device, "solve", &[false, false, false, false, true, false]);
        let l_control = layout(
            device,
            "control",
            &[false, false, false, false, false, false],
        );
        let l_boruvka = layout(
            device,
            "boruvka",
            &[true, false, true, true, false, false, false, false, false],
        );
        let l_basins = layout(
            device,
            "basins",
            &[true, true, false, false, false, false, false],
        );
        let l_carve = layout(device, "carve", &[false, false, false, false, true, false]);
        let l_fill = layout(device, "fill", &[false, true, false, false, false]);
        let l_solve_n = layout(
            device,
            "solve_n",
            &[false, true, true, true, true, false, true, true, false],
        );
        let l_levels = layout(
            device,
            "levels",
            &[true, false, false, false, false, false, false],
        );
        // The levels' deepest level and current level.
        let info = storage("levels", 8, io);

        let descend = (
            pipeline(device, &l_descend, &m_descend, "main"),
            bind(
                device,
                &l_descend,
                &[&params_buf, &heights, &receivers, &dists, &counter],
            ),
        );
        let acc_groups = [0, 1].map(|s| {
            let d = 1 - s;
            bind(
                device,
                &l_acc,
                &[
                    &params_buf,
                    &receivers,
                    &weights,
                    &sums[s],
                    &jumps[s],
                    &sums[d],
                    &jumps[d],
                    &live,
                ],
            )
        });
        // The exits' sums in sums b and maps a, their jumps in jump a and b, their maps in
        // maps a and the exit maps; each cell's map in maps b.
        let tiles_group = bind(
            device,
            &l_tiles,
            &[
                &params_buf,
                &receivers,
                &weights,
                &exit_of,
                &cid,
                &exits,
                &xcount,
                &sums[1],
                &jumps[0],
                &sums[0],
                &heights,
                &dists,
                &coefs,
                &maps[1],
                &maps[0],
            ],
        );
        let x_sums = [&sums[1], &maps[0]];
        let x_groups = [0, 1].map(|s| {
            let d = 1 - s;
            bind(
                device,
                &l_exits,
                &[
                    &params_buf,
                    &xcount,
                    x_sums[s],
                    &jumps[s],
                    x_sums[d],
                    &jumps[d],
                    lives[s],
                ],
            )
        });
        let x_maps = [&maps[0], &exit_maps];
        let solve_groups = [0, 1].map(|s| {
            let d = 1 - s;
            bind(
                device,
                &l_solve,
                &[
                    &params_buf,
                    x_maps[s],
                    &jumps[s],
                    x_maps[d],
                    &jumps[d],
                    &xcount,
                    lives[s],
                ],
            )
        });
        let control_group = bind(
            device,
            &l_control,
            &[
                &params_buf,
                &live,
                &args,
                &counter,
                &lake_args,
                &gate_args,
                &xcount,
            ],
        );
        let basins_group = bind(
            device,
            &l_basins,
            &[
                &params_buf,
                &heights,
                &receivers,
                &lake_keys,
                &lake_masks,
                &candidates,
                &counter,
                &live,
            ],
        );
        // The lightest edges' keys in maps a (four words a node; free until the solve).
        let boruvka_group = bind(
            device,
            &l_boruvka,
            &[
                &params_buf,
                &heights,
                &receivers,
                &lake_keys,
                &lake_masks,
                &comp,
                &maps[0],
                &hooks,
                &counter,
                &dists,
            ],
        );
        let carve_group = bind(
            device,
            &l_carve,
            &[
                &params_buf,
                &receivers,
                &dists,
                &sums[0],
                &jumps[0],
                &passes,
                &maps[1],
            ],
        );
        // n ≠ 1: the nodes' data in maps b, the order in jump a, the counts and cursors in
        // jump b, the offsets in sums b (all free once the drainage is summed).
        let solve_n_group = bind(
            device,
            &l_solve_n,
            &[
                &params_buf,
                &heights,
                &receivers,
                &dists,
                &sums[0],
                &coefs,
                &maps[1],
                &jumps[0],
                &sums[1],
                &info,
            ],
        );
        let levels_groups = [0, 1].map(|s| {
            bind(
                device,
                &l_levels,
                &[
                    &params_buf,
                    &receivers,
                    &maps[s],
                    &maps[1 - s],
                    &jumps[1],
                    &jumps[0],
                    &live,
                    &info,
                ],
            )
        });
        let fill_groups = [0, 1].map(|s| {
            bind(
                device,
                &l_fill,
                &[
                    &params_buf,
                    &heights,
                    &receivers,
                    &maps[s],
                    &maps[1 - s],
                    &live,
                ],
            )
        });
        let gp = GpuStreamPower {
            control: [
                "arm",
                "reset",
                "plan",
                "arm_lakes",
                "gate",
                "arm_lakes_rounds",
                "next_round",
                "arm_fill",
                "arm_exits",
                "arm_x",
                "rounds_done",
                "enter",
            ]
            .map(|e| pipeline(device, &l_control, &m_control, e)),
            control_group,
            args,
            lake_args,
            gate_args,
            pending: Vec::new(),
            probes: Default::default(),
            spare_probes: Vec::new(),
            acc_copy: pipeline(device, &l_acc, &m_acc, "copy"),
            acc_scatter: pipeline(device, &l_acc, &m_acc, "scatter"),
            tiles: [
                "tile_a",
                "link_a",
                "tile_b",
                "tile_b_drain",
                "link_b",
                "solve_b",
            ]
            .map(|e| pipeline(device, &l_tiles, &m_tiles, e)),
            tiles_group,
            x_copy: pipeline(device, &l_exits, &m_exits, "copy"),
            x_scatter: pipeline(device, &l_exits, &m_exits, "scatter"),
            x_groups,
            compose: pipeline(device, &l_solve, &m_solve, "compose"),
            ctx: ctx.clone(),
            field: field.to_string(),
            n,
            rounds,
            spec_rounds: rounds,
            groups,
            params,
            scale_exp,
            weights: weights_buf,
            coefs: coefs_buf,
            grid,
            params_buf,
            heights,
            receivers,
            sums,
            quotients: pipeline(device, &l_descend, &m_descend, "quotients"),
            descend,
            acc_groups,
            solve_groups,
            lakes,
            basins: ["label_init", "label_jump", "label_key", "mask", "emit"]
                .map(|e| pipeline(device, &l_basins, &m_basins, e)),
            basins_layout: l_basins,
            basins_group,
            lake_keys,
            lake_masks,
            boruvka: [
                "init", "reset", "pick0", "pick1", "pick2", "pick3", "hook", "carve", "relabel",
            ]
            .map(|e| pipeline(device, &l_boruvka, &m_boruvka, e)),
            boruvka_group,
            carve: [
                "mark_init",
                "mark_seed",
                "flip_chain",
                "flip_pass",
                "flip_apply",
            ]
            .map(|e| pipeline(device, &l_carve, &m_carve, e)),
            carve_layout: l_carve,
            carve_group,
            fill: ["init", "round", "finish"].map(|e| pipeline(device, &l_fill, &m_fill, e)),
            fill_groups,
            solve_n: ["init", "next", "level"].map(|e| pipeline(device, &l_solve_n, &m_solve_n, e)),
            solve_n_group,
            levels: ["depth_init", "depth_round", "histogram", "scatter"]
                .map(|e| pipeline(device, &l_levels, &m_levels, e)),
            levels_groups,
            info,
            level_counts: Vec::new(),
            level_offsets: Vec::new(),
            dists,
            jumps,
            maps,
            candidates,
            room,
            counter,
            passes,
            pass_room,
            lake_passes: LakePasses::default(),
            pass_list: Vec::new(),
            lake_count: Some(0),
            live,
            has_heights: false,
            has_drainage: false,
            encoded: AtomicU64::new(0),
            redone: [0; 3],
            written: std::sync::Mutex::new(None),
        };
        let validation = pollster::block_on(device.pop_error_scope());
        let memory = pollster::block_on(device.pop_error_scope());
        if let Some(e) = memory.or(validation) {
            return Err(OrogenError::invalid(
                field,
                format!(
                    "the GPU step could not be set up on {}: {e}",
                    ctx.describe()
                ),
            ));
        }
        Ok(gp)
    }

    /// The heights to step from, metres, one per cell, finite.
    pub fn set_heights(&mut self, heights: &[f32]) -> Result<()> {
        if heights.len() != self.n {
            return Err(OrogenError::invalid(
                "heights",
                format!(
                    "has {} values, the grid has {} nodes",
                    heights.len(),
                    self.n
                ),
            ));
        }
        if let Some(i) = heights.iter().position(|h| !h.is_finite()) {
            return Err(OrogenError::invalid(
                "heights",
                format!("node {i} is {} (heights must be finite)", heights[i]),
            ));
        }
        self.ctx
            .queue
            .write_buffer(&self.heights, 0, bytemuck::cast_slice(heights));
        // Steps not settled yet were on the old heights: forgotten, with their skip count.
        self.pending.clear();
        self.probes.clear();
        self.ctx.queue.write_buffer(&self.counter, 8, &[0; 8]);
        self.has_heights = true;
        self.has_drainage = false;
        Ok(())
    }

    /// New erodibility, uplift and precipitation (live painting's maps), uploaded into
    /// the buffers in place: the same steps after it as a stepper made with them. The
    /// steps in flight are settled first, with the inputs they were submitted with.
    pub fn set_inputs(&mut self, inputs: &Inputs) -> Result<()> {
        let n = self.n;
        check_values(&format!("{}.k", self.field), &inputs.k, n, false)?;
        check_values("uplift", &inputs.uplift, n, true)?;
        if let Some(p) = &inputs.precipitation {
            check_values(&format!("{}.precipitation", self.field), p, n, false)?;
        }
        if self.has_heights {
            self.settle()?;
        }
        let (fixed, scale_exp, coefs) = input_words(self.grid, inputs);
        let queue = &self.ctx.queue;
        queue.write_buffer(&self.weights, 0, bytemuck::cast_slice(&fixed));
        queue.write_buffer(&self.coefs, 0, bytemuck::cast_slice(&coefs));
        self.scale_exp = scale_exp;
        self.params.inv_scale = 2f32.powi(-scale_exp);
        self.has_drainage = false;
        Ok(())
    }

    fn need_heights(&self) -> Result<()> {
        if self.has_heights {
            Ok(())
        } else {
            Err(OrogenError::invalid(
                "heights",
                "the GPU step has no heights yet (call set_heights first)",
            ))
        }
    }

    fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass,
        pipe: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
    ) {
        self.encoded.fetch_add(1, Ordering::Relaxed);
        pass.set_pipeline(pipe);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(self.groups.0, self.groups.1, 1);
    }

    /// One workgroup of control.wgsl's entry `k` (0 arm, 1 reset, 2 plan, 3 arm_lakes,
    /// 4 gate, 5 arm_lakes_rounds, 6 next_round, 7 arm_fill, 8 arm_exits, 9 arm_x,
    /// 10 rounds_done, 11 enter).
    fn control(&self, pass: &mut wgpu::ComputePass, k: usize) {
        self.encoded.fetch_add(1, Ordering::Relaxed);
        pass.set_pipeline(&self.control[k]);
        pass.set_bind_group(0, &self.control_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// A speculative step's receivers: control.wgsl's `enter` (skips the step at once where
    /// an earlier one since the last settle was skipped), the receivers sized by it, then
    /// `gate` (skips the step where they left a pit).
    fn encode_speculative_receivers(&self, pass: &mut wgpu::ComputePass) {
        self.control(pass, 11);
        self.encoded.fetch_add(1, Ordering::Relaxed);
        pass.set_pipeline(&self.descend.0);
        pass.set_bind_group(0, &self.descend.1, &[]);
        pass.dispatch_workgroups_indirect(&self.gate_args, 32);
        self.control(pass, 4);
    }

    /// A round's dispatch, sized by control.wgsl (empty once every chain is done).
    fn dispatch_round(
        &self,
        pass: &mut wgpu::ComputePass,
        pipe: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
    ) {
        self.encoded.fetch_add(1, Ordering::Relaxed);
        pass.set_pipeline(pipe);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups_indirect(&self.args, 0);
    }

    /// After round `r`: reset the live flag, or plan the next pair.
    fn end_round(&self, pass: &mut wgpu::ComputePass, r: usize) {
        self.control(pass, if r % 2 == 1 { 2 } else { 1 });
    }

    /// `count` invocations of `pipe` (one per pass), in rows of workgroups as the grid's.
    fn dispatch_count(
        &self,
        pass: &mut wgpu::ComputePass,
        pipe: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        count: u32,
    ) {
        let groups = count.div_ceil(WORKGROUP).max(1);
        let gx = groups.min(self.groups.0.max(1));
        pass.set_pipeline(pipe);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(gx, groups.div_ceil(gx), 1);
    }

    /// The drainage accumulation's rounds, from the sums and jumps in the first buffers.
    fn encode_rounds(&self, pass: &mut wgpu::ComputePass) {
        self.control(pass, 0);
        for r in 0..self.rounds as usize {
            let g = &self.acc_groups[r % 2];
            self.dispatch_round(pass, &self.acc_copy, g);
            self.dispatch_round(pass, &self.acc_scatter, g);
            self.end_round(pass, r);
        }
    }

    /// tiles.wgsl's entry `k` (0 tile_a, 1 link_a, 2 tile_b, 3 tile_b_drain, 4 link_b, 5
    /// solve_b): a workgroup per tile (0, 2, 3), per exit (1, 4) or per cell (5); `gated`
    /// sizes the tile and cell dispatches by control.wgsl's `gate` (a speculative step).
    fn tiles(&self, pass: &mut wgpu::ComputePass, k: usize, gated: bool) {
        self.encoded.fetch_add(1, Ordering::Relaxed);
        pass.set_pipeline(&self.tiles[k]);
        pass.set_bind_group(0, &self.tiles_group, &[]);
        match (k, gated) {
            (1 | 4, _) => pass.dispatch_workgroups_indirect(&self.args, 20),
            (5, true) => pass.dispatch_workgroups_indirect(&self.gate_args, 0),
            (5, false) => pass.dispatch_workgroups(self.groups.0, self.groups.1, 1),
            (_, true) => pass.dispatch_workgroups_indirect(&self.gate_args, 16),
            (_, false) => pass.dispatch_workgroups(self.params.tiles_x, self.params.tiles_y, 1),
        }
    }

    /// Encodes the drainage over the current receivers by tiles (tiles.wgsl: in-tile sums,
    /// the exits' rounds, in-tile sums again with the exits' inflow), then with `solve`
    /// the implicit solve for n = 1 the same way. `gated`: the dispatches of a speculative
    /// step, emptied by control.wgsl's `gate` where it is skipped.
    fn encode_drainage(&self, pass: &mut wgpu::ComputePass, gated: bool, solve: bool) {
        self.encode_phase(pass, 0, gated);
        self.encode_phase(pass, 1, gated);
        if !solve {
            self.tiles(pass, 3, gated);
            return;
        }
        for k in 2..PHASES.len() {
            self.encode_phase(pass, k, gated);
        }
    }

    /// The exits' rounds encoded: every round (`ceil(log2 n)`), or in a speculative step
    /// (`gated`) as many as the steps settled last needed and a pair more
    /// (control.wgsl's `rounds_done` skips a step they do not suffice for).
    fn rounds_of(&self, gated: bool) -> u32 {
        if gated {
            self.spec_rounds
        } else {
            self.rounds
        }
    }

    /// Phase `k` of [`PHASES`] after the receivers (the n = 1 step's drainage and solve).
    fn encode_phase(&self, pass: &mut wgpu::ComputePass, k: usize, gated: bool) {
        match k {
            0 => {
                self.tiles(pass, 0, gated);
                self.control(pass, 8);
                self.tiles(pass, 1, gated);
            }
            1 => {
                // A plan after each pair only: the pair's first round (bind group 0) sets
                // a sink, not `live`, so no reset is needed between.
                for r in 0..self.rounds_of(gated) as usize {
                    let g = &self.x_groups[r % 2];
                    self.dispatch_round(pass, &self.x_copy, g);
                    self.dispatch_round(pass, &self.x_scatter, g);
                    if r % 2 == 1 {
                        self.control(pass, 2);
                    }
                }
                // Counts the pairs run (every step), skips a speculative step they do not
                // suffice for.
                self.control(pass, 10);
            }
            2 => {
                self.tiles(pass, 2, gated);
                self.tiles(pass, 4, gated);
                self.control(pass, 9);
            }
            3 => {
                for r in 0..self.rounds_of(gated) as usize {
                    self.dispatch_round(pass, &self.compose, &self.solve_groups[r % 2]);
                    if r % 2 == 1 {
                        self.control(pass, 2);
                    }
                }
            }
            _ => self.tiles(pass, 5, gated),
        }
    }

    /// Records `f`'s dispatches in one compute pass (after `before`'s commands) and
    /// submits them.
    fn run(
        &self,
        before: impl FnOnce(&mut wgpu::CommandEncoder),
        f: impl FnOnce(&mut wgpu::ComputePass),
    ) {
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        before(&mut encoder);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("stream power"),
                timestamp_writes: None,
            });
            f(&mut pass);
        }
        self.ctx.queue.submit([encoder.finish()]);
    }

    /// Writes the shader parameters where they changed since the last write (a write is a
    /// copy before the next submission's work).
    fn write_params(&self) {
        let bytes = self.params.bytes();
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        if written.as_deref() != Some(&bytes[..]) {
            self.ctx.queue.write_buffer(&self.params_buf, 0, &bytes);
            *written = Some(bytes);
        }
    }

    /// One step (`solve`) or route: receivers, lakes, drainage, then the solve. The lakes'
    /// spanning tree is taken on the GPU (boruvka.wgsl), nothing read back, or with
    /// `cpu_tree` on the CPU from the read-back candidates (the reference the tests compare
    /// the GPU's with).
    fn submit(&mut self, dt: f32, solve: bool, cpu_tree: bool) -> Result<()> {
        self.need_heights()?;
        self.params.dt = dt;
        let lakes = self.lakes != SinkMode::None;
        let fill = matches!(self.lakes, SinkMode::Fill { .. });
        let mut count = 0;
        if lakes && cpu_tree {
            self.find_passes()?;
            count = self.pass_list.len() as u32;
            self.lake_count = Some(count as usize);
        } else if lakes {
            // The receivers and the lakes' tree, with the first descent's parameters.
            self.params.count = 0;
            self.params.keep = 0;
            self.write_params();
            let counter = &self.counter;
            self.run(
                |e| e.clear_buffer(counter, 0, Some(32)),
                |pass| {
                    self.dispatch(pass, &self.descend.0, &self.descend.1);
                    self.encode_keys(pass);
                    self.encode_boruvka(pass);
                },
            );
            self.lake_count = None;
        } else {
            self.lake_count = Some(0);
        }
        self.params.count = count;
        self.params.keep = u32::from(fill);
        self.write_params();
        self.run(
            |_| {},
            |pass| {
                if !lakes {
                    self.dispatch(pass, &self.descend.0, &self.descend.1);
                } else if cpu_tree {
                    if count > 0 {
                        self.encode_lakes(pass, count);
                        if fill {
                            self.encode_fill(pass, false);
                        }
                    }
                } else if fill {
                    self.encode_fill(pass, true);
                }
                let n1 = self.params.slope_exp == 1.0;
                self.encode_drainage(pass, false, solve && n1);
                if solve && !n1 {
                    self.encode_depths(pass);
                }
            },
        );
        if solve && self.params.slope_exp != 1.0 {
            self.solve_by_levels()?;
        }
        self.has_drainage = !solve;
        Ok(())
    }

    /// Routes the current heights: receivers, lakes and drainage, readable with
    /// [`GpuStreamPower::receivers`] and [`GpuStreamPower::drainage`]. Heights do not
    /// change, except that `lakes: Fill` raises them to the lakes' surface (as the CPU
    /// router's `route`).
    pub fn route(&mut self) -> Result<()> {
        self.settle()?;
        self.submit(0.0, false, false)
    }

    /// As [`GpuStreamPower::route`], with the lakes' spanning tree taken on the CPU from
    /// the candidate passes read back (Kruskal, `lakes.rs`): the reference the GPU's
    /// Borůvka is tested against. Not for production use: it waits for the GPU.
    #[doc(hidden)]
    pub fn route_with_cpu_tree(&mut self) -> Result<()> {
        self.settle()?;
        self.submit(0.0, false, true)
    }

    /// One step of `dt` years: receivers, lakes, drainage, uplift and the implicit erosion.
    /// With `n = 1` nothing is read back ([`GpuStreamPower::wait`] waits for the GPU): with
    /// lakes the step is speculative (see [`GpuStreamPower::settle`]); `n ≠ 1` waits for
    /// the count of nodes per level.
    pub fn step(&mut self, dt: f64) -> Result<()> {
        if !(dt > 0.0 && dt <= MAX_DT) {
            return Err(OrogenError::invalid(
                "dt",
                format!("must be > 0 and <= {MAX_DT} years, got {dt}"),
            ));
        }
        if self.lakes != SinkMode::None && self.params.slope_exp == 1.0 {
            // Settled at once where a step in flight is known skipped (the later ones
            // would be too), or where too many are in flight.
            if self.pending.len() >= MAX_PENDING || (!self.pending.is_empty() && self.skip_seen()) {
                self.settle()?;
            }
            return self.speculate(dt as f32);
        }
        self.submit(dt as f32, true, false)
    }

    /// Waits until the GPU has done all submitted work (speculative steps settled); an
    /// error if it failed.
    pub fn wait(&mut self) -> Result<()> {
        self.settle()?;
        self.ctx.check(&self.field)
    }

    /// Copies `buffer` back to the CPU.
    fn read(&self, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
        self.read_range(buffer, buffer.size())
    }

    /// Copies the first `size` bytes of `buffer` (a multiple of 4) back to the CPU.
    fn read_range(&self, buffer: &wgpu::Buffer, size: u64) -> Result<Vec<u8>> {
        read_range(&self.ctx, buffer, size, &self.field)
    }

    /// The buffer of heights it steps, after the steps in flight are settled: another
    /// process on the same GPU (a `TimeLoop`'s [`crate::GpuThermal`]) may step it in turn,
    /// then call [`GpuStreamPower::heights_changed`].
    pub fn heights_buffer(&mut self) -> Result<&wgpu::Buffer> {
        self.need_heights()?;
        self.settle()?;
        Ok(&self.heights)
    }

    /// Another process changed the heights in [`GpuStreamPower::heights_buffer`]: as
    /// [`GpuStreamPower::set_heights`], without the upload.
    pub fn heights_changed(&mut self) {
        self.pending.clear();
        self.probes.clear();
        self.ctx.queue.write_buffer(&self.counter, 8, &[0; 8]);
        self.has_drainage = false;
    }

    /// The receivers' slope division on the GPU (receivers.wgsl's `div_near`): the bits of
    /// `a[i] / d[i]`, one pair per node, for finite `a > 0` and normal `d > 0`. For the
    /// tests, which compare it with the CPU's correctly rounded division; it overwrites the
    /// heights with `a` (and the receivers and link lengths).
    #[doc(hidden)]
    pub fn quotient_bits(&mut self, a: &[f32], d: &[f32]) -> Result<Vec<u32>> {
        if a.len() != self.n || d.len() != self.n {
            return Err(OrogenError::invalid(
                "quotients",
                format!(
                    "need {} values each, got {} and {}",
                    self.n,
                    a.len(),
                    d.len()
                ),
            ));
        }
        self.set_heights(a)?;
        let queue = &self.ctx.queue;
        queue.write_buffer(&self.dists, 0, bytemuck::cast_slice(d));
        self.write_params();
        self.run(
            |_| {},
            |pass| self.dispatch(pass, &self.quotients, &self.descend.1),
        );
        Ok(bytemuck::pod_collect_to_vec(&self.read(&self.receivers)?))
    }

    /// The heights on the GPU, metres (after the last step).
    pub fn heights(&mut self) -> Result<Vec<f32>> {
        self.need_heights()?;
        self.settle()?;
        Ok(bytemuck::pod_collect_to_vec(&self.read(&self.heights)?))
    }

    /// Each node's receiver from the last route or step (itself for outlets and pits).
    pub fn receivers(&mut self) -> Result<Vec<u32>> {
        self.need_heights()?;
        self.settle()?;
        Ok(bytemuck::pod_collect_to_vec(&self.read(&self.receivers)?))
    }

    /// Each node's distance to its receiver from the last route or step, metres (0 where
    /// it receives itself).
    pub fn dists(&mut self) -> Result<Vec<f32>> {
        self.need_heights()?;
        self.settle()?;
        Ok(bytemuck::pod_collect_to_vec(&self.read(&self.dists)?))
    }

    /// The raw 64-bit fixed-point drainage sums of the last [`GpuStreamPower::route`] (low
    /// word, high word per node): the bytes the determinism tests compare.
    pub fn drainage_fixed(&self) -> Result<Vec<u64>> {
        if !self.has_drainage {
            return Err(OrogenError::invalid(
                "drainage",
                "read the GPU drainage after route(), before the next step",
            ));
        }
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&self.read(&self.sums[0])?);
        Ok(words
            .chunks_exact(2)
            .map(|w| w[0] as u64 | (w[1] as u64) << 32)
            .collect())
    }

    /// Drainage area (m², or discharge m³/yr with precipitation) of the last
    /// [`GpuStreamPower::route`], exact to the fixed point's resolution.
    pub fn drainage(&self) -> Result<Vec<f64>> {
        let scale = 2f64.powi(-self.scale_exp);
        Ok(self
            .drainage_fixed()?
            .into_iter()
            .map(|v| v as f64 * scale)
            .collect())
    }

    /// How many lakes the last route or step drained through passes (0 with `lakes:
    /// None`).
    /// With the spanning tree on the GPU this reads the count back (a wait).
    pub fn lake_count(&mut self) -> Result<usize> {
        self.settle()?;
        match self.lake_count {
            Some(count) => Ok(count),
            None => {
                let bytes = self.read_range(&self.counter, 24)?;
                let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
                Ok(words[5] as usize)
            }
        }
    }

    /// Dispatches of the step's own phases encoded so far (receivers, drainage, the n = 1
    /// solve and their control dispatches, empty or not; the lake routing's are not
    /// counted): the bench's dispatches per step.
    pub fn dispatches_encoded(&self) -> u64 {
        self.encoded.load(Ordering::Relaxed)
    }

    /// Speculative steps skipped so far, and of them those `settle` ran again as full steps
    /// (lakes routed, every exit round) and those it ran again speculatively.
    pub fn steps_redone(&self) -> [u64; 3] {
        self.redone
    }

    /// The exits' pointer-jumping rounds a speculative step encodes now (learnt from the
    /// steps settled last; `ceil(log2 n)` at first).
    pub fn exit_rounds(&self) -> u32 {
        self.spec_rounds
    }

    /// The nodes (cells) it steps.
    pub fn nodes(&self) -> usize {
        self.n
    }

    /// The GPU this step runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }
}

/// Copies `buffer` back to the CPU (waits for the GPU); errors name `field`.
pub(crate) fn read_buffer(ctx: &GpuContext, buffer: &wgpu::Buffer, field: &str) -> Result<Vec<u8>> {
    read_range(ctx, buffer, buffer.size(), field)
}

/// Copies the first `size` bytes of `buffer` (a multiple of 4) back to the CPU.
fn read_range(ctx: &GpuContext, buffer: &wgpu::Buffer, size: u64, field: &str) -> Result<Vec<u8>> {
    let device = &ctx.device;
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder =
        device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
    ctx.queue.submit([encoder.finish()]);
    let (tx, rx) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    ctx.check(field)?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(OrogenError::invalid(
                field,
                format!("reading back from the GPU failed: {e}"),
            ))
        }
        Err(_) => {
            return Err(OrogenError::invalid(
                field,
                "reading back from the GPU never finished",
            ))
        }
    }
    let bytes = staging.slice(..).get_mapped_range().to_vec();
    staging.unmap();
    Ok(bytes)
}

/// The inputs as the shaders read them: each node's drainage weight (cell area ×
/// precipitation, m² or m³/yr) in fixed point as two u32 words, the scale's exponent, and
/// each node's `[k, uplift]`.
fn input_words(grid: Grid, inputs: &Inputs) -> (Vec<u32>, i32, Vec<[f32; 2]>) {
    let area = grid.cell_area() as f64;
    let weights: Vec<f64> = match &inputs.precipitation {
        Some(p) => p.iter().map(|&r| area * r as f64).collect(),
        None => vec![area; grid.len()],
    };
    let total: f64 = weights.iter().sum();
    let scale_exp = fixed_point_exponent(total);
    let scale = 2f64.powi(scale_exp);
    let fixed: Vec<u32> = weights
        .iter()
        .flat_map(|&w| {
            let v = (w * scale).round() as u64;
            [v as u32, (v >> 32) as u32]
        })
        .collect();
    let coefs: Vec<[f32; 2]> = inputs
        .k
        .iter()
        .zip(&inputs.uplift)
        .map(|(&k, &u)| [k, u])
        .collect();
    (fixed, scale_exp, coefs)
}
