//! Loading an initial terrain from a heightmap file: EXR, 8/16-bit grayscale PNG,
//! R16 or raw f32.
//!
//! ```ron
//! terrain: Heightmap(path: "dem.png", height_range: (0.0, 2500.0), cell_size: 30.0),
//! terrain: Heightmap(path: "dem.r16", raw_size: (1025, 1025), height_range: (0.0, 800.0)),
//! terrain: Heightmap(path: "dem.exr", fit: Resample),
//! terrain: Heightmap(path: "dem.raw", raw_size: (1201, 1201), nodata: Some(-9999.0),
//!     cell_size: (74.6, 92.5)),
//! ```
//!
//! Nodata: cells whose stored value equals `nodata` (or any NaN when `nodata` is NaN) are
//! outlets, where water leaves the map. They start at the lowest valid height (so they are
//! base level and write as that height in every height output), are never filled as lakes,
//! never drain into their neighbours, and are held at that height by every stage; the
//! `nodata` map (1 = nodata) marks them for renderers (Terrain3D holes).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{check_finite, OrogenError, Result};
use crate::field::{CellSize, Grid, Heightfield, ScalarMap, MAX_CELL_SIZE, MAX_SIDE};

/// A heightmap file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Format {
    /// OpenEXR, first layer, channel `R` (else `Y`, else the only one); values in metres.
    Exr,
    /// 8- or 16-bit grayscale PNG, normalised: black → `height_range.0`, white → `.1`.
    Png16,
    /// Headerless little-endian u16 (Terrain3D / HTerrain R16), normalised like PNG.
    R16,
    /// Headerless little-endian f32, values in metres.
    RawF32,
}

impl Format {
    /// The format implied by a file extension (`exr`, `png`, `r16`, `raw`/`r32`/`f32`).
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "exr" => Some(Format::Exr),
            "png" => Some(Format::Png16),
            "r16" => Some(Format::R16),
            "raw" | "r32" | "f32" => Some(Format::RawF32),
            _ => None,
        }
    }

    /// True for headerless formats that need `raw_size`.
    pub fn is_raw(self) -> bool {
        matches!(self, Format::R16 | Format::RawF32)
    }

    /// True for formats whose samples are normalised to `[0, 1]` (PNG, R16).
    pub fn is_normalised(self) -> bool {
        matches!(self, Format::Png16 | Format::R16)
    }
}

/// How the file's size relates to the recipe's `size`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Fit {
    /// The world takes the file's own width × height (any shape, not only 2ⁿ+1).
    #[default]
    UseImageSize,
    /// Bilinear resample (corner-aligned) to the recipe's `size`.
    Resample,
}

/// A heightmap the user already has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeightmapSource {
    /// File path; relative paths are relative to the recipe's folder. Required.
    pub path: String,
    /// File format. Default: from the extension (`.exr`, `.png`, `.r16`,
    /// `.raw`/`.r32`/`.f32` = raw f32).
    pub format: Option<Format>,
    /// `(width, height)` in samples of a headerless R16 / raw f32 file. Required for
    /// those formats; the file size must match exactly. Default: none.
    pub raw_size: Option<(u32, u32)>,
    /// Metres that black (0) and white (max) map to, for the normalised formats
    /// (PNG, R16). Default: `(0.0, 1000.0)`.
    pub height_range: (f32, f32),
    /// Factor applied to the values of the float formats (EXR, raw f32), e.g. 0.3048
    /// for feet. Dimensionless. Default: 1.0.
    pub scale: f32,
    /// Cell size in metres, one number or `(dx, dy)`; overrides the recipe's `cell_size`.
    /// Default: the recipe's.
    pub cell_size: Option<CellSize>,
    /// `UseImageSize` (default) or `Resample` to the recipe's `size`.
    pub fit: Fit,
    /// The file's nodata value, e.g. `Some(-9999.0)`, or `Some(NaN)` for float files
    /// whose holes are NaN. Compared with the value as stored: the float of an EXR or raw
    /// f32 file (before `scale`), the 16-bit sample 0..=65535 of an R16 or PNG (an 8-bit
    /// PNG's value × 257). Those cells are outlets (see the module docs). Default: none,
    /// and a NaN in the file is an error.
    #[serde(with = "nodata_serde")]
    pub nodata: Option<f32>,
}

/// `nodata` in serde: a number, or NaN. NaN is written as the string `"NaN"` by formats
/// that have no NaN (JSON, which `--set` goes through, would otherwise turn it into
/// `null`, i.e. no nodata), and read back from `NaN` (RON's float literal) or `"NaN"`.
mod nodata_serde {
    use serde::{de, Deserializer, Serialize, Serializer};

    struct Value(f32);

    impl Serialize for Value {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            if self.0.is_nan() {
                s.serialize_str("NaN")
            } else {
                s.serialize_f32(self.0)
            }
        }
    }

    impl<'de> serde::Deserialize<'de> for Value {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl de::Visitor<'_> for V {
                type Value = Value;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a number, or NaN")
                }
                fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
                    Ok(Value(v as f32))
                }
                fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
                    Ok(Value(v as f32))
                }
                fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
                    Ok(Value(v as f32))
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
                    match v {
                        "NaN" | "nan" => Ok(Value(f32::NAN)),
                        _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                    }
                }
            }
            d.deserialize_any(V)
        }
    }

    pub fn serialize<S: Serializer>(v: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
        v.map(Value).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
        let v: Option<Value> = serde::Deserialize::deserialize(d)?;
        Ok(v.map(|v| v.0))
    }
}

impl Default for HeightmapSource {
    fn default() -> Self {
        HeightmapSource {
            path: String::new(),
            format: None,
            raw_size: None,
            height_range: (0.0, 1000.0),
            scale: 1.0,
            cell_size: None,
            fit: Fit::UseImageSize,
            nodata: None,
        }
    }
}

impl HeightmapSource {
    /// The explicit format, else the one implied by the extension; `field` prefixes errors.
    pub fn resolved_format(&self, field: &str) -> Result<Format> {
        match self.format {
            Some(f) => Ok(f),
            None => Format::from_extension(Path::new(&self.path)).ok_or_else(|| {
                OrogenError::invalid(
                    format!("{field}.format"),
                    format!(
                        "cannot tell the format of `{}` from its extension; use .exr, .png, \
                         .r16, .raw/.r32/.f32 or set format: Exr | Png16 | R16 | RawF32",
                        self.path
                    ),
                )
            }),
        }
    }

    /// Checks fields; `field` prefixes error names (e.g. `terrain.Heightmap`).
    pub fn validate(&self, field: &str) -> Result<()> {
        if self.path.is_empty() {
            return Err(OrogenError::invalid(format!("{field}.path"), "is empty"));
        }
        let format = self.resolved_format(field)?;
        match self.raw_size {
            Some((w, h)) => {
                for (name, side) in [("0 (width)", w), ("1 (height)", h)] {
                    if side == 0 || side as usize > MAX_SIDE {
                        return Err(OrogenError::invalid(
                            format!("{field}.raw_size.{name}"),
                            format!("must be between 1 and {MAX_SIDE}, got {side}"),
                        ));
                    }
                }
            }
            None if format.is_raw() => {
                return Err(OrogenError::invalid(
                    format!("{field}.raw_size"),
                    format!("is required for a {format:?} file, e.g. raw_size: (1025, 1025)"),
                ))
            }
            None => {}
        }
        let (lo, hi) = self.height_range;
        check_finite(&format!("{field}.height_range.0"), lo as f64)?;
        check_finite(&format!("{field}.height_range.1"), hi as f64)?;
        check_finite(&format!("{field}.scale"), self.scale as f64)?;
        if let Some(c) = self.cell_size {
            c.validate(&format!("{field}.cell_size"), MAX_CELL_SIZE)?;
        }
        if let Some(v) = self.nodata {
            if v.is_infinite() {
                return Err(OrogenError::invalid(
                    format!("{field}.nodata"),
                    format!("must be a number or NaN, got {v}"),
                ));
            }
        }
        Ok(())
    }

    /// Reads the file's samples as stored: `[0, 1]` for normalised formats, the raw
    /// values for float formats. Relative paths resolve against `base_dir`.
    pub fn read_samples(&self, base_dir: &Path) -> Result<(Format, ScalarMap)> {
        let format = self.resolved_format("terrain.Heightmap")?;
        let path = super::files::resolve_path(base_dir, &self.path);
        let raw_size = || {
            self.raw_size.ok_or_else(|| {
                OrogenError::invalid("terrain.Heightmap.raw_size", "is required for raw files")
            })
        };
        let map = match format {
            Format::Exr => super::exr::read_exr_with_nan(&path, self.nan_is_nodata())?,
            Format::Png16 => super::gray::read_gray_image(&path)?,
            Format::R16 => {
                let (w, h) = raw_size()?;
                super::raw::read_r16(&path, w, h)?
            }
            Format::RawF32 => {
                let (w, h) = raw_size()?;
                super::raw::read_raw_f32_with_nan(&path, w, h, self.nan_is_nodata())?
            }
        };
        Ok((format, map))
    }

    /// `(width, height)` in samples, from the file's header only (or `raw_size`): what the
    /// memory estimate needs before anything is read.
    pub fn dimensions(&self, base_dir: &Path) -> Result<(usize, usize)> {
        let format = self.resolved_format("terrain.Heightmap")?;
        let path = super::files::resolve_path(base_dir, &self.path);
        match format {
            Format::Exr => {
                super::files::check_regular_file(&path)?;
                let meta = ::exr::meta::MetaData::read_from_file(&path, false).map_err(|e| {
                    OrogenError::bad_file(&path, format!("cannot read EXR header: {e}"))
                })?;
                let header = meta
                    .headers
                    .first()
                    .ok_or_else(|| OrogenError::bad_file(&path, "has no image layer"))?;
                Ok((header.layer_size.width(), header.layer_size.height()))
            }
            Format::Png16 => {
                let (w, h) = super::gray::image_dimensions(&path)?;
                Ok((w as usize, h as usize))
            }
            Format::R16 | Format::RawF32 => self
                .raw_size
                .map(|(w, h)| (w as usize, h as usize))
                .ok_or_else(|| {
                    OrogenError::invalid("terrain.Heightmap.raw_size", "is required for raw files")
                }),
        }
    }

    /// True when `nodata` is NaN: NaN samples are nodata, not errors.
    fn nan_is_nodata(&self) -> bool {
        self.nodata.is_some_and(f32::is_nan)
    }

    /// Loads the heights in metres, nodata cells (if any) at the lowest valid height; see
    /// [`HeightmapSource::load_with_nodata`] for their mask.
    pub fn load(&self, grid: Grid, base_dir: &Path) -> Result<Heightfield> {
        Ok(self.load_with_nodata(grid, base_dir)?.0)
    }

    /// Loads the heights in metres and, when `nodata` is set and some cell has it, the
    /// nodata mask (true = nodata), on the same grid. Nodata cells are set to the lowest
    /// valid height. `grid` is the recipe's grid: with [`Fit::UseImageSize`] only its cell
    /// size is used (unless `cell_size` overrides it); with [`Fit::Resample`] the heights
    /// are resampled to its size (a cell is nodata where the resampled mask is ≥ ½).
    pub fn load_with_nodata(
        &self,
        grid: Grid,
        base_dir: &Path,
    ) -> Result<(Heightfield, Option<Vec<bool>>)> {
        self.validate("terrain.Heightmap")?;
        let (format, samples) = self.read_samples(base_dir)?;
        let cells = self
            .cell_size
            .unwrap_or(CellSize::Rect(grid.dx(), grid.dy()));
        let (lo, hi) = self.height_range;
        let mask: Option<Vec<bool>> = self.nodata.map(|nd| {
            samples
                .data
                .iter()
                .map(|&v| {
                    if nd.is_nan() {
                        v.is_nan()
                    } else if format.is_normalised() {
                        (v as f64 * 65535.0).round() == nd as f64
                    } else {
                        v == nd
                    }
                })
                .collect()
        });
        let mask = mask.filter(|m| m.iter().any(|&b| b));
        let is_nodata = |i: usize| mask.as_ref().is_some_and(|m| m[i]);
        let mut data: Vec<f32> = if format.is_normalised() {
            samples.data.iter().map(|&t| lo + t * (hi - lo)).collect()
        } else {
            samples.data.iter().map(|&v| v * self.scale).collect()
        };
        if let Some(i) = (0..data.len()).find(|&i| !is_nodata(i) && !data[i].is_finite()) {
            return Err(OrogenError::invalid(
                "terrain.Heightmap.scale",
                format!(
                    "scaling gives a non-finite height at cell ({}, {})",
                    i % samples.width(),
                    i / samples.width()
                ),
            ));
        }
        let mut base = f32::NAN;
        if let Some(m) = &mask {
            base = data
                .iter()
                .zip(m)
                .filter(|(_, &nd)| !nd)
                .map(|(&v, _)| v)
                .fold(f32::INFINITY, f32::min);
            if !base.is_finite() {
                return Err(OrogenError::invalid(
                    "terrain.Heightmap.nodata",
                    format!("every cell of `{}` is nodata", self.path),
                ));
            }
            for (v, &nd) in data.iter_mut().zip(m) {
                if nd {
                    *v = base;
                }
            }
        }
        let own = cells.grid(samples.width(), samples.height())?;
        let heights = Heightfield::from_vec(own, data, "terrain.Heightmap")?;
        Ok(match self.fit {
            Fit::UseImageSize => (heights, mask),
            Fit::Resample => {
                let target = cells.grid(grid.width, grid.height)?;
                let mask = mask.map(|m| {
                    let as_f32 = ScalarMap {
                        grid: own,
                        data: m.iter().map(|&b| f32::from(u8::from(b))).collect(),
                    };
                    as_f32
                        .resampled(target)
                        .data
                        .iter()
                        .map(|&v| v >= 0.5)
                        .collect()
                });
                let mut heights = heights.resampled(target);
                // Resampled nodata cells sit at the base height like the file's.
                if let Some(m) = &mask {
                    for (v, &nd) in heights.data.iter_mut().zip(m) {
                        if nd {
                            *v = base;
                        }
                    }
                }
                (heights, mask)
            }
        })
    }
}
