//! Issue #39's fuzz findings, one reproducer each: every one failed (a panic, a non-finite
//! map written with success, bytes that changed run to run, ...) before its fix.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::runner::run_recipe;
use orogen_core::Recipe;

/// Runs `ron`; the error message, or None when it succeeded.
fn run_error(ron: &str) -> Option<String> {
    let recipe = match Recipe::from_ron_str(ron, "test") {
        Ok(r) => r,
        Err(e) => return Some(e.to_string()),
    };
    if let Err(e) = recipe.validate() {
        return Some(e.to_string());
    }
    let cancel = AtomicBool::new(false);
    run_recipe(&recipe, Path::new("."), &cancel, &mut |_| {})
        .err()
        .map(|e| e.to_string())
}

/// #39.1: `Gaussian(sigma: 1e-30)` on a graph made more bins than a usize holds, and the
/// rasteriser indexed past its bins (a panic, exit 101).
#[test]
fn a_tiny_gaussian_sigma_is_refused_by_name() {
    let msg = run_error(
        "(size: (65, 65), cell_size: 100.0, seed: 1, \
         domain: Graph(spacing: 600.0, surface: Gaussian(sigma: 1e-30)), \
         terrain: Noise(kind: Fbm, octaves: 3, wavelength: 3000.0, amplitude: 50.0), \
         stages: [StreamPower(iterations: 2)])",
    )
    .expect("the recipe is refused");
    assert!(msg.contains("surface.sigma"), "{msg}");
}

/// #39.6: non-square cells wrote their two cell-size attributes in a random order, so the
/// same map gave different EXR bytes run to run.
#[test]
fn a_non_square_exr_is_the_same_bytes_every_time() {
    use orogen_core::field::{Field, Grid};
    use orogen_core::io::exr::{recorded_cell_size, write_exr};
    let grid = Grid::with_cells(9, 7, 30.0, 20.0).unwrap();
    let map = Field::from_vec(grid, (0..63).map(|i| i as f32 * 0.5).collect(), "test").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut first: Option<Vec<u8>> = None;
    for k in 0..12 {
        let path = dir.path().join(format!("m{k}.exr"));
        write_exr(&path, &map).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        match &first {
            None => first = Some(bytes),
            Some(f) => assert!(f == &bytes, "write {k} differs from the first"),
        }
        assert_eq!(recorded_cell_size(&path).unwrap(), Some((30.0, 20.0)));
    }
}

/// #39.4: `planet.steps` took any u32 (4,294,967,295 steps looked like a hang), and a
/// planet run reported no progress.
#[test]
fn planet_steps_are_bounded_and_the_planet_reports_progress() {
    let msg = run_error(
        "(size: (33, 33), cell_size: 1000.0, seed: 1, \
         terrain: Flat(0.0), planet: (points: 2000, steps: 4294967295), stages: [])",
    )
    .expect("refused");
    assert!(
        msg.contains("planet.steps") && msg.contains("100000"),
        "{msg}"
    );

    let recipe = Recipe::from_ron_str(
        "(size: (33, 33), cell_size: 1000.0, seed: 1, \
         terrain: Flat(0.0), planet: (points: 2000, steps: 6), stages: [])",
        "test",
    )
    .unwrap();
    let mut seen = Vec::new();
    run_recipe(&recipe, Path::new("."), &AtomicBool::new(false), &mut |e| {
        if let orogen_core::runner::Event::Setup { name, fraction } = e {
            seen.push((name.to_string(), fraction));
        }
    })
    .unwrap();
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert!(seen.iter().all(|(n, _)| n == "planet"));
    assert!(
        seen.windows(2).all(|w| w[0].1 < w[1].1) && seen[5].1 == 1.0,
        "{seen:?}"
    );
}
