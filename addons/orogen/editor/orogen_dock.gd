@tool
extends ScrollContainer
## The Orogen dock. Follows the selected TerrainWorld and shows its recipe (size, cell size,
## seed, the ordered stages and their parameters), runs an ErosionSimulator on it with live
## progress, applies the result as one undoable action, previews its maps and bakes them.
##
## This script lays the dock out and keeps it in step with the terrain; the work is in its
## parts, which share a DockContext (dock_context.gd): the recipe form (dock_form.gd, with the
## materials and strata in dock_layers.gd), the run
## controls (dock_run.gd), the map thumbnails (dock_maps.gd) and the files (dock_bake.gd).
##
## The dock follows changes through signals, never by polling: the terrain's `data_changed` and
## `recipe_changed`, and the recipe's own `changed` (inspector edits, undo, a reloaded file).
## It is connected to the followed terrain and its current recipe only, and to nothing once it
## follows no terrain.

const Context := preload("dock_context.gd")
const Form := preload("dock_form.gd")
const Run := preload("dock_run.gd")
const Maps := preload("dock_maps.gd")
const Bake := preload("dock_bake.gd")
const PlanetPart := preload("dock_planet.gd")
const Paint := preload("dock_paint.gd")
const Presets := preload("dock_presets.gd")

## Emitted after a generation ends: `ok` is false when it failed or was cancelled.
signal generation_ended(ok: bool, message: String)

## The dock's parts, and what they share (public for the editor self-test).
var ctx := Context.new()
var form := Form.new(ctx)
var run := Run.new(ctx)
var maps := Maps.new(ctx)
var bake := Bake.new(ctx)
var paint := Paint.new(ctx)
var presets := Presets.new(ctx)
## The planet part, shown while a PlanetWorld is selected.
var planet_part: RefCounted = null

var _built := false
var _root: VBoxContainer
var _title: Label
var _hint: Label
var _body: VBoxContainer
## The recipe whose `changed` signal the dock is connected to (the followed terrain's).
var _followed_recipe: Resource = null
var _recheck_queued := false
## The gallery is open because the terrain had no recipe (it closes once it has one).
var _gallery_auto := false


## Called once by the plugin before the dock enters the tree.
func setup(undo_redo: EditorUndoRedoManager) -> void:
	ctx.undo = undo_redo
	planet_part = PlanetPart.new(undo_redo)


func _ready() -> void:
	if _built:
		return
	_built = true
	name = "Orogen"
	custom_minimum_size = Vector2(260, 200)
	horizontal_scroll_mode = ScrollContainer.SCROLL_MODE_DISABLED
	_build_ui()
	run.generation_ended.connect(func(ok: bool, message: String) -> void:
		# A preset whose run ended without a result is an undo step of its own.
		ctx.commit_pending_preset()
		generation_ended.emit(ok, message))
	run.state_changed.connect(_update_buttons)
	run.maps_changed.connect(maps.mark_dirty)
	maps.refreshed.connect(_update_buttons)
	paint.live_changed.connect(_update_buttons)
	form.file_dialog_requested.connect(bake.open_file_dialog)
	form.presets_requested.connect(func() -> void: presets.show_gallery(not presets.is_gallery_shown()))
	presets.generate_requested.connect(func() -> void: run.generate(false))
	bake.recipe_imported.connect(form.rebuild)
	_update_all()
	set_process(true)


## Cancels a running generation and lets go of the terrain. The plugin calls this when it
## is disabled; the dock's own exit from the tree is not enough of a sign, since moving the
## dock to another slot also takes it out of the tree and back.
func shutdown() -> void:
	run.shutdown()
	presets.shutdown()
	paint.shutdown()
	_connect_terrain(null)


# --- Public API (used by the plugin and the editor self-test) ------------------------------

## Shows `node` if it is a TerrainWorld, or the "select a TerrainWorld" hint for null.
func set_terrain(node: Node) -> void:
	var terrain: Node3D = node as Node3D if is_terrain(node) else null
	if terrain == ctx.terrain:
		return
	if not is_generating():
		# A preset whose run never started is an undo step of its own.
		ctx.commit_pending_preset()
	_connect_terrain(terrain)
	paint.follow(terrain)
	ctx.shown_recipe = null
	ctx.shown_ron = ""
	maps.clear()
	if _built and not is_generating():
		# Messages and progress belong to the terrain they were about.
		ctx.set_status("")
		run.reset_progress()
	_update_all()
	if _built:
		presets.preview_if_empty()


## Shows the planet part for `node` if it is a PlanetWorld, hides it for anything else.
func set_planet(node: Node) -> void:
	if planet_part == null:
		planet_part = PlanetPart.new(ctx.undo)
	planet_part.set_planet(node)
	_update_all()


## The first PlanetWorld among `nodes`, or null.
static func pick_planet(nodes: Array[Node]) -> Node:
	return PlanetPart.pick_planet(nodes)


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


func save_for_terrain3d_to(dir: String, region_size := 0) -> String:
	return bake.save_for_terrain3d_to(dir, region_size)


func save_for_hterrain_to(dir: String) -> String:
	return bake.save_for_hterrain_to(dir)


## Writes the terrain into the edited scene's HTerrain node (made when there is none):
## dock_bake.gd send_to_hterrain. Returns "" or the error, also shown in the dock.
func send_to_hterrain() -> String:
	return bake.send_to_hterrain()


func import_ron(path: String) -> String:
	return bake.import_ron(path)


func export_ron(path: String) -> String:
	return bake.export_ron(path)


## Applies a `--set`-style override (`seed`, `size`, `stages[0].iterations`) with a RON value,
## as one undoable action; the form follows through the recipe's `changed` signal.
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


## The Paint section (dock_paint.gd): its `painter`, set_live, import_map, clear_map.
func get_paint_part() -> RefCounted:
	return paint


## The materials and strata editor (dock_layers.gd): add_material, set_value, add_stratum, …
func get_layers_form() -> RefCounted:
	return form.layers


## The preset gallery and coarse preview (dock_presets.gd): choose_preset, show_gallery,
## last_preview_msec, the `tiles` by name and the preview_shown signal.
func get_presets_part() -> RefCounted:
	return presets


## Shows a coarse preview on the first TerrainWorld of the scene under `root` that has a
## recipe but no data (the plugin calls this when a scene is opened or switched to); true if
## one started.
func preview_scene(root: Node) -> bool:
	var stack: Array[Node] = [root]
	while not stack.is_empty():
		var n: Node = stack.pop_back()
		if is_terrain(n) and n.get(&"recipe") != null and n.get(&"data") == null:
			return presets.start_preview_for(n as Node3D, false)
		stack.append_array(n.get_children())
	return false


## The starting terrain and uplift form (dock_sources.gd): set_kind, its `controls` and
## `labels` by recipe path.
func get_sources_form() -> RefCounted:
	return form.sources


func get_material_panels() -> Array[Node]:
	return form.layers.get_material_panels()


func get_map_tile_names() -> PackedStringArray:
	return maps.get_tile_names()


## The texture shown for map `map_name`, or null.
func get_map_texture(map_name: String) -> Texture2D:
	return maps.get_texture(map_name)


func get_status_text() -> String:
	return ctx.get_status()


func get_error_text() -> String:
	return ctx.get_error()


## Re-reads the recipe and maps now (normally done on the terrain's and recipe's signals).
func refresh() -> void:
	_follow_recipe()
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

	presets.build(_body, _root)
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
	paint.build(_body, self)
	bake.build(_body, self)
	if planet_part == null:
		planet_part = PlanetPart.new(ctx.undo)
	planet_part.build(_root)


# --- State → view --------------------------------------------------------------------------

func _process(delta: float) -> void:
	if not _built:
		return
	if ctx.terrain != null and not is_instance_valid(ctx.terrain):
		# The followed terrain was freed (its signals went with it): follow nothing.
		ctx.terrain = null
		_follow_recipe()
		maps.clear()
		_update_all()
	run.process(delta)
	maps.process(delta)
	paint.process(delta)


func _update_all() -> void:
	if not _built:
		return
	var ext_loaded := ClassDB.class_exists(Context.TERRAIN_CLASS)
	if not ext_loaded:
		_title.text = "Orogen"
		_hint.text = "The Orogen extension is not loaded. Build it (cargo build -p orogen-godot) " \
				+ "and check addons/orogen/orogen.gdextension, then restart the editor."
	elif ctx.terrain == null and planet_part != null and planet_part.planet != null:
		_title.text = "Orogen — %s" % planet_part.planet.name
		_hint.text = ""
	elif ctx.terrain == null:
		_title.text = "Orogen"
		_hint.text = "Select a TerrainWorld node to edit its recipe and generate it, or a " \
				+ "PlanetWorld to simulate plates and make a terrain from a region."
	else:
		_title.text = "Orogen — %s" % ctx.terrain.name
		_hint.text = ""
	_hint.visible = _hint.text != ""
	_body.visible = ext_loaded and ctx.terrain != null
	if planet_part != null:
		planet_part.update_ui()
	if ext_loaded:
		form.fill_stage_kinds()
	_update_gallery()
	form.rebuild()
	maps.refresh()
	_update_buttons()


## Shows the preset gallery by itself for a terrain without a recipe, and hides the one it
## showed so once the terrain has one.
func _update_gallery() -> void:
	var wanted := ctx.terrain != null and ctx.recipe() == null \
			and ClassDB.class_exists(Context.RECIPE_CLASS)
	if wanted:
		presets.show_gallery(true)
		_gallery_auto = true
	elif _gallery_auto:
		presets.show_gallery(false)
		_gallery_auto = false


func _update_buttons() -> void:
	if not _built:
		return
	run.update_ui()
	bake.update_ui()


# --- Following the terrain and its recipe --------------------------------------------------

## Follows `terrain` (or nothing): connects to its signals and its recipe's, and disconnects
## from the ones it followed before.
func _connect_terrain(terrain: Node3D) -> void:
	var old := ctx.terrain
	if old != null and is_instance_valid(old):
		_disconnect(old, &"data_changed", _on_terrain_data_changed)
		_disconnect(old, &"recipe_changed", _on_terrain_recipe_changed)
	ctx.terrain = terrain
	if terrain != null:
		_connect(terrain, &"data_changed", _on_terrain_data_changed)
		_connect(terrain, &"recipe_changed", _on_terrain_recipe_changed)
	_follow_recipe()


## Connects to the `changed` signal of the followed terrain's current recipe, and of no other.
func _follow_recipe() -> void:
	var recipe := ctx.recipe()
	if recipe == _followed_recipe:
		return
	if _followed_recipe != null:
		_disconnect(_followed_recipe, &"changed", _on_recipe_changed)
	_followed_recipe = recipe
	if recipe != null:
		_connect(recipe, &"changed", _on_recipe_changed)


func _on_terrain_data_changed() -> void:
	maps.mark_dirty(false)


## The terrain got another recipe (inspector, New Recipe, undo): follow and show it.
func _on_terrain_recipe_changed() -> void:
	_follow_recipe()
	if _built:
		_update_gallery()
		form.rebuild()
		_update_buttons()


## The recipe changed (any edit, the dock's own included). Checked once at the end of the
## frame, so the dock's own edits have recorded what the form shows and do not rebuild it.
func _on_recipe_changed() -> void:
	if not _recheck_queued:
		_recheck_queued = true
		_recheck_recipe.call_deferred()


func _recheck_recipe() -> void:
	_recheck_queued = false
	if _built and form.is_stale():
		form.rebuild()


static func _connect(obj: Object, sig: StringName, target: Callable) -> void:
	if obj.has_signal(sig) and not obj.is_connected(sig, target):
		obj.connect(sig, target)


static func _disconnect(obj: Object, sig: StringName, target: Callable) -> void:
	if is_instance_valid(obj) and obj.has_signal(sig) and obj.is_connected(sig, target):
		obj.disconnect(sig, target)
