//! What a stage is handed: progress and per-step hand-over to an observer, the cancel
//! flag, and where relative file paths resolve.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{OrogenError, Result};
use crate::stages::device::Devices;
use crate::world::World;

/// What a run reports while it works.
pub enum Event<'a> {
    /// A stage begins.
    StageStarted {
        index: usize,
        name: &'a str,
        stage_count: usize,
    },
    /// Progress within a stage: `fraction` in `[0, 1]`, `iteration` counted from 1 (the
    /// time loop's iterations for a `TimeLoop` stage).
    Progress {
        index: usize,
        name: &'a str,
        fraction: f32,
        iteration: u32,
    },
    /// One step of a stage finished; `world` is the terrain after it (for live views),
    /// but for its heights where `shown` has them.
    Step {
        index: usize,
        name: &'a str,
        iteration: u32,
        world: &'a World,
        /// The heights after the step where the world does not hold them: an
        /// accelerator's read-back, shared as it was read (issue #42: the view takes them
        /// without a copy; the world is brought up to date only where the CPU needs it,
        /// at the latest at the stage's end). `None`: the world's heights are the step's.
        shown: Option<Arc<Vec<f32>>>,
    },
    /// Progress of what comes before the stages (`name`: `planet`, a recipe's planet
    /// simulated step by step), `fraction` in `[0, 1]`.
    Setup { name: &'a str, fraction: f32 },
    /// A stage ended, after `seconds` of wall time.
    StageFinished {
        index: usize,
        name: &'a str,
        seconds: f64,
    },
}

impl Event<'_> {
    /// A step's heights: `shown` where the step has them, else its world's; `None` for
    /// the other events.
    pub fn step_heights(&self) -> Option<&[f32]> {
        match self {
            Event::Step { shown: Some(h), .. } => Some(h.as_slice()),
            Event::Step { world, .. } => Some(&world.height.data),
            _ => None,
        }
    }
}

/// Handed to every stage: progress, per-step hand-over and the cancel flag.
pub struct StageContext<'a> {
    index: usize,
    name: &'a str,
    cancel: &'a AtomicBool,
    observer: &'a mut dyn FnMut(Event<'_>),
    base_dir: &'a Path,
    devices: Devices<'a>,
    /// What ran the stage ([`crate::stages::StageRun::device`]).
    device: Option<String>,
    /// Asked before each step: whether the observer needs the world after it (an
    /// [`Event::Step`]); `None`: every step.
    world_due: Option<&'a mut dyn FnMut() -> bool>,
}

impl<'a> StageContext<'a> {
    /// A context for stage `index` called `name`.
    pub fn new(
        index: usize,
        name: &'a str,
        cancel: &'a AtomicBool,
        observer: &'a mut dyn FnMut(Event<'_>),
        base_dir: &'a Path,
    ) -> Self {
        StageContext {
            index,
            name,
            cancel,
            observer,
            base_dir,
            devices: Devices::CPU,
            device: None,
            world_due: None,
        }
    }

    /// The context with `devices` for `StreamPower` (default: the CPU only).
    pub fn with_devices(mut self, devices: Devices<'a>) -> Self {
        self.devices = devices;
        self
    }

    /// The context whose observer sees the world ([`Event::Step`]) only after the steps
    /// `due` says yes to (asked before each step) and a stage's last; a stage on an
    /// accelerator then reads nothing back for the others (issue #42). Default: every step.
    pub fn with_world_due(mut self, due: &'a mut dyn FnMut() -> bool) -> Self {
        self.world_due = Some(due);
        self
    }

    /// Whether the observer needs the world after the coming step.
    pub fn world_due(&mut self) -> bool {
        self.world_due.as_mut().is_none_or(|due| due())
    }

    /// Where `StreamPower` may run.
    pub fn devices(&self) -> Devices<'a> {
        self.devices
    }

    /// Records what ran the stage (`None`: the CPU).
    pub fn set_device(&mut self, device: Option<String>) {
        self.device = device;
    }

    /// What ran the stage, for `bake.json`: `cpu`, `gpu: <adapter>`, or `cpu (Auto: …)`.
    pub fn device(&self) -> String {
        self.device.clone().unwrap_or_else(|| "cpu".to_string())
    }

    /// The folder relative file paths of stage parameters are resolved against
    /// (the recipe file's folder).
    pub fn base_dir(&self) -> &Path {
        self.base_dir
    }

    /// The stage's index in the recipe.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The stage's name in error messages, e.g. `stages[0].StreamPower`.
    pub fn field_prefix(&self) -> String {
        format!("stages[{}].{}", self.index, self.name)
    }

    /// `Err(Cancelled)` once the cancel flag is set; call it at least once per step.
    pub fn check_cancel(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(OrogenError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Reports progress within the stage.
    pub fn progress(&mut self, fraction: f32, iteration: u32) {
        (self.observer)(Event::Progress {
            index: self.index,
            name: self.name,
            fraction: fraction.clamp(0.0, 1.0),
            iteration,
        });
    }

    /// Reports a finished step with the world as it now is, then checks the cancel flag.
    pub fn step_done(&mut self, world: &World, iteration: u32, fraction: f32) -> Result<()> {
        self.step_shown(world, None, iteration, fraction)
    }

    /// [`StageContext::step_done`] with the step's heights in `shown` where the world does
    /// not hold them yet ([`Event::Step`]).
    pub fn step_shown(
        &mut self,
        world: &World,
        shown: Option<Arc<Vec<f32>>>,
        iteration: u32,
        fraction: f32,
    ) -> Result<()> {
        self.progress(fraction, iteration);
        (self.observer)(Event::Step {
            index: self.index,
            name: self.name,
            iteration,
            world,
            shown,
        });
        self.check_cancel()
    }

    /// Reports a finished step whose world the observer did not ask for (progress only),
    /// then checks the cancel flag.
    pub fn step_unseen(&mut self, iteration: u32, fraction: f32) -> Result<()> {
        self.progress(fraction, iteration);
        self.check_cancel()
    }
}
