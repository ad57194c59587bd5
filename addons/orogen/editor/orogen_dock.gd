@tool
extends ScrollContainer
## The Orogen dock. Follows the selected TerrainWorld and shows its recipe (size, cell size,
## seed, the ordered stages and their parameters), runs an ErosionSimulator on it with live
## progress, applies the result as one undoable action, previews its maps and bakes them.
##
## This script lays the dock out and keeps it in step with the terrain; the work is in its
## parts, which share a DockContext (dock_context.gd): the recipe form (dock_form.gd), the run
## controls (dock_run.gd), the map thumbnails (dock_maps.gd) and the files (dock_bake.gd).

const Context := preload("dock_context.gd")
const Form := preload("dock_form.gd")
const Run := preload("dock_run.gd")
const Maps := preload("dock_maps.gd")
const Bake := preload("dock_bake.gd")

## Seconds between checks for outside changes (inspector edits, undo, a reloaded recipe).
const POLL_SECONDS := 0.25

## Emitted after a generation ends: `ok` is false when it failed or was cancelled.
signal generation_ended(ok: bool, message: String)

## The dock's parts, and what they share (public for the editor self-test).
var ctx := Context.new()
var form := Form.new(ctx)
var run := Run.new(ctx)
var maps := Maps.new(ctx)
var bake := Bake.new(ctx)

var _built := false
var _root: VBoxContainer
var _title: Label
var _hint: Label
var _body: VBoxContainer
var _poll_timer := 0.0


## Called once by the plugin before the dock enters the tree.
func setup(undo_redo: EditorUndoRedoManager) -> void:
	ctx.undo = undo_redo


func _ready() -> void:
	if _built:
		return
	_built = true
	name = "Orogen"
	custom_minimum_size = Vector2(260, 200)
	horizontal_scroll_mode = ScrollContainer.SCROLL_MODE_DISABLED
	_build_ui()
	run.generation_ended.connect(func(ok: bool, message: String) -> void:
		generation_ended.emit(ok, message))
	run.state_changed.connect(_update_buttons)
	run.maps_changed.connect(maps.mark_dirty)
	maps.refreshed.connect(_update_buttons)
	form.file_dialog_requested.connect(bake.open_file_dialog)
	bake.recipe_imported.connect(form.rebuild)
	form.recipe_created.connect(_update_all)
	_update_all()
	set_process(true)


## Cancels a running generation and lets go of the terrain. The plugin calls this when it
## is disabled; the dock's own exit from the tree is not enough of a sign, since moving the
## dock to another slot also takes it out of the tree and back.
func shutdown() -> void:
	run.shutdown()
	_connect_terrain(null)


# --- Public API (used by the plugin and the editor self-test) ------------------------------

## Shows `node` if it is a TerrainWorld, or the "select a TerrainWorld" hint for null.
func set_terrain(node: Node) -> void:
	var terrain: Node3D = node as Node3D if is_terrain(node) else null
	if terrain == ctx.terrain:
		return
	_connect_terrain(terrain)
	ctx.shown_recipe = null
	ctx.shown_ron = ""
	maps.clear()
	if _built and not is_generating():
		# Messages and progress belong to the terrain they were about.
		ctx.set_status("")
		run.reset_progress()
	_update_all()


## The first TerrainWorld among `nodes` (the editor's selection), or null.
static func pick_terrain(nodes: Array[Node]) -> Node:
	for n: Node in nodes:
		if is_terrain(n):
			return n
	return null


static func is_terrain(node: Object) -> bool:
	return node != null and is_instance_valid(node) and node is Node3D \
			and ClassDB.is_parent_class(node.get_class(), Context.TERRAIN_CLASS)


func get_terrain() -> Node3D:
	return ctx.terrain


func is_generating() -> bool:
	return ctx.generating


func generate() -> bool:
	return run.generate()


func cancel_generation() -> void:
	run.cancel_generation()


func bake_to(dir: String) -> String:
	return bake.bake_to(dir)


func import_ron(path: String) -> String:
	return bake.import_ron(path)


func export_ron(path: String) -> String:
	return bake.export_ron(path)


## Applies a `--set`-style override (`seed`, `size`, `stages[0].iterations`) with a RON value,
## as one undoable action; the form is refreshed from the recipe shortly after.
func set_recipe_value(path: String, value_ron: String) -> String:
	return form.set_recipe_value(path, value_ron)


func add_stage(kind: String) -> String:
	return form.add_stage(kind)


func remove_stage(index: int) -> String:
	return form.remove_stage(index)


func move_stage(index: int, delta: int) -> String:
	return form.move_stage(index, delta)


func get_stage_panels() -> Array[Node]:
	return form.get_stage_panels()


func get_map_tile_names() -> PackedStringArray:
	return maps.get_tile_names()


## The texture shown for map `map_name`, or null.
func get_map_texture(map_name: String) -> Texture2D:
	return maps.get_texture(map_name)


func get_status_text() -> String:
	return ctx.get_status()


func get_error_text() -> String:
	return ctx.get_error()


## Re-reads the recipe and maps now (normally done by polling and signals).
func refresh() -> void:
	form.rebuild()
	maps.refresh()


# --- Layout --------------------------------------------------------------------------------

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

	run.build(_body, _root)
	var status := Label.new()
	status.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	status.modulate = Color(1, 1, 1, 0.8)
	status.visible = false
	_body.add_child(status)
	ctx.status_label = status
	var validation := Label.new()
	validation.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	validation.add_theme_color_override(&"font_color", ed_theme.get_color(&"error_color", &"Editor"))
	validation.visible = false
	_body.add_child(validation)
	ctx.error_label = validation
	form.build(_body, self)
	maps.build(_body)
	bake.build(_body, self)


# --- State → view --------------------------------------------------------------------------

func _process(delta: float) -> void:
	if not _built:
		return
	if ctx.terrain != null and not is_instance_valid(ctx.terrain):
		ctx.terrain = null
		set_terrain(null)
	_poll_timer += delta
	if _poll_timer >= POLL_SECONDS:
		_poll_timer = 0.0
		if form.is_stale():
			form.rebuild()
	run.process(delta)
	maps.process(delta)


func _update_all() -> void:
	if not _built:
		return
	var ext_loaded := ClassDB.class_exists(Context.TERRAIN_CLASS)
	if not ext_loaded:
		_title.text = "Orogen"
		_hint.text = "The Orogen extension is not loaded. Build it (cargo build -p orogen-godot) " \
				+ "and check addons/orogen/orogen.gdextension, then restart the editor."
	elif ctx.terrain == null:
		_title.text = "Orogen"
		_hint.text = "Select a TerrainWorld node to edit its recipe and generate it."
	else:
		_title.text = "Orogen — %s" % ctx.terrain.name
		_hint.text = ""
	_hint.visible = _hint.text != ""
	_body.visible = ext_loaded and ctx.terrain != null
	if ext_loaded:
		form.fill_stage_kinds()
	form.rebuild()
	maps.refresh()
	_update_buttons()


func _update_buttons() -> void:
	if not _built:
		return
	run.update_ui()
	bake.update_ui()


# --- Helpers -------------------------------------------------------------------------------

func _connect_terrain(terrain: Node3D) -> void:
	var old := ctx.terrain
	if is_instance_valid(old) and old.has_signal(&"data_changed") \
			and old.is_connected(&"data_changed", _on_terrain_data_changed):
		old.disconnect(&"data_changed", _on_terrain_data_changed)
	ctx.terrain = terrain
	if terrain != null and terrain.has_signal(&"data_changed"):
		terrain.connect(&"data_changed", _on_terrain_data_changed)


func _on_terrain_data_changed() -> void:
	maps.mark_dirty(false)
