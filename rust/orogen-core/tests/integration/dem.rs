//! Real DEMs (issue #11): drainage summed in 64-bit, non-square cells, nodata outlets.

use orogen_core::flow::hydrology::{Hydrology, Params};
use orogen_core::flow::Neighbourhood;

/// A channel of `n` nodes in a line: node `i` neighbours `i - 1` and `i + 1`, node 0 is the
/// only outlet.
struct Channel {
    n: usize,
    area: f32,
}

impl Neighbourhood for Channel {
    fn len(&self) -> usize {
        self.n
    }
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, mut f: F) {
        if node > 0 {
            f(node as u32 - 1, 1.0);
        }
        if node + 1 < self.n {
            f(node as u32 + 1, 1.0);
        }
    }
    fn is_outlet(&self, node: usize) -> bool {
        node == 0
    }
    fn node_area(&self, _node: usize) -> f32 {
        self.area
    }
    fn position(&self, node: usize) -> glam::DVec2 {
        glam::DVec2::new(node as f64, 0.0)
    }
}

#[test]
fn a_43499_cell_channel_drains_exactly_43499_cell_areas() {
    const N: usize = 43_499;
    // A 3″ geographic cell (74.6 m × 92.5 m): the area is not a short binary fraction.
    let area = 74.6f32 * 92.5f32;
    // The f32 running sum this replaces is off: the test can tell them apart.
    let naive = (0..N).fold(0.0f32, |s, _| s + area);
    let exact = (N as f64 * area as f64) as f32;
    assert_ne!(naive, exact, "pick an area whose f32 running sum drifts");
    let heights: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let mut hydrology = Hydrology::new(
        Channel { n: N, area },
        None,
        Params::default(),
        None,
        "channel",
    )
    .unwrap();
    let maps = hydrology.compute(&heights).unwrap();
    assert_eq!(maps.drainage[0], exact);
    // Every node drains all the nodes upstream of it, exactly.
    for i in [1, 1000, 20_000, N - 1] {
        assert_eq!(
            maps.drainage[i],
            ((N - i) as f64 * area as f64) as f32,
            "node {i}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Non-square cells
// ---------------------------------------------------------------------------------------

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::flow::{accumulate, FlowRouter, OutletParams, SinkMode};
use orogen_core::{run_recipe, Grid, MapData, Recipe, ScalarMap};

const DX: f32 = 74.6;
const DY: f32 = 92.5;

fn run(text: &str, dir: &Path) -> orogen_core::Result<orogen_core::World> {
    let recipe = Recipe::from_ron_str(text, "test")?;
    recipe.validate()?;
    Ok(run_recipe(&recipe, dir, &AtomicBool::new(false), &mut |_| {})?.world)
}

/// The 8 neighbours of `(x, y)` with their distances, in index order.
fn neighbours(g: Grid, x: usize, y: usize) -> Vec<(usize, f32)> {
    let mut out = Vec::new();
    for ny in y.saturating_sub(1)..=(y + 1).min(g.height - 1) {
        for nx in x.saturating_sub(1)..=(x + 1).min(g.width - 1) {
            if (nx, ny) == (x, y) {
                continue;
            }
            let d = match (nx != x, ny != y) {
                (true, true) => (g.dx() as f64).hypot(g.dy() as f64) as f32,
                (true, false) => g.dx(),
                _ => g.dy(),
            };
            out.push((ny * g.width + nx, d));
        }
    }
    out
}

#[test]
fn a_tilted_plane_on_non_square_cells_routes_and_drains_like_brute_force() {
    let g = Grid::with_cells(9, 7, DX, DY).unwrap();
    assert_eq!(g.cell_area(), DX * DY);
    // Falls towards the north-west corner, faster per metre north-south than east-west:
    // the steepest neighbour depends on the true link lengths.
    let heights: Vec<f32> = (0..g.len())
        .map(|i| {
            let (x, y) = g.coords(i);
            (0.02 * x as f64 * DX as f64 + 0.05 * y as f64 * DY as f64) as f32
        })
        .collect();
    let mut router = FlowRouter::new(g, &OutletParams::default()).unwrap();
    let mut h = heights.clone();
    let graph = router.route(&mut h, SinkMode::Carve).unwrap().clone();
    // Brute force: steepest descent with true distances; borders are outlets.
    let mut want_rcv = vec![0usize; g.len()];
    let mut want_dist = vec![0.0f32; g.len()];
    for i in 0..g.len() {
        let (x, y) = g.coords(i);
        want_rcv[i] = i;
        if g.is_border(x, y) {
            continue;
        }
        let mut best = 0.0f32;
        for (j, d) in neighbours(g, x, y) {
            let s = (heights[i] - heights[j]) / d;
            if s > best {
                best = s;
                want_rcv[i] = j;
                want_dist[i] = d;
            }
        }
    }
    let got_rcv: Vec<usize> = graph.receivers.iter().map(|&r| r as usize).collect();
    assert_eq!(got_rcv, want_rcv);
    assert_eq!(graph.dist, want_dist);
    // Drainage: each cell's area added along its path, in f64.
    let mut want = vec![0.0f64; g.len()];
    for start in 0..g.len() {
        let mut i = start;
        loop {
            want[i] += (DX * DY) as f64;
            if want_rcv[i] == i {
                break;
            }
            i = want_rcv[i];
        }
    }
    let mut got = vec![0.0f32; g.len()];
    accumulate(&graph, &vec![g.cell_area(); g.len()], &mut got);
    let want: Vec<f32> = want.iter().map(|&a| a as f32).collect();
    assert_eq!(got, want);
    // And through a recipe: a raw f32 DEM of the plane, Hydrology on (dx, dy) cells.
    let dir = tempfile::tempdir().unwrap();
    let map = ScalarMap {
        grid: g,
        data: heights.clone(),
    };
    orogen_core::io::raw::write_raw_f32(&dir.path().join("plane.raw"), &map).unwrap();
    let world = run(
        "(size: (9, 7), cell_size: (74.6, 92.5), seed: 1, \
         terrain: Heightmap(path: \"plane.raw\", raw_size: (9, 7)), \
         stages: [Hydrology(lakes: Carve)])",
        dir.path(),
    )
    .unwrap();
    assert_eq!((world.grid().dx(), world.grid().dy()), (DX, DY));
    match &world.maps["drainage"] {
        MapData::Scalar(m) => assert_eq!(m.data, want),
        other => panic!("{other:?}"),
    }
}

const SMALL: &str = "size: (41, 37), seed: 5,
    terrain: Noise(kind: Ridged, octaves: 4, wavelength: 2000.0, amplitude: 200.0),
    uplift: Constant(0.001),
    stages: [StreamPower(iterations: 5, dt: 2e4, precipitation: Constant(0.7)),
        Thermal(iterations: 5, talus: Noise(min_deg: 25.0, max_deg: 40.0)),
        Hydrology(lakes: Fill(epsilon: 0.01))]";

#[test]
fn one_number_and_an_equal_pair_give_the_same_bytes() {
    let dir = Path::new(".");
    let one = run(&format!("({SMALL}, cell_size: 100.0)"), dir).unwrap();
    let pair = run(&format!("({SMALL}, cell_size: (100.0, 100.0))"), dir).unwrap();
    assert_eq!(one.all_maps(), pair.all_maps());
    // A real pair changes the result (the test can tell).
    let rect = run(&format!("({SMALL}, cell_size: (100.0, 130.0))"), dir).unwrap();
    assert_ne!(one.all_maps(), rect.all_maps());
    // One number is written back as one number, a pair as a pair.
    let r = Recipe::from_ron_str(&format!("({SMALL}, cell_size: 100.0)"), "t").unwrap();
    assert!(r.to_ron_string().contains("cell_size: 100.0"));
    let r = Recipe::from_ron_str(&format!("({SMALL}, cell_size: (74.6, 92.5))"), "t").unwrap();
    let back = Recipe::from_ron_str(&r.to_ron_string(), "t").unwrap();
    assert_eq!(back, r);
    let r = r.apply_override("cell_size=(10.0, 20.0)").unwrap();
    assert_eq!(
        (r.grid().unwrap().dx(), r.grid().unwrap().dy()),
        (10.0, 20.0)
    );
}

#[test]
fn stages_for_square_cells_only_refuse_a_pair_naming_cell_size() {
    let dir = Path::new(".");
    for stage in [
        "Hydraulic(iterations: 1)",
        "LayeredThermal(iterations: 1)",
        "Wind(iterations: 1)",
    ] {
        let text = format!(
            "(size: (17, 17), cell_size: (74.6, 92.5), seed: 1, terrain: Flat(0.0), \
             stages: [{stage}])"
        );
        let e = run(&text, dir).unwrap_err().to_string();
        let name = stage.split('(').next().unwrap();
        assert!(
            e.contains("cell_size") && e.contains(&format!("stages[0].{name}")),
            "{stage}: {e}"
        );
        // The same stage runs on square cells.
        let square = text.replace("(74.6, 92.5)", "74.6");
        run(&square, dir).unwrap_or_else(|e| panic!("{stage} on square cells: {e}"));
    }
}

#[test]
fn bad_pairs_are_errors_naming_cell_size() {
    for bad in [
        "(-1.0, 2.0)",
        "(1.0, 0.0)",
        "(NaN, 1.0)",
        "(1.0, inf)",
        "(1.0, 2e5)",
    ] {
        let text = format!("(size: (9, 9), cell_size: {bad}, seed: 1, terrain: Flat(0.0))");
        let e = Recipe::from_ron_str(&text, "t")
            .and_then(|r| r.validate())
            .unwrap_err()
            .to_string();
        assert!(e.contains("cell_size"), "{bad}: {e}");
    }
}

// ---------------------------------------------------------------------------------------
// Nodata
// ---------------------------------------------------------------------------------------

/// A 25×25 bowl falling towards its centre, where a 5×5 block holds `hole`.
fn bowl(hole: f32) -> ScalarMap {
    let g = Grid::new(25, 25, 30.0).unwrap();
    let data = (0..g.len())
        .map(|i| {
            let (x, y) = g.coords(i);
            let (dx, dy) = (x as f32 - 12.0, y as f32 - 12.0);
            if dx.abs() <= 2.0 && dy.abs() <= 2.0 {
                hole
            } else {
                // A rim near the border, so without the hole the bowl is a closed lake.
                let r = (dx * dx + dy * dy).sqrt();
                if r > 10.0 {
                    200.0 - 5.0 * (r - 10.0)
                } else {
                    100.0 + 10.0 * r
                }
            }
        })
        .collect();
    ScalarMap { grid: g, data }
}

fn hole_cell(g: Grid, i: usize) -> bool {
    let (x, y) = g.coords(i);
    (x as i32 - 12).abs() <= 2 && (y as i32 - 12).abs() <= 2
}

fn scalar<'a>(w: &'a orogen_core::World, name: &str) -> &'a [f32] {
    match &w.maps[name] {
        MapData::Scalar(m) => &m.data,
        other => panic!("{name}: {other:?}"),
    }
}

fn bowl_recipe(nodata: &str, stages: &str) -> String {
    format!(
        "(size: (25, 25), cell_size: 30.0, seed: 1, terrain: Heightmap(path: \"bowl.raw\", \
         raw_size: (25, 25){nodata}), stages: [{stages}])"
    )
}

#[test]
fn a_nodata_hole_is_an_outlet_never_a_lake() {
    let dir = tempfile::tempdir().unwrap();
    let map = bowl(-9999.0);
    let g = map.grid;
    orogen_core::io::raw::write_raw_f32(&dir.path().join("bowl.raw"), &map).unwrap();
    let stages = "Hydrology(lakes: Fill(epsilon: 0.0))";
    let world = run(&bowl_recipe(", nodata: Some(-9999.0)", stages), dir.path()).unwrap();
    // Nodata cells start (and stay) at the lowest valid height, and are marked.
    let lowest = (0..g.len())
        .filter(|&i| !hole_cell(g, i))
        .map(|i| map.data[i])
        .fold(f32::INFINITY, f32::min);
    let mask = match &world.maps["nodata"] {
        MapData::Mask(m) => m.data.clone(),
        other => panic!("{other:?}"),
    };
    for (i, &m) in mask.iter().enumerate() {
        assert_eq!(m == 1, hole_cell(g, i), "cell {i}");
        if hole_cell(g, i) {
            assert_eq!(world.height.data[i], lowest);
        }
    }
    // No lake anywhere: the bowl drains into the hole instead of filling over it.
    assert!(scalar(&world, "lake_depth").iter().all(|&d| d == 0.0));
    // Every valid cell's flow ends at a border or a nodata cell, and nodata cells receive
    // themselves (they never drain into their neighbours).
    let nb = orogen_core::flow::RasterGrid::new(g, &OutletParams::default().borders)
        .with_outlet_mask(world.nodata_mask());
    let mut router = FlowRouter::with_neighbourhood(nb, None).unwrap();
    let mut h = world.height.data.clone();
    let graph = router
        .route(&mut h, SinkMode::Fill { epsilon: 0.0 })
        .unwrap();
    assert_eq!(h, world.height.data, "nothing was filled");
    for start in 0..g.len() {
        let mut i = start;
        while graph.receivers[i] as usize != i {
            i = graph.receivers[i] as usize;
        }
        let (x, y) = g.coords(i);
        assert!(g.is_border(x, y) || hole_cell(g, i), "{start} ends at {i}");
        if hole_cell(g, start) {
            assert_eq!(graph.receivers[start] as usize, start);
        }
    }
    // The whole inner bowl drains into the hole: its drainage there adds up to it.
    let drainage = scalar(&world, "drainage");
    let into_hole: f64 = (0..g.len())
        .filter(|&i| hole_cell(g, i))
        .map(|i| drainage[i] as f64)
        .sum();
    assert!(into_hole > 200.0 * g.cell_area() as f64, "{into_hole}");

    // Without `nodata` the same file is a deep pit that fills as a lake (the test can tell).
    let plain = run(&bowl_recipe("", stages), dir.path()).unwrap();
    assert!(!plain.maps.contains_key("nodata"));
    assert!(scalar(&plain, "lake_depth").iter().any(|&d| d > 0.0));
}

#[test]
fn nodata_cells_are_held_by_eroding_stages() {
    let dir = tempfile::tempdir().unwrap();
    let map = bowl(-9999.0);
    orogen_core::io::raw::write_raw_f32(&dir.path().join("bowl.raw"), &map).unwrap();
    let stages = "StreamPower(iterations: 3, dt: 1e4), Thermal(iterations: 5, \
                  talus: Constant(10.0)), Hydrology()";
    let world = run(&bowl_recipe(", nodata: Some(-9999.0)", stages), dir.path()).unwrap();
    let g = map.grid;
    let first = (0..g.len()).find(|&i| hole_cell(g, i)).unwrap();
    let held = world.nodata.as_ref().unwrap().height;
    for i in (0..g.len()).filter(|&i| hole_cell(g, i)) {
        assert_eq!(world.height.data[i], held, "{i}");
    }
    assert_eq!(world.height.data[first], held);
}

#[test]
fn nan_nodata_loads_when_set_and_is_an_error_naming_file_and_pixel_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let map = bowl(f32::NAN);
    orogen_core::io::raw::write_raw_f32(&dir.path().join("bowl.raw"), &map).unwrap();
    orogen_core::io::exr::write_exr(&dir.path().join("bowl.exr"), &map).unwrap();
    for (file, extra) in [("bowl.raw", ", raw_size: (25, 25)"), ("bowl.exr", "")] {
        let recipe = |nodata: &str| {
            format!(
                "(size: (25, 25), cell_size: 30.0, seed: 1, terrain: Heightmap(path: \
                 \"{file}\"{extra}{nodata}), stages: [Hydrology()])"
            )
        };
        // RON's NaN literal, and `Some(...)` written out or implied.
        for nodata in [", nodata: Some(NaN)", ", nodata: NaN"] {
            let world =
                run(&recipe(nodata), dir.path()).unwrap_or_else(|e| panic!("{file} {nodata}: {e}"));
            assert!(world.height.data.iter().all(|v| v.is_finite()));
            let mask = world.nodata_mask().unwrap();
            assert!((0..map.grid.len()).all(|i| mask[i] == hole_cell(map.grid, i)));
        }
        let e = run(&recipe(""), dir.path()).unwrap_err().to_string();
        assert!(e.contains(file) && e.contains("(10, 10)"), "{file}: {e}");
        // A recipe with NaN nodata survives a `--set` round trip (through JSON).
        let r = Recipe::from_ron_str(&recipe(", nodata: Some(NaN)"), "t").unwrap();
        let r = r.apply_override("seed=2").unwrap();
        match &r.terrain {
            orogen_core::recipe::TerrainSource::Heightmap(h) => {
                assert!(h.nodata.is_some_and(f32::is_nan), "{:?}", h.nodata)
            }
            other => panic!("{other:?}"),
        }
        let back = Recipe::from_ron_str(&r.to_ron_string(), "t").unwrap();
        assert!(run(&back.to_ron_string(), dir.path()).is_ok());
        // `--set` writes NaN into `nodata`, and nowhere else.
        let plain = Recipe::from_ron_str(&recipe(""), "t").unwrap();
        let r = plain
            .apply_override("terrain.Heightmap.nodata=NaN")
            .unwrap();
        match &r.terrain {
            orogen_core::recipe::TerrainSource::Heightmap(h) => {
                assert!(h.nodata.is_some_and(f32::is_nan), "{:?}", h.nodata)
            }
            other => panic!("{other:?}"),
        }
        let world = run(&r.to_ron_string(), dir.path()).unwrap();
        assert!(world.height.data.iter().all(|v| v.is_finite()));
        let e = plain.apply_override("seed=NaN").unwrap_err().to_string();
        assert!(e.contains("not a finite number"), "{e}");
    }
}

#[test]
fn r16_nodata_is_the_16_bit_sample_and_resampling_keeps_the_hole() {
    let dir = tempfile::tempdir().unwrap();
    // R16 maps the lowest value (the -9999 hole) to sample 0.
    orogen_core::io::raw::write_r16(&dir.path().join("bowl.r16"), &bowl(-9999.0)).unwrap();
    let recipe = |extra: &str| {
        format!(
            "(size: (49, 49), cell_size: 30.0, seed: 1, terrain: Heightmap(path: \
             \"bowl.r16\", raw_size: (25, 25), height_range: (0.0, 500.0), nodata: Some(0.0)\
             {extra}), stages: [Hydrology(lakes: Fill(epsilon: 0.0))])"
        )
    };
    let g = Grid::new(25, 25, 30.0).unwrap();
    let world = run(&recipe(""), dir.path()).unwrap();
    let mask = world.nodata_mask().unwrap();
    assert!((0..g.len()).all(|i| mask[i] == hole_cell(g, i)));
    assert!(scalar(&world, "lake_depth").iter().all(|&d| d == 0.0));
    // Resampled to 49×49: the hole is still there, at one held height, and drains.
    let world = run(&recipe(", fit: Resample"), dir.path()).unwrap();
    assert_eq!(world.grid().width, 49);
    let nd = world.nodata.as_ref().unwrap();
    let holes: Vec<usize> = (0..world.grid().len()).filter(|&i| nd.mask[i]).collect();
    assert!(holes.len() >= 25, "{}", holes.len());
    assert!(holes.iter().all(|&i| world.height.data[i] == nd.height));
    assert!(scalar(&world, "lake_depth").iter().all(|&d| d == 0.0));
}

/// With `strata`, a nodata cell is bare bottom material at its held height: no layer there
/// at the start, and none after stages that erode and deposit layered rock around it, while
/// the valid cells keep their layers and the surface stays bedrock plus layers.
#[test]
fn nodata_cells_under_strata_hold_no_layer() {
    let dir = tempfile::tempdir().unwrap();
    let map = bowl(-9999.0);
    orogen_core::io::raw::write_raw_f32(&dir.path().join("bowl.raw"), &map).unwrap();
    let g = map.grid;
    let recipe = "(size: (25, 25), cell_size: 30.0, seed: 1, terrain: Heightmap(path: \
         \"bowl.raw\", raw_size: (25, 25), nodata: Some(-9999.0)), \
         strata: (layers: [(material: \"sandstone\", thickness: Constant(5.0)), \
         (material: \"shale\", thickness: Constant(3.0))], repeat: 20, bottom: \"granite\", sediment: \
         \"sand\"), stages: [TimeLoop(iterations: 40, mode: Proportions([10.0, 1.0]), \
         processes: [Hydraulic(rain: Uniform(rate_m_per_s: 1e-2)), LayeredThermal()]), \
         StreamPower(iterations: 3, dt: 1e4)])";
    let start = orogen_core::runner::initial_world(
        &Recipe::from_ron_str(recipe, "test").unwrap(),
        dir.path(),
    )
    .unwrap();
    let world = run(recipe, dir.path()).unwrap();
    let held = world.nodata.as_ref().unwrap().height;
    let layers = &world.layers;
    assert!(
        layers.len() >= 3,
        "sediment, sandstone, shale: {}",
        layers.len()
    );
    for (w, label) in [(&start, "start"), (&world, "end")] {
        let mut layered = 0;
        for i in 0..g.len() {
            let total: f32 = (0..w.layers.len()).map(|k| w.layers.thickness(k)[i]).sum();
            if hole_cell(g, i) {
                assert_eq!(w.height.data[i], held, "{label}: height of nodata cell {i}");
                assert_eq!(total, 0.0, "{label}: layers on nodata cell {i}");
            } else if total > 0.0 {
                layered += 1;
            }
        }
        // Strata lie at fixed heights, so not every valid cell cuts them; most do.
        assert!(layered > g.len() / 2, "{label}: {layered} layered cells");
    }
    // The stages changed the layered terrain next to the hole (the test is not vacuous).
    assert_ne!(start.layers, world.layers);
}
