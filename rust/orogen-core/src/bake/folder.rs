//! Replacing an output folder in one step, so a bake's files are all new or all old.
//!
//! A bake writes every file into a staging folder beside the output folder
//! (`.NAME.orogen-new-PID-N`, same parent, so the same file system), then swaps the two:
//!
//! - on Linux with `renameat2(RENAME_EXCHANGE)`, one atomic system call; the staging path
//!   then holds the earlier bake, which is deleted;
//! - elsewhere (or on a file system without it): the output folder is renamed aside to
//!   `.NAME.orogen-old-PID-N`, the staging folder renamed into its place, and the old one
//!   deleted. A run killed between the two renames leaves no output folder but the old
//!   one aside; the next bake into that folder renames it back before it starts
//!   ([`recover`]), so the earlier bake is never lost.
//!
//! What is kept from the earlier folder: files the earlier bake did not write (listed by
//! its `bake.json`; without one, every file) are carried over into the new folder, by hard
//! link where possible, else by copy, so a user's notes or Godot's `.import` files stay.
//! Maps the earlier bake wrote that the new one does not are dropped with it: they
//! describe another terrain. A folder inside the output folder stops the bake before any
//! change (it would have to be moved, which cannot be undone atomically).
//!
//! Leftovers of killed runs (staging folders, aside folders, and the per-file temporaries
//! `.NAME.tmp-PID-N` of earlier versions) whose process is gone are removed by [`recover`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{OrogenError, Result};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Files a bake writes besides its maps.
const FIXED: [&str; 5] = [
    "height.exr",
    "height.png",
    "height.r16",
    "preview.png",
    "bake.json",
];

/// Extensions a map is written with.
const MAP_EXTENSIONS: [&str; 2] = ["exr", "png"];

/// The output folder's parent (`.` for a bare name) and its name.
fn split(target: &Path) -> Result<(PathBuf, String)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| OrogenError::bad_file(target, "is not usable as an output folder"))?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((parent, name))
}

/// A fresh sibling path of `target`: `.NAME.orogen-KIND-PID-N`.
fn sibling(target: &Path, kind: &str) -> Result<PathBuf> {
    let (parent, name) = split(target)?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    Ok(parent.join(format!(".{name}.orogen-{kind}-{}-{n}", std::process::id())))
}

/// Whether process `pid` is running (Linux: `/proc`; elsewhere assumed gone unless it is
/// this process).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        false
    }
}

/// The PID in a leftover's name tail `PID-N`, if it parses.
fn pid_of(tail: &str) -> Option<u32> {
    tail.split('-').next()?.parse().ok()
}

/// Creates an empty staging folder beside `target` (cleaning up after killed runs first)
/// and returns its path. The caller writes the bake into it and calls [`commit`].
pub fn stage(target: &Path) -> Result<PathBuf> {
    recover(target)?;
    let (parent, _) = split(target)?;
    std::fs::create_dir_all(&parent)
        .map_err(|e| OrogenError::io("cannot create output folder", target, e))?;
    let dir = sibling(target, "new")?;
    std::fs::create_dir(&dir)
        .map_err(|e| OrogenError::io("cannot create staging folder", &dir, e))?;
    Ok(dir)
}

/// Brings `target`'s neighbourhood back to a clean state after killed runs: an output
/// folder renamed aside and never replaced is renamed back; other leftovers of dead
/// processes are removed.
pub fn recover(target: &Path) -> Result<()> {
    let (parent, name) = split(target)?;
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return Ok(());
    };
    let new_prefix = format!(".{name}.orogen-new-");
    let old_prefix = format!(".{name}.orogen-old-");
    let mut aside: Vec<PathBuf> = Vec::new();
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        if let Some(tail) = file.strip_prefix(&new_prefix) {
            if pid_of(tail).is_some_and(|p| !alive(p)) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        } else if let Some(tail) = file.strip_prefix(&old_prefix) {
            if pid_of(tail).is_some_and(|p| !alive(p)) {
                aside.push(e.path());
            }
        }
    }
    aside.sort();
    for old in aside {
        if target.exists() {
            let _ = std::fs::remove_dir_all(&old);
        } else {
            std::fs::rename(&old, target)
                .map_err(|e| OrogenError::io("cannot restore the earlier bake from", &old, e))?;
        }
    }
    if let Ok(entries) = std::fs::read_dir(target) {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if let Some((_, tail)) = file.strip_prefix('.').and_then(|f| f.rsplit_once(".tmp-")) {
                if pid_of(tail).is_some_and(|p| !alive(p)) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    Ok(())
}

/// Leftovers of bakes into `target` that are still beside it: staging or aside folders
/// of this process or of processes that are gone (a folder holding the earlier bake
/// stays when a file in it cannot be deleted, e.g. one locked with `chattr +i`). Those
/// of another running bake into the same folder are its own work and not listed.
pub fn leftovers(target: &Path) -> Vec<PathBuf> {
    let Ok((parent, name)) = split(target) else {
        return Vec::new();
    };
    let prefix = format!(".{name}.orogen-");
    let own = std::process::id();
    let mut found: Vec<PathBuf> = std::fs::read_dir(&parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = file.strip_prefix(&prefix) else {
                return false;
            };
            // `new-PID-N` or `old-PID-N`.
            let tail = rest.split_once('-').map_or("", |(_, t)| t);
            pid_of(tail).is_none_or(|p| p == own || !alive(p))
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Checks, before any work, that a bake can later replace `target`: it is a folder or
/// missing, holds no folder, and a staging folder can be created beside it (cleaning up
/// after killed runs first).
pub fn check(target: &Path) -> Result<()> {
    if target.exists() && !target.is_dir() {
        return Err(OrogenError::bad_file(target, "is not a folder"));
    }
    if let Ok(entries) = std::fs::read_dir(target) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                return Err(inner_folder(&e.path()));
            }
        }
    }
    let probe = stage(target)?;
    let _ = std::fs::remove_dir(&probe);
    Ok(())
}

fn inner_folder(path: &Path) -> OrogenError {
    OrogenError::bad_file(
        path,
        "is a folder inside the output folder; a bake replaces the output folder in one \
         step and does not move folders, so choose another output folder or move this one out",
    )
}

/// Names of the files the bake in `dir` wrote, from its `bake.json` and the `files` of its
/// `export.json` (an export for Terrain3D or HTerrain); `None` without either.
fn written_by_earlier_bake(dir: &Path) -> Option<BTreeSet<String>> {
    let exported = written_by_earlier_export(dir);
    match (written_by_bake_json(dir), exported) {
        (Some(mut a), Some(b)) => {
            a.extend(b);
            Some(a)
        }
        (a, b) => a.or(b),
    }
}

/// The `files` list of `dir/export.json`.
fn written_by_earlier_export(dir: &Path) -> Option<BTreeSet<String>> {
    let text = std::fs::read_to_string(dir.join("export.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let names = json
        .get("files")?
        .as_array()?
        .iter()
        .filter_map(|f| f.as_str())
        .filter(|f| !f.contains(['/', '\\']))
        .map(String::from)
        .collect();
    Some(names)
}

fn written_by_bake_json(dir: &Path) -> Option<BTreeSet<String>> {
    let text = std::fs::read_to_string(dir.join("bake.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let mut names: BTreeSet<String> = FIXED.iter().map(|s| s.to_string()).collect();
    for map in json.get("maps")?.as_array()? {
        if let Some(m) = map.as_str() {
            for ext in MAP_EXTENSIONS {
                names.insert(format!("{m}.{ext}"));
            }
        }
    }
    // A planet's files, listed under their own key (plain file names).
    for f in json
        .get("planet")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str())
    {
        if !f.contains(['/', '\\']) {
            names.insert(f.to_string());
        }
    }
    // A tiled bake's tiles (issue #41): `tiles.tiles[i].files`, plain file names.
    for f in json
        .pointer("/tiles/tiles")
        .and_then(|t| t.as_array())
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("files")?.as_array())
        .flatten()
        .filter_map(|f| f.as_str())
    {
        if !f.contains(['/', '\\']) {
            names.insert(f.to_string());
        }
    }
    // `rivers.json`, named by its own key (a plain file name).
    if let Some(f) = json.get("rivers").and_then(|f| f.as_str()) {
        if !f.contains(['/', '\\']) {
            names.insert(f.to_string());
        }
    }
    Some(names)
}

/// Carries the files of `old` that its bake did not write into `new`, unless `new` has a
/// file of that name. Fails, before any change to `old`, on a folder inside it.
fn carry_over(old: &Path, new: &Path) -> Result<()> {
    let owned = written_by_earlier_bake(old).unwrap_or_default();
    let entries = std::fs::read_dir(old).map_err(|e| OrogenError::io("cannot read", old, e))?;
    let mut keep = Vec::new();
    for e in entries {
        let e = e.map_err(|e| OrogenError::io("cannot read", old, e))?;
        let file = e.file_name().to_string_lossy().into_owned();
        let kind = e
            .file_type()
            .map_err(|err| OrogenError::io("cannot read", e.path(), err))?;
        if kind.is_dir() {
            return Err(inner_folder(&e.path()));
        }
        let temporary = file.starts_with(".orogen-write-test-")
            || (file.starts_with('.') && file.contains(".tmp-"));
        if owned.contains(&file) || temporary || new.join(&file).exists() {
            continue;
        }
        keep.push(e.path());
    }
    for src in keep {
        let dst = new.join(src.file_name().unwrap_or_default());
        if std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).map_err(|e| OrogenError::io("cannot carry over", &src, e))?;
        }
    }
    Ok(())
}

/// Swaps `a` and `b` atomically (both must exist). `Ok(false)` when the system or file
/// system has no atomic exchange.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| OrogenError::bad_file(p, "has a NUL byte in its path"))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: both are valid NUL-terminated paths; AT_FDCWD resolves them relative to
    // the working folder, as std's own file calls do.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => Ok(false),
        _ => Err(OrogenError::io("cannot swap in the new bake at", b, err)),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> Result<bool> {
    Ok(false)
}

/// Puts the staging folder `staged` (from [`stage`]) in place of `target` in one step,
/// carrying over the files the earlier bake did not write. On error the earlier folder
/// is left as it was and the staging folder is removed.
pub fn commit(staged: &Path, target: &Path) -> Result<()> {
    let result = commit_inner(staged, target);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(staged);
    }
    result
}

fn commit_inner(staged: &Path, target: &Path) -> Result<()> {
    if !target.exists() {
        return std::fs::rename(staged, target)
            .map_err(|e| OrogenError::io("cannot move the new bake to", target, e));
    }
    if !target.is_dir() {
        return Err(OrogenError::bad_file(target, "is not a folder"));
    }
    carry_over(target, staged)?;
    if exchange(staged, target)? {
        // `staged` now holds the earlier bake.
        let _ = std::fs::remove_dir_all(staged);
        return Ok(());
    }
    let aside = sibling(target, "old")?;
    std::fs::rename(target, &aside)
        .map_err(|e| OrogenError::io("cannot move the earlier bake aside from", target, e))?;
    if let Err(e) = std::fs::rename(staged, target) {
        let _ = std::fs::rename(&aside, target);
        return Err(OrogenError::io("cannot move the new bake to", target, e));
    }
    let _ = std::fs::remove_dir_all(&aside);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::write(p, text).unwrap();
    }

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn commit_replaces_the_bake_and_keeps_foreign_files() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        std::fs::create_dir(&out).unwrap();
        write(&out.join("bake.json"), r#"{"maps": ["rivers", "basins"]}"#);
        write(&out.join("height.exr"), "old");
        write(&out.join("rivers.png"), "old");
        write(&out.join("basins.png"), "old");
        write(&out.join("notes.txt"), "mine");
        write(&out.join("height.png.import"), "godot");
        let staged = stage(&out).unwrap();
        write(&staged.join("bake.json"), r#"{"maps": ["drainage"]}"#);
        write(&staged.join("height.exr"), "new");
        write(&staged.join("drainage.exr"), "new");
        commit(&staged, &out).unwrap();
        assert_eq!(
            names(&out),
            [
                "bake.json",
                "drainage.exr",
                "height.exr",
                "height.png.import",
                "notes.txt"
            ]
        );
        assert_eq!(read(&out.join("height.exr")), "new");
        assert_eq!(read(&out.join("notes.txt")), "mine");
        // Only the output folder is left in its parent: no staging or aside folder.
        assert_eq!(names(root.path()), ["out"]);
    }

    #[test]
    fn a_later_bake_drops_the_tiles_an_earlier_tiled_bake_listed() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        std::fs::create_dir(&out).unwrap();
        write(
            &out.join("bake.json"),
            r#"{"maps": [], "tiles": {"tiles": [{"files": ["height_r0_c0.exr"]},
                {"files": ["height_r0_c1.exr", "erosion_r0_c1.exr"]}]}}"#,
        );
        for f in ["height_r0_c0.exr", "height_r0_c1.exr", "erosion_r0_c1.exr"] {
            write(&out.join(f), "old");
        }
        write(&out.join("notes.txt"), "mine");
        let staged = stage(&out).unwrap();
        write(&staged.join("bake.json"), r#"{"maps": []}"#);
        write(&staged.join("height.exr"), "new");
        commit(&staged, &out).unwrap();
        assert_eq!(names(&out), ["bake.json", "height.exr", "notes.txt"]);
    }

    #[test]
    fn a_later_bake_drops_the_planet_files_an_earlier_one_listed() {
        // Fuzz finding #39.5: the planet's files were in no list, so a later bake kept them
        // beside its own terrain.
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        std::fs::create_dir(&out).unwrap();
        write(
            &out.join("bake.json"),
            r#"{"maps": [], "planet": ["planet_height.exr", "planet_plates.png"], "rivers": "rivers.json"}"#,
        );
        for f in [
            "height.exr",
            "planet_height.exr",
            "planet_plates.png",
            "rivers.json",
        ] {
            write(&out.join(f), "old");
        }
        let staged = stage(&out).unwrap();
        write(&staged.join("bake.json"), r#"{"maps": []}"#);
        write(&staged.join("height.exr"), "new");
        commit(&staged, &out).unwrap();
        assert_eq!(names(&out), ["bake.json", "height.exr"]);
    }

    #[test]
    fn a_folder_inside_stops_the_commit_before_any_change() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        std::fs::create_dir_all(out.join("sub")).unwrap();
        write(&out.join("height.exr"), "old");
        let staged = stage(&out).unwrap();
        write(&staged.join("height.exr"), "new");
        let e = commit(&staged, &out).unwrap_err().to_string();
        assert!(e.contains("sub") && e.contains("folder"), "{e}");
        assert_eq!(read(&out.join("height.exr")), "old");
        assert_eq!(names(root.path()), ["out"]);
    }

    #[test]
    fn recover_restores_a_folder_left_aside_and_removes_dead_leftovers() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        // A PID that cannot be running (above Linux's pid_max limit of 2^22).
        let dead = 4_194_305u32;
        let aside = root.path().join(format!(".out.orogen-old-{dead}-0"));
        std::fs::create_dir(&aside).unwrap();
        write(&aside.join("height.exr"), "earlier");
        let staging = root.path().join(format!(".out.orogen-new-{dead}-3"));
        std::fs::create_dir(&staging).unwrap();
        write(&staging.join("height.exr"), "half");
        recover(&out).unwrap();
        assert_eq!(read(&out.join("height.exr")), "earlier");
        assert_eq!(names(root.path()), ["out"]);
        // A per-file temporary of an earlier version, from a dead run, inside the folder.
        write(&out.join(format!(".rivers.png.tmp-{dead}-7")), "half");
        recover(&out).unwrap();
        assert_eq!(names(&out), ["height.exr"]);
    }

    #[test]
    fn a_live_runs_staging_folder_is_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        let mine = stage(&out).unwrap();
        recover(&out).unwrap();
        assert!(mine.is_dir());
    }

    /// The CLI warns about the folders `leftovers` lists: its own and dead runs', never
    /// the staging folder of another bake still running into the same folder.
    #[cfg(target_os = "linux")]
    #[test]
    fn leftovers_lists_own_and_dead_runs_only() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        let mine = stage(&out).unwrap();
        let dead = root.path().join(".out.orogen-old-4194305-0");
        // PID 1 is always running.
        let running = root.path().join(".out.orogen-new-1-0");
        let other = root.path().join(".other.orogen-old-4194305-0");
        for d in [&dead, &running, &other] {
            std::fs::create_dir(d).unwrap();
        }
        let mut expected = vec![dead, mine];
        expected.sort();
        assert_eq!(leftovers(&out), expected);
    }
}
