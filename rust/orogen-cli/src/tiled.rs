//! `orogen bake --tiles NxM`: a recipe run tiled (issue #41), one rank per tile, over
//! threads ([`orogen_core::tiles::ThreadComm`]) or MPI ranks (`mpi_comm`, the `mpi`
//! feature), giving the whole-map bake's bytes.
//!
//! What tiles is what `orogen_core::tiles` tiles: `StreamPower` (any `lakes` and `n`,
//! `schedule: Fine`, no `tolerance`, an open border) and `Thermal` (any talus but
//! `Material`), and `Hydrology` (routing reads the whole map and changes no height, so rank
//! 0 writes its maps from the gathered heights, as the whole-map stage does). Anything
//! else is refused before any work, naming the stage and field.
//!
//! The start world (terrain, uplift, `k`, precipitation, a thermal stage's talus tangents)
//! is computed whole on every rank and cut to its tile; after each stage the tiles'
//! heights are gathered at rank 0 and sent whole to every rank. So each rank holds a few
//! whole maps: fine at the sizes one machine bakes, not yet the worlds bigger than
//! one machine. Rank 0 writes the hydrology maps a `StreamPower` stage ends with (whole
//! map, from the gathered heights), the river curves and the outputs.

use std::path::Path;
use std::time::Instant;

use orogen_core::eroders::stream_power::Inputs;
use orogen_core::eroders::thermal::{TalusAngle, Thermal};
use orogen_core::neighbourhood::RasterGrid;
use orogen_core::recipe::Device;
use orogen_core::runner::StageTiming;
use orogen_core::stages::domain::Domain;
use orogen_core::stages::hydrology::write_hydrology_maps;
use orogen_core::stages::source::{ERODIBILITY_SEED, PRECIPITATION_SEED, THERMAL_SEED};
use orogen_core::stages::stream_power::{Schedule, StreamPowerParams};
use orogen_core::stages::{Stage, StageKind};
use orogen_core::tiles::comm::{Reader, Writer};
use orogen_core::tiles::{
    gather_map, Comm, TileInputs, TileLayout, TileStreamPower, TileThermal, ROOT,
};
use orogen_core::world::World;
use orogen_core::{OrogenError, Recipe, Result};

/// Message tags of the driver (the tile processes use tags below 100).
const TAG_GATHER: u32 = 200;
const TAG_WHOLE: u32 = 201;
const TAG_BYTES: u32 = 202;

/// Refuses, before any work, a recipe the tiles cannot run: the error names the stage and
/// field (`stages[0].StreamPower.tolerance: is not tiled yet`).
pub fn check_recipe(recipe: &Recipe) -> Result<()> {
    let refuse = |field: String, why: &str| Err(OrogenError::invalid(field, why.to_string()));
    if matches!(recipe.domain, Domain::Graph(_)) {
        return refuse("domain".into(), "Graph is not tiled (tiled runs take Grid)");
    }
    if recipe.planet_params().is_some() {
        return refuse("terrain".into(), "a planet is not tiled");
    }
    if recipe.strata.is_some() {
        return refuse("strata".into(), "layered rock is not tiled yet");
    }
    if recipe.device != Device::Cpu {
        return refuse("device".into(), "tiled runs are on the CPU (device: Cpu)");
    }
    for (i, stage) in recipe.stages.iter().enumerate() {
        let field = format!("stages[{i}].{}", stage.name());
        match stage {
            Stage::StreamPower(p) => check_stream_power(p, &field)?,
            Stage::Thermal(p) => {
                if p.talus == TalusAngle::Material {
                    return refuse(format!("{field}.talus"), "Material is not tiled yet");
                }
            }
            Stage::Hydrology(p) => p.validate(&field)?,
            _ => {
                return refuse(
                    field,
                    "this stage is not tiled yet (tiled runs take StreamPower, Thermal and \
                     Hydrology)",
                )
            }
        }
    }
    Ok(())
}

fn check_stream_power(p: &StreamPowerParams, field: &str) -> Result<()> {
    let refuse = |f: &str, why: String| Err(OrogenError::invalid(format!("{field}.{f}"), why));
    if matches!(p.schedule, Schedule::CoarseToFine { levels, .. } if levels > 1) {
        return refuse("schedule", "CoarseToFine is not tiled yet".into());
    }
    if p.tolerance.is_some() {
        return refuse(
            "tolerance",
            "is not tiled yet (tiled runs take none)".into(),
        );
    }
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
    /// The initial world (terrain and uplift), whole.
    pub world: &'a World,
    /// How the ranks talk, for bake.json: `threads` or `mpi`.
    pub transport: &'static str,
}

/// Rank 0's result: the world as the whole-map run leaves it after the stages, and the
/// stages' timings (each stage's `device` says the tiling and its figures hold the bytes
/// exchanged).
pub struct RootOutput {
    pub world: World,
    pub timings: Vec<StageTiming>,
}

/// The stage's inputs on the whole map, as `StreamPowerParams::start` makes them.
fn stream_power_inputs(p: &StreamPowerParams, world: &World, base_dir: &Path) -> Result<Inputs> {
    let grid = world.grid();
    let k = world.at_nodes(p.k.resolve(grid, world.seed ^ ERODIBILITY_SEED, base_dir)?);
    let uplift = world
        .node_uplift()
        .iter()
        .map(|u| u * p.uplift_scale)
        .collect();
    let precipitation = match &p.precipitation {
        Some(src) => {
            Some(world.at_nodes(src.resolve(grid, world.seed ^ PRECIPITATION_SEED, base_dir)?))
        }
        None => None,
    };
    Ok(Inputs {
        k,
        uplift,
        precipitation,
    })
}

fn put_f32s(values: &[f32]) -> Vec<u8> {
    let mut w = Writer::with_capacity(std::mem::size_of_val(values));
    values.iter().for_each(|&v| w.f32(v));
    w.into_bytes()
}

/// Runs every stage of `s.recipe` on this rank's tile; every rank calls it together. Rank
/// 0 returns the world and timings, the others `None`.
pub fn run_rank<C: Comm>(comm: &mut C, s: &Shared) -> Result<Option<RootOutput>> {
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
    check_recipe(s.recipe)?;
    if s.world.nodata_mask().is_some() {
        return Err(OrogenError::invalid(
            "terrain",
            "a terrain with nodata cells is not tiled yet",
        ));
    }
    let mut heights = s.world.height.data.clone();
    let mut root = (rank == ROOT).then(|| {
        let mut w = s.world.clone();
        w.figures.clear();
        w
    });
    let mut timings = Vec::with_capacity(s.recipe.stages.len());
    for (index, stage) in s.recipe.stages.iter().enumerate() {
        let start = Instant::now();
        let name = stage.name();
        let field = format!("stages[{index}].{name}");
        if let Stage::Hydrology(p) = stage {
            // Routing reads the whole map and changes no height: rank 0 writes the maps
            // from the heights it gathered after the last stage, exactly as the whole-map
            // stage does; the other ranks have nothing to do.
            if let Some(world) = root.as_mut() {
                write_hydrology_maps(world, p, s.base_dir, &field)?;
                timings.push(StageTiming {
                    stage: name.to_string(),
                    seconds: start.elapsed().as_secs_f64(),
                    figures: std::mem::take(&mut world.figures),
                    device: "cpu, whole map on rank 0".into(),
                });
            }
            continue;
        }
        let before = comm.bytes_sent();
        let mut steps = 0u64;
        let tile_heights = match stage {
            Stage::StreamPower(p) => {
                p.validate(&field)?;
                let inputs = stream_power_inputs(p, s.world, s.base_dir)?;
                let cut = TileInputs::cut(layout, rank, &heights, &inputs)?;
                drop(inputs);
                let mut tile =
                    TileStreamPower::new(layout, rank, &p.outlets, &p.process(), cut, &field)?;
                for _ in 0..p.iterations {
                    tile.step(comm, p.dt as f64)?;
                    steps += 1;
                }
                tile.heights()
            }
            Stage::Thermal(p) => {
                p.validate(&field)?;
                // The talus tangents over the whole map (a noise talus reads positions, a
                // height talus the stage's start heights), as the whole-map stage has them.
                let whole = Thermal::new(
                    RasterGrid::new(grid, &[]),
                    p.process(),
                    s.world.seed ^ THERMAL_SEED,
                    &heights,
                    &field,
                )?;
                let tangents = layout.cut(rank, whole.tangents(), "talus tangents")?;
                drop(whole);
                let own = layout.cut(rank, &heights, "heights")?;
                let mut tile =
                    TileThermal::new(layout, rank, &p.process(), &own, &tangents, &field)?;
                for _ in 0..p.iterations {
                    steps += 1;
                    if tile.step(comm)? <= p.tolerance {
                        break;
                    }
                }
                tile.heights()
            }
            _ => {
                return Err(OrogenError::invalid(
                    field,
                    "this stage is not tiled yet (tiled runs take StreamPower, Thermal and \
                     Hydrology)",
                ))
            }
        };
        let exchanged = comm.bytes_sent() - before;
        // The stage's heights, whole, on every rank (the next stage cuts its inputs from
        // whole maps).
        let whole = gather_map(comm, layout, ROOT, TAG_GATHER, &tile_heights, "heights")?;
        let parts = match &whole {
            Some(h) => vec![put_f32s(h); comm.size()],
            None => Vec::new(),
        };
        let bytes = comm.scatter(ROOT, TAG_WHOLE, parts)?;
        let mut r = Reader::new(&bytes, "whole heights", ROOT);
        for h in heights.iter_mut() {
            *h = r.f32()?;
        }
        r.finish()?;
        // Every rank's bytes of the stage's steps, at the root.
        let all = comm.gather(ROOT, TAG_BYTES, exchanged.to_le_bytes().to_vec())?;
        let Some(world) = root.as_mut() else {
            continue;
        };
        let mut per_rank = Vec::with_capacity(all.len());
        for (from, b) in all.iter().enumerate() {
            let mut r = Reader::new(b, "bytes exchanged", from);
            let lo = r.u32()? as u64;
            let hi = r.u32()? as u64;
            r.finish()?;
            per_rank.push(lo | hi << 32);
        }
        world.height.data.copy_from_slice(&heights);
        if let Stage::StreamPower(p) = stage {
            if p.hydrology {
                write_hydrology_maps(world, &p.hydrology_params(), s.base_dir, &field)?;
            }
        }
        if let Some((what, cell, value)) = world.first_non_finite() {
            return Err(OrogenError::Numerical {
                field,
                reason: format!(
                    "the stage left {value} in `{what}` at cell ({}, {}): values beyond the \
                     range of 32-bit floats; reduce the size of {}",
                    cell % grid.width,
                    cell / grid.width,
                    stage.kind().drivers()
                ),
            });
        }
        let mut figures = std::mem::take(&mut world.figures);
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
    Ok(root.map(|world| RootOutput { world, timings }))
}

/// The whole-map runner's last steps over rank 0's world (`run_recipe_on` after its
/// stages): the `initial terrain` timing first, the requested state outputs and the
/// `erosion` map against the start heights.
pub fn finish(
    recipe: &Recipe,
    out: RootOutput,
    start_heights: &[f32],
    initial_seconds: f64,
) -> Result<orogen_core::runner::RunOutput> {
    let RootOutput { mut world, timings } = out;
    let mut all = vec![StageTiming {
        stage: "initial terrain".into(),
        seconds: initial_seconds,
        figures: Default::default(),
        device: "cpu".into(),
    }];
    all.extend(timings);
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
    if recipe.outputs.iter().any(|o| o == "erosion") {
        let grid = world.grid();
        let data = world
            .height
            .data
            .iter()
            .zip(start_heights)
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
