//! The core's layering, enforced by reading `src/` (with the module graph of
//! [`module_graph`](super::module_graph), which also reads the binding crate).
//!
//! Every file belongs to the layer of its top-level module (the first segment under
//! `crate::`, see [`layer_of`]); `lib.rs` is the crate root and exempt. Rules:
//!
//! 1. A file imports only modules of its own layer or below.
//! 2. No import cycles between modules, one module per file (`foo/mod.rs` is `foo`,
//!    `foo/bar.rs` is `foo::bar`).
//! 3. Nothing in layers 0–4 mentions `godot`.
//!
//! How dependencies are read is described in `module_graph.rs`. A cycle is written from
//! its highest-layer module, e.g. `recipe → eroders::stream_power → recipe`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::module_graph::{cycles, dependencies, module_of, name, read_src, tokens, Module};

/// The layer of a top-level module: its number (lowest first) and its name.
fn layer_of(top: &str) -> Option<(usize, &'static str)> {
    match top {
        "error" | "field" | "schema" | "values" | "math" | "neighbourhood" | "mesh" | "state" => {
            Some((0, "vocabulary"))
        }
        "flow" | "eroders" | "edit" | "generators" | "io" | "rasterise" | "planet" | "tiles" => {
            Some((1, "processes"))
        }
        "stages" | "world" => Some((2, "stages")),
        "recipe" => Some((3, "recipe")),
        "runner" => Some((4, "runner")),
        "bake" => Some((5, "output")),
        _ => None,
    }
}

/// Layers up to and including this one must not mention Godot.
const LAST_GODOT_FREE_LAYER: usize = 4;

/// Every broken rule, one message each; empty when the crate is in shape.
fn check(files: &BTreeMap<String, String>) -> Vec<String> {
    let deps = dependencies(files);
    let file_of: BTreeMap<Module, &str> = files.keys().map(|f| (module_of(f), &f[..])).collect();
    let tops: BTreeSet<&String> = deps.keys().map(|m| &m[0]).collect();
    let unknown = tops.into_iter().filter(|top| layer_of(top).is_none());
    let fix = "add it to the table in tests/integration/architecture.rs";
    let mut problems: Vec<String> = unknown
        .map(|top| format!("module {top} has no layer: {fix}"))
        .collect();
    for (m, targets) in &deps {
        let (file, Some((from, f))) = (file_of[m], layer_of(&m[0])) else {
            continue;
        };
        for target in targets {
            if let Some((to, t)) = layer_of(&target[0]).filter(|&(to, _)| to > from) {
                let target = name(target);
                problems.push(format!(
                    "src/{file} imports crate::{target} (layer {to} {t}) from layer {from} {f}"
                ));
            }
        }
        if from <= LAST_GODOT_FREE_LAYER && tokens(&files[file]).iter().any(|t| t == "godot") {
            problems.push(format!(
                "src/{file} mentions godot: layer {from} {f} must not depend on Godot"
            ));
        }
    }
    let rank = |m: &Module| (Reverse(layer_of(&m[0])), name(m));
    let cycles = cycles(&deps, rank).into_iter();
    problems.extend(cycles.map(|c| format!("import cycle: {}", c.join(" → "))));
    problems
}

#[test]
fn the_core_follows_its_layers() {
    let files = read_src(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")));
    let problems = check(&files);
    let list = problems.join("\n  ");
    assert!(
        problems.is_empty(),
        "{} architecture problem(s):\n  {list}\n",
        problems.len()
    );
}

// Checks of the checker, on small in-memory crates.

/// An in-memory `src/`: each `--- path` line starts a file.
fn krate(spec: &str) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for file in spec.split("--- ").skip(1) {
        let (path, src) = file.split_once('\n').unwrap_or((file, ""));
        files.insert(path.trim().to_string(), src.to_string());
    }
    files
}

fn deps_of(files: &BTreeMap<String, String>, module: &str) -> Vec<String> {
    let key: Module = module.split("::").map(String::from).collect();
    dependencies(files)[&key].iter().map(|m| name(m)).collect()
}

#[test]
fn finds_a_two_cycle() {
    let files = krate(
        "
        --- error.rs
        use crate::field::Grid;
        --- field.rs
        pub fn f() -> crate::error::Result<()> { todo!() }
        ",
    );
    assert_eq!(check(&files), ["import cycle: error → field → error"]);
}

#[test]
fn finds_a_three_cycle() {
    let files = krate(
        "
        --- flow/mod.rs
        pub mod a; pub mod b; pub mod c; pub use a::A;
        --- flow/a.rs
        use super::b::B;
        --- flow/b.rs
        fn f() { crate::flow::c::go(); }
        --- flow/c.rs
        use crate::flow::A;
        ",
    );
    let cycle = "import cycle: flow::a → flow::b → flow::c → flow::a";
    assert_eq!(check(&files), [cycle]);
}

#[test]
fn parses_nested_groups_super_and_child_paths() {
    let files = krate(
        "
        --- error.rs
        --- flow/mod.rs
        pub mod graph; pub mod router; pub fn helper() { router::go() }
        --- flow/graph.rs
        use crate::{error, flow::{router::{self, Router as R}}};
        --- flow/router.rs
        use super::{graph::G, helper}; fn f() { super::super::error::E; }
        ",
    );
    assert_eq!(deps_of(&files, "flow::graph"), ["error", "flow::router"]);
    assert_eq!(
        deps_of(&files, "flow::router"),
        ["error", "flow", "flow::graph"]
    );
    assert_eq!(deps_of(&files, "flow"), ["flow::router"]);
}

#[test]
fn follows_re_exports_to_their_module() {
    let files = krate(
        "
        --- lib.rs
        pub mod flow; pub mod world; pub use world::World; pub const V: u8 = 1;
        --- world.rs
        --- flow/mod.rs
        pub mod graph; pub mod router; pub use graph::Graph; pub use router::Router as R;
        --- flow/graph.rs
        use crate::flow::R; fn f() { let _ = crate::V; }
        --- flow/router.rs
        use crate::World;
        ",
    );
    assert!(deps_of(&files, "flow").is_empty());
    assert_eq!(deps_of(&files, "flow::graph"), ["flow::router"]);
    let up = "src/flow/router.rs imports crate::world (layer 2 stages) from layer 1 processes";
    assert_eq!(check(&files), [up]);
}

#[test]
fn ignores_comments_strings_and_test_modules() {
    let files = krate(
        r###"
        --- flow/mod.rs
        // use crate::recipe;
        /// [`crate::recipe::Recipe`]
        /* crate::recipe /* nested */ crate::recipe */
        const S: &str = "crate::recipe \" crate::recipe";
        const R: &str = r#"crate::recipe"#;
        const Q: char = '"'; const B: u8 = b'\'';
        fn f<'a>(x: &'a str) -> crate::error::Error { todo!() }
        #[cfg(test)]
        mod tests { use crate::recipe::Recipe; fn g() { crate::runner::run(); } }
        --- error.rs
        --- recipe.rs
        --- runner.rs
        "###,
    );
    assert_eq!(deps_of(&files, "flow"), ["error"]);
    assert!(check(&files).is_empty());
}

#[test]
fn reports_layer_violations_unknown_modules_and_godot() {
    let files = krate(
        "
        --- flow/mod.rs
        pub mod hydrology;
        --- flow/hydrology.rs
        use crate::recipe::{ParamInfo, Stage}; use crate::terrain::Noise;
        --- recipe.rs
        use godot::prelude::*;
        --- terrain/mod.rs
        ",
    );
    let expected = [
        "module terrain has no layer: add it to the table in tests/integration/architecture.rs",
        "src/flow/hydrology.rs imports crate::recipe (layer 3 recipe) from layer 1 processes",
        "src/recipe.rs mentions godot: layer 3 recipe must not depend on Godot",
    ];
    assert_eq!(check(&files), expected);
}
