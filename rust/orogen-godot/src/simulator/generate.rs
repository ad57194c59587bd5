//! `TerrainWorld.generate()`: a terrain starting a simulator on itself. It is declared
//! here, beside the simulator it starts, so that the terrain needs no simulator: the
//! simulator sits above the terrain and this file above both.

use godot::classes::node::InternalMode;
use godot::prelude::*;

use super::ErosionSimulator;
use crate::terrain::TerrainWorld;

#[godot_api(secondary)]
impl TerrainWorld {
    /// Starts an `ErosionSimulator` child on this terrain's recipe (at the end of the
    /// frame, so the caller can connect its signals first) and returns it; the result is
    /// applied to this terrain when it finishes. Await its `finished` (or `failed`).
    #[func]
    pub fn generate(&mut self) -> Gd<ErosionSimulator> {
        let mut sim = ErosionSimulator::new_alloc();
        sim.set_name("OrogenGenerate");
        {
            let mut s = sim.bind_mut();
            s.set_terrain_path(NodePath::from(".."));
            s.set_recipe_resource(self.recipe_resource());
        }
        self.base_mut()
            .add_child_ex(&sim)
            .force_readable_name(true)
            .internal(InternalMode::BACK)
            .done();
        sim.bind_mut().free_when_done = true;
        sim.call_deferred("start", &[]);
        sim
    }
}
