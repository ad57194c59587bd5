//! Runs a recipe: builds the initial world, then each stage in order, reporting
//! progress through a callback and stopping at a cancel flag within one step; at the end
//! the simulation state the recipe names in `outputs` is copied into the exported maps.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::error::{OrogenError, Result};
use crate::recipe::{Recipe, Stage};
pub use crate::stages::context::{Event, StageContext};
use crate::stages::source::UPLIFT_SEED;
use crate::world::World;

/// Wall time one stage took.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StageTiming {
    pub stage: String,
    pub seconds: f64,
}

/// Builds the initial world of a validated recipe: terrain and uplift.
/// Relative file paths are resolved against `base_dir`.
pub fn initial_world(recipe: &Recipe, base_dir: &Path) -> Result<World> {
    recipe.validate()?;
    let grid = recipe.grid()?;
    let height = recipe.terrain.build(grid, recipe.seed, base_dir)?;
    let grid = height.grid;
    let mut world = World::new(height, recipe.seed);
    world.uplift = recipe
        .uplift
        .resolve(grid, recipe.seed ^ UPLIFT_SEED, base_dir)?;
    if let Some(strata) = &recipe.strata {
        let (layers, materials) = crate::stages::strata::build(
            &recipe.materials,
            strata,
            grid,
            &world.height.data,
            recipe.seed,
            base_dir,
        )?;
        world.layers = layers;
        world.materials = materials;
    }
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
            stage.run(world, &mut ctx)?;
        }
        check_finite_after(world, index, stage)?;
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

/// Fails when `stage` (at `index`) left a value that is not finite: an overflow of 32-bit
/// floats, which would otherwise be written to the maps with exit 0. The message names the
/// stage, where the value is, and the recipe fields that drive it.
fn check_finite_after(world: &World, index: usize, stage: &Stage) -> Result<()> {
    let Some((what, cell, value)) = world.first_non_finite() else {
        return Ok(());
    };
    let grid = world.grid();
    let (x, y) = (cell % grid.width.max(1), cell / grid.width.max(1));
    Err(OrogenError::Numerical {
        field: format!("stages[{index}].{}", stage.name()),
        reason: format!(
            "the stage left {value} in `{what}` at cell ({x}, {y}): values beyond the range \
             of 32-bit floats (about ±3.4e38); reduce the size of {}",
            stage.kind().drivers()
        ),
    })
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
    let start_height = recipe
        .outputs
        .iter()
        .any(|o| o == "erosion")
        .then(|| world.height.data.clone());
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
    for (i, name) in recipe.outputs.iter().enumerate() {
        if name == "erosion" {
            continue;
        }
        world.export_state(name, &format!("outputs[{i}]"))?;
    }
    if let Some(before) = start_height {
        let grid = world.grid();
        let data = world
            .height
            .data
            .iter()
            .zip(&before)
            .map(|(a, b)| a - b)
            .collect();
        world.maps.insert(
            crate::world::names::EROSION.into(),
            crate::world::MapData::Scalar(crate::field::ScalarMap { grid, data }),
        );
    }
    world.export_layers();
    Ok(RunOutput { world, timings })
}
