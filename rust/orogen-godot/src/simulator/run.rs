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
use orogen_core::runner::{run_recipe, Event};
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
    Finished(Box<Prepared>),
    Failed(String),
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
/// each step, and with `live` a snapshot at most every `SNAPSHOT_INTERVAL`.
fn observer(tx: &Sender<Msg>, live: bool) -> impl FnMut(Event<'_>) + '_ {
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
            let snapshot = if live && last_snapshot.is_none_or(|t| t.elapsed() >= SNAPSHOT_INTERVAL)
            {
                last_snapshot = Some(Instant::now());
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
/// `observer(live)`, a panic caught, and the last message sent.
pub fn on_worker<F>(threads: usize, live: bool, tx: Sender<Msg>, job: F)
where
    F: FnOnce(&mut dyn FnMut(Event<'_>)) -> Result<Prepared, OrogenError> + Send,
{
    let _alive = LiveThread::enter();
    let pool = match make_pool(threads) {
        Ok(p) => p,
        Err(e) => {
            let _ = tx.send(Msg::Failed(e));
            return;
        }
    };
    let mut observer = observer(&tx, live);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| job(&mut observer))
    }));
    drop(pool);
    let msg = last_message(run);
    drop(observer);
    let _ = tx.send(msg);
}

/// The worker thread of a run: the recipe, then its result prepared for the terrain.
pub fn work(
    recipe: Recipe,
    base_dir: PathBuf,
    threads: usize,
    live: bool,
    target: Target,
    cancel: Arc<AtomicBool>,
    tx: Sender<Msg>,
) {
    on_worker(threads, live, tx, move |observer| {
        run_recipe(&recipe, &base_dir, &cancel, observer)
            .map(|out| Prepared::new(out.world, target).with_stages(out.timings))
    });
}
