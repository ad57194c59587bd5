//! Helpers every format shares: paths, side limits, atomic writes, u16 normalisation.
//!
//! Every file is written through [`write_atomic`]: to a temporary name in the same
//! folder, then renamed into place, so an interrupted write never leaves a half file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{OrogenError, Result};
use crate::field::{finite_min_max, MAX_SIDE};

/// Resolves `path` against `base_dir` (the recipe file's folder) unless it is absolute.
pub fn resolve_path(base_dir: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base_dir.join(p)
    }
}

/// An error naming `path` when a side is 0 or over [`MAX_SIDE`].
pub(crate) fn check_side_limits(path: &Path, width: u64, height: u64) -> Result<()> {
    for (what, side) in [("width", width), ("height", height)] {
        if side == 0 || side > MAX_SIDE as u64 {
            return Err(OrogenError::bad_file(
                path,
                format!("{what} {side} is outside 1..={MAX_SIDE} cells"),
            ));
        }
    }
    Ok(())
}

/// Checks that `path` is a regular file (following links) and returns its size in bytes.
/// Anything else (a folder, a FIFO, a device such as `/dev/zero`) is refused before it is
/// opened: opening a FIFO blocks forever and a device never ends.
pub fn check_regular_file(path: &Path) -> Result<u64> {
    let meta = std::fs::metadata(path).map_err(|e| OrogenError::io("cannot open", path, e))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "not a regular file (a pipe, socket or device)"
        };
        return Err(OrogenError::bad_file(
            path,
            format!("is {what}; give a file"),
        ));
    }
    Ok(meta.len())
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary path beside `target` (same folder, so a rename is atomic).
pub(crate) fn temp_path_for(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "orogen".into());
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

/// Writes a file to a temporary name through `write`, returning that name; the
/// caller renames it into place (see [`commit_temp`]). The temporary file is removed
/// when `write` fails.
pub(crate) fn write_temp(
    target: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<PathBuf> {
    if target.is_dir() {
        return Err(OrogenError::bad_file(
            target,
            "is a folder; cannot write a file in its place",
        ));
    }
    let tmp = temp_path_for(target);
    let file = File::create(&tmp).map_err(|e| OrogenError::io("cannot create", &tmp, e))?;
    let mut out = BufWriter::new(file);
    let result = write(&mut out).and_then(|()| {
        let file = out
            .into_inner()
            .map_err(|e| OrogenError::io("cannot write", &tmp, e.into_error()))?;
        file.sync_all()
            .map_err(|e| OrogenError::io("cannot write", &tmp, e))
    });
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Renames a temporary file from [`write_temp`] onto `target`.
pub(crate) fn commit_temp(tmp: &Path, target: &Path) -> Result<()> {
    std::fs::rename(tmp, target).map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        OrogenError::io("cannot replace", target, e)
    })
}

/// Writes `target` atomically: the bytes go to a temporary file in the same folder,
/// which is renamed onto `target` only once `write` succeeded. On any error the
/// previous `target` (if any) is left as it was.
pub fn write_atomic(
    target: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    let tmp = write_temp(target, write)?;
    commit_temp(&tmp, target)
}

/// Wraps a `std::io::Error` from writing `path`.
pub(crate) fn write_err(path: &Path) -> impl Fn(std::io::Error) -> OrogenError + '_ {
    move |e| OrogenError::io("cannot write", path, e)
}

/// Writes all of `bytes`, naming `path` on failure.
pub(crate) fn write_all(out: &mut impl Write, bytes: &[u8], path: &Path) -> Result<()> {
    out.write_all(bytes).map_err(write_err(path))
}

/// Maps `data` linearly from its finite `min..max` onto `0..=65535` (rounded);
/// non-finite values and a constant map give 0. Returns the values and `(min, max)`.
pub fn normalise_u16(data: &[f32]) -> (Vec<u16>, (f32, f32)) {
    let (lo, hi) = finite_min_max(data);
    let span = hi as f64 - lo as f64;
    let out = data
        .iter()
        .map(|&v| {
            if !v.is_finite() || span <= 0.0 {
                0
            } else {
                (((v as f64 - lo as f64) / span) * 65535.0)
                    .round()
                    .clamp(0.0, 65535.0) as u16
            }
        })
        .collect();
    (out, (lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_u16_spans_full_range() {
        let (v, (lo, hi)) = normalise_u16(&[2.0, 4.0, 3.0, f32::NAN]);
        assert_eq!((lo, hi), (2.0, 4.0));
        assert_eq!(v, vec![0, 65535, 32768, 0]);
        let (v, _) = normalise_u16(&[5.0, 5.0]);
        assert_eq!(v, vec![0, 0]);
    }

    #[test]
    fn write_atomic_keeps_previous_file_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.bin");
        std::fs::write(&target, b"old").unwrap();
        let err = write_atomic(&target, |out| {
            write_all(out, b"half", &target)?;
            Err(OrogenError::bad_file(&target, "injected failure"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("injected failure"));
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        write_atomic(&target, |out| write_all(out, b"new", &target)).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }
}
