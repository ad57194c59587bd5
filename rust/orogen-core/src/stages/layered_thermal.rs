//! The `LayeredThermal` stage: the recipe entry for [`crate::eroders::layered_thermal`]
//! (the thesis's thermal step over material layers, §4.3.1). Talus and susceptibility come
//! from the exposed material. Recipe syntax: `LayeredThermal(iterations: 100)`.

use crate::eroders::layered_thermal::{LayeredThermal, Params};
use crate::error::Result;
use crate::schema::ParamInfo;
use crate::stages::kind::{material_props, stage_params, Env, StageKind, StageRun};
use crate::state::MaterialProps;
use crate::world::World;

/// Salt mixed into the recipe seed for the random factor r.
pub const LAYERED_THERMAL_SEED: u64 = 0x6c74_6865_726d; // "ltherm"

stage_params! {
    /// `LayeredThermal` stage parameters (see [`Params`] for units and defaults).
    LayeredThermalParams for Params, iterations: 50, {
        /// Factor on the thesis's amount S, in (0, 1].
        rate: f32,
        /// σ of the random factor r ~ N(1, σ), in [0, 1].
        randomness: f32,
        /// Stop once no slope exceeds its talus by more than this, metres.
        tolerance: f32,
    }
}

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "iterations",
        unit: "",
        min: 1.0,
        max: 1000.0,
        doc: "Number of thermal steps (fewer when the tolerance is reached).",
    },
    ParamInfo {
        name: "rate",
        unit: "",
        min: 0.01,
        max: 1.0,
        doc: "Factor on the amount moved per step.",
    },
    ParamInfo {
        name: "randomness",
        unit: "",
        min: 0.0,
        max: 1.0,
        doc: "Spread of the random factor on the amount moved.",
    },
    ParamInfo {
        name: "tolerance",
        unit: "m",
        min: 0.0,
        max: 1.0,
        doc: "Stop once no slope exceeds its talus by more than this.",
    },
];

impl StageKind for LayeredThermalParams {
    fn bytes_per_cell(&self) -> u64 {
        32
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
        let thermal = LayeredThermal::new(
            world.grid(),
            self.process(),
            world.seed ^ LAYERED_THERMAL_SEED,
        )
        .map_err(|e| e.in_field(&env.field))?;
        Ok(Box::new(Run {
            thermal,
            materials: material_props(world),
            tolerance: self.tolerance,
        }))
    }
}

struct Run {
    thermal: LayeredThermal,
    materials: Vec<MaterialProps>,
    tolerance: f32,
}

impl StageRun for Run {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        let report = self
            .thermal
            .step(&mut world.terrain_mut(), &self.materials)?;
        Ok(report.max_excess <= self.tolerance)
    }
}
