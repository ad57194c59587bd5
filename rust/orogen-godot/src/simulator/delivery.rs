//! A finished run on its way to the terrain, on the main thread a slice per frame: each
//! of the result's images made from its bytes, then the `TerrainData` assembled, then the
//! terrain's own slices ([`TerrainWorld::apply_slice`]). `ErosionSimulator` drives it
//! within its `apply_budget_ms`.

use godot::classes::Image;
use godot::prelude::*;

use crate::convert::ImageBytes;
use crate::data::{rivers_array, TerrainData};
use crate::prepared::Prepared;
use crate::terrain::apply::ApplyJob;
use crate::terrain::TerrainWorld;

/// Main-thread milliseconds a frame may spend applying a finished run by default (at least
/// one slice runs): `apply_budget_ms`.
pub const DELIVERY_BUDGET_MS: f32 = 6.0;

/// River reaches made into `Curve3D`s a slice (about 2 ms at 1025² in a release build).
const REACHES_PER_SLICE: usize = 128;

/// A finished run on its way to the terrain.
pub struct Delivery {
    /// The run's result until the `TerrainData` is made (then the terrain's job has it).
    prepared: Option<Prepared>,
    pub stage: Stage,
    heights: Option<Gd<Image>>,
    maps: VarDictionary,
    rivers: Array<VarDictionary>,
}

pub enum Stage {
    /// Making image `k` (0 the heights, then `prepared.maps[k - 1]`).
    Images(usize),
    /// Making the river reaches from reach `k` on.
    Rivers(usize),
    /// Assembling the `TerrainData`.
    Data,
    /// Applying it to the terrain.
    Apply(Gd<TerrainWorld>, Box<ApplyJob>),
}

impl Delivery {
    pub fn new(prepared: Prepared) -> Delivery {
        Delivery {
            prepared: Some(prepared),
            stage: Stage::Images(0),
            heights: None,
            maps: VarDictionary::new(),
            rivers: Array::new(),
        }
    }

    /// Whether the next slice is one of the heavy ones (a mesh of about 100,000 vertices
    /// at 1025², up to 15 ms in a release build), which `deliver_slices` starts in a frame
    /// of its own.
    pub fn next_is_heavy(&self) -> bool {
        matches!(&self.stage, Stage::Apply(_, job) if job.next_is_heavy())
    }

    /// The slice that comes next, for traces: `image 3`, `data` or `apply 2`.
    pub fn stage_name(&self) -> String {
        match &self.stage {
            Stage::Images(k) => format!("image {k}"),
            Stage::Rivers(k) => format!("rivers from {k}"),
            Stage::Data => "data".into(),
            Stage::Apply(_, job) => format!("apply {}", job.next_slice()),
        }
    }

    /// In stage `Images(k)`: makes image `k` and moves to the next (or to `Data`).
    pub fn make_image(&mut self, k: usize) -> Result<(), String> {
        let prepared = self
            .prepared
            .as_mut()
            .ok_or("the result was already applied")?;
        if k == 0 {
            self.heights = Some(take_image(&mut prepared.heights)?);
        } else if let Some((name, bytes)) = prepared.maps.get_mut(k - 1) {
            let img = take_image(bytes)?;
            self.maps.set(
                &GString::from(name.as_str()).to_variant(),
                &img.to_variant(),
            );
        }
        self.stage = if k < prepared.maps.len() {
            Stage::Images(k + 1)
        } else {
            Stage::Rivers(0)
        };
        Ok(())
    }

    /// In stage `Rivers(k)`: makes the next reaches and moves on (to `Data` after the last).
    pub fn make_rivers(&mut self, k: usize) -> Result<(), String> {
        let prepared = self
            .prepared
            .as_ref()
            .ok_or("the result was already applied")?;
        let all = prepared.world.rivers.as_deref().unwrap_or(&[]);
        let end = (k + REACHES_PER_SLICE).min(all.len());
        self.rivers
            .extend_array(&rivers_array(all, prepared.world.grid(), k..end));
        self.stage = if end < all.len() {
            Stage::Rivers(end)
        } else {
            Stage::Data
        };
        Ok(())
    }

    /// In stage `Data`: the `TerrainData` of the images made, and the rest of the result
    /// (for the terrain's [`TerrainWorld::begin_apply`]).
    pub fn assemble(&mut self) -> Result<(Gd<TerrainData>, Prepared), String> {
        let heights = self.heights.take().ok_or("the result has no heights")?;
        let maps = std::mem::take(&mut self.maps);
        let prepared = self
            .prepared
            .take()
            .ok_or("the result was already applied")?;
        let rivers = std::mem::take(&mut self.rivers);
        let data = TerrainData::assemble_with(heights, maps, &prepared.world, rivers);
        Ok((data, prepared))
    }
}

/// The image of `bytes`, whose memory is freed.
fn take_image(bytes: &mut ImageBytes) -> Result<Gd<Image>, String> {
    let img = bytes.to_image();
    bytes.bytes = Vec::new();
    img
}
