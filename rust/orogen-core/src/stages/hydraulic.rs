//! The `Hydraulic` stage: the recipe entry for [`crate::eroders::hydraulic`] (the pipe
//! model of Mei et al. 2007 as the thesis uses it, §4.3.2).
//!
//! Recipe syntax: `Hydraulic(iterations: 500, rain: Uniform(rate_m_per_s: 2e-3),
//! evaporation: 0.005)`; water depth, sediment and velocity are written when the recipe's
//! `outputs` name them.

use crate::eroders::hydraulic::{Borders, CapacityLaw, Hydraulic, Params, Rain, Source};
use crate::error::{OrogenError, Result};
use crate::schema::ParamInfo;
use crate::stages::accelerated::Noted;
use crate::stages::device::{Accelerator, HydraulicStepper};
use crate::stages::kind::{material_props, place, stage_params, Env, StageKind, StageRun};
use crate::state::MaterialProps;
use crate::world::World;

/// Salt mixed into the recipe seed for the rain drops (a tiled run's tiles use it too).
pub const HYDRAULIC_SEED: u64 = 0x7261_696e_6472_6f70; // "raindrop"

stage_params! {
    /// `Hydraulic` stage parameters (see [`Params`] for each field's unit and default).
    HydraulicParams for Params, iterations: 200, {
        /// Time step, seconds.
        dt: f32,
        /// Pipe cross-section, m² (default the cell area).
        pipe_area_m2: Option<f32>,
        /// Gravity, m/s².
        gravity: f32,
        /// Pipe length, m (default the cell size).
        pipe_length_m: Option<f32>,
        /// Rain: `None`, `Uniform(rate_m_per_s: ..)` or `Drops(power: .., volume_m3: ..)`.
        rain: Rain,
        /// Water sources: `(x_m, y_m, radius_m, rate_m3_per_s, every_step)`.
        sources: Vec<Source>,
        /// Evaporation, 1/s.
        evaporation: f32,
        /// Sediment capacity Kc.
        capacity: f32,
        /// Dissolving Ks.
        dissolve: f32,
        /// Deposition Kd.
        deposit: f32,
        /// Smallest sin α in the capacity.
        min_slope: f32,
        /// Water shallower than this has no velocity, m.
        min_water_depth: f32,
        /// `Closed` or `Open` map edges.
        borders: Borders,
        /// Bed friction, Chézy coefficient in m^½/s (`None`: frictionless).
        chezy: Option<f32>,
        /// `Speed` (Kc·sin α·|v|, the thesis's) or `StreamPower` (times the depth).
        capacity_law: CapacityLaw,
    }
}

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "iterations",
        unit: "",
        min: 1.0,
        max: 10000.0,
        doc: "Number of water steps.",
    },
    ParamInfo {
        name: "dt",
        unit: "s",
        min: 0.001,
        max: 1.0,
        doc: "Time step of the pipe model (below its stability limit).",
    },
    ParamInfo {
        name: "evaporation",
        unit: "1/s",
        min: 0.0,
        max: 0.1,
        doc: "Share of the water evaporated per second.",
    },
    ParamInfo {
        name: "capacity",
        unit: "s",
        min: 0.0,
        max: 1.0,
        doc: "Sediment capacity Kc of flowing water.",
    },
    ParamInfo {
        name: "dissolve",
        unit: "",
        min: 0.0,
        max: 1.0,
        doc: "Share of the capacity deficit dissolved per step.",
    },
    ParamInfo {
        name: "deposit",
        unit: "",
        min: 0.0,
        max: 1.0,
        doc: "Share of the capacity excess deposited per step.",
    },
    ParamInfo {
        name: "chezy",
        unit: "m^½/s",
        min: 5.0,
        max: 100.0,
        doc: "Bed friction, Chézy C (optional; none is frictionless, as in Mei et al.).",
    },
];

impl StageKind for HydraulicParams {
    fn bytes_per_cell(&self) -> u64 {
        64
    }

    fn drivers(&self) -> &'static str {
        "`rain`, `sources`, `dt` or the terrain's heights"
    }

    fn describe() -> &'static [ParamInfo] {
        PARAMS
    }

    fn validate(&self, field: &str) -> Result<()> {
        crate::error::check_count(&format!("{field}.iterations"), self.iterations, 10_000_000)?;
        self.process().validate(field)
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>> {
        world.require_grid(&env.field)?;
        // Only square cells: refuse dx ≠ dy rather than treat it as square.
        world.grid().require_square(&env.field)?;
        let grid = world.grid();
        let params = self.process();
        params.validate_on(&grid, &env.field)?;
        let hydraulic = Hydraulic::new(grid, params, world.seed ^ HYDRAULIC_SEED)
            .map_err(|e| e.in_field(&env.field))?;
        let note = match place(env, |accel| {
            self.on_accelerator(accel, &hydraulic, world, env)
        })? {
            Ok(run) => return Ok(run),
            Err(note) => note,
        };
        let run: Box<dyn StageRun> = Box::new(Run {
            hydraulic,
            materials: material_props(world),
        });
        Ok(Noted::wrap(run, note))
    }
}

impl HydraulicParams {
    /// Why the GPU step cannot run this stage, or `None`: layered rock (what the stage
    /// layer knows), then the accelerator's own limits
    /// ([`Accelerator::supports_hydraulic`], e.g. rain drops). The error names the stage.
    pub fn gpu_refusal(
        &self,
        layered: bool,
        grid: crate::field::Grid,
        accel: &dyn Accelerator,
        field: &str,
    ) -> Option<OrogenError> {
        if layered {
            return Some(OrogenError::invalid(
                field,
                "the GPU hydraulic step does not run layered rock (strata) yet; use device: \
                 Cpu, or Auto to run this stage on the CPU",
            ));
        }
        accel.supports_hydraulic(grid, &self.process(), field).err()
    }

    /// The stage stepped by `accel` (the sources resolved by the CPU's `hydraulic`), from
    /// the world's heights and whatever water, sediment and fluxes it holds.
    fn on_accelerator(
        &self,
        accel: &dyn Accelerator,
        hydraulic: &Hydraulic,
        world: &World,
        env: &Env,
    ) -> Result<Box<dyn StageRun>> {
        let grid = world.grid();
        if let Some(e) = self.gpu_refusal(!world.materials.is_empty(), grid, accel, &env.field) {
            return Err(e);
        }
        let diss = material_props(world)[0].dissolubility;
        let sources = |step: u64| hydraulic.source_depths(step);
        let mut stepper = accel.hydraulic(grid, &self.process(), &sources, diss, &env.field)?;
        let sim = &world.sim;
        stepper.set_state(
            &world.height.data,
            sim.water_depth.as_deref(),
            sim.sediment.as_deref(),
            sim.flux.as_deref(),
        )?;
        Ok(Box::new(AcceleratedHydraulic {
            stepper,
            field: env.field.clone(),
            device: accel.describe(),
            held: world.height.data.clone(),
            ahead: 0,
        }))
    }
}

/// The stage stepped on an accelerator: the heights read back each step (the next stage,
/// or a `TimeLoop`'s other processes, see them), or with [`StageRun::step_deferred`] only
/// at [`StageRun::sync`] and at the end; water, sediment, fluxes and velocity into the
/// world's `SimState` at the end, with the water and sediment that left the map.
struct AcceleratedHydraulic {
    stepper: Box<dyn HydraulicStepper>,
    field: String,
    device: String,
    /// The heights last uploaded or read back.
    held: Vec<f32>,
    /// Steps run by `step_deferred` since the heights were last read back into the world.
    ahead: u32,
}

impl StageRun for AcceleratedHydraulic {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        self.sync(world)?;
        if self.held != world.height.data {
            self.stepper.set_heights(&world.height.data)?;
        }
        self.stepper.step()?;
        let after = self.stepper.heights()?;
        self.held = crate::stages::accelerated::take_heights(&self.field, after, world)?;
        Ok(false)
    }

    fn step_deferred(&mut self, world: &mut World) -> Result<bool> {
        // While ahead, the world is the one last read back (the caller leaves it alone).
        if self.ahead == 0 && self.held != world.height.data {
            self.stepper.set_heights(&world.height.data)?;
            self.held.clone_from(&world.height.data);
        }
        self.stepper.step()?;
        // A fence, nothing read back: the queue stays one step deep, so a stop comes
        // within a step and the steps counted are the steps done.
        self.stepper.wait()?;
        self.ahead += 1;
        Ok(false)
    }

    fn sync(&mut self, world: &mut World) -> Result<()> {
        if self.ahead == 0 {
            return Ok(());
        }
        let after = self.stepper.heights()?;
        self.held = crate::stages::accelerated::take_heights(&self.field, after, world)?;
        self.ahead = 0;
        Ok(())
    }

    fn finish(&mut self, world: &mut World) -> Result<()> {
        let s = self.stepper.state()?;
        world.height.data.copy_from_slice(&s.heights);
        self.held = s.heights;
        self.ahead = 0;
        world.add_figure("hydraulic_water_lost_m3", s.water_lost_m3);
        world.add_figure("hydraulic_sediment_lost_m3", s.sediment_lost_m3);
        let sim = &mut world.sim;
        sim.water_depth = Some(s.water);
        sim.sediment = Some(s.sediment);
        sim.flux = Some(s.flux);
        sim.velocity = Some(s.velocity);
        Ok(())
    }

    fn device(&self) -> Option<String> {
        Some(self.device.clone())
    }

    fn defers(&self) -> bool {
        true
    }
}

struct Run {
    hydraulic: Hydraulic,
    materials: Vec<MaterialProps>,
}

impl StageRun for Run {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        let (mut terrain, sim) = world.terrain_and_sim();
        let r = self.hydraulic.step(&mut terrain, sim, &self.materials)?;
        world.add_figure("hydraulic_water_lost_m3", r.water_lost_m3);
        world.add_figure("hydraulic_sediment_lost_m3", r.sediment_lost_m3);
        Ok(false)
    }
}
