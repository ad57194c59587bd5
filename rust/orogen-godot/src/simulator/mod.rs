//! `ErosionSimulator`: runs a recipe on a worker thread and reports back to the main thread.
//!
//! The worker is a plain `std::thread` that owns plain Rust data (the recipe, then the
//! `World`) and its own rayon pool (`pool.install`), never the global one, so an editor
//! hot reload never leaves pool threads running code that was unloaded. It sends
//! messages over an `mpsc` channel; `process()` drains them with `try_recv` and never
//! blocks on the worker. `Gd` values stay on the main thread. Cancelling sets an
//! `AtomicBool` the core checks after every step. The thread is cancelled and joined when
//! the node leaves the tree and when it is freed.
//!
//! Files: [`run`] is the worker thread's side of a run (pool, messages, observer),
//! [`live`] that of live erosion, [`delivery`] a finished run's way to the terrain on the
//! main thread, and [`generate`] `TerrainWorld.generate()`, which starts one of these.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use godot::classes::{INode, Node};
use godot::prelude::*;
use orogen_core::runner::LiveMaps;
use orogen_core::Recipe;

use crate::data::TerrainData;
use crate::prepared::{Prepared, Target};
use crate::recipe::TerrainRecipe;
use crate::terrain::TerrainWorld;
use delivery::{Delivery, Stage, DELIVERY_BUDGET_MS};
use live::{live_maps, work_live, LiveJob};
use run::{work, Msg, LIVE_THREADS};

pub mod delivery;
pub mod device;
pub mod generate;
pub mod live;
pub mod run;

/// Most threads a simulator's own pool may have (the limit of `orogen bake --threads`):
/// beyond a few per core they only add overhead (1,024 made a 33² run take 14 s instead of
/// 30 ms), and each one costs a stack.
const MAX_THREADS: i32 = 256;

type Worker = crate::worker::Worker<Msg>;

/// Runs a recipe on a worker thread; reports progress, steps, and the result.
///
/// Point `terrain` at a `TerrainWorld` (or make this node its child), optionally set `recipe`
/// (else the terrain's), and call `start()`: the main thread never waits. While it runs the
/// terrain updates live (`live_update`) and `progress`, `step_finished` report it; the
/// finished result is applied a slice at a time (at most `apply_budget_ms` a frame) and then
/// `finished` is emitted, or `failed(message)` names what went wrong. `start_live()` erodes
/// live from the terrain as it is, with its painted maps, until `cancel()`. The simulator runs
/// on its own thread pool (`threads`; 0: one thread per CPU), and its stream power on a GPU
/// where the recipe's `device` is `Gpu` or `Auto` (`get_device_used()` says which ran).
#[derive(GodotClass)]
#[class(tool, base = Node)]
pub struct ErosionSimulator {
    /// The `TerrainWorld` to update (empty: the parent, if it is one).
    #[export]
    terrain: NodePath,
    /// The recipe to run; null runs the terrain's recipe.
    #[export]
    recipe: Option<Gd<TerrainRecipe>>,
    /// Push the heights (and a hydraulic run's water, a layered terrain's colours) to the
    /// terrain about 10–15 times a second while running.
    #[export]
    live_update: bool,
    /// Threads of this simulator's own rayon pool; 0 = one per CPU, at most 256 (`start()`
    /// refuses other values).
    #[export]
    threads: i32,
    /// Apply the result to the terrain when the run finishes (`terrain.set_data`).
    #[export]
    apply_on_finish: bool,
    /// Main-thread milliseconds a frame may spend applying a finished run's result (its
    /// images, textures and collision regions, one at a time; at least one a frame).
    /// Default 6; 0 applies one piece a frame.
    #[export(range = (0.0, 100.0, or_greater))]
    apply_budget_ms: f32,

    worker: Option<Worker>,
    /// Free this node after `finished`/`failed` (set by `TerrainWorld.generate`).
    pub(crate) free_when_done: bool,
    /// The worker's last word, held until its thread has ended.
    pending: Option<Outcome>,
    /// A finished run's result being turned into images and applied, a slice per frame.
    delivery: Option<Delivery>,
    result: Option<Gd<TerrainData>>,
    /// The stage reports of the last finished run.
    stage_reports: Vec<orogen_core::runner::StageTiming>,
    /// Where the last run's stream power ran (empty until it says).
    device_used: String,
    /// A live run's line to its worker: painted maps go down it, and the terrain's paint
    /// revision they were sent at.
    live: Option<(Sender<LiveMaps>, i64)>,
    /// Live views shown since the last `start`/`start_live` (snapshots applied).
    refreshes: i64,
    base: Base<Node>,
}

#[godot_api]
impl INode for ErosionSimulator {
    fn init(base: Base<Node>) -> Self {
        ErosionSimulator {
            terrain: NodePath::default(),
            recipe: None,
            live_update: true,
            threads: 0,
            apply_on_finish: true,
            apply_budget_ms: DELIVERY_BUDGET_MS,
            worker: None,
            pending: None,
            delivery: None,
            free_when_done: false,
            result: None,
            stage_reports: Vec::new(),
            device_used: String::new(),
            live: None,
            refreshes: 0,
            base,
        }
    }

    fn process(&mut self, _delta: f64) {
        self.poll();
    }

    fn exit_tree(&mut self) {
        if let Some(mut worker) = self.worker.take() {
            worker.cancel_and_join();
        }
        self.delivery = None;
        self.base_mut().set_process(false);
    }
}

/// What `poll` found, to act on after the messages were drained.
enum Outcome {
    Finished(Box<Prepared>),
    Failed(String),
}

#[godot_api]
impl ErosionSimulator {
    /// Progress within stage `stage_index` (0-based position in the recipe's `stages`) of
    /// kind `stage`, `fraction` in [0, 1]; `stage_index` -1 before the stages (`stage`
    /// `planet`: a recipe's planet being simulated).
    #[signal]
    fn progress(stage_index: i64, stage: GString, fraction: f32);
    /// One step of the current stage finished (iterations count from 1 in each stage).
    #[signal]
    fn step_finished(iteration: i64);
    /// The run finished; `get_result()` holds the terrain.
    #[signal]
    fn finished();
    /// The run could not start or stopped: the reason (`cancelled` after `cancel()`).
    #[signal]
    fn failed(message: GString);

    /// Starts the run on a worker thread. Returns false (and emits `failed`) when the
    /// recipe is missing or invalid, or while a run is going or its result is still being
    /// applied (`is_running()`); that run carries on.
    #[func]
    pub fn start(&mut self) -> bool {
        match self.try_start() {
            Ok(()) => true,
            Err(message) => {
                self.signals()
                    .failed()
                    .emit(&GString::from(message.as_str()));
                // A node freed when done is freed by the run that is going, if one is.
                if self.free_when_done && !self.is_running() {
                    self.base_mut().queue_free();
                }
                false
            }
        }
    }

    /// Live erosion: the recipe's stream power (its first `StreamPower` stage, at its
    /// finest level) runs step after step from the terrain as it is now (or the recipe's
    /// start when the terrain has no data), with the terrain's painted uplift and
    /// precipitation, which it takes up within a step whenever they are painted. The
    /// terrain is redrawn about 10–15 times a second. It runs until `cancel()`, which
    /// stops it within a step and applies the eroded terrain (`finished` follows).
    /// Returns false (and emits `failed`) when it cannot start.
    #[func]
    pub fn start_live(&mut self) -> bool {
        match self.try_start_live() {
            Ok(()) => true,
            Err(message) => {
                self.signals()
                    .failed()
                    .emit(&GString::from(message.as_str()));
                false
            }
        }
    }

    /// True while a live run (`start_live`) goes on.
    #[func]
    pub fn is_live(&self) -> bool {
        self.live.is_some()
    }

    /// Live views shown on the terrain since the last start (each one a redraw).
    #[func]
    pub fn get_refresh_count(&self) -> i64 {
        self.refreshes
    }

    /// Asks the run to stop; it stops within one step and then emits `failed("cancelled")`
    /// (a live run is kept instead: its terrain is applied and `finished` follows).
    #[func]
    pub fn cancel(&mut self) {
        if let Some(worker) = &self.worker {
            worker.cancel.store(true, Ordering::SeqCst);
        }
    }

    /// True from `start()` until `finished` or `failed` was emitted.
    #[func]
    pub fn is_running(&self) -> bool {
        self.worker.is_some() || self.delivery.is_some()
    }

    /// True while a finished run's result is being applied: the run itself is over, and
    /// its images, textures and collision are made a slice per frame (a few frames; a
    /// `cancel()` then no longer stops it). `finished` follows.
    #[func]
    pub fn is_finishing(&self) -> bool {
        self.worker.is_none() && self.delivery.is_some()
    }

    /// The terrain of the last finished run (null before).
    #[func]
    pub fn get_result(&self) -> Option<Gd<TerrainData>> {
        self.result.clone()
    }

    /// What each stage of the last finished recipe run reported, as `bake.json`'s
    /// `stages`: per stage a dictionary with `stage` (its name; the first entry is the
    /// initial terrain), `seconds`, `figures` (named totals, e.g. `wind_blown_off_m3`,
    /// `hydraulic_water_lost_m3`; empty when the stage measures none) and `device` (what
    /// ran it: `cpu`, `gpu: <adapter>`, or `cpu (Auto: <why>)`). Empty before a run
    /// finishes, and after a live run.
    #[func]
    pub fn get_stage_reports(&self) -> Array<VarDictionary> {
        self.stage_reports
            .iter()
            .map(|t| {
                let mut figures = VarDictionary::new();
                for (name, value) in &t.figures {
                    figures.set(*name, *value);
                }
                let mut d = VarDictionary::new();
                d.set("stage", t.stage.as_str());
                d.set("seconds", t.seconds);
                d.set("figures", &figures.to_variant());
                d.set("device", t.device.as_str());
                d
            })
            .collect()
    }

    /// Where the last run's stream power ran, as `bake.json` says it: `cpu`, `gpu:
    /// <adapter>` (e.g. `gpu: llvmpipe (…) (Vulkan, Cpu)`), or `cpu (Auto: <why>)` where the
    /// recipe's `device: Auto` found no GPU or a stage the GPU does not run (a run's first
    /// such stage; `get_stage_reports()` has each stage's). Set before `finished` (a live
    /// run's too); empty before and after a failed run. `device: Gpu` without a GPU fails
    /// with a message naming `device`.
    #[func]
    pub fn get_device_used(&self) -> GString {
        GString::from(self.device_used.as_str())
    }

    /// Worker and pool threads alive across all simulators (0 when none runs).
    #[func]
    pub fn live_thread_count() -> i64 {
        LIVE_THREADS.load(Ordering::SeqCst)
    }

    /// Handles what the worker sent since the last call (called every frame by
    /// `_process`; callable by hand when the node is not in a tree). Never blocks.
    #[func]
    pub fn poll(&mut self) {
        if self.delivery.is_some() {
            self.deliver_slices();
            return;
        }
        self.send_live_maps();
        let Some(worker) = &mut self.worker else {
            return;
        };
        let mut events: Vec<(i64, GString, f32)> = Vec::new();
        let mut steps: Vec<u32> = Vec::new();
        let mut snapshot = None;
        let mut outcome = None;
        let mut order: Vec<bool> = Vec::new(); // true = progress, false = step
        if !worker.done {
            loop {
                match worker.rx.try_recv() {
                    Ok(Msg::Progress {
                        index,
                        stage,
                        fraction,
                    }) => {
                        events.push((index as i64, GString::from(stage.as_str()), fraction));
                        order.push(true);
                    }
                    Ok(Msg::Step {
                        iteration,
                        snapshot: s,
                    }) => {
                        steps.push(iteration);
                        order.push(false);
                        if s.is_some() {
                            snapshot = s;
                        }
                    }
                    Ok(Msg::Device(device)) => self.device_used = device,
                    Ok(Msg::Finished(world)) => {
                        outcome = Some(Outcome::Finished(world));
                        break;
                    }
                    Ok(Msg::Failed(message)) => {
                        outcome = Some(Outcome::Failed(message));
                        break;
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        outcome = Some(Outcome::Failed(
                            "the simulation thread stopped unexpectedly".into(),
                        ));
                        break;
                    }
                }
            }
        }
        if outcome.is_some() {
            worker.done = true;
        }
        // The thread ends right after its last message; join only once it has, so the
        // main thread never waits on it.
        let finished_thread = worker.done && worker.handle.as_ref().is_none_or(|h| h.is_finished());

        // Signals in the order the worker sent them.
        let (mut pi, mut si) = (0, 0);
        for is_progress in order {
            if is_progress {
                let (index, stage, fraction) = &events[pi];
                pi += 1;
                self.signals().progress().emit(*index, stage, *fraction);
            } else {
                let iteration = steps[si] as i64;
                si += 1;
                self.signals().step_finished().emit(iteration);
            }
        }
        if let Some(snap) = snapshot {
            if self.live_update {
                if let Some(mut terrain) = self.terrain_node() {
                    self.refreshes += 1;
                    terrain.bind_mut().preview(
                        snap.grid,
                        &snap.heights,
                        (snap.lo, snap.hi),
                        snap.water.as_deref(),
                        snap.colours.as_deref(),
                        snap.strata.as_ref(),
                    );
                }
            }
        }
        if let Some(outcome) = outcome {
            self.pending = Some(outcome);
        }
        if finished_thread {
            self.live = None;
            if let Some(mut worker) = self.worker.take() {
                if let Some(handle) = worker.handle.take() {
                    let _ = handle.join();
                }
            }
            match self.pending.take() {
                Some(Outcome::Finished(mut prepared)) => {
                    self.stage_reports = std::mem::take(&mut prepared.stages);
                    self.delivery = Some(Delivery::new(*prepared));
                    self.deliver_slices();
                }
                Some(Outcome::Failed(message)) => {
                    self.base_mut().set_process(false);
                    self.signals()
                        .failed()
                        .emit(&GString::from(message.as_str()));
                    if self.free_when_done {
                        self.base_mut().queue_free();
                    }
                }
                None => self.base_mut().set_process(false),
            }
        }
    }
}

impl ErosionSimulator {
    /// Sets the terrain path (for `TerrainWorld.generate`).
    pub fn set_terrain_path(&mut self, path: NodePath) {
        self.terrain = path;
    }

    /// Sets the recipe resource (for `TerrainWorld.generate`).
    pub fn set_recipe_resource(&mut self, recipe: Option<Gd<TerrainRecipe>>) {
        self.recipe = recipe;
    }

    fn terrain_node(&self) -> Option<Gd<TerrainWorld>> {
        let node = if self.terrain.is_empty() {
            self.base().get_parent()
        } else if self.terrain.is_absolute() && !self.base().is_inside_tree() {
            // An absolute path means nothing outside the active scene tree (Godot would
            // print an error for it); a relative one resolves among the node's relatives.
            None
        } else {
            self.base().get_node_or_null(&self.terrain)
        }?;
        node.try_cast::<TerrainWorld>().ok()
    }

    /// Refuses a start while a run is going or its result is still being applied (the
    /// delivery would otherwise turn processing off under the new run), or with a bad
    /// `threads`.
    fn check_can_start(&self) -> Result<(), String> {
        if self.worker.is_some() {
            return Err("a run is already going; cancel it first".into());
        }
        if self.delivery.is_some() {
            return Err(
                "the last run's result is still being applied; start again after `finished`".into(),
            );
        }
        if !(0..=MAX_THREADS).contains(&self.threads) {
            return Err(format!(
                "invalid value for `threads`: must be between 0 (one per CPU) and {MAX_THREADS}, got {}",
                self.threads
            ));
        }
        Ok(())
    }

    /// The recipe to run, checked, and the folder its files are relative to: the
    /// simulator's `recipe`, else the terrain's.
    fn recipe_to_run(
        &self,
        terrain: Option<&Gd<TerrainWorld>>,
    ) -> Result<(Recipe, PathBuf), String> {
        let recipe_res = match &self.recipe {
            Some(r) => r.clone(),
            None => terrain
                .and_then(|t| t.bind().recipe_resource())
                .ok_or("no recipe: set the simulator's or the terrain's `recipe`")?,
        };
        let r = recipe_res.bind();
        Ok((r.parsed_valid()?, r.base_dir()))
    }

    fn try_start(&mut self) -> Result<(), String> {
        self.check_can_start()?;
        let terrain = self.terrain_node();
        let (mut recipe, base_dir) = self.recipe_to_run(terrain.as_ref())?;
        // The terrain's painted uplift and precipitation take the recipe's place.
        if let Some(t) = &terrain {
            let (uplift, precipitation) = t.bind().paint_maps().shared();
            recipe.paint_over(uplift, precipitation);
        }
        // Build the terrain's display mesh now rather than at the first live update.
        if let (Some(t), Ok(grid)) = (&terrain, recipe.grid()) {
            if self.live_update || self.apply_on_finish {
                t.clone().bind_mut().prepare_mesh(grid);
            }
        }
        if self.apply_on_finish && terrain.is_none() {
            return Err(format!(
                "no TerrainWorld at `{}` to apply the result to (set `terrain`, or apply_on_finish = false)",
                self.terrain
            ));
        }
        let threads = self.threads.max(0) as usize;
        let live = self.live_update;
        // Collision regions and the skirt are made on the worker when the result will reach
        // a terrain.
        let target = match (&terrain, self.apply_on_finish) {
            (Some(t), true) => t.bind().prepare_target(),
            _ => Target {
                collision: false,
                edge: None,
                ground: Default::default(),
            },
        };
        let (tx, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let handle = std::thread::Builder::new()
            .name("orogen-simulator".into())
            .spawn(move || work(recipe, base_dir, threads, live, target, flag, tx))
            .map_err(|e| format!("cannot start the simulation thread: {e}"))?;
        self.worker = Some(Worker::new(handle, rx, cancel));
        self.pending = None;
        self.refreshes = 0;
        self.device_used.clear();
        self.base_mut().set_process(true);
        Ok(())
    }

    fn try_start_live(&mut self) -> Result<(), String> {
        self.check_can_start()?;
        let terrain = self.terrain_node().ok_or_else(|| {
            format!(
                "no TerrainWorld at `{}` to erode live (set `terrain`)",
                self.terrain
            )
        })?;
        let (recipe, base_dir) = self.recipe_to_run(Some(&terrain))?;
        let (world, maps, revision, target) = {
            let t = terrain.bind();
            let paint = t.paint_maps();
            let maps = live_maps(paint);
            (
                t.live_world()?,
                maps,
                paint.revision() as i64,
                t.prepare_target(),
            )
        };
        if world.is_none() {
            if let Ok(grid) = recipe.grid() {
                terrain.clone().bind_mut().prepare_mesh(grid);
            }
        }
        let threads = self.threads.max(0) as usize;
        let (tx, rx) = mpsc::channel();
        let (maps_tx, maps_rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let job = LiveJob {
            recipe,
            base_dir,
            world,
            maps,
            maps_rx,
        };
        let handle = std::thread::Builder::new()
            .name("orogen-live".into())
            .spawn(move || work_live(job, threads, target, flag, tx))
            .map_err(|e| format!("cannot start the simulation thread: {e}"))?;
        self.worker = Some(Worker::new(handle, rx, cancel));
        self.live = Some((maps_tx, revision));
        self.pending = None;
        self.refreshes = 0;
        self.device_used.clear();
        self.apply_on_finish = true;
        self.live_update = true;
        self.base_mut().set_process(true);
        Ok(())
    }

    /// Sends the terrain's painted maps to a live run when they changed since last sent.
    fn send_live_maps(&mut self) {
        let Some((_, sent)) = &self.live else {
            return;
        };
        let sent = *sent;
        let Some(terrain) = self.terrain_node() else {
            return;
        };
        let t = terrain.bind();
        let paint = t.paint_maps();
        let now = paint.revision() as i64;
        if now == sent {
            return;
        }
        let maps = live_maps(paint);
        drop(t);
        if let Some((tx, rev)) = &mut self.live {
            let _ = tx.send(maps);
            *rev = now;
        }
    }

    /// Does slices of the delivery until `apply_budget_ms` is spent (at least one), then,
    /// once all are done, emits `finished` (or `failed`).
    fn deliver_slices(&mut self) {
        let start = Instant::now();
        // A negative or NaN budget is 0 (one slice a frame); at most 1000 s.
        let ms = if self.apply_budget_ms > 0.0 {
            self.apply_budget_ms.min(1e6)
        } else {
            0.0
        };
        let budget = Duration::from_secs_f64(f64::from(ms) / 1e3);
        let outcome = loop {
            let Some(mut delivery) = self.delivery.take() else {
                return;
            };
            let slice_start = Instant::now();
            let what = delivery.stage_name();
            let step = self.delivery_slice(&mut delivery);
            if trace_slices() {
                eprintln!(
                    "orogen: slice {what}: {:.2} ms",
                    slice_start.elapsed().as_secs_f64() * 1e3
                );
            }
            self.delivery = Some(delivery);
            match step {
                // A heavy slice (the skirt's mesh, the lakes' water mesh) starts a frame
                // of its own rather than after others in one.
                Ok(false)
                    if start.elapsed() < budget
                        && !self.delivery.as_ref().is_some_and(Delivery::next_is_heavy) =>
                {
                    continue
                }
                Ok(false) => return,
                Ok(true) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.delivery = None;
        self.base_mut().set_process(false);
        match outcome {
            Ok(()) => self.signals().finished().emit(),
            Err(e) => self.signals().failed().emit(&GString::from(e.as_str())),
        }
        if self.free_when_done {
            self.base_mut().queue_free();
        }
    }

    /// One slice of `delivery`: an image, the resource, or a piece of the terrain's update.
    /// Ok(true) once all is done.
    fn delivery_slice(&mut self, d: &mut Delivery) -> Result<bool, String> {
        match &mut d.stage {
            Stage::Images(k) => {
                let k = *k;
                d.make_image(k)?;
                Ok(false)
            }
            Stage::Rivers(k) => {
                let k = *k;
                d.make_rivers(k)?;
                Ok(false)
            }
            Stage::Data => {
                let (data, prepared) = d.assemble()?;
                self.result = Some(data.clone());
                let terrain = if self.apply_on_finish {
                    self.terrain_node()
                } else {
                    None
                };
                let Some(mut terrain) = terrain else {
                    return Ok(true);
                };
                let job = terrain.bind_mut().begin_apply(data, prepared);
                d.stage = Stage::Apply(terrain, Box::new(job));
                Ok(false)
            }
            Stage::Apply(terrain, job) => {
                // Handlers of the terrain's `data_changed` may call back into this
                // simulator (get_result, is_running): allow it while we wait.
                let _reentrant = self.base_mut();
                Ok(terrain.bind_mut().apply_slice(job))
            }
        }
    }
}

/// Whether `OROGEN_TRACE_SLICES` is set: each slice of a delivery prints its name and time
/// on stderr (for `scripts/bench-godot-apply.sh`, to find a long frame).
fn trace_slices() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("OROGEN_TRACE_SLICES").is_some())
}
