extends RefCounted
## The editor self-test's checks of a terrain's data outside its scene (issue 38): saved from
## the editor, a TerrainWorld's TerrainData goes to `<scene>.terrain.res` and its painted maps
## to `<scene>.paint.res` beside the scene, which only refers to them; reloading gives the same
## heights; undo still swaps the data; saving again leaves no stale file; a scene of the old
## kind (data embedded) still opens; Bake to Folder points the terrain at its terrain.res.
## Also: a recipe naming a missing file does not validate, and a failed run shows its error
## once; Send to HTerrain writes a terrain into an HTerrain node (when HTerrain is in the
## project: tests/godot/editor_test.sh copies it in from ../shared/vendor/hterrain). Run from
## dock_self_test.gd's _run_all().

const SCENE := "res://orogen_data_files_test.tscn"
const DATA_FILE := "res://orogen_data_files_test.terrain.res"
const PAINT_FILE := "res://orogen_data_files_test.paint.res"
const OLD_SCENE := "res://orogen_data_files_embedded.tscn"
const OLD_DATA_FILE := "res://orogen_data_files_embedded.terrain.res"
const OLD_PAINT_FILE := "res://orogen_data_files_embedded.paint.res"
const BAKE_DIR := "res://orogen_data_files_bake"
const SIDE := 1025
const MAX_SCENE_BYTES := 100 * 1024
const HTERRAIN_SCRIPT := "res://addons/zylann.hterrain/hterrain.gd"
const HTERRAIN_DIR := "res://orogen_data_files_embedded_hterrain"

var _t: Node


func run(t: Node, dock: Control, terrain: Node3D) -> void:
	_t = t
	var main_scene := EditorInterface.get_edited_scene_root().scene_file_path
	_check_missing_file(dock, terrain)
	await _check_saved_outside(dock)
	await _check_embedded_scene(terrain)
	await _check_send_to_hterrain(dock)
	# (The files stay: the scratch project is made afresh for each run.)
	EditorInterface.get_selection().clear()
	await _t._frames(2)
	# Back to the scene the rest of the self-test works on.
	EditorInterface.open_scene_from_path(main_scene)
	await _t._frames(5)
	_t._select(terrain)
	await _t._frames(2)


## A recipe naming a file that is not there does not validate: the message names the field
## and the file, and Edit RON refuses it with that message.
func _check_missing_file(dock: Control, terrain: Node3D) -> void:
	var recipe: Resource = terrain.get(&"recipe")
	var d: Dictionary = recipe.call(&"to_dict")
	d["uplift"] = {"Image": {"path": "orogen_no_such_uplift.png", "min": 0.0, "max": 0.001}}
	var scratch := ClassDB.instantiate(&"TerrainRecipe") as Resource
	var err := String(scratch.call(&"from_dict", d))
	var why := String(scratch.call(&"validate"))
	_t._check(why.contains("uplift.Image.path") and why.contains("orogen_no_such_uplift.png")
			and why.contains("does not exist"),
			"a recipe naming a missing file does not validate, naming the field and the file (%s %s)"
			% [why, err])
	var form: Object = dock.get(&"form")
	var ron_before := String(recipe.get(&"ron"))
	(form.get(&"_ron_edit") as CodeEdit).text = String(scratch.get(&"ron"))
	form.call(&"_on_ron_dialog_confirmed")
	var shown := String(dock.call(&"get_error_text"))
	_t._check(String(recipe.get(&"ron")) == ron_before and shown.contains("uplift.Image.path"),
			"Edit RON refuses it and the dock says which field: %s" % shown)


## A 1025² terrain generated, painted and saved from the editor: a small scene, two files beside
## it, the same heights after a reload (and from the files alone, as a game loads them), undo,
## saving twice, clearing the paint, and Bake to Folder.
func _check_saved_outside(dock: Control) -> void:
	var root := await _open_new_scene(SCENE, SIDE)
	if not _t._check(root != null, "a %d² TerrainWorld scene opens" % SIDE):
		return
	_t._select(root)
	await _t._frames(2)
	var ur: UndoRedo = _t._history(root)
	var rain := PackedFloat32Array()
	rain.resize(SIDE * SIDE)
	for i in rain.size():
		rain[i] = 0.5 + float(i % 7) * 0.1
	var paint_err := String(root.call(&"set_paint_values", "precipitation", rain))
	dock.call(&"generate")
	var ended: Array = await _t._wait_generation(dock)
	var data: Resource = root.get(&"data")
	if not _t._check(ended[0] == true and data != null and paint_err == "",
			"the %d² terrain generates (%s) %s" % [SIDE, ended[1], paint_err]):
		return
	var heights := _height_bytes(data)
	ur.undo()
	_t._check(root.get(&"data") == null, "undo after Generate takes the data away")
	ur.redo()
	_t._check(root.get(&"data") == data, "redo gives it back")

	var start := Time.get_ticks_msec()
	_save()
	var save_ms := Time.get_ticks_msec() - start
	await _t._frames(2)
	var scene_bytes := _file_size(SCENE)
	_t._check(scene_bytes > 0 and scene_bytes < MAX_SCENE_BYTES,
			"the saved %d² scene is %d bytes (< %d KB); saving took %d ms"
			% [SIDE, scene_bytes, MAX_SCENE_BYTES >> 10, save_ms])
	_t._check(FileAccess.file_exists(DATA_FILE) and FileAccess.file_exists(PAINT_FILE),
			"the data and the painted maps are beside it (%d and %d bytes)"
			% [_file_size(DATA_FILE), _file_size(PAINT_FILE)])
	var text := FileAccess.get_file_as_string(SCENE)
	_t._check(text.contains("path=\"%s\"" % DATA_FILE) and text.contains("path=\"%s\"" % PAINT_FILE)
			and not text.contains("uplift_paint") and not text.contains("precipitation_paint")
			and not text.contains("PackedByteArray"),
			"the scene refers to the two files and embeds no map")
	_t._check(String(data.resource_path) == DATA_FILE, "the terrain's data is now the file's resource")
	# The files alone, as a game loads the scene (no resource of the editor's cache).
	var game_scene := ResourceLoader.load(SCENE, "", ResourceLoader.CACHE_MODE_IGNORE_DEEP) as PackedScene
	var game_root := game_scene.instantiate() if game_scene != null else null
	var game_data: Resource = game_root.get(&"data") if game_root != null else null
	_t._check(game_data != null and game_data != data and _height_bytes(game_data) == heights
			and _same_floats(game_root.call(&"get_paint_values", "precipitation"), rain),
			"loaded from the files alone, the scene has the same height bytes and painted rain")
	if game_root != null:
		game_root.free()

	EditorInterface.get_selection().clear()
	await _t._frames(2)
	EditorInterface.reload_scene_from_path(SCENE)
	await _t._frames(5)
	root = EditorInterface.get_edited_scene_root()
	var reloaded: Resource = root.get(&"data") if root != null else null
	_t._check(reloaded != null and _height_bytes(reloaded) == heights
			and _same_floats(root.call(&"get_paint_values", "precipitation"), rain)
			and root.call(&"get_map", "height") != null,
			"reloaded in the editor, the terrain has the same %d² height bytes and painted rain" % SIDE)
	if root == null:
		return
	_t._select(root)
	await _t._frames(2)
	ur = _t._history(root)

	# Generate again; undo, save: the file holds the first heights (the data undo restored);
	# redo, save: the same two files, nothing else, holding the second heights. (Each undo here
	# comes before the save after it: the test undoes through the scene's UndoRedo, which
	# the editor's own undo keeps in step with its saved state.)
	root.get(&"recipe").call(&"set_value", "seed", "77")
	dock.call(&"generate")
	ended = await _t._wait_generation(dock)
	var second: Resource = root.get(&"data")
	var second_heights := _height_bytes(second)
	_t._check(ended[0] == true and second != reloaded and second_heights != heights,
			"a second generation (seed 77) gives other heights")
	ur.undo()
	_t._check(root.get(&"data") == reloaded, "undo after a reload gives the loaded terrain back")
	_save()
	await _t._frames(2)
	_t._check(_height_bytes(_load_fresh(DATA_FILE)) == heights and _file_size(SCENE) < MAX_SCENE_BYTES,
			"saved after that undo, the file holds the first terrain's heights")
	ur.redo()
	_save()
	await _t._frames(2)
	_t._check(_files_like("orogen_data_files_test") == PackedStringArray(
			["orogen_data_files_test.paint.res", "orogen_data_files_test.terrain.res",
			"orogen_data_files_test.tscn"]),
			"saving again leaves the scene and its two files, nothing else (%s)"
			% ", ".join(_files_like("orogen_data_files_test")))
	_t._check(_height_bytes(_load_fresh(DATA_FILE)) == second_heights
			and String(second.resource_path) == DATA_FILE and String(reloaded.resource_path) == "",
			"redone and saved, the file holds the second terrain, whose resource took its path over")

	# Clearing the paint removes its file; the scene no longer refers to it.
	root.call(&"clear_paint", "precipitation")
	_save()
	await _t._frames(2)
	_t._check(not FileAccess.file_exists(PAINT_FILE)
			and not FileAccess.get_file_as_string(SCENE).contains(PAINT_FILE),
			"with no paint left, saving removes the paint file and its reference")

	# Bake to Folder points the terrain at the terrain.res it wrote, as one undoable action.
	var before_bake: Resource = root.get(&"data")
	var bake_err := String(dock.call(&"bake_to", BAKE_DIR))
	var after_bake: Resource = root.get(&"data")
	var baked_path := BAKE_DIR.path_join("terrain.res")
	_t._check(bake_err == "" and after_bake != before_bake and String(after_bake.resource_path) == baked_path
			and _height_bytes(after_bake) == second_heights,
			"Bake to Folder points the terrain at %s %s" % [baked_path, bake_err])
	ur.undo()
	_t._check(root.get(&"data") == before_bake, "undo points the terrain back at its own data")
	ur.redo()
	_save()
	await _t._frames(2)
	text = FileAccess.get_file_as_string(SCENE)
	_t._check(text.contains("path=\"%s\"" % baked_path) and not FileAccess.file_exists(DATA_FILE),
			"redone and saved, the scene refers to the baked terrain.res and the unused data file is gone")
	EditorInterface.get_selection().clear()
	await _t._frames(2)


## A scene of the old kind, its data and paint embedded, opens with them; saved from the editor
## it refers to files instead, and reloads the same.
func _check_embedded_scene(terrain: Node3D) -> void:
	var source: Resource = terrain.get(&"data")
	if not _t._check(source != null, "the test terrain has data to embed"):
		return
	var node := ClassDB.instantiate(&"TerrainWorld") as Node3D
	node.name = "OldTerrain"
	var data := source.duplicate()
	node.set(&"data", data)
	var side: int = data.call(&"get_width")
	var uplift := PackedFloat32Array()
	uplift.resize(side * int(data.call(&"get_depth")))
	uplift.fill(0.0005)
	node.call(&"set_paint_values", "uplift", uplift)
	var packed := PackedScene.new()
	packed.pack(node)
	node.free()
	var err := ResourceSaver.save(packed, OLD_SCENE)
	var text := FileAccess.get_file_as_string(OLD_SCENE)
	if not _t._check(err == OK and text.contains("[sub_resource type=\"TerrainData\"")
			and text.contains("uplift_paint"), "a scene with the data and paint embedded is written"):
		return
	EditorInterface.get_resource_filesystem().update_file(OLD_SCENE)
	EditorInterface.get_selection().clear()
	await _t._frames(2)
	EditorInterface.open_scene_from_path(OLD_SCENE)
	await _t._frames(5)
	var root := EditorInterface.get_edited_scene_root()
	var heights := _height_bytes(data)
	_t._check(root != null and root.name == "OldTerrain" and _height_bytes(root.get(&"data")) == heights
			and _same_floats(root.call(&"get_paint_values", "uplift"), uplift),
			"the old scene opens with its embedded heights and paint")
	if root == null:
		return
	_save()
	await _t._frames(2)
	text = FileAccess.get_file_as_string(OLD_SCENE)
	_t._check(not text.contains("[sub_resource type=\"TerrainData\"") and not text.contains("uplift_paint")
			and FileAccess.file_exists(OLD_DATA_FILE) and FileAccess.file_exists(OLD_PAINT_FILE),
			"saved from the editor, it refers to its two files instead")
	EditorInterface.get_selection().clear()
	await _t._frames(2)
	EditorInterface.reload_scene_from_path(OLD_SCENE)
	await _t._frames(5)
	root = EditorInterface.get_edited_scene_root()
	_t._check(root != null and _height_bytes(root.get(&"data")) == heights
			and _same_floats(root.call(&"get_paint_values", "uplift"), uplift),
			"and reloads with the same heights and paint")


## Send to HTerrain on the scene open now (a TerrainWorld root with data): an HTerrain is made
## under it whose heights equal the terrain's, sample for sample, where the terrain draws them;
## undo removes it. Without HTerrain in the project the button is off and says why.
func _check_send_to_hterrain(dock: Control) -> void:
	var root := EditorInterface.get_edited_scene_root() as Node3D
	if root == null or root.get(&"data") == null:
		_t._check(false, "a terrain with data is open to send to HTerrain")
		return
	_t._select(root)
	await _t._frames(2)
	var state: Array = (dock.get(&"bake") as Object).call(&"send_button_state")
	if not ResourceLoader.exists(HTERRAIN_SCRIPT):
		_t._check(state[0] == false and String(state[1]).contains("HTerrain is not in this project"),
				"without HTerrain in the project, Send to HTerrain is off and its tooltip says why")
		print("  note Send to HTerrain not tried: no HTerrain (addons/zylann.hterrain) in this project")
		return
	_t._check(state[0] == true, "with HTerrain in the project, Send to HTerrain is on")
	var ur: UndoRedo = _t._history(root)
	var start := Time.get_ticks_msec()
	var err := String(dock.call(&"send_to_hterrain"))
	var send_ms := Time.get_ticks_msec() - start
	var ht := _find_hterrain(root)
	if not _t._check(err == "" and ht != null and ht.owner == root,
			"Send to HTerrain makes an HTerrain in the scene (%d ms) %s" % [send_ms, err]):
		return
	var data: Resource = root.get(&"data")
	var w: int = data.call(&"get_width")
	var d: int = data.call(&"get_depth")
	var dx := float(data.get(&"cell_size"))
	var dy := float(data.get(&"cell_size_y"))
	if dy == 0.0:
		dy = dx
	var hdata: Resource = ht.call(&"get_data")
	var res := 0
	if hdata != null:
		res = int(hdata.call(&"get_resolution"))
	var side := maxi(w, d)
	var expected := 65
	while expected < side:
		expected = (expected - 1) * 2 + 1
	_t._check(res == expected, "the HTerrain's resolution is %d for a %d×%d terrain (got %d)"
			% [expected, w, d, res])
	var img := data.get(&"heights") as Image
	var bad := PackedStringArray()
	var inner: Transform3D = ht.call(&"get_internal_transform")
	for p: Vector2i in [Vector2i(0, 0), Vector2i(w - 1, 0), Vector2i(0, d - 1), Vector2i(w - 1, d - 1),
			Vector2i(w >> 1, d >> 1), Vector2i(int(w / 3.0), int(2.0 * d / 3.0)), Vector2i(7, 3)]:
		var want := img.get_pixel(p.x, p.y).r
		var got := float(hdata.call(&"get_height_at", p))
		var at := inner * Vector3(p.x, 0.0, p.y)
		var drawn := root.to_global(Vector3((p.x - 0.5 * (w - 1)) * dx, 0.0, (p.y - 0.5 * (d - 1)) * dy))
		if got != want or not at.is_equal_approx(drawn):
			bad.append("%s: %f vs %f at %s vs %s" % [p, got, want, at, drawn])
	_t._check(bad.is_empty(), "its heights equal the terrain's at 7 samples, placed where the terrain "
			+ "draws them (map_scale %s) %s" % [ht.get(&"map_scale"), "; ".join(bad)])
	ur.undo()
	_t._check(ht.get_parent() == null, "undo takes the new HTerrain out of the scene")
	ur.redo()
	_t._check(ht.get_parent() == root, "redo puts it back")


func _find_hterrain(node: Node) -> Node:
	var script := node.get_script() as Script
	if script != null and script.resource_path == HTERRAIN_SCRIPT:
		return node
	for child: Node in node.get_children():
		var found := _find_hterrain(child)
		if found != null:
			return found
	return null


## Writes a scene whose root is a TerrainWorld with the default recipe at `side`² cells, two
## iterations a stage, and opens it.
func _open_new_scene(path: String, side: int) -> Node:
	var root := ClassDB.instantiate(&"TerrainWorld") as Node3D
	root.name = "SavedTerrain"
	var recipe := ClassDB.instantiate(&"TerrainRecipe") as Resource
	recipe.call(&"set_value", "size", "(%d, %d)" % [side, side])
	var d: Dictionary = recipe.call(&"to_dict")
	for i in (d["stages"] as Array).size():
		var stage: Dictionary = d["stages"][i]
		if (stage[stage.keys()[0]] as Dictionary).has("iterations"):
			recipe.call(&"set_value", "stages[%d].iterations" % i, "2")
	root.set(&"recipe", recipe)
	var packed := PackedScene.new()
	packed.pack(root)
	root.free()
	if ResourceSaver.save(packed, path) != OK:
		return null
	EditorInterface.get_resource_filesystem().update_file(path)
	EditorInterface.get_selection().clear()
	await _t._frames(2)
	EditorInterface.open_scene_from_path(path)
	await _t._frames(5)
	return EditorInterface.get_edited_scene_root()


## Saves the edited scene as the editor's Save does, without the thumbnail (which the headless
## editor cannot render).
func _save() -> void:
	var root := EditorInterface.get_edited_scene_root()
	EditorInterface.save_scene_as(root.scene_file_path, false)


func _height_bytes(data: Resource) -> PackedByteArray:
	if data == null:
		return PackedByteArray()
	var img := data.get(&"heights") as Image
	return img.get_data() if img != null else PackedByteArray()


func _same_floats(a: PackedFloat32Array, b: PackedFloat32Array) -> bool:
	return a.size() == b.size() and a == b


func _load_fresh(path: String) -> Resource:
	return ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)


func _file_size(path: String) -> int:
	var f := FileAccess.open(path, FileAccess.READ)
	return f.get_length() if f != null else -1


## The project's top-level files whose names begin with `prefix`, sorted.
func _files_like(prefix: String) -> PackedStringArray:
	var out := PackedStringArray()
	for f: String in DirAccess.get_files_at("res://"):
		if f.begins_with(prefix) and not f.ends_with(".import") and not f.ends_with(".uid"):
			out.append(f)
	out.sort()
	return out
