//! Runs a recipe: builds the initial world, then each stage in order, reporting
//! progress through a callback and stopping at a cancel flag within one step; at the end
//! the simulation state the recipe names in `outputs` is copied into the exported maps.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::error::{OrogenError, Result};
use crate::planet::Planet;
use crate::recipe::Domain;
use crate::recipe::{Recipe, Stage};
pub use crate::stages::context::{Event, StageContext};
use crate::stages::device::{Accelerator, Device, Devices, NO_BACKEND};
use crate::stages::planet::{PlanetValue, PLANET_SEED};
use crate::stages::source::{COAST_SEED, GRAPH_SEED, UPLIFT_SEED};
use crate::stages::stream_power::StreamPowerParams;
use crate::stages::thermal::ThermalParams;
use crate::stages::{LoopProcess, Process};
use crate::world::World;
use std::sync::Arc;

/// Wall time one stage took, and what it measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StageTiming {
    pub stage: String,
    pub seconds: f64,
    /// The stage's [`World::figures`] (e.g. `wind_blown_off_m3`), absent when it has none.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub figures: std::collections::BTreeMap<&'static str, f64>,
    /// What ran it: `cpu`, `gpu: <adapter>` (a `StreamPower` stage on a GPU), or
    /// `cpu (Auto: <why>)` where `device: Auto` kept it on the CPU.
    pub device: String,
}

/// Builds the initial world of a validated recipe: terrain and uplift.
/// Relative file paths are resolved against `base_dir`.
pub fn initial_world(recipe: &Recipe, base_dir: &Path) -> Result<World> {
    initial_world_cancellable(recipe, base_dir, &AtomicBool::new(false))
}

/// [`initial_world`], giving up with [`OrogenError::Cancelled`] soon after `cancel` is set:
/// while noise terrain is generated, and between the terrain, uplift and strata.
pub fn initial_world_cancellable(
    recipe: &Recipe,
    base_dir: &Path,
    cancel: &AtomicBool,
) -> Result<World> {
    initial_world_observed(recipe, base_dir, cancel, &mut |_| {})
}

/// [`initial_world_cancellable`], reporting a planet's simulation as [`Event::Setup`]
/// (`planet`) to `observer`.
pub fn initial_world_observed(
    recipe: &Recipe,
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<World> {
    recipe.validate()?;
    let grid = recipe.grid()?;
    let cancelled = || {
        if cancel.load(Ordering::Relaxed) {
            Err(OrogenError::Cancelled)
        } else {
            Ok(())
        }
    };
    // The planet comes first: the terrain and the uplift may be regions of it.
    let planet = match recipe.planet_params() {
        Some(params) => Some(Arc::new(Planet::run(
            &params,
            recipe.seed ^ PLANET_SEED,
            cancel,
            &mut |fraction| {
                observer(Event::Setup {
                    name: "planet",
                    fraction,
                })
            },
        )?)),
        None => None,
    };
    let (height, nodata) = match (recipe.terrain.planet(), &planet) {
        (Some(src), Some(p)) => (src.sample(p, grid, PlanetValue::Elevation)?, None),
        _ => recipe
            .terrain
            .build_cancellable(grid, recipe.seed, base_dir, cancel)?,
    };
    cancelled()?;
    let grid = height.grid;
    let mut world = World::new(height, recipe.seed);
    if let Some(mask) = nodata {
        world.set_nodata(mask);
    }
    world.uplift = match (recipe.uplift.planet(), &planet) {
        (Some(src), Some(p)) => src.sample(p, grid, PlanetValue::Uplift)?,
        _ => {
            recipe
                .uplift
                .resolve_cancellable(grid, recipe.seed ^ UPLIFT_SEED, base_dir, cancel)?
        }
    };
    crate::stages::source::fade_at_borders(
        &mut world.uplift,
        recipe.border_fade(),
        recipe.seed ^ COAST_SEED,
        cancel,
    )?;
    world.planet = planet;
    cancelled()?;
    if let Some(strata) = &recipe.strata {
        let (layers, materials) = crate::stages::strata::build_cancellable(
            &recipe.materials,
            strata,
            grid,
            &world.height.data,
            recipe.seed,
            base_dir,
            cancel,
        )?;
        world.layers = layers;
        world.materials = materials;
        // Nodata cells are outlets of bare bottom material at a fixed height.
        world.hold_nodata();
    }
    if let Domain::Graph(g) = &recipe.domain {
        g.build(&mut world, recipe.seed ^ GRAPH_SEED, cancel)?;
    }
    Ok(world)
}

/// After the stages: a Graph domain's heightfield and hydrology maps are made from the
/// eroded graph (routed with the first `StreamPower` stage's outlets and lakes, or all
/// borders open and lakes carved), and the world leaves the graph. Nothing on a grid.
pub fn finish_world(recipe: &Recipe, world: &mut World) -> Result<()> {
    let Domain::Graph(g) = &recipe.domain else {
        return Ok(());
    };
    let sp = recipe.stages.iter().find_map(|s| s.stream_power());
    let (outlets, lakes) = match sp {
        Some(p) => (p.outlets.clone(), p.lakes),
        None => (Default::default(), Default::default()),
    };
    g.finish(world, &outlets, lakes)?;
    world.graph = None;
    Ok(())
}

/// Runs `stages` over `world` in order, on the CPU; relative paths resolve against
/// `base_dir`.
pub fn run_stages(
    world: &mut World,
    stages: &[Stage],
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<Vec<StageTiming>> {
    run_stages_on(world, stages, base_dir, cancel, observer, Devices::CPU)
}

/// [`run_stages`] with `StreamPower` where `devices` says (see [`Device`]).
pub fn run_stages_on(
    world: &mut World,
    stages: &[Stage],
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
    devices: Devices<'_>,
) -> Result<Vec<StageTiming>> {
    run_stages_watched(
        world,
        stages,
        base_dir,
        cancel,
        observer,
        devices,
        &mut || true,
    )
}

/// [`run_stages_on`] whose observer sees the world ([`Event::Step`]) only after the steps
/// `world_due` says yes to (asked before each step of a stage run on its own) and each
/// stage's last: a stage on an accelerator reads its heights back only then (issue #42).
/// The same bytes as [`run_stages_on`].
pub fn run_stages_watched(
    world: &mut World,
    stages: &[Stage],
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
    devices: Devices<'_>,
    world_due: &mut dyn FnMut() -> bool,
) -> Result<Vec<StageTiming>> {
    let mut timings = Vec::with_capacity(stages.len());
    // Figures from before the stages are no stage's.
    world.figures.clear();
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
        let (ran, device) = {
            let mut ctx = StageContext::new(index, name, cancel, observer, base_dir)
                .with_devices(devices)
                .with_world_due(&mut *world_due);
            let ran = stage.run(world, &mut ctx);
            (ran, ctx.device())
        };
        if let Err(e) = ran {
            // A value that overflowed in one step trips a check deep in a later one,
            // which names a process's own buffer (`heights`); name the stage and the
            // recipe fields that drive it instead.
            if !matches!(e, OrogenError::Cancelled) {
                check_finite_after(world, index, stage)?;
            }
            return Err(e);
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
            figures: std::mem::take(&mut world.figures),
            device,
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

/// Estimated peak memory of running and baking `recipe`, bytes (see
/// [`estimate_bytes_in`]), with a heightmap's relative path resolved against the current
/// folder.
pub fn estimate_bytes(recipe: &Recipe) -> u64 {
    estimate_bytes_in(recipe, Path::new("."))
}

/// Least bytes per cell of any bake, whatever its stages: the world's heights and uplift,
/// the exported maps and what the writer encodes them into.
pub const BASE_BYTES_PER_CELL: u64 = 40;

/// Bytes per stage of the recipe, whatever the size: the stage itself, its line in
/// `bake.json` (the recipe is written there whole) and the timings (100,000 stages wrote an
/// 83 MB `bake.json`: fuzz finding #39.3; 20,000 `StreamPower` stages at 17² peaked at
/// 5.1 KB of RSS per stage).
pub const BYTES_PER_STAGE: u64 = 8192;

/// Bytes per sample of loading a heightmap file, beyond the world made of it: the decoded
/// samples and the image's own buffer (16-bit gray, or up to 8 B for RGBA16).
pub const HEIGHTMAP_LOAD_BYTES: u64 = 16;

/// The world's `(width, height)`: a `Heightmap` terrain's own size (read from the file's
/// header) unless it is resampled, else the recipe's `size`; and the heightmap's samples
/// when there is one. A file that cannot be read gives the recipe's size (loading it fails
/// later with an error naming it).
pub fn world_size(recipe: &Recipe, base_dir: &Path) -> ((u32, u32), u64) {
    use crate::io::heightmap::Fit;
    use crate::recipe::TerrainSource;
    if let TerrainSource::Heightmap(src) = &recipe.terrain {
        if let Ok((w, h)) = src.dimensions(base_dir) {
            let samples = w as u64 * h as u64;
            let size = match src.fit {
                Fit::UseImageSize => (
                    w.min(u32::MAX as usize) as u32,
                    h.min(u32::MAX as usize) as u32,
                ),
                Fit::Resample => recipe.size,
            };
            return (size, samples);
        }
    }
    (recipe.size, 0)
}

/// Estimated peak memory of running and baking `recipe`, bytes: the world's cells (a
/// heightmap's own size, see [`world_size`]) times the most demanding stage's bytes per
/// cell ([`crate::stages::kind::StageKind::bytes_per_cell`], at least
/// [`BASE_BYTES_PER_CELL`]), plus, for a layered terrain, 4 B per layer (`strata.layers ×
/// repeat`, and the sediment) and 8 B per material (its exported `layer_<name>` map) and
/// 24 B for the exposed-material maps, plus a heightmap's loading
/// ([`HEIGHTMAP_LOAD_BYTES`] per sample), [`BYTES_PER_STAGE`] per stage, a graph's nodes,
/// a planet's points and maps, and 64 MiB.
pub fn estimate_bytes_in(recipe: &Recipe, base_dir: &Path) -> u64 {
    let ((w, h), _) = world_size(recipe, base_dir);
    estimate_bytes_of_cells(recipe, base_dir, w as u64 * h as u64)
}

/// [`estimate_bytes_in`] for a process that holds `cells` of the world's cells: a tiled
/// run's tiles (issue #41), the same bytes per cell and per stage, the same heightmap
/// loading (every rank reads the file whole) and 64 MiB.
pub fn estimate_bytes_of_cells(recipe: &Recipe, base_dir: &Path, cells: u64) -> u64 {
    let (_, samples) = world_size(recipe, base_dir);
    let stage = recipe
        .stages
        .iter()
        .map(|s| s.kind().bytes_per_cell())
        .fold(BASE_BYTES_PER_CELL, u64::max);
    let layers = match &recipe.strata {
        Some(s) => {
            let count = s.layers.len() as u64 * s.repeat.max(1) as u64 + 1;
            let materials = recipe.materials.len() as u64 + 2;
            4 * count + 8 * materials + 24
        }
        None => 0,
    };
    let graph = match &recipe.domain {
        Domain::Graph(g) => recipe.grid().map_or(0, |grid| {
            (g.max_nodes(grid) * crate::stages::domain::BYTES_PER_NODE as f64).min(u64::MAX as f64)
                as u64
        }),
        Domain::Grid => 0,
    };
    // The planet's points, and its baked equirectangular maps (three f32 maps, the
    // plates, and the samples they are made from: about 36 B per pixel).
    let planet = recipe.planet_params().map_or(0, |p| {
        let width = crate::stages::planet::map_width(p.points as usize) as u64;
        p.points as u64 * Planet::BYTES_PER_POINT + width * (width / 2) * 36
    });
    let fixed = (recipe.stages.len() as u64)
        .saturating_mul(BYTES_PER_STAGE)
        .saturating_add(samples.saturating_mul(HEIGHTMAP_LOAD_BYTES));
    cells
        .saturating_mul(stage + layers)
        .saturating_add(graph)
        .saturating_add(planet)
        .saturating_add(fixed)
        .saturating_add(64 << 20)
}

/// The memory this process may use, bytes, and where the bound comes from: the smallest
/// of the system's available memory (`MemAvailable`), the address-space limit
/// (`ulimit -v`) and the cgroup's `memory.max`. `None` where none can be read.
pub fn available_bytes() -> Option<(u64, &'static str)> {
    let mut best: Option<(u64, &'static str)> = None;
    let mut offer = |bytes: u64, from: &'static str| {
        if best.is_none_or(|(b, _)| bytes < b) {
            best = Some((bytes, from));
        }
    };
    if let Ok(info) = std::fs::read_to_string("/proc/meminfo") {
        let kb = info
            .lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        if let Some(kb) = kb {
            offer(kb * 1024, "available system memory");
        }
    }
    if let Ok(max) = std::fs::read_to_string("/sys/fs/cgroup/memory.max") {
        if let Ok(b) = max.trim().parse::<u64>() {
            offer(b, "the cgroup's memory.max");
        }
    }
    #[cfg(target_os = "linux")]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we pass and reads nothing else.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
        {
            offer(lim.rlim_cur, "the address-space limit (ulimit -v)");
        }
    }
    best
}

/// `bytes` in GiB, MiB below 1 GiB, KiB below 1 MiB and bytes below 1 KiB (`--max-memory
/// 1` is one byte, not "1 MiB": fuzz finding #39.8).
pub fn gib(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else if bytes >= 1 << 20 {
        format!("{:.0} MiB", (bytes as f64 / (1u64 << 20) as f64).ceil())
    } else if bytes >= 1 << 10 {
        format!("{:.0} KiB", (bytes as f64 / (1u64 << 10) as f64).ceil())
    } else {
        format!("{bytes} B")
    }
}

/// Refuses `recipe` before anything is allocated when its [`estimate_bytes`] exceeds
/// `max` (e.g. the CLI's `--max-memory`) or [`available_bytes`]; the error names `size`
/// and gives both figures.
pub fn check_memory(recipe: &Recipe, max: Option<u64>) -> Result<()> {
    check_memory_in(recipe, max, Path::new("."))
}

/// [`check_memory`] with a heightmap's relative path resolved against `base_dir` (its
/// own size counts, not the recipe's `size`).
pub fn check_memory_in(recipe: &Recipe, max: Option<u64>, base_dir: &Path) -> Result<()> {
    let need = estimate_bytes_in(recipe, base_dir);
    let Some((limit, from)) = memory_limit(max) else {
        return Ok(());
    };
    if need > limit {
        if let Domain::Graph(g) = &recipe.domain {
            let grid = recipe.grid()?;
            let nodes = g.max_nodes(grid);
            let graph = nodes * crate::stages::domain::BYTES_PER_NODE as f64;
            if graph > 0.5 * need as f64 {
                return Err(OrogenError::invalid(
                    "domain.Graph.spacing",
                    format!(
                        "{} m makes up to {nodes:.3e} nodes, which need about {} ({} B per \
                         node), more than the {} of {from}; choose a larger spacing",
                        g.spacing,
                        gib(need),
                        crate::stages::domain::BYTES_PER_NODE,
                        gib(limit)
                    ),
                ));
            }
        }
        if let Some(p) = recipe.planet_params() {
            let planet = p.points as u64 * Planet::BYTES_PER_POINT;
            if planet as f64 > 0.5 * need as f64 {
                return Err(OrogenError::invalid(
                    "planet.points",
                    format!(
                        "{} points need about {} ({} B per point), more than the {} of \
                         {from}; choose fewer points",
                        p.points,
                        gib(need),
                        Planet::BYTES_PER_POINT,
                        gib(limit)
                    ),
                ));
            }
        }
        let ((w, h), samples) = world_size(recipe, base_dir);
        let per_cell = (need - (64 << 20)) / (w as u64 * h as u64).max(1);
        let stages = recipe.stages.len() as u64 * BYTES_PER_STAGE;
        if stages as f64 > 0.5 * need as f64 {
            return Err(OrogenError::invalid(
                "stages",
                format!(
                    "{} stages need about {} ({BYTES_PER_STAGE} B per stage, with the whole \
                     recipe in bake.json), more than the {} of {from}; use fewer stages (a \
                     stage's iterations, or a TimeLoop)",
                    recipe.stages.len(),
                    gib(need),
                    gib(limit)
                ),
            ));
        }
        if samples > 0 {
            return Err(OrogenError::invalid(
                "terrain.Heightmap.path",
                format!(
                    "a {w}x{h} heightmap bake needs about {} ({per_cell} B per cell), more than \
                     the {} of {from}; use a smaller image (or `fit: Resample` to a smaller \
                     size)",
                    gib(need),
                    gib(limit)
                ),
            ));
        }
        return Err(OrogenError::invalid(
            "size",
            format!(
                "a {w}x{h} bake needs about {} ({per_cell} B per cell), more than the {} of \
                 {from}; choose a smaller size",
                gib(need),
                gib(limit)
            ),
        ));
    }
    Ok(())
}

/// The memory a bake may use and where the bound comes from: `max` (`--max-memory`) or
/// [`available_bytes`], the smaller.
fn memory_limit(max: Option<u64>) -> Option<(u64, &'static str)> {
    match (max, available_bytes()) {
        (Some(m), Some((a, from))) if a < m => Some((a, from)),
        (Some(m), _) => Some((m, "--max-memory")),
        (None, found) => found,
    }
}

/// A tiled run's memory check (issue #41), before anything is allocated: the process
/// holds `cells` cells (its tiles with their halos, times the ranks that share its memory),
/// estimated as [`check_memory_in`] estimates the whole map ([`estimate_bytes_of_cells`])
/// against the same limit. `what` says what holds them (`4 tiles on threads`); the error
/// names `--tiles`.
pub fn check_tile_memory(
    recipe: &Recipe,
    max: Option<u64>,
    base_dir: &Path,
    cells: u64,
    what: &str,
) -> Result<()> {
    let need = estimate_bytes_of_cells(recipe, base_dir, cells);
    let Some((limit, from)) = memory_limit(max) else {
        return Ok(());
    };
    if need > limit {
        let per_cell = need.saturating_sub(64 << 20) / cells.max(1);
        return Err(OrogenError::invalid(
            "--tiles",
            format!(
                "{what} hold {cells} cells, which need about {} ({per_cell} B per cell), more \
                 than the {} of {from}; use more tiles, or more machines",
                gib(need),
                gib(limit)
            ),
        ));
    }
    Ok(())
}

/// Builds the initial world and runs every stage, after [`check_memory`] (no limit but
/// the system's). No GPU: a recipe's `device: Gpu` is an error naming `device`, `Auto`
/// runs the CPU ([`run_recipe_on`] takes an accelerator).
pub fn run_recipe(
    recipe: &Recipe,
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<RunOutput> {
    run_recipe_on(recipe, base_dir, cancel, observer, None, NO_BACKEND)
}

/// Refuses, before any work, a `device: Gpu` run that cannot be: no accelerator (naming
/// `device`), or a `StreamPower` or `Thermal` stage (a loop's too), or a `Hydraulic` stage,
/// the accelerator does not run (naming the stage: `stages[2].StreamPower`). Nodata cells are only known once the
/// terrain is read; the stage refuses them when it starts. Nothing for `Cpu` and `Auto`.
pub fn check_devices(recipe: &Recipe, devices: Devices<'_>) -> Result<()> {
    if devices.device != Device::Gpu {
        return Ok(());
    }
    let Some(accel) = devices.wanted()? else {
        return Ok(());
    };
    let graph = matches!(recipe.domain, Domain::Graph(_));
    let layered = recipe.strata.is_some();
    let grid = recipe.grid()?;
    type Found<'r> = (
        String,
        Option<&'r StreamPowerParams>,
        Option<&'r ThermalParams>,
    );
    for (i, stage) in recipe.stages.iter().enumerate() {
        if let Stage::Hydraulic(h) = stage {
            let field = format!("stages[{i}].Hydraulic");
            if let Some(e) = h.gpu_refusal(layered, grid, accel, &field) {
                return Err(e);
            }
        }
        if let (Stage::Hydrology(h), false) = (stage, graph) {
            let field = format!("stages[{i}].Hydrology");
            accel.supports_hydrology(grid, &h.outlets, &h.process(), &field)?;
        }
        let mut found: Vec<Found> = Vec::new();
        match stage {
            Stage::StreamPower(p) => {
                found.push((format!("stages[{i}].StreamPower"), Some(p), None))
            }
            Stage::Thermal(t) => found.push((format!("stages[{i}].Thermal"), None, Some(t))),
            Stage::TimeLoop(l) => {
                for (j, p) in l.processes.iter().enumerate() {
                    let field = format!("stages[{i}].TimeLoop.processes[{j}].{}", p.name());
                    match p {
                        Process::StreamPower(p) => found.push((field, Some(p), None)),
                        Process::Thermal(t) => found.push((field, None, Some(t))),
                        Process::Hydrology(h) if !graph => {
                            accel.supports_hydrology(grid, &h.outlets, &h.process(), &field)?
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        for (field, sp, thermal) in found {
            let refusal = match (sp, thermal) {
                (Some(p), _) => p.gpu_refusal(graph, layered, false, accel, &field),
                (None, Some(t)) => t.gpu_refusal(graph, layered, grid, accel, &field),
                (None, None) => None,
            };
            if let Some(e) = refusal {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// [`run_recipe`] with `StreamPower` where the recipe's `device` says: on `accelerator`
/// (the CLI's GPU), or, where there is none, `Gpu` fails naming `device` and says
/// `missing`, and `Auto` runs the CPU.
pub fn run_recipe_on(
    recipe: &Recipe,
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
    accelerator: Option<&dyn Accelerator>,
    missing: &str,
) -> Result<RunOutput> {
    let devices = Devices {
        device: recipe.device,
        accelerator,
        missing,
    };
    run_recipe_watched(recipe, base_dir, cancel, observer, devices, &mut || true)
}

/// [`run_recipe_on`] whose observer sees the world ([`Event::Step`]) only after the steps
/// `world_due` asks for and each stage's last ([`run_stages_watched`]): a run that wants
/// only its end (`&mut || false`) reads nothing back from the accelerator between. The
/// same bytes as [`run_recipe_on`].
pub fn run_recipe_watched(
    recipe: &Recipe,
    base_dir: &Path,
    cancel: &AtomicBool,
    observer: &mut dyn FnMut(Event<'_>),
    devices: Devices<'_>,
    world_due: &mut dyn FnMut() -> bool,
) -> Result<RunOutput> {
    let start = Instant::now();
    recipe.validate()?;
    check_devices(recipe, devices)?;
    check_memory_in(recipe, None, base_dir)?;
    let mut world = initial_world_observed(recipe, base_dir, cancel, observer)?;
    let start_height = recipe
        .outputs
        .iter()
        .any(|o| o == "erosion")
        .then(|| world.height.data.clone());
    let mut timings = vec![StageTiming {
        stage: "initial terrain".into(),
        seconds: start.elapsed().as_secs_f64(),
        figures: Default::default(),
        device: "cpu".into(),
    }];
    timings.extend(run_stages_watched(
        &mut world,
        &recipe.stages,
        base_dir,
        cancel,
        observer,
        devices,
        world_due,
    )?);
    finish_world(recipe, &mut world)?;
    if let Some(p) = &recipe.river_curves {
        // Issue #37: the open border's held ring no longer stands over the ground inside it,
        // and the grid's rivers as curves, carved into the heights shown and baked
        // (`river_curves: None`: the stages' own heights).
        let start = Instant::now();
        crate::stages::open_border::settle(
            &mut world,
            crate::stages::open_border::held_sides(&recipe.stages),
        )?;
        if crate::stages::river_curves::apply(&mut world, p)? {
            timings.push(StageTiming {
                stage: "river curves".into(),
                seconds: start.elapsed().as_secs_f64(),
                figures: Default::default(),
                device: "cpu".into(),
            });
        }
    }
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
    check_finite_at_end(recipe, &world)?;
    Ok(RunOutput { world, timings })
}

/// Fails when a map made after the stages is not finite: a Graph domain's surface (drawn
/// from the eroded graph), the river curves carved into the heights, an exported state and
/// the layer maps (each material's thickness summed over its layers). Each stage's own
/// values are checked as it ends ([`run_stages`]); these came later and slipped past (fuzz
/// finding #39.2). The message names the map and the recipe field that led there.
fn check_finite_at_end(recipe: &Recipe, world: &World) -> Result<()> {
    let Some((what, cell, value)) = world.first_non_finite() else {
        return Ok(());
    };
    let grid = world.grid();
    let (x, y) = (cell % grid.width.max(1), cell / grid.width.max(1));
    let from = if what.starts_with(crate::world::names::LAYER_PREFIX) {
        "strata.layers (thickness × strata.repeat)".to_string()
    } else if let Domain::Graph(g) = &recipe.domain {
        let surface = match &g.surface {
            crate::stages::domain::Surface::Gaussian { .. } => "Gaussian",
            crate::stages::domain::Surface::Phong { .. } => "Phong",
            crate::stages::domain::Surface::Primitives(_) => "Primitives",
        };
        format!("domain.Graph.surface.{surface}, drawing the eroded graph")
    } else if recipe.river_curves.is_some() {
        "river_curves".to_string()
    } else {
        "the recipe's outputs".to_string()
    };
    Err(OrogenError::Numerical {
        field: format!("maps[{what:?}]"),
        reason: format!(
            "{value} at cell ({x}, {y}) after the stages, from {from}: nothing was written"
        ),
    })
}

/// Maps a live run takes up between two steps (painted in the editor); `None` leaves
/// that input as it was.
#[derive(Clone, Debug, Default)]
pub struct LiveMaps {
    /// Uplift rate, m/yr, over any grid (resampled to the world's).
    pub uplift: Option<crate::field::ScalarMap>,
    /// Precipitation, m/yr (≥ 0), over any grid (resampled to the world's).
    pub precipitation: Option<crate::field::ScalarMap>,
}

/// Live erosion: the recipe's first `StreamPower` stage (the defaults when it has none),
/// at its finest level and without its tolerance, stepped over `world` until `stop` is
/// set (the world is then kept: this is not a cancel). Between two steps `take_maps` may
/// hand over new uplift or precipitation maps; the stage then restarts from the current
/// terrain with them. Each step is reported as [`Event::Step`]; at the end the hydrology
/// maps of where it stopped are written (as the stage's `hydrology: true` does, with the
/// river threshold and ε of the recipe's `Hydrology` stage when it has one). Returns
/// the steps run. It runs the CPU: a recipe's `device: Gpu` is an error naming `device`,
/// `Auto` runs the CPU ([`run_live_on`] takes an accelerator).
pub fn run_live(
    recipe: &Recipe,
    base_dir: &Path,
    world: &mut World,
    stop: &AtomicBool,
    take_maps: &mut dyn FnMut() -> Option<LiveMaps>,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<u32> {
    let devices = Devices::cpu_only(recipe.device);
    let hooks = LiveHooks {
        take_maps,
        view_due: &mut || true,
        observer,
    };
    run_live_on(recipe, base_dir, world, stop, hooks, devices).map(|out| out.steps)
}

/// What [`run_live_on`] calls back while it runs.
pub struct LiveHooks<'a> {
    /// New uplift or precipitation maps, asked before every step.
    pub take_maps: &'a mut dyn FnMut() -> Option<LiveMaps>,
    /// Asked after every step: whether the world passed with this step's [`Event::Step`]
    /// must hold its heights (a view is due). When it says no, a run on an accelerator
    /// without a hillslope process reads nothing back and the world keeps the heights of
    /// the last view; the CPU's world is always up to date.
    pub view_due: &'a mut dyn FnMut() -> bool,
    /// Each step as [`Event::Step`].
    pub observer: &'a mut dyn FnMut(Event<'_>),
}

/// What a live run did.
#[derive(Clone, Debug)]
pub struct LiveOutput {
    /// Steps run.
    pub steps: u32,
    /// What stepped the stream power last: `cpu`, `gpu: <adapter>`, or `cpu (Auto: <why>)`.
    pub device: String,
}

/// [`run_live`] with its stream power where the recipe's `device` says (`devices`: the
/// accelerator the caller opened, as [`run_recipe_on`]; `Gpu` without one, or with a
/// terrain it does not run, fails naming `device` or the stage). On an accelerator the
/// heights are handed over whenever the painted maps restart the stage or the hillslope
/// process (a `Thermal` stage) changed them, and read back only for the steps whose view is
/// due (`hooks.view_due`) or every step where a hillslope process needs them; the CPU's
/// path is [`run_live`]'s, byte for byte.
pub fn run_live_on(
    recipe: &Recipe,
    base_dir: &Path,
    world: &mut World,
    stop: &AtomicBool,
    hooks: LiveHooks<'_>,
    devices: Devices<'_>,
) -> Result<LiveOutput> {
    use crate::stages::stream_power::{Schedule, StreamPowerParams};
    let LiveHooks {
        take_maps,
        view_due,
        observer,
    } = hooks;
    use crate::stages::StageKind;
    world.require_grid("live erosion")?;
    // The river curves of the terrain this run starts from no longer fit it once it erodes.
    world.rivers = None;
    let (index, mut params) = recipe
        .stages
        .iter()
        .enumerate()
        .find_map(|(i, s)| s.stream_power().map(|p| (i, p.clone())))
        .unwrap_or_else(|| (0, StreamPowerParams::default()));
    params.schedule = Schedule::Fine;
    params.tolerance = None;
    // The kept terrain's rivers and lakes are those of where it stopped: the stream power's
    // own maps, or, when the recipe has a `Hydrology` stage, that stage's (written once the
    // run ends, below, so the kept terrain is routed once).
    let kept_hydrology = recipe.stages.iter().enumerate().find_map(|(i, s)| match s {
        Stage::Hydrology(h) => Some((i, h)),
        _ => None,
    });
    params.hydrology = kept_hydrology.is_none();
    let field = format!("stages[{index}].StreamPower");
    params.validate(&field)?;
    let env = crate::stages::Env {
        base_dir,
        field: field.clone(),
        index,
        in_loop: false,
        devices,
    };
    let name = "StreamPower";
    let mut run = params.start(world, &env)?;
    // The recipe's first Thermal stage, if any, runs its iterations (or until it settles)
    // after each stream-power step: a hillslope process, so painted uplift grows ranges with
    // foothills rather than a spike per cell (issue #37).
    let mut hillslope = match recipe.stages.iter().enumerate().find_map(|(i, s)| match s {
        crate::recipe::Stage::Thermal(t) => Some((i, t.clone())),
        _ => None,
    }) {
        Some((i, t)) => {
            let field = format!("stages[{i}].Thermal");
            t.validate(&field)?;
            let env = crate::stages::Env {
                base_dir,
                field,
                index: i,
                in_loop: false,
                devices: Devices::CPU,
            };
            Some((t.start(world, &env)?, t.iterations.max(1)))
        }
        None => None,
    };
    let mut steps = 0u32;
    while !stop.load(Ordering::Relaxed) {
        if let Some(maps) = take_maps() {
            run.sync(world)?;
            let grid = world.grid();
            if let Some(u) = maps.uplift {
                let mut u = u.resampled(grid);
                u.grid = grid;
                world.uplift = u;
            }
            if let Some(p) = maps.precipitation {
                params.precipitation =
                    Some(crate::stages::source::ScalarSource::Values(Arc::new(p)));
            }
            // On an accelerator the maps go into the stepper's buffers; the CPU's run
            // starts again.
            if !params.retake(run.as_mut(), world, &env)? {
                run = params.start(world, &env)?;
            }
        }
        let current = match &mut hillslope {
            Some((h, iterations)) => {
                run.step(world)?;
                for _ in 0..*iterations {
                    if h.step(world)? {
                        break;
                    }
                }
                true
            }
            None => run.step_deferred(world)?,
        };
        // A view due on an accelerator takes the heights as read back, shared; the world
        // stays behind until the CPU needs it (new maps, the end).
        let shown = if view_due() && !current {
            run.shared_heights(world)?
        } else {
            None
        };
        world.hold_nodata();
        steps += 1;
        // A world not up to date is the last view's, already checked.
        let bad = match &shown {
            Some(h) => h
                .iter()
                .position(|v| !v.is_finite())
                .map(|cell| (crate::world::names::HEIGHT.to_string(), cell, h[cell])),
            None if current => world.first_non_finite(),
            None => None,
        };
        if let Some((what, cell, value)) = bad {
            return Err(OrogenError::Numerical {
                field,
                reason: format!(
                    "live erosion left {value} in `{what}` at cell {cell}: reduce the painted \
                     uplift or precipitation, `k` or `dt`"
                ),
            });
        }
        observer(Event::Step {
            index,
            name,
            iteration: steps,
            world,
            shown,
        });
    }
    run.finish(world)?;
    // The open border's held ring, lowered onto the ground inside it, as a bake's (before
    // the kept terrain's maps, which are then of the settled terrain).
    if recipe.river_curves.is_some() {
        crate::stages::open_border::settle(
            world,
            crate::stages::open_border::held_sides(&recipe.stages),
        )?;
    }
    // A recipe's `Hydrology` stage says what its bake calls a river (its threshold and ε):
    // the kept terrain's maps are made with those, over the routing and rain the live
    // stream power used (painted rain included), so a painted plain shows the rivers its
    // recipe asks for and not every stream of a square kilometre.
    if let Some((i, h)) = kept_hydrology {
        let kept = crate::stages::hydrology::HydrologyParams {
            river_threshold: h.river_threshold,
            epsilon: h.epsilon,
            ..params.hydrology_params()
        };
        crate::stages::hydrology::write_hydrology_maps(
            world,
            &kept,
            base_dir,
            &format!("stages[{i}].Hydrology"),
        )?;
    }
    // And its rivers are curves, as a bake's (the recipe's `river_curves`, carved with their
    // banks): drawn from the cell mask, a painted plain's rivers ran in straight D8 reaches
    // with right-angle bends. The last stop's curves go first; they belong to the terrain
    // before this run.
    if let Some(p) = &recipe.river_curves {
        world.rivers = None;
        crate::stages::river_curves::apply(world, p)?;
    }
    Ok(LiveOutput {
        steps,
        device: run.device().unwrap_or_else(|| "cpu".into()),
    })
}
