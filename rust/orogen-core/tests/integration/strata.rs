//! Layered rock from a recipe: strata built under the initial terrain, material maps in the
//! outputs, stream power slowed by hard beds, and bad strata refused naming the field.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::recipe::ScalarSource;
use orogen_core::runner::{initial_world, run_recipe};
use orogen_core::schema::FieldKind;
use orogen_core::stages::strata::{
    material_names, Material, Strata, Stratum, MATERIAL_FIELDS, STRATA_FIELDS, STRATUM_FIELDS,
};
use orogen_core::world::names;
use orogen_core::{MapData, OrogenError, Recipe};

fn recipe(extra: &str, stages: &str) -> Recipe {
    let text = format!(
        "(size: (48, 40), cell_size: 50.0, seed: 3,
          terrain: Noise(kind: Fbm, octaves: 3, wavelength: 1500.0, amplitude: 40.0, offset: 100.0),
          uplift: Constant(0.001), {extra} stages: [{stages}])"
    );
    Recipe::from_ron_str(&text, "test").unwrap()
}

const STRATA: &str =
    "strata: (top: 120.0, layers: [(material: \"sandstone\", thickness: Constant(10.0)),
    (material: \"shale\", thickness: Constant(5.0))], repeat: 3, bottom: \"granite\"),";

#[test]
fn strata_are_cut_by_the_initial_surface() {
    let r = recipe(STRATA, "");
    let w = initial_world(&r, Path::new(".")).unwrap();
    // Sediment, then 3 × (sandstone, shale); the materials add granite at the bottom.
    assert_eq!(w.layers.len(), 7);
    let names: Vec<&str> = w.materials.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names[0], "sand");
    assert_eq!(names[1..3], ["sandstone", "shale"]);
    assert_eq!(*names.last().unwrap(), "granite");
    for i in 0..w.grid().len() {
        let h = w.height.data[i] as f64;
        // Brute force: boundaries at 120, 110, 105, 95, 90, 80, 75; each layer holds the
        // part of its interval below the surface.
        let mut upper = 120.0f64;
        for (k, t) in [10.0, 5.0, 10.0, 5.0, 10.0, 5.0].iter().enumerate() {
            let lower = upper - t;
            let want = (upper.min(h) - lower).max(0.0);
            let got = w.layers.thickness(k + 1)[i] as f64;
            assert!(
                (got - want).abs() < 1e-4,
                "cell {i} layer {}: {got} vs {want}",
                k + 1
            );
            upper = lower;
        }
        assert_eq!(w.layers.thickness(0)[i], 0.0, "sediment starts empty");
    }
}

#[test]
fn layered_runs_write_material_splat_and_thickness_maps() {
    let r = recipe(
        &format!("{STRATA} outputs: [\"erosion\"],"),
        "StreamPower(iterations: 20, dt: 2e4, k: Constant(2e-5)), Thermal(iterations: 5)",
    );
    let out = run_recipe(&r, Path::new("."), &AtomicBool::new(false), &mut |_| {}).unwrap();
    let m = &out.world.maps;
    for name in [
        names::MATERIAL,
        names::SPLAT,
        names::SURFACE_COLOUR,
        names::SEDIMENT_DEPTH,
        names::EROSION,
        "layer_sandstone",
        "layer_shale",
    ] {
        assert!(m.contains_key(name), "missing {name}: {:?}", m.keys());
    }
    let Some(MapData::Index(material)) = m.get(names::MATERIAL) else {
        panic!("material is an index map")
    };
    let Some(MapData::Rgba(splat)) = m.get(names::SPLAT) else {
        panic!("splat is RGBA")
    };
    // Every cell's splat weights sum to 255 for the four most common materials.
    let covered = splat
        .data
        .iter()
        .filter(|w| w.iter().map(|&v| v as u32).sum::<u32>() == 255);
    assert!(covered.count() * 10 >= splat.data.len() * 9);
    // Rivers cut through the top beds: more than one material is exposed.
    let mut seen = material.data.clone();
    seen.sort();
    seen.dedup();
    assert!(seen.len() >= 2, "exposed materials {seen:?}");
    // Layer thickness maps agree with the layers.
    let Some(MapData::Scalar(sand)) = m.get("layer_sandstone") else {
        panic!()
    };
    let w = &out.world;
    for i in 0..w.grid().len() {
        let sum: f32 = (0..w.layers.len())
            .filter(|&k| w.materials[k].name == "sandstone")
            .map(|k| w.layers.thickness(k)[i])
            .sum();
        assert!((sand.data[i] - sum).abs() < 1e-4);
    }
}

#[test]
fn hard_beds_erode_slower_than_soft_ones() {
    // Two plateaus under the same uplift and rivers, one of hard sandstone, one of soft
    // shale: the shale loses more.
    let lost = |material: &str| {
        let strata = format!(
            "strata: (top: 200.0, layers: [(material: \"{material}\", thickness: Constant(500.0))]),"
        );
        let r = recipe(
            &format!("{strata} outputs: [\"erosion\"],"),
            "StreamPower(iterations: 10, dt: 1e4, k: Constant(2e-6), uplift_scale: 0.0)",
        );
        let out = run_recipe(&r, Path::new("."), &AtomicBool::new(false), &mut |_| {}).unwrap();
        let Some(MapData::Scalar(e)) = out.world.maps.get(names::EROSION) else {
            panic!()
        };
        -e.data.iter().map(|&v| v as f64).sum::<f64>()
    };
    let (hard, soft) = (lost("sandstone"), lost("shale"));
    assert!(
        hard > 0.0 && soft > 3.0 * hard,
        "sandstone {hard} m, shale {soft} m"
    );
}

#[test]
fn bad_strata_name_the_field() {
    let cases = [
        (
            "strata: (layers: [(material: \"marble\", thickness: Constant(1.0))]),",
            "strata.layers[0].material",
        ),
        (
            "strata: (layers: [(material: \"shale\", thickness: Constant(-1.0))]),",
            "strata.layers[0].thickness",
        ),
        ("strata: (bottom: \"cheese\"),", "strata.bottom"),
        (
            "materials: [(name: \"x\", talus_deg: 95.0)], strata: (),",
            "materials[0].talus_deg",
        ),
        (
            "materials: [(name: \"x\", thermal_susceptibility: 1.5)], strata: (),",
            "materials[0].thermal_susceptibility",
        ),
        ("strata: (dip_deg: 75.0),", "strata.dip_deg"),
        (
            "materials: [(name: \"x\"), (name: \"x\", erodibility: 2.0)],",
            "materials[1].name",
        ),
        (
            "materials: [(name: \"x\", erodibility: -1.0)],",
            "materials[0].erodibility",
        ),
        (
            "strata: (layers: [(material: \"shale\", thickness: Constant(1.0))], repeat: 0),",
            "strata.repeat",
        ),
    ];
    for (extra, field) in cases {
        let err = recipe(extra, "").validate().expect_err(extra);
        match err {
            OrogenError::InvalidParameter { field: f, .. } => assert_eq!(f, field, "{extra}"),
            other => panic!("{extra}: {other}"),
        }
    }
    let text = "(size: (9, 9), cell_size: 1.0, seed: 1, terrain: Flat(0.0),
        strata: (layers: [(material: \"shale\", thikness: Constant(1.0))]))";
    assert!(
        Recipe::from_ron_str(text, "t").is_err(),
        "misspelt field accepted"
    );
}

#[test]
fn unknown_outputs_are_refused_listing_the_known_ones() {
    let err = recipe("outputs: [\"lava\"],", "")
        .validate()
        .unwrap_err()
        .to_string();
    assert!(err.contains("outputs[0]") && err.contains("lava"), "{err}");
    for known in ["water_depth", "sediment", "velocity", "erosion"] {
        assert!(err.contains(known), "{known} missing from: {err}");
    }
    // A known output no stage produces is refused when the run ends.
    let r = recipe("outputs: [\"water_depth\"],", "Thermal(iterations: 2)");
    let err = run_recipe(&r, Path::new("."), &AtomicBool::new(false), &mut |_| {})
        .err()
        .expect("no stage makes water")
        .to_string();
    assert!(
        err.contains("outputs[0]") && err.contains("not produced"),
        "{err}"
    );
}

/// The editors' field descriptions name every field of a material, the strata and a stratum,
/// in recipe order, and their number ranges are the ones validation draws.
#[test]
fn field_descriptions_match_the_recipe_and_its_validation() {
    let keys =
        |v: serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let names = |fields: &[orogen_core::schema::FieldInfo]| -> Vec<String> {
        let mut n: Vec<String> = fields.iter().map(|f| f.param.name.to_string()).collect();
        n.sort();
        n
    };
    let strata = Strata {
        top: Some(1.0),
        warp: Some(Default::default()),
        ..Default::default()
    };
    let stratum = Stratum {
        material: "shale".into(),
        thickness: ScalarSource::Constant(1.0),
    };
    assert_eq!(
        names(MATERIAL_FIELDS),
        keys(serde_json::to_value(Material::default()).unwrap())
    );
    assert_eq!(
        names(STRATA_FIELDS),
        keys(serde_json::to_value(strata).unwrap())
    );
    assert_eq!(
        names(STRATUM_FIELDS),
        keys(serde_json::to_value(stratum).unwrap())
    );
    // Each number field: inside its range it validates, just outside it is refused by name.
    for f in MATERIAL_FIELDS
        .iter()
        .filter(|f| f.kind == FieldKind::Number)
    {
        let p = &f.param;
        let mid = (p.min + p.max) / 2.0;
        let with = |v: f64| {
            recipe(
                &format!("materials: [(name: \"x\", {}: {v:?})],", p.name),
                "",
            )
        };
        with(mid)
            .validate()
            .unwrap_or_else(|e| panic!("{} = {mid}: {e}", p.name));
        let below = with(p.min - 0.5).validate().expect_err(p.name).to_string();
        assert!(
            below.contains(&format!("materials[0].{}", p.name)),
            "{below}"
        );
        if p.name != "erodibility" {
            let above = with(p.max + 0.5).validate().expect_err(p.name).to_string();
            assert!(
                above.contains(&format!("materials[0].{}", p.name)),
                "{above}"
            );
        }
    }
    // The talus angle excludes both ends.
    for v in [0.0, 90.0] {
        let r = recipe(
            &format!("materials: [(name: \"x\", talus_deg: {v:?})],"),
            "",
        );
        assert!(r.validate().is_err(), "talus {v}");
    }
    // A recipe's own materials come first, then the built-in ones it does not redefine.
    let own = [
        Material {
            name: "basalt".into(),
            ..Default::default()
        },
        Material {
            name: "shale".into(),
            ..Default::default()
        },
    ];
    let listed = material_names(&own);
    assert_eq!(listed[..2], ["basalt", "shale"]);
    assert_eq!(listed.iter().filter(|n| *n == "shale").count(), 1);
    assert!(listed.contains(&"granite".to_string()));
}
