//! The `Thermal` stage: the recipe entry for [`crate::eroders::thermal`].
//!
//! Recipe syntax: `Thermal(iterations: 50, talus: Constant(30.0))`,
//! `Thermal(talus: Noise(min_deg: 6.0, max_deg: 54.0, wavelength: 3000.0))`,
//! `Thermal(talus: Height(below_deg: 20.0, above_deg: 60.0, height: 1200.0), rate: 0.3)`.

use serde::{Deserialize, Serialize};

use crate::eroders::thermal::{talus_tangents, Params, TalusAngle, Thermal};
use crate::error::{OrogenError, Result};
use crate::neighbourhood::{Neighbourhood, RasterGrid};
use crate::schema::ParamInfo;
use crate::stages::accelerated::{AcceleratedThermal, Noted};
use crate::stages::device::Accelerator;
use crate::stages::kind::{material_props, place, Env, StageKind, StageRun};
use crate::stages::source::THERMAL_SEED;
use crate::world::World;

/// Largest accepted iteration count.
pub const MAX_ITERATIONS: u32 = 1_000_000;

/// Thermal erosion stage parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThermalParams {
    /// Number of steps, 1..=1000000 (fewer when `tolerance` is reached). Default 50.
    /// Inside a `TimeLoop` the loop's iterations count instead.
    pub iterations: u32,
    /// Steepest stable slope: `Constant(deg)`, `Noise(..)`, `Height(..)` or `Material` (each
    /// cell's exposed material's `talus_deg`). Default `Constant(30.0)`.
    pub talus: TalusAngle,
    /// Fraction of a cell's largest excess moved per step (half of it leaves the cell),
    /// dimensionless, in (0, 1]. Default 0.5.
    pub rate: f32,
    /// Stop early once no slope exceeds its talus by more than this height difference,
    /// metres (≥ 0; 0 runs every iteration). Default 0.01.
    pub tolerance: f32,
}

impl Default for ThermalParams {
    fn default() -> Self {
        let p = Params::default();
        ThermalParams {
            iterations: 50,
            talus: p.talus,
            rate: p.rate,
            tolerance: p.tolerance,
        }
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
        doc: "Fraction of a cell's largest excess over its talus moved per step.",
    },
    ParamInfo {
        name: "tolerance",
        unit: "m",
        min: 0.0,
        max: 1.0,
        doc: "Stop once no slope exceeds its talus by more than this height.",
    },
];

impl ThermalParams {
    /// The process parameters.
    pub fn process(&self) -> Params {
        Params {
            talus: self.talus.clone(),
            rate: self.rate,
            tolerance: self.tolerance,
        }
    }
}

impl StageKind for ThermalParams {
    fn bytes_per_cell(&self) -> u64 {
        32
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
        self.process().validate(field)
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>> {
        let note = match place(env, |accel| self.on_accelerator(accel, world, env))? {
            Ok(run) => return Ok(run),
            Err(note) => note,
        };
        let run = match world.graph_with_borders(&[]) {
            // Cordonnier 2016 §7: thermal erosion on the stream graph, any talus variant.
            Some(nb) => self.run_on(nb, world, env),
            None => self.run_on(RasterGrid::new(world.grid(), &[]), world, env),
        }?;
        Ok(Noted::wrap(run, note))
    }
}

impl ThermalParams {
    /// Why the GPU step cannot run this stage, or `None`: what the stage layer knows (a
    /// graph, layered rock), then the accelerator's own limits
    /// ([`Accelerator::supports_thermal`], e.g. square cells). The error names the stage.
    pub fn gpu_refusal(
        &self,
        graph: bool,
        layered: bool,
        grid: crate::field::Grid,
        accel: &dyn Accelerator,
        field: &str,
    ) -> Option<OrogenError> {
        let why = if graph {
            Some("a Graph domain (random points)")
        } else if layered {
            Some("layered rock (strata)")
        } else {
            None
        };
        if let Some(why) = why {
            return Some(OrogenError::invalid(
                field,
                format!(
                    "the GPU thermal step does not run {why} yet; use device: Cpu, or Auto \
                     to run this stage on the CPU"
                ),
            ));
        }
        accel.supports_thermal(grid, &self.process(), field).err()
    }

    /// The stage stepped by `accel` (the talus tangents resolved here, as the CPU's
    /// `Thermal::new` does), or why it cannot be.
    fn on_accelerator(
        &self,
        accel: &dyn Accelerator,
        world: &World,
        env: &Env,
    ) -> Result<Box<dyn StageRun>> {
        let grid = world.grid();
        if let Some(e) = self.gpu_refusal(
            world.graph.is_some(),
            !world.materials.is_empty(),
            grid,
            accel,
            &env.field,
        ) {
            return Err(e);
        }
        let heights = &world.height.data;
        let tangents = talus_tangents(
            &self.talus,
            heights,
            grid.width,
            grid.cell_size,
            world.seed ^ THERMAL_SEED,
        );
        let mut stepper = accel.thermal(grid, &self.process(), &tangents, &env.field)?;
        stepper.set_heights(heights)?;
        Ok(Box::new(AcceleratedThermal {
            stepper,
            tolerance: self.tolerance,
            field: env.field.clone(),
            device: accel.describe(),
            held: heights.clone(),
        }))
    }
}

impl ThermalParams {
    /// The stage's run over the neighbourhood `nb`.
    fn run_on<N: Neighbourhood + 'static>(
        &self,
        nb: N,
        world: &World,
        env: &Env,
    ) -> Result<Box<dyn StageRun>> {
        let mut thermal = Thermal::new(
            nb,
            self.process(),
            world.seed ^ THERMAL_SEED,
            world.node_heights(),
            &env.field,
        )?;
        let talus: Vec<f32> = material_props(world).iter().map(|m| m.talus_deg).collect();
        thermal.set_material_talus(&talus);
        Ok(Box::new(Run {
            thermal,
            tolerance: self.tolerance,
        }))
    }
}

struct Run<N: Neighbourhood> {
    thermal: Thermal<N>,
    tolerance: f32,
}

impl<N: Neighbourhood> StageRun for Run<N> {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        Ok(self.thermal.step(&mut world.terrain_mut()) <= self.tolerance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eroders::thermal::{max_talus_excess, talus_tangents, HeightTalus, NoiseTalus};
    use crate::error::OrogenError;
    use crate::field::{Grid, Heightfield};
    use crate::stages::context::{Event, StageContext};
    use crate::stages::kind::drive;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::sync::atomic::AtomicBool;

    /// A random rough terrain: white noise plus a cone, metres.
    fn rough(w: usize, h: usize, seed: u64, relief: f32) -> Vec<f32> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                let r = ((x - w as f32 / 2.0).powi(2) + (y - h as f32 / 2.0).powi(2)).sqrt();
                relief * (1.0 - r / w as f32).max(0.0) + rng.random_range(0.0..relief * 0.5)
            })
            .collect()
    }

    fn sum64(v: &[f32]) -> f64 {
        v.iter().map(|&x| x as f64).sum()
    }

    fn run_stage(p: &ThermalParams, world: &mut World, ctx: &mut StageContext) -> Result<()> {
        drive(p, world, ctx)
    }

    #[test]
    fn invalid_angles_name_the_field() {
        for bad in [0.0, 90.0, 120.0, -5.0, f32::NAN, f32::INFINITY] {
            let p = ThermalParams {
                talus: TalusAngle::Constant(bad),
                ..Default::default()
            };
            match p.validate("stages[1].Thermal") {
                Err(OrogenError::InvalidParameter { field, .. }) => {
                    assert_eq!(field, "stages[1].Thermal.talus", "{bad}")
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
        let cases: Vec<(TalusAngle, &str)> = vec![
            (
                TalusAngle::Noise(NoiseTalus {
                    min_deg: 0.0,
                    ..Default::default()
                }),
                "s.talus.min_deg",
            ),
            (
                TalusAngle::Noise(NoiseTalus {
                    max_deg: 95.0,
                    ..Default::default()
                }),
                "s.talus.max_deg",
            ),
            (
                TalusAngle::Noise(NoiseTalus {
                    min_deg: 40.0,
                    max_deg: 30.0,
                    ..Default::default()
                }),
                "s.talus.max_deg",
            ),
            (
                TalusAngle::Noise(NoiseTalus {
                    wavelength: f32::NAN,
                    ..Default::default()
                }),
                "s.talus.wavelength",
            ),
            (
                TalusAngle::Height(HeightTalus {
                    above_deg: 90.0,
                    ..Default::default()
                }),
                "s.talus.above_deg",
            ),
            (
                TalusAngle::Height(HeightTalus {
                    height: f32::NAN,
                    ..Default::default()
                }),
                "s.talus.height",
            ),
        ];
        for (talus, want) in cases {
            let p = ThermalParams {
                talus,
                ..Default::default()
            };
            match p.validate("s") {
                Err(OrogenError::InvalidParameter { field, .. }) => assert_eq!(field, want),
                other => panic!("{want}: {other:?}"),
            }
        }
        for (p, want) in [
            (
                ThermalParams {
                    rate: 0.0,
                    ..Default::default()
                },
                "s.rate",
            ),
            (
                ThermalParams {
                    rate: 1.5,
                    ..Default::default()
                },
                "s.rate",
            ),
            (
                ThermalParams {
                    rate: f32::NAN,
                    ..Default::default()
                },
                "s.rate",
            ),
            (
                ThermalParams {
                    iterations: 0,
                    ..Default::default()
                },
                "s.iterations",
            ),
            (
                ThermalParams {
                    tolerance: -1.0,
                    ..Default::default()
                },
                "s.tolerance",
            ),
        ] {
            match p.validate("s") {
                Err(OrogenError::InvalidParameter { field, .. }) => assert_eq!(field, want),
                other => panic!("{want}: {other:?}"),
            }
        }
        assert!(ThermalParams::default().validate("s").is_ok());
    }

    #[test]
    fn run_stage_reports_steps_and_stops_at_tolerance() {
        let g = Grid::new(30, 30, 10.0).unwrap();
        let z = rough(30, 30, 6, 100.0);
        let mut world = World::new(Heightfield::from_vec(g, z, "h").unwrap(), 1);
        let before = sum64(&world.height.data);
        let p = ThermalParams {
            iterations: 100_000,
            tolerance: 0.05,
            ..Default::default()
        };
        let cancel = AtomicBool::new(false);
        let mut steps = 0u32;
        let mut last_fraction = 0.0;
        let mut observer = |e: Event<'_>| match e {
            Event::Step { .. } => steps += 1,
            Event::Progress { fraction, .. } => last_fraction = fraction,
            _ => {}
        };
        let mut ctx = StageContext::new(
            0,
            "Thermal",
            &cancel,
            &mut observer,
            std::path::Path::new("."),
        );
        run_stage(&p, &mut world, &mut ctx).unwrap();
        assert!(steps > 1 && steps < 100_000, "{steps}");
        assert_eq!(last_fraction, 1.0);
        let tan = talus_tangents(&p.talus, &world.height.data, 30, 10.0, 0);
        assert!(max_talus_excess(&world.height.data, 30, 10.0, &tan) <= 0.05);
        assert!(((sum64(&world.height.data) - before) / before).abs() < 1e-5);
    }

    #[test]
    fn cancel_stops_the_stage() {
        let g = Grid::new(16, 16, 10.0).unwrap();
        let mut world = World::new(
            Heightfield::from_vec(g, rough(16, 16, 7, 100.0), "h").unwrap(),
            1,
        );
        let cancel = AtomicBool::new(true);
        let mut observer = |_: Event<'_>| {};
        let mut ctx = StageContext::new(
            0,
            "Thermal",
            &cancel,
            &mut observer,
            std::path::Path::new("."),
        );
        let r = run_stage(&ThermalParams::default(), &mut world, &mut ctx);
        assert!(matches!(r, Err(OrogenError::Cancelled)));
    }

    #[test]
    fn recipe_syntax_parses() {
        let text = "(size: (9, 9), cell_size: 100.0, seed: 3, terrain: Flat(0.0), stages: [\
                    Thermal(iterations: 50, talus: Noise(min_deg: 6.0, max_deg: 54.0, wavelength: 3000.0)), \
                    Thermal(talus: Height(below_deg: 20.0, above_deg: 60.0, height: 1200.0), rate: 0.3), \
                    Thermal(talus: Constant(35.0), tolerance: 0.001)])";
        let r = crate::recipe::Recipe::from_ron_str(text, "test").unwrap();
        r.validate().unwrap();
        let back = crate::recipe::Recipe::from_ron_str(&r.to_ron_string(), "again").unwrap();
        assert_eq!(r, back);
        let bad = text.replace("35.0", "90.0");
        let err = crate::recipe::Recipe::from_ron_str(&bad, "t")
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(err.to_string().contains("stages[2].Thermal.talus"), "{err}");
    }
}
