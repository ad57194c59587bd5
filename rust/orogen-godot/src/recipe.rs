//! `TerrainRecipe`: a recipe as a Godot resource; its RON text is exactly what `orogen bake`
//! reads, so a recipe saved from the editor bakes the same terrain from the command line.

use std::path::PathBuf;

use godot::classes::{IResource, Resource};
use godot::prelude::*;
use orogen_core::field::CellSize;
use orogen_core::generators::noise::{NOISE_BASES, NOISE_FIELDS, NOISE_KINDS};
use orogen_core::recipe::{Domain, Material, ScalarSource, Stage, Strata, Stratum, BUILT_IN};
use orogen_core::schema::{FieldInfo, FieldKind, ParamInfo};
use orogen_core::stages::strata::{
    built_in_materials, material_names, MATERIAL_FIELDS, STRATA_FIELDS, STRATUM_FIELDS,
};
use orogen_core::Recipe;

use crate::convert;

/// A terrain recipe (RON text) with editing helpers for the editor dock.
///
/// The recipe is its `ron` text, the format `orogen bake` reads: size, cell size, seed, the
/// initial terrain, uplift, the stages and their fields, materials and strata. Save it as
/// `.tres`, or read and write `.ron` files with `load_ron` and `save_ron`. Every edit
/// (`set_value`, the stage, material and strata methods) returns "" or the core's error naming
/// the field at fault, leaves a refused recipe as it was, and emits `changed` when the text
/// changes. `describe_stage` and the `describe_*_fields` methods give each field's unit,
/// range and meaning.
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

    /// "" if the recipe parses, validates and every file it names exists (relative paths
    /// resolve against `base_dir`), else the error message, naming the field at fault.
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

    /// A recipe field's name in words, as the dock labels it: `talus_deg` → "Angle of
    /// repose", `k` → "Erodibility k", `uplift_scale` → "Uplift scale".
    #[func]
    pub fn field_label(name: GString) -> GString {
        orogen_core::schema::label_of(&name.to_string())
            .as_str()
            .into()
    }

    /// The stage kinds a recipe can hold.
    #[func]
    pub fn get_stage_names(&self) -> PackedStringArray {
        Stage::NAMES.iter().map(|n| GString::from(*n)).collect()
    }

    /// The scalar parameters of stage kind `name`: `{name, unit, min, max, doc, optional}`
    /// each; `optional` is true for a field that may be left out (`None`, its default), such
    /// as Hydraulic's `chezy`.
    #[func]
    pub fn describe_stage(&self, name: GString) -> Array<VarDictionary> {
        let name = name.to_string();
        // The stage's defaults as serde's data model: an optional field's default is null.
        let defaults = Stage::default_named(&name)
            .and_then(|s| serde_json::to_value(s).ok())
            .and_then(|v| v.get(&name).cloned());
        Stage::describe(&name)
            .iter()
            .map(|p| {
                let mut d = param_dict(p);
                let optional = defaults
                    .as_ref()
                    .and_then(|v| v.get(p.name))
                    .is_some_and(|v| v.is_null());
                d.set("optional", optional);
                d
            })
            .collect()
    }

    /// The fields of a material (`materials[i]`), in recipe order: `{name, unit, min, max,
    /// doc, kind}` each; `kind` is `Number`, `Text` or `Colour` (see `FieldKind`).
    #[func]
    pub fn describe_material_fields(&self) -> Array<VarDictionary> {
        fields_array(MATERIAL_FIELDS)
    }

    /// The fields of the strata block (`strata`), like `describe_material_fields`; `kind`
    /// is also `Integer`, `OptionalNumber`, `MaterialName` or `Ron`.
    #[func]
    pub fn describe_strata_fields(&self) -> Array<VarDictionary> {
        fields_array(STRATA_FIELDS)
    }

    /// The fields of one strata layer (`strata.layers[i]`): `material` and `thickness`
    /// (`kind` `ScalarSource`: `Constant(m)`, an `Image` or `Noise`).
    #[func]
    pub fn describe_stratum_fields(&self) -> Array<VarDictionary> {
        fields_array(STRATUM_FIELDS)
    }

    /// The material names a layer, `bottom` or `sediment` can use: the recipe's materials,
    /// then the built-in ones it does not redefine (the built-in ones alone when the text
    /// does not parse).
    #[func]
    pub fn get_material_names(&self) -> PackedStringArray {
        let own = self.parsed().map(|r| r.materials).unwrap_or_default();
        material_names(&own)
            .iter()
            .map(|n| GString::from(n.as_str()))
            .collect()
    }

    /// The built-in materials' names (`bedrock`, `granite`, …).
    #[func]
    pub fn get_built_in_material_names(&self) -> PackedStringArray {
        built_in_materials()
            .iter()
            .map(|m| GString::from(m.name.as_str()))
            .collect()
    }

    /// Appends a material called `name`: a copy of the built-in one of that name, or
    /// default properties; an empty name picks `material_1`, `material_2`, … Returns "" or
    /// the error naming the field (a name already defined); the recipe is then unchanged.
    #[func]
    pub fn add_material(&mut self, name: GString) -> GString {
        let name = name.to_string();
        self.edit_layers(|r| {
            let name = if name.is_empty() {
                (1..)
                    .map(|i| format!("material_{i}"))
                    .find(|n| r.materials.iter().all(|m| &m.name != n))
                    .expect("some name is free")
            } else {
                name
            };
            let material = built_in_materials()
                .into_iter()
                .find(|m| m.name == name)
                .unwrap_or_else(|| Material {
                    name,
                    ..Default::default()
                });
            r.materials.push(material);
            Ok(())
        })
    }

    /// Removes material `index`; "" or the error (e.g. a layer still uses it, named by its
    /// field `strata.layers[i].material`), leaving the recipe unchanged. A material that
    /// redefines a built-in one can go: its users then get the built-in one.
    #[func]
    pub fn remove_material(&mut self, index: i64) -> GString {
        self.edit_layers(|r| {
            let i = list_index("material", index, r.materials.len())?;
            let name = r.materials.remove(i).name;
            if built_in_materials().iter().any(|m| m.name == name) {
                return Ok(());
            }
            if let Some(strata) = &r.strata {
                let users = strata
                    .layers
                    .iter()
                    .enumerate()
                    .map(|(k, l)| (format!("strata.layers[{k}].material"), &l.material))
                    .chain([
                        ("strata.bottom".to_string(), &strata.bottom),
                        ("strata.sediment".to_string(), &strata.sediment),
                    ]);
                for (field, used) in users {
                    if *used == name {
                        return Err(format!(
                            "invalid value for `{field}`: uses material `{name}`, which cannot be removed while it does; change or remove that first"
                        ));
                    }
                }
            }
            Ok(())
        })
    }

    /// Moves material `from` to position `to`; "" or the error.
    #[func]
    pub fn move_material(&mut self, from: i64, to: i64) -> GString {
        self.edit_layers(|r| {
            let f = list_index("material", from, r.materials.len())?;
            let t = list_index("material", to, r.materials.len())?;
            let m = r.materials.remove(f);
            r.materials.insert(t, m);
            Ok(())
        })
    }

    /// Renames material `index` to `name`, and every use of the old name in the strata
    /// (layers, `bottom`, `sediment`) with it; "" or the error naming the field.
    #[func]
    pub fn rename_material(&mut self, index: i64, name: GString) -> GString {
        let name = name.to_string();
        self.edit_layers(|r| {
            let i = list_index("material", index, r.materials.len())?;
            let old = std::mem::replace(&mut r.materials[i].name, name.clone());
            if let Some(strata) = &mut r.strata {
                for n in strata
                    .layers
                    .iter_mut()
                    .map(|l| &mut l.material)
                    .chain([&mut strata.bottom, &mut strata.sediment])
                {
                    if *n == old {
                        *n = name.clone();
                    }
                }
            }
            Ok(())
        })
    }

    /// Appends a layer of `material`, `thickness_m` metres thick, to the strata (creating
    /// the strata block, with default `bottom` and `sediment`, if the recipe has none).
    /// Returns "" or the error naming the field (`strata.layers[2].material` for an unknown
    /// material, `….thickness` for a negative one), leaving the recipe unchanged.
    #[func]
    pub fn add_stratum(&mut self, material: GString, thickness_m: f64) -> GString {
        let layer = Stratum {
            material: material.to_string(),
            thickness: ScalarSource::Constant(thickness_m as f32),
        };
        self.edit_layers(|r| {
            r.strata
                .get_or_insert_with(Strata::default)
                .layers
                .push(layer);
            Ok(())
        })
    }

    /// Removes strata layer `index`; "" or the error.
    #[func]
    pub fn remove_stratum(&mut self, index: i64) -> GString {
        self.edit_layers(|r| {
            let layers = &mut r.strata.as_mut().ok_or("the recipe has no strata")?.layers;
            let i = list_index("strata layer", index, layers.len())?;
            layers.remove(i);
            Ok(())
        })
    }

    /// Moves strata layer `from` to position `to`; "" or the error.
    #[func]
    pub fn move_stratum(&mut self, from: i64, to: i64) -> GString {
        self.edit_layers(|r| {
            let layers = &mut r.strata.as_mut().ok_or("the recipe has no strata")?.layers;
            let f = list_index("strata layer", from, layers.len())?;
            let t = list_index("strata layer", to, layers.len())?;
            let l = layers.remove(f);
            layers.insert(t, l);
            Ok(())
        })
    }

    /// Takes the strata block away (the terrain becomes one material again); "" or the
    /// error.
    #[func]
    pub fn remove_strata(&mut self) -> GString {
        self.edit_layers(|r| {
            r.strata = None;
            Ok(())
        })
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

    /// The built-in recipes' names, in gallery order (`default`, `large`, …; `orogen
    /// recipe` lists the same).
    #[func]
    pub fn get_builtin_names() -> PackedStringArray {
        BUILT_IN.iter().map(|(n, _, _)| GString::from(*n)).collect()
    }

    /// One line saying what built-in recipe `name` makes; "" for a name that is not one.
    #[func]
    pub fn get_builtin_description(name: GString) -> GString {
        let name = name.to_string();
        BUILT_IN
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or_else(GString::new, |(_, what, _)| GString::from(*what))
    }

    /// A new recipe holding built-in recipe `name` (its RON text as shipped, comments
    /// included), or null for a name that is not one.
    #[func]
    pub fn from_builtin(name: GString) -> Option<Gd<TerrainRecipe>> {
        let text = builtin_text(&name.to_string()).ok()?;
        let mut recipe = TerrainRecipe::new_gd();
        recipe.bind_mut().set_ron(GString::from(text));
        Some(recipe)
    }

    /// Replaces the RON text by built-in recipe `name`'s; "" or the error naming the
    /// unknown name and the known ones (the recipe is then unchanged).
    #[func]
    pub fn load_builtin(&mut self, name: GString) -> GString {
        match builtin_text(&name.to_string()) {
            Ok(text) => {
                self.set_ron(GString::from(text));
                GString::new()
            }
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// The name of the built-in recipe this one equals (parsed, so layout and comments do
    /// not matter), or "" when it is none of them.
    #[func]
    pub fn get_builtin_name(&self) -> GString {
        let Ok(own) = self.parsed() else {
            return GString::new();
        };
        BUILT_IN
            .iter()
            .find(|(n, _, _)| Recipe::built_in(n).as_ref() == Some(&own))
            .map_or_else(GString::new, |(n, _, _)| GString::from(*n))
    }

    /// The same recipe on a coarser grid of the same extent, for a quick first look: the
    /// cells `factor` times wider, so that the longer side has at most about `max_side`
    /// cells (a Graph domain's node spacing grows with them). Null when the recipe is not
    /// valid or its coarse copy is not (the caller then goes straight to the full run).
    #[func]
    pub fn coarse_copy(&self, max_side: i64) -> Option<Gd<TerrainRecipe>> {
        let recipe = self.parsed_valid().ok()?;
        let coarse = coarse_recipe(&recipe, max_side.max(2) as u32)?;
        let mut copy = TerrainRecipe::new_gd();
        copy.bind_mut().store(&coarse);
        Some(copy)
    }

    /// The number fields of a noise (`terrain.Noise`, `uplift.Noise.noise`), like
    /// `describe_material_fields`: `{name, label, unit, display_unit, display_scale, min,
    /// max, doc, kind}` each.
    #[func]
    pub fn describe_noise_fields() -> Array<VarDictionary> {
        fields_array(NOISE_FIELDS)
    }

    /// The octave combinations a noise's `kind` can be (`Fbm`, `Ridged`, …).
    #[func]
    pub fn get_noise_kinds() -> PackedStringArray {
        NOISE_KINDS.iter().map(|n| GString::from(*n)).collect()
    }

    /// The plain noise functions a noise's `basis` can be (`Perlin`, …).
    #[func]
    pub fn get_noise_bases() -> PackedStringArray {
        NOISE_BASES.iter().map(|n| GString::from(*n)).collect()
    }

    /// The recipe's top-level scalar fields the form edits, by name: `uplift` (m/yr, shown
    /// in mm/yr) and `height` (a flat terrain's height, m), each like a described field.
    #[func]
    pub fn describe_source_fields() -> Array<VarDictionary> {
        fields_array(SOURCE_FIELDS)
    }
}

/// The fields of the recipe's sources the dock's form edits (see `describe_source_fields`).
const SOURCE_FIELDS: &[FieldInfo] = &[
    FieldInfo::new(
        "uplift",
        "m/yr",
        0.0,
        0.01,
        FieldKind::Number,
        "Tectonic uplift rate, metres per year (≥ 0): how fast the rock rises under the rivers; 1 mm/yr is a young mountain range.",
    ),
    FieldInfo::new(
        "uplift_fade_m",
        "m",
        0.0,
        20000.0,
        FieldKind::Number,
        "Metres inside the map's borders over which the uplift fades to 0, so the range rises from lowlands and coasts rather than from walls at the borders; 0: no fade.",
    ),
    FieldInfo::new(
        "uplift_fade_ragged",
        "",
        0.0,
        3.0,
        FieldKind::Number,
        "How far the fade's start moves in from the borders and back along them, a share of uplift_fade_m: the sea reaches in as bays between headlands instead of the coast following the square; 0: an even fade.",
    ),
    FieldInfo::new(
        "height",
        "m",
        -1000.0,
        5000.0,
        FieldKind::Number,
        "Height of every cell of a flat starting terrain, metres.",
    ),
];

/// The RON text of built-in recipe `name`, or the error naming it and the known ones.
fn builtin_text(name: &str) -> Result<&'static str, String> {
    BUILT_IN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, text)| *text)
        .ok_or_else(|| {
            format!(
                "unknown built-in recipe `{name}`; built-in recipes: {}",
                BUILT_IN.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")
            )
        })
}

/// `recipe` with cells `factor` times wider so its longer side has at most about
/// `max_side` cells over the same extent; None when that is not a valid recipe.
fn coarse_recipe(recipe: &Recipe, max_side: u32) -> Option<Recipe> {
    let (w, h) = recipe.size;
    let longest = w.max(h).saturating_sub(1).max(1);
    let factor = longest.div_ceil(max_side.saturating_sub(1).max(1)).max(1);
    let mut coarse = recipe.clone();
    coarse.size = ((w - 1) / factor + 1, (h - 1) / factor + 1);
    let f = factor as f32;
    coarse.cell_size = match recipe.cell_size {
        CellSize::Square(c) => CellSize::Square(c * f),
        CellSize::Rect(dx, dy) => CellSize::Rect(dx * f, dy * f),
    };
    if let Domain::Graph(g) = &mut coarse.domain {
        g.spacing *= factor as f64;
    }
    coarse.validate().ok()?;
    Some(coarse)
}

fn error_string(r: Result<(), String>) -> GString {
    match r {
        Ok(()) => GString::new(),
        Err(e) => GString::from(e.as_str()),
    }
}

/// A parameter's description as the dictionary the dock reads.
fn param_dict(p: &ParamInfo) -> VarDictionary {
    let mut d = VarDictionary::new();
    d.set("name", p.name);
    d.set("unit", p.unit);
    d.set("min", p.min);
    d.set("max", p.max);
    d.set("doc", p.doc);
    d.set("label", p.label().as_str());
    let (unit, scale) = p.display_unit();
    d.set("display_unit", unit);
    d.set("display_scale", scale);
    d
}

fn fields_array(fields: &[FieldInfo]) -> Array<VarDictionary> {
    fields
        .iter()
        .map(|f| {
            let mut d = param_dict(&f.param);
            d.set("kind", format!("{:?}", f.kind).as_str());
            d
        })
        .collect()
}

fn list_index(what: &str, index: i64, len: usize) -> Result<usize, String> {
    if index >= 0 && (index as usize) < len {
        Ok(index as usize)
    } else {
        Err(format!(
            "{what} index {index} is out of range (the recipe has {len})"
        ))
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
        r.check_files(&self.base_dir()).map_err(|e| e.to_string())?;
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

    /// Applies `edit` to the parsed recipe and keeps the result only if it validates; the
    /// error (an edit's own, or validation's naming the field) otherwise.
    fn edit_layers(&mut self, edit: impl FnOnce(&mut Recipe) -> Result<(), String>) -> GString {
        let mut recipe = match self.parsed() {
            Ok(r) => r,
            Err(e) => return GString::from(e.as_str()),
        };
        if let Err(e) =
            edit(&mut recipe).and_then(|()| recipe.validate().map_err(|e| e.to_string()))
        {
            return GString::from(e.as_str());
        }
        self.store(&recipe);
        GString::new()
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
