//! The planet in a recipe (#10): planet → uplift → rivers in one run, the baked
//! equirectangular maps, regions across the antimeridian, determinism and bad input.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::support::on_threads;
use orogen_core::error::OrogenError;
use orogen_core::recipe::Recipe;
use orogen_core::runner::run_recipe;
use orogen_core::World;

/// A small planet and a small grid whose uplift comes from it.
fn recipe(extra: &str) -> Recipe {
    let text = format!(
        "(size: (65, 65), cell_size: 4000.0, seed: 9,
          planet: (points: 4000, plates: 10, continental_fraction: 0.4, steps: 40),
          terrain: Noise(kind: Fbm, octaves: 4, wavelength: 60000.0, amplitude: 30.0),
          uplift: Planet(region: (lat: 0.0, lon: 0.0, width_km: 256.0), seek_uplift_km: 20000.0),
          {extra})"
    );
    Recipe::from_ron_str(&text, "test").unwrap()
}

fn run(r: &Recipe) -> orogen_core::Result<World> {
    run_recipe(r, Path::new("."), &AtomicBool::new(false), &mut |_| {}).map(|o| o.world)
}

fn field_of(e: OrogenError) -> String {
    match e {
        OrogenError::InvalidParameter { field, .. } => field,
        other => panic!("expected an invalid parameter, got {other}"),
    }
}

#[test]
fn a_collision_zone_lifts_a_range_that_rivers_cut() {
    // 20,000 points are about 160 km apart: a region of 1,500 km spans several
    // triangles, so it holds the collision's edges too.
    let r = recipe(
        "stages: [StreamPower(iterations: 60, dt: 50000.0, k: Constant(5e-6), hydrology: false)]",
    )
    .apply_override("planet.points=20000")
    .unwrap()
    .apply_override("cell_size=23400.0")
    .unwrap()
    .apply_override(
        "uplift=Planet(region: (lat: 0.0, lon: 0.0, width_km: 1500.0), seek_uplift_km: 20000.0)",
    )
    .unwrap();
    let world = run(&r).unwrap();
    let planet = world
        .planet
        .as_ref()
        .expect("the planet is kept for the bake");
    let u = &world.uplift.data;
    let umax = u.iter().cloned().fold(f32::MIN, f32::max);
    let pmax = planet.uplifts().iter().cloned().fold(f32::MIN, f32::max);
    assert!(pmax > 0.0, "the planet lifts somewhere ({pmax})");
    // The region is centred on the planet's greatest uplift: the map holds it, smoothed.
    assert!(
        umax > 0.2 * pmax && umax <= pmax * 1.0001,
        "region max {umax} vs planet max {pmax}"
    );
    // Where the planet lifts, the eroded terrain stands higher: the quarter of the cells
    // with the most uplift against the quarter with the least.
    let h = &world.height.data;
    let mut order: Vec<usize> = (0..u.len()).collect();
    order.sort_by(|&a, &b| u[a].total_cmp(&u[b]));
    let q = order.len() / 4;
    let mean = |idx: &[usize]| idx.iter().map(|&i| h[i] as f64).sum::<f64>() / idx.len() as f64;
    let (low, high) = (mean(&order[..q]), mean(&order[order.len() - q..]));
    let lifted = u.iter().filter(|&&v| v > 0.1 * umax).count() as f64 / u.len() as f64;
    let rho = spearman(u, h);
    println!(
        "uplift max {umax:.3e} m/yr (planet {pmax:.3e}), {:.0}% of cells over a tenth of it; \
         mean height {low:.0} m under the least uplift, {high:.0} m under the most; \
         spearman {rho:.3}",
        100.0 * lifted
    );
    assert!(high > low + 300.0, "the lifted quarter stands higher");
    let relief =
        h.iter().cloned().fold(f32::MIN, f32::max) - h.iter().cloned().fold(f32::MAX, f32::min);
    assert!(relief > 100.0, "a range rose: relief {relief} m");
}

fn spearman(a: &[f32], b: &[f32]) -> f64 {
    let rank = |v: &[f32]| {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        let mut r = vec![0f64; v.len()];
        for (k, &i) in idx.iter().enumerate() {
            r[i] = k as f64;
        }
        r
    };
    let (ra, rb) = (rank(a), rank(b));
    let n = ra.len() as f64;
    let m = (n - 1.0) / 2.0;
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - m) * (y - m)).sum();
    let var: f64 = ra.iter().map(|x| (x - m) * (x - m)).sum();
    cov / var
}

#[test]
fn the_bake_writes_the_planet_as_equirectangular_maps() {
    let r = recipe("");
    let world = run(&r).unwrap();
    let dir = tempfile::tempdir().unwrap();
    orogen_core::bake::write_maps(&world, dir.path()).unwrap();
    let width = orogen_core::stages::planet::map_width(world.planet.as_ref().unwrap().len());
    for name in ["planet_height", "planet_age", "planet_uplift"] {
        let m = orogen_core::io::exr::read_exr(&dir.path().join(format!("{name}.exr"))).unwrap();
        assert_eq!((m.width(), m.height()), (width, width / 2), "{name} is 2:1");
        assert!(m.data.iter().all(|v| v.is_finite()), "{name}");
    }
    let h = orogen_core::io::exr::read_exr(&dir.path().join("planet_height.exr")).unwrap();
    assert!(h.data.iter().all(|&v| (-10_000.0..=10_000.0).contains(&v)));
    // Ocean and land both appear.
    let land = h.data.iter().filter(|&&v| v > 0.0).count() as f64 / h.data.len() as f64;
    assert!(land > 0.05 && land < 0.95, "land fraction {land}");
    let plates = image::open(dir.path().join("planet_plates.png")).unwrap();
    assert_eq!(
        (plates.width() as usize, plates.height() as usize),
        (width, width / 2)
    );
    // Equirect row 0 is the north: the map's pixels agree with sampling the planet there.
    let planet = world.planet.as_ref().unwrap();
    let (x, y) = (width / 3, width / 8);
    let lat = 90.0 - (y as f64 + 0.5) * 180.0 / (width / 2) as f64;
    let lon = -180.0 + (x as f64 + 0.5) * 360.0 / width as f64;
    let s = planet.sample(orogen_core::planet::Planet::direction(lat, lon));
    assert_eq!(h.data[y * width + x], s.elevation);
}

#[test]
fn a_region_across_the_antimeridian_has_no_seam() {
    let mut r = recipe("");
    r.size = (64, 64);
    let region = |lon: f64| {
        format!(
            "uplift=Planet(region: (lat: 20.0, lon: {lon}, width_km: 3000.0), value: Elevation)"
        )
    };
    let east = run(&r.apply_override(&region(180.0)).unwrap()).unwrap();
    let west = run(&r.apply_override(&region(-180.0)).unwrap()).unwrap();
    let (a, b) = (&east.uplift.data, &west.uplift.data);
    let relief =
        a.iter().cloned().fold(f32::MIN, f32::max) - a.iter().cloned().fold(f32::MAX, f32::min);
    assert!(relief > 10.0, "the region is not flat ({relief} m)");
    // lon 180 and −180 are one meridian.
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-3 * relief, "{x} vs {y}");
    }
    // Columns 31 | 32 straddle the meridian: the step across it is like its neighbours'.
    let w = 64;
    let step = |x: usize| -> f32 {
        (0..w)
            .map(|y| (a[y * w + x + 1] - a[y * w + x]).abs())
            .fold(0.0, f32::max)
    };
    let seam = step(31);
    let around = [28, 29, 30, 32, 33, 34]
        .map(step)
        .into_iter()
        .fold(0.0, f32::max);
    println!("step across 180°: {seam:.3} m; largest nearby: {around:.3} m");
    assert!(
        seam <= 1.5 * around + 1e-3 * relief,
        "seam {seam} vs {around}"
    );
}

#[test]
fn one_and_four_threads_give_the_same_bytes() {
    let r = recipe("stages: [StreamPower(iterations: 10, dt: 50000.0, k: Constant(5e-6))]");
    let go = |threads| {
        on_threads(threads, || {
            let w = run(&r).unwrap();
            let p = w.planet.clone().unwrap();
            (
                w.height.data,
                w.uplift.data,
                p.elevations().to_vec(),
                p.positions().to_vec(),
            )
        })
    };
    let (one, four) = (go(1), go(4));
    assert!(one == four, "1 and 4 threads differ");
}

#[test]
fn bad_planets_and_regions_are_refused_naming_the_field() {
    let r = recipe("");
    let bad = |set: &str| field_of(run(&r.apply_override(set).unwrap()).unwrap_err());
    assert_eq!(bad("planet.plates=0"), "planet.plates");
    assert_eq!(bad("planet.plates=5000"), "planet.plates");
    assert_eq!(bad("planet.points=11"), "planet.points");
    assert_eq!(
        bad("uplift=Planet(region: (lat: 95.0, lon: 0.0, width_km: 100.0))"),
        "uplift.Planet.region.lat"
    );
    assert_eq!(
        bad("uplift=Planet(region: (lat: 0.0, lon: 0.0, width_km: 40000.0))"),
        "uplift.Planet.region.width_km"
    );
    // Only the uplift and the terrain can take the planet.
    let k = r
        .apply_override(
            "stages=[StreamPower(k: Planet(region: (lat: 0.0, lon: 0.0, width_km: 100.0)))]",
        )
        .unwrap();
    assert_eq!(
        field_of(k.validate().unwrap_err()),
        "stages[0].StreamPower.k.Planet"
    );
    // A planet too large for memory is refused before anything is allocated.
    let huge = r.apply_override("planet.points=20000000").unwrap();
    let e = orogen_core::runner::check_memory(&huge, Some(1 << 30)).unwrap_err();
    assert_eq!(field_of(e), "planet.points");
}

#[test]
fn a_planet_source_alone_uses_the_default_planet_and_terrain_can_be_a_region() {
    let text = "(size: (33, 33), cell_size: 8000.0, seed: 3,
        terrain: Planet(region: (lat: 0.0, lon: 0.0, width_km: 256.0), seek_uplift_km: 20000.0),
        uplift: Planet(region: (lat: 0.0, lon: 0.0, width_km: 256.0), seek_uplift_km: 20000.0))";
    let r = Recipe::from_ron_str(text, "t").unwrap();
    assert_eq!(r.planet_params(), Some(Default::default()));
    // The default planet is large; a smaller one keeps the test short.
    let r = r
        .apply_override("planet=(points: 3000, plates: 6, steps: 10)")
        .unwrap();
    let w = run(&r).unwrap();
    let p = w.planet.as_ref().unwrap();
    let (lo, hi) = p
        .elevations()
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    // The terrain is the planet's elevation there (smoothed, so within its range).
    assert!(w
        .height
        .data
        .iter()
        .all(|&v| v >= lo - 1e-3 && v <= hi + 1e-3));
    assert!(w.height.data.iter().any(|&v| v != w.height.data[0]));
}
