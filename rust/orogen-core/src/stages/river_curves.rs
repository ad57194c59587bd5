//! A grid world's rivers as smooth curves (issue #37, the recipe's `river_curves`): what
//! the bake writes as `rivers.json` and carves into the heights when the stages are done,
//! and what a renderer draws. The curves follow the routing of the world's hydrology maps
//! (see [`crate::rasterise::grid_rivers`]).
//!
//! For Godot: [`curves`] gives a world's river curves (`Vec<River>`, points in metres
//! from the first cell's centre, x east, y south, z the bed), and [`channel`] rasterises
//! them into the per-cell signed "half width minus distance" field, metres, that a shader
//! filters bilinearly and cuts at 0 to draw water with smooth banks.

use crate::error::Result;
use crate::field::Grid;
use crate::rasterise::grid_rivers::{self, RiverCurveParams};
use crate::rasterise::River;
use crate::world::{names, MapData, World};

/// The river curves of a grid world's hydrology maps (`drainage`, `rivers`,
/// `water_surface`) and stream tree ([`World::stream_receivers`]), or `None` when it has
/// none of them on its grid (no `Hydrology` stage nor `StreamPower(hydrology: true)` ran, or
/// a Graph domain, whose rivers are [`World::rivers`] already).
pub fn curves(world: &World, p: &RiverCurveParams) -> Result<Option<Vec<River>>> {
    let grid = world.grid();
    let scalar = |name: &str| match world.maps.get(name) {
        Some(MapData::Scalar(m)) if m.grid == grid => Some(&m.data[..]),
        _ => None,
    };
    let (Some(receivers), Some(drainage), Some(MapData::Mask(rivers))) = (
        world.stream_receivers.as_deref(),
        scalar(names::DRAINAGE),
        world.maps.get(names::RIVERS),
    ) else {
        return Ok(None);
    };
    if world.graph.is_some() || rivers.grid != grid || receivers.len() != grid.len() {
        return Ok(None);
    }
    let surface = scalar(names::WATER_SURFACE).unwrap_or(&world.height.data);
    grid_rivers::grid_rivers(grid, receivers, drainage, &rivers.data, surface, p).map(Some)
}

/// The channel field of `rivers` on `grid` (see [`grid_rivers::channel_field`]): per
/// cell, row by row, the floor's half width at the nearest point of the curves minus the
/// distance to it, metres; positive inside a channel, at least minus one cell.
pub fn channel(grid: Grid, rivers: &[River], p: &RiverCurveParams) -> Result<Vec<f32>> {
    grid_rivers::channel_field(grid, rivers, p)
}

/// When the stages are done, on a grid world with hydrology maps: sets [`World::rivers`]
/// to its [`curves`] and, with `p.carve`, carves them into the heights (layers lose what
/// is cut, top first; nodata cells are kept). The hydrology maps stay those of the terrain
/// before the carve. Returns false, changing nothing, where there is nothing to do (a
/// Graph domain, or no hydrology maps).
pub fn apply(world: &mut World, p: &RiverCurveParams) -> Result<bool> {
    if world.rivers.is_some() {
        return Ok(false);
    }
    let Some(rivers) = curves(world, p)? else {
        return Ok(false);
    };
    if p.carve {
        let grid = world.grid();
        let mut carved = world.height.data.clone();
        let keep = world.nodata_mask();
        grid_rivers::carve(grid, &mut carved, &rivers, p, keep.as_deref())?;
        world.terrain_mut().set_surface(&carved);
    }
    world.rivers = Some(rivers);
    Ok(true)
}
