extends RefCounted
## The dock's Ground brush (issues 37, 38): on the generated test terrain, one texture stroke
## through the plugin's viewport input paints a layer the spot did not show; it is one undo
## step (undo takes it away, redo paints it again byte for byte); and it reaches the exports:
## at the stroke's centre the Terrain3D control map's base texture and HTerrain's eight-layer
## splat are the painted layer, and far from the stroke both exports are unchanged from the
## ones written before the stroke.

const SAND := 6
const SNOW := 7
const OUT := "user://orogen_ground_paint_test"


func run(t: Node, dock: Control, terrain: Node3D) -> void:
	var paint: RefCounted = dock.call(&"get_paint_part")
	if not t._check(paint != null and terrain.get(&"data") != null,
			"ground paint: the dock has a Paint section and the terrain has data"):
		return
	var names: PackedStringArray = terrain.call(&"get_paint_map_names")
	t._check(names.has("ground") and PackedStringArray(terrain.call(&"get_ground_layer_names"))
			== PackedStringArray(["rock", "cliff", "scree", "soil", "grass", "dry_grass", "sand",
			"snow"]), "the ground is a paintable map with eight named layers")
	terrain.call(&"clear_paint", "ground")
	var out := ProjectSettings.globalize_path(OUT)
	DirAccess.make_dir_recursive_absolute(out)

	# The exports before the stroke.
	var err := String(dock.call(&"save_for_terrain3d_to", out.path_join("t3d_before"), 64))
	err += String(dock.call(&"save_for_hterrain_to", out.path_join("ht_before")))
	if not t._check(err == "", "ground paint: the exports before the stroke are written (%s)" % err):
		return
	var info: Dictionary = JSON.parse_string(FileAccess.get_file_as_string(
			out.path_join("t3d_before/export.json")))
	var size: Array = info["size"]
	var w := int(size[0])
	var h := int(size[1])
	var spacing := float(info["vertex_spacing"])
	var mid := Vector2i(w >> 1, h >> 1)
	var base_before: int = _control_at(out.path_join("t3d_before"), mid)[0]
	# A layer the middle does not show already.
	var layer := SAND if base_before != SAND else SNOW

	# One stroke through the viewport, as a user paints: Ground, the layer, a left click.
	paint.call(&"select_ground_layer", layer)
	var painter: RefCounted = paint.get(&"painter")
	t._check(String(painter.get(&"map")) == "ground" and int(painter.get(&"value")) == layer
			and String(painter.get(&"mode")) == "add", "picking a ground layer sets up the brush")
	painter.set(&"radius", 4.0 * spacing)
	painter.set(&"strength", 1.0)
	painter.set(&"falloff", 0.3)
	paint.call(&"set_active", true)
	var plugin: EditorPlugin = t.get(&"_plugin")
	var vp := EditorInterface.get_editor_viewport_3d(0)
	var cam := vp.get_camera_3d()
	var top := Transform3D(Basis.looking_at(Vector3.DOWN, Vector3.FORWARD), Vector3(0, 20000, 0))
	cam.global_transform = top
	var press := InputEventMouseButton.new()
	press.button_index = MOUSE_BUTTON_LEFT
	press.pressed = true
	press.position = Vector2(vp.size) * 0.5
	var used := int(plugin.call(&"_forward_3d_gui_input", cam, press))
	var release := InputEventMouseButton.new()
	release.button_index = MOUSE_BUTTON_LEFT
	release.pressed = false
	release.position = press.position
	cam.global_transform = top
	plugin.call(&"_forward_3d_gui_input", cam, release)
	paint.call(&"set_active", false)
	var painted: PackedByteArray = terrain.call(&"get_ground_paint_bytes")
	if not t._check(used == EditorPlugin.AFTER_GUI_INPUT_STOP and painted.size() == w * h * 8,
			"a click in the viewport paints the ground (%d bytes)" % painted.size()):
		return
	# The stroke's centre: the middle of the cells painted fully.
	var sum := Vector2.ZERO
	var full := 0
	for i in w * h:
		if painted[i * 8 + layer] == 255:
			sum += Vector2(i % w, floori(float(i) / w))
			full += 1
	var centre := Vector2i((sum / maxi(full, 1)).round())
	t._check(full > 0 and centre.distance_to(mid) <= 2.0,
			"the stroke paints the layer fully at the terrain's middle (%s, %d cells)" % [centre, full])

	# One undo step.
	var ur := _history(terrain)
	ur.undo()
	t._check(not bool(terrain.call(&"has_paint", "ground")), "undo takes the ground stroke back")
	ur.redo()
	t._check(PackedByteArray(terrain.call(&"get_ground_paint_bytes")) == painted,
			"redo paints it again, byte for byte")
	await t._frames(2)

	# The exports after the stroke.
	err = String(dock.call(&"save_for_terrain3d_to", out.path_join("t3d_after"), 64))
	err += String(dock.call(&"save_for_hterrain_to", out.path_join("ht_after")))
	if not t._check(err == "", "ground paint: the exports after the stroke are written (%s)" % err):
		return
	var at := _control_at(out.path_join("t3d_after"), centre)
	t._check(at[0] == layer and at[2] == 0,
			"Terrain3D: the control map's base texture at the stroke is the painted layer " \
			+ "(base %d, overlay %d, blend %d)" % at)
	var splat := _rgba_at(out.path_join("ht_after/splat16_1.png"), centre)
	t._check(splat[layer - 4] == 255,
			"HTerrain: the eight-layer splat at the stroke is the painted layer alone (%s)" % [splat])
	var radius_cells := 4.0 + 1.0
	var t3d_changed := _changed_far(out.path_join("t3d_before"), out.path_join("t3d_after"), w, h,
			centre, radius_cells)
	t._check(t3d_changed[0] > 0 and t3d_changed[1] == 0,
			"Terrain3D: %d samples changed near the stroke, %d far from it" % t3d_changed)
	var ht_changed := [0, 0]
	for f: String in ["splat.png", "splat16_0.png", "splat16_1.png"]:
		var c := _changed_far_png(out.path_join("ht_before").path_join(f),
				out.path_join("ht_after").path_join(f), w, h, centre, radius_cells)
		ht_changed[0] += c[0]
		ht_changed[1] += c[1]
	t._check(ht_changed[0] > 0 and ht_changed[1] == 0,
			"HTerrain: %d splat pixels changed near the stroke, %d far from it" % ht_changed)

	terrain.call(&"clear_paint", "ground")
	_remove(out)


## Base texture id, overlay id and blend of the Terrain3D control map at cell `c`.
func _control_at(dir: String, c: Vector2i) -> Array:
	var img := Image.load_from_file(dir.path_join("control_%d_%d.exr" % [c.x >> 6, c.y >> 6]))
	var bits := img.get_data().decode_u32(((c.y % 64) * 64 + c.x % 64) * 4)
	return [(bits >> 27) & 0x1F, (bits >> 22) & 0x1F, (bits >> 14) & 0xFF]


func _rgba_at(path: String, c: Vector2i) -> Array:
	var img := Image.load_from_file(path)
	var data := img.get_data()
	var i := (c.y * img.get_width() + c.x) * 4
	return [data[i], data[i + 1], data[i + 2], data[i + 3]]


## Control-map samples of the terrain that differ between two exports: [near, far] of `centre`.
func _changed_far(a: String, b: String, w: int, h: int, centre: Vector2i, r: float) -> Array:
	var out := [0, 0]
	for tz in range(0, (h + 63) >> 6):
		for tx in range(0, (w + 63) >> 6):
			var name := "control_%d_%d.exr" % [tx, tz]
			var da := Image.load_from_file(a.path_join(name)).get_data()
			var db := Image.load_from_file(b.path_join(name)).get_data()
			for j in 64:
				for i in 64:
					var c := Vector2i(tx * 64 + i, tz * 64 + j)
					if c.x >= w or c.y >= h:
						continue
					var k := (j * 64 + i) * 4
					if da.decode_u32(k) != db.decode_u32(k):
						out[0 if Vector2(c).distance_to(Vector2(centre)) <= r else 1] += 1
	return out


## Pixels of the terrain that differ between two RGBA8 PNGs: [near, far] of `centre`.
func _changed_far_png(a: String, b: String, w: int, h: int, centre: Vector2i, r: float) -> Array:
	var ia := Image.load_from_file(a)
	var da := ia.get_data()
	var db := Image.load_from_file(b).get_data()
	var n := ia.get_width()
	var out := [0, 0]
	for y in h:
		for x in w:
			var k := (y * n + x) * 4
			if da.decode_u32(k) != db.decode_u32(k):
				out[0 if Vector2(x, y).distance_to(Vector2(centre)) <= r else 1] += 1
	return out


func _history(obj: Object) -> UndoRedo:
	var ur := EditorInterface.get_editor_undo_redo()
	return ur.get_history_undo_redo(ur.get_object_history_id(obj))


func _remove(dir: String) -> void:
	for sub: String in DirAccess.get_directories_at(dir):
		_remove(dir.path_join(sub))
	for f: String in DirAccess.get_files_at(dir):
		DirAccess.remove_absolute(dir.path_join(f))
	DirAccess.remove_absolute(dir)
