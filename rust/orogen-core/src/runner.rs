//! Runs a recipe: builds the initial world, then each stage in order, reporting
//! progress through a callback and stopping at a cancel flag within one step.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::error::{OrogenError, Result};
use crate::recipe::{Recipe, Stage, TerrainSource};
use crate::world::World;

/// What a run reports while it works.
pub enum Event<'a> {
    /// A stage begins.
    StageStarted {
        index: usize,
        name: &'a str,
        stage_count: usize,
    },
    /// Progress within a stage: `fraction` in `[0, 1]`, `iteration` counted from 1.
    Progress {
        index: usize,
        name: &'a str,
        fraction: f32,
        iteration: u32,
    },
    /// One step of a stage finished; `world` is the terrain after it (for live views).
    Step {
        index: usize,
        name: &'a str,
        iteration: u32,
        world: &'a World,
    },
    /// A stage ended, after `seconds` of wall time.
    StageFinished {
        index: usize,
        name: &'a str,
        seconds: f64,
    },
}

/// Handed to every stage: progress, per-step hand-over and the cancel flag.
pub struct StageContext<'a> {
    index: usize,
    name: &'a str,
    cancel: &'a AtomicBool,
    observer: &'a mut dyn FnMut(Event<'_>),
    base_dir: &'a Path,
}

impl<'a> StageContext<'a> {
    /// A context for stage `index` called `name`.
    pub fn new(
        index: usize,
        name: &'a str,
        cancel: &'a AtomicBool,
        observer: &'a mut dyn FnMut(Event<'_>),
        base_dir: &'a Path,
    ) -> Self {
        StageContext {
            index,
            name,
            cancel,
            observer,
            base_dir,
        }
    }

    /// The folder relative file paths of stage parameters are resolved against
    /// (the recipe file's folder).
    pub fn base_dir(&self) -> &Path {
        self.base_dir
    }

    /// The stage's name in error messages, e.g. `stages[0].StreamPower`.
    pub fn field_prefix(&self) -> String {
        format!("stages[{}].{}", self.index, self.name)
    }

    /// `Err(Cancelled)` once the cancel flag is set; call it at least once per step.
    pub fn check_cancel(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(OrogenError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Reports progress within the stage.
    pub fn progress(&mut self, fraction: f32, iteration: u32) {
        (self.observer)(Event::Progress {
            index: self.index,
            name: self.name,
            fraction: fraction.clamp(0.0, 1.0),
            iteration,
        });
    }

    /// Reports a finished step with the world as it now is, then checks the cancel flag.
    pub fn step_done(&mut self, world: &World, iteration: u32, fraction: f32) -> Result<()> {
        self.progress(fraction, iteration);
        (self.observer)(Event::Step {
            index: self.index,
            name: self.name,
            iteration,
            world,
        });
        self.check_cancel()
    }
}

/// Wall time one stage took.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StageTiming {
    pub stage: String,
    pub seconds: f64,
}

/// Mixed into the recipe seed for the uplift's noise, so it differs from the terrain's.
const UPLIFT_SEED_SALT: u64 = 0x7570_6c69_6674;

/// Builds the initial world of a validated recipe: terrain and uplift.
/// Relative file paths are resolved against `base_dir`.
pub fn initial_world(recipe: &Recipe, base_dir: &Path) -> Result<World> {
    recipe.validate()?;
    let grid = recipe.grid()?;
    let height = match &recipe.terrain {
        TerrainSource::Flat(h) => crate::field::Heightfield::filled(grid, *h),
        TerrainSource::Noise(params) => crate::terrain::noise::generate(params, grid, recipe.seed)?,
        TerrainSource::Heightmap(src) => src.load(grid, base_dir)?,
    };
    let grid = height.grid;
    let mut world = World::new(height, recipe.seed);
    world.uplift = recipe
        .uplift
        .resolve(grid, recipe.seed ^ UPLIFT_SEED_SALT, base_dir)?;
    Ok(world)
}

/// Runs `stages` over `world` in order; relative paths resolve against `base_dir`.
pub fn run_stages(
    world: &mut World,
    stages: &[Stage],
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<Vec<StageTiming>> {
    let mut timings = Vec::with_capacity(stages.len());
    for (index, stage) in stages.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(OrogenError::Cancelled);
        }
        let name = stage.name();
        observer(Event::StageStarted {
            index,
            name,
            stage_count: stages.len(),
        });
        let start = Instant::now();
        {
            let mut ctx = StageContext::new(index, name, cancel, observer, base_dir);
            match stage {
                Stage::StreamPower(p) => {
                    crate::eroders::stream_power::run_stage(p, world, &mut ctx)?
                }
                Stage::Thermal(p) => crate::eroders::thermal::run_stage(p, world, &mut ctx)?,
                Stage::Hydrology(p) => crate::flow::hydrology::run_stage(p, world, &mut ctx)?,
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        observer(Event::StageFinished {
            index,
            name,
            seconds,
        });
        timings.push(StageTiming {
            stage: name.to_string(),
            seconds,
        });
    }
    Ok(timings)
}

/// The result of a whole recipe run.
pub struct RunOutput {
    pub world: World,
    pub timings: Vec<StageTiming>,
}

/// Builds the initial world and runs every stage.
pub fn run_recipe(
    recipe: &Recipe,
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<RunOutput> {
    let start = Instant::now();
    let mut world = initial_world(recipe, base_dir)?;
    let mut timings = vec![StageTiming {
        stage: "initial terrain".into(),
        seconds: start.elapsed().as_secs_f64(),
    }];
    timings.extend(run_stages(
        &mut world,
        &recipe.stages,
        base_dir,
        cancel,
        observer,
    )?);
    Ok(RunOutput { world, timings })
}
