//! The sculpting or erosion stroke a `TerrainWorld` is painting (its state; the strokes
//! themselves are `sculpt.rs`).

use std::thread::JoinHandle;

use orogen_core::edit::ErosionBrush;

/// An erosion step on its thread: the brush and the stroke's heights come back with it.
pub(super) type StepResult = (
    ErosionBrush,
    Vec<f32>,
    Option<[usize; 4]>,
    Result<(), String>,
);

/// The stroke going on.
#[derive(Default)]
pub struct HeightStroke {
    /// The heights when the stroke began (None: no stroke).
    pub(super) base: Option<Vec<f32>>,
    /// The cells the stroke changed so far, `[x0, y0, x1, y1]` ends exclusive.
    pub(super) rect: Option<[usize; 4]>,
    /// Where `flatten` flattens to: the height where the stroke began, metres.
    pub(super) flatten_to: f32,
    /// The erosion brush and the stroke's heights while no step runs.
    pub(super) erosion: Option<(ErosionBrush, Vec<f32>)>,
    /// The erosion step running.
    pub(super) running: Option<JoinHandle<StepResult>>,
    /// The latest dab asked for while a step ran: its mask and rectangle.
    pub(super) pending: Option<(Vec<f32>, [usize; 4])>,
    /// The last erosion step's drainage (m², or m³/yr with painted rain).
    pub(super) drainage: Vec<f32>,
    /// Erosion steps done in the stroke.
    pub(super) steps: u32,
    pub(super) error: String,
}
