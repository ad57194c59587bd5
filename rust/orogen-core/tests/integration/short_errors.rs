//! Errors quote user text (a field or variant name, a `--set` path or value) cut to 40
//! characters plus its length, and paths to 120, so a 10 MB name gives a one-line message.

use orogen_core::error::{shorten, shorten_path, shorten_quoted};
use orogen_core::Recipe;

const HUGE: usize = 10 << 20;

fn assert_short(message: &str, needles: &[&str]) {
    assert!(
        // One line: the cut name (40 characters and its length) plus the longest list of
        // fields a stage expects (StreamPower's twelve).
        message.len() < 400,
        "{} bytes: {}…",
        message.len(),
        message.chars().take(400).collect::<String>()
    );
    assert!(!message.contains('\n'), "{message}");
    for n in needles {
        assert!(message.contains(n), "`{n}` missing from: {message}");
    }
}

#[test]
fn shorten_keeps_short_text_and_cuts_long_text_with_its_length() {
    assert_eq!(shorten("seed"), "seed");
    let long = "é".repeat(100);
    let cut = shorten(&long);
    assert_eq!(cut, format!("{}…(200 bytes)", "é".repeat(40)));
    // Cutting again keeps the first length.
    assert_eq!(shorten(&cut), cut);
    let path = format!("/data/{}/dem.png", "x".repeat(200));
    let cut = shorten_path(&path);
    assert_eq!(cut.chars().count(), 120 + 1 + " (214 bytes)".len());
    assert!(
        cut.starts_with("/data/xx") && cut.ends_with("xx/dem.png (214 bytes)"),
        "{cut}"
    );
    let field = "stages[2].Thermal.talus.Noise.vertical_wavelength";
    assert_eq!(shorten_path(field), field);
    assert_eq!(
        shorten_quoted(&format!(
            "unknown field `{}`, expected `seed`",
            "a".repeat(70)
        )),
        format!(
            "unknown field `{}…(70 bytes)`, expected `seed`",
            "a".repeat(40)
        )
    );
    // An escaped quote inside a double-quoted string does not end it.
    let s = format!("bad \"{}\\\"{}\" here", "b".repeat(10), "c".repeat(80));
    let out = shorten_quoted(&s);
    assert!(out.ends_with("…(92 bytes)\" here"), "{out}");
    // Quote characters in the user text cannot leave a long unquoted stretch.
    let s = format!("x `a` {} `b`", "\"\" y".repeat(100_000));
    assert!(shorten_quoted(&s).len() < 1000);
}

#[test]
fn a_huge_unknown_field_or_variant_in_a_recipe_gives_a_short_error() {
    let name = "f".repeat(HUGE);
    let text = format!("(size: (5, 5), cell_size: 1.0, seed: 1, terrain: Flat(0.0), {name}: 1)");
    let e = Recipe::from_ron_str(&text, "big.ron")
        .unwrap_err()
        .to_string();
    assert_short(&e, &["big.ron", &format!("({HUGE} bytes)")]);
    let text = format!("(size: (5, 5), cell_size: 1.0, seed: 1, terrain: V{name}(0.0))");
    let e = Recipe::from_ron_str(&text, "big.ron")
        .unwrap_err()
        .to_string();
    assert_short(&e, &["big.ron", "bytes)"]);
    // A value that validation quotes: an unknown output name.
    let text = format!(
        "(size: (5, 5), cell_size: 1.0, seed: 1, terrain: Flat(0.0), outputs: [\"{name}\"])"
    );
    let e = Recipe::from_ron_str(&text, "big.ron")
        .unwrap()
        .validate()
        .unwrap_err()
        .to_string();
    assert_short(&e, &["outputs[0]", "bytes)"]);
}

#[test]
fn a_huge_set_path_or_value_gives_a_short_error() {
    let r = Recipe::default_recipe();
    let name = "p".repeat(HUGE);
    for assignment in [
        format!("{name}=1"),
        format!("stages[0].{name}=1"),
        format!("seed={name}"),
        format!("stages[0].k=V{name}(1.0)"),
        format!("stages[{name}].k=1"),
        format!("seed=\"{name}\""),
        format!("seed=({name}"),
        name.clone(),
    ] {
        let e = r.apply_override(&assignment).unwrap_err().to_string();
        assert_short(&e, &["cannot apply override"]);
    }
}
