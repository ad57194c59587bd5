@tool
extends RefCounted
## The Orogen dock's files: "Bake to Folder…" (every map and terrain.res), "Save for
## Terrain3D…" and "Save for HTerrain…" (what those addons' importers take, with a README.txt of
## the import steps) and the recipe's RON import and export, through one editor file dialog.

const Context := preload("dock_context.gd")
const UI := preload("dock_ui.gd")
const HTerrainSend := preload("hterrain_send.gd")

## An imported file replaced the recipe (the form rebuilds).
signal recipe_imported

var _ctx: Context
var _bake_button: Button
var _terrain3d_button: Button
var _hterrain_button: Button
var _send_button: Button
## Terrain3D's region size for "Save for Terrain3D…".
var _region_size: OptionButton
var _file_dialog: EditorFileDialog
## What the open file dialog is for: "import", "export", "bake", "terrain3d" or "hterrain".
var _file_action := ""


func _init(ctx: Context) -> void:
	_ctx = ctx


## Adds the bake button to `parent` and the file dialog to `dialog_host`.
func build(parent: Control, dialog_host: Node) -> void:
	_bake_button = UI.button("Bake to Folder…", &"Save",
			"Write every map (EXR, 16-bit PNG, R16) and terrain.res into a folder.",
			func() -> void: open_file_dialog("bake"))
	parent.add_child(_bake_button)
	var row := HBoxContainer.new()
	_terrain3d_button = UI.button("Save for Terrain3D…", &"Save",
			"Write region-sized tiles Terrain3D imports: 32-bit float heights, control maps "
			+ "(autoshader), the colour map of layered terrains, and a README.txt.",
			func() -> void: open_file_dialog("terrain3d"))
	_terrain3d_button.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	row.add_child(_terrain3d_button)
	_region_size = OptionButton.new()
	_region_size.tooltip_text = "Terrain3D's region size (Regions > Region Size)."
	for size: int in [64, 128, 256, 512, 1024, 2048]:
		_region_size.add_item(str(size), size)
	_region_size.select(_region_size.get_item_index(256))
	row.add_child(_region_size)
	parent.add_child(row)
	_hterrain_button = UI.button("Save for HTerrain…", &"Save",
			"Write a 2ⁿ+1 square HTerrain imports: a 32-bit float EXR height, an RGBA8 splat map "
			+ "(weights summing to 255), the colour map of layered terrains, and a README.txt.",
			func() -> void: open_file_dialog("hterrain"))
	parent.add_child(_hterrain_button)
	_send_button = UI.button("Send to HTerrain", &"ArrowRight",
			"Write the terrain straight into the scene's HTerrain node (one is made beside the "
			+ "terrain if the scene has none): heights, splat and colour maps, its map scale the "
			+ "cell size, placed where this terrain is.", func() -> void: send_to_hterrain())
	parent.add_child(_send_button)
	_file_dialog = EditorFileDialog.new()
	_file_dialog.access = EditorFileDialog.ACCESS_RESOURCES
	_file_dialog.file_selected.connect(_on_file_chosen)
	_file_dialog.dir_selected.connect(_on_file_chosen)
	dialog_host.add_child(_file_dialog)


func update_ui() -> void:
	_bake_button.disabled = _ctx.generating or not _ctx.has_data()
	_terrain3d_button.disabled = _bake_button.disabled
	_hterrain_button.disabled = _bake_button.disabled
	var has_hterrain := HTerrainSend.available()
	_send_button.disabled = _bake_button.disabled or not has_hterrain
	if not has_hterrain:
		_send_button.tooltip_text = HTerrainSend.MISSING


## Whether Send to HTerrain is on, and its tooltip (for the self-test).
func send_button_state() -> Array:
	return [not _send_button.disabled, _send_button.tooltip_text]


## Writes the terrain into the edited scene's HTerrain (hterrain_send.gd). Returns "" or the
## error, also shown in the dock.
func send_to_hterrain() -> String:
	var terrain := _ctx.terrain
	if terrain == null:
		return _ctx.show_error("Select a TerrainWorld first.")
	var err := HTerrainSend.send(terrain, _ctx.undo)
	if err != "":
		return _ctx.show_error(err)
	_ctx.scan_filesystem()
	_ctx.clear_error()
	_ctx.set_status("Sent the terrain to HTerrain (Undo removes a new HTerrain or moves it back).")
	return ""


## The region size chosen for "Save for Terrain3D…".
func region_size() -> int:
	return _region_size.get_selected_id()


## Writes the terrain for Terrain3D (TerrainWorld.save_for_terrain3d) into `dir`, tiles of
## `region_size` (0: the one chosen in the dock). Returns "" or the error, also shown in the dock.
func save_for_terrain3d_to(dir: String, size := 0) -> String:
	var chosen := size if size != 0 else region_size()
	return _save_for("terrain3d", dir, func(t: Node, abs_dir: String) -> String:
		return String(t.call(&"save_for_terrain3d", abs_dir, chosen)))


## Writes the terrain for HTerrain (TerrainWorld.save_for_hterrain) into `dir`. Returns "" or
## the error, also shown in the dock.
func save_for_hterrain_to(dir: String) -> String:
	return _save_for("hterrain", dir, func(t: Node, abs_dir: String) -> String:
		return String(t.call(&"save_for_hterrain", abs_dir)))


func _save_for(addon: String, dir: String, save: Callable) -> String:
	var terrain := _ctx.terrain
	if terrain == null:
		return _ctx.show_error("Select a TerrainWorld first.")
	if terrain.get(&"data") == null:
		return _ctx.show_error("Nothing to save: generate the terrain first.")
	var err := String(save.call(terrain, ProjectSettings.globalize_path(dir)))
	if err != "":
		return _ctx.show_error("Save for %s failed: %s" % [addon, err])
	_ctx.scan_filesystem()
	_ctx.clear_error()
	_ctx.set_status("Saved for %s to %s (README.txt there has the import steps)"
			% ["Terrain3D" if addon == "terrain3d" else "HTerrain", dir])
	return ""


## Bakes the terrain's maps (EXR, 16-bit PNG, R16: TerrainWorld.save_maps) and its TerrainData
## (`terrain.res`, compressed) into `dir`, and points the terrain at that `terrain.res` (one
## undoable action), so the scene refers to the baked file. Returns "" or the error, which is
## also shown in the dock.
func bake_to(dir: String) -> String:
	var terrain := _ctx.terrain
	if terrain == null:
		return _ctx.show_error("Select a TerrainWorld first.")
	var data := terrain.get(&"data") as Resource
	if data == null:
		return _ctx.show_error("Nothing to bake: generate the terrain first.")
	var abs_dir := ProjectSettings.globalize_path(dir)
	var mk := DirAccess.make_dir_recursive_absolute(abs_dir)
	if mk != OK:
		return _ctx.show_error("Cannot create folder %s: %s" % [dir, error_string(mk)])
	var err := String(terrain.call(&"save_maps", abs_dir))
	if err != "":
		return _ctx.show_error("Bake failed: %s" % err)
	var res_path := dir.path_join("terrain.res")
	var saved := ResourceSaver.save(data, res_path, ResourceSaver.FLAG_COMPRESS)
	if saved != OK:
		return _ctx.show_error("Cannot save %s: %s" % [res_path, error_string(saved)])
	_ctx.scan_filesystem()
	_ctx.clear_error()
	if not res_path.begins_with("res://"):
		_ctx.set_status("Baked the maps and terrain.res to %s (outside the project, so the terrain keeps its own data)" % dir)
		return ""
	# The same images, as the resource of the file just written: the scene then refers to it.
	var baked := data.duplicate()
	baked.take_over_path(res_path)
	_ctx.swap_data(terrain, baked, data, "Use baked terrain.res")
	_ctx.set_status("Baked the maps and terrain.res to %s; the terrain now uses that terrain.res" % dir)
	return ""


## Replaces the recipe with the RON file at `path` (one undoable action).
func import_ron(path: String) -> String:
	var err := _ctx.edit_recipe("Import terrain recipe", func(r: Resource) -> String:
		return String(r.call(&"load_ron", path)))
	if err == "":
		_ctx.set_status("Imported %s" % path)
		recipe_imported.emit()
	return err


## Writes the recipe as RON to `path`.
func export_ron(path: String) -> String:
	var recipe := _ctx.recipe()
	if recipe == null:
		return _ctx.show_error("No recipe to export.")
	var err := String(recipe.call(&"save_ron", path))
	if err != "":
		return _ctx.show_error("Export failed: %s" % err)
	_ctx.scan_filesystem()
	_ctx.clear_error()
	_ctx.set_status("Exported the recipe to %s" % path)
	return ""


## Opens the file dialog for `action`: "import" or "export" (a .ron file), "bake",
## "terrain3d" or "hterrain" (a folder).
func open_file_dialog(action: String) -> void:
	_file_action = action
	_file_dialog.clear_filters()
	# A recipe may come from (or go to) anywhere on disk; a bake's terrain.res must be in the
	# project for the scene to refer to it.
	_file_dialog.access = (EditorFileDialog.ACCESS_FILESYSTEM if action in ["import", "export"]
			else EditorFileDialog.ACCESS_RESOURCES)
	match action:
		"import":
			_file_dialog.file_mode = EditorFileDialog.FILE_MODE_OPEN_FILE
			_file_dialog.title = "Import Terrain Recipe"
			_file_dialog.add_filter("*.ron", "RON terrain recipe")
		"export":
			_file_dialog.file_mode = EditorFileDialog.FILE_MODE_SAVE_FILE
			_file_dialog.title = "Export Terrain Recipe"
			_file_dialog.add_filter("*.ron", "RON terrain recipe")
			var terrain := _ctx.terrain
			_file_dialog.current_file = "%s.ron" % (terrain.name.to_snake_case() if terrain != null else "terrain")
		"bake":
			_file_dialog.file_mode = EditorFileDialog.FILE_MODE_OPEN_DIR
			_file_dialog.title = "Bake Terrain to Folder"
		"terrain3d":
			_file_dialog.file_mode = EditorFileDialog.FILE_MODE_OPEN_DIR
			_file_dialog.title = "Save for Terrain3D (region size %d) to Folder" % region_size()
		"hterrain":
			_file_dialog.file_mode = EditorFileDialog.FILE_MODE_OPEN_DIR
			_file_dialog.title = "Save for HTerrain to Folder"
	_file_dialog.popup_file_dialog()


func _on_file_chosen(path: String) -> void:
	match _file_action:
		"import":
			import_ron(path)
		"export":
			export_ron(path)
		"bake":
			bake_to(path)
		"terrain3d":
			save_for_terrain3d_to(path)
		"hterrain":
			save_for_hterrain_to(path)
