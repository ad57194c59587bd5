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
//! Under `device: Gpu | Auto` the processes that run on the accelerator (`StreamPower`
//! without a `tolerance`, `Thermal`) step one set of heights kept there: the first that
//! cannot step another's heights holds them, the others step its buffer, and the loop
//! reads the heights back once a step (for progress, live views and cancel), or before a
//! process on the CPU (issue #42).
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
        let group = share_heights(&mut runs)?;
        Ok(Box::new(Run {
            runs,
            cumulative,
            rng,
            group,
            device_newer: false,
            device_holds: world.height.data.clone(),
        }))
    }
}

/// The runs that step one set of heights on the accelerator, the holder first: the first
/// run on the device that cannot step another's heights (a `StreamPower`), else the first
/// on the device; then those that took its heights. Empty where fewer than two share.
/// Every run started from the world's heights, so the holder's are the world's.
fn share_heights(runs: &mut [Box<dyn StageRun>]) -> Result<Vec<usize>> {
    let on_device: Vec<(usize, bool)> = runs
        .iter_mut()
        .enumerate()
        .filter_map(|(i, r)| r.on_device().map(|d| (i, d.can_adopt())))
        .collect();
    if on_device.len() < 2 {
        return Ok(Vec::new());
    }
    let holder = on_device
        .iter()
        .find(|(_, adopts)| !adopts)
        .unwrap_or(&on_device[0])
        .0;
    let Some(shared) = runs[holder]
        .on_device()
        .and_then(|d| d.shared().transpose())
    else {
        return Ok(Vec::new());
    };
    let shared = shared?;
    let mut group = vec![holder];
    for &(i, adopts) in &on_device {
        if i != holder && adopts {
            if let Some(d) = runs[i].on_device() {
                if d.adopt(&shared)? {
                    group.push(i);
                }
            }
        }
    }
    if group.len() < 2 {
        group.clear();
    }
    Ok(group)
}

struct Run {
    runs: Vec<Box<dyn StageRun>>,
    /// Running sums of the proportions (`None`: every process every step).
    cumulative: Option<Vec<f64>>,
    rng: ChaCha8Rng,
    /// The runs stepping one set of heights on the accelerator, the holder first
    /// ([`share_heights`]); empty when none share.
    group: Vec<usize>,
    /// True when the heights on the accelerator are newer than the world's.
    device_newer: bool,
    /// The heights on the accelerator when the world last matched them.
    device_holds: Vec<f32>,
}

impl Run {
    /// One step of run `i`: on the accelerator without reading back where it is in the
    /// group (the world's heights uploaded first where they changed), else on the world,
    /// brought up to date first. `Ok(None)` where its convergence is asked later
    /// ([`Run::converged`]).
    fn step_one(&mut self, i: usize, world: &mut World) -> Result<Option<bool>> {
        if !self.group.contains(&i) {
            self.pull(world)?;
            return self.runs[i].step(world).map(Some);
        }
        if !self.device_newer && self.device_holds != world.height.data {
            let holder = self.group[0];
            self.on_device(holder)?.upload(&world.height.data)?;
            for k in 1..self.group.len() {
                let g = self.group[k];
                self.on_device(g)?.changed();
            }
            self.device_holds.clone_from(&world.height.data);
        }
        self.on_device(i)?.step_device()?;
        for k in 0..self.group.len() {
            let g = self.group[k];
            if g != i {
                self.on_device(g)?.changed();
            }
        }
        self.device_newer = true;
        Ok(None)
    }

    fn on_device(&mut self, i: usize) -> Result<&mut dyn crate::stages::device::DeviceProcess> {
        self.runs[i].on_device().ok_or_else(|| {
            OrogenError::invalid("device", format!("process {i} of the loop left the GPU"))
        })
    }

    /// Reads the heights back from the accelerator where they are newer than the world's.
    fn pull(&mut self, world: &mut World) -> Result<()> {
        if !self.device_newer {
            return Ok(());
        }
        let holder = self.group[0];
        let after = self.on_device(holder)?.download()?;
        self.device_holds = crate::stages::accelerated::take_heights("device", after, world)?;
        self.device_newer = false;
        Ok(())
    }
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
                let mut ask = Vec::new();
                for i in 0..self.runs.len() {
                    match self.step_one(i, world)? {
                        Some(done) => all &= done,
                        None => ask.push(i),
                    }
                }
                // The one read-back of the step (progress, live views, cancel).
                self.pull(world)?;
                for i in ask {
                    if !all {
                        break;
                    }
                    all &= self.on_device(i)?.converged()?;
                }
                Ok(all)
            }
            Some(c) => {
                let i = self.draw(&c);
                self.cumulative = Some(c);
                self.step_one(i, world)?;
                self.pull(world)?;
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
