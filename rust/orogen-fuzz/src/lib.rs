//! The bodies of Orogen's fuzz targets, as plain functions over bytes.
//!
//! `fuzz/` (a cargo-fuzz project outside the workspace, nightly) calls each of them from a
//! `fuzz_target!`, and `tests/corpus.rs` replays the committed seed corpus
//! (`fuzz/corpus/<target>/`) through the same functions on stable, so `cargo test` exercises
//! them without nightly. Each function returns normally for any input: a panic is a bug
//! (in the product, or in the property it checks).
//!
//! Properties checked besides "no panic":
//! - a recipe that parses and validates round-trips: `to_ron_string` then `from_ron_str`
//!   gives an equal recipe (both for recipe text and for `--set` results);
//! - error messages stay short (at most [`MAX_ERROR_BYTES`]), however long the input;
//! - decoders go through the entry points the CLI uses (`orogen info`'s probe and the
//!   heightmap loader of a recipe's `terrain: Heightmap(…)`).
//!
//! Hangs and huge allocations are caught by libFuzzer (`-timeout`, `-rss_limit_mb`,
//! `-malloc_limit_mb`; see `scripts/fuzz.sh`).

use std::path::Path;

use orogen_core::{OrogenError, Recipe};

/// Longest accepted error message, bytes: quoted user text is shortened, so a message is a
/// line of prose whatever the input's size.
pub const MAX_ERROR_BYTES: usize = 1000;

/// A target's body: any bytes in, returns normally unless it found a bug.
pub type Target = fn(&[u8]);

/// Every target: its name (the folder under `fuzz/corpus/` and the `fuzz/fuzz_targets/`
/// file) and its body.
pub const TARGETS: &[(&str, Target)] = &[
    ("recipe", recipe),
    ("set", set),
    ("png", png),
    ("exr", exr),
    ("raw", raw),
    ("bake", bake),
];

mod bake;
pub use bake::{bake, bake_writing, clamp_cost, fixtures_dir, recipe_of, write_fixtures, FIXTURES};

/// Fails (panics) when an error message is not one line of at most [`MAX_ERROR_BYTES`].
fn check_error(what: &str, e: &OrogenError) {
    let text = e.to_string();
    assert!(
        !text.contains('\n'),
        "{what}: an error message of more than one line: {}",
        text.chars().take(300).collect::<String>()
    );
    assert!(
        text.len() <= MAX_ERROR_BYTES,
        "{what}: error message of {} bytes: {}…",
        text.len(),
        text.chars().take(200).collect::<String>()
    );
}

/// Checks that a validated recipe reads back equal from its own RON text. Equal by their
/// debug text, which gives every float exactly and a NaN as `NaN`: a heightmap's `nodata:
/// Some(NaN)` is never `==` itself.
fn check_round_trip(recipe: &Recipe) {
    let text = recipe.to_ron_string();
    let back = Recipe::from_ron_str(&text, "<round trip>")
        .unwrap_or_else(|e| panic!("a valid recipe's RON does not parse: {e}\n{text}"));
    assert_eq!(
        format!("{back:?}"),
        format!("{recipe:?}"),
        "the recipe changed in a round trip:\n{text}"
    );
}

/// Recipe RON text → parse → validate → (if valid) round trip.
pub fn recipe(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let recipe = match Recipe::from_ron_str(text, "<fuzz>") {
        Ok(r) => r,
        Err(e) => return check_error("parse", &e),
    };
    match recipe.validate() {
        Ok(()) => check_round_trip(&recipe),
        Err(e) => check_error("validate", &e),
    }
}

/// `--set` assignments, one a line, applied in order to the default recipe, then validate
/// and (if valid) round trip.
pub fn set(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut recipe = Recipe::default_recipe();
    for line in text.split('\n') {
        match recipe.apply_override(line) {
            Ok(r) => recipe = r,
            Err(e) => return check_error("--set", &e),
        }
    }
    match recipe.validate() {
        Ok(()) => check_round_trip(&recipe),
        Err(e) => check_error("validate", &e),
    }
}

/// Writes `bytes` to `name` in a fresh temporary folder, then probes it as `orogen info`
/// does and loads it as a recipe's heightmap terrain.
fn decode_file(name: &str, bytes: &[u8], raw_size: Option<(u32, u32)>) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("the input file is written");
    if let Err(e) = orogen_core::io::probe(&path, raw_size) {
        check_error("probe", &e);
    }
    load_heightmap(dir.path(), name, raw_size);
}

/// The heightmap loader, reached as `orogen bake` reaches it: a recipe whose terrain is the
/// file, then its initial world.
fn load_heightmap(dir: &Path, name: &str, raw_size: Option<(u32, u32)>) {
    let raw = raw_size
        .map(|(w, h)| format!(", raw_size: ({w}, {h})"))
        .unwrap_or_default();
    let text =
        format!("(size: (1, 1), cell_size: 1.0, seed: 0, terrain: Heightmap(path: {name:?}{raw}))");
    let recipe = Recipe::from_ron_str(&text, "<fuzz heightmap>").expect("the recipe parses");
    match orogen_core::runner::initial_world(&recipe, dir) {
        Ok(world) => assert!(
            world.height.data.iter().all(|v| v.is_finite()),
            "a loaded heightmap has a non-finite height"
        ),
        Err(e) => check_error("heightmap", &e),
    }
}

/// Any bytes as a `.png` (8- or 16-bit grayscale is what Orogen reads; anything else must
/// be refused cleanly).
pub fn png(data: &[u8]) {
    decode_file("in.png", data, None);
}

/// Any bytes as an `.exr`.
pub fn exr(data: &[u8]) {
    decode_file("in.exr", data, None);
}

/// A headerless raw file. Byte 0 picks R16 (even) or f32 (odd); bytes 1..5 are the
/// declared width and height (u16 little-endian each); the rest is the file.
pub fn raw(data: &[u8]) {
    if data.len() < 5 {
        return;
    }
    let name = if data[0].is_multiple_of(2) {
        "in.r16"
    } else {
        "in.f32"
    };
    let w = u16::from_le_bytes([data[1], data[2]]) as u32;
    let h = u16::from_le_bytes([data[3], data[4]]) as u32;
    decode_file(name, &data[5..], Some((w, h)));
}
