@tool
extends Node
## The Orogen dock's self-test, run inside a real editor by tests/godot/editor_test.sh:
##
##   godot --editor --path <project> -- --orogen-editor-test [--orogen-screenshot=<dir>]
##
## Test code only: it is not part of the addon. editor_test.sh registers this script as a tool
## autoload in its scratch copy of the project, so the editor starts it beside the plugin; it
## does nothing without --orogen-editor-test. It finds the Orogen plugin, opens a scene whose
## root is a TerrainWorld, selects it and drives the dock as a user would: it reads the recipe
## form, edits values and stages (and undoes them), generates (checking the call returns at
## once and the result is one undoable action), cancels, provokes a failure, bakes,
## exports/imports RON, replaces the recipe, checks the dock is connected only to what it
## follows, and disables/re-enables the plugin. It prints `editor: N passed, M failed` and quits
## with exit code 0 only if nothing failed.
##
## With --orogen-screenshot=<dir> it instead sets up a terrain for a screenshot, writes
## <dir>/ready once the dock shows it, waits for <dir>/shot (written by the shell after `xwd`),
## and quits.

const SELF_TEST_ARG := "--orogen-editor-test"
const PLUGIN_SCRIPT := "res://addons/orogen/plugin.gd"
const SCENE_PATH := "res://orogen_editor_test.tscn"
const BAKE_DIR := "res://orogen_editor_test_bake"
const RON_PATH := "user://orogen_editor_test.ron"
## Longest a generation may take before the test gives up on it, seconds (a hang guard, not a
## speed check).
const GENERATION_TIMEOUT := 300.0
const StagePanel := preload("res://addons/orogen/editor/stage_panel.gd")
const MapPreview := preload("res://addons/orogen/editor/map_preview.gd")

var _plugin: EditorPlugin
var _passed := 0
var _failed := 0


func _ready() -> void:
	if Engine.is_editor_hint() and OS.get_cmdline_user_args().has(SELF_TEST_ARG):
		run.call_deferred()


func run() -> void:
	# The editor adds tool autoloads before it has finished loading its plugins.
	var start := Time.get_ticks_msec()
	while _find_plugin() == null and Time.get_ticks_msec() - start < 60000:
		await get_tree().process_frame
	_plugin = _find_plugin()
	# And until the first file scan has ended: the editor then loads its layout (reopening
	# scenes), which must not happen while the test opens its own (a project with more
	# scripts to scan, HTerrain's, takes longer).
	var fs := EditorInterface.get_resource_filesystem()
	while fs != null and fs.is_scanning() and Time.get_ticks_msec() - start < 120000:
		await get_tree().process_frame
	if _plugin == null:
		_check(false, "the Orogen plugin is loaded in the editor")
		print("editor: %d passed, %d failed" % [_passed, _failed])
		await _quit(1)
		return
	await _frames(10)
	var shot_dir := ""
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--orogen-screenshot="):
			shot_dir = arg.trim_prefix("--orogen-screenshot=")
	if shot_dir != "":
		await _screenshot(shot_dir)
		await _quit(0)
		return
	await _run_all()
	print("editor: %d passed, %d failed" % [_passed, _failed])
	await _quit(1 if _failed > 0 else 0)


## Quits the editor with nothing selected.
##
## A node still selected when the editor quits leaves the tree during the editor's teardown,
## and EditorSelection queues a deferred `selection_changed` for it. In a windowed editor,
## EditorResourcePreview::stop() (on its own exit from the tree) flushes the message queue
## while it waits for its thread, so that signal can run after the Scene dock already left the
## tree: SceneTreeEditor::_update_selection then calls has_node() with the node's absolute path
## and the engine prints "Can't use get_node() with absolute paths from outside the active
## scene tree". Whether the flush happens is a race with the preview thread (more likely on a
## loaded machine). With an empty selection nothing is queued at teardown.
func _quit(code: int) -> void:
	EditorInterface.get_selection().clear()
	await _frames(3)
	get_tree().quit(code)


func _check(ok: bool, what: String) -> bool:
	if ok:
		_passed += 1
		print("  ok   %s" % what)
	else:
		_failed += 1
		printerr("  FAIL %s" % what)
	return ok


func _run_all() -> void:
	print("Orogen editor self-test")
	var dock: Control = _plugin.call(&"get_dock_content")
	_check(dock != null and dock.is_inside_tree(), "the plugin adds its dock to the editor")
	_check(bool(_plugin.call(&"uses_editor_dock")) == ClassDB.class_exists(&"EditorDock"),
			"the dock goes through EditorDock/add_dock exactly when EditorDock exists")
	if not _check(ClassDB.class_exists(&"TerrainWorld") and ClassDB.class_exists(&"ErosionSimulator")
			and ClassDB.class_exists(&"TerrainRecipe"), "the Orogen extension classes are registered"):
		return
	_check(String(dock.call(&"get_status_text")) == "" and dock.call(&"get_terrain") == null,
			"with nothing selected the dock follows no terrain")

	var terrain := await _open_test_scene(65, 20)
	if not _check(terrain != null, "a scene whose root is a TerrainWorld opens"):
		return
	_select(terrain)
	await _frames(2)
	_check(dock.call(&"get_terrain") == terrain, "selecting a TerrainWorld makes the dock follow it")

	var recipe: Resource = terrain.get(&"recipe")
	var d: Dictionary = recipe.call(&"to_dict")
	var panels: Array = dock.call(&"get_stage_panels")
	_check(panels.size() == (d["stages"] as Array).size(),
			"one stage panel per recipe stage (%d)" % panels.size())
	_check_param_sliders(recipe, panels)

	# Value edits are undoable.
	var ur := _history(terrain)
	var seed_before := int(d["seed"])
	var form := _part(dock, &"form")
	var seed_field := form.get(&"_seed") as SpinBox
	_check(int(seed_field.value) == seed_before, "the seed field shows the recipe's seed")
	seed_field.value = seed_before + 11
	_check(int(recipe.call(&"to_dict")["seed"]) == seed_before + 11, "typing a seed changes the recipe")
	ur.undo()
	_check(int(recipe.call(&"to_dict")["seed"]) == seed_before, "undo restores the seed")
	_check(await _wait_for(func() -> bool: return int(seed_field.value) == seed_before),
			"the seed field follows undo")
	ur.redo()
	_check(int(recipe.call(&"to_dict")["seed"]) == seed_before + 11, "redo applies it again")
	_check(await _wait_for(func() -> bool: return int(seed_field.value) == seed_before + 11),
			"the seed field follows redo")

	# Non-square cells: the field edits dx and keeps dy (it used to write one number back).
	var ron_square := String(recipe.get(&"ron"))
	var cell_field := form.get(&"_cell") as EditorSpinSlider
	dock.call(&"set_recipe_value", "cell_size", "(80.0, 100.0)")
	_check(await _wait_for(func() -> bool: return is_equal_approx(cell_field.value, 80.0)),
			"the cell size field shows dx of a (dx, dy) pair")
	cell_field.value = 90.0
	var cs = recipe.call(&"to_dict")["cell_size"]
	_check(typeof(cs) == TYPE_ARRAY and cs.size() == 2 and is_equal_approx(float(cs[0]), 90.0)
			and is_equal_approx(float(cs[1]), 100.0),
			"editing the cell size of a pair sets dx and keeps dy: %s" % [cs])
	# Two edits of cell_size in quick succession merge into one undo step.
	ur.undo()
	if String(recipe.get(&"ron")) != ron_square:
		ur.undo()
	_check(String(recipe.get(&"ron")) == ron_square, "undo restores the square cell size")

	# The domain: Graph puts a graph under the stages with a spacing field; Grid takes it away.
	var domain := form.get(&"_domain") as OptionButton
	var spacing := form.get(&"_spacing") as EditorSpinSlider
	var ron_grid := String(recipe.get(&"ron"))
	_check(domain.selected == 0 and not spacing.visible, "a grid recipe shows the Grid domain")
	domain.select(1)
	domain.item_selected.emit(1)
	var dom = recipe.call(&"to_dict").get("domain")
	_check(typeof(dom) == TYPE_DICTIONARY and (dom as Dictionary).has("Graph"),
			"choosing Graph sets a graph domain: %s" % [dom])
	_check(await _wait_for(func() -> bool: return spacing.visible), "the spacing field shows for a graph")
	spacing.value = 1234.0
	dom = recipe.call(&"to_dict").get("domain")
	_check(typeof(dom) == TYPE_DICTIONARY and is_equal_approx(float(dom["Graph"]["spacing"]), 1234.0),
			"the spacing field sets domain.Graph.spacing: %s" % [dom])
	domain.select(0)
	domain.item_selected.emit(0)
	_check(not String(recipe.get(&"ron")).contains("Graph"), "choosing Grid takes the graph away")
	_check(await _wait_for(func() -> bool: return not spacing.visible), "the spacing field hides for a grid")
	while String(recipe.get(&"ron")) != ron_grid and ur.has_undo():
		ur.undo()
	_check(String(recipe.get(&"ron")) == ron_grid, "undo restores the grid recipe")

	# An out-of-range value is shown as an error, not applied silently.
	var ron_before := String(recipe.get(&"ron"))
	dock.call(&"set_recipe_value", "cell_size", "-5.0")
	_check(String(dock.call(&"get_error_text")) != "", "an invalid cell size is reported in the dock: %s"
			% dock.call(&"get_error_text"))
	if String(recipe.get(&"ron")) != ron_before:
		ur.undo()
	_check(String(recipe.get(&"ron")) == ron_before, "the recipe keeps its valid cell size")
	# A recipe made invalid behind the dock's back (e.g. in the inspector) cannot be generated.
	var bad := RegEx.create_from_string("cell_size: *[0-9.eE+-]+").sub(ron_before, "cell_size: -5.0")
	recipe.set(&"ron", bad)
	# The dock's validation message starts with "Recipe:".
	_check(String(recipe.call(&"validate")) != "" and await _wait_for(func() -> bool:
			return String(dock.call(&"get_error_text")).begins_with("Recipe:")),
			"an invalid recipe set from outside is reported in the dock")
	_check(not bool(dock.call(&"generate")) and not bool(dock.call(&"is_generating")),
			"Generate refuses an invalid recipe")
	recipe.set(&"ron", ron_before)
	_check(await _wait_for(func() -> bool: return String(dock.call(&"get_error_text")) == ""),
			"the error clears once the recipe is valid again")

	# Stages: add, reorder, remove, undo.
	var kinds_before := _kinds(recipe)
	var names: PackedStringArray = recipe.call(&"get_stage_names")
	var new_kind := "Thermal" if names.has("Thermal") else names[0]
	dock.call(&"add_stage", new_kind)
	var kinds_added := _kinds(recipe)
	_check(kinds_added.size() == kinds_before.size() + 1 and kinds_added[kinds_added.size() - 1] == new_kind,
			"Add Stage appends a %s stage" % new_kind)
	_check((dock.call(&"get_stage_panels") as Array).size() == kinds_added.size(),
			"the stage list grows with it")
	if kinds_added.size() >= 2:
		var last := kinds_added.size() - 1
		dock.call(&"move_stage", last, -1)
		var moved := _kinds(recipe)
		_check(moved[last - 1] == kinds_added[last] and moved[last] == kinds_added[last - 1],
				"moving the last stage up swaps it with the one before")
		ur.undo()
		_check(_kinds(recipe) == kinds_added, "undo restores the order")
	dock.call(&"remove_stage", kinds_added.size() - 1)
	_check(_kinds(recipe) == kinds_before, "removing the new stage restores the stage list")
	ur.undo()
	_check(_kinds(recipe) == kinds_added, "undo brings the removed stage back")
	ur.undo()
	_check(_kinds(recipe) == kinds_before, "undo of Add Stage removes it")

	await _check_optional_param(dock, recipe, ur)
	await _check_layers_editor(dock, recipe, ur)

	# Generate: returns at once, updates the terrain, one undoable action.
	var old_data: Resource = terrain.get(&"data")
	var started := bool(dock.call(&"generate"))
	_check(started and bool(dock.call(&"is_generating")),
			"Generate starts and returns while the simulation runs (the editor is not blocked)")
	var ended: Array = await _wait_generation(dock)
	_check(ended[0] == true, "the generation finishes (%s)" % ended[1])
	var new_data: Resource = terrain.get(&"data")
	_check(new_data != null and new_data != old_data, "the terrain gets the generated data")
	var progress := _part(dock, &"run").get(&"_progress") as ProgressBar
	_check(is_equal_approx(progress.value, 1.0), "the progress bar ends full")
	await _frames(3)
	var map_names: PackedStringArray = terrain.call(&"get_map_names")
	var tiles: PackedStringArray = dock.call(&"get_map_tile_names")
	_check(map_names.size() > 0 and _same_set(tiles, map_names),
			"one thumbnail per map (%s)" % ", ".join(map_names))
	var all_textures := true
	for n: String in map_names:
		all_textures = all_textures and dock.call(&"get_map_texture", n) != null
	_check(all_textures, "every thumbnail has a texture")
	_check_layered_thumbnails()
	ur.undo()
	_check(terrain.get(&"data") == old_data, "undo restores the terrain as before Generate")
	ur.redo()
	_check(terrain.get(&"data") == new_data, "redo applies the generated terrain again")

	# Cancel: the terrain stays as it was.
	dock.call(&"set_recipe_value", "stages[0].iterations", "100000")
	var before_cancel: Resource = terrain.get(&"data")
	dock.call(&"generate")
	await _frames(2)
	dock.call(&"cancel_generation")
	ended = await _wait_generation(dock)
	_check(ended[0] == false and terrain.get(&"data") == before_cancel,
			"Cancel stops the generation and leaves the terrain as it was")
	ur.undo()

	# A failure during the run is shown in the dock, once, not a crash.
	# Through "Edit RON…": an uplift "image" that exists (so it validates) but is not an image.
	var not_png := FileAccess.open("res://orogen_missing_uplift.png", FileAccess.WRITE)
	not_png.store_string("not a PNG")
	not_png.close()
	var ron_now := String(recipe.get(&"ron"))
	var with_missing: Dictionary = recipe.call(&"to_dict")
	with_missing["uplift"] = {"Image": {"path": "orogen_missing_uplift.png", "min": 0.0, "max": 0.001}}
	var scratch := ClassDB.instantiate(&"TerrainRecipe") as Resource
	var from_err := String(scratch.call(&"from_dict", with_missing))
	var missing := String(scratch.get(&"ron"))
	(form.get(&"_ron_edit") as CodeEdit).text = missing
	form.call(&"_on_ron_dialog_confirmed")
	var uplift: Variant = (recipe.call(&"to_dict") as Dictionary).get("uplift")
	_check(from_err == "" and missing != ron_now and uplift is Dictionary and (uplift as Dictionary).has("Image"),
			"Edit RON applies a recipe whose uplift image is not an image (it validates) %s" % from_err)
	var before_fail: Resource = terrain.get(&"data")
	dock.call(&"generate")
	ended = await _wait_generation(dock)
	var err_text := String(dock.call(&"get_error_text"))
	_check(ended[0] == false and err_text != "", "a failing run shows its error in the dock: %s (%s)"
			% [err_text, ended[1]])
	_check(err_text.count(String(ended[1])) == 1 and not String(dock.call(&"get_status_text")).contains(String(ended[1])),
			"the dock shows that error once")
	DirAccess.remove_absolute(ProjectSettings.globalize_path("res://orogen_missing_uplift.png"))
	_check(terrain.get(&"data") == before_fail, "a failed run leaves the terrain as it was")
	ur.undo()

	# Bake.
	var bake_err := String(dock.call(&"bake_to", BAKE_DIR))
	_check(bake_err == "", "Bake writes the folder %s" % bake_err)
	var files := DirAccess.get_files_at(BAKE_DIR)
	_check(files.has("terrain.res") and files.size() > 1, "the bake folder holds terrain.res and the maps (%s)"
			% ", ".join(files))
	var baked := ResourceLoader.load(BAKE_DIR.path_join("terrain.res"), "", ResourceLoader.CACHE_MODE_IGNORE)
	_check(baked != null and baked.get_class() == String(new_data.get_class()), "terrain.res loads back as TerrainData")
	# Save for Terrain3D / HTerrain (the folders get the addons' files and a README.txt).
	var t3d_dir := ProjectSettings.globalize_path("user://orogen_editor_test_terrain3d")
	var t3d_err := String(dock.call(&"save_for_terrain3d_to", t3d_dir, 64))
	_check(t3d_err == "" and FileAccess.file_exists(t3d_dir.path_join("height_0_0.exr"))
			and FileAccess.file_exists(t3d_dir.path_join("README.txt")),
			"Save for Terrain3D writes the region tiles and a README.txt %s" % t3d_err)
	var ht_dir := ProjectSettings.globalize_path("user://orogen_editor_test_hterrain")
	var ht_err := String(dock.call(&"save_for_hterrain_to", ht_dir))
	_check(ht_err == "" and FileAccess.file_exists(ht_dir.path_join("height.exr"))
			and FileAccess.file_exists(ht_dir.path_join("splat.png")),
			"Save for HTerrain writes height.exr and splat.png %s" % ht_err)
	_check(String(dock.call(&"save_for_terrain3d_to", t3d_dir, 100)).contains("region-size")
			and String(dock.call(&"get_error_text")).contains("region-size"),
			"a region size Terrain3D has not shows an error naming region-size")

	# RON export / import.
	_check(String(dock.call(&"export_ron", RON_PATH)) == "" and FileAccess.file_exists(RON_PATH),
			"Export writes a .ron file")
	var seed_now := int(recipe.call(&"to_dict")["seed"])
	dock.call(&"set_recipe_value", "seed", str(seed_now + 5))
	_check(String(dock.call(&"import_ron", RON_PATH)) == "" and int(recipe.call(&"to_dict")["seed"]) == seed_now,
			"Import reads it back")
	_check(String(dock.call(&"import_ron", "user://no_such_recipe.ron")) != ""
			and String(dock.call(&"get_error_text")) != "", "importing a missing file shows an error")

	# The file dialogs and the RON editor open in the right mode.
	var bake := _part(dock, &"bake")
	var dialog := bake.get(&"_file_dialog") as EditorFileDialog
	var modes := {"import": EditorFileDialog.FILE_MODE_OPEN_FILE,
			"export": EditorFileDialog.FILE_MODE_SAVE_FILE, "bake": EditorFileDialog.FILE_MODE_OPEN_DIR,
			"terrain3d": EditorFileDialog.FILE_MODE_OPEN_DIR, "hterrain": EditorFileDialog.FILE_MODE_OPEN_DIR}
	for action: String in modes:
		bake.call(&"open_file_dialog", action)
		await _frames(2)
		_check(dialog.visible and dialog.file_mode == modes[action], "the %s dialog opens (mode %d)"
				% [action, dialog.file_mode])
		dialog.hide()
	form.call(&"open_ron_dialog")
	await _frames(2)
	var ron_dialog := form.get(&"_ron_dialog") as ConfirmationDialog
	_check(ron_dialog.visible and (form.get(&"_ron_edit") as CodeEdit).text == String(recipe.get(&"ron")),
			"Edit RON opens with the recipe's text")
	ron_dialog.hide()

	# A terrain without a recipe: the dock offers one, as an undoable action. The dock follows
	# the terrain's recipe_changed signal, with no refresh from here.
	_check(_connections(recipe, &"changed", dock) == 1, "the dock listens to its recipe's changed signal once")
	terrain.set(&"recipe", null)
	var no_recipe_box := form.get(&"_no_recipe_box") as Control
	_check(no_recipe_box.visible and (_part(dock, &"run").get(&"_generate_button") as Button).disabled,
			"without a recipe the dock offers New Recipe and Generate is off")
	_check(_connections(recipe, &"changed", dock) == 0,
			"a recipe taken off the terrain is no longer listened to")
	form.call(&"create_recipe")
	var created: Resource = terrain.get(&"recipe")
	_check(created != null and String(created.call(&"validate")) == "",
			"New Recipe gives the terrain a valid default recipe")
	_check(not no_recipe_box.visible and not (_part(dock, &"run").get(&"_generate_button") as Button).disabled,
			"the dock shows the new recipe and Generate is on")
	ur.undo()
	_check(terrain.get(&"recipe") == null, "undo takes the new recipe away")
	ur.redo()
	_check(terrain.get(&"recipe") == created, "redo gives it back")
	_check(_connections(created, &"changed", dock) == 1, "the dock listens to the new recipe once")
	created.call(&"set_value", "seed", "4242")
	_check(await _wait_for(func() -> bool: return int((form.get(&"_seed") as SpinBox).value) == 4242),
			"an edit of the new recipe outside the dock shows in the form")
	terrain.set(&"recipe", recipe)
	_check(_connections(created, &"changed", dock) == 0 and _connections(recipe, &"changed", dock) == 1,
			"giving the old recipe back moves the dock's connection to it")

	# Selecting something else.
	var other := Node3D.new()
	other.name = "NotATerrain"
	terrain.add_child(other)
	other.owner = terrain
	_select(other)
	await _frames(2)
	_check(dock.call(&"get_terrain") == null, "selecting another node leaves the terrain")
	_check(_connections(recipe, &"changed", dock) + _connections(terrain, &"data_changed", dock)
			+ _connections(terrain, &"recipe_changed", dock) == 0,
			"the dock keeps no connection to a terrain it left, nor to its recipe")
	_select(terrain)
	await _frames(2)
	_check(dock.call(&"get_terrain") == terrain, "selecting the terrain again follows it")
	_check(_connections(recipe, &"changed", dock) == 1 and _connections(terrain, &"data_changed", dock) == 1
			and _connections(terrain, &"recipe_changed", dock) == 1,
			"following it again connects once to each of its signals")

	await _check_paint(dock, terrain, ur)
	await _check_planet(dock, terrain)
	await preload("res://tests/editor/docs_test.gd").new().run(self, dock, terrain)
	await preload("res://tests/editor/presets_test.gd").new().run(self, dock, terrain)
	await preload("res://tests/editor/data_files_test.gd").new().run(self, dock, terrain)
	_select(terrain)
	await _frames(2)
	await preload("res://tests/editor/brushes_test.gd").new().run(self, dock, terrain)
	await preload("res://tests/editor/ground_paint_test.gd").new().run(self, dock, terrain)

	# Disabling the plugin removes the dock; enabling adds it back.
	EditorInterface.set_plugin_enabled("orogen", false)
	# Checked before the dock is freed (which would drop its connections anyway).
	_check(is_instance_valid(dock) and _connections(recipe, &"changed", dock)
			+ _connections(terrain, &"data_changed", dock) + _connections(terrain, &"recipe_changed", dock) == 0,
			"disabling the plugin disconnects the dock from the terrain and its recipe")
	await _frames(3)
	_check(not is_instance_valid(dock) or not dock.is_inside_tree(), "disabling the plugin removes the dock")
	EditorInterface.set_plugin_enabled("orogen", true)
	await _frames(3)
	_check(EditorInterface.is_plugin_enabled("orogen") and _find_dock() != null,
			"enabling the plugin adds the dock again")
	_cleanup()


## The Paint section: a stroke through the plugin's viewport input paints the uplift as one
## undo step; Clear is undoable; Live erosion runs while painting, keeps Generate off, and
## turning it off applies the eroded terrain.
func _check_paint(dock: Control, terrain: Node3D, ur: UndoRedo) -> void:
	var paint: RefCounted = dock.call(&"get_paint_part")
	if not _check(paint != null, "the dock has a Paint section"):
		return
	var painter: RefCounted = paint.get(&"painter")
	painter.set(&"radius", 600.0)
	paint.call(&"set_active", true)
	var vp := EditorInterface.get_editor_viewport_3d(0)
	var cam := vp.get_camera_3d()
	# Look straight down on the terrain's middle from above.
	cam.global_transform = Transform3D(Basis.looking_at(Vector3.DOWN, Vector3.FORWARD), Vector3(0, 20000, 0))
	var centre := Vector2(vp.size) * 0.5
	var press := InputEventMouseButton.new()
	press.button_index = MOUSE_BUTTON_LEFT
	press.pressed = true
	press.position = centre
	var used := int(_plugin.call(&"_forward_3d_gui_input", cam, press))
	var motion := InputEventMouseMotion.new()
	motion.position = centre + Vector2(40, 0)
	motion.button_mask = MOUSE_BUTTON_MASK_LEFT
	cam.global_transform = Transform3D(Basis.looking_at(Vector3.DOWN, Vector3.FORWARD), Vector3(0, 20000, 0))
	_plugin.call(&"_forward_3d_gui_input", cam, motion)
	var release := InputEventMouseButton.new()
	release.button_index = MOUSE_BUTTON_LEFT
	release.pressed = false
	release.position = motion.position
	_plugin.call(&"_forward_3d_gui_input", cam, release)
	_check(used == EditorPlugin.AFTER_GUI_INPUT_STOP and bool(terrain.call(&"has_paint", "uplift")),
			"a left drag in the viewport with Paint on paints the uplift")
	var painted: PackedFloat32Array = terrain.call(&"get_paint_values", "uplift")
	ur.undo()
	_check(not bool(terrain.call(&"has_paint", "uplift")), "undo takes the stroke back (one step)")
	ur.redo()
	_check(PackedFloat32Array(terrain.call(&"get_paint_values", "uplift")).to_byte_array()
			== painted.to_byte_array(), "redo paints it again, byte for byte")
	paint.call(&"clear_map", "uplift")
	_check(not bool(terrain.call(&"has_paint", "uplift")), "Clear forgets the painted uplift")
	ur.undo()
	_check(bool(terrain.call(&"has_paint", "uplift")), "undo brings it back")
	paint.call(&"set_active", false)
	_check(int(_plugin.call(&"_forward_3d_gui_input", cam, press)) == EditorPlugin.AFTER_GUI_INPUT_PASS,
			"with Paint off the viewport's clicks pass")

	# Live erosion.
	_check(String(paint.call(&"set_live", true)) == "" and bool(paint.call(&"is_live")), "Live erosion starts")
	var sim: Node = paint.call(&"get_live_simulator")
	_check(await _wait_for(func() -> bool: return int(sim.call(&"get_refresh_count")) > 2),
			"the terrain refreshes while live")
	_check(not bool(dock.call(&"generate")), "Generate waits while live erosion runs")
	painter.call(&"begin_stroke", terrain, Vector3(0, 0, 0))
	painter.call(&"end_stroke", null)
	var before: Resource = terrain.get(&"data")
	paint.call(&"set_live", false)
	_check(await _wait_for(func() -> bool: return not bool(paint.call(&"is_live"))), "Live erosion stops")
	_check(terrain.get(&"data") != before and terrain.get(&"data") != null,
			"stopping applies the eroded terrain")
	_check(not bool(_part(dock, &"ctx").get(&"live")), "the dock is idle again")
	terrain.call(&"clear_paint", "uplift")


## The planet part: selecting a PlanetWorld shows it; Simulate runs the plates off the main
## thread; Strongest collision and a click on the planet (Pick) centre the region; Make
## TerrainWorld adds a terrain whose recipe takes the region's uplift, as one undoable action.
func _check_planet(dock: Control, root: Node3D) -> void:
	if not _check(ClassDB.class_exists(&"PlanetWorld"), "the PlanetWorld class is registered"):
		return
	var planet := ClassDB.instantiate(&"PlanetWorld") as Node3D
	planet.name = "TestPlanet"
	planet.set(&"points", 3000)
	planet.set(&"plates", 8)
	planet.set(&"steps", 30)
	root.add_child(planet)
	planet.owner = root
	_select(planet)
	await _frames(2)
	var part: Object = dock.get(&"planet_part")
	_check(part != null and part.get(&"planet") == planet and (part.get(&"box") as Control).visible,
			"selecting a PlanetWorld shows the dock's planet part")
	part.call(&"simulate")
	_check(bool(planet.call(&"is_running")), "Simulate starts the planet and returns at once")
	var start := Time.get_ticks_msec()
	while bool(planet.call(&"is_running")) and Time.get_ticks_msec() - start < GENERATION_TIMEOUT * 1000.0:
		await get_tree().process_frame
	_check(int(planet.call(&"get_point_count")) > 0 and int(planet.call(&"get_steps_done")) == 30,
			"the planet finishes its 30 steps (%d points)" % int(planet.call(&"get_point_count")))
	_check(bool(part.call(&"strongest_collision")), "Strongest collision centres the region")
	var at: Vector2 = planet.call(&"greatest_uplift")
	_check(absf((part.get(&"lat") as SpinBox).value - at.x) < 0.06, "the latitude field shows it")
	# A click on the planet's centre in the 3D viewport, with Pick on.
	var camera := EditorInterface.get_editor_viewport_3d(0).get_camera_3d()
	camera.global_position = planet.global_position + Vector3(0, 0, 40)
	camera.look_at(planet.global_position)
	(part.get(&"pick_toggle") as CheckButton).button_pressed = true
	var click := InputEventMouseButton.new()
	click.button_index = MOUSE_BUTTON_LEFT
	click.pressed = true
	click.position = camera.unproject_position(planet.global_position)
	var picked: bool = _plugin.call(&"_forward_3d_gui_input", camera, click) == EditorPlugin.AFTER_GUI_INPUT_STOP
	_check(picked and absf((part.get(&"lat") as SpinBox).value) < 1.0
			and absf(absf((part.get(&"lon") as SpinBox).value) - 90.0) < 1.0,
			"a click on the planet picks the point facing the camera (lat %.2f, lon %.2f)" % [
				(part.get(&"lat") as SpinBox).value, (part.get(&"lon") as SpinBox).value])
	(part.get(&"pick_toggle") as CheckButton).button_pressed = false
	_check(_plugin.call(&"_forward_3d_gui_input", camera, click) == EditorPlugin.AFTER_GUI_INPUT_PASS,
			"with Pick off the click goes to the editor")
	part.call(&"strongest_collision")
	var before := root.get_child_count()
	var made: Node = part.call(&"make_terrain")
	var ok := made != null and made.get_parent() == root and root.get_child_count() == before + 1
	var recipe: Resource = made.get(&"recipe") if made != null else null
	_check(ok and recipe != null and String(recipe.call(&"validate")) == ""
			and String(recipe.get(&"ron")).contains("Planet("),
			"Make TerrainWorld adds a terrain whose valid recipe takes the planet region")
	var ur := _history(planet)
	ur.undo()
	_check(root.get_child_count() == before, "undo removes the made terrain")
	ur.redo()
	_check(root.get_child_count() == before + 1, "redo adds it back")
	ur.undo()
	_select(root)
	await _frames(2)
	_check(not (part.get(&"box") as Control).visible, "selecting a TerrainWorld hides the planet part")
	root.remove_child(planet)
	planet.free()


## Drives the materials and strata editor as a user would: Add Material, a talus angle typed
## in, out-of-range values (talus 95°, susceptibility 1.5, a negative thickness, an unknown
## material) refused with the core's message naming the field and the recipe unchanged, Add
## Layer, rename and remove with the strata following, undo. Puts the recipe back at the end.
func _check_layers_editor(dock: Control, recipe: Resource, ur: UndoRedo) -> void:
	var ron_start := String(recipe.get(&"ron"))
	var layers_form: Object = dock.call(&"get_layers_form")
	var count := _materials(recipe).size()
	(layers_form.get(&"_add_material_button") as Button).pressed.emit()
	var mats := _materials(recipe)
	_check(mats.size() == count + 1 and String((mats[count] as Dictionary)["name"]) == "material_1",
			"Add Material appends a material (%s)" % [mats])
	var panels: Array = dock.call(&"get_material_panels")
	_check(panels.size() == count + 1, "one material panel per material (%d)" % panels.size())
	if panels.size() != count + 1:
		return
	var panel: Node = panels[count]
	var sliders: Dictionary = panel.get(&"sliders")
	var talus := sliders.get("talus_deg") as EditorSpinSlider
	var fields: Array = recipe.call(&"describe_material_fields")
	var units_ok := true
	for info: Dictionary in fields:
		if String(info["kind"]) != "Number":
			continue
		var s := sliders.get(String(info["name"])) as EditorSpinSlider
		units_ok = units_ok and s != null and s.suffix == StagePanel.unit_suffix(String(info["unit"])) \
				and is_equal_approx(s.min_value, float(info["min"])) and is_equal_approx(s.max_value, float(info["max"]))
	_check(units_ok and talus != null and talus.suffix == "°" and talus.max_value == 90.0,
			"each material field has a slider with its unit and range (talus in °, 0 … 90)")
	_check(panel.get(&"colour_button") is ColorPickerButton, "the material's colour is a colour picker")
	talus.value = 42.0
	_check(is_equal_approx(float((_materials(recipe)[count] as Dictionary)["talus_deg"]), 42.0),
			"typing a talus angle changes the recipe")
	var ron_ok := String(recipe.get(&"ron"))
	talus.value = 95.0
	var err := String(dock.call(&"get_error_text"))
	_check(err.contains("materials[%d].talus_deg" % count), "talus 95° is refused naming the field: %s" % err)
	_check(String(recipe.get(&"ron")) == ron_ok, "the refused talus leaves the recipe unchanged")
	_check(await _wait_for(func() -> bool:
			var p: Array = dock.call(&"get_material_panels")
			return p.size() > count and is_equal_approx(
					((p[count] as Node).get(&"sliders")["talus_deg"] as EditorSpinSlider).value, 42.0)),
			"the talus slider goes back to the recipe's 42°")
	_check(String(dock.call(&"get_error_text")).contains("talus_deg"), "and the message stays shown")
	panel = (dock.call(&"get_material_panels") as Array)[count]
	(panel.get(&"sliders")["thermal_susceptibility"] as EditorSpinSlider).value = 1.5
	err = String(dock.call(&"get_error_text"))
	_check(err.contains("materials[%d].thermal_susceptibility" % count) and String(recipe.get(&"ron")) == ron_ok,
			"susceptibility 1.5 is refused naming the field: %s" % err)
	ur.undo()
	_check(is_equal_approx(float((_materials(recipe)[count] as Dictionary)["talus_deg"]), 35.0),
			"undo puts the talus angle back")
	ur.redo()

	# Strata: Add Layer creates them with a layer of the material picked beside it.
	var pick := layers_form.get(&"_add_layer_material") as OptionButton
	for i in pick.item_count:
		if pick.get_item_text(i) == "material_1":
			pick.select(i)
	(layers_form.get(&"_add_layer_button") as Button).pressed.emit()
	var strata: Variant = (recipe.call(&"to_dict") as Dictionary).get("strata")
	var layers: Array = (strata as Dictionary).get("layers", []) if strata is Dictionary else []
	_check(layers.size() == 1 and String((layers[0] as Dictionary)["material"]) == "material_1"
			and is_equal_approx(float(((layers[0] as Dictionary)["thickness"] as Dictionary)["Constant"]), 50.0),
			"Add Layer creates the strata with a 50 m layer of the picked material (%s)" % [strata])
	var rows: Array = layers_form.get(&"layer_rows")
	var controls: Dictionary = layers_form.get(&"strata_controls")
	_check(rows.size() == 1 and rows[0]["thickness"] is EditorSpinSlider
			and (rows[0]["thickness"] as EditorSpinSlider).suffix == "m"
			and (controls.get("dip_deg") as EditorSpinSlider).suffix == "°"
			and controls.get("bottom") is OptionButton and controls.get("top.set") is CheckBox,
			"the strata show their fields with units (%s)" % [controls.keys()])
	var ron_strata := String(recipe.get(&"ron"))
	if rows.size() == 1:
		(rows[0]["thickness"] as EditorSpinSlider).value = -5.0
		err = String(dock.call(&"get_error_text"))
		_check(err.contains("strata.layers[0].thickness") and String(recipe.get(&"ron")) == ron_strata,
				"a negative thickness is refused naming the field: %s" % err)
	err = String(layers_form.call(&"set_value", "strata.layers[0].material", "\"marble\""))
	_check(err.contains("strata.layers[0].material") and String(dock.call(&"get_error_text")) == err
			and String(recipe.get(&"ron")) == ron_strata, "an unknown material is refused naming the field: %s" % err)
	err = String(layers_form.call(&"remove_material", count))
	_check(err.contains("strata.layers[0].material") and String(recipe.get(&"ron")) == ron_strata,
			"a material a layer uses cannot be removed: %s" % err)
	panels = dock.call(&"get_material_panels")
	if not _check(panels.size() == count + 1, "the material is still there"):
		recipe.set(&"ron", ron_start)
		return
	panel = panels[count]
	(panel.get(&"name_edit") as LineEdit).text = "basalt"
	(panel.get(&"name_edit") as LineEdit).text_submitted.emit("basalt")
	var after: Dictionary = recipe.call(&"to_dict")
	_check(String((after["materials"][count] as Dictionary)["name"]) == "basalt"
			and String((after["strata"]["layers"][0] as Dictionary)["material"]) == "basalt",
			"renaming a material renames its layers too")
	_check(String(layers_form.call(&"remove_stratum", 0)) == ""
			and ((recipe.call(&"to_dict") as Dictionary)["strata"]["layers"] as Array).is_empty(),
			"Remove Layer empties the strata")
	_check(String(layers_form.call(&"remove_material", count)) == "" and _materials(recipe).size() == count,
			"an unused material can be removed")
	recipe.set(&"ron", ron_start)
	_check(await _wait_for(func() -> bool: return (dock.call(&"get_material_panels") as Array).size() == count),
			"the editor follows the recipe put back")


## The thumbnails of a layered terrain's maps: the exposed-material index (0, 1, 2, …) spread
## over the grey levels rather than near black, a 0/255 mask as it is, RGBA maps without alpha.
func _check_layered_thumbnails() -> void:
	var index := Image.create_empty(4, 1, false, Image.FORMAT_L8)
	for x in 4:
		index.set_pixel(x, 0, Color8(x, x, x))
	var shown := ((MapPreview.make("material", index)["texture"]) as Texture2D).get_image()
	_check(shown.get_pixel(3, 0).r8 == 255 and shown.get_pixel(1, 0).r8 == 85,
			"the material thumbnail spreads its indices over the grey levels")
	var mask := Image.create_empty(2, 1, false, Image.FORMAT_L8)
	mask.set_pixel(1, 0, Color8(255, 255, 255))
	var mask_shown := ((MapPreview.make("rivers", mask)["texture"]) as Texture2D).get_image()
	_check(mask_shown.get_pixel(1, 0).r8 == 255 and mask_shown.get_pixel(0, 0).r8 == 0,
			"a mask thumbnail is shown as it is")
	var splat := Image.create_empty(1, 1, false, Image.FORMAT_RGBA8)
	splat.set_pixel(0, 0, Color8(255, 0, 0, 0))
	var splat_shown := ((MapPreview.make("splat", splat)["texture"]) as Texture2D).get_image()
	_check(splat_shown.get_format() == Image.FORMAT_RGB8 and splat_shown.get_pixel(0, 0).r8 == 255,
			"an RGBA thumbnail is drawn without its alpha")


func _materials(recipe: Resource) -> Array:
	var d: Dictionary = recipe.call(&"to_dict")
	return d.get("materials", []) if typeof(d.get("materials")) == TYPE_ARRAY else []


## An optional stage parameter (Hydraulic's `chezy`, None = frictionless) is set with its
## checkbox and cleared back to None, each an undoable step, through the recipe's text.
func _check_optional_param(dock: Control, recipe: Resource, ur: UndoRedo) -> void:
	var ron_before := String(recipe.get(&"ron"))
	if not _check(String(dock.call(&"add_stage", "Hydraulic")) == "", "a Hydraulic stage is added"):
		return
	var i := _kinds(recipe).size() - 1
	var panel: Node = (dock.call(&"get_stage_panels") as Array)[i]
	var toggle := (panel.get(&"toggles") as Dictionary).get("chezy") as CheckBox
	var slider := (panel.get(&"sliders") as Dictionary).get("chezy") as EditorSpinSlider
	if not _check(toggle != null and slider != null and not toggle.button_pressed and slider.read_only
			and _stage_value(recipe, i, "chezy") == null,
			"chezy (None) shows an unticked checkbox beside a read-only slider"):
		ur.undo()
		return
	toggle.button_pressed = true
	var on: Variant = _stage_value(recipe, i, "chezy")
	_check(on != null and is_equal_approx(float(on), slider.value) and not slider.read_only
			and String(recipe.get(&"ron")).contains("chezy: "),
			"ticking chezy writes the slider's value into the recipe text (%s)" % [on])
	slider.value = 35.0
	_check(_stage_value(recipe, i, "chezy") == 35.0, "the slider then edits chezy (35)")
	toggle.button_pressed = false
	var text := String(recipe.get(&"ron"))
	var reread := ClassDB.instantiate(&"TerrainRecipe") as Resource
	reread.set(&"ron", text)
	_check(_stage_value(recipe, i, "chezy") == null and _stage_value(reread, i, "chezy") == null
			and not text.contains("chezy: 35") and slider.read_only,
			"unticking writes None: the recipe text, read again, has no chezy")
	ur.undo()
	_check(_stage_value(recipe, i, "chezy") == 35.0, "undo of the untick gives chezy 35 back")
	var shows_35 := func() -> bool:
		var p: Array = dock.call(&"get_stage_panels")
		if p.size() <= i or not is_instance_valid(p[i]):
			return false
		var t := (p[i].get(&"toggles") as Dictionary).get("chezy") as CheckBox
		var s := (p[i].get(&"sliders") as Dictionary).get("chezy") as EditorSpinSlider
		return t != null and t.button_pressed and s != null and is_equal_approx(s.value, 35.0) \
				and not s.read_only
	_check(await _wait_for(shows_35), "the stage panel follows: chezy ticked at 35")
	ur.undo()
	ur.undo()
	_check(_stage_value(recipe, i, "chezy") == null, "undo of the tick leaves chezy None again")
	ur.undo()
	_check(String(recipe.get(&"ron")) == ron_before, "undo of Add Stage restores the recipe")


## Stage `i`'s field `param` as to_dict gives it (null for None).
func _stage_value(recipe: Resource, i: int, param: String) -> Variant:
	var stages: Array = recipe.call(&"to_dict").get("stages", [])
	if i >= stages.size():
		return "missing"
	var stage: Dictionary = stages[i]
	return (stage[stage.keys()[0]] as Dictionary).get(param, "missing")


func _check_param_sliders(recipe: Resource, panels: Array) -> void:
	var d: Dictionary = recipe.call(&"to_dict")
	var stages: Array = d["stages"]
	var all_ok := true
	var described := 0
	var mm_per_yr := 0
	var k_label := ""
	for i in mini(stages.size(), panels.size()):
		var stage: Dictionary = stages[i]
		var kind := String(stage.keys()[0])
		var values: Dictionary = stage[kind]
		var sliders: Dictionary = panels[i].get(&"sliders")
		for info: Dictionary in recipe.call(&"describe_stage", kind):
			var pname := String(info["name"])
			if not values.has(pname):
				continue
			described += 1
			var slider := sliders.get(pname) as EditorSpinSlider
			var scale := float(info["display_scale"]) if typeof(values[pname]) == TYPE_FLOAT else 1.0
			var label := ((panels[i].get(&"labels") as Dictionary).get(pname)) as Label
			if slider == null or slider.suffix != StagePanel.unit_suffix(String(info["display_unit"])) \
					or not is_equal_approx(slider.min_value, float(info["min"]) * scale) \
					or (values[pname] != null and not is_equal_approx(slider.value, float(values[pname]) * scale)) \
					or label == null or label.text != String(info["label"]):
				all_ok = false
				printerr("  note slider for %s.%s does not match %s" % [kind, pname, info])
			if String(info["display_unit"]) == "mm/yr":
				mm_per_yr += 1
			if pname == "dt":
				k_label = label.text if label != null else "(none)"
	_check(all_ok, "each described parameter has a slider with its words, display unit and minimum (%d)" % described)
	_check(k_label == "Time step",
			"stage fields read in words (dt: \"%s\"), %d in mm/yr" % [k_label, mm_per_yr])


## Opens a scene whose root is a TerrainWorld with the default recipe at `side`² cells and
## `iterations` per stage; `layered` adds sandstone and shale strata over granite.
func _open_test_scene(side: int, iterations: int, layered := false) -> Node3D:
	var root := ClassDB.instantiate(&"TerrainWorld") as Node3D
	root.name = "TestTerrain"
	var recipe := ClassDB.instantiate(&"TerrainRecipe") as Resource
	recipe.call(&"set_value", "size", "(%d, %d)" % [side, side])
	var d: Dictionary = recipe.call(&"to_dict")
	for i in (d["stages"] as Array).size():
		var stage: Dictionary = d["stages"][i]
		if (stage[stage.keys()[0]] as Dictionary).has("iterations"):
			recipe.call(&"set_value", "stages[%d].iterations" % i, str(iterations))
	if layered:
		for step: Array in [["add_material", "sandstone"], ["add_material", "shale"],
				["add_stratum", "sandstone", 40.0], ["add_stratum", "shale", 30.0],
				["set_value", "strata.repeat", "10"], ["set_value", "strata.bottom", "\"granite\""]]:
			var err := String(recipe.callv(StringName(step[0]), step.slice(1)))
			if err != "":
				printerr("layered test recipe: %s" % err)
	root.set(&"recipe", recipe)
	var packed := PackedScene.new()
	packed.pack(root)
	root.free()
	var err := ResourceSaver.save(packed, SCENE_PATH)
	if err != OK:
		printerr("cannot save %s: %s" % [SCENE_PATH, error_string(err)])
		return null
	EditorInterface.get_resource_filesystem().update_file(SCENE_PATH)
	EditorInterface.open_scene_from_path(SCENE_PATH)
	await _frames(5)
	return EditorInterface.get_edited_scene_root() as Node3D


func _select(node: Node) -> void:
	var selection := EditorInterface.get_selection()
	selection.clear()
	selection.add_node(node)


func _history(obj: Object) -> UndoRedo:
	var ur := EditorInterface.get_editor_undo_redo()
	return ur.get_history_undo_redo(ur.get_object_history_id(obj))


## Waits for the dock's generation_ended; returns [ok, message] ([false, "timeout"] after
## GENERATION_TIMEOUT seconds).
func _wait_generation(dock: Control) -> Array:
	var result: Array = []
	var on_end := func(ok: bool, message: String) -> void:
		result.append(ok)
		result.append(message)
	dock.connect(&"generation_ended", on_end, CONNECT_ONE_SHOT)
	var start := Time.get_ticks_msec()
	while result.is_empty() and bool(dock.call(&"is_generating")):
		if Time.get_ticks_msec() - start > GENERATION_TIMEOUT * 1000.0:
			dock.call(&"cancel_generation")
			return [false, "timeout"]
		await get_tree().process_frame
	if dock.is_connected(&"generation_ended", on_end):
		dock.disconnect(&"generation_ended", on_end)
	if result.is_empty():
		return [false, "ended without generation_ended"]
	return result


func _kinds(recipe: Resource) -> PackedStringArray:
	var out := PackedStringArray()
	for stage: Dictionary in recipe.call(&"to_dict")["stages"]:
		out.append(String(stage.keys()[0]))
	return out


func _same_set(a: PackedStringArray, b: PackedStringArray) -> bool:
	if a.size() != b.size():
		return false
	for s: String in a:
		if not b.has(s):
			return false
	return true


func _find_dock() -> Control:
	var plugin := _plugin if is_instance_valid(_plugin) and _plugin.is_inside_tree() else _find_plugin()
	var content: Control = plugin.call(&"get_dock_content") if plugin != null else null
	if content != null and content.is_inside_tree():
		return content
	return null


## The Orogen plugin's instance (EditorNode holds the plugins as children), or null.
func _find_plugin() -> EditorPlugin:
	var editor_node := EditorInterface.get_base_control().get_parent()
	if editor_node == null:
		return null
	for child: Node in editor_node.get_children():
		var script := child.get_script() as Script
		if child is EditorPlugin and script != null and script.resource_path == PLUGIN_SCRIPT:
			return child as EditorPlugin
	return null


## One of the dock's parts (orogen_dock.gd: form, run, maps, bake).
func _part(dock: Control, part: StringName) -> Object:
	return dock.get(part) as Object


## How many of `obj`'s `sig` connections go to `dock` or to one of its parts.
func _connections(obj: Object, sig: StringName, dock: Object) -> int:
	var targets: Array[Object] = [dock]
	if is_instance_valid(dock):
		for part: StringName in [&"ctx", &"form", &"run", &"maps", &"bake"]:
			targets.append(dock.get(part) as Object)
	var count := 0
	for c: Dictionary in obj.get_signal_connection_list(sig):
		if targets.has((c["callable"] as Callable).get_object()):
			count += 1
	return count


## Waits until `condition` holds (the dock follows outside changes through signals, some at
## the end of the frame); false if it still does not after 10 s. A bound on waiting, not a
## speed check.
func _wait_for(condition: Callable) -> bool:
	var start := Time.get_ticks_msec()
	while not bool(condition.call()):
		if Time.get_ticks_msec() - start > 10000:
			return false
		await get_tree().process_frame
	return true


func _frames(n: int) -> void:
	for _i in n:
		await get_tree().process_frame


func _cleanup() -> void:
	for f: String in DirAccess.get_files_at(BAKE_DIR):
		DirAccess.remove_absolute(ProjectSettings.globalize_path(BAKE_DIR.path_join(f)))
	DirAccess.remove_absolute(ProjectSettings.globalize_path(BAKE_DIR))
	DirAccess.remove_absolute(ProjectSettings.globalize_path(RON_PATH))


# --- Screenshot mode -----------------------------------------------------------------------

## The screenshot's last view: a PlanetWorld beside the terrain, simulated, selected, its
## region on the strongest collision.
func _show_planet(dock: Control) -> void:
	var root := EditorInterface.get_edited_scene_root()
	if root == null or not ClassDB.class_exists(&"PlanetWorld"):
		return
	var planet := ClassDB.instantiate(&"PlanetWorld") as Node3D
	planet.name = "Planet"
	planet.set(&"points", 8000)
	planet.set(&"steps", 60)
	planet.set(&"display_radius", 2.0)
	# The root terrain is shrunk to a few units (see _screenshot): undo that for the planet.
	var shrink: float = maxf(root.scale.x, 1e-9)
	planet.scale = Vector3.ONE / shrink
	planet.position = Vector3(0, 3.5, 0) / shrink
	root.add_child(planet)
	planet.owner = root
	_select(planet)
	await _frames(3)
	var part: Object = dock.get(&"planet_part")
	part.call(&"simulate")
	var start := Time.get_ticks_msec()
	while bool(planet.call(&"is_running")) and Time.get_ticks_msec() - start < 120000:
		await get_tree().process_frame
	part.call(&"strongest_collision")
	(dock as ScrollContainer).scroll_vertical = 0


func _screenshot(dir: String) -> void:
	# Redraw every frame, so the X server's copy of the window is current when xwd reads it.
	OS.low_processor_usage_mode = false
	var terrain: Node3D = null
	if ClassDB.class_exists(&"TerrainWorld"):
		terrain = await _open_test_scene(257, 40, true)
		if terrain != null:
			# Shrink the 25 km terrain to a few units so the editor's default 3D view, a few
			# units from the origin, sees all of it.
			var d: Dictionary = (terrain.get(&"recipe") as Resource).call(&"to_dict")
			var extent := float((d["size"] as Array)[0]) * float(d["cell_size"])
			terrain.scale = Vector3.ONE * (6.0 / extent)
			EditorInterface.set_main_screen_editor("3D")
			_select(terrain)
			await _frames(5)
			var dock: Control = _plugin.call(&"get_dock_content")
			dock.call(&"generate")
			var ended: Array = await _wait_generation(dock)
			print("screenshot: generation ended: %s" % [ended])
			_select(terrain)
	# Five views: the dock as it opens (Generate, progress, recipe), scrolled to the recipe and
	# its stages, to the materials, to the strata, and to the bottom (map thumbnails, Bake). For each, write <view>.ready with the X display, wait for
	# the shell's <view>.shot (taken with xwd), then go on.
	var dock_content: Control = _plugin.call(&"get_dock_content")
	for view: String in ["top", "gallery", "form", "stages", "materials", "strata", "maps", "toolbar", "planet"]:
		var scroller := dock_content as ScrollContainer
		if view == "toolbar" and terrain != null:
			# The brushes' tool bar and settings with Raise picked, the brush circle on the
			# terrain's middle.
			_select(terrain)
			await _frames(2)
			var brushes: RefCounted = _plugin.call(&"get_brushes")
			brushes.call(&"set_tool", "raise")
			terrain.call(&"set_brush_indicator", true, terrain.global_position,
					float(brushes.get(&"radius")) * 2.0)
		if view == "planet":
			await _show_planet(dock_content)
		var recipe_box := _part(dock_content, &"form").get(&"_recipe_box") as Control
		var layers_form := dock_content.call(&"get_layers_form") as Object
		# The preset gallery open at the top; then the starting terrain and uplift form.
		var presets := dock_content.call(&"get_presets_part") as Object
		presets.call(&"show_gallery", view == "gallery")
		# Laid out before the scroll below reads positions (the gallery took room above).
		await _frames(1)
		if view == "gallery" and scroller != null:
			scroller.scroll_vertical = 0
		if view == "form" and scroller != null:
			var sources := dock_content.call(&"get_sources_form") as Object
			var terrain_grid := sources.get(&"_terrain_grid") as Control
			scroller.scroll_vertical = int(recipe_box.position.y + terrain_grid.position.y) - 60
		if view == "stages" and scroller != null:
			scroller.scroll_vertical = int(recipe_box.position.y)
		if (view == "materials" or view == "strata") and scroller != null:
			var box := layers_form.get(&"_materials_box" if view == "materials" else &"_strata_box") as Control
			scroller.scroll_vertical = int(recipe_box.position.y + box.position.y) - 40
		if view == "maps" and scroller != null:
			scroller.scroll_vertical = 1 << 20
		# The scroll is laid out and drawn in the frame it was set in; a second frame for
		# margin. Under lavapipe a frame of the editor at 1600x1000 takes seconds.
		await _frames(2)
		await RenderingServer.frame_post_draw
		# The editor's own view of itself, beside the X server's (xwd) taken by the shell.
		var shot := get_viewport().get_texture().get_image()
		if shot != null:
			shot.save_png(dir.path_join("editor-viewport-%s.png" % view))
		var marker := FileAccess.open(dir.path_join(view + ".ready"), FileAccess.WRITE)
		marker.store_string(OS.get_environment("DISPLAY") + "\n")
		marker.close()
		var start := Time.get_ticks_msec()
		# The frame is on the X server: hold the main thread (no new frame) while xwd reads it.
		while not FileAccess.file_exists(dir.path_join(view + ".shot")) \
				and Time.get_ticks_msec() - start < 60000:
			OS.delay_msec(20)
