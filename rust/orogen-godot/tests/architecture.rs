//! The binding's shape, enforced by reading `src/`: no import cycle between its modules
//! and no source file over [`MAX_LINES`] lines. The module graph is read by the core's
//! checker (`orogen-core/tests/integration/module_graph.rs`, included here by path), so
//! both crates are read by one parser. The binding has no layer table; the order its
//! modules sit in is written in `src/lib.rs`.

use std::collections::BTreeMap;
use std::path::Path;

#[path = "../../orogen-core/tests/integration/module_graph.rs"]
mod module_graph;

use module_graph::{cycles, dependencies, long_files, name, read_src};

/// Longest source file, lines: a file past it holds more than one concern.
const MAX_LINES: usize = 800;

fn binding_src() -> BTreeMap<String, String> {
    read_src(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")))
}

#[test]
fn the_binding_has_no_import_cycle() {
    let deps = dependencies(&binding_src());
    let found = cycles(&deps, |m| name(m));
    let list: Vec<String> = found.iter().map(|c| c.join(" → ")).collect();
    assert!(
        list.is_empty(),
        "{} import cycle(s) in orogen-godot/src:\n  {}\n",
        list.len(),
        list.join("\n  ")
    );
}

#[test]
fn no_binding_file_is_too_long() {
    let long = long_files(&binding_src(), MAX_LINES);
    assert!(long.is_empty(), "{}", long.join("\n"));
}
