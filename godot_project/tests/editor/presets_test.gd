extends RefCounted
## The dock's presets, first look and source form, driven as a user would: a new TerrainWorld
## without a recipe shows the gallery (a thumbnail and a line for every built-in recipe);
## picking one gives the terrain that recipe, a coarse preview shows within a couple of
## seconds without becoming the terrain's data, and the full result follows; the preset and
## its result are one undo step (the recipe alone when the run is cancelled). A terrain with a recipe but no data gets the preview when
## followed. The uplift form switches constant → noise and takes a rate in mm/yr that the
## recipe holds in m/yr; a noise wavelength reads in km; a material's field reads in words.

## Longest the coarse preview of a preset may take to show, milliseconds: it is 65² cells
## (0.5 s on two cores shared with one build, 1.8 s with several), where the full 513² result
## takes 13 s or more, so the bound tells a first look from waiting for the full run.
const PREVIEW_BOUND_MS := 4000
const GENERATION_TIMEOUT_MS := 240000
const OPENED_SCENE := "res://orogen_presets_opened.tscn"

var _t: Node


func run(t: Node, dock: Control, terrain: Node3D) -> void:
	_t = t
	await _check_gallery_and_preview(dock, terrain)
	await _check_preview_on_open(dock, terrain)
	await _check_uplift_form(dock, terrain)
	await _check_labels(dock, terrain)
	_select(terrain)
	await _frames(2)


func _check_gallery_and_preview(dock: Control, root: Node3D) -> void:
	var fresh := ClassDB.instantiate(&"TerrainWorld") as Node3D
	fresh.name = "PresetTerrain"
	root.add_child(fresh)
	fresh.owner = root
	_select(fresh)
	await _frames(3)
	var presets := dock.call(&"get_presets_part") as Object
	var names: PackedStringArray = ClassDB.class_call_static(&"TerrainRecipe", &"get_builtin_names")
	var tiles: Dictionary = presets.get(&"tiles")
	_check(bool(presets.call(&"is_gallery_shown")), "a TerrainWorld without a recipe shows the preset gallery")
	var complete := names.size() >= 10 and tiles.size() == names.size()
	for n: String in names:
		var b := tiles.get(n) as Button
		complete = complete and b != null and b.icon != null and b.icon.get_width() == 128 \
				and String(ClassDB.class_call_static(&"TerrainRecipe", &"get_builtin_description", n)).length() > 20
	_check(complete, "the gallery has a 128² thumbnail and a line for each of the %d built-in recipes" % names.size())

	# Pick "default" with the mouse's signal; time the coarse preview.
	var shown: Array[int] = []
	var on_shown := func(msec: int) -> void: shown.append(msec)
	presets.connect(&"preview_shown", on_shown)
	var ended: Array = []
	var on_end := func(ok: bool, _message: String) -> void: ended.append(ok)
	dock.connect(&"generation_ended", on_end)
	var start := Time.get_ticks_msec()
	var frames := 0
	(tiles["default"] as Button).pressed.emit()
	var recipe := fresh.get(&"recipe") as Resource
	_check(recipe != null and String(recipe.call(&"get_builtin_name")) == "default"
			and not bool(presets.call(&"is_gallery_shown")),
			"picking the default preset gives the terrain the built-in default recipe and closes the gallery")
	while shown.is_empty() and ended.is_empty() and Time.get_ticks_msec() - start < GENERATION_TIMEOUT_MS:
		await _frames(1)
		frames += 1
	var preview_ms := Time.get_ticks_msec() - start
	var cells: Vector2i = fresh.call(&"get_preview_size")
	var material := fresh.call(&"get_terrain_material") as ShaderMaterial
	var lo := float(material.get_shader_parameter(&"height_min")) if material != null else 0.0
	var hi := float(material.get_shader_parameter(&"height_max")) if material != null else 0.0
	print("presets: coarse preview of `default` (%d×%d cells) shown %d ms and %d frames after the pick; heights %.1f … %.1f m" % [
			cells.x, cells.y, preview_ms, frames, lo, hi])
	_check(not shown.is_empty() and preview_ms <= PREVIEW_BOUND_MS,
			"a coarse preview shows within %d ms of the pick (took %d ms, %d frames)" % [PREVIEW_BOUND_MS, preview_ms, frames])
	_check(cells.x > 8 and cells.x <= 65 and hi > lo + 1.0 and fresh.get(&"data") == null,
			"the preview shows eroded heights (%d² cells, %.0f m of relief) without becoming the terrain's data" % [cells.x, hi - lo])
	_check(bool(dock.call(&"is_generating")) or not ended.is_empty(), "the full generation follows the preview")
	while ended.is_empty() and Time.get_ticks_msec() - start < GENERATION_TIMEOUT_MS:
		await _frames(1)
	var full_ms := Time.get_ticks_msec() - start
	presets.disconnect(&"preview_shown", on_shown)
	dock.disconnect(&"generation_ended", on_end)
	var data := fresh.get(&"data") as Resource
	print("presets: full result of `default` applied %d ms after the pick" % full_ms)
	_check(not ended.is_empty() and bool(ended[0]) and data != null and int(data.call(&"get_width")) == 513
			and fresh.call(&"get_preview_size") == Vector2i.ZERO,
			"the full 513² result replaces the preview (%d ms after the pick)" % full_ms)

	var ur := _history(fresh)
	ur.undo()
	_check(fresh.get(&"data") == null and fresh.get(&"recipe") == null,
			"one undo takes the preset back: its generated terrain and its recipe (none again)")
	await _frames(2)
	_check(bool(presets.call(&"is_gallery_shown")), "and the gallery shows again")
	ur.redo()
	_check(fresh.get(&"recipe") == recipe and fresh.get(&"data") == data,
			"one redo gives the preset's recipe and its generated terrain back")
	ur.undo()

	# A preset whose generation is cancelled is still one undo step: the recipe alone.
	var ended2: Array = []
	var on_end2 := func(ok: bool, _message: String) -> void: ended2.append(ok)
	dock.connect(&"generation_ended", on_end2)
	(tiles["rills"] as Button).pressed.emit()
	var t0 := Time.get_ticks_msec()
	while not bool(dock.call(&"is_generating")) and ended2.is_empty() and Time.get_ticks_msec() - t0 < GENERATION_TIMEOUT_MS:
		await _frames(1)
	dock.call(&"cancel_generation")
	while ended2.is_empty() and Time.get_ticks_msec() - t0 < GENERATION_TIMEOUT_MS:
		await _frames(1)
	dock.disconnect(&"generation_ended", on_end2)
	var rills := fresh.get(&"recipe") as Resource
	_check(not ended2.is_empty() and not bool(ended2[0]) and rills != null
			and String(rills.call(&"get_builtin_name")) == "rills" and fresh.get(&"data") == null,
			"a preset whose generation is cancelled keeps its recipe and no data")
	ur.undo()
	_check(fresh.get(&"recipe") == null, "and one undo takes that preset back")
	_select(root)
	await _frames(2)
	root.remove_child(fresh)
	fresh.free()


## A TerrainWorld with a recipe but no data (a scene opened in the editor) gets the coarse
## preview when followed, not a flat square; its data stays empty, so nothing is saved.
func _check_preview_on_open(dock: Control, root: Node3D) -> void:
	var t := ClassDB.instantiate(&"TerrainWorld") as Node3D
	t.name = "UngeneratedTerrain"
	t.set(&"recipe", ClassDB.class_call_static(&"TerrainRecipe", &"from_builtin", "paint"))
	root.add_child(t)
	t.owner = root
	var start := Time.get_ticks_msec()
	_select(t)
	while t.call(&"get_preview_size") == Vector2i.ZERO and Time.get_ticks_msec() - start < 20000:
		await _frames(1)
	var ms := Time.get_ticks_msec() - start
	print("presets: a terrain with a recipe and no data shows its coarse preview %d ms after it is followed" % ms)
	_check(t.call(&"get_preview_size") != Vector2i.ZERO and t.get(&"data") == null and not bool(dock.call(&"is_generating")),
			"following a terrain with a recipe but no data shows a coarse preview (%d ms), not as its data" % ms)
	_select(root)
	await _frames(2)
	root.remove_child(t)
	t.free()

	# A scene opened with such a terrain (main.tscn before Generate), not selected: the plugin's
	# scene_changed previews it.
	var opened := ClassDB.instantiate(&"TerrainWorld") as Node3D
	opened.name = "OpenedTerrain"
	opened.set(&"recipe", ClassDB.class_call_static(&"TerrainRecipe", &"from_builtin", "default"))
	var packed := PackedScene.new()
	packed.pack(opened)
	opened.free()
	var back_to := root.scene_file_path
	# Let the dock leave the terrain while it is still in the tree: dock_paint.gd's follow()
	# hides the brush on the terrain it leaves, which fails once its scene is switched away.
	EditorInterface.get_selection().clear()
	await _frames(2)
	if not _check(ResourceSaver.save(packed, OPENED_SCENE) == OK, "a scene with an ungenerated terrain is saved"):
		return
	EditorInterface.open_scene_from_path(OPENED_SCENE)
	start = Time.get_ticks_msec()
	var scene_root := EditorInterface.get_edited_scene_root()
	while (scene_root == null or scene_root.name != "OpenedTerrain"
			or scene_root.call(&"get_preview_size") == Vector2i.ZERO) and Time.get_ticks_msec() - start < 20000:
		await _frames(1)
		scene_root = EditorInterface.get_edited_scene_root()
	ms = Time.get_ticks_msec() - start
	print("presets: a scene opened with an ungenerated terrain shows its coarse preview %d ms after it opens" % ms)
	_check(scene_root != null and scene_root.name == "OpenedTerrain"
			and scene_root.call(&"get_preview_size") != Vector2i.ZERO and scene_root.get(&"data") == null,
			"opening a scene whose terrain has a recipe but no data shows its coarse preview (%d ms), not as its data" % ms)
	if EditorInterface.has_method(&"close_scene"):
		EditorInterface.call(&"close_scene")
	EditorInterface.open_scene_from_path(back_to)
	await _frames(3)
	DirAccess.remove_absolute(ProjectSettings.globalize_path(OPENED_SCENE))
	_check(EditorInterface.get_edited_scene_root() == root, "the test scene is edited again")


func _check_uplift_form(dock: Control, terrain: Node3D) -> void:
	_select(terrain)
	await _frames(2)
	var recipe := terrain.get(&"recipe") as Resource
	var before := String(recipe.get(&"ron"))
	var sources := dock.call(&"get_sources_form") as Object
	var ur := _history(terrain)
	_check(String(sources.call(&"set_kind", "uplift", "Constant")) == ""
			and _uplift(recipe).has("Constant"), "the uplift form switches the uplift to a constant")
	var controls: Dictionary = sources.get(&"controls")
	var kind := controls.get("uplift.kind") as OptionButton
	_check(kind != null and kind.get_item_text(kind.selected) == "Constant", "its kind menu shows Constant")
	# Constant → Noise through the menu, as a user picks it.
	var at := -1
	for i in kind.item_count:
		if kind.get_item_text(i) == "Noise":
			at = i
	kind.select(at)
	kind.item_selected.emit(at)
	await _frames(1)
	_check(_uplift(recipe).has("Noise"), "choosing Noise in the menu makes the uplift noise")
	controls = sources.get(&"controls")
	var labels: Dictionary = sources.get(&"labels")
	var greatest := controls.get("uplift.Noise.max") as EditorSpinSlider
	var greatest_label := labels.get("uplift.Noise.max") as Label
	_check(greatest != null and greatest.suffix == "mm/yr" and is_equal_approx(greatest.value, 1.0)
			and greatest_label != null and greatest_label.text == "Greatest",
			"the greatest uplift reads 1 mm/yr under a label in words")
	if greatest != null:
		greatest.value = 2.5
	var noise: Dictionary = _uplift(recipe).get("Noise", {})
	_check(is_equal_approx(float(noise.get("max", 0.0)), 0.0025),
			"2.5 mm/yr in the form is 0.0025 m/yr in the recipe (%s)" % str(noise.get("max")))
	_check(String(recipe.get(&"ron")).contains("max: 0.0025"), "and in its RON text")
	var wavelength := controls.get("uplift.Noise.noise.wavelength") as EditorSpinSlider
	_check(wavelength != null and wavelength.suffix == "km" and is_equal_approx(wavelength.value, 40.0),
			"the uplift noise's wavelength reads 40 km")
	ur.undo()
	ur.undo()
	ur.undo()
	_check(String(recipe.get(&"ron")) == before, "undoing the three edits restores the recipe")
	await _frames(2)


func _check_labels(dock: Control, terrain: Node3D) -> void:
	var recipe := terrain.get(&"recipe") as Resource
	var before := String(recipe.get(&"ron"))
	var layers := dock.call(&"get_layers_form") as Object
	layers.call(&"add_material", "")
	await _frames(2)
	var panels: Array = dock.call(&"get_material_panels")
	var ok := false
	if not panels.is_empty():
		var panel := panels[panels.size() - 1] as Node
		var label := (panel.get(&"labels") as Dictionary).get("talus_deg") as Label
		var slider := (panel.get(&"sliders") as Dictionary).get("talus_deg") as EditorSpinSlider
		ok = label != null and label.text == "Angle of repose" and slider != null and slider.suffix == "°"
		print("presets: the material field talus_deg reads \"%s\" in %s" % [
				label.text if label != null else "?", slider.suffix if slider != null else "?"])
	_check(ok, "a material's talus_deg reads \"Angle of repose\" in °")
	_history(terrain).undo()
	_check(String(recipe.get(&"ron")) == before, "undo removes the material again")
	await _frames(2)


func _uplift(recipe: Resource) -> Dictionary:
	var d: Dictionary = recipe.call(&"to_dict")
	var u: Variant = d.get("uplift")
	return u if u is Dictionary else {}


func _check(ok: bool, what: String) -> bool:
	return bool(_t.call(&"_check", ok, what))


func _frames(n: int) -> void:
	for _i in n:
		await _t.get_tree().process_frame


func _select(node: Node) -> void:
	var selection := EditorInterface.get_selection()
	selection.clear()
	selection.add_node(node)


func _history(obj: Object) -> UndoRedo:
	var ur := EditorInterface.get_editor_undo_redo()
	return ur.get_history_undo_redo(ur.get_object_history_id(obj))
