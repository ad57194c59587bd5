//! A finished run made ready for the main thread on the simulator's worker (issue #13, no
//! hitch when a run finishes): every map as image bytes, the lakes as drawn, the collision
//! regions, and the world slimmed to what `TerrainWorld` keeps for its queries. The main
//! thread then only copies bytes into Godot images and textures, a slice per frame.
//!
//! Memory: each map is turned into bytes and dropped in turn, and the world's simulation
//! state and layers are dropped first, so the result never exists twice on this side.

use orogen_core::bake::collision::{collision_regions, CollisionRegion};
use orogen_core::bake::ground_weights::{Ground, GroundInputs, GroundParams};
use orogen_core::bake::lake_display::{drawn_lakes_of, LAKE_DEPTH_MIN};
use orogen_core::bake::lake_surface::{lake_surface, LakeSurface};
use orogen_core::bake::skirt::{shown_colours, skirt_with, Edge, Look, Skirt};
use orogen_core::field::Grid;
use orogen_core::runner::StageTiming;
use orogen_core::state::Layers;
use orogen_core::world::names;
use orogen_core::{MapData, World};

use crate::convert::ImageBytes;

/// What a result is prepared for: the terrain's settings when the run started.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Whether to make the collision regions (the terrain has collision on).
    pub collision: bool,
    /// The terrain's edge and sea level, for its skirt (None: no terrain to show it).
    pub edge: Option<(Edge, f32)>,
    /// The terrain shader's ground uniforms, for the look the skirt carries outwards.
    pub ground: GroundParams,
}

/// A run's result, ready to be applied a slice at a time.
pub struct Prepared {
    /// The world without maps, layers or simulation state: heights, uplift, nodata,
    /// materials, a Graph domain's rivers and nodes, a planet (what `TerrainWorld` keeps).
    pub world: World,
    /// The heights, `FORMAT_RF`.
    pub heights: ImageBytes,
    /// Every other map as `TerrainData.maps` holds it, by name (uplift first; a hydraulic
    /// run's water depth always among them).
    pub maps: Vec<(String, ImageBytes)>,
    /// Lowest and highest height, metres.
    pub range: (f32, f32),
    /// ln(1 + largest drainage), for the shader's drainage shading.
    pub drainage_log_max: f32,
    /// The lakes' water surface mesh (over the lakes as drawn).
    pub lake_surface: Option<LakeSurface>,
    /// The river channel field and flow map (with a `rivers` and a `drainage` map).
    pub river_display: Option<(ImageBytes, ImageBytes)>,
    /// The skirt beyond the border for the edge and sea level it was made for.
    pub skirt: Option<(Edge, f32, Skirt)>,
    /// The collision's regions (when the terrain had collision on at the start).
    pub collision: Option<(f32, Vec<CollisionRegion>)>,
    /// Per stage of a recipe run: its name, seconds and figures (`bake.json`'s `stages`).
    pub stages: Vec<StageTiming>,
}

impl Prepared {
    /// The same, with the stage reports of the run that made it.
    pub fn with_stages(mut self, stages: Vec<StageTiming>) -> Prepared {
        self.stages = stages;
        self
    }

    /// Turns `world` into image bytes (and the skirt and collision regions `target` asks
    /// for), dropping its maps one by one.
    pub fn new(mut world: World, target: Target) -> Prepared {
        let grid = world.grid();
        // The skirt, while the world has its maps: it carries the terrain's look (the
        // ground weights along the border, a layered terrain's surface colour) outwards.
        let skirt = target.edge.map(|(edge, sea)| {
            let shown = shown_colours(&world);
            let look = Look {
                inputs: GroundInputs::of(&world),
                ground: Ground {
                    params: target.ground,
                    paint: None,
                },
                colours: shown.as_deref(),
                rivers: orogen_core::bake::skirt_rivers::of(&world),
            };
            let made = skirt_with(grid, &world.height.data, edge, sea, Some(&look));
            (edge, sea, made)
        });
        // The state a run leaves behind: only a hydraulic run's water is kept (as a map).
        let sim = std::mem::take(&mut world.sim);
        let river_display = ImageBytes::river_display(&world);
        let drawn = drawn_lakes_of(&world);
        let produced = std::mem::take(&mut world.maps);
        world = slim(world);
        let mut maps = vec![(
            names::UPLIFT.to_string(),
            ImageBytes::scalar(grid, &world.uplift.data),
        )];
        let mut drainage_log_max = 1.0;
        let mut surface = None;
        let mut has_water = false;
        for (name, map) in produced {
            // (`map` is dropped at the end of each turn: one map at a time exists twice.)
            if let MapData::Scalar(m) = &map {
                if name == names::DRAINAGE {
                    drainage_log_max = (1.0 + m.min_max().1.max(0.0)).ln();
                } else if let (true, Some(drawn)) = (name == names::LAKE_DEPTH, drawn.as_ref()) {
                    surface = Some(lake_surface(
                        grid,
                        &world.height.data,
                        drawn,
                        LAKE_DEPTH_MIN,
                    ));
                }
            }
            has_water |= name == names::WATER_DEPTH;
            maps.push((name, ImageBytes::map(&map)));
        }
        if let (Some(water), false) = (&sim.water_depth, has_water) {
            maps.push((
                names::WATER_DEPTH.to_string(),
                ImageBytes::scalar(grid, water),
            ));
        }
        drop(sim);
        let range = world.height.min_max();
        Prepared {
            heights: ImageBytes::scalar(grid, &world.height.data),
            maps,
            range,
            drainage_log_max,
            lake_surface: surface,
            river_display,
            skirt,
            collision: target.collision.then(|| collision_regions(&world.height)),
            stages: Vec::new(),
            world,
        }
    }

    /// The grid of the heights.
    pub fn grid(&self) -> Grid {
        self.world.grid()
    }
}

/// `world` without what `TerrainWorld` does not keep once the maps are images: maps, layers,
/// simulation state and a Graph domain's graph (the materials' names and colours stay, for
/// the exports' splat channels).
pub fn slim(mut world: World) -> World {
    world.maps.clear();
    world.layers = Layers::none();
    world.sim = Default::default();
    world.graph = None;
    world
}
