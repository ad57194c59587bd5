//! The `bake` target: fuzzer bytes → a recipe → validate → the whole run in memory (the
//! runner, as `orogen bake` and Godot call it) → the bake's files, with the cost clamped so
//! a run takes milliseconds.
//!
//! Input: byte 0 picks the base. Below [`orogen_core::recipe::BUILT_IN`]'s length it is
//! that built-in recipe and the rest of the input (UTF-8) is `--set` lines applied in
//! order; otherwise the rest is a whole recipe in RON. Files a recipe names (`path`
//! fields: a heightmap terrain, an image uplift or precipitation) are read from
//! `fuzz/fixtures/` ([`FIXTURES`]); a recipe naming any other file is skipped.
//!
//! Properties checked:
//! - no panic, from validation to the written folder;
//! - an error is one line of at most [`crate::MAX_ERROR_BYTES`];
//! - when the run succeeds, every map of the world is finite (heights, graph nodes,
//!   layers, simulation state, every scalar and vector map) and the bake writes it: the
//!   folder then holds exactly the files the bake lists, and nothing is left beside it;
//! - the run gives the same result on 1 and on 2 threads: the same error, or the same
//!   height, map and river bytes.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

use orogen_core::planet::PlanetParams;
use orogen_core::recipe::{Domain, Process, Stage, BUILT_IN};
use orogen_core::world::{MapData, World};
use orogen_core::Recipe;

use crate::check_error;

/// Largest side of a fuzzed bake's grid, cells (a recipe's `size` is cut to it).
pub const MAX_SIDE: u32 = 33;
/// Most stages a fuzzed bake runs (later ones are dropped), and most processes in a loop.
pub const MAX_STAGES: usize = 4;
/// Most iterations of a stage or a loop.
pub const MAX_ITERATIONS: u32 = 8;
/// Most nodes of a Graph domain: the spacing is widened to keep under it.
pub const MAX_GRAPH_NODES: f64 = 300.0;
/// Most points and steps of a planet.
pub const MAX_PLANET_POINTS: u32 = 200;
pub const MAX_PLANET_STEPS: u32 = 4;
/// Most strata layers, and most repeats of them.
pub const MAX_STRATA_LAYERS: usize = 6;
pub const MAX_STRATA_REPEAT: u32 = 2;

/// The files a fuzzed recipe may name, in `fuzz/fixtures/` (made by [`write_fixtures`]):
/// a 16-bit PNG, an EXR of non-square cells, an EXR with NaN holes (for `nodata`), a raw
/// R16 (11 × 7), a raw f32 with values near f32's limits (8 × 8), an 8-bit PNG, a
/// one-cell EXR and a 40 × 40 EXR (larger than [`MAX_SIDE`]: its own size is the world's
/// unless `fit: Resample`).
pub const FIXTURES: &[&str] = &[
    "a.png", "b.exr", "c.exr", "d.r16", "e.f32", "f.png", "g.exr", "h.exr",
];

/// The folder of [`FIXTURES`].
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fixtures")
}

/// Writes [`FIXTURES`] into `dir` (what `fuzz/fixtures/` holds; a test checks they match).
pub fn write_fixtures(dir: &Path) -> orogen_core::Result<()> {
    use orogen_core::field::{Field, Grid};
    use orogen_core::io::{exr::write_exr, png16, raw};
    let map = |w: usize, h: usize, dx: f32, dy: f32, f: &dyn Fn(usize, usize) -> f32| {
        let grid = Grid::with_cells(w, h, dx, dy)?;
        let data = (0..w * h).map(|i| f(i % w, i / w)).collect();
        Field::from_vec(grid, data, "fixture")
    };
    let hills = |x: usize, y: usize| {
        let (x, y) = (x as f32, y as f32);
        400.0 + 300.0 * (x * 0.45).sin() * (y * 0.3).cos() + 20.0 * x - 5.0 * y
    };
    png16::write_png16(&dir.join("a.png"), &map(17, 13, 1.0, 1.0, &hills)?)?;
    write_exr(&dir.join("b.exr"), &map(21, 17, 30.0, 20.0, &hills)?)?;
    let holes = |x: usize, y: usize| {
        if (x + 2 * y).is_multiple_of(7) || x == 0 {
            f32::NAN
        } else {
            hills(x, y) - 500.0
        }
    };
    write_exr(&dir.join("c.exr"), &map(9, 9, 10.0, 10.0, &holes)?)?;
    raw::write_r16(&dir.join("d.r16"), &map(11, 7, 1.0, 1.0, &hills)?)?;
    let extremes = |x: usize, y: usize| match (x * 8 + y) % 5 {
        0 => 3e38,
        1 => -3e38,
        2 => 1e-38,
        3 => 0.0,
        _ => hills(x, y),
    };
    raw::write_raw_f32(&dir.join("e.f32"), &map(8, 8, 1.0, 1.0, &extremes)?)?;
    let mask = Field::from_vec(
        Grid::new(5, 3, 1.0)?,
        vec![0, 10, 20, 255, 128, 7, 7, 7, 0, 1, 2, 3, 250, 251, 252],
        "fixture",
    )?;
    png16::write_mask_png(&dir.join("f.png"), &mask)?;
    write_exr(&dir.join("g.exr"), &map(1, 1, 1.0, 1.0, &|_, _| 12.5)?)?;
    write_exr(&dir.join("h.exr"), &map(40, 40, 25.0, 25.0, &hills)?)?;
    Ok(())
}

/// Cuts `recipe`'s cost to milliseconds: see the `MAX_*` constants. A value the cut does
/// not touch (a negative or NaN spacing, a zero size) is left for validation to refuse.
pub fn clamp_cost(recipe: &mut Recipe) {
    recipe.size = (recipe.size.0.min(MAX_SIDE), recipe.size.1.min(MAX_SIDE));
    recipe.stages.truncate(MAX_STAGES);
    for stage in &mut recipe.stages {
        clamp_stage(stage);
    }
    if let Some(s) = &mut recipe.strata {
        s.layers.truncate(MAX_STRATA_LAYERS);
        s.repeat = s.repeat.min(MAX_STRATA_REPEAT);
    }
    if let Some(p) = recipe.planet_params() {
        recipe.planet = Some(PlanetParams {
            points: p.points.min(MAX_PLANET_POINTS),
            plates: p.plates.min(MAX_PLANET_POINTS),
            steps: p.steps.min(MAX_PLANET_STEPS),
            ..p
        });
    }
    let grid = recipe.grid();
    if let (Domain::Graph(g), Ok(grid)) = (&mut recipe.domain, grid) {
        for _ in 0..64 {
            let nodes = g.max_nodes(grid);
            if nodes.is_nan() || nodes <= MAX_GRAPH_NODES || !g.spacing.is_finite() {
                break;
            }
            g.spacing *= (nodes / MAX_GRAPH_NODES).sqrt() * 1.01;
        }
    }
}

fn clamp_stage(stage: &mut Stage) {
    match stage {
        Stage::TimeLoop(l) => {
            l.iterations = l.iterations.min(MAX_ITERATIONS);
            l.processes.truncate(MAX_STAGES);
            for p in &mut l.processes {
                let it = match p {
                    Process::StreamPower(p) => &mut p.iterations,
                    Process::Thermal(p) => &mut p.iterations,
                    Process::Hydrology(_) => continue,
                    Process::Hydraulic(p) => &mut p.iterations,
                    Process::LayeredThermal(p) => &mut p.iterations,
                    Process::Wind(p) => &mut p.iterations,
                };
                *it = (*it).min(MAX_ITERATIONS);
            }
        }
        Stage::StreamPower(p) => p.iterations = p.iterations.min(MAX_ITERATIONS),
        Stage::Thermal(p) => p.iterations = p.iterations.min(MAX_ITERATIONS),
        Stage::Hydrology(_) => {}
        Stage::Hydraulic(p) => p.iterations = p.iterations.min(MAX_ITERATIONS),
        Stage::LayeredThermal(p) => p.iterations = p.iterations.min(MAX_ITERATIONS),
        Stage::Wind(p) => p.iterations = p.iterations.min(MAX_ITERATIONS),
    }
}

/// True when every file `recipe` names is one of [`FIXTURES`] (by its plain name).
fn names_only_fixtures(recipe: &Recipe) -> bool {
    fn walk(v: &serde_json::Value, ok: &mut bool) {
        match v {
            serde_json::Value::Object(map) => {
                for (key, v) in map {
                    match v {
                        serde_json::Value::String(p) if key == "path" => {
                            *ok &= FIXTURES.contains(&p.as_str())
                        }
                        _ => walk(v, ok),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, ok)),
            _ => {}
        }
    }
    let Ok(tree) = serde_json::to_value(recipe) else {
        return false;
    };
    let mut ok = true;
    walk(&tree, &mut ok);
    ok
}

/// The recipe the input makes, cost clamped, or `None` when there is nothing to run (not
/// UTF-8, a refused `--set` or RON text, a file outside the fixtures).
pub fn recipe_of(data: &[u8]) -> Option<Recipe> {
    let (&pick, rest) = data.split_first()?;
    let text = std::str::from_utf8(rest).ok()?;
    let mut recipe = match BUILT_IN.get(pick as usize) {
        Some((name, _, _)) => {
            let mut r = Recipe::built_in(name).expect("a built-in recipe");
            for line in text.split('\n').filter(|l| !l.trim().is_empty()) {
                match r.apply_override(line) {
                    Ok(next) => r = next,
                    Err(e) => {
                        check_error("--set", &e);
                        return None;
                    }
                }
            }
            r
        }
        None => match Recipe::from_ron_str(text, "<fuzz bake>") {
            Ok(r) => r,
            Err(e) => {
                check_error("parse", &e);
                return None;
            }
        },
    };
    clamp_cost(&mut recipe);
    names_only_fixtures(&recipe).then_some(recipe)
}

/// What a run gave, to compare two runs by: the error text, or the world's bytes.
#[derive(PartialEq)]
enum Outcome {
    Failed(String),
    Baked(Vec<u8>),
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Failed(e) => write!(f, "failed: {e}"),
            Outcome::Baked(b) => write!(f, "baked ({} bytes of maps)", b.len()),
        }
    }
}

fn pools() -> &'static (rayon::ThreadPool, rayon::ThreadPool) {
    static POOLS: OnceLock<(rayon::ThreadPool, rayon::ThreadPool)> = OnceLock::new();
    POOLS.get_or_init(|| {
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .expect("a thread pool")
        };
        (pool(1), pool(2))
    })
}

/// Fails (panics) on the first non-finite value of any map of `world`, naming it.
fn check_finite(world: &World) {
    if let Some((what, cell, v)) = world.first_non_finite() {
        panic!("the run succeeded with {v} in {what} at node {cell}");
    }
    for (name, map) in &world.maps {
        let bad = match map {
            MapData::Scalar(m) => m.data.iter().find(|v| !v.is_finite()).copied(),
            MapData::Vector(m) => m.data.iter().flatten().find(|v| !v.is_finite()).copied(),
            _ => None,
        };
        if let Some(v) = bad {
            panic!("the run succeeded with {v} in the map {name}");
        }
    }
}

/// The world's bytes: heights, every map (scalar and vector maps as f32 bits, the rest by
/// their debug text) and the rivers.
fn world_bytes(world: &World) -> Vec<u8> {
    let mut out = Vec::new();
    let floats = |out: &mut Vec<u8>, v: &[f32]| {
        out.extend(v.iter().flat_map(|x| x.to_bits().to_le_bytes()));
    };
    floats(&mut out, &world.height.data);
    floats(&mut out, world.node_heights());
    for (name, map) in &world.maps {
        out.extend(name.as_bytes());
        match map {
            MapData::Scalar(m) => floats(&mut out, &m.data),
            MapData::Vector(m) => {
                let flat: Vec<f32> = m.data.iter().flatten().copied().collect();
                floats(&mut out, &flat)
            }
            other => out.extend(format!("{other:?}").as_bytes()),
        }
    }
    if let Some(rivers) = &world.rivers {
        out.extend(format!("{rivers:?}").as_bytes());
    }
    out
}

/// Runs `recipe` on `pool`; on success checks the world is finite and bakes it into a
/// fresh folder.
fn run_on(pool: &rayon::ThreadPool, recipe: &Recipe, write: bool) -> Outcome {
    let cancel = AtomicBool::new(false);
    let run = pool
        .install(|| orogen_core::runner::run_recipe(recipe, &fixtures_dir(), &cancel, &mut |_| {}));
    let out = match run {
        Ok(out) => out,
        Err(e) => {
            check_error("bake", &e);
            return Outcome::Failed(e.to_string());
        }
    };
    check_finite(&out.world);
    if write {
        // In memory where there is a tmpfs: each file is synced to disk as it is written,
        // which on a disk costs more than the whole run.
        let dir = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .expect("a temporary folder");
        let folder = dir.path().join("bake");
        let written =
            orogen_core::bake::write_bake(&folder, recipe, &out.world, &out.timings, None)
                .unwrap_or_else(|e| panic!("a successful run failed to bake: {e}"));
        // The folder holds what the bake says it wrote, and nothing else (no staging
        // folder or file of the swap left behind), beside the folder itself.
        let mut listed: Vec<PathBuf> = std::fs::read_dir(&folder)
            .expect("the bake's folder")
            .map(|e| e.expect("a folder entry").path())
            .collect();
        let mut written = written;
        listed.sort();
        written.sort();
        assert_eq!(listed, written, "the bake's folder is not what it wrote");
        let beside: Vec<_> = std::fs::read_dir(dir.path())
            .expect("the temporary folder")
            .map(|e| e.expect("a folder entry").file_name())
            .collect();
        assert_eq!(beside, ["bake"], "the bake left files beside its folder");
    }
    Outcome::Baked(world_bytes(&out.world))
}

/// The `bake` target's body (see the module doc), writing the bake of every successful run:
/// what `cargo test` replays the corpus with.
pub fn bake(data: &[u8]) {
    bake_writing(data, 1);
}

/// [`bake`] writing one successful run's bake in `every` (picked by a hash of the input),
/// the others checked in memory only: what the fuzzer runs, with `every` 4 (writing the
/// files took over half of a run's time).
pub fn bake_writing(data: &[u8], every: u32) {
    let Some(recipe) = recipe_of(data) else {
        return;
    };
    if let Err(e) = recipe.validate() {
        return check_error("validate", &e);
    }
    let hash = data
        .iter()
        .fold(0u32, |h, &b| h.wrapping_mul(31).wrapping_add(b as u32));
    let (one, two) = pools();
    let first = run_on(one, &recipe, hash.is_multiple_of(every.max(1)));
    let second = run_on(two, &recipe, false);
    match (&first, &second) {
        (Outcome::Failed(a), Outcome::Failed(b)) => {
            assert_eq!(a, b, "1 and 2 threads fail differently")
        }
        (Outcome::Baked(a), Outcome::Baked(b)) => {
            assert!(a == b, "1 and 2 threads give different bytes")
        }
        _ => panic!("1 thread: {first:?}\n2 threads: {second:?}"),
    }
}
