//! A simulator's finished run applied to the terrain a slice at a time (issue #13, no
//! hitch when a run finishes): the run's result comes prepared off the main thread
//! ([`Prepared`]); here the terrain takes its data and heights, then each map's texture,
//! then its collision a region at a time, each slice a few milliseconds at 1025².
//! `ErosionSimulator` calls [`TerrainWorld::apply_slice`] until it returns true.

use godot::classes::image::Format;
use godot::classes::Image;
use godot::prelude::*;
use orogen_core::bake::collision::{collision_regions, CollisionRegion};
use orogen_core::bake::lake_surface::LakeSurface;
use orogen_core::bake::skirt::{Edge, Skirt};
use orogen_core::world::names;
use orogen_core::World;

use super::TerrainWorld;
use crate::convert;
use crate::data::TerrainData;
use crate::prepared::Prepared;

/// A simulator's result being applied to a terrain a slice at a time (see
/// [`TerrainWorld::apply_slice`]).
pub struct ApplyJob {
    data: Gd<TerrainData>,
    world: Option<World>,
    range: (f32, f32),
    drainage_log_max: f32,
    lake_surface: Option<LakeSurface>,
    skirt: Option<(Edge, f32, Skirt)>,
    river_display: Option<(convert::ImageBytes, convert::ImageBytes)>,
    collision: Option<(f32, Vec<CollisionRegion>)>,
    /// The flow map's image, made with the channel's and bound a slice later.
    flow: Option<Gd<Image>>,
    next: usize,
}

impl ApplyJob {
    /// The number of the slice [`TerrainWorld::apply_slice`] does next.
    pub fn next_slice(&self) -> usize {
        self.next
    }

    /// Whether the next slice makes a mesh: the skirt (8) or the lakes' water (9).
    pub fn next_is_heavy(&self) -> bool {
        matches!(self.next, 8 | 9)
    }
}

impl TerrainWorld {
    /// Starts applying a simulator's result: `data` whose decoded form is `prepared`'s
    /// world. [`TerrainWorld::apply_slice`] then does it a piece per call.
    pub fn begin_apply(&mut self, data: Gd<TerrainData>, prepared: Prepared) -> ApplyJob {
        let Prepared {
            world,
            range,
            drainage_log_max,
            lake_surface,
            skirt,
            river_display,
            collision,
            ..
        } = prepared;
        ApplyJob {
            data,
            world: Some(world),
            range,
            drainage_log_max,
            lake_surface,
            skirt,
            river_display,
            collision,
            flow: None,
            next: 0,
        }
    }

    /// Does the next piece of `job` (about a texture upload or a collision region, a few
    /// milliseconds at 1025²): first the data and heights, then each map's texture, then
    /// the collision a region at a time; emits `data_changed` with the last. Returns true
    /// once done.
    pub fn apply_slice(&mut self, job: &mut ApplyJob) -> bool {
        // Slices before the collision's: the heights, the maps' textures (1 to 7), the skirt
        // (8) and the lakes' water mesh (9), each a few milliseconds at 1025².
        const MAPS: usize = 10;
        let step = job.next;
        job.next += 1;
        let data = job.data.clone();
        match step {
            0 => {
                let world = job.world.take();
                let grid = world.as_ref().map(|w| w.grid());
                self.data = Some(data.clone());
                self.set_world(world);
                let heights = data.bind().heights.clone();
                if let (Some(grid), Some(img)) = (grid, heights) {
                    self.show_heights(grid, &img, job.range.0, job.range.1);
                }
                self.material.set_drainage_log_max(job.drainage_log_max);
                self.material.clear_maps();
            }
            1..MAPS => {
                let d = data.bind();
                let map = |name: &str| {
                    d.maps
                        .get(&GString::from(name).to_variant())
                        .and_then(|v| v.try_to::<Gd<Image>>().ok())
                };
                match step {
                    1 => {
                        self.material
                            .bind_map("drainage", "has_drainage", map(names::DRAINAGE));
                    }
                    2 => {
                        let sediment =
                            map(names::SEDIMENT_DEPTH).filter(|i| i.get_format() == Format::RF);
                        self.material
                            .bind_map("sediment_depth", "has_sediment", sediment);
                    }
                    3 => {
                        self.material
                            .bind_map("rivers", "has_rivers", map(names::RIVERS));
                        let (channel, flow) = match job.river_display.take() {
                            Some((c, f)) => (c.to_image().ok(), f.to_image().ok()),
                            None => (None, None),
                        };
                        self.material
                            .bind_map("river_channel", "has_river_channel", channel);
                        job.flow = flow;
                    }
                    7 => self
                        .material
                        .bind_map("flow_map", "has_flow_map", job.flow.take()),
                    4 => self
                        .material
                        .bind_map("nodata", "has_nodata", map(names::NODATA)),
                    5 => {
                        let img =
                            map(names::SURFACE_COLOUR).filter(|i| i.get_format() == Format::RGBA8);
                        let img = img.map(|i| {
                            let mut copy = Image::new_gd();
                            copy.copy_from(&i);
                            copy.generate_mipmaps();
                            copy
                        });
                        self.material.show_colour_image(img);
                        let position =
                            map(names::STRATA_POSITION).filter(|i| i.get_format() == Format::RF);
                        let column = map(names::STRATA_COLUMN)
                            .filter(|i| i.get_format() == Format::RGBA8)
                            .map(|i| {
                                let mut copy = Image::new_gd();
                                copy.copy_from(&i);
                                copy.generate_mipmaps();
                                copy
                            });
                        self.material.show_strata_images(position, column);
                    }
                    6 => {
                        let img = map(names::WATER_DEPTH).filter(|i| i.get_format() == Format::RF);
                        self.material.show_water_image(img);
                    }
                    8 => {
                        if self.world.is_some() {
                            self.update_skirt_from(job.skirt.take());
                        }
                    }
                    _ => {
                        let surface = job.lake_surface.take();
                        self.show_lake_water(surface.as_ref());
                    }
                }
            }
            _ => {
                let region = step - MAPS;
                let usable = self.collision_enabled
                    && self
                        .world
                        .as_ref()
                        .is_some_and(|w| w.grid().width >= 2 && w.grid().height >= 2);
                if !usable {
                    self.collision.remove();
                } else {
                    if job.collision.is_none() {
                        // Collision was off when the run started: build the regions now.
                        job.collision = self.world.as_ref().map(|w| collision_regions(&w.height));
                    }
                    if let Some((spacing, regions)) = &mut job.collision {
                        if region < regions.len() {
                            let r = std::mem::take(&mut regions[region]);
                            self.set_collision_region(region, regions.len(), *spacing, &r);
                            return false;
                        }
                    }
                }
                self.signals().data_changed().emit();
                return true;
            }
        }
        false
    }
}
