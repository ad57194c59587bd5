//! The `TimeLoop` stage: several processes in one time loop, so stream power and a
//! hillslope process share a time step, or the thesis's processes mix by proportions.
//!
//! - `mode: Every`: every step runs each process once, in the listed order (stream power
//!   with thermal hillslopes in the same step).
//! - `mode: Proportions([100.0, 50.0, 1.0])`: every step runs one process, drawn with
//!   these weights from the recipe's seed (thesis §4, mixing water : wind : thermal =
//!   100 : 50 : 1). A weight of 0 never runs.
//!
//! The loop's `iterations` count the steps; a process's own `iterations` and early stop
//! are not used inside it. Progress counts the loop's iterations and the cancel flag is
//! checked every step. Each process keeps its own time step (`dt`).
//!
//! Recipe syntax: `TimeLoop(iterations: 200, mode: Every, processes: [StreamPower(dt:
//! 5e4, hydrology: false), Thermal(talus: Constant(35.0))])`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{OrogenError, Result};
use crate::schema::ParamInfo;
use crate::stages::kind::{Env, LoopProcess, StageKind, StageRun};
use crate::world::World;

/// Largest accepted iteration count.
pub const MAX_ITERATIONS: u32 = 10_000_000;

/// Salt mixed into the recipe seed for the proportions draw.
const LOOP_SEED: u64 = 0x6c6f_6f70; // "loop"

/// How the loop picks the processes of a step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum LoopMode {
    /// Every process, once per step, in the listed order.
    #[default]
    Every,
    /// One process per step, drawn with these weights (one per process, ≥ 0, not all 0).
    Proportions(Vec<f32>),
}

/// `TimeLoop` stage parameters; `P` is a recipe entry of any stage but a loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeLoopParams<P> {
    /// Number of loop steps, 1..=1e7. Default 100.
    #[serde(default = "default_iterations")]
    pub iterations: u32,
    /// `Every` (default) or `Proportions([w, …])`.
    #[serde(default)]
    pub mode: LoopMode,
    /// The processes, as recipe entries (`StreamPower(..)`, `Thermal(..)`, …).
    #[serde(default = "Vec::new")]
    pub processes: Vec<P>,
}

fn default_iterations() -> u32 {
    100
}

impl<P> Default for TimeLoopParams<P> {
    fn default() -> Self {
        TimeLoopParams {
            iterations: default_iterations(),
            mode: LoopMode::Every,
            processes: Vec::new(),
        }
    }
}

const PARAMS: &[ParamInfo] = &[ParamInfo {
    name: "iterations",
    unit: "",
    min: 1.0,
    max: 10000.0,
    doc: "Number of loop steps (each runs every process, or one drawn by proportion).",
}];

impl<P: LoopProcess> StageKind for TimeLoopParams<P> {
    fn drivers(&self) -> &'static str {
        "its processes' rates (`processes`) or the terrain's heights"
    }

    /// Every process is started at once: their buffers add up (less the world each
    /// figure counts, about 24 B per cell, after the first; a figure under 24 counts
    /// nothing of its own).
    fn bytes_per_cell(&self) -> u64 {
        let each = self.processes.iter().map(|p| p.bytes_per_cell());
        let sum: u64 = each.clone().sum();
        sum - each.skip(1).map(|b| b.min(24)).sum::<u64>()
    }

    fn describe() -> &'static [ParamInfo] {
        PARAMS
    }

    fn validate(&self, field: &str) -> Result<()> {
        crate::error::check_count(
            &format!("{field}.iterations"),
            self.iterations,
            MAX_ITERATIONS,
        )?;
        if self.processes.is_empty() {
            return Err(OrogenError::invalid(
                format!("{field}.processes"),
                "is empty: list at least one process, e.g. [StreamPower(), Thermal()]",
            ));
        }
        for (i, p) in self.processes.iter().enumerate() {
            p.validate(&format!("{field}.processes[{i}].{}", p.name()))?;
        }
        if let LoopMode::Proportions(w) = &self.mode {
            let f = format!("{field}.mode.Proportions");
            if w.len() != self.processes.len() {
                return Err(OrogenError::invalid(
                    f,
                    format!(
                        "has {} weights for {} processes; give one per process",
                        w.len(),
                        self.processes.len()
                    ),
                ));
            }
            if let Some(i) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(OrogenError::invalid(
                    format!("{f}[{i}]"),
                    format!("must be finite and >= 0, got {}", w[i]),
                ));
            }
            if w.iter().all(|&v| v == 0.0) {
                return Err(OrogenError::invalid(
                    f,
                    "every proportion is 0, so no process would ever run",
                ));
            }
        }
        Ok(())
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>> {
        let mut runs = Vec::with_capacity(self.processes.len());
        for (i, p) in self.processes.iter().enumerate() {
            let sub = Env {
                base_dir: env.base_dir,
                field: format!("{}.processes[{i}].{}", env.field, p.name()),
                index: env.index,
                in_loop: true,
                devices: env.devices,
            };
            runs.push(p.start(world, &sub)?);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(world.seed ^ LOOP_SEED);
        rng.set_stream(env.index as u64);
        let cumulative = match &self.mode {
            LoopMode::Every => None,
            LoopMode::Proportions(w) => Some(
                w.iter()
                    .scan(0.0f64, |sum, &v| {
                        *sum += v as f64;
                        Some(*sum)
                    })
                    .collect(),
            ),
        };
        Ok(Box::new(Run {
            runs,
            cumulative,
            rng,
        }))
    }
}

struct Run {
    runs: Vec<Box<dyn StageRun>>,
    /// Running sums of the proportions (`None`: every process every step).
    cumulative: Option<Vec<f64>>,
    rng: ChaCha8Rng,
}

impl Run {
    /// The process drawn for this step: the first whose running sum exceeds a uniform
    /// draw in `[0, total)`, so a process of weight 0 is never drawn.
    fn draw(&mut self, cumulative: &[f64]) -> usize {
        let total = *cumulative.last().expect("validated: at least one process");
        let r = self.rng.random::<f64>() * total;
        cumulative
            .iter()
            .position(|&c| c > r)
            .unwrap_or_else(|| cumulative.iter().rposition(|&c| c > 0.0).unwrap_or(0))
    }
}

impl StageRun for Run {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        match self.cumulative.take() {
            None => {
                let mut all = true;
                for run in &mut self.runs {
                    all &= run.step(world)?;
                }
                Ok(all)
            }
            Some(c) => {
                let i = self.draw(&c);
                self.cumulative = Some(c);
                self.runs[i].step(world)?;
                Ok(false)
            }
        }
    }

    fn finish(&mut self, world: &mut World) -> Result<()> {
        for run in &mut self.runs {
            run.finish(world)?;
        }
        Ok(())
    }

    /// The processes that said what ran them (a `StreamPower` on a GPU, or one `Auto`
    /// left on the CPU), `processes[i]: …` joined by `; `.
    fn device(&self) -> Option<String> {
        let said: Vec<String> = self
            .runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.device().map(|d| format!("processes[{i}]: {d}")))
            .collect();
        (!said.is_empty()).then(|| said.join("; "))
    }
}
