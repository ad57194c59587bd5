//! A terrain's data outside its scene.
//!
//! When the editor saves a scene it sends `NOTIFICATION_EDITOR_PRE_SAVE` to every node before
//! it packs the scene. Then each `TerrainWorld` of the scene writes, compressed, beside the
//! scene file:
//! - its `data` to `<scene>.terrain.res` when the data is not in a file of its own (a
//!   generated terrain, or one embedded by an older version). Data that already lives in a
//!   file (loaded from it, or pointed at by Bake to Folder) stays where it is;
//! - its painted maps, every map of `paint_maps::MAPS`, to `<scene>.paint.res` (a
//!   `TerrainPaint`, the `paint_data` property) when they changed since they were written.
//!   While the scene is packed the per-map properties (`uplift_paint`, …) read null, so the
//!   maps are not embedded as well.
//!
//! Each resource takes over its file's path, so the scene refers to it as an external
//! resource (a few hundred bytes in the `.tscn` instead of megabytes of images), and a game
//! loading the scene loads the files with it. A node below the scene's root adds its path
//! to the names (`<scene>.Parent_Terrain.terrain.res`), so two terrains of a scene never
//! share a file. A file of these names the node no longer uses (its data set to another file
//! or to none, its paint cleared) is removed, so saving again leaves nothing stale.
//!
//! A scene saved for the first time has no path until it is written: it is written with the
//! data embedded, and then saved once more (deferred), when the files can be named.
//!
//! Undo is unaffected: it swaps `data` resources in memory. A resource holds one of these
//! paths only while that file holds it (writing another takes the path over, and a file that
//! went missing is written again).

use godot::classes::resource_saver::SaverFlags;
use godot::classes::{DirAccess, EditorInterface, Engine, Node, Resource, ResourceSaver};
use godot::prelude::*;

use super::TerrainWorld;
use crate::data::TerrainPaint;

/// Suffix of the file of a terrain's `data`.
pub const DATA_SUFFIX: &str = ".terrain.res";
/// Suffix of the file of a terrain's painted maps.
pub const PAINT_SUFFIX: &str = ".paint.res";

/// Whether a resource at `path` is saved inside another file (or nowhere yet).
pub fn is_embedded(path: &str) -> bool {
    path.is_empty() || path.contains("::")
}

impl TerrainWorld {
    /// `NOTIFICATION_EDITOR_PRE_SAVE`: writes the data and the painted maps beside the scene
    /// (see the module's documentation).
    pub(super) fn before_scene_save(&mut self) {
        if !Engine::singleton().is_editor_hint() {
            return;
        }
        match self.file_stem() {
            Some(stem) => {
                if let Err(e) = self.write_files(&stem) {
                    godot_error!("TerrainWorld: {e}; the scene embeds the terrain instead");
                    self.paint.hidden_for_save = false;
                }
            }
            None => {
                // No file name yet: embed now, write the files once the scene has a path.
                let embedded = self
                    .data
                    .as_ref()
                    .is_some_and(|d| is_embedded(&d.get_path().to_string()));
                self.save_again = embedded || !self.paint.is_empty();
                self.paint_data = None;
            }
        }
    }

    /// `NOTIFICATION_EDITOR_POST_SAVE`: the per-map properties read the maps again; a scene
    /// saved for the first time with a terrain embedded is saved once more, deferred.
    pub(super) fn after_scene_save(&mut self) {
        self.paint.hidden_for_save = false;
        if !std::mem::take(&mut self.save_again) || self.file_stem().is_none() {
            return;
        }
        let mut editor = EditorInterface::singleton();
        let mine = self.scene_root();
        if mine.is_some() && editor.get_edited_scene_root() == mine {
            editor.call_deferred("save_scene", &[]);
        }
    }

    /// The root of the scene this node is saved with: its owner, or itself.
    fn scene_root(&self) -> Option<Gd<Node>> {
        let me = self.to_gd().upcast::<Node>();
        Some(me.get_owner().unwrap_or(me))
    }

    /// `res://dir/scene` (the scene file without its extension), plus `.Node_Path` for a
    /// node below the scene's root; None while the scene has no file.
    fn file_stem(&self) -> Option<String> {
        let me = self.to_gd().upcast::<Node>();
        let root = self.scene_root()?;
        let scene = root.get_scene_file_path();
        if scene.is_empty() {
            return None;
        }
        let scene = scene.to_string();
        let dot = scene
            .rfind('.')
            .filter(|&i| i > scene.rfind('/').unwrap_or(0));
        let mut stem = scene[..dot.unwrap_or(scene.len())].to_string();
        if root != me {
            let rel = root.get_path_to(&me).to_string();
            stem.push('.');
            stem.push_str(&rel.replace(['/', ':', '@', '%'], "_"));
        }
        Some(stem)
    }

    /// Writes the files of `stem` (see the module's documentation).
    fn write_files(&mut self, stem: &str) -> Result<(), String> {
        let data_file = format!("{stem}{DATA_SUFFIX}");
        if let Some(mut data) = self.data.clone() {
            let path = data.get_path().to_string();
            if is_embedded(&path) || (path == data_file && !file_exists(&data_file)) {
                save_compressed(&data.clone().upcast(), &data_file)?;
                data.take_over_path(data_file.as_str());
            }
        }
        let data_path = self.data.as_ref().map(|d| d.get_path().to_string());
        if data_path.as_deref() != Some(data_file.as_str()) {
            remove_if_exists(&data_file)?;
        }

        let paint_file = format!("{stem}{PAINT_SUFFIX}");
        let maps = self.paint.to_dictionary();
        if maps.is_empty() {
            self.paint_data = None;
            self.paint.saved_revision = None;
            return remove_if_exists(&paint_file);
        }
        let ours = self
            .paint_data
            .clone()
            .filter(|p| p.get_path() == paint_file.as_str());
        let current = ours.is_some()
            && self.paint.saved_revision == Some(self.paint.revisions())
            && file_exists(&paint_file);
        if !current {
            let mut res = ours.unwrap_or_else(TerrainPaint::new_gd);
            res.bind_mut().maps = maps;
            save_compressed(&res.clone().upcast(), &paint_file)?;
            res.take_over_path(paint_file.as_str());
            self.paint_data = Some(res);
            self.paint.saved_revision = Some(self.paint.revisions());
        }
        self.paint.hidden_for_save = true;
        Ok(())
    }

    /// Sets the painted maps from a `TerrainPaint` (a scene loading): every map it holds,
    /// each checked; a map of another name is reported and skipped.
    pub(super) fn apply_paint_data(&mut self, res: Option<Gd<TerrainPaint>>) {
        if let Some(res) = &res {
            let maps = res.bind().maps.clone();
            for (key, value) in maps.iter_shared() {
                let name = key.to_string();
                if name == super::paint_maps::GROUND {
                    match value.try_to::<Gd<godot::classes::Image>>() {
                        Ok(img) => self.set_ground_paint_image(Some(img)),
                        Err(_) => godot_error!(
                            "TerrainWorld.paint_data ({}): map `ground` is not an Image",
                            res.get_path()
                        ),
                    }
                    continue;
                }
                let slot = match super::PaintMaps::slot(&name) {
                    Ok(slot) => slot,
                    Err(e) => {
                        godot_error!("TerrainWorld.paint_data ({}): {e}", res.get_path());
                        continue;
                    }
                };
                match value.try_to::<Gd<godot::classes::Image>>() {
                    Ok(img) => self.set_paint_image(slot, Some(img)),
                    Err(_) => godot_error!(
                        "TerrainWorld.paint_data ({}): map `{name}` is not an Image",
                        res.get_path()
                    ),
                }
            }
        }
        self.paint_data = res;
        self.paint.saved_revision = Some(self.paint.revisions());
    }
}

fn file_exists(path: &str) -> bool {
    godot::classes::FileAccess::file_exists(path)
}

/// Saves `res` to `path` compressed and tells the editor's file system.
fn save_compressed(res: &Gd<Resource>, path: &str) -> Result<(), String> {
    let err = ResourceSaver::singleton()
        .save_ex(res)
        .path(path)
        .flags(SaverFlags::COMPRESS)
        .done();
    if err != godot::global::Error::OK {
        return Err(format!("cannot write {path}: {err:?}"));
    }
    notify_file_system(path);
    Ok(())
}

/// Removes `path` if it is there (a file of ours the node no longer uses).
fn remove_if_exists(path: &str) -> Result<(), String> {
    if !file_exists(path) {
        return Ok(());
    }
    let abs = godot::classes::ProjectSettings::singleton().globalize_path(path);
    let err = DirAccess::remove_absolute(&abs);
    if err != godot::global::Error::OK {
        return Err(format!("cannot remove the unused {path}: {err:?}"));
    }
    notify_file_system(path);
    Ok(())
}

fn notify_file_system(path: &str) {
    if let Some(mut fs) = EditorInterface::singleton().get_resource_filesystem() {
        fs.update_file(path);
    }
}
