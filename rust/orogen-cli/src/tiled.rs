//! `orogen bake --tiles NxM`: a recipe run tiled (issue #41), one rank per tile, over
//! threads ([`orogen_core::tiles::ThreadComm`]) or MPI ranks (`mpi_comm`, the `mpi`
//! feature), giving the whole-map bake's bytes.
//!
//! What tiles is what `orogen_core::tiles` tiles: `StreamPower` (any `lakes` and `n`,
//! any `tolerance` (the largest change of a step reduced over the ranks), an open border; a `CoarseToFine` schedule's coarse levels run whole at
//! rank 0, its finest level on the tiles), `Thermal` (any talus; over strata it moves the
//! tile's layers), `LayeredThermal` ([`TileLayeredThermal`]), `Hydraulic` (the pipe model, [`TileHydraulic`]: its water carried from one
//! such stage to the next, its lost water and sediment summed at rank 0 as the whole map
//! sums them), and `Hydrology` and a `StreamPower` stage's `hydrology: true` maps (an open
//! border; each rank routes its tile with the tiles' router and writes its tiles of the
//! maps, [`TileStreamPower::hydrology`]). A layered world's strata are laid per tile
//! (`strata::build_window`); without `--merge` each rank writes its tile of the layer maps
//! (`layer_maps`: the whole map's counts of exposed materials and beds' thicknesses
//! reduced over the ranks), with `--merge` the layers are gathered at rank 0 for them;
//! over strata `StreamPower` takes `k` from the exposed material and
//! erodes the tile's own layers ([`TileStreamPower::step_layered`]: per cell, no layer
//! crosses a tile edge; `CoarseToFine` is refused there as the whole-map stage refuses it)
//! and `Hydraulic` dissolves down them ([`TileHydraulic::set_layers`]: every layer's halo of
//! one ring exchanged per step). Anything else is refused before any work, naming
//! the stage and field.
//!
//! No rank holds a whole map unless `--merge` asks for one:
//! - each rank makes only its own tile of the start world (terrain, uplift, `k`,
//!   precipitation, a thermal stage's talus tangents), evaluating noise and planes at the
//!   tile's whole-map positions ([`TerrainSource::build_window`],
//!   [`ScalarSource::resolve_window`]); a noise map's normalisation takes the whole map's
//!   lowest and highest value, reduced over the ranks; an image or heightmap file is read
//!   whole (the file is the whole map) and only the tile's cells are kept;
//! - the stages hand each other the tiles' heights (each tiled stage exchanges its halos);
//! - without `--merge` each rank writes its own tiles (`height_rR_cC.exr`; the recipe's
//!   `outputs`, all per cell: `erosion`, `water_depth`, `sediment`, `velocity`; the
//!   hydrology maps; a layered world's maps) into the one staging folder, and rank 0
//!   writes `bake.json` (listing the tiles, `strata_column` in `maps`, `rivers.json`) and
//!   puts the folder in place. With `--target terrain3d` the ranks write the Terrain3D
//!   regions instead ([`write_regions`]): each region by the rank owning its first cell,
//!   from the cells of the region and the ground weights' one-cell ring sent by their
//!   owners (1025² 2×2, region size 256: 8.2 KB a rank, the ring's 8 B a cell of heights
//!   and drainage; region size 1024: 2.1 MB from each of ranks 1–3 to rank 0), the whole
//!   export's bytes (bake.json aside). `--target hterrain` needs `--merge` (its maps are
//!   whole-map files);
//! - without `--merge` the river curves are traced at rank 0 from the tiles' river cells
//!   alone ([`orogen_core::tiles::river_curves`]: 16 B a river cell to rank 0), which
//!   writes `rivers.json`; each rank carves the curves that reach its tile into its own
//!   cells (and layers), giving the whole bake's heights bit for bit;
//! - with `--merge` rank 0 gathers the heights and the tiles' hydrology maps whole, and
//!   writes the whole-map bake's files, byte for byte.
//!
//! Measured 2026-12-07, 2×2 over 4 MPI ranks oversubscribed on 2 cores (the default
//! recipe's StreamPower 4 steps and Thermal 10, no hydrology; docs/performance.md, "Tiled
//! runs"): peak RSS per rank 432–519 MiB at 4097² (the whole-map bake 1,203 MiB; before
//! this, rank 0 1,455 MiB and ranks 1–3 728–748 MiB), 1,542–1,801 MiB at 8193² (the
//! whole-map bake is refused there by its memory estimate). Per own cell a tile still takes
//! 96–130 B against the whole map's 75 B (the tiled stages' state); the stream-power tile
//! alone 84–86 B since its per-cell buffers were slimmed (2026-12-07, StreamPower only).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use orogen_core::bake::tiled::{TileEntry, TileMap};
use orogen_core::eroders::stream_power::Inputs;
use orogen_core::eroders::thermal::talus_tangents_window;
use orogen_core::flow::hydrology::HydrologyMaps;
use orogen_core::recipe::Device;
use orogen_core::runner::StageTiming;
use orogen_core::stages::domain::Domain;
use orogen_core::stages::hydraulic::HYDRAULIC_SEED;
use orogen_core::stages::hydrology::HydrologyParams;
use orogen_core::stages::layered_thermal::LAYERED_THERMAL_SEED;
use orogen_core::stages::source::{
    border_fade_window, COAST_SEED, ERODIBILITY_SEED, PRECIPITATION_SEED, THERMAL_SEED, UPLIFT_SEED,
};
use orogen_core::stages::strata::{self, WorldMaterial};
use orogen_core::stages::stream_power::{Schedule, StreamPowerParams};
use orogen_core::stages::{Devices, Env};
use orogen_core::stages::{Stage, StageKind};
use orogen_core::state::{Layers, MaterialProps};
use orogen_core::tiles::comm::{Reader, Writer};
use orogen_core::tiles::river_curves::{carve_tile, tile_river_curves, TileRiverMaps};
use orogen_core::tiles::{
    all_max, gather_map, Comm, TileHydraulic, TileInputs, TileLayeredThermal, TileLayout,
    TileStreamPower, TileThermal, TileWater, ROOT,
};
use orogen_core::world::{names, MapData, World};
use orogen_core::{OrogenError, Recipe, Result};

/// Message tags of the driver (the tile processes use tags below 100).
const TAG_GATHER: u32 = 200;
/// The hydrology maps' gathers (`--merge`): drainage, surface, depth, rivers, basins,
/// receivers.
const TAG_HYDROLOGY: u32 = 230;
const TAG_BYTES: u32 = 202;
/// `CoarseToFine`'s gathers of the heights and inputs, and the scatter of the finest
/// level's start heights (5 tags).
const TAG_COARSE: u32 = 240;
/// A `StreamPower` stage's `tolerance`: the largest change of a step over the ranks (2 tags).
const TAG_SETTLED: u32 = 260;
/// `--merge`'s gathers of the pipe model's water, sediment and velocity (3 tags).
const TAG_WATER: u32 = 250;
/// Without `--merge`: the river curves' cells and curves
/// (`orogen_core::tiles::river_curves::TAGS` tags).
const TAG_CURVES: u32 = 270;
/// `--merge`'s gathers of the layers, one tag per layer from this one (at most 254).
const TAG_LAYERS: u32 = 20_000;

/// Refuses, before any work, a recipe the tiles cannot run: the error names the stage and
/// field (`stages[1].Thermal.talus: Material is not tiled yet`).
/// Without `merge` (`--merge`), what needs a whole map at rank 0 is refused too: the river
/// curves where a stage makes hydrology maps (they are drawn from them over the whole map),
/// outputs but `erosion`.
pub fn check_recipe(recipe: &Recipe, merge: bool) -> Result<()> {
    let refuse = |field: String, why: &str| Err(OrogenError::invalid(field, why.to_string()));
    if !merge {
        // Every output is per cell: `erosion` and the pipe model's state are written per
        // tile (a name no stage makes is refused after the stages, as the whole bake does).
    }
    if matches!(recipe.domain, Domain::Graph(_)) {
        return refuse("domain".into(), "Graph is not tiled (tiled runs take Grid)");
    }
    if recipe.planet_params().is_some() {
        return refuse("terrain".into(), "a planet is not tiled");
    }
    let layered = recipe.strata.is_some();
    if recipe.device != Device::Cpu {
        return refuse("device".into(), "tiled runs are on the CPU (device: Cpu)");
    }
    for (i, stage) in recipe.stages.iter().enumerate() {
        let field = format!("stages[{i}].{}", stage.name());
        match stage {
            // As the whole-map stage refuses it (`StreamPowerParams::scheduled`).
            Stage::StreamPower(p)
                if layered
                    && matches!(p.schedule, Schedule::CoarseToFine { levels, .. } if levels > 1) =>
            {
                return refuse(
                    format!("{field}.schedule"),
                    "CoarseToFine needs a terrain without strata; use schedule: Fine",
                );
            }
            // Over strata too: the tile's own layers (`TileStreamPower::step_layered`).
            Stage::StreamPower(p) => check_stream_power(p, &field)?,
            // Any talus (a `Material` talus reads each tile's layers).
            Stage::Thermal(p) => p.validate(&field)?,
            // Square cells, as the whole-map stage checks when it starts.
            Stage::LayeredThermal(p) => {
                p.validate(&field)?;
                recipe.grid()?.require_square(&field)?;
            }
            // Any rain, sources and borders, over strata too: `orogen_core::tiles::hydraulic`.
            // The whole-map stage's checks when it starts (`HydraulicParams::start`): square
            // cells, the sources on the map, `dt` under the pipe model's stability limit.
            Stage::Hydraulic(p) => {
                p.validate(&field)?;
                let grid = recipe.grid()?;
                grid.require_square(&field)?;
                p.process().validate_on(&grid, &field)?;
            }
            Stage::Hydrology(p) => {
                p.validate(&field)?;
                if p.outlets.borders.is_empty() {
                    return refuse(
                        format!("{field}.outlets.borders"),
                        "a tiled run needs an open border (a closed map's outlet is a \
                         whole-map choice)",
                    );
                }
            }
            _ => {
                return refuse(
                    field,
                    "this stage is not tiled yet (tiled runs take StreamPower, Thermal, \
                     LayeredThermal, Hydraulic and Hydrology)",
                )
            }
        }
    }
    Ok(())
}

fn check_stream_power(p: &StreamPowerParams, field: &str) -> Result<()> {
    let refuse = |f: &str, why: String| Err(OrogenError::invalid(format!("{field}.{f}"), why));
    if p.outlets.borders.is_empty() {
        return refuse(
            "outlets.borders",
            "a tiled run needs an open border (a closed map's outlet is a whole-map choice)".into(),
        );
    }
    Ok(())
}

/// Parses `--tiles` against the recipe's grid; errors name the flag.
pub fn layout(grid: orogen_core::Grid, spec: &str) -> Result<TileLayout> {
    TileLayout::parse(grid, spec, "--tiles").map_err(|e| match e {
        OrogenError::InvalidParameter { field, reason } if field != "--tiles" => {
            OrogenError::invalid("--tiles", format!("`{spec}`: {field}: {reason}"))
        }
        other => other,
    })
}

/// What every rank starts from.
pub struct Shared<'a> {
    pub recipe: &'a Recipe,
    pub base_dir: &'a Path,
    pub layout: &'a TileLayout,
    /// How the ranks talk, for bake.json: `threads` or `mpi`.
    pub transport: &'static str,
    /// `--merge`: rank 0 gathers the whole maps and returns the whole-map world.
    pub merge: bool,
    /// Without `--merge`, `--target terrain3d`'s region size: the ranks write the Terrain3D
    /// regions ([`write_regions`]) instead of the tiles' maps.
    pub terrain3d: Option<usize>,
    pub cancel: &'a AtomicBool,
}

/// Rank 0's result: the stages' timings (each stage's `device` says the tiling and its
/// figures hold the bytes exchanged) and, with `--merge`, the world as the whole-map run
/// leaves it after the stages.
pub struct RootOutput {
    pub world: Option<World>,
    /// With `--merge` and an `erosion` output: the start heights, whole.
    pub start: Option<Vec<f32>>,
    /// Without `--merge`: the river curves, for `rivers.json`.
    pub rivers: Option<Vec<orogen_core::rasterise::River>>,
    pub timings: Vec<StageTiming>,
    pub initial_seconds: f64,
}

/// Every rank's result: its tile's heights at the start and the end (row-major over its
/// interior), the last hydrology maps of its tile, and rank 0's part.
pub struct RankOutput {
    pub start: Vec<f32>,
    pub heights: Vec<f32>,
    pub hydrology: Option<HydrologyMaps>,
    /// The tile's layers and the world's materials (empty without strata).
    pub layers: Layers,
    pub materials: Vec<WorldMaterial>,
    /// The pipe model's water, sediment and velocity on the tile, after a `Hydraulic` stage.
    pub water: Option<TileWater>,
    pub root: Option<RootOutput>,
}

/// Tags of the reductions of noise maps' ranges (two each: the maximum's gather and
/// scatter), from this one up.
const TAG_RANGE: u32 = 300;

/// Makes the global `(lo, hi)` of every rank's `(lo, hi)`, through the root; each call takes
/// the next pair of tags.
struct Ranges<'c, C: Comm> {
    comm: &'c mut C,
    tag: u32,
}

impl<C: Comm> Ranges<'_, C> {
    fn reduce(&mut self, lo: f32, hi: f32) -> Result<(f32, f32)> {
        // Negation is exact, so the largest −lo is −(the smallest lo).
        let lo = -all_max(self.comm, ROOT, self.tag, -lo)?;
        let hi = all_max(self.comm, ROOT, self.tag + 2, hi)?;
        self.tag += 4;
        Ok((lo, hi))
    }
}

/// The stage's inputs on this rank's tile, as `StreamPowerParams::start` makes them on the
/// whole map (the heights left empty, for the caller).
fn stream_power_inputs<C: Comm>(
    p: &StreamPowerParams,
    s: &Shared,
    uplift: &[f32],
    ranges: &mut Ranges<C>,
) -> Result<TileInputs> {
    let grid = s.layout.grid();
    let window = s.layout.tile(ranges.comm.rank()).interior;
    let seed = s.recipe.seed;
    let k = p.k.resolve_window(
        grid,
        window,
        seed ^ ERODIBILITY_SEED,
        s.base_dir,
        s.cancel,
        &mut |lo, hi| ranges.reduce(lo, hi),
    )?;
    let uplift = uplift.iter().map(|u| u * p.uplift_scale).collect();
    let precipitation = match &p.precipitation {
        Some(src) => Some(src.resolve_window(
            grid,
            window,
            seed ^ PRECIPITATION_SEED,
            s.base_dir,
            s.cancel,
            &mut |lo, hi| ranges.reduce(lo, hi),
        )?),
        None => None,
    };
    Ok(TileInputs {
        heights: Vec::new(),
        k,
        uplift,
        precipitation,
    })
}

/// `schedule: CoarseToFine`: the coarse levels run whole at rank 0, exactly as the
/// whole-map stage runs them ([`StreamPowerParams::coarse_levels`]), from the tiles'
/// heights and inputs gathered there; each tile gets its part of the finest level's start
/// heights in `cut.heights`. Returns the finest level's steps, which the tiles run. Rank 0
/// holds the whole map's heights and inputs (and the refinement's maps) meanwhile.
fn coarse_levels<C: Comm>(
    comm: &mut C,
    s: &Shared,
    p: &StreamPowerParams,
    index: usize,
    field: &str,
    cut: &mut TileInputs,
) -> Result<u32> {
    let layout = s.layout;
    let heights = gather_map(comm, layout, ROOT, TAG_COARSE, &cut.heights, "heights")?;
    let k = gather_map(comm, layout, ROOT, TAG_COARSE + 1, &cut.k, "k")?;
    let uplift = gather_map(comm, layout, ROOT, TAG_COARSE + 2, &cut.uplift, "uplift")?;
    let precipitation = match &cut.precipitation {
        Some(p) => gather_map(comm, layout, ROOT, TAG_COARSE + 3, p, "precipitation")?,
        None => None,
    };
    let mut parts = Vec::new();
    if let (Some(heights), Some(k), Some(uplift)) = (heights, k, uplift) {
        let height = orogen_core::field::Heightfield::from_vec(layout.grid(), heights, "heights")?;
        let mut world = World::new(height, s.recipe.seed);
        let env = Env {
            base_dir: s.base_dir,
            field: field.to_string(),
            index,
            in_loop: false,
            devices: Devices::CPU,
        };
        let inputs = Inputs {
            k,
            uplift,
            precipitation,
        };
        let steps = p.coarse_levels(&mut world, &env, inputs)?;
        for r in 0..layout.count() {
            let tile = layout.cut(r, &world.height.data, "heights")?;
            let mut w = Writer::with_capacity(4 + 4 * tile.len());
            w.u32(steps);
            tile.iter().for_each(|&h| w.f32(h));
            parts.push(w.into_bytes());
        }
    }
    let part = comm.scatter(ROOT, TAG_COARSE + 4, parts)?;
    let mut rd = Reader::new(&part, "the finest level's start heights", ROOT);
    let steps = rd.u32()?;
    for h in cut.heights.iter_mut() {
        *h = rd.f32()?;
    }
    rd.finish()?;
    Ok(steps)
}

/// Rank 0's whole world (`--merge`) with the heights gathered from every tile; `None` on
/// the other ranks. The first call makes the world.
fn gather_world<C: Comm>(
    comm: &mut C,
    s: &Shared,
    tile: &[f32],
    world: &mut Option<World>,
) -> Result<()> {
    let layout = s.layout;
    let Some(whole) = gather_map(comm, layout, ROOT, TAG_GATHER, tile, "heights")? else {
        return Ok(());
    };
    match world.as_mut() {
        Some(w) => w.height.data = whole,
        None => {
            let height =
                orogen_core::field::Heightfield::from_vec(layout.grid(), whole, "heights")?;
            *world = Some(World::new(height, s.recipe.seed));
        }
    }
    Ok(())
}

/// `--merge` after a `Hydraulic` stage: the tiles' water, sediment and velocity, whole in
/// rank 0's world (for the `water_depth`, `sediment` and `velocity` outputs).
fn gather_water<C: Comm>(
    comm: &mut C,
    s: &Shared,
    water: &TileWater,
    world: &mut Option<World>,
) -> Result<()> {
    let l = s.layout;
    let depth = gather_map(comm, l, ROOT, TAG_WATER, &water.water, "water_depth")?;
    let sed = gather_map(comm, l, ROOT, TAG_WATER + 1, &water.sediment, "sediment")?;
    let vel: Vec<[f32; 2]> = water.velocity.iter().map(|v| v.to_array()).collect();
    let vel = gather_map(comm, l, ROOT, TAG_WATER + 2, &vel, "velocity")?;
    if let (Some(w), Some(depth), Some(sed), Some(vel)) = (world.as_mut(), depth, sed, vel) {
        w.sim.water_depth = Some(depth);
        w.sim.sediment = Some(sed);
        w.sim.velocity = Some(vel.into_iter().map(Into::into).collect());
    }
    Ok(())
}

/// `--merge` on a layered terrain: the tiles' layers, whole in rank 0's world with the
/// world's materials (for the layer maps `finish` exports). Nothing without strata.
fn gather_layers<C: Comm>(
    comm: &mut C,
    s: &Shared,
    layers: &Layers,
    materials: &[WorldMaterial],
    world: &mut Option<World>,
) -> Result<()> {
    let mut whole = Vec::with_capacity(layers.len());
    for (k, name) in layers.names().iter().enumerate() {
        let tag = TAG_LAYERS + k as u32;
        let map = gather_map(comm, s.layout, ROOT, tag, layers.thickness(k), name)?;
        whole.push((name.clone(), map));
    }
    if let Some(w) = world.as_mut() {
        if !layers.is_empty() {
            let parts = whole
                .into_iter()
                .map(|(name, m)| (name, m.unwrap_or_default()))
                .collect();
            w.layers = Layers::new(parts, s.layout.grid().len())?;
            w.materials = materials.to_vec();
        }
    }
    Ok(())
}

/// This tile's hydrology maps of `heights` (the whole-map `write_hydrology_maps` cut to the
/// tile) and its routed receivers (global indices): the tiles' router, as each rank's part
/// of one routing of the whole map.
fn tile_hydrology<C: Comm>(
    p: &HydrologyParams,
    s: &Shared,
    heights: &[f32],
    field: &str,
    ranges: &mut Ranges<C>,
) -> Result<(HydrologyMaps, Vec<u32>)> {
    p.validate(field)?;
    let (grid, rank) = (s.layout.grid(), ranges.comm.rank());
    let window = s.layout.tile(rank).interior;
    let rain = match &p.precipitation {
        Some(src) => Some(src.resolve_window(
            grid,
            window,
            s.recipe.seed ^ PRECIPITATION_SEED,
            s.base_dir,
            s.cancel,
            &mut |lo, hi| ranges.reduce(lo, hi),
        )?),
        None => None,
    };
    let comm = &mut *ranges.comm;
    let mut tile = TileStreamPower::router(
        s.layout,
        rank,
        &p.outlets,
        p.lakes,
        heights.to_vec(),
        rain,
        field,
    )?;
    let maps = tile.hydrology(comm, &p.process())?;
    Ok((maps, tile.receivers().to_vec()))
}

/// `--merge`: the tiles' hydrology maps and receivers into rank 0's whole world (its
/// heights gathered first), as `write_hydrology_maps` leaves them there.
fn merge_hydrology<C: Comm>(
    comm: &mut C,
    s: &Shared,
    heights: &[f32],
    (maps, receivers): &(HydrologyMaps, Vec<u32>),
    root: &mut Option<World>,
) -> Result<()> {
    gather_world(comm, s, heights, root)?;
    let (layout, t) = (s.layout, TAG_HYDROLOGY);
    let drainage = gather_map(comm, layout, ROOT, t, &maps.drainage, "drainage")?;
    let surface = gather_map(
        comm,
        layout,
        ROOT,
        t + 1,
        &maps.water_surface,
        "water surface",
    )?;
    let depth = gather_map(comm, layout, ROOT, t + 2, &maps.lake_depth, "lake depth")?;
    let rivers = gather_map(comm, layout, ROOT, t + 3, &maps.rivers, "rivers")?;
    let basins = gather_map(comm, layout, ROOT, t + 4, &maps.basins, "basins")?;
    let receivers = gather_map(comm, layout, ROOT, t + 5, receivers, "receivers")?;
    let (Some(world), Some(d), Some(w), Some(l), Some(r), Some(b), Some(rcv)) = (
        root.as_mut(),
        drainage,
        surface,
        depth,
        rivers,
        basins,
        receivers,
    ) else {
        return Ok(());
    };
    let grid = layout.grid();
    let scalar = |data| MapData::Scalar(orogen_core::field::ScalarMap { grid, data });
    let field = |data| orogen_core::field::Field { grid, data };
    world.maps.insert(names::DRAINAGE.into(), scalar(d));
    world.maps.insert(names::WATER_SURFACE.into(), scalar(w));
    world.maps.insert(names::LAKE_DEPTH.into(), scalar(l));
    world
        .maps
        .insert(names::RIVERS.into(), MapData::Mask(field(r)));
    world.maps.insert(
        names::BASINS.into(),
        MapData::Labels(orogen_core::field::Field { grid, data: b }),
    );
    world.stream_receivers = Some(rcv.as_slice().into());
    Ok(())
}

/// Runs every stage of `s.recipe` on this rank's tile; every rank calls it together.
pub fn run_rank<C: Comm>(comm: &mut C, s: &Shared) -> Result<RankOutput> {
    let (rank, layout) = (comm.rank(), s.layout);
    let grid = layout.grid();
    let (nx, ny) = layout.shape();
    if comm.size() != layout.count() {
        return Err(OrogenError::invalid(
            "--tiles",
            format!(
                "{nx}x{ny} is {} tiles, but there are {} ranks (one rank per tile)",
                layout.count(),
                comm.size()
            ),
        ));
    }
    s.recipe.validate()?;
    check_recipe(s.recipe, s.merge)?;
    let started = Instant::now();
    let window = layout.tile(rank).interior;
    // This tile's start world, as `runner::initial_world` makes the whole map's.
    let mut heights =
        s.recipe
            .terrain
            .build_window(grid, window, s.recipe.seed, s.base_dir, s.cancel)?;
    let mut ranges = Ranges {
        comm,
        tag: TAG_RANGE,
    };
    let mut uplift = s.recipe.uplift.resolve_window(
        grid,
        window,
        s.recipe.seed ^ UPLIFT_SEED,
        s.base_dir,
        s.cancel,
        &mut |lo, hi| ranges.reduce(lo, hi),
    )?;
    // The recipe's fade at the borders, from the whole grid's coordinates.
    if s.recipe.uplift_fade_m > 0.0 {
        let fade = border_fade_window(
            grid,
            window,
            s.recipe.border_fade(),
            s.recipe.seed ^ COAST_SEED,
            s.cancel,
        )?;
        for (u, f) in uplift.iter_mut().zip(fade) {
            *u *= f;
        }
    }
    // The strata under this tile, as `runner::initial_world` lays them under the whole
    // map (each cell's column from its position; the default top reduced over the ranks).
    let (mut layers, materials) = match &s.recipe.strata {
        Some(strata) => strata::build_window(
            &s.recipe.materials,
            strata,
            grid,
            window,
            &heights,
            s.recipe.seed,
            s.base_dir,
            s.cancel,
            &mut |lo, hi| ranges.reduce(lo, hi),
        )?,
        None => (Layers::none(), Vec::new()),
    };
    // `stages::kind::material_props`: the default material without strata.
    let props: Vec<MaterialProps> = if materials.is_empty() {
        vec![MaterialProps::default()]
    } else {
        materials.iter().map(|m| m.props.clone()).collect()
    };
    let start = heights.clone();
    let initial_seconds = started.elapsed().as_secs_f64();
    // Rank 0's whole world, with --merge only.
    let mut root: Option<World> = None;
    // The tile's last hydrology maps.
    let mut hydrology: Option<HydrologyMaps> = None;
    // Its routed receivers (global indices), for the river curves.
    let mut receivers: Option<Vec<u32>> = None;
    let mut timings = Vec::with_capacity(s.recipe.stages.len());
    // The pipe model's water on this tile, from one `Hydraulic` stage to the next.
    let mut water: Option<TileWater> = None;
    for (index, stage) in s.recipe.stages.iter().enumerate() {
        if s.cancel.load(Ordering::Relaxed) {
            return Err(OrogenError::Cancelled);
        }
        let start = Instant::now();
        let name = stage.name();
        let field = format!("stages[{index}].{name}");
        let before = ranges.comm.bytes_sent();
        let mut steps = 0u64;
        // A `Hydraulic` stage's water and sediment lost at the borders (rank 0).
        let mut lost = None;
        heights = match stage {
            Stage::StreamPower(p) => {
                p.validate(&field)?;
                let mut cut = stream_power_inputs(p, s, &uplift, &mut ranges)?;
                cut.heights = std::mem::take(&mut heights);
                let comm = &mut *ranges.comm;
                let fine_steps = match p.schedule {
                    Schedule::CoarseToFine { levels, .. } if levels > 1 => {
                        coarse_levels(comm, s, p, index, &field, &mut cut)?
                    }
                    _ => p.iterations,
                };
                let mut tile =
                    TileStreamPower::new(layout, rank, &p.outlets, &p.process(), cut, &field)?;
                // Over strata `k` follows the exposed material, as the whole-map stage's.
                if !materials.is_empty() {
                    tile.set_material_erodibility(props.iter().map(|m| m.erodibility).collect())?;
                }
                // The whole map's stability check of `dt` (`StreamPower::check_dt`), over
                // the whole map's largest `k` and water: the same refusal, before a step.
                tile.check_dt(comm, p.dt as f64)?;
                for _ in 0..fine_steps {
                    let before = p.tolerance.map(|_| tile.heights());
                    tile.step_layered(comm, p.dt as f64, &mut layers)?;
                    steps += 1;
                    // `tolerance`: the whole map's largest change of the step (a maximum,
                    // exact in any order), as the whole-map stage stops on it.
                    if let (Some(t), Some(before)) = (p.tolerance, before) {
                        let local = (before.iter().zip(tile.heights()))
                            .map(|(a, b)| (a - b).abs())
                            .fold(0.0f32, f32::max);
                        if all_max(comm, ROOT, TAG_SETTLED, local)? < t {
                            break;
                        }
                    }
                }
                tile.heights()
            }
            // Routing changes no height: the maps come below.
            Stage::Hydrology(_) => std::mem::take(&mut heights),
            Stage::Hydraulic(p) => {
                p.validate(&field)?;
                let comm = &mut *ranges.comm;
                let mut tile = TileHydraulic::new(
                    layout,
                    rank,
                    &p.process(),
                    s.recipe.seed ^ HYDRAULIC_SEED,
                    &heights,
                    water.as_ref(),
                    &field,
                )?;
                // The world's materials (`material_props`), and its layers over strata.
                tile.set_layers(std::mem::take(&mut layers), &props, &field)?;
                for _ in 0..p.iterations {
                    tile.step(comm)?;
                    steps += 1;
                }
                lost = tile.lost(comm)?;
                water = Some(tile.state());
                layers = tile.layers()?;
                tile.heights()
            }
            Stage::Thermal(p) => {
                p.validate(&field)?;
                // The talus tangents of this tile (a noise talus reads positions, a height
                // talus the stage's start heights), as the whole-map stage has them there.
                let process = p.process();
                let tangents = talus_tangents_window(
                    &process.talus,
                    grid,
                    window,
                    &heights,
                    s.recipe.seed ^ THERMAL_SEED,
                );
                let comm = &mut *ranges.comm;
                let mut tile =
                    TileThermal::new(layout, rank, &process, &heights, &tangents, &field)?;
                drop(tangents);
                let talus: Vec<f32> = props.iter().map(|m| m.talus_deg).collect();
                tile.set_layers(std::mem::take(&mut layers), &talus, &field)?;
                for _ in 0..p.iterations {
                    steps += 1;
                    if tile.step(comm)? <= p.tolerance {
                        break;
                    }
                }
                layers = tile.layers().clone();
                tile.heights()
            }
            Stage::LayeredThermal(p) => {
                p.validate(&field)?;
                let comm = &mut *ranges.comm;
                let mut tile = TileLayeredThermal::new(
                    layout,
                    rank,
                    &p.process(),
                    s.recipe.seed ^ LAYERED_THERMAL_SEED,
                    &heights,
                    &layers,
                    &props,
                    &field,
                )?;
                for _ in 0..p.iterations {
                    steps += 1;
                    if tile.step(comm)? <= p.tolerance {
                        break;
                    }
                }
                layers = tile.layers()?;
                tile.heights()
            }
            _ => {
                return Err(OrogenError::invalid(
                    field,
                    "this stage is not tiled yet (tiled runs take StreamPower, Thermal, \
                     LayeredThermal, Hydraulic and Hydrology)",
                ))
            }
        };
        // The stage's hydrology maps, per tile (a `Hydrology` stage, or a StreamPower stage's
        // `hydrology: true`).
        let hydrology_params = match stage {
            Stage::Hydrology(p) => Some(p.clone()),
            Stage::StreamPower(p) if p.hydrology => Some(p.hydrology_params()),
            _ => None,
        };
        let mut made = None;
        if let Some(p) = &hydrology_params {
            made = Some(tile_hydrology(p, s, &heights, &field, &mut ranges)?);
        }
        let comm = &mut *ranges.comm;
        let exchanged = comm.bytes_sent() - before;
        if let Some((i, value)) = heights.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(OrogenError::Numerical {
                field,
                reason: format!(
                    "the stage left {value} in `height` at cell ({}, {}): values beyond the \
                     range of 32-bit floats; reduce the size of {}",
                    window.x0 + i % window.w,
                    window.y0 + i / window.w,
                    stage.kind().drivers()
                ),
            });
        }
        // Every rank's bytes of the stage's steps, at the root.
        let all = comm.gather(ROOT, TAG_BYTES, exchanged.to_le_bytes().to_vec())?;
        if let Some(made) = made {
            if s.merge {
                merge_hydrology(comm, s, &heights, &made, &mut root)?;
            }
            hydrology = Some(made.0);
            receivers = Some(made.1);
        }
        if rank != ROOT {
            continue;
        }
        let mut per_rank = Vec::with_capacity(all.len());
        for (from, b) in all.iter().enumerate() {
            let mut r = Reader::new(b, "bytes exchanged", from);
            let lo = r.u32()? as u64;
            let hi = r.u32()? as u64;
            r.finish()?;
            per_rank.push(lo | hi << 32);
        }
        let mut figures = Default::default();
        if let (Some(_), Some(world)) = (&hydrology_params, root.as_mut()) {
            if let Some((what, cell, value)) = world.first_non_finite() {
                return Err(OrogenError::Numerical {
                    field,
                    reason: format!(
                        "the stage left {value} in `{what}` at cell ({}, {}): values beyond \
                         the range of 32-bit floats; reduce the size of {}",
                        cell % grid.width,
                        cell / grid.width,
                        stage.kind().drivers()
                    ),
                });
            }
            figures = std::mem::take(&mut world.figures);
        }
        if let Some((w, sed)) = lost {
            figures.insert("hydraulic_water_lost_m3", w);
            figures.insert("hydraulic_sediment_lost_m3", sed);
        }
        let steps_f = steps.max(1) as f64;
        let total: u64 = per_rank.iter().sum();
        figures.insert("tiles_bytes_per_step", total as f64 / steps_f);
        figures.insert(
            "tiles_bytes_per_step_rank_max",
            per_rank.iter().copied().max().unwrap_or(0) as f64 / steps_f,
        );
        timings.push(StageTiming {
            stage: name.to_string(),
            seconds: start.elapsed().as_secs_f64(),
            figures,
            device: format!(
                "cpu, tiles {nx}x{ny} over {} ({} ranks)",
                s.transport,
                comm.size()
            ),
        });
    }
    let comm = ranges.comm;
    // Issue #37: the open border's held ring lowered onto the ground inside it, as the
    // whole-map runner does when its stages are done (`stages::open_border`): per tile, its
    // own ring cells (their inner neighbours lie in the same tile).
    {
        use orogen_core::stages::open_border;
        // (With the river curves only: `river_curves: None` keeps the stages' own heights.)
        let sides = match s.recipe.river_curves {
            Some(_) => open_border::held_sides(&s.recipe.stages),
            None => [false; 4],
        };
        let rect = [window.x0, window.y0, window.w, window.h];
        let map = (grid.width, grid.height);
        open_border::settle_window(&mut heights, rect, map, sides, None);
        if let Some(maps) = hydrology.as_mut() {
            open_border::settle_maps(
                &mut maps.water_surface,
                Some(&mut maps.lake_depth),
                &heights,
                rect,
                map,
                sides,
            );
        }
    }
    // Without --merge: the river curves from the tiles' river cells, carved per tile.
    let mut rivers = None;
    if let (false, Some(p), Some(maps), Some(recv)) = (
        s.merge,
        &s.recipe.river_curves,
        hydrology.as_ref(),
        receivers.as_deref(),
    ) {
        let started = Instant::now();
        let before = comm.bytes_sent();
        let maps = TileRiverMaps {
            receivers: recv,
            drainage: &maps.drainage,
            rivers: &maps.rivers,
            surface: &maps.water_surface,
        };
        let curves = tile_river_curves(comm, layout, maps, p, p.carve, TAG_CURVES)?;
        if p.carve {
            // As `stages::river_curves::apply`: the layers lose what is cut, top first.
            let mut carved = heights.clone();
            carve_tile(layout, rank, &mut carved, &curves.near, p)?;
            orogen_core::state::TerrainMut::new(&mut heights, &mut layers).set_surface(&carved);
        }
        let exchanged = comm.bytes_sent() - before;
        let all = comm.gather(ROOT, TAG_BYTES, exchanged.to_le_bytes().to_vec())?;
        if let Some(curves_all) = curves.all {
            let total: u64 = all
                .iter()
                .map(|b| u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])))
                .sum();
            let mut figures = std::collections::BTreeMap::new();
            figures.insert("tiles_river_cell_bytes", curves.cell_bytes as f64);
            figures.insert("tiles_river_curve_bytes", curves.curve_bytes as f64);
            figures.insert("tiles_bytes", total as f64);
            timings.push(StageTiming {
                stage: "river curves".into(),
                seconds: started.elapsed().as_secs_f64(),
                figures,
                device: format!(
                    "cpu, tiles {nx}x{ny} over {} ({} ranks)",
                    s.transport,
                    comm.size()
                ),
            });
            rivers = Some(curves_all);
        }
    }
    let mut start_whole = None;
    if s.merge {
        gather_world(comm, s, &heights, &mut root)?;
        if let Some(water) = &water {
            gather_water(comm, s, water, &mut root)?;
        }
        gather_layers(comm, s, &layers, &materials, &mut root)?;
        // The start heights, whole at rank 0, for the erosion map (made after the river
        // curves, which may carve).
        if s.recipe.outputs.iter().any(|o| o == "erosion") {
            start_whole = gather_map(comm, layout, ROOT, TAG_GATHER, &start, "start heights")?;
        }
    }
    Ok(RankOutput {
        start,
        heights,
        hydrology,
        layers,
        materials,
        water,
        root: (rank == ROOT).then(|| RootOutput {
            world: root.take().map(|mut w| {
                w.figures.clear();
                w
            }),
            start: start_whole,
            rivers,
            timings,
            initial_seconds,
        }),
    })
}

/// `--merge`: the whole-map runner's last steps over rank 0's world (`run_recipe_on` after
/// its stages): the `initial terrain` timing first, the river curves, the requested state
/// outputs and the `erosion` map against the start heights.
pub fn finish(recipe: &Recipe, out: RootOutput) -> Result<orogen_core::runner::RunOutput> {
    let RootOutput {
        world,
        start,
        timings,
        initial_seconds,
        ..
    } = out;
    let mut world = world.ok_or_else(|| {
        OrogenError::invalid("--merge", "rank 0 has no whole map to write".to_string())
    })?;
    let mut all = vec![StageTiming {
        stage: "initial terrain".into(),
        seconds: initial_seconds,
        figures: Default::default(),
        device: "cpu".into(),
    }];
    all.extend(timings);
    // The ring was lowered per tile; the hydrology maps rank 0 gathered stage by stage are
    // put back on it here, as the whole-map runner's (issue #37).
    if recipe.river_curves.is_some() {
        orogen_core::stages::open_border::settle(
            &mut world,
            orogen_core::stages::open_border::held_sides(&recipe.stages),
        )?;
    }
    if let Some(p) = &recipe.river_curves {
        // Issue #37's river curves, drawn by rank 0 over the whole eroded map.
        let start = Instant::now();
        if orogen_core::stages::river_curves::apply(&mut world, p)? {
            all.push(StageTiming {
                stage: "river curves".into(),
                seconds: start.elapsed().as_secs_f64(),
                figures: Default::default(),
                device: "cpu".into(),
            });
        }
    }
    for (i, name) in recipe.outputs.iter().enumerate() {
        if name != "erosion" {
            world.export_state(name, &format!("outputs[{i}]"))?;
        }
    }
    if let Some(start) = start {
        let grid = world.grid();
        let data = world
            .height
            .data
            .iter()
            .zip(&start)
            .map(|(a, b)| a - b)
            .collect();
        world.maps.insert(
            orogen_core::world::names::EROSION.into(),
            orogen_core::world::MapData::Scalar(orogen_core::field::ScalarMap { grid, data }),
        );
    }
    world.export_layers();
    Ok(orogen_core::runner::RunOutput {
        world,
        timings: all,
    })
}

/// Tags of the tiled writing.
const TAG_STAGED: u32 = 210;
const TAG_ENTRY: u32 = 211;
const TAG_RANGE_OUT: u32 = 220;

/// Without `--merge`: every rank writes its own tiles into the bake's one staging folder
/// (made by rank 0, its path sent to every rank: the ranks need one file system), then
/// rank 0 writes `bake.json` and puts the folder in place of `out_dir`, so the folder is
/// all-new or all-old: a rank that fails stops the run before the swap, and its staging
/// folder is removed by the next bake into `out_dir` (`bake::folder::recover`). Every rank
/// calls it together; rank 0 returns the paths written.
pub fn write_tiles<C: Comm>(
    comm: &mut C,
    s: &Shared,
    out: RankOutput,
    out_dir: &Path,
    recipe_path: Option<&Path>,
) -> Result<Vec<PathBuf>> {
    let (rank, layout) = (comm.rank(), s.layout);
    let tile = layout.tile(rank);
    // The heights' range over the whole map, for bake.json.
    let (lo, hi) = orogen_core::field::finite_min_max(&out.heights);
    let lo = -all_max(comm, ROOT, TAG_RANGE_OUT, -lo)?;
    let hi = all_max(comm, ROOT, TAG_RANGE_OUT + 2, hi)?;
    let staged = if rank == ROOT {
        Some(orogen_core::bake::folder::stage(out_dir)?)
    } else {
        None
    };
    let result = match s.terrain3d {
        Some(r) => write_regions(comm, s, &out, staged.as_deref(), out_dir, tile, r, (lo, hi)),
        None => write_staged(comm, s, &out, staged.as_deref(), out_dir, tile),
    };
    let (entries, whole_maps) = match result {
        Ok(e) => e,
        Err(e) => {
            if let Some(dir) = &staged {
                let _ = std::fs::remove_dir_all(dir);
            }
            return Err(e);
        }
    };
    let (Some(staged), Some(root)) = (staged, out.root) else {
        return Ok(Vec::new());
    };
    let mut timings = vec![StageTiming {
        stage: "initial terrain".into(),
        seconds: root.initial_seconds,
        figures: Default::default(),
        device: format!("cpu, tiles {}x{}", layout.shape().0, layout.shape().1),
    }];
    timings.extend(root.timings);
    let mut files: Vec<PathBuf> = entries
        .iter()
        .flat_map(|e| e.files.iter().map(|f| out_dir.join(f)))
        .collect();
    // The whole maps rank 0 wrote beside the tiles (`strata_column`), by map name; for
    // Terrain3D, its README.txt and export.json.
    files.extend(whole_maps.iter().map(|f| out_dir.join(f)));
    let whole_maps: Vec<&str> = match s.terrain3d {
        Some(_) => Vec::new(),
        None => whole_maps
            .iter()
            .map(|f| f.rsplit_once('.').map_or(f.as_str(), |(stem, _)| stem))
            .collect(),
    };
    // The river curves, drawn by rank 0 (`rivers.json`, as the whole bake writes it).
    let mut json = Ok(());
    // Not beside Terrain3D regions: the whole-map export has no rivers.json.
    let rivers = root.rivers.as_ref().filter(|_| s.terrain3d.is_none());
    if let Some(rivers) = rivers {
        let shown = out_dir.join(orogen_core::bake::RIVERS_JSON);
        json = orogen_core::bake::rivers_json(rivers)
            .map_err(|e| OrogenError::bad_file(&shown, format!("cannot build rivers.json: {e}")))
            .and_then(|mut text| {
                text.push('\n');
                std::fs::write(staged.join(orogen_core::bake::RIVERS_JSON), text)
                    .map_err(|e| OrogenError::io("cannot write", &shown, e))
            });
        files.push(shown);
    }
    let json = json.and_then(|_| {
        orogen_core::bake::tiled::write_tiled_bake_json(
            &staged,
            out_dir,
            s.recipe,
            layout.grid(),
            (lo, hi),
            &timings,
            recipe_path,
            layout.shape(),
            &entries,
            &whole_maps,
            rivers.is_some(),
        )
    });
    match json.and_then(|j| orogen_core::bake::folder::commit(&staged, out_dir).map(|_| j)) {
        Ok(j) => files.push(j),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staged);
            return Err(e);
        }
    }
    Ok(files)
}

/// The collective part of [`write_tiles`]: the staging folder's path to every rank, each
/// rank's tile files, their entries at rank 0 (in rank order).
fn write_staged<C: Comm>(
    comm: &mut C,
    s: &Shared,
    out: &RankOutput,
    staged: Option<&Path>,
    out_dir: &Path,
    tile: orogen_core::tiles::Tile,
) -> Result<(Vec<TileEntry>, Vec<String>)> {
    let parts = match staged {
        Some(p) => vec![p.to_string_lossy().as_bytes().to_vec(); comm.size()],
        None => Vec::new(),
    };
    let path = comm.scatter(ROOT, TAG_STAGED, parts)?;
    let path = PathBuf::from(String::from_utf8_lossy(&path).into_owned());
    let erosion: Option<Vec<f32>> = s.recipe.outputs.iter().any(|o| o == "erosion").then(|| {
        out.heights
            .iter()
            .zip(&out.start)
            .map(|(a, b)| a - b)
            .collect()
    });
    let mut maps: Vec<(&str, TileMap)> = vec![("height", TileMap::Scalar(&out.heights))];
    if let Some(e) = &erosion {
        maps.push(("erosion", TileMap::Scalar(e)));
    }
    if let Some(h) = &out.hydrology {
        maps.extend([
            (names::DRAINAGE, TileMap::Scalar(&h.drainage)),
            (names::WATER_SURFACE, TileMap::Scalar(&h.water_surface)),
            (names::LAKE_DEPTH, TileMap::Scalar(&h.lake_depth)),
            (names::RIVERS, TileMap::Mask(&h.rivers)),
            (names::BASINS, TileMap::Labels(&h.basins)),
        ]);
    }
    // The recipe's outputs of the pipe model's state, per cell (as `World::export_state`).
    let velocity: Option<Vec<[f32; 2]>> = out
        .water
        .as_ref()
        .map(|w| w.velocity.iter().map(|v| v.to_array()).collect());
    for (i, name) in s.recipe.outputs.iter().enumerate() {
        let map = match (name.as_str(), &out.water, &velocity) {
            ("erosion", _, _) => continue,
            ("water_depth", Some(w), _) => TileMap::Scalar(&w.water),
            ("sediment", Some(w), _) => TileMap::Scalar(&w.sediment),
            ("velocity", _, Some(v)) => TileMap::Vector(v),
            _ => {
                return Err(OrogenError::invalid(
                    format!("outputs[{i}]"),
                    format!("`{name}` is not produced by any stage of this recipe"),
                ))
            }
        };
        maps.push((name.as_str(), map));
    }
    // A layered world's maps over the tile, with the whole map's counts and beds.
    let layer_world = layer_maps(comm, s, out, tile)?;
    let mut whole_maps = Vec::new();
    if let Some(world) = &layer_world {
        for (name, map) in &world.maps {
            if name == names::STRATA_COLUMN {
                // One row for the whole map: rank 0 writes it.
                if staged.is_some() {
                    let file =
                        orogen_core::bake::tiled::write_whole_map(&path, out_dir, name, map)?;
                    whole_maps.push(file);
                }
                continue;
            }
            maps.push((name.as_str(), orogen_core::bake::tiled::tile_map(map)));
        }
    }
    let entry = orogen_core::bake::tiled::write_tile_maps(
        &path,
        out_dir,
        s.layout.grid(),
        tile.interior,
        (tile.row, tile.col),
        &maps,
    )?;
    // Each rank's file names (its place is known from its rank).
    let entries = gather_entries(comm, s.layout, &entry.files)?;
    Ok((entries, whole_maps))
}

/// Tags of the Terrain3D regions: the drainage's largest value (2 tags), the regions'
/// cells.
const TAG_REGIONS: u32 = 290;

/// One rank's cells of `part` (whole-map cells inside its tile `rect`) of the maps a
/// Terrain3D region reads: per cell the height, then the drainage, the sediment depth and
/// the colour where the world has them.
fn pack_part(
    maps: &RegionMaps,
    rect: orogen_core::field::Rect,
    part: orogen_core::field::Rect,
) -> Vec<u8> {
    let mut w = Writer::with_capacity(part.len() * 16);
    for y in part.y0..part.y0 + part.h {
        for x in part.x0..part.x0 + part.w {
            let i = (y - rect.y0) * rect.w + (x - rect.x0);
            w.f32(maps.heights[i]);
            if let Some(d) = maps.drainage {
                w.f32(d[i]);
            }
            if let Some(d) = maps.sediment {
                w.f32(d[i]);
            }
            if let Some(c) = maps.colour {
                w.u32(u32::from_le_bytes(c[i]));
            }
        }
    }
    w.into_bytes()
}

/// A tile's maps a Terrain3D region reads.
struct RegionMaps<'a> {
    heights: &'a [f32],
    drainage: Option<&'a [f32]>,
    sediment: Option<&'a [f32]>,
    colour: Option<&'a [[u8; 4]]>,
}

/// Without `--merge`, `--target terrain3d` (issue #41): each Terrain3D region is written by
/// the rank owning its first cell; every rank sends it the cells of the region's window
/// (the region and the ground weights' one-cell ring, `region_window`) inside its tile, so
/// no rank holds more than its tile and the regions it writes. The files are the
/// whole-map export's bytes (`export_terrain3d::write_region`, the writer the whole-map
/// export uses); rank 0 writes `README.txt` and `export.json`. Every rank calls it
/// together; returns each rank's region files (as tile entries) and rank 0's other files.
#[allow(clippy::too_many_arguments)]
fn write_regions<C: Comm>(
    comm: &mut C,
    s: &Shared,
    out: &RankOutput,
    staged: Option<&Path>,
    out_dir: &Path,
    tile: orogen_core::tiles::Tile,
    region_size: usize,
    lo_hi: (f32, f32),
) -> Result<(Vec<TileEntry>, Vec<String>)> {
    use orogen_core::bake::export_terrain3d as t3d;
    use orogen_core::bake::ground_weights::{drainage_log_max, Ground, GroundInputs};
    let parts = match staged {
        Some(p) => vec![p.to_string_lossy().as_bytes().to_vec(); comm.size()],
        None => Vec::new(),
    };
    let path = comm.scatter(ROOT, TAG_STAGED, parts)?;
    let path = PathBuf::from(String::from_utf8_lossy(&path).into_owned());
    let (grid, rank) = (s.layout.grid(), comm.rank());
    let lay = t3d::layout(grid, region_size)?;
    let layer_world = layer_maps(comm, s, out, tile)?;
    let layer_map = |name: &str| layer_world.as_ref().and_then(|w| w.maps.get(name));
    let maps = RegionMaps {
        heights: &out.heights,
        drainage: out.hydrology.as_ref().map(|h| h.drainage.as_slice()),
        sediment: match layer_map(names::SEDIMENT_DEPTH) {
            Some(MapData::Scalar(m)) => Some(m.data.as_slice()),
            _ => None,
        },
        colour: match layer_map(names::SURFACE_COLOUR) {
            Some(MapData::Rgba(m)) => Some(m.data.as_slice()),
            _ => None,
        },
    };
    // The wetness's scale: the whole map's largest drainage.
    let log_max = match maps.drainage {
        Some(d) => {
            let top = all_max(
                comm,
                ROOT,
                TAG_REGIONS,
                orogen_core::field::finite_min_max(d).1,
            )?;
            let one = [top];
            let inputs = GroundInputs {
                grid: orogen_core::Grid::new(1, 1, grid.cell_size)?,
                heights: &one,
                drainage: Some(&one),
                sediment: None,
            };
            drainage_log_max(&inputs)
        }
        None => 1.0,
    };
    let r = region_size;
    let regions: Vec<(usize, usize)> = (0..lay.tiles.1)
        .flat_map(|z| (0..lay.tiles.0).map(move |x| (x, z)))
        .collect();
    let owner = |(x, z): (usize, usize)| s.layout.rank_of(x * r, z * r);
    // Every rank's cells of every region's window to the region's owner (itself too).
    for &at in &regions {
        let win = t3d::region_window(grid, lay, at);
        if let Some(part) = win.intersect(&tile.interior) {
            comm.send(
                owner(at),
                TAG_REGIONS + 2,
                pack_part(&maps, tile.interior, part),
            )?;
        }
    }
    let ground = Ground::default();
    let mut written = Vec::new();
    for &at in regions.iter().filter(|&&at| owner(at) == rank) {
        let win = t3d::region_window(grid, lay, at);
        let n = win.len();
        let mut heights = vec![0.0f32; n];
        let mut drainage = maps.drainage.map(|_| vec![0.0f32; n]);
        let mut sediment = maps.sediment.map(|_| vec![0.0f32; n]);
        let mut colour = maps.colour.map(|_| vec![[0u8; 4]; n]);
        for from in 0..comm.size() {
            let Some(part) = win.intersect(&s.layout.tile(from).interior) else {
                continue;
            };
            let data = comm.recv(from, TAG_REGIONS + 2)?;
            let mut rd = Reader::new(&data, "Terrain3D region cells", from);
            for y in part.y0..part.y0 + part.h {
                for x in part.x0..part.x0 + part.w {
                    let i = (y - win.y0) * win.w + (x - win.x0);
                    heights[i] = rd.f32()?;
                    if let Some(d) = &mut drainage {
                        d[i] = rd.f32()?;
                    }
                    if let Some(d) = &mut sediment {
                        d[i] = rd.f32()?;
                    }
                    if let Some(c) = &mut colour {
                        c[i] = rd.u32()?.to_le_bytes();
                    }
                }
            }
            rd.finish()?;
        }
        let window = t3d::RegionWindow {
            rect: win,
            heights: &heights,
            drainage: drainage.as_deref(),
            sediment: sediment.as_deref(),
            colour: colour.as_deref(),
        };
        written.extend(t3d::write_region(
            &path, out_dir, grid, r, at, window, &ground, log_max,
        )?);
    }
    let mut tail = Vec::new();
    if staged.is_some() {
        tail = t3d::write_tail(&path, out_dir, grid, r, lo_hi, maps.colour.is_some())?;
    }
    let entries = gather_entries(comm, s.layout, &written)?;
    Ok((entries, tail))
}

/// Gathers at rank 0 each rank's written file names (`files`) as `bake.json`'s tile entries,
/// placed by their rank's tile (other ranks get theirs only).
fn gather_entries<C: Comm>(
    comm: &mut C,
    layout: &TileLayout,
    files: &[String],
) -> Result<Vec<TileEntry>> {
    let all = comm.gather(ROOT, TAG_ENTRY, files.join("\n").into_bytes())?;
    Ok(all
        .iter()
        .enumerate()
        .map(|(r, names)| {
            let t = layout.tile(r);
            TileEntry {
                row: t.row,
                col: t.col,
                x0: t.interior.x0,
                y0: t.interior.y0,
                width: t.interior.w,
                height: t.interior.h,
                files: String::from_utf8_lossy(names)
                    .split('\n')
                    .filter(|n| !n.is_empty())
                    .map(String::from)
                    .collect(),
            }
        })
        .collect())
}

/// Tags of the layer maps' reductions: the totals' gather and scatter, the beds' check.
const TAG_LAYER_MAPS: u32 = 280;

/// A layered world's maps over this rank's tile (`World::export_layers_with` on a world of
/// the tile's cells), with the whole map's totals: the cells exposing each material summed
/// over the ranks (for `splat`'s four materials), each bed's full thickness the largest
/// over the ranks, and whether the beds are whole everywhere (for `strata_position` and
/// `strata_column`). `None` without strata. Every rank calls it together.
fn layer_maps<C: Comm>(
    comm: &mut C,
    s: &Shared,
    out: &RankOutput,
    tile: orogen_core::tiles::Tile,
) -> Result<Option<World>> {
    if s.recipe.strata.is_none() {
        return Ok(None);
    }
    let grid = s.layout.grid();
    let rect = tile.interior;
    let tile_grid = orogen_core::Grid::with_cells(rect.w, rect.h, grid.dx(), grid.dy())?;
    let height =
        orogen_core::field::Heightfield::from_vec(tile_grid, out.heights.clone(), "heights")?;
    let mut world = World::new(height, s.recipe.seed);
    world.layers = out.layers.clone();
    world.materials = out.materials.clone();
    let mine = world.layer_totals();
    let mut w = Writer::with_capacity(8 * mine.exposed.len() + 4 * mine.full.len());
    mine.exposed.iter().for_each(|&c| {
        w.u32(c as u32);
        w.u32((c >> 32) as u32);
    });
    mine.full.iter().for_each(|&f| w.f32(f));
    let parts = comm.gather(ROOT, TAG_LAYER_MAPS, w.into_bytes())?;
    let mut sums = Vec::new();
    if !parts.is_empty() {
        let mut total = orogen_core::world::LayerTotals {
            exposed: vec![0; mine.exposed.len()],
            full: vec![0.0; mine.full.len()],
        };
        for (from, part) in parts.iter().enumerate() {
            let mut r = Reader::new(part, "layer totals", from);
            for c in total.exposed.iter_mut() {
                let (lo, hi) = (r.u32()? as u64, r.u32()? as u64);
                *c += lo | hi << 32;
            }
            for f in total.full.iter_mut() {
                *f = f.max(r.f32()?);
            }
            r.finish()?;
        }
        let mut w = Writer::with_capacity(0);
        total.exposed.iter().for_each(|&c| {
            w.u32(c as u32);
            w.u32((c >> 32) as u32);
        });
        total.full.iter().for_each(|&f| w.f32(f));
        sums = vec![w.into_bytes(); comm.size()];
    }
    let part = comm.scatter(ROOT, TAG_LAYER_MAPS + 1, sums)?;
    let mut r = Reader::new(&part, "layer totals", ROOT);
    let mut totals = mine;
    for c in totals.exposed.iter_mut() {
        let (lo, hi) = (r.u32()? as u64, r.u32()? as u64);
        *c = lo | hi << 32;
    }
    for f in totals.full.iter_mut() {
        *f = r.f32()?;
    }
    r.finish()?;
    let broken = f32::from(u8::from(!world.beds_whole(&totals.full)));
    let whole = all_max(comm, ROOT, TAG_LAYER_MAPS + 2, broken)? == 0.0;
    world.export_layers_with(&totals, whole);
    Ok(Some(world))
}
