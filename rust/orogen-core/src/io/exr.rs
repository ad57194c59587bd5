//! Single-channel 32-bit float OpenEXR.
//!
//! Written with one channel named `R` (f32, ZIP compression, increasing scan lines),
//! which Godot's `Image.load_exr` reads as `FORMAT_RF` and Terrain3D imports as
//! heights. The cell size rides along in a custom `orogenCellSize` attribute.

use std::path::Path;

use ::exr::prelude::*;

use crate::error::{OrogenError, Result};
use crate::field::{Field, Grid, ScalarMap};

/// Name of the custom attribute that stores the cell size in metres.
const CELL_SIZE_ATTRIBUTE: &str = "orogenCellSize";
/// dy of non-square cells (absent for square ones, whose files are as before).
const CELL_SIZE_Y_ATTRIBUTE: &str = "orogenCellSizeY";

/// Writes `map` as a single-channel (`R`) 32-bit float EXR, atomically.
pub fn write_exr(path: &Path, map: &ScalarMap) -> Result<()> {
    super::files::write_atomic(path, |out| encode_exr(map, out, path))
}

/// Encodes `map` into `out` (which must be seekable), naming `path` in errors.
pub(crate) fn encode_exr(
    map: &ScalarMap,
    out: &mut (impl std::io::Write + std::io::Seek),
    path: &Path,
) -> Result<()> {
    encode_channels(map.grid, vec![("R", map.data.clone())], out, path)
}

/// Encodes a two-channel map (`R` and `G`, e.g. a velocity's x and y) into `out`.
pub(crate) fn encode_exr2(
    map: &Field<[f32; 2]>,
    out: &mut (impl std::io::Write + std::io::Seek),
    path: &Path,
) -> Result<()> {
    let r = map.data.iter().map(|v| v[0]).collect();
    let g = map.data.iter().map(|v| v[1]).collect();
    encode_channels(map.grid, vec![("R", r), ("G", g)], out, path)
}

/// Encodes f32 channels of one grid into `out`.
fn encode_channels(
    grid: Grid,
    channels: Vec<(&str, Vec<f32>)>,
    out: &mut (impl std::io::Write + std::io::Seek),
    path: &Path,
) -> Result<()> {
    let size = (grid.width, grid.height);
    let channels: Vec<AnyChannel<FlatSamples>> = channels
        .into_iter()
        .map(|(name, data)| AnyChannel::new(name, FlatSamples::F32(data)))
        .collect();
    let encoding = Encoding {
        compression: Compression::ZIP16,
        blocks: Blocks::ScanLines,
        line_order: LineOrder::Increasing,
    };
    // The row spacing of non-square cells goes into the layer's attributes, the cell size
    // into the image's: each is a HashMap written in its own (random) order, so two custom
    // attributes in one came out in either order, run to run (fuzz finding #39.6).
    let mut layer_attributes = LayerAttributes::default();
    if !grid.is_square() {
        layer_attributes.other.insert(
            Text::from(CELL_SIZE_Y_ATTRIBUTE),
            AttributeValue::F32(grid.cell_size_y),
        );
    }
    let layer = Layer::new(
        size,
        layer_attributes,
        encoding,
        AnyChannels::sort(SmallVec::from_vec(channels)),
    );
    let mut image = Image::from_layer(layer);
    image.attributes.other.insert(
        Text::from(CELL_SIZE_ATTRIBUTE),
        AttributeValue::F32(grid.cell_size),
    );
    image
        .write()
        .to_buffered(out)
        .map_err(|e| OrogenError::bad_file(path, format!("cannot encode EXR: {e}")))
}

/// Reads an EXR's first layer as a float map: the channel `R`, else `Y`, else the only
/// channel. The cell size is the file's `orogenCellSize` attribute, else 1.
///
/// Errors name `path`: missing or unreadable file, deep data, no usable channel, a side
/// over the size limit, NaN or infinite values (the first such cell is named).
pub fn read_exr(path: &Path) -> Result<ScalarMap> {
    read_exr_with_nan(path, false)
}

/// The cell size an EXR written by Orogen records, `(dx, dy)` metres, reading only its
/// header; `None` for an EXR without it (from another program).
pub fn recorded_cell_size(path: &Path) -> Result<Option<(f32, f32)>> {
    super::files::check_regular_file(path)?;
    let meta = ::exr::meta::MetaData::read_from_file(path, false)
        .map_err(|e| OrogenError::bad_file(path, format!("cannot read EXR header: {e}")))?;
    let Some(header) = meta.headers.first() else {
        return Ok(None);
    };
    let get = |name: &str| {
        let key = Text::from(name);
        match header
            .shared_attributes
            .other
            .get(&key)
            .or_else(|| header.own_attributes.other.get(&key))
        {
            Some(AttributeValue::F32(c)) if c.is_finite() && *c > 0.0 => Some(*c),
            _ => None,
        }
    };
    Ok(get(CELL_SIZE_ATTRIBUTE).map(|dx| (dx, get(CELL_SIZE_Y_ATTRIBUTE).unwrap_or(dx))))
}

/// [`read_exr`]; with `allow_nan`, NaN samples are kept (a DEM's nodata, see
/// `HeightmapSource::nodata`) and only infinities are errors.
pub fn read_exr_with_nan(path: &Path, allow_nan: bool) -> Result<ScalarMap> {
    super::files::check_regular_file(path)?;
    // Check the header's size before any pixel is allocated.
    let meta = ::exr::meta::MetaData::read_from_file(path, false)
        .map_err(|e| OrogenError::bad_file(path, format!("cannot read EXR header: {e}")))?;
    let header = meta
        .headers
        .first()
        .ok_or_else(|| OrogenError::bad_file(path, "has no image layer"))?;
    super::files::check_side_limits(
        path,
        header.layer_size.width() as u64,
        header.layer_size.height() as u64,
    )?;
    let image = ::exr::image::read::read_first_flat_layer_from_file(path)
        .map_err(|e| OrogenError::bad_file(path, format!("cannot read EXR: {e}")))?;
    let layer = image.layer_data;
    let key = Text::from(CELL_SIZE_ATTRIBUTE);
    let stored = image
        .attributes
        .other
        .get(&key)
        .or_else(|| layer.attributes.other.get(&key));
    let cell_size = match stored {
        Some(AttributeValue::F32(c)) if c.is_finite() && *c > 0.0 => *c,
        _ => 1.0,
    };
    let key_y = Text::from(CELL_SIZE_Y_ATTRIBUTE);
    let cell_size_y = match image
        .attributes
        .other
        .get(&key_y)
        .or_else(|| layer.attributes.other.get(&key_y))
    {
        Some(AttributeValue::F32(c)) if c.is_finite() && *c > 0.0 => *c,
        _ => cell_size,
    };
    let channels = &layer.channel_data.list;
    let pick = |name: &str| channels.iter().find(|c| c.name == *name);
    let channel = pick("R")
        .or_else(|| pick("Y"))
        .or_else(|| {
            if channels.len() == 1 {
                channels.first()
            } else {
                None
            }
        })
        .ok_or_else(|| {
            let names: Vec<String> = channels.iter().map(|c| c.name.to_string()).collect();
            OrogenError::bad_file(
                path,
                format!("has no `R` or `Y` channel (channels: {})", names.join(", ")),
            )
        })?;
    let data: Vec<f32> = match &channel.sample_data {
        FlatSamples::F16(v) => v.iter().map(|s| s.to_f32()).collect(),
        FlatSamples::F32(v) => v.clone(),
        FlatSamples::U32(v) => v.iter().map(|&s| s as f32).collect(),
    };
    let (w, h) = (layer.size.width(), layer.size.height());
    if let Some(i) = data
        .iter()
        .position(|v| !(v.is_finite() || (allow_nan && v.is_nan())))
    {
        return Err(OrogenError::bad_file(
            path,
            format!(
                "has a non-finite value ({}) at cell ({}, {})",
                data[i],
                i % w,
                i / w
            ),
        ));
    }
    let grid = Grid::with_cells(w, h, cell_size, cell_size_y)?;
    ScalarMap::from_vec(grid, data, &path.display().to_string())
}
