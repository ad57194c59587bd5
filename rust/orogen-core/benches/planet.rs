//! The planet simulation's speed and memory (#10): Fibonacci sphere + hull of 1M points,
//! one step at 60k and 500k points, sampling 1M directions, bytes per point.
//!
//! `cargo bench -p orogen-core --bench planet` (optionally `-- hull step60k step500k
//! sample run memory` to pick rows).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use orogen_core::planet::{sphere_mesh, Planet, PlanetParams};
use rayon::prelude::*;

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

/// Resets the process's peak resident size (Linux `clear_refs` 5); false if unsupported.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// (current, peak) resident bytes from /proc/self/status.
fn rss() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn params(points: u32) -> PlanetParams {
    PlanetParams {
        points,
        ..PlanetParams::default()
    }
}

/// Times `steps` steps after `warm` unmeasured ones: (mean, median, max) seconds and
/// remeshes during the measured steps, as "N (L local)".
fn time_steps(planet: &mut Planet, warm: u32, steps: u32) -> (f64, f64, f64, String) {
    for _ in 0..warm {
        planet.step().unwrap();
    }
    let (r0, l0) = (planet.remeshes(), planet.local_remeshes());
    let mut t: Vec<f64> = (0..steps)
        .map(|_| {
            let s = Instant::now();
            planet.step().unwrap();
            secs(s)
        })
        .collect();
    let mean = t.iter().sum::<f64>() / t.len() as f64;
    t.sort_by(f64::total_cmp);
    let remeshes = format!(
        "{} ({} local)",
        planet.remeshes() - r0,
        planet.local_remeshes() - l0
    );
    (mean, t[t.len() / 2], t[t.len() - 1], remeshes)
}

fn main() {
    let rows: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |r: &str| rows.is_empty() || rows.iter().any(|x| x == r);
    let cancel = AtomicBool::new(false);
    println!("threads: {}", rayon::current_num_threads());
    println!("{:<58} {:>12} {:>10}", "what", "measured", "target");

    if want("hull") {
        let peak = reset_peak();
        let base = rss().0;
        let t = Instant::now();
        let (pos, tris) = sphere_mesh(1_000_000, 1, &cancel).unwrap();
        let s = secs(t);
        println!(
            "{:<58} {:>10.3} s {:>10}",
            "Fibonacci sphere + hull, 1M points", s, "2 s"
        );
        if peak {
            println!(
                "{:<58} {:>10.0} B",
                "  peak memory per point while building",
                (rss().1 - base) as f64 / 1e6
            );
        }
        assert_eq!(tris.len(), 2 * pos.len() - 4);
        drop((pos, tris));
        let t = Instant::now();
        let planet = Planet::new(&params(1_000_000), 1, &cancel).unwrap();
        println!(
            "{:<58} {:>10.3} s {:>10}",
            "Planet::new, 1M points (sphere, hull, adjacency, plates)",
            secs(t),
            "-"
        );
        drop(planet);
    }

    if want("step60k") {
        let mut planet = Planet::new(&params(60_000), 2, &cancel).unwrap();
        let (mean, median, max, remeshes) = time_steps(&mut planet, 20, 60);
        println!(
            "{:<58} {:>8.1} ms {:>10}",
            "one step, 60k points (mean of 60)",
            mean * 1e3,
            "20 ms"
        );
        println!(
            "{:<58} {:>8.1} ms",
            format!("  median (mesh rebuilt in {remeshes} of 60)"),
            median * 1e3
        );
        println!("{:<58} {:>8.1} ms", "  slowest", max * 1e3);
    }

    if want("step500k") {
        let mut planet = Planet::new(&params(500_000), 3, &cancel).unwrap();
        let peak = reset_peak();
        let base = rss().0;
        let (mean, median, max, remeshes) = time_steps(&mut planet, 3, 12);
        println!(
            "{:<58} {:>10.3} s {:>10}",
            "one step, 500k points (mean of 12)", mean, "0.8 s"
        );
        println!(
            "{:<58} {:>10.3} s",
            format!("  median (mesh rebuilt in {remeshes} of 12)"),
            median
        );
        println!("{:<58} {:>10.3} s", "  slowest", max);
        let n = planet.len() as f64;
        println!(
            "{:<58} {:>10.0} B",
            "  resident arrays per point",
            planet.heap_bytes() as f64 / n
        );
        if peak {
            println!(
                "{:<58} {:>10.0} B",
                "  step transient peak per point (above resident)",
                (rss().1.saturating_sub(base)) as f64 / n
            );
        }
        if want("sample") {
            let (w, h) = (1000usize, 1000usize);
            let t = Instant::now();
            let z: Vec<f32> = (0..w * h)
                .into_par_iter()
                .map(|k| {
                    let (i, j) = (k / w, k % w);
                    let lat = 90.0 - (i as f64 + 0.5) * 180.0 / h as f64;
                    let lon = -180.0 + (j as f64 + 0.5) * 360.0 / w as f64;
                    planet.sample(Planet::direction(lat, lon)).elevation
                })
                .collect();
            println!(
                "{:<58} {:>10.3} s {:>10}",
                "sample 1M directions (1000² equirectangular, 500k points)",
                secs(t),
                "< 1 s"
            );
            assert_eq!(z.len(), w * h);
        }
    }

    if want("run") {
        let p = PlanetParams::default();
        let t = Instant::now();
        let planet = Planet::run(&p, 5, &cancel, &mut |_| {}).unwrap();
        let land =
            planet.elevations().iter().filter(|&&z| z > 0.0).count() as f64 / planet.len() as f64;
        let top = planet.elevations().iter().cloned().fold(f32::MIN, f32::max);
        println!(
            "{:<58} {:>10.3} s {:>10}",
            "default planet: 60k points, 200 steps, whole run",
            secs(t),
            "-"
        );
        println!(
            "{:<58} {:>12}",
            format!(
                "  {} rebuilds, {} points, land {:.1}%, highest {top:.0} m",
                planet.remeshes(),
                planet.len(),
                land * 100.0
            ),
            ""
        );
    }

    if want("memory") {
        let mut planet = Planet::new(&params(60_000), 4, &cancel).unwrap();
        for _ in 0..20 {
            planet.step().unwrap();
        }
        println!(
            "{:<58} {:>10.0} B {:>10}",
            "resident arrays per point, 60k points",
            planet.heap_bytes() as f64 / planet.len() as f64,
            "-"
        );
        println!(
            "{:<58} {:>10} B",
            "Planet::BYTES_PER_POINT",
            Planet::BYTES_PER_POINT
        );
    }
}
