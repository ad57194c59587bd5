//! What every stage is: a serde parameter struct ([`StageKind`]) that validates itself and
//! starts a run ([`StageRun`]) over the world, which the shared driver ([`drive`]) steps
//! with progress, per-step hand-over and cancel.

use std::path::Path;

use crate::error::Result;
use crate::schema::ParamInfo;
use crate::stages::context::StageContext;
use crate::stages::device::{Accelerator, Device, Devices};
use crate::world::World;

/// Where a stage runs: for resolving paths, naming fields and drawing seeds.
pub struct Env<'a> {
    /// The folder relative file paths resolve against (the recipe file's folder).
    pub base_dir: &'a Path,
    /// The stage's place in the recipe, for error names: `stages[2].StreamPower`.
    pub field: String,
    /// The stage's index in the recipe, for random streams of the recipe seed.
    pub index: usize,
    /// Whether the stage runs as a process of a `TimeLoop` (stepped by the loop).
    pub in_loop: bool,
    /// Where `StreamPower` may run: the recipe's `device` and the accelerator given.
    pub devices: Devices<'a>,
}

/// One kind of stage: its recipe parameters, their schema and how to start a run.
pub trait StageKind {
    /// Scalar parameters with units and ranges, for editors (enums and sources are
    /// edited as RON).
    fn describe() -> &'static [ParamInfo]
    where
        Self: Sized;

    /// Checks ranges; `field` prefixes error names (e.g. `stages[0].StreamPower`).
    fn validate(&self, field: &str) -> Result<()>;

    /// Most steps a stage of this kind runs on its own (its `iterations`).
    fn iterations(&self) -> u32;

    /// Resolves the stage's inputs over `world` and builds its processes.
    fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>>;

    /// The recipe fields that scale what the stage writes, named in the error when its
    /// output overflows (e.g. "`uplift`, `k` or `dt`").
    fn drivers(&self) -> &'static str {
        "the terrain's heights (`terrain`)"
    }

    /// Peak memory of a bake that runs this stage alone, bytes per cell, on a terrain
    /// without layers: the world, the stage's buffers, its maps and their encoding
    /// (measured with `/usr/bin/time` at 513² and 1025², the slope rounded up). Used to
    /// refuse a size that would not fit before anything is allocated.
    fn bytes_per_cell(&self) -> u64 {
        64
    }
}

/// A started stage: the processes over one world, with their buffers.
pub trait StageRun {
    /// One step over `world`; `Ok(true)` once the process has converged (run on its own,
    /// the stage then stops early).
    fn step(&mut self, world: &mut World) -> Result<bool>;

    /// After the last step: write the maps the stage produces at its end.
    fn finish(&mut self, _world: &mut World) -> Result<()> {
        Ok(())
    }

    /// What ran it, for `bake.json`: `gpu: <adapter>`, or `cpu (Auto: <why>)` where
    /// `device: Auto` fell back; `None` for the CPU (said as `cpu`).
    fn device(&self) -> Option<String> {
        None
    }

    /// One step whose result may stay off `world` (a GPU run keeps its heights on the
    /// device, read back by [`StageRun::sync`]): `Ok(true)` when `world` holds it, as the
    /// CPU's runs do (this is their `step`). Until `sync`, the caller neither reads nor
    /// changes `world` (live painting's steps between two views, issue #42).
    fn step_deferred(&mut self, world: &mut World) -> Result<bool> {
        self.step(world).map(|_| true)
    }

    /// Brings `world` up to date after [`StageRun::step_deferred`] (nothing on the CPU).
    fn sync(&mut self, _world: &mut World) -> Result<()> {
        Ok(())
    }

    /// The heights after the steps deferred so far, for a view, without bringing `world`
    /// up to date: an accelerator's read-back shared as it was read (`world` is then
    /// brought up to date by [`StageRun::sync`] from that same buffer, with no second
    /// read-back, if no step came between), so a view's heights reach Godot's image with
    /// one copy (issue #42). `None` where `world` holds them: the CPU's runs (whose `sync`
    /// this calls), and a run synced since its last step.
    fn shared_heights(&mut self, world: &mut World) -> Result<Option<std::sync::Arc<Vec<f32>>>> {
        self.sync(world).map(|_| None)
    }

    /// True where [`StageRun::step_deferred`] saves work and loses nothing: a run on an
    /// accelerator whose steps never converge early (no `tolerance`). [`drive`] then
    /// defers the steps whose world no observer asked for.
    fn defers(&self) -> bool {
        false
    }

    /// Its process on an accelerator, for a `TimeLoop` to keep the heights there between
    /// its processes (issue #42); `None` on the CPU.
    fn on_device(&mut self) -> Option<&mut dyn crate::stages::device::DeviceProcess> {
        None
    }

    /// New stream-power inputs (live painting's uplift and precipitation), taken in
    /// place after [`StageRun::sync`]: `Ok(true)` when the run now steps, and routes its
    /// maps at the end, as a run started with them would; `false` where it cannot (the
    /// CPU's runs: the caller starts the stage again).
    fn take_inputs(&mut self, _inputs: &crate::eroders::stream_power::Inputs) -> Result<bool> {
        Ok(false)
    }
}

/// Runs `stage` on its own: validate, start, then up to `iterations` steps (fewer once it
/// converges), reporting each through `ctx` and checking the cancel flag before and after
/// every step; then `finish`.
pub fn drive(stage: &dyn StageKind, world: &mut World, ctx: &mut StageContext) -> Result<()> {
    let env = Env {
        base_dir: ctx.base_dir(),
        field: ctx.field_prefix(),
        index: ctx.index(),
        in_loop: false,
        devices: ctx.devices(),
    };
    stage.validate(&env.field)?;
    let mut run = stage.start(world, &env)?;
    ctx.set_device(run.device());
    let n = stage.iterations();
    let defers = run.defers();
    for i in 0..n {
        ctx.check_cancel()?;
        // The observer sees the world after the steps it asks for and the last; a run on
        // an accelerator leaves the others' heights there (read back at `finish`).
        let shown = ctx.world_due() || i + 1 == n;
        if defers {
            // Never converges early: one read-back a step shown, none for the others.
            run.step_deferred(world)?;
            let fraction = (i + 1) as f32 / n as f32;
            if shown && i + 1 < n {
                // The world stays behind (brought up to date at `finish`); the observer
                // takes the heights as read back.
                let heights = run.shared_heights(world)?;
                ctx.step_shown(world, heights, i + 1, fraction)?;
            } else if shown {
                run.sync(world)?;
                ctx.step_done(world, i + 1, fraction)?;
            } else {
                ctx.step_unseen(i + 1, fraction)?;
            }
            continue;
        }
        let converged = run.step(world)?;
        world.hold_nodata();
        let fraction = if converged {
            1.0
        } else {
            (i + 1) as f32 / n as f32
        };
        if shown {
            ctx.step_done(world, i + 1, fraction)?;
        } else {
            ctx.step_unseen(i + 1, fraction)?;
        }
        if converged {
            break;
        }
    }
    run.finish(world)
}

/// A process a `TimeLoop` can step: any stage kind, by its recipe entry.
pub trait LoopProcess {
    /// The entry's name (`StreamPower`).
    fn name(&self) -> &'static str;

    /// Checks the entry; `field` is its place, e.g. `stages[0].TimeLoop.processes[1]`.
    fn validate(&self, field: &str) -> Result<()>;

    /// Starts the process over `world`.
    fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>>;

    /// [`StageKind::bytes_per_cell`] of the entry.
    fn bytes_per_cell(&self) -> u64;
}

/// A stage's serde parameters: `iterations` plus every field of a process's `Params`
/// (same names, types and defaults), with `process()` giving the `Params` back. The stage
/// reads like the process, without writing its fields twice.
macro_rules! stage_params {
    (
        $(#[$meta:meta])*
        $name:ident for $process:path, iterations: $iterations:expr,
        { $( $(#[$fmeta:meta])* $field:ident: $ty:ty, )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            /// Number of steps. Inside a `TimeLoop` the loop's iterations count instead.
            pub iterations: u32,
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                let p = <$process>::default();
                $name {
                    iterations: $iterations,
                    $( $field: p.$field, )*
                }
            }
        }

        impl $name {
            /// The process parameters.
            pub fn process(&self) -> $process {
                $process { $( $field: self.$field.clone(), )* }
            }
        }
    };
}
pub(crate) use stage_params;

/// The material properties of `world` for a layered process: one per layer top down, then
/// the bottom material; a one-material world is one default material.
pub fn material_props(world: &World) -> Vec<crate::state::MaterialProps> {
    if world.materials.is_empty() {
        vec![crate::state::MaterialProps::default()]
    } else {
        world.materials.iter().map(|m| m.props.clone()).collect()
    }
}

/// Where `device` puts a stage: `Ok(run)`, the run `on_device` made on the accelerator; or
/// `Err(note)`, the CPU, with what `bake.json` says of it under `Auto` (why not the GPU;
/// `None` under `Cpu`). Under `Gpu`, no accelerator or its refusal is the error.
pub(crate) fn place(
    env: &Env,
    on_device: impl FnOnce(&dyn Accelerator) -> Result<Box<dyn StageRun>>,
) -> Result<std::result::Result<Box<dyn StageRun>, Option<String>>> {
    Ok(match env.devices.wanted()? {
        None if env.devices.device == Device::Cpu => Err(None),
        None => Err(Some(format!("cpu (Auto: {})", env.devices.missing))),
        Some(accel) => match on_device(accel) {
            Ok(run) => Ok(run),
            Err(e) if env.devices.device == Device::Gpu => return Err(e),
            Err(e) => Err(Some(format!("cpu (Auto: {e})"))),
        },
    })
}

/// A CPU run that says why it is on the CPU (`Auto` without a GPU, or a stage the GPU
/// does not run).
pub(crate) struct Noted {
    pub run: Box<dyn StageRun>,
    pub note: String,
}

impl Noted {
    /// `run`, saying `note` when there is one.
    pub fn wrap(run: Box<dyn StageRun>, note: Option<String>) -> Box<dyn StageRun> {
        match note {
            Some(note) => Box::new(Noted { run, note }),
            None => run,
        }
    }
}

impl StageRun for Noted {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        self.run.step(world)
    }

    fn finish(&mut self, world: &mut World) -> Result<()> {
        self.run.finish(world)
    }

    fn device(&self) -> Option<String> {
        Some(self.note.clone())
    }

    fn step_deferred(&mut self, world: &mut World) -> Result<bool> {
        self.run.step_deferred(world)
    }

    fn sync(&mut self, world: &mut World) -> Result<()> {
        self.run.sync(world)
    }

    fn defers(&self) -> bool {
        self.run.defers()
    }
}
