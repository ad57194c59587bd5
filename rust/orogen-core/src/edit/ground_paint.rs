//! The ground materials painted by hand: per cell, a painted weight (0–255) for each of the
//! eight ground layers ([`GROUND_MATERIALS`]: rock, cliff, scree, soil, grass, dry grass,
//! sand, snow), summing to at most 255. Their sum is the paint's strength `s` there: the
//! ground shown and exported is `(1 − s) · automatic + painted / 255`
//! ([`GroundPaint::over`]), so painting layer `L` with strength `s` gives
//! `mix(automatic, L, s)`, and a cell never painted keeps the simulation's weights.
//!
//! A [`GroundBrush`] dab paints a layer (moves the cell's painted weights towards that layer
//! alone, at full strength) or erases (moves them towards none); within a stroke
//! ([`GroundStroke`]) a cell moves at most as far as the strongest single dab over it, so a
//! slow drag and a quick one paint the same.

use crate::error::{OrogenError, Result};
use crate::field::Grid;
use crate::generators::ground::GROUND_MATERIALS;

/// Ground layers, in the texture arrays' order.
pub const LAYERS: usize = GROUND_MATERIALS.len();

/// The painted weights of a terrain, one `[u8; 8]` per cell, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct GroundPaint {
    pub grid: Grid,
    pub data: Vec<[u8; LAYERS]>,
}

impl GroundPaint {
    /// Nothing painted: every cell keeps the automatic weights.
    pub fn new(grid: Grid) -> Self {
        GroundPaint {
            grid,
            data: vec![[0; LAYERS]; grid.len()],
        }
    }

    /// From 8 bytes per cell (as [`GroundPaint::to_bytes`] gives them). Errors name `ground`:
    /// a length that is not 8 per cell of `grid`, or a cell whose weights sum past 255.
    pub fn from_bytes(grid: Grid, bytes: &[u8]) -> Result<Self> {
        if bytes.len() != grid.len() * LAYERS {
            return Err(OrogenError::invalid(
                "ground",
                format!(
                    "{} bytes, but a {}×{} terrain takes {LAYERS} per cell = {}",
                    bytes.len(),
                    grid.width,
                    grid.height,
                    grid.len() * LAYERS
                ),
            ));
        }
        let mut data = Vec::with_capacity(grid.len());
        for (i, c) in bytes.chunks_exact(LAYERS).enumerate() {
            let cell: [u8; LAYERS] = c.try_into().expect("chunks of LAYERS");
            let sum: u32 = cell.iter().map(|&v| v as u32).sum();
            if sum > 255 {
                return Err(OrogenError::invalid(
                    "ground",
                    format!(
                        "cell {i} ({}, {}) has painted weights {cell:?} summing to {sum}; \
                         they must sum to at most 255",
                        i % grid.width,
                        i / grid.width
                    ),
                ));
            }
            data.push(cell);
        }
        Ok(GroundPaint { grid, data })
    }

    /// 8 bytes per cell, row-major.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.data.iter().flatten().copied().collect()
    }

    /// Whether no cell is painted.
    pub fn is_blank(&self) -> bool {
        self.data.iter().all(|c| c.iter().all(|&v| v == 0))
    }

    /// The paint's strength at cell `i`, 0–1.
    pub fn strength(&self, i: usize) -> f32 {
        self.data[i].iter().map(|&v| v as f32).sum::<f32>() / 255.0
    }

    /// The weights `auto` (summing to 1) at cell `i` with the paint over them.
    pub fn over(&self, i: usize, auto: [f32; LAYERS]) -> [f32; LAYERS] {
        let keep = 1.0 - self.strength(i).min(1.0);
        let p = self.data[i];
        std::array::from_fn(|k| auto[k] * keep + p[k] as f32 / 255.0)
    }

    /// Layers 0–3 and 4–7 as two RGBA8 planes (the shader's `ground_paint_a`, `_b`).
    pub fn planes(&self) -> (Vec<[u8; 4]>, Vec<[u8; 4]>) {
        let a = self.data.iter().map(|c| [c[0], c[1], c[2], c[3]]).collect();
        let b = self.data.iter().map(|c| [c[4], c[5], c[6], c[7]]).collect();
        (a, b)
    }

    /// The paint on `grid` (nearest cell, by position across the map).
    pub fn resampled(&self, grid: Grid) -> Self {
        let (sw, sh) = (self.grid.width, self.grid.height);
        let pick = |v: usize, n: usize, s: usize| {
            if n <= 1 {
                0
            } else {
                ((v as f64 * (s - 1) as f64 / (n - 1) as f64).round() as usize).min(s - 1)
            }
        };
        let data = (0..grid.len())
            .map(|i| {
                let (x, y) = (i % grid.width, i / grid.width);
                self.data[pick(y, grid.height, sh) * sw + pick(x, grid.width, sw)]
            })
            .collect();
        GroundPaint { grid, data }
    }
}

/// What a ground dab does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroundTool {
    /// Paint layer `0..8` ([`GROUND_MATERIALS`]).
    Paint(usize),
    /// Take paint away, back towards the automatic weights.
    Erase,
}

/// A brush over the ground paint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundBrush {
    pub tool: GroundTool,
    /// Radius, metres (> 0).
    pub radius: f32,
    /// How far one dab moves a cell at the brush's centre, 0–1 (1: all the way).
    pub strength: f32,
    /// Share of the radius over which the brush fades out, 0–1.
    pub falloff: f32,
}

/// A stroke under way: the paint when it began and how far its dabs have moved each cell.
#[derive(Clone, Debug)]
pub struct GroundStroke {
    base: Vec<[u8; LAYERS]>,
    reach: Vec<f32>,
    tool: Option<GroundTool>,
}

impl GroundStroke {
    /// A stroke starting on `paint` as it is now.
    pub fn begin(paint: &GroundPaint) -> Self {
        GroundStroke {
            base: paint.data.clone(),
            reach: vec![0.0; paint.data.len()],
            tool: None,
        }
    }
}

impl GroundBrush {
    /// Checks the settings; errors name the field.
    pub fn validate(&self) -> Result<()> {
        if let GroundTool::Paint(l) = self.tool {
            if l >= LAYERS {
                return Err(OrogenError::invalid(
                    "layer",
                    format!(
                        "{l} is not a ground layer; the layers are 0..{} ({})",
                        LAYERS - 1,
                        GROUND_MATERIALS.join(", ")
                    ),
                ));
            }
        }
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(OrogenError::invalid(
                "radius",
                format!("must be > 0 metres, got {}", self.radius),
            ));
        }
        for (name, v) in [("strength", self.strength), ("falloff", self.falloff)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(OrogenError::invalid(
                    name,
                    format!("must be within 0–1, got {v}"),
                ));
            }
        }
        Ok(())
    }

    /// The dab's weight at `d` metres from its centre (as [`super::Brush::weight`]).
    pub fn weight(&self, d: f32) -> f32 {
        super::Brush {
            radius: self.radius,
            falloff: self.falloff,
            ..Default::default()
        }
        .weight(d)
    }

    /// One dab centred at `centre` (metres from the first cell), part of `stroke` if given
    /// (begun on this paint; a stroke of another size or tool is started afresh). Returns
    /// the cells it may have changed as `[x0, y0, x1, y1]`, ends exclusive (None: it missed).
    pub fn dab(
        &self,
        paint: &mut GroundPaint,
        centre: [f32; 2],
        stroke: Option<&mut GroundStroke>,
    ) -> Result<Option<[usize; 4]>> {
        self.validate()?;
        if !(centre[0].is_finite() && centre[1].is_finite()) {
            return Err(OrogenError::invalid(
                "centre",
                format!("must be finite, got {centre:?}"),
            ));
        }
        let grid = paint.grid;
        let mut fresh;
        let stroke = match stroke {
            Some(s)
                if s.base.len() == paint.data.len() && s.tool.is_none_or(|t| t == self.tool) =>
            {
                s
            }
            Some(s) => {
                *s = GroundStroke::begin(paint);
                s
            }
            None => {
                fresh = GroundStroke::begin(paint);
                &mut fresh
            }
        };
        stroke.tool = Some(self.tool);
        let (dx, dy) = (grid.dx(), grid.dy());
        let (w, h) = (grid.width as i64, grid.height as i64);
        let lo = |c: f32, s: f32| ((c - self.radius) / s).floor() as i64;
        let hi = |c: f32, s: f32| ((c + self.radius) / s).ceil() as i64 + 1;
        let x0 = lo(centre[0], dx).clamp(0, w) as usize;
        let x1 = hi(centre[0], dx).clamp(0, w) as usize;
        let y0 = lo(centre[1], dy).clamp(0, h) as usize;
        let y1 = hi(centre[1], dy).clamp(0, h) as usize;
        if x0 >= x1 || y0 >= y1 {
            return Ok(None);
        }
        for y in y0..y1 {
            for x in x0..x1 {
                let d = ((x as f32 * dx - centre[0]).powi(2) + (y as f32 * dy - centre[1]).powi(2))
                    .sqrt();
                let a = self.weight(d) * self.strength;
                let i = y * grid.width + x;
                if a <= stroke.reach[i] {
                    continue;
                }
                stroke.reach[i] = a;
                paint.data[i] = moved(stroke.base[i], self.tool, a);
            }
        }
        Ok(Some([x0, y0, x1, y1]))
    }
}

/// `base` moved a share `a` of the way to the tool's target (layer `L` alone at 255, or
/// nothing), in bytes that never sum past 255.
fn moved(base: [u8; LAYERS], tool: GroundTool, a: f32) -> [u8; LAYERS] {
    let keep = 1.0 - a;
    let mut out = base.map(|v| (v as f32 * keep).floor() as u8);
    if let GroundTool::Paint(l) = tool {
        let others: u32 = (0..LAYERS).filter(|&k| k != l).map(|k| out[k] as u32).sum();
        let target = (base[l] as f32 * keep + 255.0 * a).round() as u32;
        out[l] = target.min(255 - others) as u8;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        Grid::new(21, 21, 10.0).unwrap()
    }

    fn brush(tool: GroundTool) -> GroundBrush {
        GroundBrush {
            tool,
            radius: 50.0,
            strength: 1.0,
            falloff: 0.5,
        }
    }

    #[test]
    fn a_full_dab_paints_the_layer_at_its_centre_and_nothing_past_its_radius() {
        let mut p = GroundPaint::new(grid());
        brush(GroundTool::Paint(6))
            .dab(&mut p, [100.0, 100.0], None)
            .unwrap();
        let centre = p.grid.index(10, 10);
        assert_eq!(p.data[centre], [0, 0, 0, 0, 0, 0, 255, 0]);
        assert_eq!(
            p.over(centre, [0.5, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0])[6],
            1.0
        );
        // 60 m from the centre (radius 50 m): untouched.
        assert_eq!(p.data[p.grid.index(16, 10)], [0; LAYERS]);
        // Within the falloff: partly painted, the automatic weights kept for the rest.
        let i = p.grid.index(14, 10); // 40 m out
        let s = p.strength(i);
        assert!(s > 0.0 && s < 1.0, "{s}");
        let w = p.over(i, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{w:?}");
        assert!((w[0] - (1.0 - s)).abs() < 1e-5 && (w[6] - s).abs() < 1e-5);
    }

    #[test]
    fn a_stroke_paints_no_more_than_its_strongest_dab_and_erase_takes_it_back() {
        let mut p = GroundPaint::new(grid());
        let b = GroundBrush {
            strength: 0.4,
            ..brush(GroundTool::Paint(2))
        };
        let mut stroke = GroundStroke::begin(&p);
        for _ in 0..10 {
            b.dab(&mut p, [100.0, 100.0], Some(&mut stroke)).unwrap();
        }
        let centre = p.grid.index(10, 10);
        assert_eq!(p.data[centre][2], 102); // 0.4 · 255, once
                                            // Outside a stroke, dabs add up.
        b.dab(&mut p, [100.0, 100.0], None).unwrap();
        assert!(p.data[centre][2] > 102);
        // Another layer over it replaces it in proportion; sums stay within 255.
        brush(GroundTool::Paint(7))
            .dab(&mut p, [100.0, 100.0], None)
            .unwrap();
        assert_eq!(p.data[centre], [0, 0, 0, 0, 0, 0, 0, 255]);
        for c in &p.data {
            assert!(c.iter().map(|&v| v as u32).sum::<u32>() <= 255, "{c:?}");
        }
        brush(GroundTool::Erase)
            .dab(&mut p, [100.0, 100.0], None)
            .unwrap();
        assert_eq!(p.data[centre], [0; LAYERS]);
    }

    #[test]
    fn bytes_round_trip_and_bad_ones_are_refused_naming_the_field() {
        let mut p = GroundPaint::new(grid());
        brush(GroundTool::Paint(3))
            .dab(&mut p, [30.0, 70.0], None)
            .unwrap();
        let back = GroundPaint::from_bytes(p.grid, &p.to_bytes()).unwrap();
        assert_eq!(back, p);
        let e = GroundPaint::from_bytes(p.grid, &[0; 7])
            .unwrap_err()
            .to_string();
        assert!(e.contains("ground") && e.contains("7 bytes"), "{e}");
        let mut bytes = vec![0u8; p.grid.len() * LAYERS];
        bytes[8..16].copy_from_slice(&[200, 100, 0, 0, 0, 0, 0, 0]);
        let e = GroundPaint::from_bytes(p.grid, &bytes)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cell 1") && e.contains("300"), "{e}");
        let e = brush(GroundTool::Paint(8))
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("layer") && e.contains("snow"), "{e}");
    }
}
