//! Helpers shared by the CLI's test files: running the built `orogen` binary and
//! listing a folder.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The built binary.
pub const OROGEN: &str = env!("CARGO_BIN_EXE_orogen");

/// Runs `orogen` in `dir` with `args` and waits for it.
pub fn orogen(dir: &Path, args: &[&str]) -> Output {
    Command::new(OROGEN)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the orogen binary runs")
}

/// A run's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The names in `dir`, sorted.
pub fn files_of(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
