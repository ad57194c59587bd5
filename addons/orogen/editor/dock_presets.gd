@tool
extends RefCounted
## The Orogen dock's preset gallery and first look. The gallery shows the built-in recipes
## (TerrainRecipe.get_builtin_names(): a thumbnail from presets/NAME.png, the name and one
## line each); it opens by itself for a terrain without a recipe and on "Presets…" for one
## with a recipe. Choosing a preset gives the terrain that recipe as one undoable action, then
## shows a coarse preview and generates the full terrain.
##
## The coarse preview is the same recipe on a grid of at most PREVIEW_SIDE cells a side over
## the same extent (TerrainRecipe.coarse_copy), run by a simulator of its own and shown with
## TerrainWorld.show_preview: the terrain's `data` is untouched, so the preview is never saved
## and never an undo step; the full run's result (Generate) replaces it. A terrain with a
## recipe but no data gets the preview when the dock follows it.

const Context := preload("dock_context.gd")
const UI := preload("dock_ui.gd")

## Longest side of the coarse preview, cells.
const PREVIEW_SIDE := 65
## Width of a gallery tile, pixels.
const TILE_WIDTH := 150
const THUMBNAILS := "res://addons/orogen/editor/presets/%s.png"

## A preset was chosen and the terrain has its recipe (the run part is asked to generate).
signal preset_chosen(preset: String)
## The coarse preview is shown: `msec` after the run that made it started.
signal preview_shown(msec: int)
## The full generation should start now (after the preview, or at once without one).
signal generate_requested

var _ctx: Context
var _host: Node
## The gallery's panel and tiles (preset name → its button).
var _panel: VBoxContainer
var _flow: HFlowContainer
var tiles: Dictionary = {}
var _sim: Node = null
var _preview_terrain: Node3D = null
var _preview_started_msec := 0
var _then_generate := false
## Milliseconds from the start of the last coarse run to its preview on the terrain (-1: none).
var last_preview_msec := -1


func _init(ctx: Context) -> void:
	_ctx = ctx


## Adds the gallery (hidden until asked for) to `parent`; the preview simulator goes in `host`.
func build(parent: Control, host: Node) -> void:
	_host = host
	_panel = VBoxContainer.new()
	_panel.name = "PresetGallery"
	_panel.add_theme_constant_override(&"separation", 4)
	_panel.visible = false
	parent.add_child(_panel)
	var head := HBoxContainer.new()
	var title := UI.section("Presets")
	title.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	head.add_child(title)
	head.add_child(UI.icon_button(&"Close", "Close the gallery.", func() -> void: show_gallery(false)))
	_panel.add_child(head)
	var hint := Label.new()
	hint.text = "Pick a terrain to start from: its recipe replaces this one (undoable), a coarse " \
			+ "preview shows at once and the full terrain follows."
	hint.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	hint.modulate = Color(1, 1, 1, 0.7)
	_panel.add_child(hint)
	_flow = HFlowContainer.new()
	_flow.add_theme_constant_override(&"h_separation", 6)
	_flow.add_theme_constant_override(&"v_separation", 6)
	_panel.add_child(_flow)


## Shows or hides the gallery (filled on first show, once the extension is there).
func show_gallery(on: bool) -> void:
	if _panel == null:
		return
	if on and tiles.is_empty():
		_fill()
	_panel.visible = on


func is_gallery_shown() -> bool:
	return _panel != null and _panel.visible


func _fill() -> void:
	if not ClassDB.class_exists(Context.RECIPE_CLASS):
		return
	var names: PackedStringArray = ClassDB.class_call_static(Context.RECIPE_CLASS, &"get_builtin_names")
	for preset: String in names:
		var what := String(ClassDB.class_call_static(Context.RECIPE_CLASS, &"get_builtin_description", preset))
		var tile := VBoxContainer.new()
		tile.custom_minimum_size.x = TILE_WIDTH
		tile.add_theme_constant_override(&"separation", 2)
		var b := Button.new()
		b.name = preset
		b.text = preset
		b.icon = thumbnail(preset)
		b.icon_alignment = HORIZONTAL_ALIGNMENT_CENTER
		b.vertical_icon_alignment = VERTICAL_ALIGNMENT_TOP
		b.tooltip_text = "%s: %s" % [preset, what]
		b.pressed.connect(func() -> void: choose_preset(preset))
		tile.add_child(b)
		var line := Label.new()
		line.text = what
		line.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		line.custom_minimum_size.x = TILE_WIDTH
		line.modulate = Color(1, 1, 1, 0.75)
		line.add_theme_font_size_override(&"font_size",
				maxi(9, EditorInterface.get_editor_theme().get_font_size(&"main_size", &"EditorFonts") - 2))
		tile.add_child(line)
		_flow.add_child(tile)
		tiles[preset] = b


## The thumbnail of preset `preset`: the imported PNG when the editor has imported it, else
## the file read directly (a project opened for the first time), else null.
static func thumbnail(preset: String) -> Texture2D:
	var path := THUMBNAILS % preset
	if ResourceLoader.exists(path):
		var tex := load(path) as Texture2D
		if tex != null:
			return tex
	var img := Image.load_from_file(ProjectSettings.globalize_path(path))
	return ImageTexture.create_from_image(img) if img != null and not img.is_empty() else null


## Gives the followed terrain built-in recipe `preset` (a new recipe resource, so a recipe
## saved in its own file is left as it is), hides the gallery and starts the coarse preview,
## then the full generation; the preset and its generated terrain are one undo step. Returns
## "" or the error.
func choose_preset(preset: String) -> String:
	var terrain := _ctx.terrain
	if terrain == null or not ClassDB.class_exists(Context.RECIPE_CLASS):
		return _ctx.show_error("Select a TerrainWorld first.")
	if _ctx.generating or _ctx.live:
		return _ctx.show_error("A generation or live erosion is running: cancel it first.")
	var recipe := ClassDB.class_call_static(Context.RECIPE_CLASS, &"from_builtin", preset) as Resource
	if recipe == null:
		return _ctx.show_error("There is no built-in recipe called `%s`." % preset)
	var old := _ctx.recipe()
	# One undo step with the full result that follows (DockContext.begin_preset).
	_ctx.begin_preset(terrain, preset, recipe, old)
	terrain.set(&"recipe", recipe)
	_ctx.clear_error()
	show_gallery(false)
	preset_chosen.emit(preset)
	start_preview(true)
	return ""


## Runs the followed terrain's recipe coarsely and shows it on the terrain (not as its data).
## With `then_generate`, the full generation is asked for once the preview is shown (or at
## once when no preview can be made). Returns true if a preview run started.
func start_preview(then_generate: bool) -> bool:
	return start_preview_for(_ctx.terrain, then_generate)


## start_preview for `terrain`, followed or not (a scene just opened).
func start_preview_for(terrain: Node3D, then_generate: bool) -> bool:
	var recipe: Resource = terrain.get(&"recipe") as Resource if is_instance_valid(terrain) else null
	var coarse: Resource = null
	if recipe != null and recipe.has_method(&"coarse_copy"):
		coarse = recipe.call(&"coarse_copy", PREVIEW_SIDE) as Resource
	# One preview at a time: while one runs, a preset goes straight to its full generation.
	if terrain == null or coarse == null or _ensure_simulator() == null \
			or bool(_sim.call(&"is_running")):
		if then_generate:
			generate_requested.emit()
		return false
	_then_generate = then_generate
	_sim.set(&"terrain", _sim.get_path_to(terrain))
	_sim.set(&"recipe", coarse)
	_sim.set(&"live_update", false)
	_sim.set(&"apply_on_finish", false)
	_preview_terrain = terrain
	_preview_started_msec = Time.get_ticks_msec()
	if not _ctx.generating and terrain == _ctx.terrain:
		_ctx.set_status("Coarse preview…")
	return bool(_sim.call(&"start"))


## Starts a preview for a terrain the dock now follows that has a recipe but no data (a scene
## opened in the editor), so it does not show a flat square until Generate.
func preview_if_empty() -> void:
	if _ctx.terrain != null and _ctx.recipe() != null and not _ctx.has_data() \
			and not _ctx.generating and not _ctx.live:
		start_preview(false)


func is_previewing() -> bool:
	return is_instance_valid(_sim) and bool(_sim.call(&"is_running"))


## Stops a preview run (the plugin is going away).
func shutdown() -> void:
	_then_generate = false
	if is_instance_valid(_sim) and bool(_sim.call(&"is_running")):
		_sim.call(&"cancel")


func _ensure_simulator() -> Node:
	if is_instance_valid(_sim):
		return _sim
	if not ClassDB.class_exists(Context.SIMULATOR_CLASS):
		return null
	_sim = ClassDB.instantiate(Context.SIMULATOR_CLASS) as Node
	_sim.name = "PreviewSimulator"
	# In the dock, never in the edited scene, so it is never saved.
	_host.add_child(_sim)
	_sim.connect(&"finished", _on_preview_finished)
	_sim.connect(&"failed", _on_preview_failed)
	return _sim


func _on_preview_failed(_message: String) -> void:
	_finish_preview()


func _on_preview_finished() -> void:
	var terrain := _preview_terrain
	var result := _sim.call(&"get_result") as Resource
	# Only onto the terrain it was made for, and never over real data or a running generation.
	var followed := terrain == _ctx.terrain
	if result != null and is_instance_valid(terrain) and terrain.get(&"recipe") != null \
			and (terrain.get(&"data") == null or _then_generate) and not (followed and _ctx.generating):
		var err := String(terrain.call(&"show_preview", result))
		if err == "":
			last_preview_msec = Time.get_ticks_msec() - _preview_started_msec
			if followed:
				_ctx.set_status("Coarse preview (%d ms). %s" % [last_preview_msec,
						"Generating the full terrain…" if _then_generate else "Generate makes the full terrain."])
			preview_shown.emit(last_preview_msec)
	_finish_preview()


func _finish_preview() -> void:
	_preview_terrain = null
	if _then_generate:
		_then_generate = false
		generate_requested.emit()
