//! The erosion brush (what Terrain3D's users ask for in its issue 102): stream power and
//! thermal erosion that act only under a brush, carving channels downhill from it.
//!
//! A step routes the flow over the whole map, so the drainage from upstream of the brush
//! counts, then runs one stream-power step (without uplift) and a few thermal sweeps on a
//! copy of the heights, and keeps of each cell's change its share under the brush:
//! `h += mask · (h_eroded − h)`. A cell where the mask is 0 keeps its exact height. The
//! processes are the ones the stages run ([`StreamPower`], [`Thermal`]).

use crate::eroders::stream_power::{Inputs, Params as StreamParams, StreamPower};
use crate::eroders::thermal::{Params as ThermalParams, Thermal};
use crate::error::{check_positive, check_range, OrogenError, Result};
use crate::field::Grid;
use crate::flow::router::SinkMode;
use crate::neighbourhood::{RasterGrid, Side};

/// The erosion brush's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ErosionBrushParams {
    /// Erodibility `k`, m^(1−2m)/yr (≥ 0). Default 5e-6, the `StreamPower` stage's.
    pub k: f32,
    /// Drainage-area exponent `m`. Default 0.5.
    pub m: f32,
    /// Slope exponent `n`. Default 1.
    pub n: f32,
    /// Years of stream power one step runs (> 0). Default 5000.
    pub years: f64,
    /// Thermal sweeps after each stream-power step (0: none). Default 1.
    pub thermal_sweeps: u32,
    /// The hillslopes' thermal erosion (talus angle, rate). Default: the `Thermal` stage's
    /// talus (30°) at a rate of 0.1, so hillslopes relax while the channel is carved (at
    /// 0.5 a sweep filled a generated terrain's channels faster than they were cut).
    pub thermal: ThermalParams,
}

impl Default for ErosionBrushParams {
    fn default() -> Self {
        ErosionBrushParams {
            k: 5e-6,
            m: 0.5,
            n: 1.0,
            years: 5000.0,
            thermal_sweeps: 1,
            thermal: ThermalParams {
                rate: 0.1,
                ..ThermalParams::default()
            },
        }
    }
}

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErosionReport {
    /// Largest lowering of a cell, metres.
    pub max_lowering: f32,
    /// Largest rise of a cell (thermal deposits), metres.
    pub max_rise: f32,
}

/// The erosion brush over one grid: its processes and buffers kept between steps.
pub struct ErosionBrush {
    grid: Grid,
    years: f64,
    sweeps: u32,
    stream: StreamPower<RasterGrid>,
    thermal: Option<Thermal<RasterGrid>>,
    scratch: Vec<f32>,
}

impl ErosionBrush {
    /// The brush over `grid` (outlets: its four borders), starting from `heights`;
    /// `precipitation` (m/yr per cell) makes the drainage a discharge. Errors name the
    /// field at fault (`erosion_brush.k`, `erosion_brush.years`, …).
    pub fn new(
        grid: Grid,
        params: &ErosionBrushParams,
        precipitation: Option<Vec<f32>>,
        heights: &[f32],
    ) -> Result<Self> {
        let field = "erosion_brush";
        check_positive(&format!("{field}.years"), params.years)?;
        check_range(&format!("{field}.k"), params.k as f64, 0.0, 1.0)?;
        if heights.len() != grid.len() {
            return Err(OrogenError::invalid(
                format!("{field}.heights"),
                format!(
                    "{} heights for a {}×{} grid",
                    heights.len(),
                    grid.width,
                    grid.height
                ),
            ));
        }
        let sides = [Side::North, Side::South, Side::East, Side::West];
        let nb = RasterGrid::new(grid, &sides);
        let inputs = Inputs {
            k: vec![params.k; grid.len()],
            uplift: vec![0.0; grid.len()],
            precipitation,
        };
        let sp = StreamParams {
            m: params.m,
            n: params.n,
            lakes: SinkMode::Carve,
        };
        let stream = StreamPower::new(nb.clone(), None, &sp, inputs, false, field)?;
        stream.check_dt(params.years)?;
        let thermal = if params.thermal_sweeps > 0 {
            let f = format!("{field}.thermal");
            Some(Thermal::new(nb, params.thermal.clone(), 0, heights, &f)?)
        } else {
            None
        };
        Ok(ErosionBrush {
            grid,
            years: params.years,
            sweeps: params.thermal_sweeps,
            stream,
            thermal,
            scratch: Vec::new(),
        })
    }

    /// The grid it works on.
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// One step: erosion over the whole map, kept in proportion to `mask` (one weight
    /// 0–1 per cell; 0 leaves a cell exactly as it was). `rect` (`[x0, y0, x1, y1]`, ends
    /// exclusive) bounds the cells where the mask is not 0, so only they are written.
    pub fn step(
        &mut self,
        heights: &mut [f32],
        mask: &[f32],
        rect: [usize; 4],
    ) -> Result<ErosionReport> {
        let n = self.grid.len();
        if heights.len() != n || mask.len() != n {
            return Err(OrogenError::invalid(
                "erosion_brush.mask",
                format!(
                    "{} heights and {} mask values for a grid of {n} cells",
                    heights.len(),
                    mask.len()
                ),
            ));
        }
        if let Some(i) = mask.iter().position(|w| !(0.0..=1.0).contains(w)) {
            return Err(OrogenError::invalid(
                "erosion_brush.mask",
                format!("must be within [0, 1], got {} at cell {i}", mask[i]),
            ));
        }
        let mut h = std::mem::take(&mut self.scratch);
        h.clear();
        h.extend_from_slice(heights);
        let done = self.stream.step_heights(&mut h, self.years);
        if done.is_ok() {
            if let Some(t) = &mut self.thermal {
                for _ in 0..self.sweeps {
                    t.step_heights(&mut h);
                }
            }
        }
        let mut report = ErosionReport {
            max_lowering: 0.0,
            max_rise: 0.0,
        };
        if done.is_ok() {
            let w = self.grid.width;
            let [x0, y0, x1, y1] = rect;
            for y in y0..y1.min(self.grid.height) {
                for x in x0..x1.min(w) {
                    let i = y * w + x;
                    if mask[i] <= 0.0 {
                        continue;
                    }
                    let new = heights[i] + mask[i] * (h[i] - heights[i]);
                    report.max_lowering = report.max_lowering.max(heights[i] - new);
                    report.max_rise = report.max_rise.max(new - heights[i]);
                    heights[i] = new;
                }
            }
        }
        self.scratch = h;
        done.map(|_| report)
    }

    /// The drainage area (m², or discharge m³/yr with precipitation) of the last step.
    pub fn drainage(&self) -> &[f32] {
        self.stream.drainage()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::Brush;

    /// A valley sloping down to the south border: V-shaped across, with a little noise.
    fn valley(w: usize, h: usize, cell: f32) -> (Grid, Vec<f32>) {
        let grid = Grid::new(w, h, cell).unwrap();
        let mut out = Vec::with_capacity(w * h);
        for y in 0..h {
            for x in 0..w {
                let across = (x as f32 - (w as f32 - 1.0) * 0.5).abs() * cell * 0.3;
                let down = (h - 1 - y) as f32 * cell * 0.1;
                let noise = ((x * 7919 + y * 104729) % 97) as f32 * 0.01;
                out.push(100.0 + across + down + noise);
            }
        }
        (grid, out)
    }

    fn mask_of(grid: Grid, brush: &Brush, centre: [f32; 2]) -> (Vec<f32>, [usize; 4]) {
        let (m, rect) = brush.mask(grid, centre).unwrap();
        (m, rect.unwrap())
    }

    #[test]
    fn only_cells_under_the_brush_change_and_the_channel_goes_down_most() {
        let (grid, mut h) = valley(65, 65, 30.0);
        let before = h.clone();
        let brush = Brush {
            radius: 300.0,
            strength: 1.0,
            falloff: 0.3,
            ..Default::default()
        };
        let centre = [32.0 * 30.0, 40.0 * 30.0];
        let (mask, rect) = mask_of(grid, &brush, centre);
        let mut eb = ErosionBrush::new(grid, &ErosionBrushParams::default(), None, &h).unwrap();
        let report = eb.step(&mut h, &mask, rect).unwrap();
        assert!(report.max_lowering > 0.0, "{report:?}");
        for i in 0..h.len() {
            if mask[i] == 0.0 {
                assert_eq!(
                    h[i].to_bits(),
                    before[i].to_bits(),
                    "cell {i} outside changed"
                );
            }
        }
        // Inside: the cell of largest drainage (the valley floor) goes down more than the
        // mean of the cells under the brush.
        let drainage = eb.drainage();
        let inside: Vec<usize> = (0..h.len()).filter(|&i| mask[i] >= 1.0).collect();
        let top = *inside
            .iter()
            .max_by(|&&a, &&b| drainage[a].total_cmp(&drainage[b]))
            .unwrap();
        let mean: f32 = inside.iter().map(|&i| before[i] - h[i]).sum::<f32>() / inside.len() as f32;
        let channel = before[top] - h[top];
        assert!(channel > mean, "channel {channel} vs mean {mean}");
        assert!(channel > 0.0);
    }

    #[test]
    fn repeated_steps_deepen_the_channel_along_the_flow_path() {
        let (grid, mut h) = valley(65, 65, 30.0);
        let before = h.clone();
        let brush = Brush {
            radius: 400.0,
            strength: 1.0,
            falloff: 0.2,
            ..Default::default()
        };
        let (mask, rect) = mask_of(grid, &brush, [32.0 * 30.0, 32.0 * 30.0]);
        let mut eb = ErosionBrush::new(grid, &ErosionBrushParams::default(), None, &h).unwrap();
        let mut depths = Vec::new();
        for _ in 0..4 {
            eb.step(&mut h, &mask, rect).unwrap();
            // Depth of the valley floor under the brush (column 32, rows 28..36).
            let d: f32 = (28..36).map(|y| before[y * 65 + 32] - h[y * 65 + 32]).sum();
            depths.push(d);
        }
        for pair in depths.windows(2) {
            assert!(pair[1] > pair[0], "{depths:?}");
        }
        // The floor downstream under the brush is lowered along the flow path: every
        // row of the floor within the full-weight core went down.
        for y in 26..38 {
            assert!(h[y * 65 + 32] < before[y * 65 + 32], "row {y}");
        }
    }

    #[test]
    fn a_zero_mask_changes_nothing_and_bad_input_names_its_field() {
        let (grid, mut h) = valley(17, 17, 10.0);
        let before = h.clone();
        let mut eb = ErosionBrush::new(grid, &ErosionBrushParams::default(), None, &h).unwrap();
        let zero = vec![0.0; h.len()];
        eb.step(&mut h, &zero, [0, 0, 17, 17]).unwrap();
        assert_eq!(h, before);
        let e = eb.step(&mut h, &[0.5; 3], [0, 0, 1, 1]).unwrap_err();
        assert!(e.to_string().contains("erosion_brush.mask"), "{e}");
        let e = eb
            .step(&mut h, &vec![2.0; 289], [0, 0, 17, 17])
            .unwrap_err();
        assert!(e.to_string().contains("mask"), "{e}");
        let bad = ErosionBrushParams {
            years: -1.0,
            ..Default::default()
        };
        let e = ErosionBrush::new(grid, &bad, None, &h).err().unwrap();
        assert!(e.to_string().contains("erosion_brush.years"), "{e}");
    }
}
