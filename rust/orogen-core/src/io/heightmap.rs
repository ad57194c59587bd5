//! Loading an initial terrain from a heightmap file: EXR, 8/16-bit grayscale PNG,
//! R16 or raw f32.
//!
//! ```ron
//! terrain: Heightmap(path: "dem.png", height_range: (0.0, 2500.0), cell_size: 30.0),
//! terrain: Heightmap(path: "dem.r16", raw_size: (1025, 1025), height_range: (0.0, 800.0)),
//! terrain: Heightmap(path: "dem.exr", fit: Resample),
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{check_finite, check_positive, OrogenError, Result};
use crate::field::{Grid, Heightfield, ScalarMap, MAX_SIDE};

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
    /// Cell size in metres; overrides the recipe's `cell_size`. Default: the recipe's.
    pub cell_size: Option<f32>,
    /// `UseImageSize` (default) or `Resample` to the recipe's `size`.
    pub fit: Fit,
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
            check_positive(&format!("{field}.cell_size"), c as f64)?;
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
            Format::Exr => super::exr::read_exr(&path)?,
            Format::Png16 => super::gray::read_gray_image(&path)?,
            Format::R16 => {
                let (w, h) = raw_size()?;
                super::raw::read_r16(&path, w, h)?
            }
            Format::RawF32 => {
                let (w, h) = raw_size()?;
                super::raw::read_raw_f32(&path, w, h)?
            }
        };
        Ok((format, map))
    }

    /// Loads the heights in metres. `grid` is the recipe's grid: with
    /// [`Fit::UseImageSize`] only its cell size is used (unless `cell_size` overrides
    /// it); with [`Fit::Resample`] the heights are resampled to its size.
    pub fn load(&self, grid: Grid, base_dir: &Path) -> Result<Heightfield> {
        self.validate("terrain.Heightmap")?;
        let (format, samples) = self.read_samples(base_dir)?;
        let cell_size = self.cell_size.unwrap_or(grid.cell_size);
        let (lo, hi) = self.height_range;
        let data: Vec<f32> = if format.is_normalised() {
            samples.data.iter().map(|&t| lo + t * (hi - lo)).collect()
        } else {
            samples.data.iter().map(|&v| v * self.scale).collect()
        };
        if let Some(i) = data.iter().position(|v| !v.is_finite()) {
            return Err(OrogenError::invalid(
                "terrain.Heightmap.scale",
                format!(
                    "scaling gives a non-finite height at cell ({}, {})",
                    i % samples.width(),
                    i / samples.width()
                ),
            ));
        }
        let own = Grid::new(samples.width(), samples.height(), cell_size)?;
        let heights = Heightfield::from_vec(own, data, "terrain.Heightmap")?;
        Ok(match self.fit {
            Fit::UseImageSize => heights,
            Fit::Resample => heights.resampled(Grid::new(grid.width, grid.height, cell_size)?),
        })
    }
}
