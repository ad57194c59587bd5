//! `TerrainRecipe`: a recipe as a Godot resource; its RON text is exactly what `orogen bake`
//! reads, so a recipe saved from the editor bakes the same terrain from the command line.

use std::path::PathBuf;

use godot::classes::{IResource, Resource};
use godot::prelude::*;
use orogen_core::recipe::Stage;
use orogen_core::Recipe;

use crate::convert;

/// A terrain recipe (RON text) with editing helpers for the editor dock.
#[derive(GodotClass)]
#[class(tool, base = Resource)]
pub struct TerrainRecipe {
    /// The recipe's RON text, in the format of `orogen bake`.
    #[export(multiline)]
    #[var(set = set_ron)]
    ron: GString,
    base: Base<Resource>,
}

#[godot_api]
impl IResource for TerrainRecipe {
    fn init(base: Base<Resource>) -> Self {
        TerrainRecipe {
            ron: GString::from(Recipe::default_recipe().to_ron_string().as_str()),
            base,
        }
    }
}

#[godot_api]
impl TerrainRecipe {
    /// Replaces the RON text and emits `changed`.
    #[func]
    pub fn set_ron(&mut self, ron: GString) {
        if ron != self.ron {
            self.ron = ron;
            self.base_mut().emit_changed();
        }
    }

    /// "" if the recipe parses and validates, else the error message.
    #[func]
    pub fn validate(&self) -> GString {
        match self.parsed_valid() {
            Ok(_) => GString::new(),
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// Reads a `.ron` recipe file (res://, user:// or a plain path). The text is kept as
    /// written when it parses; returns "" or the error (a parse error leaves the recipe
    /// unchanged; a validation error is returned after the text was taken).
    #[func]
    pub fn load_ron(&mut self, path: GString) -> GString {
        let file = convert::globalize(&path.to_string());
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                return GString::from(format!("cannot read `{}`: {e}", file.display()).as_str())
            }
        };
        let recipe = match Recipe::from_ron_str(&text, &file.display().to_string()) {
            Ok(r) => r,
            Err(e) => return GString::from(e.to_string().as_str()),
        };
        self.set_ron(GString::from(text.as_str()));
        error_string(recipe.validate().map_err(|e| e.to_string()))
    }

    /// Writes the RON text to a file; returns "" or the error.
    #[func]
    pub fn save_ron(&self, path: GString) -> GString {
        let file = convert::globalize(&path.to_string());
        let mut text = self.ron.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        match std::fs::write(&file, text) {
            Ok(()) => GString::new(),
            Err(e) => GString::from(format!("cannot write `{}`: {e}", file.display()).as_str()),
        }
    }

    /// The recipe as serde's data model (enum variants are one-key dictionaries). An empty
    /// dictionary when the text does not parse.
    #[func]
    pub fn to_dict(&self) -> VarDictionary {
        let Ok(recipe) = self.parsed() else {
            return VarDictionary::new();
        };
        match serde_json::to_value(&recipe) {
            Ok(json) => convert::json_to_variant(&json)
                .try_to::<VarDictionary>()
                .unwrap_or_default(),
            Err(_) => VarDictionary::new(),
        }
    }

    /// Replaces the recipe by the one `d` describes (the shape `to_dict` returns). Returns
    /// "" or the error; a dictionary that is not a recipe leaves the recipe unchanged, a
    /// validation error is returned after the recipe was taken.
    #[func]
    pub fn from_dict(&mut self, d: VarDictionary) -> GString {
        let recipe = match convert::variant_to_json(&d.to_variant()).and_then(|json| {
            serde_json::from_value::<Recipe>(json).map_err(|e| format!("recipe: {e}"))
        }) {
            Ok(r) => r,
            Err(e) => return GString::from(e.as_str()),
        };
        self.store(&recipe);
        error_string(recipe.validate().map_err(|e| e.to_string()))
    }

    /// Applies one `--set`-style override (`seed`, `size`, `stages[0].iterations`, …) with a
    /// RON value. Returns "" or the error; an override that fails to parse or validate
    /// leaves the recipe unchanged.
    #[func]
    pub fn set_value(&mut self, path: GString, value_ron: GString) -> GString {
        let result = self.parsed().and_then(|r| {
            let next = r
                .apply_override(&format!("{path}={value_ron}"))
                .map_err(|e| e.to_string())?;
            next.validate().map_err(|e| e.to_string())?;
            Ok(next)
        });
        match result {
            Ok(next) => {
                self.store(&next);
                GString::new()
            }
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// The stage kinds a recipe can hold.
    #[func]
    pub fn get_stage_names(&self) -> PackedStringArray {
        Stage::NAMES.iter().map(|n| GString::from(*n)).collect()
    }

    /// The scalar parameters of stage kind `name`: `{name, unit, min, max, doc}` each.
    #[func]
    pub fn describe_stage(&self, name: GString) -> Array<VarDictionary> {
        let mut out = Array::new();
        for p in Stage::describe(&name.to_string()) {
            let mut d = VarDictionary::new();
            d.set("name", p.name);
            d.set("unit", p.unit);
            d.set("min", p.min);
            d.set("max", p.max);
            d.set("doc", p.doc);
            out.push(&d);
        }
        out
    }

    /// Appends a stage of kind `name` with default parameters; "" or the error.
    #[func]
    pub fn add_stage(&mut self, name: GString) -> GString {
        let Some(stage) = Stage::default_named(&name.to_string()) else {
            return GString::from(
                format!(
                    "unknown stage `{name}`; known stages: {}",
                    Stage::NAMES.join(", ")
                )
                .as_str(),
            );
        };
        self.edit_stages(|stages| {
            stages.push(stage);
            Ok(())
        })
    }

    /// Removes stage `index`; "" or the error.
    #[func]
    pub fn remove_stage(&mut self, index: i64) -> GString {
        self.edit_stages(|stages| {
            let i = stage_index(index, stages.len())?;
            stages.remove(i);
            Ok(())
        })
    }

    /// Moves stage `from` to position `to`; "" or the error.
    #[func]
    pub fn move_stage(&mut self, from: i64, to: i64) -> GString {
        self.edit_stages(|stages| {
            let f = stage_index(from, stages.len())?;
            let t = stage_index(to, stages.len())?;
            let stage = stages.remove(f);
            stages.insert(t, stage);
            Ok(())
        })
    }

    /// A new recipe holding the embedded default recipe.
    #[func]
    pub fn default_recipe() -> Gd<TerrainRecipe> {
        TerrainRecipe::new_gd()
    }
}

fn error_string(r: Result<(), String>) -> GString {
    match r {
        Ok(()) => GString::new(),
        Err(e) => GString::from(e.as_str()),
    }
}

fn stage_index(index: i64, len: usize) -> Result<usize, String> {
    if index >= 0 && (index as usize) < len {
        Ok(index as usize)
    } else {
        Err(format!(
            "stage index {index} is out of range (the recipe has {len} stages)"
        ))
    }
}

impl TerrainRecipe {
    /// The parsed recipe (not validated).
    pub fn parsed(&self) -> Result<Recipe, String> {
        Recipe::from_ron_str(&self.ron.to_string(), &self.origin()).map_err(|e| e.to_string())
    }

    /// The parsed and validated recipe.
    pub fn parsed_valid(&self) -> Result<Recipe, String> {
        let r = self.parsed()?;
        r.validate().map_err(|e| e.to_string())?;
        Ok(r)
    }

    /// The folder relative file paths in the recipe resolve against: the resource file's
    /// folder when it is saved on its own, else the project folder.
    pub fn base_dir(&self) -> PathBuf {
        let path = self.base().get_path().to_string();
        if !path.is_empty() && !path.contains("::") {
            if let Some(parent) = convert::globalize(&path).parent() {
                return parent.to_path_buf();
            }
        }
        convert::globalize("res://")
    }

    fn origin(&self) -> String {
        let path = self.base().get_path().to_string();
        if path.is_empty() {
            "TerrainRecipe".to_string()
        } else {
            path
        }
    }

    fn store(&mut self, recipe: &Recipe) {
        self.set_ron(GString::from(recipe.to_ron_string().as_str()));
    }

    fn edit_stages(&mut self, edit: impl FnOnce(&mut Vec<Stage>) -> Result<(), String>) -> GString {
        let mut recipe = match self.parsed() {
            Ok(r) => r,
            Err(e) => return GString::from(e.as_str()),
        };
        if let Err(e) = edit(&mut recipe.stages) {
            return GString::from(e.as_str());
        }
        self.store(&recipe);
        GString::new()
    }
}
