//! The pipe model of `Hydraulic` on the GPU (hydraulic.wgsl) against orogen-core's CPU
//! `Hydraulic` on random terrains: heights, water, sediment and velocity after N steps with
//! rain, sources, friction, both capacity laws and both borders; water and material
//! balances; the same bytes twice; what it refuses.

use orogen_core::eroders::hydraulic::{Borders, CapacityLaw, Hydraulic, Params, Rain, Source};
use orogen_core::state::{Layers, MaterialProps, SimState, TerrainMut};
use orogen_core::Grid;
use orogen_gpu::{GpuHydraulic, HydraulicState};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::{bits, ctx};

/// Hills and noise over a tilted plane, metres.
fn terrain(w: usize, h: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            2.0 + 0.6 * (x / 5.0).sin() * (y / 7.0).cos()
                + 0.03 * x
                + 0.01 * y
                + rng.random_range(0.0..0.15)
        })
        .collect()
}

fn material(dissolubility: f32) -> MaterialProps {
    MaterialProps {
        dissolubility,
        ..MaterialProps::default()
    }
}

/// `steps` CPU steps from `start` (no water or sediment): the state, and the water added
/// and lost and the sediment lost, m³.
fn cpu_run(
    grid: Grid,
    params: &Params,
    diss: f32,
    start: &[f32],
    steps: usize,
) -> (HydraulicState, f64) {
    let mut hy = Hydraulic::new(grid, params.clone(), 1).unwrap();
    let mut b = start.to_vec();
    let mut layers = Layers::none();
    let mut sim = SimState::default();
    let mut added = 0.0;
    let (mut wl, mut sl) = (0.0, 0.0);
    {
        let mut t = TerrainMut::new(&mut b, &mut layers);
        for _ in 0..steps {
            let r = hy.step(&mut t, &mut sim, &[material(diss)]).unwrap();
            added += r.water_added_m3;
            wl += r.water_lost_m3;
            sl += r.sediment_lost_m3;
        }
    }
    let state = HydraulicState {
        heights: b,
        water: sim.water_depth.unwrap(),
        sediment: sim.sediment.unwrap(),
        flux: sim.flux.unwrap(),
        velocity: sim.velocity.unwrap(),
        water_lost_m3: wl,
        sediment_lost_m3: sl,
    };
    (state, added)
}

/// The same on the GPU, the sources resolved by the CPU's process.
fn gpu_run(grid: Grid, params: &Params, diss: f32, start: &[f32], steps: usize) -> HydraulicState {
    let cpu = Hydraulic::new(grid, params.clone(), 1).unwrap();
    let mut g =
        GpuHydraulic::on_grid(&ctx(), grid, params, |s| cpu.source_depths(s), diss, "h").unwrap();
    g.set_state(start, None, None, None).unwrap();
    for _ in 0..steps {
        g.step().unwrap();
    }
    g.state().unwrap()
}

fn sum64(v: &[f32]) -> f64 {
    v.iter().map(|&x| x as f64).sum()
}

/// The cases: name, parameters, dissolubility.
fn cases() -> Vec<(&'static str, Params, f32)> {
    let sources = vec![
        Source {
            x_m: 20.0,
            y_m: 18.0,
            radius_m: 4.0,
            rate_m3_per_s: 0.8,
            every_step: true,
        },
        Source {
            x_m: 50.0,
            y_m: 30.0,
            radius_m: 0.0,
            rate_m3_per_s: 30.0,
            every_step: false,
        },
    ];
    vec![
        ("defaults", Params::default(), 1.0),
        (
            "heavy rain, sources, soft rock",
            Params {
                rain: Rain::Uniform { rate_m_per_s: 5e-3 },
                sources: sources.clone(),
                capacity: 0.3,
                dissolve: 0.3,
                deposit: 0.2,
                ..Params::default()
            },
            0.6,
        ),
        (
            "friction, stream-power capacity, open borders",
            Params {
                rain: Rain::Uniform { rate_m_per_s: 4e-3 },
                sources: sources.clone(),
                chezy: Some(30.0),
                capacity_law: CapacityLaw::StreamPower,
                capacity: 2.0,
                dissolve: 0.3,
                deposit: 0.3,
                borders: Borders::Open,
                ..Params::default()
            },
            1.0,
        ),
        (
            "no rain or evaporation, open borders",
            Params {
                rain: Rain::None,
                evaporation: 0.0,
                sources,
                capacity: 0.5,
                borders: Borders::Open,
                ..Params::default()
            },
            1.0,
        ),
    ]
}

/// The largest difference of `g` from `c` relative to `c`'s largest magnitude, and how many
/// values are bit-equal.
fn compare(g: &[f32], c: &[f32]) -> (f32, usize) {
    let scale = c
        .iter()
        .fold(0.0f32, |m, v| m.max(v.abs()))
        .max(f32::MIN_POSITIVE);
    let worst = g
        .iter()
        .zip(c)
        .map(|(a, b)| (a - b).abs() / scale)
        .fold(0.0f32, f32::max);
    let equal = g
        .iter()
        .zip(c)
        .filter(|(a, b)| a.to_bits() == b.to_bits())
        .count();
    (worst, equal)
}

/// Heights, water, sediment and the velocity's x, by name.
fn fields(s: &HydraulicState) -> [(&'static str, Vec<f32>); 4] {
    [
        ("heights", s.heights.clone()),
        ("water", s.water.clone()),
        ("sediment", s.sediment.clone()),
        ("velocity", s.velocity.iter().map(|v| v.x).collect()),
    ]
}

/// The shader computes the CPU's expressions in the CPU's order, yet after one step some
/// values differ in their last bits (a driver may fuse a multiply-add or divide through a
/// reciprocal where the CPU rounds each operation), and the pipe model amplifies an ulp (the flux scaling's
/// `min`, the dissolve-or-deposit switch; frictionless water and dam breaks are chaotic).
/// So the bound is the CPU's own: the GPU may differ from the CPU by at most 3× what the
/// CPU's result moves when a seventh of its start heights move by one ulp, or by 2e-6 of
/// the largest height and 2e-4 of the largest water depth, sediment or speed, whichever is
/// more. With Chézy friction the model is not chaotic and the fixed bound alone must hold
/// (measured on lavapipe: heights within 7.3e-7 of the largest, water and sediment within
/// 5e-5, speeds within 1.2e-4, after 60 steps).
#[test]
fn gpu_pipe_model_follows_the_cpu_on_random_terrains() {
    let (w, h) = (71, 53);
    let grid = Grid::new(w, h, 1.0).unwrap();
    for (k, (name, params, diss)) in cases().into_iter().enumerate() {
        let start = terrain(w, h, 40 + k as u64);
        let (c1, _) = cpu_run(grid, &params, diss, &start, 1);
        let g1 = gpu_run(grid, &params, diss, &start, 1);
        for ((what, g), (_, c)) in fields(&g1).into_iter().zip(fields(&c1)) {
            let (worst, equal) = compare(&g, &c);
            eprintln!("{name}, one step: {what}: {equal} of {} bit-equal", w * h);
            assert!(
                worst <= 1e-6,
                "{name}: {what} after one step differ by {worst:e}"
            );
        }
        let nudged: Vec<f32> = start
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if i % 7 == 0 {
                    f32::from_bits(v.to_bits() + 1)
                } else {
                    *v
                }
            })
            .collect();
        for steps in [20, 60] {
            let (c, _) = cpu_run(grid, &params, diss, &start, steps);
            let (cn, _) = cpu_run(grid, &params, diss, &nudged, steps);
            let g = gpu_run(grid, &params, diss, &start, steps);
            if steps == 60 {
                let moved = c.heights.iter().zip(&start).filter(|(a, b)| a != b).count();
                assert!(moved > 200, "{name}: only {moved} cells eroded or filled");
                assert!(
                    sum64(&c.water) > 0.0 && sum64(&c.sediment) > 0.0,
                    "{name}: dry"
                );
            }
            let floors = [2e-6f32, 2e-4, 2e-4, 2e-4];
            let both = fields(&g).into_iter().zip(fields(&c)).zip(fields(&cn));
            for ((((what, gv), (_, cv)), (_, nv)), floor) in both.zip(floors) {
                let (worst, equal) = compare(&gv, &cv);
                let (own, _) = compare(&nv, &cv);
                eprintln!(
                    "{name}, {steps} steps: {what}: GPU within {worst:e} of the CPU's largest \
                     ({equal} of {} bit-equal); the CPU nudged by an ulp: {own:e}",
                    w * h
                );
                // With friction the model is not chaotic: the fixed bound alone.
                let tol = if params.chezy.is_some() {
                    floor
                } else {
                    floor.max(3.0 * own)
                };
                assert!(
                    worst <= tol,
                    "{name}, {steps} steps: {what} differ by {worst:e}"
                );
            }
        }
        let g = gpu_run(grid, &params, diss, &start, 60);
        let again = gpu_run(grid, &params, diss, &start, 60);
        for ((what, a), (_, b)) in fields(&g).into_iter().zip(fields(&again)) {
            assert_eq!(
                bits(&a),
                bits(&b),
                "{name}: {what}: not the same bytes twice"
            );
        }
    }
}

#[test]
fn gpu_pipe_model_balances_water_and_material() {
    let (w, h) = (64, 48);
    let grid = Grid::new(w, h, 1.0).unwrap();
    let steps = 80;
    for (k, (name, params, diss)) in cases().into_iter().enumerate() {
        // Evaporation takes water the balance cannot count: leave it out.
        let params = Params {
            evaporation: 0.0,
            ..params
        };
        let start = terrain(w, h, 70 + k as u64);
        let (c, added) = cpu_run(grid, &params, diss, &start, steps);
        let g = gpu_run(grid, &params, diss, &start, steps);
        let area = grid.cell_area() as f64;
        let water = sum64(&g.water) * area + g.water_lost_m3;
        assert!(
            (water - added).abs() <= 1e-5 * added,
            "{name}: water in {added} m³, on the map and out {water} m³"
        );
        let material0 = sum64(&start) * area;
        let material = (sum64(&g.heights) + sum64(&g.sediment)) * area + g.sediment_lost_m3;
        // Each transfer is exact to the f32 bit of the heights; what is left is rounding
        // of the ~3 m heights, half an ulp a cell a step.
        let bound = (w * h * steps) as f64 * 2f64.powi(-24 + 2) * area;
        assert!(
            (material - material0).abs() <= bound,
            "{name}: material {material0} → {material} m³"
        );
        assert!(
            (g.water_lost_m3 - c.water_lost_m3).abs() <= 1e-4 * c.water_lost_m3.max(1e-3),
            "{name}: water out GPU {} CPU {} m³",
            g.water_lost_m3,
            c.water_lost_m3
        );
        assert!(
            (g.sediment_lost_m3 - c.sediment_lost_m3).abs() <= 1e-3 * c.sediment_lost_m3.max(1e-6),
            "{name}: sediment out GPU {} CPU {} m³",
            g.sediment_lost_m3,
            c.sediment_lost_m3
        );
        assert_eq!(
            g.water_lost_m3 > 0.0,
            c.water_lost_m3 > 0.0,
            "{name}: water out"
        );
        if params.borders == Borders::Open && params.rain != Rain::None {
            assert!(g.water_lost_m3 > 0.0, "{name}: nothing left the map");
        }
    }
}

#[test]
fn drops_are_refused_naming_the_field() {
    let grid = Grid::new(20, 10, 1.0).unwrap();
    let params = Params {
        rain: Rain::Drops {
            power: 0.1,
            volume_m3: 0.01,
        },
        ..Params::default()
    };
    let e = GpuHydraulic::supports(grid, &params, "stages[0].Hydraulic").unwrap_err();
    assert!(e.to_string().contains("stages[0].Hydraulic.rain"), "{e}");
}

/// A recipe of 40×32 cells of 10 m with a `Hydraulic` stage (friction, so the CPU and the
/// GPU stay close) under `device`.
fn recipe(device: &str, extra: &str) -> orogen_core::Recipe {
    let text = format!(
        "(size: (40, 32), cell_size: 10.0, seed: 5,
          terrain: Noise(amplitude: 20.0, wavelength: 150.0),
          device: {device}, {extra}
          stages: [Hydraulic(iterations: 30, dt: 0.05, chezy: Some(30.0),
                             rain: Uniform(rate_m_per_s: 0.02), capacity: 0.5,
                             borders: Open)],
          outputs: [\"water_depth\", \"sediment\"], river_curves: None)"
    );
    let r = orogen_core::Recipe::from_ron_str(&text, "<test>").unwrap();
    r.validate().unwrap();
    r
}

#[test]
fn a_recipe_runs_its_hydraulic_stage_on_the_gpu_as_on_the_cpu() {
    use orogen_core::runner::{check_devices, run_recipe_on};
    use orogen_core::stages::{Accelerator, Device, Devices};
    let gpu = orogen_gpu::GpuBackend::new().unwrap();
    let never = std::sync::atomic::AtomicBool::new(false);
    let run = |device: &str, accel: Option<&dyn Accelerator>| {
        run_recipe_on(
            &recipe(device, ""),
            std::path::Path::new("."),
            &never,
            &mut |_| {},
            accel,
            "no GPU here",
        )
        .unwrap()
    };
    let cpu = run("Cpu", None);
    let on_gpu = run("Gpu", Some(&gpu));
    let ran = on_gpu.timings.last().unwrap();
    assert!(ran.device.starts_with("gpu: "), "{ran:?}");
    let (c, g) = (&cpu.world, &on_gpu.world);
    // The stage hands the GPU what the process test above gives it: the same bytes as
    // GpuHydraulic stepped directly from the recipe's start, and the CPU stage's as the
    // CPU's process; the two within the rounding that test bounds (measured 7.2e-6 of the
    // largest height after these 30 steps of heavy rain).
    let start = recipe_start();
    assert!(g.height.data != start, "the GPU stage moved nothing");
    let params = Params {
        dt: 0.05,
        chezy: Some(30.0),
        rain: Rain::Uniform { rate_m_per_s: 0.02 },
        capacity: 0.5,
        borders: Borders::Open,
        ..Params::default()
    };
    let grid = g.grid();
    let diss = MaterialProps::default().dissolubility;
    let direct = gpu_run(grid, &params, diss, &start, 30);
    let (direct_cpu, _) = cpu_run(grid, &params, diss, &start, 30);
    assert!(
        bits(&g.height.data) == bits(&direct.heights),
        "GPU stage heights"
    );
    assert!(
        bits(&c.height.data) == bits(&direct_cpu.heights),
        "CPU stage heights"
    );
    let (worst, _) = compare(&g.height.data, &c.height.data);
    assert!(worst <= 3e-5, "heights differ by {worst:e} of the largest");
    for (what, a, b, d) in [
        (
            "water",
            &g.sim.water_depth,
            &c.sim.water_depth,
            &direct.water,
        ),
        (
            "sediment",
            &g.sim.sediment,
            &c.sim.sediment,
            &direct.sediment,
        ),
    ] {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        assert!(bits(a) == bits(d), "GPU stage {what}");
        let (worst, _) = compare(a, b);
        assert!(
            sum64(b) > 0.0 && worst <= 1e-2,
            "{what} differ by {worst:e}"
        );
    }
    let lost = |o: &orogen_core::runner::RunOutput| {
        o.timings.last().unwrap().figures["hydraulic_water_lost_m3"]
    };
    let (lg, lc) = (lost(&on_gpu), lost(&cpu));
    assert!(
        (lg - lc).abs() <= 1e-4 * lc && lc > 0.0,
        "water out GPU {lg} CPU {lc} m³"
    );
    // Drops and strata: refused under Gpu before any work naming the stage, run on the CPU
    // under Auto saying why.
    let devices = |d| Devices {
        device: d,
        accelerator: Some(&gpu as &dyn Accelerator),
        missing: "",
    };
    let drops = recipe("Gpu", "")
        .apply_override("stages[0].Hydraulic.rain=Drops(power: 0.1, volume_m3: 0.5)");
    let drops = drops.unwrap();
    let e = check_devices(&drops, devices(Device::Gpu)).unwrap_err();
    assert!(e.to_string().contains("stages[0].Hydraulic.rain"), "{e}");
    let auto = drops.apply_override("device=Auto").unwrap();
    let out = run_recipe_on(
        &auto,
        std::path::Path::new("."),
        &never,
        &mut |_| {},
        Some(&gpu),
        "",
    )
    .unwrap();
    let ran = out.timings.last().unwrap();
    assert!(
        ran.device.starts_with("cpu (Auto: ") && ran.device.contains("Drops"),
        "{ran:?}"
    );
}

#[test]
fn strata_are_refused_under_gpu_and_run_on_the_cpu_under_auto() {
    use orogen_core::runner::{check_devices, run_recipe_on};
    use orogen_core::stages::{Accelerator, Device, Devices};
    let gpu = orogen_gpu::GpuBackend::new().unwrap();
    let strata = "strata: (layers: [(material: \"sandstone\", thickness: Constant(2.0))], \
                  bottom: \"granite\"),";
    let r = recipe("Gpu", strata);
    let devices = Devices {
        device: Device::Gpu,
        accelerator: Some(&gpu as &dyn Accelerator),
        missing: "",
    };
    let e = check_devices(&r, devices).unwrap_err();
    assert!(
        e.to_string().contains("stages[0].Hydraulic") && e.to_string().contains("strata"),
        "{e}"
    );
    let auto = r.apply_override("device=Auto").unwrap();
    let never = std::sync::atomic::AtomicBool::new(false);
    let out = run_recipe_on(
        &auto,
        std::path::Path::new("."),
        &never,
        &mut |_| {},
        Some(&gpu),
        "",
    )
    .unwrap();
    let ran = out.timings.last().unwrap();
    assert!(
        ran.device.starts_with("cpu (Auto: ") && ran.device.contains("strata"),
        "{ran:?}"
    );
}

/// The recipe's start heights (its terrain before any stage).
fn recipe_start() -> Vec<f32> {
    let r = recipe("Cpu", "")
        .apply_override("outputs=[]")
        .and_then(|r| r.apply_override("stages=[]"))
        .unwrap();
    orogen_core::run_recipe(
        &r,
        std::path::Path::new("."),
        &std::sync::atomic::AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap()
    .world
    .height
    .data
}

/// The recipe's Hydraulic stage started on the GPU over its initial world, stepped 30
/// times by `step` (a read-back each) or by `step_deferred` (read back at `sync`, after
/// `sync_after` steps, and at the end): the world at the end, as bytes (heights, water,
/// sediment, fluxes, velocity, the figures).
fn staged_bytes(deferred: bool, sync_after: u32) -> (Vec<u8>, Vec<f32>) {
    use orogen_core::stages::{Devices, Env, Stage, StageKind};
    let gpu = orogen_gpu::GpuBackend::new().unwrap();
    let r = recipe("Gpu", "");
    let mut world = orogen_core::runner::initial_world(&r, std::path::Path::new(".")).unwrap();
    let Stage::Hydraulic(stage) = &r.stages[0] else {
        panic!("the recipe's stage is Hydraulic")
    };
    let env = Env {
        base_dir: std::path::Path::new("."),
        field: "stages[0].Hydraulic".into(),
        index: 0,
        in_loop: false,
        devices: Devices {
            device: orogen_core::stages::Device::Gpu,
            accelerator: Some(&gpu),
            missing: "",
        },
    };
    let mut run = stage.start(&world, &env).unwrap();
    assert!(run.device().unwrap().starts_with("gpu: "));
    let mut synced = Vec::new();
    for i in 1..=stage.iterations {
        if deferred {
            run.step_deferred(&mut world).unwrap();
            if i == sync_after {
                run.sync(&mut world).unwrap();
                synced = world.height.data.clone();
            }
        } else {
            run.step(&mut world).unwrap();
            if i == sync_after {
                synced = world.height.data.clone();
            }
        }
    }
    run.finish(&mut world).unwrap();
    let sim = &world.sim;
    let mut out: Vec<u8> = bytemuck::cast_slice(&world.height.data).to_vec();
    for f in [&sim.water_depth, &sim.sediment] {
        out.extend_from_slice(bytemuck::cast_slice(f.as_deref().unwrap()));
    }
    out.extend_from_slice(bytemuck::cast_slice(sim.flux.as_deref().unwrap()));
    for v in sim.velocity.as_deref().unwrap() {
        out.extend(v.x.to_le_bytes().into_iter().chain(v.y.to_le_bytes()));
    }
    out.extend(format!("{:?}", world.figures).bytes());
    (out, synced)
}

#[test]
fn deferred_hydraulic_steps_give_the_bytes_of_steps_read_back_each_time() {
    let (each, at_12) = staged_bytes(false, 12);
    let (deferred, synced_12) = staged_bytes(true, 12);
    assert!(each == deferred, "deferred steps give other bytes");
    // `sync` brings the world to the step it is at.
    assert_eq!(bits(&at_12), bits(&synced_12));
    let start = recipe_start();
    assert_ne!(bits(&at_12), bits(&start), "12 steps moved no height");
}

/// The world of a run as bytes: heights, water, sediment, fluxes, velocity, the figures.
fn world_bytes(world: &orogen_core::World) -> Vec<u8> {
    let sim = &world.sim;
    let mut out: Vec<u8> = bytemuck::cast_slice(&world.height.data).to_vec();
    for f in [&sim.water_depth, &sim.sediment] {
        out.extend_from_slice(bytemuck::cast_slice(f.as_deref().unwrap()));
    }
    out.extend_from_slice(bytemuck::cast_slice(sim.flux.as_deref().unwrap()));
    for v in sim.velocity.as_deref().unwrap() {
        out.extend(v.x.to_le_bytes().into_iter().chain(v.y.to_le_bytes()));
    }
    out.extend(format!("{:?}", world.figures).bytes());
    out
}

/// A run whose observer wants the world only at its end (or every 10th step) reads the
/// GPU's heights back only then, and gives the bytes of the run that sees every step.
#[test]
fn a_run_that_wants_only_its_end_skips_the_read_backs_and_keeps_the_bytes() {
    use crate::common::{Counted, Tally};
    use orogen_core::runner::{run_recipe_on, run_recipe_watched, Event};
    use orogen_core::stages::{Device, Devices};
    let never = std::sync::atomic::AtomicBool::new(false);
    let r = recipe("Gpu", "");
    let every = Counted::new(true);
    let (mut steps, mut progress) = (0, 0);
    let mut count = |e: Event<'_>| match e {
        Event::Step { .. } => steps += 1,
        Event::Progress { .. } => progress += 1,
        _ => {}
    };
    let all = run_recipe_on(
        &r,
        std::path::Path::new("."),
        &never,
        &mut count,
        Some(&every),
        "",
    )
    .unwrap();
    assert_eq!((steps, progress), (30, 30));
    assert_eq!(Tally::get(&every.tally.hydraulic_reads), 30);
    for (stride, shown) in [(0u32, 1usize), (10, 3)] {
        let watched = Counted::new(true);
        let devices = Devices {
            device: Device::Gpu,
            accelerator: Some(&watched),
            missing: "",
        };
        let (mut steps, mut progress, mut asked) = (0, 0, 0u32);
        let mut count = |e: Event<'_>| match e {
            Event::Step { .. } => steps += 1,
            Event::Progress { .. } => progress += 1,
            _ => {}
        };
        let mut due = || {
            asked += 1;
            stride > 0 && asked % stride == 0
        };
        let out = run_recipe_watched(
            &r,
            std::path::Path::new("."),
            &never,
            &mut count,
            devices,
            &mut due,
        )
        .unwrap();
        assert!(
            world_bytes(&out.world) == world_bytes(&all.world),
            "stride {stride}: other bytes"
        );
        assert_eq!((steps, progress), (shown, 30), "stride {stride}");
        let t = &watched.tally;
        assert_eq!(Tally::get(&t.hydraulic_steps), 30);
        // The steps shown read back (the last one's world comes with the final state).
        assert_eq!(Tally::get(&t.hydraulic_reads), shown, "stride {stride}");
        assert!(out.timings.last().unwrap().device.starts_with("gpu: "));
    }
}
