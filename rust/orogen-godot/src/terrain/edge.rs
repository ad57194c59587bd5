//! What a terrain shows beyond its border (`TerrainWorld.edge`): orogen-core's
//! `bake::skirt` as a mesh, drawn with the terrain's own shader compiled with `SKIRT`
//! defined (`addons/orogen/runtime/terrain.gdshader`) and given the terrain material's
//! uniforms, so the ground reads the same on both sides of the border.

use godot::classes::image::Format;
use godot::classes::{Image, ImageTexture, MeshInstance3D, ShaderMaterial};
use godot::prelude::*;
use orogen_core::bake::skirt::Skirt;

use super::mesh_node::{array_mesh_with, MeshNode};

/// The skirt's shader: the terrain's, with `SKIRT` defined and both faces drawn (the seam
/// under the terrain's border is seen from below from low viewpoints outside the map).
/// (A separate shader, not a per-instance uniform: the Compatibility renderer has none.)
pub fn skirt_shader_code() -> Result<String, String> {
    let code = super::material::SHADER;
    let (header, mode) = ("shader_type spatial;", "cull_back");
    if code.matches(header).count() != 1 || code.matches(mode).count() != 1 {
        return Err(format!(
            "terrain.gdshader must hold `{header}` and `{mode}` once each for the skirt's shader"
        ));
    }
    Ok(code
        .replacen(header, &format!("{header}\n#define SKIRT"), 1)
        .replacen(mode, "cull_disabled", 1))
}

/// Copies every uniform of the terrain's material (`from`) onto the skirt's (`to`), whose
/// shader has the same ones and a few of its own.
pub fn copy_uniforms(from: &Gd<ShaderMaterial>, to: &mut Gd<ShaderMaterial>) {
    let Some(shader) = from.get_shader() else {
        return;
    };
    let key = "name".to_variant();
    for entry in shader.get_shader_uniform_list().iter_shared() {
        let Ok(dict) = entry.try_to::<VarDictionary>() else {
            continue;
        };
        let Some(name) = dict.get(&key).and_then(|n| n.try_to::<GString>().ok()) else {
            continue;
        };
        let name = StringName::from(&name);
        to.set_shader_parameter(&name, &from.get_shader_parameter(&name));
    }
}

/// What `TerrainWorld` draws beyond its border.
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[godot(via = i64)]
pub enum TerrainEdge {
    /// A coast when the sea is on, else land going on to the horizon.
    #[default]
    Auto = 0,
    /// Nothing: the map ends at its border.
    None = 1,
    /// Low-detail land to the horizon.
    Skirt = 2,
    /// The land falls into the sea (the sea plane is drawn too).
    Coast = 3,
}

impl TerrainEdge {
    /// The core's edge for a terrain whose sea is `sea_on`.
    pub fn resolve(self, sea_on: bool) -> orogen_core::bake::skirt::Edge {
        use orogen_core::bake::skirt::Edge;
        match self {
            TerrainEdge::Auto if sea_on => Edge::Coast,
            TerrainEdge::Auto | TerrainEdge::Skirt => Edge::Skirt,
            TerrainEdge::None => Edge::None,
            TerrainEdge::Coast => Edge::Coast,
        }
    }
}

/// The skirt's mesh, an internal child of the terrain while its edge draws one, the look
/// (ground weights, surface colours) it last carried, and the shader's `srgb_probe`.
pub struct SkirtMesh(MeshNode, Look, Option<Gd<ImageTexture>>);

/// A skirt's look per vertex: `Skirt::weights`, `Skirt::colours` and `Skirt::channel` (in
/// the first two of four floats, as `CUSTOM3` takes it).
#[derive(Default)]
struct Look {
    weights: Vec<[f32; 4]>,
    weights_hi: Vec<[f32; 4]>,
    colours: Vec<[f32; 4]>,
    channel: Vec<[f32; 4]>,
}

impl Default for SkirtMesh {
    fn default() -> Self {
        let code = skirt_shader_code().unwrap_or_else(|e| {
            godot_error!("TerrainWorld: {e}");
            String::new()
        });
        SkirtMesh(MeshNode::with_code("Skirt", code), Look::default(), None)
    }
}

impl SkirtMesh {
    /// Shows `skirt` with the ground textures of `terrain_material` (the terrain's shader
    /// material), or removes the mesh when it is empty. A skirt that carries no look (made
    /// from the heights alone: `edge` or the sea changed, a sculpt stroke ended) keeps the
    /// look the last one carried when it has as many vertices (the same grid). A mesh node
    /// made now is returned, for the terrain to add as its child.
    pub fn update(
        &mut self,
        skirt: &Skirt,
        terrain_material: Option<&Gd<ShaderMaterial>>,
        sea_level: f32,
    ) -> Option<Gd<MeshInstance3D>> {
        if skirt.indices.is_empty() {
            self.0.remove();
            return None;
        }
        let n = skirt.positions.len();
        if skirt.weights.len() == n {
            let split = |lo: usize| -> Vec<[f32; 4]> {
                skirt
                    .weights
                    .iter()
                    .map(|w| [w[lo], w[lo + 1], w[lo + 2], w[lo + 3]])
                    .collect()
            };
            self.1 = Look {
                weights: split(0),
                weights_hi: split(4),
                colours: skirt.colours.clone(),
                channel: skirt
                    .channel
                    .iter()
                    .map(|&[c, f]| [c, f, 0.0, 0.0])
                    .collect(),
            };
        } else if self.1.weights.len() != n {
            self.1 = Look::default();
        }
        let look = &self.1;
        let has_look = look.weights.len() == n;
        let has_colour = has_look && look.colours.len() == n;
        let has_rivers = has_look && look.channel.len() == n;
        // (The slots are positional: without colours, rivers take zeros in CUSTOM2.)
        let no_colours = if has_rivers && !has_colour {
            vec![[0.0f32; 4]; n]
        } else {
            Vec::new()
        };
        let mut custom: Vec<&[[f32; 4]]> = Vec::new();
        if has_look {
            custom.extend([&look.weights[..], &look.weights_hi[..]]);
        }
        if has_colour {
            custom.push(&look.colours);
        } else if has_rivers {
            custom.push(&no_colours);
        }
        if has_rivers {
            custom.push(&look.channel);
        }
        let mesh = array_mesh_with(
            &skirt.positions,
            &skirt.normals,
            None,
            &custom,
            &skirt.indices,
        );
        let made = self.0.show(&mesh);
        if let Some(mut m) = self.0.material() {
            if let Some(t) = terrain_material {
                copy_uniforms(t, &mut m);
            }
            m.set_shader_parameter("sea_level", &sea_level.to_variant());
            if self.2.is_none() {
                // One texel of sRGB 0.5 (RGBA8, as the terrain's surface colour texture):
                // the shader reads back whether the renderer decodes such textures.
                let bytes = PackedByteArray::from(&[128u8, 128, 128, 255][..]);
                self.2 = Image::create_from_data(1, 1, false, Format::RGBA8, &bytes)
                    .and_then(|img| ImageTexture::create_from_image(&img));
            }
            if let Some(probe) = &self.2 {
                m.set_shader_parameter("srgb_probe", &probe.to_variant());
            }
            m.set_shader_parameter("skirt_has_look", &has_look.to_variant());
            m.set_shader_parameter("skirt_has_colour", &has_colour.to_variant());
            m.set_shader_parameter("skirt_has_rivers", &has_rivers.to_variant());
            m.set_shader_parameter("skirt_relief", &skirt.relief_slope.to_variant());
        }
        made
    }

    /// Gives the skirt the terrain material's uniforms again (its ground textures changed).
    pub fn sync(&self, terrain_material: &Gd<ShaderMaterial>) {
        if let Some(mut m) = self.0.material() {
            copy_uniforms(terrain_material, &mut m);
        }
    }
}

#[cfg(test)]
mod tests {
    /// The skirt's shader is the terrain's, not a copy that drifts from it: the same code but
    /// for the define and the culling.
    #[test]
    fn the_skirt_draws_with_the_terrain_shader_and_both_faces() {
        let terrain = super::super::material::SHADER;
        let skirt = super::skirt_shader_code().expect("the skirt's shader");
        assert!(skirt.contains("shader_type spatial;\n#define SKIRT\n"));
        assert!(skirt.contains("cull_disabled") && !skirt.contains("cull_back"));
        let back =
            skirt
                .replacen("\n#define SKIRT", "", 1)
                .replacen("cull_disabled", "cull_back", 1);
        assert_eq!(back, terrain);
        assert!(terrain.contains("#ifdef SKIRT"));
    }
}
