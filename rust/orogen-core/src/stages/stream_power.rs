//! The `StreamPower` stage: the recipe entry for [`crate::eroders::stream_power`].
//!
//! Recipe syntax: `StreamPower(iterations: 100, dt: 5e4, k: Constant(5e-6))`,
//! `StreamPower(n: 2.0, m: 1.0, k: Constant(1e-9), lakes: Fill(epsilon: 0.01),
//! outlets: (borders: [South]), tolerance: 0.01, hydrology: false)`.

use serde::{Deserialize, Serialize};

use crate::eroders::stream_power::{Inputs, Params, StreamPower, MAX_DT};
use crate::error::{check_finite, check_positive, check_range, Result};
use crate::flow::router::SinkMode;
use crate::neighbourhood::{Neighbourhood, OutletParams, RasterGrid};
use crate::schema::ParamInfo;
use crate::stages::hydrology::{write_hydrology_maps, HydrologyParams};
use crate::stages::kind::{Env, StageKind, StageRun};
use crate::stages::source::{ScalarSource, ERODIBILITY_SEED, PRECIPITATION_SEED};
use crate::world::World;

/// Largest accepted iteration count.
pub const MAX_ITERATIONS: u32 = 1_000_000;

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
        152
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
        Ok(())
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>> {
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
        let inputs = Inputs {
            k,
            uplift,
            precipitation,
        };
        self.outlets.validate(&format!("{}.outlets", env.field))?;
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
