//! A crate's module graph, read from its `src/`: shared by the core's layering test
//! (`architecture.rs`) and the binding's (`orogen-godot/tests/architecture.rs`, which
//! includes this file by path), so both crates are read by one parser.
//!
//! One module per file (`foo/mod.rs` is `foo`, `foo/bar.rs` is `foo::bar`; `lib.rs` is the
//! crate root). Dependencies are the `crate::`, `super::` and `self::` paths in `use` trees
//! (nested groups included) and in code, plus paths that start with a child module's name.
//! Comments, string and char literals and `#[cfg(test)] mod … { … }` blocks are skipped
//! (unit tests may reach up). A path resolves to the longest prefix that is a module file;
//! if the next segment is a name that module brings in with `use` (a re-export such as
//! `pub use router::FlowRouter` in `flow/mod.rs`, or `pub use world::World` in `lib.rs`),
//! the path is followed to where the name comes from. So `crate::flow::FlowRouter` is an
//! edge to `flow::router`, not to `flow`, and a child using its parent's re-exports is no
//! cycle. A `pub use` of the module's own descendants is structure, not a dependency; any
//! other reference from a `mod.rs` to its children, or from a child to an item defined in
//! its parent `mod.rs`, is an ordinary edge. Edges to the crate root (`lib.rs` items such
//! as `crate::VERSION`) and self-edges are dropped. Each import that lies on a cycle is
//! reported with the shortest cycle through it (duplicates merged), written from the
//! module the caller ranks first.
//!
//! Not modelled: inline modules other than `#[cfg(test)]` ones (their `super::` is read as
//! the file's), glob re-exports (`pub use x::*` is not followed), paths built by macros,
//! and method calls (a method defined in another module's `impl` block is no path).

// Each test binary that includes this file uses part of it.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// A module as path segments under `crate`; `[]` is the crate root.
pub type Module = Vec<String>;

/// A leaf of a use tree or an inline path: its segments and its `as` alias.
type Leaf = (Vec<String>, Option<String>);

pub fn module_of(file: &str) -> Module {
    let stem = file.trim_end_matches(".rs");
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    stem.split('/')
        .filter(|&s| s != "lib")
        .map(String::from)
        .collect()
}

pub fn name(module: &[String]) -> String {
    if module.is_empty() {
        return "crate".to_string();
    }
    module.join("::")
}

fn is(t: &[String], i: usize, s: &str) -> bool {
    t.get(i).is_some_and(|x| x == s)
}

/// The code tokens of `src`: words, `::` and single punctuation. Comments and string and
/// char literals are dropped; a lifetime leaves a lone `'`.
pub fn tokens(src: &str) -> Vec<String> {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let (mut out, mut i, mut comment_depth) = (Vec::new(), 0, 0);
    while i < c.len() {
        let (ch, next) = (c[i], at(i + 1));
        if comment_depth > 0 || (ch == '/' && next == '*') {
            // Block comments nest.
            match (ch, next) {
                ('/', '*') => (comment_depth, i) = (comment_depth + 1, i + 2),
                ('*', '/') => (comment_depth, i) = (comment_depth - 1, i + 2),
                _ => i += 1,
            }
        } else if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '"' {
            i = skip_string(&c, i + 1, None);
        } else if ch == '\'' && next == '\\' {
            i += 3; // past the escape's first character, then to the closing quote
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if ch == '\'' && at(i + 2) == '\'' {
            i += 3;
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let hashes = c[i..].iter().take_while(|&&x| x == '#').count();
            if matches!(&*word, "r" | "br" | "cr") && at(i + hashes) == '"' {
                i = skip_string(&c, i + hashes + 1, Some(hashes));
            } else if matches!(&*word, "b" | "c") && at(i) == '"' {
                i = skip_string(&c, i + 1, None);
            } else {
                out.push(word);
            }
        } else if ch == ':' && next == ':' {
            out.push("::".to_string());
            i += 2;
        } else {
            if !ch.is_whitespace() {
                out.push(ch.to_string());
            }
            i += 1;
        }
    }
    out
}

/// Skips a string body starting at `i`; `raw` is the number of `#`s of a raw string.
fn skip_string(c: &[char], mut i: usize, raw: Option<usize>) -> usize {
    while i < c.len() {
        let closes = |h: usize| {
            c.get(i + 1..i + 1 + h)
                .is_some_and(|s| s.iter().all(|&x| x == '#'))
        };
        match (c[i], raw) {
            ('\\', None) => i += 2,
            ('"', None) => return i + 1,
            ('"', Some(h)) if closes(h) => return i + 1 + h,
            _ => i += 1,
        }
    }
    i
}

/// Drops `#[cfg(test)] [pub] mod name { … }` blocks.
fn strip_test_modules(t: Vec<String>) -> Vec<String> {
    const CFG_TEST: [&str; 7] = ["#", "[", "cfg", "(", "test", ")", "]"];
    let (mut out, mut i) = (Vec::new(), 0);
    while i < t.len() {
        let j = i + CFG_TEST.len() + usize::from(is(&t, i + CFG_TEST.len(), "pub"));
        let cfg_test = CFG_TEST.iter().enumerate().all(|(k, s)| is(&t, i + k, s));
        if cfg_test && is(&t, j, "mod") && is(&t, j + 2, "{") {
            let mut depth = 0;
            i = t.len(); // unbalanced: drop the rest
            for (k, tok) in t.iter().enumerate().skip(j + 2) {
                depth += i32::from(tok == "{") - i32::from(tok == "}");
                if depth == 0 {
                    i = k + 1;
                    break;
                }
            }
        } else {
            out.push(t[i].clone());
            i += 1;
        }
    }
    out
}

/// Parses the use tree (or inline path) at `i` into `out`, one leaf per path; a glob leaf
/// ends in `*`. Returns the index after the tree.
fn use_tree(t: &[String], mut i: usize, mut prefix: Vec<String>, out: &mut Vec<Leaf>) -> usize {
    loop {
        match t.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                while i < t.len() && !is(t, i, "}") {
                    i = use_tree(t, i, prefix.clone(), out).max(i + 1);
                    i += usize::from(is(t, i, ","));
                }
                return i + 1;
            }
            Some("*") => {
                prefix.push("*".to_string());
                out.push((prefix, None));
                return i + 1;
            }
            // `::name` is an external crate: mark it so it never matches a module.
            Some("::") if prefix.is_empty() => (prefix, i) = (vec!["::".to_string()], i + 1),
            Some(s) if s.starts_with(|ch: char| ch.is_alphabetic() || ch == '_') => {
                prefix.push(s.to_string());
                i += 1;
                if is(t, i, "::") {
                    i += 1;
                    continue;
                }
                let alias = t.get(i + 1).filter(|_| is(t, i, "as")).cloned();
                let end = i + if alias.is_some() { 2 } else { 0 };
                out.push((prefix, alias));
                return end;
            }
            _ => {
                if !prefix.is_empty() {
                    out.push((prefix, None));
                }
                return i;
            }
        }
    }
}

/// Makes a written path absolute if it points into the crate: it starts with `crate`,
/// `self`, `super` (repeatable) or the name of a child module of `here`.
fn absolute(raw: &[String], here: &[String], modules: &BTreeSet<Module>) -> Option<Module> {
    let mut path = here.to_vec();
    let mut rest = &raw[1..];
    match raw.first()?.as_str() {
        "crate" => path.clear(),
        "self" => {}
        "super" => {
            path.pop();
            while rest.first().is_some_and(|s| s == "super") {
                path.pop();
                rest = &rest[1..];
            }
        }
        child => {
            path.push(child.to_string());
            if !modules.contains(&path) {
                return None;
            }
        }
    }
    path.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(path)
}

/// A path into the crate, made absolute but not yet resolved to a module file.
struct Ref {
    path: Module,
    /// The name a `use` brings into scope (`None` for inline paths and globs).
    name: Option<String>,
    /// Whether it comes from a `pub use` (`pub(crate) use`, …).
    public: bool,
}

/// Every path into the crate in the tokens of module `here`.
fn refs(t: &[String], here: &[String], modules: &BTreeSet<Module>) -> Vec<Ref> {
    let (mut out, mut i) = (Vec::new(), 0);
    while i < t.len() {
        let (mut leaves, is_use) = (Vec::new(), t[i] == "use");
        let mut j = i; // to the `pub` of `pub use` or `pub(…) use`
        if is(t, j.wrapping_sub(1), ")") {
            j = t[..j].iter().rposition(|x| x == "(").unwrap_or(0);
        }
        let public = is_use && is(t, j.wrapping_sub(1), "pub");
        if is_use {
            i = use_tree(t, i + 1, Vec::new(), &mut leaves);
        } else if is(t, i + 1, "::")
            && !is(t, i.wrapping_sub(1), "::")
            && absolute(&t[i..=i], here, modules).is_some()
        {
            i = use_tree(t, i, Vec::new(), &mut leaves);
        } else {
            i += 1;
        }
        for (raw, alias) in leaves {
            if let Some(path) = absolute(&raw, here, modules) {
                let name = alias.or_else(|| path.last().cloned());
                let name = name.filter(|n| is_use && n != "*" && n != "_");
                out.push(Ref { path, name, public });
            }
        }
    }
    out
}

/// The length of the longest prefix of `path` that is a module file.
fn module_prefix(path: &[String], modules: &BTreeSet<Module>) -> usize {
    let mut k = path.len();
    while k > 0 && !modules.contains(&path[..k]) {
        k -= 1;
    }
    k
}

/// The module file a path lands in, following the names modules bring in with `use`.
fn resolve(mut path: Module, modules: &BTreeSet<Module>, scope: &Scope) -> Module {
    for _ in 0..16 {
        let k = module_prefix(&path, modules);
        match path.get(k).and_then(|n| scope.get(&path[..k])?.get(n)) {
            Some(to) if to[..] != path[..=k] => path = [&to[..], &path[k + 1..]].concat(),
            _ => break,
        }
    }
    path.truncate(module_prefix(&path, modules));
    path
}

/// Per module, where each name it brings in with `use` comes from.
type Scope = BTreeMap<Module, BTreeMap<String, Module>>;

/// Module → the modules it depends on (the crate root and self-edges left out).
pub fn dependencies(files: &BTreeMap<String, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules: BTreeSet<Module> = files.keys().map(|f| module_of(f)).collect();
    let mut all = BTreeMap::new();
    let mut scope = Scope::new();
    for (file, src) in files {
        let here = module_of(file);
        let found = refs(&strip_test_modules(tokens(src)), &here, &modules);
        let names = found
            .iter()
            .filter_map(|r| Some((r.name.clone()?, r.path.clone())));
        scope.insert(here.clone(), names.collect());
        all.insert(here, found);
    }
    let mut deps = BTreeMap::new();
    for (here, found) in all.into_iter().filter(|(m, _)| !m.is_empty()) {
        // A `pub use` of the module's own descendants is structure, not a dependency.
        let real = found
            .into_iter()
            .filter(|r| !(r.public && r.path.starts_with(&here)));
        let targets = real.map(|r| resolve(r.path, &modules, &scope));
        let targets = targets.filter(|m| !m.is_empty() && *m != here).collect();
        deps.insert(here, targets);
    }
    deps
}

/// Every import cycle, as a chain starting and ending at its module that `rank` puts
/// first (lowest key).
pub fn cycles<K: Ord>(
    deps: &BTreeMap<Module, BTreeSet<Module>>,
    rank: impl Fn(&Module) -> K,
) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for (from, targets) in deps {
        for to in targets {
            // The shortest way back from `to` to `from`, breadth first.
            let mut came_from = BTreeMap::from([(to, to)]);
            let mut queue = VecDeque::from([to]);
            while let Some(m) = queue.pop_front() {
                for next in deps.get(m).into_iter().flatten() {
                    if !came_from.contains_key(next) {
                        came_from.insert(next, m);
                        queue.push_back(next);
                    }
                }
            }
            if !came_from.contains_key(from) {
                continue;
            }
            let mut cycle = vec![from];
            while cycle.last() != Some(&to) {
                cycle.push(came_from[cycle.last().unwrap()]);
            }
            cycle.reverse(); // to … from, and from imports to
            let start = (0..cycle.len()).min_by_key(|&k| rank(cycle[k])).unwrap();
            cycle.rotate_left(start);
            let chain: Vec<String> = cycle.iter().chain(&cycle[..1]).map(|m| name(m)).collect();
            found.insert(chain);
        }
    }
    found
}

/// Every `.rs` file under `src`, by its path relative to `src` (`/`-separated).
pub fn read_src(src: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    read_sources(src, src, &mut files);
    assert!(
        files.contains_key("lib.rs"),
        "no lib.rs in {}",
        src.display()
    );
    files
}

fn read_sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).expect("read a src directory") {
        let path = entry.expect("read a src entry").path();
        if path.is_dir() {
            read_sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("a file under src");
            let rel = rel.to_string_lossy().replace('\\', "/");
            out.insert(rel, std::fs::read_to_string(&path).expect("read a source"));
        }
    }
}

/// The files longer than `max` lines, as `src/<file> has <n> lines (more than <max>)`.
pub fn long_files(files: &BTreeMap<String, String>, max: usize) -> Vec<String> {
    let long = files.iter().map(|(f, src)| (f, src.lines().count()));
    long.filter(|&(_, n)| n > max)
        .map(|(f, n)| format!("src/{f} has {n} lines (more than {max})"))
        .collect()
}
