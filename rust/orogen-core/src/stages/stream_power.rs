//! The `StreamPower` stage: the recipe entry for [`crate::eroders::stream_power`].
//!
//! Recipe syntax: `StreamPower(iterations: 100, dt: 5e4, k: Constant(5e-6))`,
//! `StreamPower(n: 2.0, m: 1.0, k: Constant(1e-9), lakes: Fill(epsilon: 0.01),
//! outlets: (borders: [South]), tolerance: 0.01, hydrology: false)`,
//! `StreamPower(iterations: 100, schedule: CoarseToFine(levels: 3))`.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::eroders::coarse_to_fine::{self, Level};
use crate::eroders::stream_power::{Inputs, Params, StreamPower, MAX_DT};
use crate::error::{check_finite, check_positive, check_range, OrogenError, Result};
use crate::flow::router::SinkMode;
use crate::generators::noise::{self, NoiseParams};
use crate::neighbourhood::{Neighbourhood, OutletParams, RasterGrid};
use crate::schema::ParamInfo;
use crate::stages::accelerated::{AcceleratedRun, Noted};
use crate::stages::device::Accelerator;
use crate::stages::hydrology::{write_hydrology_maps, HydrologyParams};
use crate::stages::kind::{place, Env, StageKind, StageRun};
use crate::stages::source::{ScalarSource, ERODIBILITY_SEED, PRECIPITATION_SEED};
use crate::world::World;

/// Largest accepted iteration count.
pub const MAX_ITERATIONS: u32 = 1_000_000;

/// Stream of the recipe seed for the coarse-to-fine roughness noise ("c2f").
const COARSE_TO_FINE_SEED: u64 = 0x0063_3266;

/// Offset of the warp's noise seeds from the roughness noise's ("WARP").
const WARP_SEED: u64 = 0x5741_5250;

/// How far a level's rivers may move within a coarser cell at `detail` 1, in coarser node
/// spacings: three quarters of one where the warp's noise is at its extremes.
///
/// Why this far (issue #39): the fine run's rivers wind at every scale down to its own cell,
/// a grid `f` times coarser only at its own, so its rivers are shorter over the same
/// distance. On the default recipe at 513², the path of a river draining ≥ 16 km² over 64
/// fine cells is 1.321 (50 m) and 1.440 (100 m) times its chord in the fine run, 1.245 and
/// 1.304 over the same distance on the fine run of a grid four times coarser; that missing
/// winding is the channel length (drainage density) three levels lacked. At half a spacing
/// the handover gave back 1.290 and 1.356, at three quarters 1.313 and 1.374 (a whole
/// spacing overshoots at 50 m, 1.344). The rest at 100 m is the start terrain's octaves
/// finer than the coarse grid (250 and 500 m there), which steered the fine run's rivers
/// while the relief was low: with 3 octaves instead of 6 the fine run winds 1.315.
/// The warp stays one-to-one, so heights are still moved, not made: for its noise on a
/// 513² grid of 100 m cells handed over from 200 m (one seed), the displacement's Jacobian
/// determinant is at least 0.35 (0.54 at half a spacing, 0.20 at a whole one).
const WARP: f32 = 0.75;

/// A coarse level shows its heights in the world every this many steps (for live views).
const SHOW_EVERY: u32 = 4;

/// Most grids a coarse-to-fine schedule may use.
pub const MAX_LEVELS: u32 = 8;

/// How a `StreamPower` stage spreads its iterations over grids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Schedule {
    /// Every iteration on the world's grid.
    #[default]
    Fine,
    /// Cordonnier et al. 2016: erode on a grid `2^(levels−1)` times coarser until close to
    /// steady state, then upsample (cubics along the straighter direction, warped sideways,
    /// roughened, plus the start terrain's finer detail) and
    /// carry on at each finer grid in turn, which only has to cut its own small valleys.
    /// The coarsest grid runs most iterations, each finer one `refine × iterations`, or
    /// as many as it needs to regrow the divides the coarser grid holds lower (up to half
    /// the iterations over all finer levels; `coarse_to_fine::settle_steps`); with
    /// `tolerance`, a coarse level that settles hands over early. The whole run covers the
    /// same years (`iterations × dt`) at a fraction of the cost. Needs a grid world without
    /// strata or nodata, and a stage of its own (not inside a `TimeLoop`).
    CoarseToFine {
        /// Grids in the pyramid, each half as fine as the next, 1..=8 (1 runs every
        /// iteration on the world's grid). The coarsest needs at least 17 nodes a side.
        /// Two look like the fine run; from three, the coarsest grid's eight flow
        /// directions show as straight valleys four cells wide. Default 2.
        #[serde(default = "default_levels")]
        levels: u32,
        /// Fraction of the stage's iterations run at each finer level (at least one), in
        /// (0, 0.5]. Default 0.1.
        #[serde(default = "default_refine")]
        refine: f32,
        /// Detail added where each finer level takes over, in [0, 2] (0: none). The
        /// heights are warped sideways by up to `detail` × ¾ of a coarser spacing (noise at
        /// four and two spacings), so rivers wind within the coarse valleys; then
        /// roughened by `detail` × the relief within one coarser cell (slope × its spacing)
        /// times noise at the wavelengths the coarser grid cannot hold (two and one
        /// spacings), which gives the water hollows to gather in, so the finer level cuts
        /// branching valleys instead of straight parallel gullies. At 1 the added octaves
        /// have about the slope of the surface they roughen, as a fractal sum of
        /// persistence 1/2 and lacunarity 2 has the same slope in every octave. Default 1.
        #[serde(default = "default_detail")]
        detail: f32,
    },
}

fn default_detail() -> f32 {
    1.0
}

fn default_levels() -> u32 {
    2
}

fn default_refine() -> f32 {
    0.1
}

/// `StreamPower` stage parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StreamPowerParams {
    /// Number of time steps, 1..=1e6. Default 100. Inside a `TimeLoop` the loop's
    /// iterations count instead.
    pub iterations: u32,
    /// Time step, years (> 0, ≤ 1e9). The scheme is implicit, so any step is stable; large
    /// steps only coarsen the history. Default 5e4.
    pub dt: f32,
    /// Erodibility `k`, m^(1−2m)/yr (with precipitation: m^(1−3m)·yr^(m−1)); ≥ 0, a
    /// constant or a map (image, noise). Steady relief scales with `u/k`. Default
    /// `Constant(5e-6)`.
    pub k: ScalarSource,
    /// Drainage-area exponent `m` (> 0, ≤ 5). Default 0.5.
    pub m: f32,
    /// Slope exponent `n` (> 0, ≤ 10); 1 is solved exactly, others by per-node Newton.
    /// Default 1.0.
    pub n: f32,
    /// Multiplier on the world's uplift map: `u = uplift × uplift_scale`, m/yr. 0 erodes an
    /// existing terrain without uplift; negative uplift (subsidence) is allowed. Default 1.
    pub uplift_scale: f32,
    /// Stop early once the largest height change of a step (uplift and erosion together)
    /// is below this, metres (> 0). Default: none (run every iteration).
    pub tolerance: Option<f32>,
    /// How closed depressions drain: `Carve` (through their pass; heights unchanged),
    /// `Fill(epsilon: m)` (filled before each step) or `None`. Default `Carve`.
    pub lakes: SinkMode,
    /// Where water leaves: open borders and sea level. Default: all four borders open.
    pub outlets: OutletParams,
    /// Precipitation, m/yr (≥ 0); when set, erosion uses discharge = area × precipitation
    /// (m³/yr, FastFlow) instead of drainage area. Default: none.
    pub precipitation: Option<ScalarSource>,
    /// At the stage's end, write the hydrology maps (drainage, water surface, lake depth,
    /// rivers, basins) of the eroded terrain with the same outlets, lakes and
    /// precipitation, so a bake shows rivers and lakes without a Hydrology stage.
    /// Default true.
    pub hydrology: bool,
    /// How the iterations are spread over grids: `Fine` (all on the world's grid) or
    /// `CoarseToFine(levels: 2, refine: 0.1, detail: 1.0)`, several times faster for the
    /// same relief.
    /// Default `Fine`.
    pub schedule: Schedule,
}

impl Default for StreamPowerParams {
    fn default() -> Self {
        StreamPowerParams {
            iterations: 100,
            dt: 5e4,
            k: ScalarSource::Constant(5e-6),
            m: 0.5,
            n: 1.0,
            uplift_scale: 1.0,
            tolerance: None,
            lakes: SinkMode::Carve,
            outlets: OutletParams::default(),
            precipitation: None,
            hydrology: true,
            schedule: Schedule::Fine,
        }
    }
}

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "iterations",
        unit: "",
        min: 1.0,
        max: 1000.0,
        doc: "Number of time steps.",
    },
    ParamInfo {
        name: "dt",
        unit: "yr",
        min: 1e3,
        max: 1e6,
        doc: "Time step; implicit, so stable at any size.",
    },
    ParamInfo {
        name: "m",
        unit: "",
        min: 0.1,
        max: 1.5,
        doc: "Drainage-area exponent of the stream-power law (m/n ≈ 0.5 in nature).",
    },
    ParamInfo {
        name: "n",
        unit: "",
        min: 0.5,
        max: 3.0,
        doc: "Slope exponent of the stream-power law.",
    },
    ParamInfo {
        name: "uplift_scale",
        unit: "",
        min: 0.0,
        max: 10.0,
        doc: "Multiplier on the uplift map (0: erosion of an existing terrain only).",
    },
    ParamInfo {
        name: "tolerance",
        unit: "m",
        min: 0.0,
        max: 10.0,
        doc: "Stop once no height changes by more than this in a step.",
    },
];

impl StreamPowerParams {
    /// The process parameters.
    pub fn process(&self) -> Params {
        Params {
            m: self.m,
            n: self.n,
            lakes: self.lakes,
        }
    }

    /// The hydrology parameters matching this stage's routing.
    pub fn hydrology_params(&self) -> HydrologyParams {
        HydrologyParams {
            outlets: self.outlets.clone(),
            lakes: self.lakes,
            precipitation: self.precipitation.clone(),
            ..HydrologyParams::default()
        }
    }
}

impl StageKind for StreamPowerParams {
    fn bytes_per_cell(&self) -> u64 {
        // Measured (heap) on flat terrain, where every cell starts as a pit and the lake
        // routing peaks: 353 B per cell at 513² (135 B on noise terrain); 1,342 MiB of RSS
        // at 2049² against the 673 MiB once estimated (fuzz finding #39.3).
        384
    }

    fn drivers(&self) -> &'static str {
        "`uplift`, `k`, `dt` or the terrain's heights"
    }

    fn describe() -> &'static [ParamInfo] {
        PARAMS
    }

    fn validate(&self, field: &str) -> Result<()> {
        crate::error::check_count(
            &format!("{field}.iterations"),
            self.iterations,
            MAX_ITERATIONS,
        )?;
        let dt = format!("{field}.dt");
        check_positive(&dt, self.dt as f64)?;
        check_range(&dt, self.dt as f64, 0.0, MAX_DT)?;
        self.k.validate_non_negative(&format!("{field}.k"))?;
        self.process().validate(field)?;
        check_finite(&format!("{field}.uplift_scale"), self.uplift_scale as f64)?;
        if let Some(t) = self.tolerance {
            check_positive(&format!("{field}.tolerance"), t as f64)?;
        }
        self.outlets.validate(&format!("{field}.outlets"))?;
        if let Some(p) = &self.precipitation {
            p.validate_non_negative(&format!("{field}.precipitation"))?;
        }
        if let Schedule::CoarseToFine {
            levels,
            refine,
            detail,
        } = self.schedule
        {
            crate::error::check_count(&format!("{field}.schedule.levels"), levels, MAX_LEVELS)?;
            let r = format!("{field}.schedule.refine");
            check_positive(&r, refine as f64)?;
            check_range(&r, refine as f64, 0.0, 0.5)?;
            check_range(&format!("{field}.schedule.detail"), detail as f64, 0.0, 2.0)?;
        }
        Ok(())
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>> {
        let inputs = self.inputs(world, env)?;
        self.outlets.validate(&format!("{}.outlets", env.field))?;
        let note = match place(env, |accel| self.on_accelerator(accel, world, env, &inputs))? {
            Ok(run) => return Ok(run),
            Err(note) => note,
        };
        let run = self.start_cpu(world, env, inputs)?;
        Ok(Noted::wrap(run, note))
    }
}

impl StreamPowerParams {
    /// Each node's erodibility, uplift rate (× `uplift_scale`) and precipitation, resolved
    /// over `world`.
    fn inputs(&self, world: &World, env: &Env) -> Result<Inputs> {
        let grid = world.grid();
        let k = world.at_nodes(self.k.resolve(
            grid,
            world.seed ^ ERODIBILITY_SEED,
            env.base_dir,
        )?);
        let scale = self.uplift_scale;
        let uplift: Vec<f32> = world.node_uplift().iter().map(|u| u * scale).collect();
        let precipitation = match &self.precipitation {
            Some(src) => Some(world.at_nodes(src.resolve(
                grid,
                world.seed ^ PRECIPITATION_SEED,
                env.base_dir,
            )?)),
            None => None,
        };
        Ok(Inputs {
            k,
            uplift,
            precipitation,
        })
    }

    /// `run`, a run of this stage over `world` (synced), given these parameters' inputs
    /// (live painting's new uplift or precipitation) in place where it can take them (a
    /// run on an accelerator: no new buffers or pipelines); `false` where the caller must
    /// start the stage again.
    pub fn retake(&self, run: &mut dyn StageRun, world: &World, env: &Env) -> Result<bool> {
        run.take_inputs(&self.inputs(world, env)?)
    }

    /// The stage on the CPU (`device: Cpu`, and what `Auto` falls back to).
    fn start_cpu(&self, world: &World, env: &Env, inputs: Inputs) -> Result<Box<dyn StageRun>> {
        let grid = world.grid();
        if let Schedule::CoarseToFine { levels, .. } = self.schedule {
            if levels > 1 {
                return self.start_scheduled(world, env, inputs);
            }
        }
        match world.graph_with_borders(&self.outlets.borders) {
            // Cordonnier 2016 §4: the same implicit solver over the random-point graph.
            Some(nb) => self.run_on(nb, inputs, world, env),
            // The DEM's nodata cells are outlets too.
            None => self.run_on(
                RasterGrid::new(grid, &self.outlets.borders).with_outlet_mask(world.nodata_mask()),
                inputs,
                world,
                env,
            ),
        }
    }
}

impl StreamPowerParams {
    /// Why the GPU step cannot run this stage, or `None`: what the stage layer knows (a
    /// graph, layered rock, nodata cells, a coarse-to-fine schedule), then the
    /// accelerator's own limits ([`Accelerator::supports`]). The error names the stage.
    pub fn gpu_refusal(
        &self,
        graph: bool,
        layered: bool,
        nodata: bool,
        accel: &dyn Accelerator,
        field: &str,
    ) -> Option<OrogenError> {
        let coarse = matches!(self.schedule, Schedule::CoarseToFine { levels, .. } if levels > 1);
        let why = if graph {
            Some("a Graph domain (random points)")
        } else if layered {
            Some("layered rock (strata)")
        } else if nodata {
            Some("a terrain with nodata cells (an outlet mask)")
        } else if coarse {
            Some("schedule: CoarseToFine")
        } else {
            None
        };
        if let Some(why) = why {
            return Some(OrogenError::invalid(
                field,
                format!(
                    "the GPU step does not run {why} yet; use device: Cpu, or Auto to run \
                     this stage on the CPU"
                ),
            ));
        }
        accel.supports(&self.process(), &self.outlets, field).err()
    }

    /// The stage stepped by `accel`, or why it cannot be.
    fn on_accelerator(
        &self,
        accel: &dyn Accelerator,
        world: &World,
        env: &Env,
        inputs: &Inputs,
    ) -> Result<Box<dyn StageRun>> {
        let refusal = self.gpu_refusal(
            world.graph.is_some(),
            !world.materials.is_empty(),
            world.nodata_mask().is_some(),
            accel,
            &env.field,
        );
        if let Some(e) = refusal {
            return Err(e);
        }
        let mut stepper = accel.stream_power(
            world.grid(),
            &self.outlets,
            &self.process(),
            inputs.clone(),
            &env.field,
        )?;
        stepper.set_heights(&world.height.data)?;
        // The maps at the end routed on the accelerator where it can (else the CPU's).
        let hydrology = self.hydrology.then(|| self.hydrology_params());
        let mapper = match &hydrology {
            Some(h)
                if accel
                    .supports_hydrology(world.grid(), &h.outlets, &h.process(), &env.field)
                    .is_ok() =>
            {
                Some(accel.hydrology(
                    world.grid(),
                    &h.outlets,
                    &h.process(),
                    inputs.precipitation.as_deref(),
                    &env.field,
                )?)
            }
            _ => None,
        };
        Ok(Box::new(AcceleratedRun {
            stepper,
            mapper,
            dt: self.dt as f64,
            tolerance: self.tolerance,
            hydrology,
            base_dir: env.base_dir.to_path_buf(),
            field: env.field.clone(),
            device: accel.describe(),
            held: world.height.data.clone(),
            ahead: 0,
            viewed: None,
        }))
    }
}

impl StreamPowerParams {
    /// The stage's run over the neighbourhood `nb`.
    fn run_on<N: Neighbourhood + 'static>(
        &self,
        nb: N,
        inputs: Inputs,
        world: &World,
        env: &Env,
    ) -> Result<Box<dyn StageRun>> {
        let mut solver = StreamPower::new(
            nb,
            self.outlets.sea_level,
            &self.process(),
            inputs,
            self.tolerance.is_some(),
            &env.field,
        )?;
        if !world.materials.is_empty() {
            solver.set_material_erodibility(
                world
                    .materials
                    .iter()
                    .map(|m| m.props.erodibility)
                    .collect(),
            )?;
        }
        solver.check_dt(self.dt as f64)?;
        Ok(Box::new(Run {
            solver,
            dt: self.dt as f64,
            tolerance: self.tolerance,
            // A graph's hydrology maps are made with its heightfield, when it is rasterised.
            hydrology: (self.hydrology && world.graph.is_none()).then(|| self.hydrology_params()),
            base_dir: env.base_dir.to_path_buf(),
            field: env.field.clone(),
        }))
    }
}

impl StreamPowerParams {
    /// A coarse-to-fine run: checks that the world suits it and plans the levels.
    fn start_scheduled(
        &self,
        world: &World,
        env: &Env,
        inputs: Inputs,
    ) -> Result<Box<dyn StageRun>> {
        let run = self.scheduled(world, env, inputs, false)?;
        Ok(Box::new(run))
    }

    /// A `CoarseToFine` schedule's coarse levels alone, over the whole map (a tiled run's
    /// rank 0, issue #41): from `world`'s heights and the stage's `inputs` as
    /// [`StageKind::start`] makes them, every coarse level's steps and the refinement onto
    /// the world's grid, as the whole-map stage runs them; leaves the finest level's start
    /// heights in `world.height` and returns the steps left for the finest level. The
    /// tiles then run those steps, starting from these heights.
    pub fn coarse_levels(&self, world: &mut World, env: &Env, inputs: Inputs) -> Result<u32> {
        self.validate(&env.field)?;
        let mut run = self.scheduled(world, env, inputs, true)?;
        while !run.at_finest() {
            run.step(world)?;
        }
        Ok(run.left)
    }

    /// [`StreamPowerParams::start_scheduled`]'s run; with `coarse_only`, the finest level
    /// gets its start heights but no solver.
    fn scheduled(
        &self,
        world: &World,
        env: &Env,
        inputs: Inputs,
        coarse_only: bool,
    ) -> Result<Scheduled> {
        let Schedule::CoarseToFine {
            levels,
            refine,
            detail,
        } = self.schedule
        else {
            unreachable!("start_scheduled runs a CoarseToFine schedule")
        };
        let field = format!("{}.schedule", env.field);
        let refuse = |why: &str| {
            Err(OrogenError::invalid(
                &field,
                format!("CoarseToFine needs {why}; use schedule: Fine"),
            ))
        };
        if env.in_loop {
            return refuse("a StreamPower stage of its own, not a TimeLoop process");
        }
        if world.graph.is_some() {
            return refuse("a grid world (this recipe erodes a random-point graph)");
        }
        if !world.materials.is_empty() {
            return refuse("a terrain without strata");
        }
        if world.nodata_mask().is_some() {
            return refuse("a terrain without nodata cells");
        }
        let fine = world.grid();
        let mean_positive = |v: &[f32]| {
            let (sum, count) = v
                .iter()
                .filter(|&&x| x > 0.0)
                .fold((0.0f64, 0usize), |(s, c), &x| (s + x as f64, c + 1));
            (count > 0).then(|| sum / count as f64)
        };
        let rain = match &inputs.precipitation {
            Some(p) => mean_positive(p).unwrap_or(0.0),
            None => 1.0,
        };
        let settle = coarse_to_fine::settle_steps(
            fine,
            mean_positive(&inputs.k),
            rain,
            self.m as f64,
            self.n as f64,
            self.dt as f64,
        );
        let levels = coarse_to_fine::plan(fine, levels, refine, self.iterations, settle, &field)?;
        // Each level's start heights, restricted from the world's.
        let starts: Vec<Vec<f32>> = levels
            .iter()
            .map(|l| coarse_to_fine::restrict(&world.height.data, fine, l.grid, l.factor))
            .collect();
        let mut run = Scheduled {
            params: self.clone(),
            env_field: env.field.clone(),
            base_dir: env.base_dir.to_path_buf(),
            index: env.index,
            fine_inputs: Some(inputs),
            heights: starts[0].clone(),
            starts,
            levels,
            level: 0,
            left: 0,
            coarse: None,
            fine: None,
            detail,
            seed: world.seed ^ COARSE_TO_FINE_SEED ^ env.index as u64,
            coarse_only,
        };
        run.enter(0, world)?;
        debug_assert!(!run.at_finest());
        Ok(run)
    }
}

/// A coarse-to-fine run: coarse levels step their own heights; the finest steps the world.
struct Scheduled {
    params: StreamPowerParams,
    env_field: String,
    base_dir: std::path::PathBuf,
    index: usize,
    /// The stage's inputs on the world's grid, taken by the finest level.
    fine_inputs: Option<Inputs>,
    /// The levels, coarsest first.
    levels: Vec<Level>,
    /// Each level's start heights.
    starts: Vec<Vec<f32>>,
    /// The current coarse level's heights.
    heights: Vec<f32>,
    level: usize,
    /// Iterations left at the current level.
    left: u32,
    coarse: Option<StreamPower<RasterGrid>>,
    fine: Option<Box<dyn StageRun>>,
    /// `CoarseToFine.detail`.
    detail: f32,
    /// Seed of the roughness noise.
    seed: u64,
    /// Stop at the finest level's start heights, without its solver
    /// ([`StreamPowerParams::coarse_levels`]).
    coarse_only: bool,
}

impl Scheduled {
    /// Starts level `l` with `self.heights` on its grid (the finest takes the world's).
    fn enter(&mut self, l: usize, world: &World) -> Result<()> {
        self.level = l;
        self.left = self.levels[l].iterations;
        let level = self.levels[l];
        let fine = world.grid();
        let env = Env {
            base_dir: &self.base_dir,
            field: self.env_field.clone(),
            index: self.index,
            in_loop: false,
            devices: crate::stages::device::Devices::CPU,
        };
        let inputs = self
            .fine_inputs
            .as_ref()
            .expect("inputs until the finest level");
        if level.factor == 1 {
            self.coarse = None;
            if self.coarse_only {
                return Ok(());
            }
            let inputs = self
                .fine_inputs
                .take()
                .expect("inputs for the finest level");
            let nb = RasterGrid::new(fine, &self.params.outlets.borders);
            self.fine = Some(self.params.run_on(nb, inputs, world, &env)?);
            return Ok(());
        }
        let down = |v: &[f32]| coarse_to_fine::restrict(v, fine, level.grid, level.factor);
        let coarse_inputs = Inputs {
            k: down(&inputs.k),
            uplift: down(&inputs.uplift),
            precipitation: inputs.precipitation.as_deref().map(down),
        };
        let nb = RasterGrid::new(level.grid, &self.params.outlets.borders);
        let solver = StreamPower::new(
            nb,
            self.params.outlets.sea_level,
            &self.params.process(),
            coarse_inputs,
            self.params.tolerance.is_some(),
            &env.field,
        )?;
        solver.check_dt(self.params.dt as f64)?;
        self.coarse = Some(solver);
        Ok(())
    }

    /// Hands the current coarse heights to the next finer level: interpolated, roughened,
    /// plus that level's own detail.
    fn refine(&mut self, world: &mut World) -> Result<()> {
        let (from, to) = (self.levels[self.level], self.levels[self.level + 1]);
        let start = &self.starts[self.level + 1];
        let detail = coarse_to_fine::detail(start, to.grid, &self.starts[self.level], from.grid);
        let mut up = coarse_to_fine::prolong_directional(&self.heights, from.grid, to.grid);
        if self.detail > 0.0 {
            // Rivers wind within their coarse cell: a displacement of up to `detail` × half
            // a coarser spacing, at four and two spacings (issue #39).
            let spacing = from.grid.dx().max(from.grid.dy());
            let params = NoiseParams {
                octaves: 2,
                wavelength: 4.0 * spacing,
                amplitude: 1.0 / 1.5,
                ..NoiseParams::default()
            };
            let seed = self
                .seed
                .wrapping_add(WARP_SEED)
                .wrapping_add(2 * self.level as u64);
            let nx = noise::generate(&params, to.grid, seed)?;
            let ny = noise::generate(&params, to.grid, seed.wrapping_add(1))?;
            let reach = self.detail * WARP * spacing;
            up = coarse_to_fine::warp(
                &up,
                to.grid,
                &nx.data,
                &ny.data,
                reach / to.grid.dx(),
                reach / to.grid.dy(),
            );
        }
        if self.detail > 0.0 {
            // The octaves the coarser grid cannot hold: from its Nyquist wavelength, two
            // spacings, to the finer grid's, one (issue #39: at four and two spacings, a band
            // the coarser grid already held, the finer level's rivers kept the coarse
            // valleys' straight courses).
            let spacing = from.grid.dx().max(from.grid.dy());
            let noise = noise::generate(
                &NoiseParams {
                    octaves: 2,
                    wavelength: 2.0 * spacing,
                    amplitude: 1.0 / 1.5,
                    ..NoiseParams::default()
                },
                to.grid,
                self.seed.wrapping_add(self.level as u64),
            )?;
            coarse_to_fine::roughen(&mut up, to.grid, spacing, &noise.data, self.detail);
        }
        for (h, d) in up.iter_mut().zip(&detail) {
            *h += d;
        }
        if to.factor == 1 {
            world.height.data.copy_from_slice(&up);
            self.heights = Vec::new();
            self.starts = Vec::new();
        } else {
            self.heights = up;
        }
        self.enter(self.level + 1, world)
    }

    /// Shows a coarse level's progress in the world (for live views): the world's start
    /// heights plus the level's change so far, interpolated. The finest level starts from
    /// the coarse heights, never from these.
    fn show(&self, world: &mut World) {
        let level = self.levels[self.level];
        let start = &self.starts[self.level];
        let change: Vec<f32> = self.heights.iter().zip(start).map(|(h, s)| h - s).collect();
        let up = coarse_to_fine::prolong(&change, level.grid, world.grid(), level.factor);
        let fine_start = self.starts.last().expect("the finest start");
        world
            .height
            .data
            .par_iter_mut()
            .zip(up.par_iter().zip(fine_start.par_iter()))
            .for_each(|(h, (c, s))| *h = s + c);
    }

    fn at_finest(&self) -> bool {
        self.level + 1 == self.levels.len()
    }
}

impl StageRun for Scheduled {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        if let Some(fine) = &mut self.fine {
            let converged = fine.step(world)?;
            self.left = self.left.saturating_sub(1);
            return Ok(converged || self.left == 0);
        }
        let solver = self.coarse.as_mut().expect("a coarse level's solver");
        let report = solver.step_heights(&mut self.heights, self.params.dt as f64)?;
        self.left -= 1;
        let settled = matches!(
            (report.max_change, self.params.tolerance),
            (Some(c), Some(t)) if c < t
        );
        if self.left == 0 || settled {
            self.refine(world)?;
        } else if self.left.is_multiple_of(SHOW_EVERY) {
            self.show(world);
        }
        Ok(false)
    }

    fn finish(&mut self, world: &mut World) -> Result<()> {
        match &mut self.fine {
            Some(fine) => fine.finish(world),
            None => Ok(()),
        }
    }
}

struct Run<N: Neighbourhood> {
    solver: StreamPower<N>,
    dt: f64,
    tolerance: Option<f32>,
    hydrology: Option<HydrologyParams>,
    base_dir: std::path::PathBuf,
    field: String,
}

impl<N: Neighbourhood> StageRun for Run<N> {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        let report = self.solver.step(&mut world.terrain_mut(), self.dt)?;
        Ok(matches!((report.max_change, self.tolerance), (Some(c), Some(t)) if c < t))
    }

    fn finish(&mut self, world: &mut World) -> Result<()> {
        match &self.hydrology {
            Some(p) => write_hydrology_maps(world, p, &self.base_dir, &self.field),
            None => Ok(()),
        }
    }
}
