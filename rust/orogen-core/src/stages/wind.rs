//! The `Wind` stage: the recipe entry for [`crate::eroders::wind`] (the thesis's own wind
//! algorithm, §4.3.3). Recipe syntax: `Wind(iterations: 100, direction_deg: 30.0,
//! borders: Open)`. What the wind carries off the map (open borders) is reported as the
//! stage's figure `wind_blown_off_m3` in `bake.json`, what it carries on (`influx`) as
//! `wind_blown_on_m3`.

use crate::eroders::wind::{Borders, Params, Wind};
use crate::error::Result;
use crate::schema::ParamInfo;
use crate::stages::kind::{material_props, stage_params, Env, StageKind, StageRun};
use crate::state::MaterialProps;
use crate::world::World;

stage_params! {
    /// `Wind` stage parameters (see [`Params`] for each field's unit and default).
    WindParams for Params, iterations: 50, {
        /// Direction the wind blows towards, degrees (0 = east, 90 = south).
        direction_deg: f32,
        /// Fall angle of the wind behind a crest, degrees in [0, 45].
        fall_angle_deg: f32,
        /// Erosion coefficient E.
        erosion: f32,
        /// Wind talus, degrees in (0, 90).
        wind_talus_deg: f32,
        /// Capacity of one line of wind, metres.
        capacity: f32,
        /// Windward deposition, in [0, 1].
        windward_deposition: f32,
        /// Shadow deposition, in [0, 1].
        shadow_deposition: f32,
        /// `Closed` (sand stops at the edge) or `Open` (it blows off the map) map edges.
        borders: Borders,
        /// What each line of wind carries onto the map at its upwind edge, metres (open
        /// borders only).
        influx: f32,
    }
}

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "iterations",
        unit: "",
        min: 1.0,
        max: 1000.0,
        doc: "Number of wind sweeps.",
    },
    ParamInfo {
        name: "direction_deg",
        unit: "deg",
        min: 0.0,
        max: 360.0,
        doc: "Direction the wind blows towards (0 east, 90 south).",
    },
    ParamInfo {
        name: "fall_angle_deg",
        unit: "deg",
        min: 0.0,
        max: 45.0,
        doc: "How steeply the wind comes down behind a crest.",
    },
    ParamInfo {
        name: "wind_talus_deg",
        unit: "deg",
        min: 5.0,
        max: 60.0,
        doc: "Steepest lee slope.",
    },
    ParamInfo {
        name: "capacity",
        unit: "m",
        min: 0.0,
        max: 5.0,
        doc: "Most material one line of wind carries.",
    },
    ParamInfo {
        name: "influx",
        unit: "m",
        min: 0.0,
        max: 5.0,
        doc: "What each line of wind carries onto the map at its upwind edge (open borders).",
    },
];

impl StageKind for WindParams {
    fn bytes_per_cell(&self) -> u64 {
        // The process changes the terrain in place and keeps only its line geometry (a
        // few numbers per line and position); this is headroom for that.
        4
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
        let wind = Wind::new(world.grid(), self.process()).map_err(|e| e.in_field(&env.field))?;
        Ok(Box::new(Run {
            wind,
            materials: material_props(world),
        }))
    }
}

struct Run {
    wind: Wind,
    materials: Vec<MaterialProps>,
}

impl StageRun for Run {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        let r = self.wind.step(&mut world.terrain_mut(), &self.materials)?;
        // Metres summed over cells, times a cell's area.
        let area = world.grid().dx() as f64 * world.grid().dy() as f64;
        world.add_figure("wind_blown_off_m3", r.blown_off * area);
        if r.blown_on > 0.0 {
            world.add_figure("wind_blown_on_m3", r.blown_on * area);
        }
        Ok(false)
    }
}
