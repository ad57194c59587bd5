@tool
extends RefCounted
## What the Orogen dock's parts (form, run, maps, bake) share: the followed terrain and its
## recipe, the editor's undo history, the two message lines (status and error) and the
## undoable recipe edit; also the readers of the recipe's dictionary form.
##
## Extension classes are reached by name (ClassDB, call, get) so the dock's scripts still
## parse, and say what is wrong, when the native library is missing.

const TERRAIN_CLASS := &"TerrainWorld"
const RECIPE_CLASS := &"TerrainRecipe"
const SIMULATOR_CLASS := &"ErosionSimulator"

## An edit through edit_recipe changed the recipe (the form already shows it).
signal recipe_edited

var undo: EditorUndoRedoManager = null
## The followed TerrainWorld, or null.
var terrain: Node3D = null
## True while a generation runs (kept by the run part).
var generating := false
## True while the Paint section's live erosion runs (Generate waits for it).
var live := false
## The recipe and RON text the form was built from. A form edit records its new RON here, so
## the dock does not take it for an outside change and rebuild the control under the mouse.
var shown_recipe: Resource = null
var shown_ron := ""
var status_label: Label = null
var error_label: Label = null
## A preset given to a terrain whose full generation has not applied yet: {terrain, name,
## recipe, old_recipe}. The preset and the terrain it generates become one undo step when
## the result is applied (swap_data); a run that ends without one commits the preset alone.
var pending_preset: Dictionary = {}


func recipe() -> Resource:
	if terrain == null or not is_instance_valid(terrain):
		return null
	return terrain.get(&"recipe") as Resource


## The terrain's recipe, or a fresh one to ask about stage kinds; null without the extension.
func recipe_probe() -> Resource:
	var r := recipe()
	if r != null:
		return r
	if ClassDB.class_exists(RECIPE_CLASS):
		return ClassDB.instantiate(RECIPE_CLASS) as Resource
	return null


func has_data() -> bool:
	return terrain != null and is_instance_valid(terrain) and terrain.get(&"data") != null


## Runs `op(recipe) -> error` and records the RON before and after as one undoable action.
## On error the recipe is put back and the error shown.
func edit_recipe(action: String, op: Callable,
		merge: UndoRedo.MergeMode = UndoRedo.MERGE_DISABLE) -> String:
	var r := recipe()
	if r == null:
		return show_error("Select a TerrainWorld with a recipe first.")
	var old_ron := ron_of(r)
	var err := String(op.call(r))
	var new_ron := ron_of(r)
	if err != "":
		if new_ron != old_ron:
			r.set(&"ron", old_ron)
		return show_error(err)
	clear_error()
	if new_ron != old_ron:
		if undo != null:
			undo.create_action(action, merge, terrain)
			undo.add_do_property(r, &"ron", new_ron)
			undo.add_undo_property(r, &"ron", old_ron)
			undo.commit_action(false)
		shown_ron = new_ron
	update_validation()
	recipe_edited.emit()
	return ""


# --- Messages ------------------------------------------------------------------------------

func set_status(text: String) -> void:
	status_label.text = text
	status_label.visible = text != ""


func get_status() -> String:
	return status_label.text


func show_error(message: String) -> String:
	set_error(message)
	return message


## Clears an error message, leaving the recipe's own validation message if it has one.
func clear_error() -> void:
	update_validation()


func set_error(message: String) -> void:
	if error_label == null:
		return
	error_label.text = message
	error_label.visible = message != ""


func get_error() -> String:
	return error_label.text if error_label.visible else ""


## Shows the recipe's validation error, or nothing when it is valid.
func update_validation() -> void:
	var r := recipe()
	var msg := ""
	if r != null:
		msg = String(r.call(&"validate"))
		if msg != "":
			msg = "Recipe: %s" % msg
	set_error(msg)


func scan_filesystem() -> void:
	var fs := EditorInterface.get_resource_filesystem()
	if fs != null and not fs.is_scanning():
		fs.scan()


# --- Reading the recipe --------------------------------------------------------------------

static func ron_of(r: Resource) -> String:
	return String(r.get(&"ron")) if r != null else ""


static func stage_kinds(r: Resource) -> PackedStringArray:
	var kinds := PackedStringArray()
	if r == null:
		return kinds
	var d := dict_of(r)
	if typeof(d.get("stages")) != TYPE_ARRAY:
		return kinds
	for stage: Variant in d["stages"]:
		kinds.append(variant_name(stage))
	return kinds


## The recipe as serde's data model (TerrainRecipe.to_dict), or {} if it does not parse.
static func dict_of(r: Resource) -> Dictionary:
	var raw: Variant = r.call(&"to_dict") if r != null else null
	return raw if raw is Dictionary else {}


## The variant name of a serde enum value in Godot form (`{"Thermal": {...}}` or `"Thermal"`).
static func variant_name(v: Variant) -> String:
	if typeof(v) == TYPE_DICTIONARY and (v as Dictionary).size() == 1:
		return String((v as Dictionary).keys()[0])
	if typeof(v) == TYPE_STRING or typeof(v) == TYPE_STRING_NAME:
		return String(v)
	return ""


static func pair(v: Variant) -> Vector2:
	match typeof(v):
		TYPE_ARRAY, TYPE_PACKED_INT32_ARRAY, TYPE_PACKED_INT64_ARRAY, TYPE_PACKED_FLOAT64_ARRAY:
			var a: Array = Array(v)
			if a.size() >= 2:
				return Vector2(float(a[0]), float(a[1]))
		TYPE_VECTOR2I, TYPE_VECTOR2:
			return Vector2(v)
	return Vector2.ZERO


static func km(metres: float) -> String:
	return "%.1f km" % (metres / 1000.0) if metres >= 1000.0 else "%d m" % roundi(metres)


## Sets `terrain`'s data to `new_data` as one undo step named `action` (`old_data` comes back
## on undo); without an undo manager it is just set. Generate and Bake both apply this way.
##
## The first result after a preset was picked joins the preset's undo step: one undo takes
## both the generated terrain and the preset's recipe back.
func swap_data(terrain: Node, new_data: Resource, old_data: Resource, action: String) -> void:
	if undo == null:
		terrain.call(&"set_data", new_data)
		return
	var preset := pending_preset if pending_preset.get("terrain") == terrain else {}
	if not preset.is_empty():
		pending_preset = {}
		action = "Terrain preset %s" % preset["name"]
	undo.create_action(action, UndoRedo.MERGE_DISABLE, terrain)
	if not preset.is_empty():
		undo.add_do_property(terrain, &"recipe", preset["recipe"])
		undo.add_do_reference(preset["recipe"])
	undo.add_do_method(terrain, &"set_data", new_data)
	undo.add_undo_method(terrain, &"set_data", old_data)
	if not preset.is_empty():
		undo.add_undo_property(terrain, &"recipe", preset["old_recipe"])
	undo.add_do_reference(new_data)
	if preset.is_empty():
		undo.commit_action(true)
	else:
		# The recipe is already the preset's; only the data is applied now.
		undo.commit_action(false)
		terrain.call(&"set_data", new_data)


## Records a preset picked for `terrain` (already given its `recipe`) as one undo step:
## now if there is no undo history, else with the generated terrain that follows (swap_data),
## or alone when that run ends without a result (commit_pending_preset).
func begin_preset(terrain: Node, preset: String, new_recipe: Resource, old_recipe: Resource) -> void:
	commit_pending_preset()
	pending_preset = {"terrain": terrain, "name": preset, "recipe": new_recipe, "old_recipe": old_recipe}


## Commits a pending preset as an undo step of its own (its run ended without a result, or the
## dock moved on).
func commit_pending_preset() -> void:
	if pending_preset.is_empty():
		return
	var p := pending_preset
	pending_preset = {}
	var terrain: Node = p["terrain"]
	if undo == null or not is_instance_valid(terrain):
		return
	undo.create_action("Terrain preset %s" % p["name"], UndoRedo.MERGE_DISABLE, terrain)
	undo.add_do_property(terrain, &"recipe", p["recipe"])
	undo.add_undo_property(terrain, &"recipe", p["old_recipe"])
	undo.add_do_reference(p["recipe"])
	undo.commit_action(false)
