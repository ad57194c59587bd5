//! The worker thread's side of a run: its own rayon pool (counted in `LIVE_THREADS`), the
//! core's events turned into messages for the main thread (progress, steps, live
//! snapshots, the result prepared off the main thread), and a panic caught into a
//! `Failed` message. Nothing here touches Godot objects.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orogen_core::field::Grid;
use orogen_core::runner::{run_recipe_on, Event};
use orogen_core::{OrogenError, Recipe};

use crate::prepared::{Prepared, Target};

/// Shortest time between two live snapshots (at most ~15 per second).
const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(66);
/// Shortest time between two progress messages within a stage.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(20);

/// Worker and rayon-pool threads alive now, across every simulator (for leak tests).
pub static LIVE_THREADS: AtomicI64 = AtomicI64::new(0);

/// Counts a thread in `LIVE_THREADS` for as long as it lives.
struct LiveThread;

impl LiveThread {
    fn enter() -> LiveThread {
        LIVE_THREADS.fetch_add(1, Ordering::SeqCst);
        LiveThread
    }
}

impl Drop for LiveThread {
    fn drop(&mut self) {
        LIVE_THREADS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a live view shows, computed on the worker: heights with their range, the water
/// depth of a hydraulic run and the surface colour of a layered terrain.
pub struct Snapshot {
    pub grid: Grid,
    pub heights: Vec<f32>,
    pub lo: f32,
    pub hi: f32,
    pub water: Option<Vec<f32>>,
    pub colours: Option<Vec<[u8; 4]>>,
    /// A layered terrain's beds as bands, with the loose sediment over them.
    pub strata: Option<(orogen_core::world::StrataLook, Vec<f32>)>,
}

/// What the worker tells the main thread.
pub enum Msg {
    Progress {
        index: usize,
        stage: String,
        fraction: f32,
    },
    Step {
        iteration: u32,
        snapshot: Option<Snapshot>,
    },
    /// Where the stream power ran (`device_used`): `cpu`, `gpu: <adapter>` or
    /// `cpu (Auto: <why>)`.
    Device(String),
    Finished(Box<Prepared>),
    Failed(String),
}

/// When a run's observer sends a live view with a step.
#[derive(Clone)]
pub enum Views {
    /// Never (`live_update` off).
    Off,
    /// At most every `SNAPSHOT_INTERVAL`.
    Timed,
    /// When the flag is set (live painting: the runner asked `view_due`, which set it, and
    /// read the GPU's heights back for that step alone); the observer clears it.
    Asked(Arc<AtomicBool>),
}

/// Live painting's `view_due`: at most every `SNAPSHOT_INTERVAL`, setting `asked` for the
/// observer ([`Views::Asked`]).
pub fn view_clock(asked: Arc<AtomicBool>) -> impl FnMut() -> bool {
    let mut last: Option<Instant> = None;
    move || {
        let due = last.is_none_or(|t| t.elapsed() >= SNAPSHOT_INTERVAL);
        if due {
            last = Some(Instant::now());
        }
        asked.store(due, Ordering::Relaxed);
        due
    }
}

/// A rayon pool of `threads` (0: one per CPU) counted in `LIVE_THREADS`.
fn make_pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("orogen-pool-{i}"))
        .start_handler(|_| {
            LIVE_THREADS.fetch_add(1, Ordering::SeqCst);
        })
        .exit_handler(|_| {
            LIVE_THREADS.fetch_sub(1, Ordering::SeqCst);
        })
        .build()
        .map_err(|e| format!("cannot start the thread pool: {e}"))
}

/// Turns the core's events into messages: progress at most every `PROGRESS_INTERVAL`,
/// each step, and a snapshot when `views` says.
fn observer(tx: &Sender<Msg>, views: Views) -> impl FnMut(Event<'_>) + '_ {
    let mut last_snapshot: Option<Instant> = None;
    let mut last_progress: Option<(Instant, usize)> = None;
    move |event: Event<'_>| match event {
        Event::StageStarted { index, name, .. } => {
            last_progress = Some((Instant::now(), index));
            let _ = tx.send(Msg::Progress {
                index,
                stage: name.to_string(),
                fraction: 0.0,
            });
        }
        Event::Progress {
            index,
            name,
            fraction,
            ..
        } => {
            let due = match last_progress {
                Some((t, i)) => i != index || fraction >= 1.0 || t.elapsed() >= PROGRESS_INTERVAL,
                None => true,
            };
            if due {
                last_progress = Some((Instant::now(), index));
                let _ = tx.send(Msg::Progress {
                    index,
                    stage: name.to_string(),
                    fraction,
                });
            }
        }
        Event::Step {
            iteration, world, ..
        } => {
            let due = match &views {
                Views::Off => false,
                Views::Timed => {
                    let due = last_snapshot.is_none_or(|t| t.elapsed() >= SNAPSHOT_INTERVAL);
                    if due {
                        last_snapshot = Some(Instant::now());
                    }
                    due
                }
                Views::Asked(flag) => flag.swap(false, Ordering::Relaxed),
            };
            let snapshot = if due {
                // A graph erodes its nodes: show them through the fast Gaussian surface.
                let heights = world
                    .graph_preview()
                    .unwrap_or_else(|| world.height.data.clone());
                let (lo, hi) = orogen_core::field::finite_min_max(&heights);
                Some(Snapshot {
                    grid: world.grid(),
                    heights,
                    lo,
                    hi,
                    water: world.sim.water_depth.clone(),
                    colours: world.surface_colours(),
                    strata: world
                        .strata_look()
                        .map(|look| (look, world.layers.thickness(0).to_vec())),
                })
            } else {
                None
            };
            let _ = tx.send(Msg::Step {
                iteration,
                snapshot,
            });
        }
        Event::StageFinished { .. } => {}
        // What comes before the stages (a recipe's planet): `progress` with stage_index -1.
        Event::Setup { name, fraction } => {
            let due = last_progress.is_none_or(|(t, i)| {
                i != usize::MAX || t.elapsed() >= PROGRESS_INTERVAL || fraction >= 1.0
            });
            if due {
                last_progress = Some((Instant::now(), usize::MAX));
                let _ = tx.send(Msg::Progress {
                    index: usize::MAX,
                    stage: name.to_string(),
                    fraction,
                });
            }
        }
    }
}

/// The last message of a run that ended with `run`.
fn last_message(run: std::thread::Result<Result<Prepared, OrogenError>>) -> Msg {
    match run {
        Ok(Ok(prepared)) => Msg::Finished(Box::new(prepared)),
        Ok(Err(OrogenError::Cancelled)) => Msg::Failed("cancelled".into()),
        Ok(Err(e)) => Msg::Failed(e.to_string()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Msg::Failed(format!("internal error in the simulation: {what}"))
        }
    }
}

/// A worker thread's frame: its own rayon pool, `job` run in it with the observer of
/// `observer(views)` and a line to the main thread, a panic caught, and the last message
/// sent.
pub fn on_worker<F>(threads: usize, views: Views, tx: Sender<Msg>, job: F)
where
    F: FnOnce(&mut dyn FnMut(Event<'_>), &Sender<Msg>) -> Result<Prepared, OrogenError> + Send,
{
    let _alive = LiveThread::enter();
    let pool = match make_pool(threads) {
        Ok(p) => p,
        Err(e) => {
            let _ = tx.send(Msg::Failed(e));
            return;
        }
    };
    let mut observer = observer(&tx, views);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| job(&mut observer, &tx))
    }));
    drop(pool);
    let msg = last_message(run);
    drop(observer);
    let _ = tx.send(msg);
}

/// The worker thread of a run: the GPU opened where the recipe's `device` asks (the first
/// time in this process), the recipe, then its result prepared for the terrain.
pub fn work(
    recipe: Recipe,
    base_dir: PathBuf,
    threads: usize,
    live: bool,
    target: Target,
    cancel: Arc<AtomicBool>,
    tx: Sender<Msg>,
) {
    let views = if live { Views::Timed } else { Views::Off };
    on_worker(threads, views, tx, move |observer, tx| {
        let opened = super::device::open(recipe.device)?;
        let devices = opened.devices(recipe.device);
        let out = run_recipe_on(
            &recipe,
            &base_dir,
            &cancel,
            observer,
            devices.accelerator,
            devices.missing,
        )?;
        let used = super::device::summary(out.timings.iter().map(|t| t.device.as_str()));
        let _ = tx.send(Msg::Device(used));
        Ok(Prepared::new(out.world, target).with_stages(out.timings))
    });
}
