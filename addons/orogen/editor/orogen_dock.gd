@tool
extends ScrollContainer
## The Orogen dock. Follows the selected TerrainWorld and shows its recipe (size, cell size,
## seed, the ordered stages and their parameters), runs an ErosionSimulator on it with live
## progress, applies the result as one undoable action, previews its maps and bakes them.
##
## Nothing here blocks: generation runs on the simulator's own threads and reports through
## signals; the dock only reacts. Extension classes are reached by name (ClassDB, call, get)
## so this script still parses, and says what is wrong, when the native library is missing.

const StagePanel := preload("stage_panel.gd")
const MapPreview := preload("map_preview.gd")

const TERRAIN_CLASS := &"TerrainWorld"
const RECIPE_CLASS := &"TerrainRecipe"
const SIMULATOR_CLASS := &"ErosionSimulator"
## Largest grid side the recipe accepts (see Recipe::size).
const MAX_SIDE := 16385
## Seconds between checks for outside changes (inspector edits, undo, a reloaded recipe).
const POLL_SECONDS := 0.25
## Seconds between thumbnail refreshes while a generation updates the terrain live.
const LIVE_THUMB_SECONDS := 1.0
## Seconds a simulator may stay stopped without reporting finished/failed before the dock
## gives up on it (it should never happen; it keeps the dock from waiting forever).
const SILENT_STOP_SECONDS := 2.0

## Emitted after a generation ends: `ok` is false when it failed or was cancelled.
signal generation_ended(ok: bool, message: String)

var _undo: EditorUndoRedoManager = null
var _built := false

# The followed terrain and the recipe state the view was built from.
var _terrain: Node3D = null
var _shown_recipe: Resource = null
var _shown_ron := ""
var _poll_timer := 0.0

# Widgets.
var _root: VBoxContainer
var _title: Label
var _hint: Label
var _body: VBoxContainer
var _no_recipe_box: HBoxContainer
var _recipe_box: VBoxContainer
var _width: SpinBox
var _height: SpinBox
var _cell: EditorSpinSlider
var _seed: SpinBox
var _extent: Label
var _stages_box: VBoxContainer
var _add_kind: OptionButton
var _validation: Label
var _generate_button: Button
var _cancel_button: Button
var _progress: ProgressBar
var _progress_label: Label
var _status: Label
var _maps_flow: HFlowContainer
var _map_tiles: Dictionary = {}
var _bake_button: Button
var _file_dialog: EditorFileDialog
var _file_action := ""
var _ron_dialog: ConfirmationDialog
var _ron_edit: CodeEdit

# Generation state.
var _sim: Node = null
var _run_terrain: Node3D = null
var _run_old_data: Resource = null
var _run_stage_names: PackedStringArray = PackedStringArray()
var _run_stage_index := 0
var _run_last_stage := ""
var _run_last_fraction := 0.0
var _run_iteration := 0
var _run_started_msec := 0
var _run_silent_for := 0.0
var _cancel_requested := false
var _thumbs_dirty := false
var _thumb_timer := 0.0


## Called once by the plugin before the dock enters the tree.
func setup(undo_redo: EditorUndoRedoManager) -> void:
	_undo = undo_redo


func _ready() -> void:
	if _built:
		return
	_built = true
	name = "Orogen"
	custom_minimum_size = Vector2(260, 200)
	horizontal_scroll_mode = ScrollContainer.SCROLL_MODE_DISABLED
	_build_ui()
	_update_all()
	set_process(true)


## Cancels a running generation and lets go of the terrain. The plugin calls this when it
## is disabled; the dock's own exit from the tree is not enough of a sign, since moving the
## dock to another slot also takes it out of the tree and back.
func shutdown() -> void:
	if is_generating():
		_cancel_requested = true
		if is_instance_valid(_sim):
			_sim.call(&"cancel")
		_restore_run_terrain()
		_end_run()
	_connect_terrain(null)


# --- Public API (used by the plugin and the editor self-test) ------------------------------

## Shows `node` if it is a TerrainWorld, or the "select a TerrainWorld" hint for null.
func set_terrain(node: Node) -> void:
	var terrain: Node3D = node as Node3D if is_terrain(node) else null
	if terrain == _terrain:
		return
	_connect_terrain(terrain)
	_shown_recipe = null
	_shown_ron = ""
	_clear_tiles()
	if _built and not is_generating():
		# Messages and progress belong to the terrain they were about.
		_set_status("")
		_progress.value = 0.0
		_progress_label.text = ""
	_update_all()


## The first TerrainWorld among `nodes` (the editor's selection), or null.
static func pick_terrain(nodes: Array[Node]) -> Node:
	for n: Node in nodes:
		if is_terrain(n):
			return n
	return null


static func is_terrain(node: Object) -> bool:
	return node != null and is_instance_valid(node) and node is Node3D \
			and ClassDB.is_parent_class(node.get_class(), TERRAIN_CLASS)


func get_terrain() -> Node3D:
	return _terrain


func is_generating() -> bool:
	return _run_terrain != null


## Starts generating the followed terrain from its recipe; false (and an error in the dock)
## if it cannot start. The result is applied as one undoable action when it finishes.
func generate() -> bool:
	if is_generating():
		return false
	var terrain := _terrain
	var recipe := _recipe()
	if terrain == null or recipe == null:
		_show_error("Select a TerrainWorld with a recipe first.")
		return false
	var invalid := String(recipe.call(&"validate"))
	if invalid != "":
		_show_error("The recipe is not valid: %s" % invalid)
		return false
	var sim := _ensure_simulator()
	if sim == null:
		return false
	sim.set(&"terrain", sim.get_path_to(terrain))
	sim.set(&"recipe", recipe)
	sim.set(&"live_update", true)
	sim.set(&"apply_on_finish", false)
	_run_terrain = terrain
	_run_old_data = terrain.get(&"data") as Resource
	_run_stage_names = _stage_kinds(recipe)
	_run_stage_index = 0
	_run_last_stage = ""
	_run_last_fraction = 0.0
	_run_iteration = 0
	_run_silent_for = 0.0
	_run_started_msec = Time.get_ticks_msec()
	_cancel_requested = false
	_clear_error()
	_set_status("Generating…")
	_update_run_ui()
	_update_progress()
	if not bool(sim.call(&"start")):
		# The simulator reports why through `failed`; make sure the dock is idle either way.
		if is_generating():
			_on_sim_failed("the simulator could not start")
		return false
	return true


## Asks the running generation to stop; the terrain returns to what it was before.
func cancel_generation() -> void:
	if not is_generating() or _cancel_requested:
		return
	_cancel_requested = true
	_set_status("Cancelling…")
	if is_instance_valid(_sim):
		_sim.call(&"cancel")
	_update_run_ui()


## Bakes the terrain's maps (EXR, 16-bit PNG, R16: TerrainWorld.save_maps) and its TerrainData
## (`terrain.res`) into `dir`. Returns "" or the error, which is also shown in the dock.
func bake_to(dir: String) -> String:
	if _terrain == null:
		return _show_error("Select a TerrainWorld first.")
	var data := _terrain.get(&"data") as Resource
	if data == null:
		return _show_error("Nothing to bake: generate the terrain first.")
	var abs_dir := ProjectSettings.globalize_path(dir)
	var mk := DirAccess.make_dir_recursive_absolute(abs_dir)
	if mk != OK:
		return _show_error("Cannot create folder %s: %s" % [dir, error_string(mk)])
	var err := String(_terrain.call(&"save_maps", abs_dir))
	if err != "":
		return _show_error("Bake failed: %s" % err)
	var res_path := dir.path_join("terrain.res")
	var saved := ResourceSaver.save(data, res_path)
	if saved != OK:
		return _show_error("Cannot save %s: %s" % [res_path, error_string(saved)])
	_scan_filesystem()
	_clear_error()
	_set_status("Baked the maps and terrain.res to %s" % dir)
	return ""


## Replaces the recipe with the RON file at `path` (one undoable action).
func import_ron(path: String) -> String:
	var err := _edit_recipe("Import terrain recipe", func(r: Resource) -> String:
		return String(r.call(&"load_ron", path)))
	if err == "":
		_set_status("Imported %s" % path)
		_rebuild_recipe_view()
	return err


## Writes the recipe as RON to `path`.
func export_ron(path: String) -> String:
	var recipe := _recipe()
	if recipe == null:
		return _show_error("No recipe to export.")
	var err := String(recipe.call(&"save_ron", path))
	if err != "":
		return _show_error("Export failed: %s" % err)
	_scan_filesystem()
	_clear_error()
	_set_status("Exported the recipe to %s" % path)
	return ""


## Applies a `--set`-style override (`seed`, `size`, `stages[0].iterations`) with a RON value,
## as one undoable action; the form is refreshed from the recipe shortly after.
func set_recipe_value(path: String, value_ron: String) -> String:
	var shown := _shown_ron
	var err := _set_from_form(path, value_ron)
	_shown_ron = shown
	return err


## Like set_recipe_value, for edits made in the form itself: the form already shows the value,
## so it is not rebuilt (which would take the control from under the user's mouse), and
## successive edits of one control (a slider drag) merge into a single undoable action.
func _set_from_form(path: String, value_ron: String) -> String:
	return _edit_recipe("Set terrain recipe %s" % path, func(r: Resource) -> String:
		return String(r.call(&"set_value", path, value_ron)), UndoRedo.MERGE_ENDS)


func add_stage(kind: String) -> String:
	var err := _edit_recipe("Add %s stage" % kind, func(r: Resource) -> String:
		return String(r.call(&"add_stage", kind)))
	if err == "":
		_rebuild_recipe_view()
	return err


func remove_stage(index: int) -> String:
	var err := _edit_recipe("Remove terrain stage", func(r: Resource) -> String:
		return String(r.call(&"remove_stage", index)))
	if err == "":
		_rebuild_recipe_view()
	return err


func move_stage(index: int, delta: int) -> String:
	var count := _stage_kinds(_recipe()).size()
	var to := index + delta
	if to < 0 or to >= count:
		return ""
	var err := _edit_recipe("Move terrain stage", func(r: Resource) -> String:
		return String(r.call(&"move_stage", index, to)))
	if err == "":
		_rebuild_recipe_view()
	return err


func get_stage_panels() -> Array[Node]:
	return _stages_box.get_children() if _stages_box != null else [] as Array[Node]


func get_map_tile_names() -> PackedStringArray:
	var names := PackedStringArray()
	for key: Variant in _map_tiles.keys():
		names.append(String(key))
	return names


## The texture shown for map `map_name`, or null.
func get_map_texture(map_name: String) -> Texture2D:
	var tile := _map_tiles.get(map_name) as Control
	if tile == null:
		return null
	return (tile.get_node(^"Texture") as TextureRect).texture


func get_status_text() -> String:
	return _status.text


func get_error_text() -> String:
	return _validation.text if _validation.visible else ""


## Re-reads the recipe and maps now (normally done by polling and signals).
func refresh() -> void:
	_rebuild_recipe_view()
	_refresh_thumbnails()


# --- UI construction -----------------------------------------------------------------------

func _build_ui() -> void:
	var ed_theme := EditorInterface.get_editor_theme()
	_root = VBoxContainer.new()
	_root.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_root.add_theme_constant_override(&"separation", 6)
	add_child(_root)

	_title = Label.new()
	_title.add_theme_font_override(&"font", ed_theme.get_font(&"bold", &"EditorFonts"))
	_title.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	_root.add_child(_title)

	_hint = Label.new()
	_hint.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	_hint.modulate = Color(1, 1, 1, 0.7)
	_root.add_child(_hint)

	_body = VBoxContainer.new()
	_body.add_theme_constant_override(&"separation", 6)
	_root.add_child(_body)

	var run_row := HBoxContainer.new()
	_generate_button = _button("Generate", &"Play", "Run the recipe on this terrain (undoable).",
			func() -> void: generate())
	_generate_button.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	run_row.add_child(_generate_button)
	_cancel_button = _button("Cancel", &"Stop", "Stop the generation; the terrain stays as it was.",
			cancel_generation)
	run_row.add_child(_cancel_button)
	_body.add_child(run_row)
	_progress = ProgressBar.new()
	_progress.min_value = 0.0
	_progress.max_value = 1.0
	_progress.step = 0.0
	_progress.custom_minimum_size.y = 18
	_body.add_child(_progress)
	_progress_label = Label.new()
	_progress_label.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	_body.add_child(_progress_label)
	_status = Label.new()
	_status.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	_status.modulate = Color(1, 1, 1, 0.8)
	_status.visible = false
	_body.add_child(_status)
	_validation = Label.new()
	_validation.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	_validation.add_theme_color_override(&"font_color", ed_theme.get_color(&"error_color", &"Editor"))
	_validation.visible = false
	_body.add_child(_validation)

	# A terrain without a recipe.
	_no_recipe_box = HBoxContainer.new()
	var no_recipe := Label.new()
	no_recipe.text = "This terrain has no recipe."
	no_recipe.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_no_recipe_box.add_child(no_recipe)
	_no_recipe_box.add_child(_button("New Recipe", &"New", "Give the terrain the default recipe.",
			_create_recipe))
	_body.add_child(_no_recipe_box)

	_recipe_box = VBoxContainer.new()
	_recipe_box.add_theme_constant_override(&"separation", 6)
	_body.add_child(_recipe_box)
	_recipe_box.add_child(_section("Recipe"))

	var grid := GridContainer.new()
	grid.columns = 2
	_recipe_box.add_child(grid)

	grid.add_child(_label("Size", "Grid size in cells (width × height), 1 to %d each." % MAX_SIDE))
	var size_row := HBoxContainer.new()
	size_row.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_width = _int_spin(1, MAX_SIDE, "Width in cells (x, east).")
	_height = _int_spin(1, MAX_SIDE, "Height in cells (y, south).")
	_width.value_changed.connect(func(_v: float) -> void: _on_size_edited())
	_height.value_changed.connect(func(_v: float) -> void: _on_size_edited())
	size_row.add_child(_width)
	var times := Label.new()
	times.text = "×"
	size_row.add_child(times)
	size_row.add_child(_height)
	grid.add_child(size_row)

	grid.add_child(_label("Cell size", "Distance between cell centres, metres."))
	_cell = EditorSpinSlider.new()
	_cell.min_value = 0.01
	_cell.max_value = 10000.0
	_cell.step = 0.01
	_cell.exp_edit = true
	_cell.allow_greater = true
	_cell.suffix = "m"
	_cell.tooltip_text = "Distance between cell centres, metres."
	_cell.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_cell.value_changed.connect(func(v: float) -> void:
		_set_from_form("cell_size", StagePanel.to_ron(v, false)))
	grid.add_child(_cell)

	grid.add_child(_label("Seed", "Seed for every random choice: same recipe and seed, same terrain."))
	var seed_row := HBoxContainer.new()
	seed_row.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_seed = _int_spin(0, 9007199254740991, "Seed for every random choice.")
	_seed.value_changed.connect(func(v: float) -> void:
		_set_from_form("seed", str(int(v))))
	seed_row.add_child(_seed)
	seed_row.add_child(_icon_button(&"RandomNumberGenerator", "Pick a random seed.",
			func() -> void: _seed.value = randi()))
	grid.add_child(seed_row)

	_extent = Label.new()
	_extent.modulate = Color(1, 1, 1, 0.7)
	_recipe_box.add_child(_extent)

	_recipe_box.add_child(_section("Stages"))
	_stages_box = VBoxContainer.new()
	_stages_box.add_theme_constant_override(&"separation", 4)
	_recipe_box.add_child(_stages_box)
	var add_row := HBoxContainer.new()
	_add_kind = OptionButton.new()
	_add_kind.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_add_kind.tooltip_text = "Kind of stage to append."
	add_row.add_child(_add_kind)
	add_row.add_child(_button("Add Stage", &"Add", "Append a stage with default parameters.",
			func() -> void:
				if _add_kind.selected >= 0:
					add_stage(_add_kind.get_item_text(_add_kind.selected))))
	_recipe_box.add_child(add_row)

	var ron_row := HBoxContainer.new()
	ron_row.add_child(_button("Import…", &"Load", "Load a recipe from a .ron file (orogen bake format).",
			func() -> void: _open_file_dialog("import")))
	ron_row.add_child(_button("Export…", &"Save", "Save the recipe as a .ron file for orogen bake.",
			func() -> void: _open_file_dialog("export")))
	ron_row.add_child(_button("Edit RON…", &"Edit", "Edit the whole recipe as RON text.",
			_open_ron_dialog))
	_recipe_box.add_child(ron_row)


	_body.add_child(_section("Maps"))
	_maps_flow = HFlowContainer.new()
	_maps_flow.add_theme_constant_override(&"h_separation", 6)
	_maps_flow.add_theme_constant_override(&"v_separation", 6)
	_body.add_child(_maps_flow)
	_bake_button = _button("Bake to Folder…", &"Save",
			"Write every map (EXR, 16-bit PNG, R16) and terrain.res into a folder.",
			func() -> void: _open_file_dialog("bake"))
	_body.add_child(_bake_button)

	_file_dialog = EditorFileDialog.new()
	_file_dialog.access = EditorFileDialog.ACCESS_RESOURCES
	_file_dialog.file_selected.connect(_on_file_chosen)
	_file_dialog.dir_selected.connect(_on_file_chosen)
	add_child(_file_dialog)

	_ron_dialog = ConfirmationDialog.new()
	_ron_dialog.title = "Terrain Recipe (RON)"
	_ron_dialog.ok_button_text = "Apply"
	_ron_edit = CodeEdit.new()
	_ron_edit.custom_minimum_size = Vector2(560, 420)
	_ron_edit.gutters_draw_line_numbers = true
	_ron_edit.add_theme_font_override(&"font", ed_theme.get_font(&"source", &"EditorFonts"))
	_ron_dialog.add_child(_ron_edit)
	_ron_dialog.confirmed.connect(_on_ron_dialog_confirmed)
	add_child(_ron_dialog)


func _section(text: String) -> Control:
	var box := VBoxContainer.new()
	box.add_theme_constant_override(&"separation", 2)
	var label := Label.new()
	label.text = text
	label.add_theme_font_override(&"font", EditorInterface.get_editor_theme().get_font(&"bold", &"EditorFonts"))
	box.add_child(label)
	box.add_child(HSeparator.new())
	return box


func _label(text: String, tip: String) -> Label:
	var label := Label.new()
	label.text = text
	label.tooltip_text = tip
	label.mouse_filter = Control.MOUSE_FILTER_PASS
	return label


func _int_spin(lo: float, hi: float, tip: String) -> SpinBox:
	var spin := SpinBox.new()
	spin.min_value = lo
	spin.max_value = hi
	spin.step = 1.0
	spin.rounded = true
	spin.tooltip_text = tip
	spin.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	spin.select_all_on_focus = true
	return spin


func _button(text: String, icon: StringName, tip: String, pressed: Callable) -> Button:
	var b := Button.new()
	b.text = text
	b.icon = EditorInterface.get_editor_theme().get_icon(icon, &"EditorIcons")
	b.tooltip_text = tip
	b.pressed.connect(pressed)
	return b


func _icon_button(icon: StringName, tip: String, pressed: Callable) -> Button:
	var b := Button.new()
	b.icon = EditorInterface.get_editor_theme().get_icon(icon, &"EditorIcons")
	b.tooltip_text = tip
	b.flat = true
	b.pressed.connect(pressed)
	return b


# --- State → view --------------------------------------------------------------------------

func _process(delta: float) -> void:
	if not _built:
		return
	if _terrain != null and not is_instance_valid(_terrain):
		_terrain = null
		set_terrain(null)
	_poll_timer += delta
	if _poll_timer >= POLL_SECONDS:
		_poll_timer = 0.0
		if _recipe() != _shown_recipe or _ron_of(_recipe()) != _shown_ron:
			_rebuild_recipe_view()
	if is_generating():
		_watch_simulator(delta)
	if _thumbs_dirty:
		_thumb_timer -= delta
		if _thumb_timer <= 0.0:
			_thumbs_dirty = false
			_thumb_timer = LIVE_THUMB_SECONDS if is_generating() else 0.0
			_refresh_thumbnails()


func _update_all() -> void:
	if not _built:
		return
	var ext_loaded := ClassDB.class_exists(TERRAIN_CLASS)
	if not ext_loaded:
		_title.text = "Orogen"
		_hint.text = "The Orogen extension is not loaded. Build it (cargo build -p orogen-godot) " \
				+ "and check addons/orogen/orogen.gdextension, then restart the editor."
	elif _terrain == null:
		_title.text = "Orogen"
		_hint.text = "Select a TerrainWorld node to edit its recipe and generate it."
	else:
		_title.text = "Orogen — %s" % _terrain.name
		_hint.text = ""
	_hint.visible = _hint.text != ""
	_body.visible = ext_loaded and _terrain != null
	if ext_loaded and _add_kind.item_count == 0:
		var probe := _recipe_probe()
		if probe != null:
			var kinds: PackedStringArray = probe.call(&"get_stage_names")
			for kind: String in kinds:
				_add_kind.add_item(kind)
	_rebuild_recipe_view()
	_refresh_thumbnails()
	_update_run_ui()


func _rebuild_recipe_view() -> void:
	if not _built:
		return
	var recipe := _recipe()
	_shown_recipe = recipe
	_shown_ron = _ron_of(recipe)
	for child: Node in _stages_box.get_children():
		_stages_box.remove_child(child)
		child.queue_free()
	_no_recipe_box.visible = _terrain != null and recipe == null
	_recipe_box.visible = recipe != null
	if recipe == null:
		_update_validation()
		return
	var d := _dict_of(recipe)
	var cells := _pair(d.get("size"))
	_width.set_value_no_signal(cells.x)
	_height.set_value_no_signal(cells.y)
	var cell := float(d.get("cell_size", 0.0))
	_cell.set_value_no_signal(cell)
	_seed.set_value_no_signal(float(d.get("seed", 0)))
	_extent.text = "Extent: %s × %s" % [_km(cells.x * cell), _km(cells.y * cell)] if d.has("size") else ""
	var stages: Array = d.get("stages", []) if typeof(d.get("stages")) == TYPE_ARRAY else []
	for i in stages.size():
		var kind := _variant_name(stages[i])
		var params: Variant = (stages[i] as Dictionary)[kind] if kind != "" else {}
		var values: Dictionary = params if typeof(params) == TYPE_DICTIONARY else {}
		var schema: Array = recipe.call(&"describe_stage", kind)
		var panel := StagePanel.new()
		panel.build(i, stages.size(), kind, values, schema)
		panel.value_edited.connect(func(index: int, param: String, value_ron: String) -> void:
			_set_from_form("stages[%d].%s" % [index, param], value_ron))
		panel.move_requested.connect(func(index: int, delta: int) -> void:
			move_stage(index, delta))
		panel.remove_requested.connect(func(index: int) -> void:
			remove_stage(index))
		_stages_box.add_child(panel)
	if stages.is_empty():
		var none := Label.new()
		none.text = "No stages: the terrain is the initial noise or heightmap."
		none.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		none.modulate = Color(1, 1, 1, 0.6)
		_stages_box.add_child(none)
	_update_validation()


func _update_validation() -> void:
	var recipe := _recipe()
	var msg := ""
	if recipe != null:
		msg = String(recipe.call(&"validate"))
		if msg != "":
			msg = "Recipe: %s" % msg
	_set_error(msg)


func _update_run_ui() -> void:
	if not _built:
		return
	var running := is_generating()
	_generate_button.disabled = running or _recipe() == null
	_cancel_button.disabled = not running or _cancel_requested
	var has_data := _terrain != null and _terrain.get(&"data") != null
	_bake_button.disabled = running or not has_data
	_progress.visible = running or _progress.value > 0.0
	if not running and _progress_label.text == "":
		_progress_label.visible = false
	else:
		_progress_label.visible = true


func _update_progress() -> void:
	var count := maxi(_run_stage_names.size(), 1)
	var overall := (float(mini(_run_stage_index, count - 1)) + _run_last_fraction) / float(count)
	_progress.value = clampf(overall, 0.0, 1.0)
	var stage := _run_last_stage if _run_last_stage != "" else "starting"
	var text := "Stage %d/%d · %s" % [mini(_run_stage_index + 1, count), count, stage]
	if _run_iteration > 0:
		text += " · iteration %d" % _run_iteration
	text += " · %d%%" % roundi(_run_last_fraction * 100.0)
	_progress_label.text = text
	_progress_label.visible = true


func _refresh_thumbnails() -> void:
	if not _built:
		return
	var names := PackedStringArray()
	if _terrain != null and _terrain.get(&"data") != null:
		names = _terrain.call(&"get_map_names")
	for key: Variant in _map_tiles.keys():
		if not names.has(String(key)):
			var old := _map_tiles[key] as Control
			_map_tiles.erase(key)
			if is_instance_valid(old):
				old.queue_free()
	for map_name: String in names:
		var image := _terrain.call(&"get_map", map_name) as Image
		var preview := MapPreview.make(map_name, image)
		var tile := _map_tiles.get(map_name) as Control
		if tile == null or not is_instance_valid(tile):
			tile = _make_tile(map_name)
			_map_tiles[map_name] = tile
			_maps_flow.add_child(tile)
		var rect := tile.get_node(^"Texture") as TextureRect
		rect.texture = preview["texture"] as Texture2D
		tile.tooltip_text = String(preview["summary"])
	if names.is_empty() and _maps_flow.get_child_count() == 0:
		var none := Label.new()
		none.name = "NoMaps"
		none.text = "No maps yet: press Generate."
		none.modulate = Color(1, 1, 1, 0.6)
		_maps_flow.add_child(none)
	elif not names.is_empty():
		var none := _maps_flow.get_node_or_null(^"NoMaps")
		if none != null:
			_maps_flow.remove_child(none)
			none.queue_free()
	_update_run_ui()


func _clear_tiles() -> void:
	for key: Variant in _map_tiles.keys():
		var tile := _map_tiles[key] as Control
		if is_instance_valid(tile):
			tile.get_parent().remove_child(tile)
			tile.queue_free()
	_map_tiles.clear()


func _make_tile(map_name: String) -> Control:
	var tile := VBoxContainer.new()
	tile.name = "Map_" + map_name.validate_node_name()
	tile.mouse_filter = Control.MOUSE_FILTER_STOP
	tile.add_theme_constant_override(&"separation", 0)
	var rect := TextureRect.new()
	rect.name = "Texture"
	rect.custom_minimum_size = Vector2(88, 88)
	rect.expand_mode = TextureRect.EXPAND_IGNORE_SIZE
	rect.stretch_mode = TextureRect.STRETCH_KEEP_ASPECT_CENTERED
	rect.mouse_filter = Control.MOUSE_FILTER_PASS
	tile.add_child(rect)
	var label := Label.new()
	label.text = map_name
	label.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
	label.custom_minimum_size.x = 88
	label.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	label.mouse_filter = Control.MOUSE_FILTER_PASS
	tile.add_child(label)
	return tile


# --- Recipe edits --------------------------------------------------------------------------

## Runs `op(recipe) -> error` and records the RON before and after as one undoable action.
## On error the recipe is put back and the error shown.
func _edit_recipe(action: String, op: Callable,
		merge: UndoRedo.MergeMode = UndoRedo.MERGE_DISABLE) -> String:
	var recipe := _recipe()
	if recipe == null:
		return _show_error("Select a TerrainWorld with a recipe first.")
	var old_ron := _ron_of(recipe)
	var err := String(op.call(recipe))
	var new_ron := _ron_of(recipe)
	if err != "":
		if new_ron != old_ron:
			recipe.set(&"ron", old_ron)
		return _show_error(err)
	_clear_error()
	if new_ron != old_ron:
		if _undo != null:
			_undo.create_action(action, merge, _terrain)
			_undo.add_do_property(recipe, &"ron", new_ron)
			_undo.add_undo_property(recipe, &"ron", old_ron)
			_undo.commit_action(false)
		_shown_ron = new_ron
	_update_validation()
	_update_extent()
	return ""


func _on_size_edited() -> void:
	_set_from_form("size", "(%d, %d)" % [int(_width.value), int(_height.value)])


func _update_extent() -> void:
	var cell := _cell.value
	_extent.text = "Extent: %s × %s" % [_km(_width.value * cell), _km(_height.value * cell)]


func _create_recipe() -> void:
	if _terrain == null or not ClassDB.class_exists(RECIPE_CLASS):
		return
	var recipe := ClassDB.instantiate(RECIPE_CLASS) as Resource
	if _undo != null:
		_undo.create_action("Create terrain recipe", UndoRedo.MERGE_DISABLE, _terrain)
		_undo.add_do_property(_terrain, &"recipe", recipe)
		_undo.add_undo_property(_terrain, &"recipe", null)
		_undo.add_do_reference(recipe)
		_undo.commit_action()
	else:
		_terrain.set(&"recipe", recipe)
	_update_all()


func _open_ron_dialog() -> void:
	var recipe := _recipe()
	if recipe == null:
		return
	_ron_edit.text = _ron_of(recipe)
	_ron_dialog.popup_centered()


func _on_ron_dialog_confirmed() -> void:
	var text := _ron_edit.text
	var probe := ClassDB.instantiate(RECIPE_CLASS) as Resource
	probe.set(&"ron", text)
	var invalid := String(probe.call(&"validate"))
	if invalid != "":
		_show_error("RON not applied: %s" % invalid)
		return
	var err := _edit_recipe("Edit terrain recipe RON", func(r: Resource) -> String:
		r.set(&"ron", text)
		return "")
	if err == "":
		_rebuild_recipe_view()


func _open_file_dialog(action: String) -> void:
	_file_action = action
	_file_dialog.clear_filters()
	match action:
		"import":
			_file_dialog.file_mode = EditorFileDialog.FILE_MODE_OPEN_FILE
			_file_dialog.title = "Import Terrain Recipe"
			_file_dialog.add_filter("*.ron", "RON terrain recipe")
		"export":
			_file_dialog.file_mode = EditorFileDialog.FILE_MODE_SAVE_FILE
			_file_dialog.title = "Export Terrain Recipe"
			_file_dialog.add_filter("*.ron", "RON terrain recipe")
			_file_dialog.current_file = "%s.ron" % (_terrain.name.to_snake_case() if _terrain != null else "terrain")
		"bake":
			_file_dialog.file_mode = EditorFileDialog.FILE_MODE_OPEN_DIR
			_file_dialog.title = "Bake Terrain to Folder"
	_file_dialog.popup_file_dialog()


func _on_file_chosen(path: String) -> void:
	match _file_action:
		"import":
			import_ron(path)
		"export":
			export_ron(path)
		"bake":
			bake_to(path)


# --- Generation ----------------------------------------------------------------------------

func _ensure_simulator() -> Node:
	if is_instance_valid(_sim):
		return _sim
	if not ClassDB.class_exists(SIMULATOR_CLASS):
		_show_error("The Orogen extension is not loaded (no ErosionSimulator class).")
		return null
	_sim = ClassDB.instantiate(SIMULATOR_CLASS) as Node
	_sim.name = "EditorSimulator"
	# The simulator lives in the dock, never in the edited scene, so it is never saved.
	_root.add_child(_sim)
	_sim.connect(&"progress", _on_sim_progress)
	_sim.connect(&"step_finished", _on_sim_step_finished)
	_sim.connect(&"finished", _on_sim_finished)
	_sim.connect(&"failed", _on_sim_failed)
	return _sim


func _on_sim_progress(stage_index: int, stage: String, fraction: float) -> void:
	if not is_generating():
		return
	if stage_index != _run_stage_index:
		_run_iteration = 0
	_run_stage_index = stage_index
	_run_last_stage = stage
	_run_last_fraction = fraction
	_run_silent_for = 0.0
	_update_progress()


func _on_sim_step_finished(iteration: int) -> void:
	if not is_generating():
		return
	_run_iteration = iteration
	_run_silent_for = 0.0
	_thumbs_dirty = true
	_update_progress()


func _on_sim_finished() -> void:
	if not is_generating():
		return
	var terrain := _run_terrain
	var old := _run_old_data
	var cancelled := _cancel_requested
	var seconds := float(Time.get_ticks_msec() - _run_started_msec) / 1000.0
	var result: Resource = null
	if is_instance_valid(_sim):
		result = _sim.call(&"get_result") as Resource
	_end_run()
	if not is_instance_valid(terrain):
		_set_status("The terrain was removed before the generation finished.")
		generation_ended.emit(false, _status.text)
		return
	if cancelled or result == null:
		terrain.call(&"set_data", old)
		if cancelled:
			_set_status("Generation cancelled; the terrain is as it was.")
			generation_ended.emit(false, _status.text)
		else:
			_show_error("The simulator finished without a result.")
			generation_ended.emit(false, "no result")
		return
	if _undo != null:
		_undo.create_action("Generate terrain", UndoRedo.MERGE_DISABLE, terrain)
		_undo.add_do_method(terrain, &"set_data", result)
		_undo.add_undo_method(terrain, &"set_data", old)
		_undo.add_do_reference(result)
		_undo.commit_action(true)
	else:
		terrain.call(&"set_data", result)
	_progress.value = 1.0
	_progress_label.text = "Done: %d stage(s) in %.1f s" % [_run_stage_names.size(), seconds]
	_set_status("Generated. Undo (Ctrl+Z) restores the previous terrain.")
	_thumbs_dirty = true
	_thumb_timer = 0.0
	generation_ended.emit(true, _status.text)


func _on_sim_failed(message: String) -> void:
	if not is_generating():
		return
	var cancelled := _cancel_requested
	_restore_run_terrain()
	_end_run()
	_thumbs_dirty = true
	_thumb_timer = 0.0
	if cancelled:
		_set_status("Generation cancelled; the terrain is as it was.")
		generation_ended.emit(false, _status.text)
		return
	_set_status("")
	_show_error("Generation failed: %s" % message)
	push_warning("Orogen: generation failed: %s" % message)
	generation_ended.emit(false, message)


## Puts the terrain back as it was before the run (live updates may have changed it).
func _restore_run_terrain() -> void:
	if is_instance_valid(_run_terrain):
		_run_terrain.call(&"set_data", _run_old_data)


func _end_run() -> void:
	_run_terrain = null
	_run_old_data = null
	_cancel_requested = false
	_update_run_ui()


func _watch_simulator(delta: float) -> void:
	if is_instance_valid(_sim) and bool(_sim.call(&"is_running")):
		_run_silent_for = 0.0
		return
	_run_silent_for += delta
	if _run_silent_for >= SILENT_STOP_SECONDS:
		_on_sim_failed("the simulator stopped without reporting a result")


# --- Helpers -------------------------------------------------------------------------------

func _connect_terrain(terrain: Node3D) -> void:
	if is_instance_valid(_terrain) and _terrain.has_signal(&"data_changed") \
			and _terrain.is_connected(&"data_changed", _on_terrain_data_changed):
		_terrain.disconnect(&"data_changed", _on_terrain_data_changed)
	_terrain = terrain
	if _terrain != null and _terrain.has_signal(&"data_changed"):
		_terrain.connect(&"data_changed", _on_terrain_data_changed)


func _on_terrain_data_changed() -> void:
	_thumbs_dirty = true


func _recipe() -> Resource:
	if _terrain == null or not is_instance_valid(_terrain):
		return null
	return _terrain.get(&"recipe") as Resource


func _recipe_probe() -> Resource:
	var recipe := _recipe()
	if recipe != null:
		return recipe
	if ClassDB.class_exists(RECIPE_CLASS):
		return ClassDB.instantiate(RECIPE_CLASS) as Resource
	return null


static func _ron_of(recipe: Resource) -> String:
	return String(recipe.get(&"ron")) if recipe != null else ""


static func _stage_kinds(recipe: Resource) -> PackedStringArray:
	var kinds := PackedStringArray()
	if recipe == null:
		return kinds
	var d := _dict_of(recipe)
	if typeof(d.get("stages")) != TYPE_ARRAY:
		return kinds
	for stage: Variant in d["stages"]:
		kinds.append(_variant_name(stage))
	return kinds


## The recipe as serde's data model (TerrainRecipe.to_dict), or {} if it does not parse.
static func _dict_of(recipe: Resource) -> Dictionary:
	var raw: Variant = recipe.call(&"to_dict") if recipe != null else null
	return raw if raw is Dictionary else {}


## The variant name of a serde enum value in Godot form (`{"Thermal": {...}}` or `"Thermal"`).
static func _variant_name(v: Variant) -> String:
	if typeof(v) == TYPE_DICTIONARY and (v as Dictionary).size() == 1:
		return String((v as Dictionary).keys()[0])
	if typeof(v) == TYPE_STRING or typeof(v) == TYPE_STRING_NAME:
		return String(v)
	return ""


static func _pair(v: Variant) -> Vector2:
	match typeof(v):
		TYPE_ARRAY, TYPE_PACKED_INT32_ARRAY, TYPE_PACKED_INT64_ARRAY, TYPE_PACKED_FLOAT64_ARRAY:
			var a: Array = Array(v)
			if a.size() >= 2:
				return Vector2(float(a[0]), float(a[1]))
		TYPE_VECTOR2I, TYPE_VECTOR2:
			return Vector2(v)
	return Vector2.ZERO


static func _km(metres: float) -> String:
	return "%.1f km" % (metres / 1000.0) if metres >= 1000.0 else "%d m" % roundi(metres)


func _set_status(text: String) -> void:
	_status.text = text
	_status.visible = text != ""


func _show_error(message: String) -> String:
	_set_error(message)
	return message


func _clear_error() -> void:
	_update_validation()


func _set_error(message: String) -> void:
	if _validation == null:
		return
	_validation.text = message
	_validation.visible = message != ""


func _scan_filesystem() -> void:
	var fs := EditorInterface.get_resource_filesystem()
	if fs != null and not fs.is_scanning():
		fs.scan()
