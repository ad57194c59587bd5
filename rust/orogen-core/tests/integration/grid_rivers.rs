//! Rivers without the grid (issue #37): a grid recipe's rivers as smooth curves, carved
//! into the heights, on a small run of the default recipe (257² cells of 200 m: the
//! default's 51 km).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::rasterise::grid_rivers::{HEAD_CELLS, HEAD_SHARE};
use orogen_core::rasterise::{River, RiverCurveParams};
use orogen_core::runner::{finish_world, initial_world, run_recipe, run_stages};
use orogen_core::world::names;
use orogen_core::{Recipe, World};

use crate::support::on_threads;

fn small(curves: Option<RiverCurveParams>) -> Recipe {
    let mut r = Recipe::default_recipe()
        .apply_override("size=(257,257)")
        .unwrap()
        .apply_override("cell_size=200.0")
        .unwrap();
    r.river_curves = curves;
    r.validate().unwrap();
    r
}

fn run(r: &Recipe) -> World {
    run_recipe(r, Path::new("."), &AtomicBool::new(false), &mut |_| {})
        .unwrap()
        .world
}

/// Share of the curves' total length whose direction lies within `tol_deg` of one of the
/// grid's eight directions (0°, 45°, …): about `16·tol/360` for directions at random, 1
/// for D8 links.
pub fn grid_aligned_share(rivers: &[River], tol_deg: f64) -> f64 {
    let (mut aligned, mut total) = (0.0, 0.0);
    for r in rivers {
        for w in r.points.windows(2) {
            let (ex, ey) = (w[1][0] - w[0][0], w[1][1] - w[0][1]);
            let len = ex.hypot(ey);
            if len == 0.0 {
                continue;
            }
            let a = ey.atan2(ex).to_degrees().rem_euclid(45.0);
            if a.min(45.0 - a) <= tol_deg {
                aligned += len;
            }
            total += len;
        }
    }
    aligned / total
}

/// Share of the curves' points where the ground, sampled bilinearly, lies within
/// `frac` × the relief of the beds (largest − smallest bed) of the bed.
pub fn on_bed_share(world: &World, rivers: &[River], frac: f64) -> f64 {
    let g = world.grid();
    let beds = rivers.iter().flat_map(|r| r.points.iter().map(|p| p[2]));
    let (lo, hi) = beds.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), z| {
        (a.min(z), b.max(z))
    });
    let tol = frac * (hi - lo);
    let (mut ok, mut all) = (0usize, 0usize);
    for p in rivers.iter().flat_map(|r| &r.points) {
        let h = world
            .height
            .sample_bilinear((p[0] / g.dx() as f64) as f32, (p[1] / g.dy() as f64) as f32);
        ok += usize::from((h as f64 - p[2]).abs() <= tol);
        all += 1;
    }
    ok as f64 / all as f64
}

#[test]
fn grid_rivers_are_smooth_curves_whose_beds_never_rise_and_lie_on_the_carved_ground() {
    let world = run(&small(Some(RiverCurveParams::default())));
    let rivers = world
        .rivers
        .as_deref()
        .expect("a grid bake has river curves");
    assert!(rivers.len() > 20, "{} rivers", rivers.len());
    for (k, r) in rivers.iter().enumerate() {
        let m = r.points.len();
        assert!(m >= 2 && r.discharge.len() == m && r.width.len() == m);
        assert!(r.order >= 1);
        for w in r.points.windows(2) {
            assert!(w[1][2] <= w[0][2], "river {k}: the bed rises {w:?}");
        }
    }
    let share = grid_aligned_share(rivers, 5.0);
    assert!(share <= 0.33, "{share} of the length runs along the grid");
    let on_bed = on_bed_share(&world, rivers, 0.02);
    assert!(
        on_bed >= 0.9,
        "only {on_bed} of the points lie on their bed"
    );
    // The cell-centre polylines (the D8 links) would be all along the grid.
    let raw = orogen_core::stages::river_curves::curves(
        &world,
        &RiverCurveParams {
            window: 0,
            spacing: 1,
            smoothing: 0,
            ..Default::default()
        },
    )
    .unwrap()
    .unwrap();
    assert!(grid_aligned_share(&raw, 5.0) > 0.99);
    println!("grid-aligned share {share:.3} (raw D8 1.0), on bed {on_bed:.3}");
}

#[test]
fn without_river_curves_the_heights_are_the_stages_own_and_the_carve_only_lowers() {
    let off = small(None);
    let on = small(Some(RiverCurveParams::default()));
    // The stages alone, as before river curves existed.
    let mut bare = initial_world(&off, Path::new(".")).unwrap();
    run_stages(
        &mut bare,
        &off.stages,
        Path::new("."),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    finish_world(&off, &mut bare).unwrap();
    let w_off = run(&off);
    assert!(w_off.rivers.is_none());
    assert_eq!(w_off.height.data, bare.height.data, "no carve when off");
    // With river curves on, the open border's held ring is first lowered onto the ground
    // inside it (only lowered, never raised), then the curves are carved.
    let mut settled = bare.clone();
    let ring = orogen_core::stages::open_border::settle(
        &mut settled,
        orogen_core::stages::open_border::held_sides(&on.stages),
    )
    .unwrap();
    for (a, b) in settled.height.data.iter().zip(&bare.height.data) {
        assert!(a <= b);
    }
    let bare = settled;
    println!("{ring} ring cells lowered");
    let w_on = run(&on);
    let mut lowered = 0;
    for (a, b) in w_on.height.data.iter().zip(&bare.height.data) {
        assert!(a <= b, "the carve raised ground: {a} > {b}");
        lowered += usize::from(a < b);
    }
    let n = bare.height.data.len();
    assert!(
        lowered > n / 100 && lowered < n / 2,
        "{lowered} of {n} lowered"
    );
    // The hydrology maps are those of the terrain before the carve.
    for name in [names::DRAINAGE, names::RIVERS, names::WATER_SURFACE] {
        assert_eq!(w_on.maps.get(name), bare.maps.get(name), "{name}");
    }
    // Carving off keeps the heights but still gives the curves.
    let curves_only = run(&small(Some(RiverCurveParams {
        carve: false,
        ..Default::default()
    })));
    assert_eq!(curves_only.height.data, bare.height.data);
    assert_eq!(curves_only.rivers, w_on.rivers);
}

#[test]
fn river_curves_and_carve_have_the_same_bytes_on_1_and_4_threads() {
    let r = small(Some(RiverCurveParams::default()));
    let one = on_threads(1, || run(&r));
    let four = on_threads(4, || run(&r));
    let bits = |w: &World| {
        w.height
            .data
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&one), bits(&four));
    assert_eq!(one.rivers, four.rivers);
    let json = |w: &World| orogen_core::bake::rivers_json(w.rivers.as_deref().unwrap()).unwrap();
    assert_eq!(json(&one), json(&four));
    let p = RiverCurveParams::default();
    let field = |w: &World| {
        orogen_core::stages::river_curves::channel(w.grid(), w.rivers.as_deref().unwrap(), &p)
            .unwrap()
    };
    let (f1, f4) = (
        on_threads(1, || field(&one)),
        on_threads(4, || field(&four)),
    );
    assert_eq!(f1, f4);
}

#[test]
fn the_channel_field_is_positive_exactly_within_the_half_width_of_a_curve() {
    let world = run(&small(Some(RiverCurveParams::default())));
    let rivers = world.rivers.as_deref().unwrap();
    let p = RiverCurveParams::default();
    let g = world.grid();
    let field = orogen_core::stages::river_curves::channel(g, rivers, &p).unwrap();
    assert_eq!(field.len(), g.len());
    let cell = g.dx() as f64;
    // Brute force on a window of cells: the best over every segment of every river of
    // (half width at the closest point − distance to it), the closest point found by
    // sampling each segment densely.
    let (x0, y0, side) = (100, 100, 24);
    let mut inside = 0;
    for y in y0..y0 + side {
        for x in x0..x0 + side {
            let q = (x as f64 * cell, y as f64 * cell);
            let mut best = -cell;
            for r in rivers {
                // A reach from a source narrows towards it (HEAD_SHARE of its width there,
                // the full width HEAD_CELLS on, a smoothstep between).
                let mut along = vec![0.0f64];
                for w in r.points.windows(2) {
                    let last = along[along.len() - 1];
                    along.push(last + (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]));
                }
                let head = |k: usize| {
                    if r.order != 1 {
                        return 1.0;
                    }
                    let x = (along[k] / (HEAD_CELLS * cell)).clamp(0.0, 1.0);
                    HEAD_SHARE + (1.0 - HEAD_SHARE) * x * x * (3.0 - 2.0 * x)
                };
                for i in 0..r.points.len() - 1 {
                    let (a, b) = (r.points[i], r.points[i + 1]);
                    let half = |w: f32| (0.5 * w as f64).max(p.min_half_width as f64 * cell);
                    let (ha, hb) = (
                        half(r.width[i]) * head(i),
                        half(r.width[i + 1]) * head(i + 1),
                    );
                    let (mut dmin, mut tbest) = (f64::INFINITY, 0.0);
                    for s in 0..=400 {
                        let t = s as f64 / 400.0;
                        let d =
                            (a[0] + t * (b[0] - a[0]) - q.0).hypot(a[1] + t * (b[1] - a[1]) - q.1);
                        if d < dmin {
                            (dmin, tbest) = (d, t);
                        }
                    }
                    best = best.max(ha + tbest * (hb - ha) - dmin);
                }
            }
            let got = field[y * g.width + x] as f64;
            assert!((got - best).abs() < 0.5, "({x}, {y}): {got} vs {best}");
            inside += usize::from(got > 0.0);
        }
    }
    assert!(inside > 0, "no river crosses the window");
}

#[test]
fn river_curves_fields_are_validated_by_name() {
    for (set, field) in [
        ("river_curves.spacing=0", "river_curves.spacing"),
        ("river_curves.window=99", "river_curves.window"),
        ("river_curves.smoothing=9", "river_curves.smoothing"),
        ("river_curves.width_coeff=-1.0", "river_curves.width_coeff"),
        ("river_curves.bank_ratio=1e9", "river_curves.bank_ratio"),
        (
            "river_curves.min_half_width=-0.5",
            "river_curves.min_half_width",
        ),
    ] {
        let e = Recipe::default_recipe()
            .apply_override(set)
            .and_then(|r| r.validate())
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{set}: {e}");
    }
    let off = Recipe::default_recipe()
        .apply_override("river_curves=None")
        .unwrap();
    assert_eq!(off.river_curves, None);
    // The default is on, and a recipe with the default writes no `river_curves` field.
    let on = Recipe::default_recipe();
    assert_eq!(on.river_curves, Some(RiverCurveParams::default()));
    assert!(!on.to_ron_string().contains("river_curves"));
    let back = Recipe::from_ron_str(&off.to_ron_string(), "t").unwrap();
    assert_eq!(back.river_curves, None);
}

/// The metrics of the full default recipe (513², release-like test profile):
/// `cargo test -p orogen-core --test integration measure_default -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_default_recipe_river_curves() {
    let mut r = Recipe::default_recipe();
    r.river_curves = None;
    let mut world = run(&r);
    let p = RiverCurveParams::default();
    let t = std::time::Instant::now();
    orogen_core::stages::river_curves::apply(&mut world, &p).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let rivers = world.rivers.as_deref().unwrap();
    let points: usize = rivers.iter().map(|r| r.points.len()).sum();
    let mut beds_rise = 0;
    for r in rivers {
        beds_rise += r.points.windows(2).filter(|w| w[1][2] > w[0][2]).count();
    }
    let t = std::time::Instant::now();
    let field = orogen_core::stages::river_curves::channel(world.grid(), rivers, &p).unwrap();
    let field_secs = t.elapsed().as_secs_f64();
    println!(
        "default 513²: {} rivers, {points} points, rising bed steps {beds_rise}, \
         grid-aligned share (5°) {:.3}, on bed (2 % of relief) {:.3}, curves + carve {:.3} s, \
         channel field {:.3} s ({} cells inside)",
        rivers.len(),
        grid_aligned_share(rivers, 5.0),
        on_bed_share(&world, rivers, 0.02),
        secs,
        field_secs,
        field.iter().filter(|&&v| v > 0.0).count()
    );
}
