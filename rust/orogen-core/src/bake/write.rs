//! Writing a list of files into a folder in one step: every file into a staging folder
//! beside it, then the staging folder in its place ([`super::folder`]).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::error::{OrogenError, Result};

use super::folder;

/// Writes one file's bytes; the path is the one to name in errors.
pub(crate) type Encoder<'a> = Box<dyn FnOnce(&mut BufWriter<File>, &Path) -> Result<()> + 'a>;

/// Writes every file of `files` into a staging folder, then puts it in place of `dir`
/// in one step. Nothing is replaced unless every file was written.
pub(crate) fn write_all_or_nothing(
    dir: &Path,
    files: Vec<(String, Encoder<'_>)>,
) -> Result<Vec<PathBuf>> {
    if dir.exists() && !dir.is_dir() {
        return Err(OrogenError::bad_file(dir, "is not a folder"));
    }
    let staged = folder::stage(dir)?;
    let out = match write_into(&staged, dir, files) {
        Ok(names) => names.iter().map(|n| dir.join(n)).collect(),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staged);
            return Err(e);
        }
    };
    folder::commit(&staged, dir)?;
    Ok(out)
}

/// Writes every file of `files` into the folder `staged` (errors name the file in `shown`,
/// the folder the user asked for); returns their names. A tiled bake's ranks each write
/// their files into the one staging folder this way.
pub(crate) fn write_into(
    staged: &Path,
    shown_dir: &Path,
    files: Vec<(String, Encoder<'_>)>,
) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(files.len());
    for (name, encode) in files {
        let path = staged.join(&name);
        // Errors name the file the user asked for, not the staging folder's copy.
        let shown = shown_dir.join(&name);
        File::create(&path)
            .map_err(|e| OrogenError::io("cannot create", &shown, e))
            .and_then(|file| {
                let mut w = BufWriter::new(file);
                encode(&mut w, &shown)?;
                let file = w
                    .into_inner()
                    .map_err(|e| OrogenError::io("cannot write", &shown, e.into_error()))?;
                file.sync_all()
                    .map_err(|e| OrogenError::io("cannot write", &shown, e))
            })?;
        out.push(name);
    }
    Ok(out)
}
