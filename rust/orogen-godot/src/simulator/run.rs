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
use orogen_core::runner::{run_recipe_watched, Event};
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
    /// On the GPU the read-back itself, shared (no copy on the worker); on the CPU a copy
    /// of the world's. The main thread's image bytes are then the one copy (issue #42).
    pub heights: Arc<Vec<f32>>,
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
    /// When the flag is set (the runner asked live painting's `view_due` or a run's
    /// `world_due`, which set it, and read the GPU's heights back for that step alone);
    /// the observer clears it.
    Asked(Arc<AtomicBool>),
}

/// Live painting's `view_due` (and a run's `world_due`): at most every `SNAPSHOT_INTERVAL`, setting `asked` for the
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

/// A step reported without its world (`world_due` said no; `Event::Progress` alone), sent
/// as `Msg::Step` before the next message or when the observer goes.
struct Unseen<'a> {
    tx: &'a Sender<Msg>,
    /// Set by the run's `world_due` when it says no: the next progress is that step's.
    flag: Arc<AtomicBool>,
    /// That step (stage index, iteration), until sent.
    step: Option<(usize, u32)>,
}

impl Unseen<'_> {
    fn flush(&mut self) {
        if let Some((_, iteration)) = self.step.take() {
            let _ = self.tx.send(Msg::Step {
                iteration,
                snapshot: None,
            });
        }
    }
}

impl Drop for Unseen<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Turns the core's events into messages: progress at most every `PROGRESS_INTERVAL`,
/// each step (those reported by progress alone where `unseen` is set: `world_due` said
/// no), and a snapshot when `views` says.
fn observer(tx: &Sender<Msg>, views: Views, unseen: Arc<AtomicBool>) -> impl FnMut(Event<'_>) + '_ {
    let mut last_progress: Option<(Instant, usize)> = None;
    let mut unseen = Unseen {
        tx,
        flag: unseen,
        step: None,
    };
    move |event: Event<'_>| {
        // A step without its world is the progress after `world_due` said no; its `Msg::Step`
        // goes before what follows, unless its world comes after all (a stage's last step).
        let this = match &event {
            Event::Step {
                index, iteration, ..
            } => Some((*index, *iteration)),
            _ => None,
        };
        if unseen.step.is_some() && unseen.step == this {
            unseen.step = None;
        }
        unseen.flush();
        if let Event::Progress {
            index, iteration, ..
        } = &event
        {
            if unseen.flag.swap(false, Ordering::Relaxed) {
                unseen.step = Some((*index, *iteration));
            }
        }
        observe(event, tx, &views, &mut last_progress)
    }
}

/// One event as messages ([`observer`]).
fn observe(
    event: Event<'_>,
    tx: &Sender<Msg>,
    views: &Views,
    last_progress: &mut Option<(Instant, usize)>,
) {
    match event {
        Event::StageStarted { index, name, .. } => {
            *last_progress = Some((Instant::now(), index));
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
            let due = match *last_progress {
                Some((t, i)) => i != index || fraction >= 1.0 || t.elapsed() >= PROGRESS_INTERVAL,
                None => true,
            };
            if due {
                *last_progress = Some((Instant::now(), index));
                let _ = tx.send(Msg::Progress {
                    index,
                    stage: name.to_string(),
                    fraction,
                });
            }
        }
        Event::Step {
            iteration,
            world,
            shown,
            ..
        } => {
            let due = match views {
                Views::Off => false,
                Views::Asked(flag) => flag.swap(false, Ordering::Relaxed),
            };
            let snapshot = if due {
                // A graph erodes its nodes: show them through the fast Gaussian surface.
                let heights = match shown {
                    Some(h) => h,
                    None => Arc::new(
                        world
                            .graph_preview()
                            .unwrap_or_else(|| world.height.data.clone()),
                    ),
                };
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
                *last_progress = Some((Instant::now(), usize::MAX));
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
pub fn on_worker<F>(threads: usize, views: Views, unseen: Arc<AtomicBool>, tx: Sender<Msg>, job: F)
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
    let mut observer = observer(&tx, views, unseen);
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
    // The steps whose view is not due are reported without their world, so a stage on
    // the GPU reads nothing back for them (issue #42); `step_finished` comes for each.
    let asked = Arc::new(AtomicBool::new(false));
    let unseen = Arc::new(AtomicBool::new(false));
    let views = if live {
        Views::Asked(asked.clone())
    } else {
        Views::Off
    };
    let mut clock = view_clock(asked);
    let flag = unseen.clone();
    let mut world_due = move || {
        let due = live && clock();
        flag.store(!due, Ordering::Relaxed);
        due
    };
    on_worker(threads, views, unseen, tx, move |observer, tx| {
        let opened = super::device::open(recipe.device)?;
        let out = run_recipe_watched(
            &recipe,
            &base_dir,
            &cancel,
            observer,
            opened.devices(recipe.device),
            &mut world_due,
        )?;
        let used = super::device::summary(out.timings.iter().map(|t| t.device.as_str()));
        let _ = tx.send(Msg::Device(used));
        Ok(Prepared::new(out.world, target).with_stages(out.timings))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use orogen_core::field::Heightfield;
    use orogen_core::World;

    fn world() -> World {
        let grid = Grid::new(4, 3, 10.0).unwrap();
        World::new(Heightfield::from_vec(grid, vec![1.0; 12], "h").unwrap(), 1)
    }

    fn step<'a>(world: &'a World, iteration: u32, shown: Option<Arc<Vec<f32>>>) -> Event<'a> {
        Event::Step {
            index: 0,
            name: "StreamPower",
            iteration,
            world,
            shown,
        }
    }

    fn progress(iteration: u32) -> Event<'static> {
        Event::Progress {
            index: 0,
            name: "StreamPower",
            fraction: iteration as f32 / 4.0,
            iteration,
        }
    }

    /// Issue #42: a view's heights read back on the GPU (`shown`) reach the snapshot the
    /// main thread turns into image bytes as the same buffer (no copy on the worker); the
    /// CPU's are a copy of the world's, its bytes.
    #[test]
    fn a_view_takes_the_shared_read_back_without_a_copy() {
        let (tx, rx) = std::sync::mpsc::channel();
        let asked = Arc::new(AtomicBool::new(false));
        let w = world();
        let read_back = Arc::new(vec![2.0f32; 12]);
        {
            let mut obs = observer(&tx, Views::Asked(asked.clone()), Arc::default());
            asked.store(true, Ordering::Relaxed);
            obs(step(&w, 1, Some(read_back.clone())));
            asked.store(true, Ordering::Relaxed);
            obs(step(&w, 2, None));
        }
        let snaps: Vec<Snapshot> = rx
            .try_iter()
            .filter_map(|m| match m {
                Msg::Step { snapshot, .. } => snapshot,
                _ => None,
            })
            .collect();
        assert_eq!(snaps.len(), 2);
        assert!(Arc::ptr_eq(&snaps[0].heights, &read_back));
        assert_eq!((snaps[0].lo, snaps[0].hi), (2.0, 2.0));
        assert_eq!(*snaps[1].heights, w.height.data);
        assert_ne!(snaps[1].heights.as_ptr(), w.height.data.as_ptr());
    }

    /// Steps whose world was not asked for (`world_due` said no: progress alone) are each
    /// sent as a step, once, in order, also where the world comes after all (a stage's
    /// last step) and for the last one before the observer goes.
    #[test]
    fn unseen_steps_are_each_sent_once_in_order() {
        let (tx, rx) = std::sync::mpsc::channel();
        let unseen = Arc::new(AtomicBool::new(false));
        let w = world();
        {
            let mut obs = observer(&tx, Views::Off, unseen.clone());
            // Step 1 seen, 2 unseen, 3 unseen but its world comes (the last), 4 unseen.
            obs(progress(1));
            obs(step(&w, 1, None));
            unseen.store(true, Ordering::Relaxed);
            obs(progress(2));
            unseen.store(true, Ordering::Relaxed);
            obs(progress(3));
            obs(step(&w, 3, None));
            unseen.store(true, Ordering::Relaxed);
            obs(progress(4));
        }
        let steps: Vec<u32> = rx
            .try_iter()
            .filter_map(|m| match m {
                Msg::Step { iteration, .. } => Some(iteration),
                _ => None,
            })
            .collect();
        assert_eq!(steps, vec![1, 2, 3, 4]);
    }
}
