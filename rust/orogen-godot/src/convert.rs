//! Conversions between core data and Godot values: serde's JSON data model ↔ `Variant`,
//! maps ↔ `Image`, and `res://` paths ↔ file-system paths.

use std::path::PathBuf;

use godot::classes::image::Format;
use godot::classes::{Image, ProjectSettings};
use godot::prelude::*;
use orogen_core::field::{Field, Grid, LabelMap, MaskMap, ScalarMap};
use orogen_core::world::names;
use orogen_core::MapData;
use serde_json::Value as Json;

/// A `res://` or `user://` path as a file-system path; other paths unchanged.
pub fn globalize(path: &str) -> PathBuf {
    if path.starts_with("res://") || path.starts_with("user://") {
        let global = ProjectSettings::singleton().globalize_path(path);
        PathBuf::from(global.to_string())
    } else {
        PathBuf::from(path)
    }
}

/// serde's JSON data model as a Godot value (objects become dictionaries, lists arrays).
pub fn json_to_variant(value: &Json) -> Variant {
    match value {
        Json::Null => Variant::nil(),
        Json::Bool(b) => b.to_variant(),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_variant()
            } else {
                n.as_f64().unwrap_or(0.0).to_variant()
            }
        }
        Json::String(s) => GString::from(s.as_str()).to_variant(),
        Json::Array(items) => {
            let mut arr = VarArray::new();
            for item in items {
                arr.push(&json_to_variant(item));
            }
            arr.to_variant()
        }
        Json::Object(map) => {
            let mut dict = VarDictionary::new();
            for (k, v) in map {
                dict.set(&GString::from(k.as_str()).to_variant(), &json_to_variant(v));
            }
            dict.to_variant()
        }
    }
}

/// A Godot value back into serde's JSON data model. Whole-number floats become integers
/// (GDScript writes `513.0` as easily as `513`); vectors and packed arrays become lists.
pub fn variant_to_json(value: &Variant) -> Result<Json, String> {
    Ok(match value.get_type() {
        VariantType::NIL => Json::Null,
        VariantType::BOOL => Json::Bool(value.to::<bool>()),
        VariantType::INT => Json::from(value.to::<i64>()),
        VariantType::FLOAT => float_json(value.to::<f64>())?,
        VariantType::STRING | VariantType::STRING_NAME | VariantType::NODE_PATH => {
            Json::String(value.to_string())
        }
        VariantType::ARRAY => {
            let arr = value.to::<VarArray>();
            let mut out = Vec::with_capacity(arr.len());
            for item in arr.iter_shared() {
                out.push(variant_to_json(&item)?);
            }
            Json::Array(out)
        }
        VariantType::DICTIONARY => {
            let dict = value.to::<VarDictionary>();
            let mut out = serde_json::Map::new();
            for (k, v) in dict.iter_shared() {
                out.insert(k.to_string(), variant_to_json(&v)?);
            }
            Json::Object(out)
        }
        VariantType::VECTOR2 => {
            let v = value.to::<Vector2>();
            Json::Array(vec![float_json(v.x as f64)?, float_json(v.y as f64)?])
        }
        VariantType::VECTOR2I => {
            let v = value.to::<Vector2i>();
            Json::Array(vec![Json::from(v.x), Json::from(v.y)])
        }
        VariantType::PACKED_INT32_ARRAY => Json::Array(
            value
                .to::<PackedInt32Array>()
                .as_slice()
                .iter()
                .map(|&v| Json::from(v))
                .collect(),
        ),
        VariantType::PACKED_INT64_ARRAY => Json::Array(
            value
                .to::<PackedInt64Array>()
                .as_slice()
                .iter()
                .map(|&v| Json::from(v))
                .collect(),
        ),
        VariantType::PACKED_FLOAT32_ARRAY => Json::Array(
            value
                .to::<PackedFloat32Array>()
                .as_slice()
                .iter()
                .map(|&v| float_json(v as f64))
                .collect::<Result<_, _>>()?,
        ),
        VariantType::PACKED_FLOAT64_ARRAY => Json::Array(
            value
                .to::<PackedFloat64Array>()
                .as_slice()
                .iter()
                .map(|&v| float_json(v))
                .collect::<Result<_, _>>()?,
        ),
        VariantType::PACKED_STRING_ARRAY => Json::Array(
            value
                .to::<PackedStringArray>()
                .as_slice()
                .iter()
                .map(|s| Json::String(s.to_string()))
                .collect(),
        ),
        other => {
            return Err(format!(
                "a value of type {other:?} cannot be part of a recipe"
            ))
        }
    })
}

fn float_json(f: f64) -> Result<Json, String> {
    if !f.is_finite() {
        return Err(format!("{f} is not a finite number"));
    }
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Ok(Json::from(f as i64))
    } else {
        serde_json::Number::from_f64(f)
            .map(Json::Number)
            .ok_or_else(|| format!("{f} is not a finite number"))
    }
}

/// f32 values as the little-endian bytes of a `FORMAT_RF` image: one copy, straight into
/// the byte array the image takes (Godot shares it, copy on write), where going through a
/// `PackedFloat32Array` copied twice (issue #42: the live view's heights).
pub fn f32_bytes(values: &[f32]) -> PackedByteArray {
    let mut bytes = PackedByteArray::new();
    bytes.resize(values.len() * 4);
    for (out, v) in bytes.as_mut_slice().chunks_exact_mut(4).zip(values) {
        out.copy_from_slice(&v.to_le_bytes());
    }
    bytes
}

/// The pixel formats Orogen's maps use (Godot's `Image.Format`, as plain data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pixels {
    /// One 32-bit float (`FORMAT_RF`).
    Rf,
    /// One byte (`FORMAT_L8`).
    L8,
    /// Three bytes (`FORMAT_RGB8`).
    Rgb8,
    /// Four bytes (`FORMAT_RGBA8`).
    Rgba8,
    /// Two 32-bit floats (`FORMAT_RGF`).
    Rgf,
    /// Two bytes (`FORMAT_RG8`).
    Rg8,
}

impl Pixels {
    fn format(self) -> Format {
        match self {
            Pixels::Rf => Format::RF,
            Pixels::L8 => Format::L8,
            Pixels::Rgb8 => Format::RGB8,
            Pixels::Rgba8 => Format::RGBA8,
            Pixels::Rgf => Format::RGF,
            Pixels::Rg8 => Format::RG8,
        }
    }
}

/// An image's bytes as plain Rust data: made on any thread (a simulator's worker), turned
/// into a Godot `Image` on the main thread by [`ImageBytes::to_image`] (a copy).
pub struct ImageBytes {
    pub width: usize,
    pub height: usize,
    pub pixels: Pixels,
    pub bytes: Vec<u8>,
}

impl ImageBytes {
    /// f32 values (metres, m/yr, m², …) as `FORMAT_RF` bytes.
    pub fn scalar(grid: Grid, values: &[f32]) -> ImageBytes {
        let mut bytes = Vec::with_capacity(values.len() * 4);
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        ImageBytes::new(grid, Pixels::Rf, bytes)
    }

    fn new(grid: Grid, pixels: Pixels, bytes: Vec<u8>) -> ImageBytes {
        ImageBytes {
            width: grid.width,
            height: grid.height,
            pixels,
            bytes,
        }
    }

    /// Unit vectors as `RG8` bytes, `(v + 1) / 2` scaled to 0..255.
    pub fn directions(grid: Grid, dirs: &[[f32; 2]]) -> ImageBytes {
        let byte = |v: f32| ((v.clamp(-1.0, 1.0) * 0.5 + 0.5) * 255.0).round() as u8;
        let bytes = dirs.iter().flat_map(|d| [byte(d[0]), byte(d[1])]).collect();
        ImageBytes::new(grid, Pixels::Rg8, bytes)
    }

    /// The channel field and flow map a renderer draws rivers with (see
    /// `orogen_core::bake::water_display`), when `world` has a `rivers` mask and a
    /// `drainage` map; receivers on its `water_surface` (else the heights).
    pub fn river_display(world: &orogen_core::World) -> Option<(ImageBytes, ImageBytes)> {
        use orogen_core::world::names;
        let (Some(MapData::Mask(rivers)), Some(MapData::Scalar(drainage))) = (
            world.maps.get(names::RIVERS),
            world.maps.get(names::DRAINAGE),
        ) else {
            return None;
        };
        let grid = world.grid();
        if rivers.grid != grid || drainage.grid != grid {
            return None;
        }
        let surface = match world.maps.get(names::WATER_SURFACE) {
            Some(MapData::Scalar(m)) if m.grid == grid => &m.data,
            _ => &world.height.data,
        };
        let d = orogen_core::bake::water_display::water_display(
            grid,
            surface,
            &drainage.data,
            &rivers.data,
        );
        // The channels: from the smooth river curves (issue #37) where the world has them,
        // so drawn rivers follow the carved beds rather than the grid's directions.
        let from_curves = world.rivers.as_deref().and_then(|rivers| {
            let p = orogen_core::rasterise::grid_rivers::RiverCurveParams::default();
            orogen_core::stages::river_curves::channel(grid, rivers, &p).ok()
        });
        let channel = from_curves.unwrap_or(d.channel);
        Some((
            ImageBytes::scalar(grid, &channel),
            ImageBytes::directions(grid, &d.flow),
        ))
    }

    /// A map as the bytes [`map_image`] makes of it.
    pub fn map(map: &MapData) -> ImageBytes {
        match map {
            MapData::Scalar(m) => ImageBytes::scalar(m.grid, &m.data),
            MapData::Mask(m) => {
                let bytes = m.data.iter().map(|&v| if v != 0 { 255 } else { 0 });
                ImageBytes::new(m.grid, Pixels::L8, bytes.collect())
            }
            MapData::Labels(m) => {
                let mut bytes = Vec::with_capacity(m.data.len() * 3);
                for &id in &m.data {
                    let c = label_code(id);
                    bytes.extend_from_slice(&[
                        (c & 255) as u8,
                        ((c >> 8) & 255) as u8,
                        (c >> 16) as u8,
                    ]);
                }
                ImageBytes::new(m.grid, Pixels::Rgb8, bytes)
            }
            MapData::Index(m) => ImageBytes::new(m.grid, Pixels::L8, m.data.clone()),
            MapData::Rgba(m) => ImageBytes::new(
                m.grid,
                Pixels::Rgba8,
                m.data.iter().flatten().copied().collect(),
            ),
            MapData::Vector(m) => {
                let mut bytes = Vec::with_capacity(m.data.len() * 8);
                for v in &m.data {
                    bytes.extend_from_slice(&v[0].to_le_bytes());
                    bytes.extend_from_slice(&v[1].to_le_bytes());
                }
                ImageBytes::new(m.grid, Pixels::Rgf, bytes)
            }
        }
    }

    /// The Godot image (main thread).
    pub fn to_image(&self) -> Result<Gd<Image>, String> {
        let (w, h, format) = (self.width as i32, self.height as i32, self.pixels.format());
        Image::create_from_data(
            w,
            h,
            false,
            format,
            &PackedByteArray::from(self.bytes.as_slice()),
        )
        .ok_or_else(|| format!("Godot could not create a {w}x{h} {format:?} image"))
    }
}

fn image(grid: Grid, format: Format, bytes: &PackedByteArray) -> Result<Gd<Image>, String> {
    let (w, h) = (grid.width as i32, grid.height as i32);
    Image::create_from_data(w, h, false, format, bytes)
        .ok_or_else(|| format!("Godot could not create a {w}x{h} {format:?} image"))
}

/// A scalar map (metres, m/yr, m², …) as a 32-bit float `FORMAT_RF` image.
pub fn scalar_image(grid: Grid, values: &[f32]) -> Result<Gd<Image>, String> {
    image(grid, Format::RF, &f32_bytes(values))
}

/// Per-cell sRGB colours (a layered terrain's surface colour) as an `RGBA8` image with
/// mipmaps, for the terrain shader's bilinear, mipmapped sampling.
pub fn colour_image(grid: Grid, colours: &[[u8; 4]]) -> Result<Gd<Image>, String> {
    let bytes: Vec<u8> = colours.iter().flatten().copied().collect();
    let mut img = image(
        grid,
        Format::RGBA8,
        &PackedByteArray::from(bytes.as_slice()),
    )?;
    img.generate_mipmaps();
    Ok(img)
}

/// Label ids are spread over 24-bit colours by an odd multiplier (invertible modulo 2²⁴),
/// so neighbouring basins get unlike colours and the ids can still be read back exactly.
const LABEL_MUL: u32 = 0x9E_3779;
const LABEL_MASK: u32 = 0xFF_FFFF;

const fn label_inverse() -> u32 {
    // Newton's iteration for the inverse of an odd number modulo 2³²; 5 rounds suffice.
    let mut inv = LABEL_MUL;
    let mut i = 0;
    while i < 5 {
        inv = inv.wrapping_mul(2u32.wrapping_sub(LABEL_MUL.wrapping_mul(inv)));
        i += 1;
    }
    inv
}
const LABEL_INV: u32 = label_inverse();

/// The colour code of label `id` (ids above 2²⁴ wrap).
pub fn label_code(id: u32) -> u32 {
    id.wrapping_mul(LABEL_MUL) & LABEL_MASK
}

/// The label id of colour code `code`.
pub fn label_id(code: u32) -> u32 {
    code.wrapping_mul(LABEL_INV) & LABEL_MASK
}

/// A map as the image `TerrainData.maps` holds: scalars `FORMAT_RF`, masks `FORMAT_L8`
/// (0 or 255), labels `FORMAT_RGB8` (a distinct colour per id, black for 0), indices
/// `FORMAT_L8` (as they are), splat weights `FORMAT_RGBA8`, vectors `FORMAT_RGF`.
pub fn map_image(map: &MapData) -> Result<Gd<Image>, String> {
    ImageBytes::map(map).to_image()
}

/// An image as f32 values (converted to `FORMAT_RF` first when it is another format).
pub fn image_f32(img: &Gd<Image>) -> Vec<f32> {
    let bytes = if img.get_format() == Format::RF {
        img.get_data()
    } else {
        let mut copy = Image::new_gd();
        copy.copy_from(img);
        if copy.is_compressed() {
            copy.decompress();
        }
        copy.convert(Format::RF);
        copy.get_data()
    };
    bytes
        .as_slice()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The grid an image covers with cells of `dx × dy` metres.
pub fn image_grid(img: &Gd<Image>, dx: f32, dy: f32, what: &str) -> Result<Grid, String> {
    let (w, h) = (img.get_width(), img.get_height());
    if w <= 0 || h <= 0 {
        return Err(format!("{what} is empty"));
    }
    Grid::with_cells(w as usize, h as usize, dx, dy).map_err(|e| format!("{what}: {e}"))
}

/// A `TerrainData.maps` image back into map data, the inverse of [`map_image`]: `L8` →
/// mask (the exposed-material map, `material`, → index), `RGB8` → labels, `RGBA8` → RGBA
/// (splat, surface colour), `RGF` → vector, anything else → scalar.
pub fn image_map(img: &Gd<Image>, grid: Grid, name: &str) -> Result<MapData, String> {
    let (w, h) = (img.get_width() as usize, img.get_height() as usize);
    // The strata's column is one row of colours, whatever the terrain's size.
    let column =
        name == names::STRATA_COLUMN && (w, h) == (orogen_core::world::STRATA_COLUMN_TEXELS, 1);
    let grid = if column {
        Grid {
            width: w,
            height: 1,
            cell_size: 1.0,
            cell_size_y: 1.0,
        }
    } else {
        grid
    };
    if (w, h) != (grid.width, grid.height) {
        return Err(format!(
            "map `{name}` is {w}x{h}, the heights are {}x{}",
            grid.width, grid.height
        ));
    }
    match img.get_format() {
        Format::L8 if name == names::MATERIAL => Ok(MapData::Index(Field {
            grid,
            data: img.get_data().as_slice().to_vec(),
        })),
        Format::RGBA8 => Ok(MapData::Rgba(Field {
            grid,
            data: img
                .get_data()
                .as_slice()
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect(),
        })),
        Format::RGF => Ok(MapData::Vector(Field {
            grid,
            data: img
                .get_data()
                .as_slice()
                .chunks_exact(8)
                .map(|c| {
                    [
                        f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                        f32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                    ]
                })
                .collect(),
        })),
        Format::L8 => {
            let data: Vec<u8> = img
                .get_data()
                .as_slice()
                .iter()
                .map(|&v| u8::from(v != 0))
                .collect();
            MaskMap::from_vec(grid, data, name)
                .map(MapData::Mask)
                .map_err(|e| e.to_string())
        }
        Format::RGB8 => {
            let data: Vec<u32> = img
                .get_data()
                .as_slice()
                .chunks_exact(3)
                .map(|c| label_id(c[0] as u32 | (c[1] as u32) << 8 | (c[2] as u32) << 16))
                .collect();
            LabelMap::from_vec(grid, data, name)
                .map(MapData::Labels)
                .map_err(|e| e.to_string())
        }
        _ => ScalarMap::from_vec(grid, image_f32(img), name)
            .map(MapData::Scalar)
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_codes_round_trip_and_spread() {
        for id in [0u32, 1, 2, 3, 255, 256, 65_535, 1 << 20, LABEL_MASK] {
            assert_eq!(label_id(label_code(id)), id, "id {id}");
        }
        // Neighbouring ids must not get near-identical colours.
        let (a, b) = (label_code(1), label_code(2));
        assert!(
            (a & 255).abs_diff(b & 255) > 16 || ((a >> 16) & 255).abs_diff((b >> 16) & 255) > 16
        );
    }

    #[test]
    fn whole_floats_become_integers() {
        assert_eq!(float_json(513.0).unwrap(), Json::from(513));
        assert_eq!(float_json(0.5).unwrap(), serde_json::json!(0.5));
        assert!(float_json(f64::NAN).is_err());
    }
}
