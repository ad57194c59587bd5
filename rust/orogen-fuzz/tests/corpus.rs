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
    assert_eq!(names, ["recipe", "set", "png", "exr", "raw", "bake"]);
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

#[test]
fn bake_corpus() {
    replay("bake");
}

/// `fuzz/fixtures/` holds what `write_fixtures` makes (`OROGEN_FUZZ_WRITE_FIXTURES=1`
/// writes them again).
#[test]
fn the_fixtures_are_what_write_fixtures_makes() {
    let dir = tempfile::tempdir().unwrap();
    orogen_fuzz::write_fixtures(dir.path()).unwrap();
    let committed = orogen_fuzz::fixtures_dir();
    if std::env::var_os("OROGEN_FUZZ_WRITE_FIXTURES").is_some() {
        orogen_fuzz::write_fixtures(&committed).unwrap();
    }
    for name in orogen_fuzz::FIXTURES {
        let made = std::fs::read(dir.path().join(name)).unwrap();
        let kept = std::fs::read(committed.join(name))
            .unwrap_or_else(|e| panic!("fuzz/fixtures/{name}: {e}"));
        assert!(
            made == kept,
            "fuzz/fixtures/{name} differs from write_fixtures'"
        );
    }
}

/// Every built-in recipe, cut to the fuzzing cost, still validates and bakes, so the
/// `bake` target's mutations start from working recipes; and the cut does cut.
#[test]
fn every_built_in_recipe_bakes_once_clamped() {
    use orogen_core::recipe::{Domain, BUILT_IN};
    for (i, (name, _, _)) in BUILT_IN.iter().enumerate() {
        let recipe = orogen_fuzz::recipe_of(&[i as u8]).expect("a built-in recipe");
        assert!(
            recipe.size.0 <= 33 && recipe.size.1 <= 33,
            "{name}: {:?}",
            recipe.size
        );
        assert!(recipe.stages.len() <= 4, "{name}");
        assert!(
            recipe.stages.iter().all(|s| s.kind().iterations() <= 8),
            "{name}"
        );
        if let Domain::Graph(g) = &recipe.domain {
            assert!(g.max_nodes(recipe.grid().unwrap()) <= 300.0, "{name}");
        }
        if let Some(p) = recipe.planet_params() {
            assert!(p.points <= 200 && p.steps <= 4, "{name}: {p:?}");
        }
        recipe
            .validate()
            .unwrap_or_else(|e| panic!("{name}, clamped: {e}"));
        orogen_core::runner::run_recipe(
            &recipe,
            &orogen_fuzz::fixtures_dir(),
            &std::sync::atomic::AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap_or_else(|e| panic!("{name}, clamped: {e}"));
    }
}

/// A recipe naming a file outside `fuzz/fixtures/` is not run; a fixture is.
#[test]
fn the_bake_target_reads_only_the_fixtures() {
    let input = |path: &str| {
        let mut v = vec![0u8];
        v.extend(format!("terrain=Heightmap(path: {path:?})").as_bytes());
        v
    };
    assert!(orogen_fuzz::recipe_of(&input("a.png")).is_some());
    assert!(orogen_fuzz::recipe_of(&input("/etc/passwd")).is_none());
    assert!(orogen_fuzz::recipe_of(&input("../fixtures/a.png")).is_none());
}
