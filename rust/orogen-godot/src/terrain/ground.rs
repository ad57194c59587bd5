//! The terrain's ground materials: two `Texture2DArray`s in Terrain3D's convention (albedo
//! with height in alpha; normal with roughness in alpha), one layer per material in the
//! order of `orogen_core::generators::ground::GROUND_MATERIALS`.
//!
//! The built-in set is Orogen's own procedural textures (`orogen textures` wrote them into
//! `addons/orogen/runtime/textures/`), embedded here so a game needs no files beside the
//! library; they are decoded once per process. A user's own arrays (`TerrainWorld`'s
//! `ground_albedo` and `ground_normal`) replace them.

use godot::classes::image::Format;
use godot::classes::{Image, Texture2DArray};
use godot::prelude::*;
use orogen_core::generators::ground::GROUND_MATERIALS;

macro_rules! texture_files {
    ($($name:literal),*) => {
        [$(
            (
                include_bytes!(concat!("../../../../addons/orogen/runtime/textures/", $name, "_albedo_height.png")).as_slice(),
                include_bytes!(concat!("../../../../addons/orogen/runtime/textures/", $name, "_normal_roughness.png")).as_slice(),
            )
        ),*]
    };
}

/// The built-in PNG files, albedo and normal, in slot order.
const BUILT_IN: [(&[u8], &[u8]); 8] = texture_files!(
    "rock",
    "cliff",
    "scree",
    "soil",
    "grass",
    "dry_grass",
    "sand",
    "snow"
);

/// The arrays a terrain's material binds.
#[derive(Clone)]
pub struct GroundTextures {
    pub albedo: Gd<Texture2DArray>,
    pub normal: Gd<Texture2DArray>,
}

/// The built-in images, decoded once per process: side, RGBA8 bytes with every mip level,
/// for albedo and normal of each slot. Plain bytes, not
/// Godot objects, so nothing of the engine's outlives its shutdown.
struct Decoded {
    side: i32,
    albedo: Vec<Vec<u8>>,
    normal: Vec<Vec<u8>>,
}

static DECODED: std::sync::OnceLock<Result<Decoded, String>> = std::sync::OnceLock::new();

fn decoded() -> Result<&'static Decoded, String> {
    DECODED
        .get_or_init(|| {
            let mut d = Decoded {
                side: 0,
                albedo: Vec::new(),
                normal: Vec::new(),
            };
            for (k, (a, n)) in BUILT_IN.iter().enumerate() {
                let a = decode(a, GROUND_MATERIALS[k], "albedo_height")?;
                let n = decode(n, GROUND_MATERIALS[k], "normal_roughness")?;
                d.side = a.get_width();
                d.albedo.push(a.get_data().to_vec());
                d.normal.push(n.get_data().to_vec());
            }
            Ok(d)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The built-in set as new texture arrays (the images are decoded once per process).
pub fn built_in() -> Result<GroundTextures, String> {
    let d = decoded()?;
    let images = |layers: &[Vec<u8>]| -> Result<Vec<Gd<Image>>, String> {
        layers
            .iter()
            .map(|bytes| {
                Image::create_from_data(
                    d.side,
                    d.side,
                    true,
                    Format::RGBA8,
                    &PackedByteArray::from(bytes.as_slice()),
                )
                .ok_or_else(|| "cannot rebuild a built-in ground texture".to_string())
            })
            .collect()
    };
    Ok(GroundTextures {
        albedo: array_of(&images(&d.albedo)?)?,
        normal: array_of(&images(&d.normal)?)?,
    })
}

/// The user's arrays where given (each must have eight layers), the built-in ones where not.
pub fn with_overrides(
    albedo: Option<Gd<Texture2DArray>>,
    normal: Option<Gd<Texture2DArray>>,
) -> Result<GroundTextures, String> {
    let mut t = built_in()?;
    if let Some(a) = albedo {
        check_layers(&a, "ground_albedo")?;
        t.albedo = a;
    }
    if let Some(n) = normal {
        check_layers(&n, "ground_normal")?;
        t.normal = n;
    }
    Ok(t)
}

fn check_layers(a: &Gd<Texture2DArray>, field: &str) -> Result<(), String> {
    let layers = a.get_layers();
    if layers < 8 {
        return Err(format!(
            "{field}: a ground texture array needs 8 layers (rock, cliff, scree, soil, grass, \
             dry grass, sand, snow), this one has {layers}"
        ));
    }
    Ok(())
}

fn decode(bytes: &[u8], material: &str, kind: &str) -> Result<Gd<Image>, String> {
    let mut img = Image::new_gd();
    let err = img.load_png_from_buffer(&PackedByteArray::from(bytes));
    if err != godot::global::Error::OK {
        return Err(format!(
            "built-in ground texture {material}_{kind}.png: cannot decode ({err:?})"
        ));
    }
    if img.get_format() != Format::RGBA8 {
        img.convert(Format::RGBA8);
    }
    img.generate_mipmaps();
    Ok(img)
}

fn array_of(images: &[Gd<Image>]) -> Result<Gd<Texture2DArray>, String> {
    let mut arr = Texture2DArray::new_gd();
    let list: Array<Gd<Image>> = images.iter().cloned().collect();
    let err = arr.create_from_images(&list);
    if err != godot::global::Error::OK {
        return Err(format!("cannot build the ground texture array ({err:?})"));
    }
    Ok(arr)
}

/// Binds `textures` (or, on `None`, the built-in set) to a terrain shader's material; a
/// failure leaves the material without ground textures (`has_ground` false, plain colours)
/// and is returned for the caller to report.
pub fn bind(
    material: &mut Gd<godot::classes::ShaderMaterial>,
    textures: Result<GroundTextures, String>,
) -> Result<(), String> {
    match textures {
        Ok(t) => {
            material.set_shader_parameter("ground_albedo", &t.albedo.to_variant());
            material.set_shader_parameter("ground_normal", &t.normal.to_variant());
            material.set_shader_parameter("has_ground", &true.to_variant());
            Ok(())
        }
        Err(e) => {
            material.set_shader_parameter("has_ground", &false.to_variant());
            Err(e)
        }
    }
}
