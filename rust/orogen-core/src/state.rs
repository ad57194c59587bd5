//! The state processes change: a terrain made of a stack of materials, and the simulation
//! state that lives beside it (water, sediment, fluxes, velocity), over plain node arrays.
//!
//! The terrain is bedrock (a bottom material of infinite thickness) under a stack of
//! layers, top down, each a thickness per node; layer 0 holds loose sediment. The surface
//! is bedrock plus every layer: it is stored, because every process reads it every step,
//! and every operation here keeps the two in step (bedrock is the surface minus the
//! layers). A terrain without layers is one material: its surface is its bedrock, and
//! [`TerrainMut::remove`] and [`TerrainMut::deposit`] just lower and raise it.

use glam::Vec2;

use crate::error::{OrogenError, Result};
use crate::field::Grid;

/// The layers over bedrock: a name and a thickness per node (metres, ≥ 0) each, top down.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layers {
    names: Vec<String>,
    thickness: Vec<Vec<f32>>,
}

impl Layers {
    /// No layers: a one-material terrain.
    pub fn none() -> Self {
        Layers::default()
    }

    /// Layers `(name, thickness per node)`, top down; every thickness finite and ≥ 0, every
    /// layer `nodes` long.
    pub fn new(layers: Vec<(String, Vec<f32>)>, nodes: usize) -> Result<Self> {
        let mut out = Layers::default();
        for (name, t) in layers {
            if t.len() != nodes {
                return Err(OrogenError::invalid(
                    format!("layers[{name:?}]"),
                    format!("has {} values, the terrain has {nodes} nodes", t.len()),
                ));
            }
            if let Some(i) = t.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(OrogenError::invalid(
                    format!("layers[{name:?}]"),
                    format!(
                        "thickness must be finite and >= 0 m, got {} at node {i}",
                        t[i]
                    ),
                ));
            }
            out.names.push(name);
            out.thickness.push(t);
        }
        Ok(out)
    }

    /// Number of layers over bedrock.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True for a one-material terrain.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Layer names, top down.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Thickness of layer `k` per node, metres.
    pub fn thickness(&self, k: usize) -> &[f32] {
        &self.thickness[k]
    }

    /// Every layer's thickness per node, top down, to change in place (e.g. split into
    /// row chunks for a parallel pass). Keep every value finite and ≥ 0, and change the
    /// surface by the same amounts.
    pub fn thickness_all_mut(&mut self) -> &mut [Vec<f32>] {
        &mut self.thickness
    }

    /// Total thickness over bedrock at `node`, metres.
    pub fn total(&self, node: usize) -> f32 {
        self.thickness.iter().map(|t| t[node]).sum()
    }
}

/// What a material does under each process (the thesis's per-layer properties). A layered
/// process takes one per layer, top down, then one for bedrock: `layers.len() + 1`.
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialProps {
    /// Angle of repose, degrees, in (0, 90).
    pub talus_deg: f32,
    /// How readily thermal weathering moves it, 0 (never) to 1.
    pub thermal_susceptibility: f32,
    /// How readily flowing water dissolves it, 0 (never) to 1.
    pub dissolubility: f32,
    /// How well it resists the wind, 0 (blown freely) to 1 (never moves).
    pub wind_resistance: f32,
    /// Factor on the stream-power erodibility `k` where it is exposed (≥ 0).
    pub erodibility: f32,
}

impl Default for MaterialProps {
    fn default() -> Self {
        MaterialProps {
            talus_deg: 35.0,
            thermal_susceptibility: 0.5,
            dissolubility: 0.5,
            wind_resistance: 0.5,
            erodibility: 1.0,
        }
    }
}

/// `n` copies of `value`, or an error naming the grid size when memory runs out; `what`
/// names the buffers' owner in the message (`hydraulic`).
pub fn buffer<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        OrogenError::invalid(
            "size",
            format!("cannot allocate {what} buffers for {n} cells (out of memory)"),
        )
    })?;
    v.resize(n, value);
    Ok(v)
}

/// Checks the materials of a layered process: one per layer top down and one for bedrock
/// (`layers + 1`), each with a talus angle in (0°, 90°), susceptibility, dissolubility and
/// wind resistance in [0, 1] and a finite erodibility ≥ 0. Errors name `materials[k].field`.
pub fn validate_materials(materials: &[MaterialProps], layers: usize) -> Result<()> {
    if materials.len() != layers + 1 {
        return Err(OrogenError::invalid(
            "materials",
            format!(
                "needs one entry per layer and one for bedrock ({}), got {}",
                layers + 1,
                materials.len()
            ),
        ));
    }
    for (k, m) in materials.iter().enumerate() {
        let t = m.talus_deg as f64;
        if !t.is_finite() || t <= 0.0 || t >= 90.0 {
            return Err(OrogenError::invalid(
                format!("materials[{k}].talus_deg"),
                format!(
                    "must be an angle strictly between 0 and 90 degrees, got {}",
                    m.talus_deg
                ),
            ));
        }
        for (name, v, hi) in [
            ("thermal_susceptibility", m.thermal_susceptibility, 1.0),
            ("dissolubility", m.dissolubility, 1.0),
            ("wind_resistance", m.wind_resistance, 1.0),
            ("erodibility", m.erodibility, f32::MAX as f64),
        ] {
            let v = v as f64;
            if !(v.is_finite() && (0.0..=hi).contains(&v)) {
                return Err(OrogenError::invalid(
                    format!("materials[{k}].{name}"),
                    format!("must be within [0, {hi}], got {v}"),
                ));
            }
        }
    }
    Ok(())
}

/// A terrain to change: the stored surface (metres) and the layers under it.
pub struct TerrainMut<'a> {
    /// Surface height per node, metres: bedrock plus every layer.
    pub surface: &'a mut [f32],
    /// The layers over bedrock.
    pub layers: &'a mut Layers,
}

impl<'a> TerrainMut<'a> {
    /// A view over `surface` and `layers` (one thickness per surface node each).
    pub fn new(surface: &'a mut [f32], layers: &'a mut Layers) -> Self {
        debug_assert!(layers.thickness.iter().all(|t| t.len() == surface.len()));
        TerrainMut { surface, layers }
    }

    /// An error unless the terrain has one node per cell of `grid`.
    pub fn check_grid(&self, grid: &Grid) -> Result<()> {
        let n = grid.len();
        if self.len() != n {
            return Err(OrogenError::invalid(
                "terrain",
                format!(
                    "has {} nodes, the {}x{} grid has {n}",
                    self.len(),
                    grid.width,
                    grid.height
                ),
            ));
        }
        Ok(())
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.surface.len()
    }

    /// True when there is no node.
    pub fn is_empty(&self) -> bool {
        self.surface.is_empty()
    }

    /// Height of the top of bedrock at `node`, metres (the surface without layers).
    pub fn bedrock(&self, node: usize) -> f32 {
        self.surface[node] - self.layers.total(node)
    }

    /// The material exposed at `node`: the index of the topmost layer with thickness > 0,
    /// or `layers.len()` for bedrock.
    pub fn exposed(&self, node: usize) -> usize {
        self.layers
            .thickness
            .iter()
            .position(|t| t[node] > 0.0)
            .unwrap_or(self.layers.len())
    }

    /// Removes `amount` metres (≥ 0) of material at `node`, from the top layer down to
    /// bedrock (which never runs out). Returns how much came from each layer, top down,
    /// through `taken(layer, metres)`; bedrock is layer `layers.len()`.
    pub fn remove_with(&mut self, node: usize, amount: f32, mut taken: impl FnMut(usize, f32)) {
        debug_assert!(amount >= 0.0);
        let mut left = amount;
        for (k, t) in self.layers.thickness.iter_mut().enumerate() {
            if left <= 0.0 {
                break;
            }
            let take = left.min(t[node]);
            if take > 0.0 {
                t[node] -= take;
                left -= take;
                taken(k, take);
            }
        }
        if left > 0.0 {
            taken(self.layers.len(), left);
        }
        self.surface[node] -= amount;
    }

    /// Removes `amount` metres (≥ 0) at `node`, top layer first.
    #[inline]
    pub fn remove(&mut self, node: usize, amount: f32) {
        if self.layers.is_empty() {
            self.surface[node] -= amount;
        } else {
            self.remove_with(node, amount, |_, _| {});
        }
    }

    /// Deposits `amount` metres (≥ 0) at `node` into layer 0 (loose sediment), or onto
    /// bedrock when the terrain has no layers.
    #[inline]
    pub fn deposit(&mut self, node: usize, amount: f32) {
        if let Some(top) = self.layers.thickness.first_mut() {
            top[node] += amount;
        }
        self.surface[node] += amount;
    }

    /// Raises the whole column at `node` by `amount` metres (tectonic uplift; negative
    /// sinks it): layers keep their thickness.
    #[inline]
    pub fn uplift(&mut self, node: usize, amount: f32) {
        self.surface[node] += amount;
    }

    /// Moves the surface to `new` node by node: a node that fell lost material (top layer
    /// first), a node that rose gained sediment in layer 0. Without layers, a plain copy.
    pub fn set_surface(&mut self, new: &[f32]) {
        assert_eq!(
            new.len(),
            self.surface.len(),
            "set_surface: length mismatch"
        );
        if self.layers.is_empty() {
            self.surface.copy_from_slice(new);
            return;
        }
        for (i, &h) in new.iter().enumerate() {
            let old = self.surface[i];
            if h < old {
                self.remove(i, old - h);
            } else if h > old {
                self.deposit(i, h - old);
            }
            // The bookkeeping above rounds; the surface is exactly what was asked.
            self.surface[i] = h;
        }
    }
}

/// Simulation state beside the terrain, one entry per node; each is `None` until a process
/// that needs it creates it. It is not an exported map: a recipe names the ones it wants
/// written (`outputs: ["water_depth"]`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimState {
    /// Water depth over the surface, metres.
    pub water_depth: Option<Vec<f32>>,
    /// Suspended sediment, metres of material.
    pub sediment: Option<Vec<f32>>,
    /// Outflow fluxes to the four neighbours (left, right, top, bottom), m³/s.
    pub flux: Option<Vec<[f32; 4]>>,
    /// Water velocity, m/s.
    pub velocity: Option<Vec<Vec2>>,
}

impl SimState {
    /// The state fields a recipe can ask to have written, by map name.
    pub const OUTPUTS: [&'static str; 3] = ["water_depth", "sediment", "velocity"];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layered() -> (Vec<f32>, Layers) {
        // Bedrock at 100 m under 0.06 m of sand and 2 m of shale.
        let layers = Layers::new(
            vec![("sand".into(), vec![0.06]), ("shale".into(), vec![2.0])],
            1,
        )
        .unwrap();
        (vec![102.06], layers)
    }

    #[test]
    fn remove_walks_down_the_layers_to_bedrock() {
        let (mut s, mut l) = layered();
        let mut t = TerrainMut::new(&mut s, &mut l);
        let mut got = Vec::new();
        t.remove_with(0, 0.1, |k, m| got.push((k, m)));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, 0);
        assert!((got[0].1 - 0.06).abs() < 1e-6);
        assert_eq!(got[1].0, 1);
        assert!((got[1].1 - 0.04).abs() < 1e-6);
        assert_eq!(t.exposed(0), 1);
        let mut got = Vec::new();
        t.remove_with(0, 5.0, |k, m| got.push((k, m)));
        assert_eq!(t.exposed(0), 2, "bedrock exposed");
        assert!((got.iter().map(|g| g.1).sum::<f32>() - 5.0).abs() < 1e-5);
        assert!((t.bedrock(0) - (102.06 - 5.1)).abs() < 1e-4);
    }

    #[test]
    fn deposit_goes_to_layer_zero_and_uplift_keeps_thickness() {
        let (mut s, mut l) = layered();
        let mut t = TerrainMut::new(&mut s, &mut l);
        t.deposit(0, 0.5);
        t.uplift(0, 10.0);
        assert!((t.layers.thickness(0)[0] - 0.56).abs() < 1e-6);
        assert!((t.bedrock(0) - 110.0).abs() < 1e-4);
        assert!((t.surface[0] - 112.56).abs() < 1e-4);
    }

    #[test]
    fn one_material_terrain_is_its_surface() {
        let mut s = vec![5.0f32, 7.0];
        let mut l = Layers::none();
        let mut t = TerrainMut::new(&mut s, &mut l);
        t.remove(0, 1.5);
        t.deposit(1, 0.25);
        t.set_surface(&[1.0, 2.0]);
        assert_eq!(t.exposed(0), 0);
        assert_eq!(t.bedrock(1), 2.0);
        assert_eq!(s, vec![1.0, 2.0]);
    }

    #[test]
    fn bad_layers_name_the_layer() {
        let e = Layers::new(vec![("sand".into(), vec![1.0, -1.0])], 2).unwrap_err();
        assert!(e.to_string().contains("sand"), "{e}");
        let e = Layers::new(vec![("sand".into(), vec![1.0])], 2).unwrap_err();
        assert!(e.to_string().contains("2 nodes"), "{e}");
    }
}
