//! Live erosion's worker side (`ErosionSimulator.start_live`): stream power step after
//! step on the terrain as it is, taking up the maps painted meanwhile, until stopped; then
//! the eroded terrain comes back as any run's result.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;

use orogen_core::runner::{initial_world_cancellable, run_live_on, LiveHooks, LiveMaps};
use orogen_core::{Recipe, World};

use super::run::{on_worker, view_clock, Msg, Views};
use crate::prepared::{Prepared, Target};
use crate::terrain::paint_maps::PaintMaps;

/// The painted maps a live run takes: the terrain's now.
pub fn live_maps(paint: &PaintMaps) -> LiveMaps {
    LiveMaps {
        uplift: paint.get(0).cloned(),
        precipitation: paint.get(1).cloned(),
    }
}

/// What a live run starts from.
pub struct LiveJob {
    pub recipe: Recipe,
    pub base_dir: PathBuf,
    /// The terrain as it is (None: the recipe's initial world, made on the worker).
    pub world: Option<World>,
    /// The painted maps at the start.
    pub maps: LiveMaps,
    /// Maps painted since (the newest wins).
    pub maps_rx: mpsc::Receiver<LiveMaps>,
}

/// The live worker: stream power step after step until `stop` (on the GPU where the
/// recipe's `device` asks, reading its heights back only for the views shown), then the
/// terrain back.
pub fn work_live(
    job: LiveJob,
    threads: usize,
    target: Target,
    stop: Arc<AtomicBool>,
    tx: Sender<Msg>,
) {
    let LiveJob {
        recipe,
        base_dir,
        world,
        maps,
        maps_rx,
    } = job;
    let mut first = Some(maps);
    let mut take = move || first.take().or_else(|| maps_rx.try_iter().last());
    let asked = Arc::new(AtomicBool::new(false));
    let mut view_due = view_clock(asked.clone());
    // Live erosion reports every step with its world (`Event::Step`).
    let unseen = Arc::new(AtomicBool::new(false));
    on_worker(
        threads,
        Views::Asked(asked),
        unseen,
        tx,
        move |observer, tx| {
            let opened = super::device::open(recipe.device)?;
            let mut world = match world {
                Some(w) => w,
                None => initial_world_cancellable(&recipe, &base_dir, &stop)?,
            };
            let hooks = LiveHooks {
                take_maps: &mut take,
                view_due: &mut view_due,
                observer,
            };
            let out = run_live_on(
                &recipe,
                &base_dir,
                &mut world,
                &stop,
                hooks,
                opened.devices(recipe.device),
            )?;
            let _ = tx.send(Msg::Device(out.device));
            Ok(Prepared::new(world, target))
        },
    );
}
