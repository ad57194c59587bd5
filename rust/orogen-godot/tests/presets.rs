//! The dock's preset gallery shows every built-in recipe with a thumbnail and one line:
//! each name in `recipe::BUILT_IN` has a description and a PNG in
//! `addons/orogen/editor/presets/` (made by `scripts/make-preset-thumbnails.sh`), and no
//! thumbnail is left over from a recipe that is gone.

use std::path::Path;

use orogen_core::recipe::BUILT_IN;

fn presets_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../addons/orogen/editor/presets")
}

#[test]
fn every_built_in_recipe_has_a_thumbnail_and_a_description() {
    let dir = presets_dir();
    for (name, what, _) in BUILT_IN {
        assert!(
            what.trim().len() >= 20,
            "built-in recipe `{name}` needs a one-line description, got {what:?}"
        );
        let png = dir.join(format!("{name}.png"));
        let bytes = std::fs::read(&png).unwrap_or_else(|e| {
            panic!(
                "built-in recipe `{name}` has no thumbnail `{}` ({e}); run scripts/make-preset-thumbnails.sh",
                png.display()
            )
        });
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "`{}` is not a PNG",
            png.display()
        );
        // IHDR: width and height, big-endian, at bytes 16..24.
        let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert_eq!((w, h), (128, 128), "`{}` is {w}×{h}", png.display());
    }
}

#[test]
fn no_thumbnail_without_a_built_in_recipe() {
    for entry in std::fs::read_dir(presets_dir()).expect("the presets folder exists") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("png") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        assert!(
            BUILT_IN.iter().any(|(n, _, _)| *n == stem),
            "`{}` is the thumbnail of no built-in recipe",
            path.display()
        );
    }
}
