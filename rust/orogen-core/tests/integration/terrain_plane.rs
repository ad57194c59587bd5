//! The `Plane` terrain source: the exact analytical plane, noise added on top, overrides,
//! and out-of-range values refused naming their field.

use std::path::Path;

use orogen_core::generators::noise::{generate, NoiseParams};
use orogen_core::runner::initial_world;
use orogen_core::{Grid, OrogenError, Recipe};

fn recipe(terrain: &str, size: &str, cell: &str) -> Recipe {
    Recipe::from_ron_str(
        &format!("(size: {size}, cell_size: {cell}, seed: 3, terrain: {terrain})"),
        "t",
    )
    .unwrap()
}

fn field_of(r: &Recipe) -> String {
    match r.validate() {
        Err(OrogenError::InvalidParameter { field, .. }) => field,
        other => panic!("expected an invalid parameter, got {other:?}"),
    }
}

#[test]
fn plane_is_the_analytical_plane_through_the_centre() {
    // Non-square cells: x steps 2 m, y steps 3 m; the centre of 5×3 cells is (2, 1).
    let r = recipe(
        "Plane(height: 7.0, slope: (0.25, -0.5))",
        "(5, 3)",
        "(2.0, 3.0)",
    );
    r.validate().unwrap();
    let w = initial_world(&r, Path::new(".")).unwrap();
    for y in 0..3 {
        for x in 0..5 {
            let want = 7.0 + 0.25 * (x as f32 - 2.0) * 2.0 - 0.5 * (y as f32 - 1.0) * 3.0;
            assert_eq!(*w.height.get(x, y), want, "({x}, {y})");
        }
    }
    // Height defaults to 0, and a plane round-trips through RON.
    let r = recipe("Plane(slope: (0.0, 0.1))", "(4, 4)", "1.0");
    let w = initial_world(&r, Path::new(".")).unwrap();
    assert_eq!(*w.height.get(0, 0), -0.15);
    assert_eq!(*w.height.get(3, 3), 0.15);
    let text = r.to_ron_string();
    assert_eq!(Recipe::from_ron_str(&text, "again").unwrap(), r, "{text}");
}

#[test]
fn plane_noise_is_the_noise_terrain_added_to_the_plane() {
    let noise = "(octaves: 3, wavelength: 8.0, amplitude: 0.05)";
    let r = recipe(
        &format!("Plane(height: 20.0, slope: (0.0, 0.1), noise: {noise})"),
        "(33, 17)",
        "1.0",
    );
    r.validate().unwrap();
    let w = initial_world(&r, Path::new(".")).unwrap();
    let params = NoiseParams {
        octaves: 3,
        wavelength: 8.0,
        amplitude: 0.05,
        ..Default::default()
    };
    let n = generate(&params, Grid::new(33, 17, 1.0).unwrap(), 3).unwrap();
    let mut rough = 0.0f32;
    for y in 0..17 {
        for x in 0..33 {
            let plane = 20.0 + 0.1 * (y as f32 - 8.0);
            let got = w.height.get(x, y);
            assert!(
                (got - (plane + n.get(x, y))).abs() < 1e-5,
                "({x}, {y}) {got}"
            );
            rough = rough.max((got - plane).abs());
        }
    }
    assert!(rough > 0.005 && rough < 0.1, "roughness {rough}");
}

#[test]
fn overrides_reach_the_plane_and_bad_values_name_their_field() {
    let base = recipe("Plane(height: 1.0, slope: (0.1, 0.0))", "(9, 9)", "1.0");
    let r = base.apply_override("terrain.slope=(0.0, 0.3)").unwrap();
    let w = initial_world(&r, Path::new(".")).unwrap();
    assert!((w.height.get(0, 8) - 2.2).abs() < 1e-6);
    for (set, field) in [
        ("terrain.slope=(11.0, 0.0)", "terrain.Plane.slope.0"),
        ("terrain.slope=(0.0, -10.5)", "terrain.Plane.slope.1"),
        ("terrain.height=2e7", "terrain.Plane.height"),
        ("terrain.noise=(octaves: 0)", "terrain.Plane.noise.octaves"),
    ] {
        let bad = base.apply_override(set).unwrap();
        assert_eq!(field_of(&bad), field, "{set}");
        // Building refuses it too (a recipe used without validating it first).
        assert!(initial_world(&bad, Path::new(".")).is_err(), "{set}");
    }
    // Non-finite values come from a recipe file (overrides refuse them as values).
    for (terrain, field) in [
        ("Plane(slope: (NaN, 0.0))", "terrain.Plane.slope.0"),
        ("Plane(slope: (0.0, inf))", "terrain.Plane.slope.1"),
        (
            "Plane(height: NaN, slope: (0.0, 0.1))",
            "terrain.Plane.height",
        ),
    ] {
        assert_eq!(
            field_of(&recipe(terrain, "(9, 9)", "1.0")),
            field,
            "{terrain}"
        );
    }
    // Each slope is in range, but over 10001 cells of 100 km it would reach 5e9 m.
    let wide = recipe("Plane(slope: (10.0, 0.0))", "(10001, 1)", "100000.0");
    assert_eq!(field_of(&wide), "terrain.Plane.slope");
    let err = wide.validate().unwrap_err().to_string();
    assert!(err.contains("10001x1"), "{err}");
    // A missing slope is a syntax error, not a silent flat plane.
    assert!(Recipe::from_ron_str(
        "(size: (3, 3), cell_size: 1.0, seed: 1, terrain: Plane(height: 1.0))",
        "t"
    )
    .is_err());
}
