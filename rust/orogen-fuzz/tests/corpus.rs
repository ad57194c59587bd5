//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through every fuzz target's
//! body on stable, so `cargo test` checks what `scripts/fuzz.sh` checks on nightly, for
//! the seeds and for every input a fuzz run found a bug with.

use std::path::PathBuf;

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

fn replay(target: &str) {
    let (_, body) = orogen_fuzz::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .expect("a known target");
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "{}: a corpus needs a few seeds, found {}",
        dir.display(),
        files.len()
    );
    for file in files {
        let data = std::fs::read(&file).expect("a corpus file");
        eprintln!("{target}: {}", file.display());
        body(&data);
    }
}

#[test]
fn every_target_has_a_corpus_test() {
    let names: Vec<&str> = orogen_fuzz::TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["recipe", "set", "png", "exr", "raw"]);
}

#[test]
fn recipe_corpus() {
    replay("recipe");
}

#[test]
fn set_corpus() {
    replay("set");
}

#[test]
fn png_corpus() {
    replay("png");
}

#[test]
fn exr_corpus() {
    replay("exr");
}

#[test]
fn raw_corpus() {
    replay("raw");
}
