extends SceneTree
## The Terrain3D and HTerrain exports inside Godot, and the HTerrain one imported by a real
## HTerrain (Zylann's godot_heightmap_plugin, MIT). Run by tests/godot/run.sh in two phases:
##
##   godot --headless --path godot_project -s res://tests/hterrain_export.gd -- \
##       --phase=export --recipes=DIR --out=DIR
##     Generates tests/godot/recipes/strata_small.ron at 90×70 (a layered terrain, not 2ⁿ+1),
##     saves it with TerrainWorld.save_for_terrain3d (region size 64) and save_for_hterrain,
##     checks the Terrain3D tiles as Godot loads them (Image.load_from_file: FORMAT_RF heights
##     and control, RGBA8 colour, 64² tiles, heights equal to Orogen's), and writes Orogen's
##     heights to OUT/orogen_height.raw (f32) for the second phase.
##     Then it looks for HTerrain: $OROGEN_HTERRAIN, else ../shared/vendor/hterrain beside the
##     repository (a folder holding addons/zylann.hterrain). Without it, it prints SKIPPED.
##     With it, it lays out a scratch Godot project in OUT/project (never in the repository):
##     HTerrain's addon copied in, and this script as res://hterrain_export.gd.
##
##   godot --headless --path OUT/project --import      (HTerrain's class names get registered)
##   godot --headless --path OUT/project -s res://hterrain_export.gd -- --phase=import --out=DIR
##     Imports height.exr and splat.png (and color.png) through HTerrainData._edit_import_maps,
##     the call HTerrain's import dialog makes, and checks through HTerrain's own API
##     (get_resolution, get_height_at, get_image) that the map is 2ⁿ+1, every height equals
##     Orogen's bit for bit (the padding repeats the edge), and every splat pixel sums to 255;
##     then loads splat16_0.png and splat16_1.png as MULTISPLAT16's first two splat maps, as the
##     export's README says, and checks their eight weights sum to 255.
##
## Prints `PASS name` / `FAIL name: why` / `SKIPPED name: why` and `RESULT passed=N failed=M`.
## This script names no Orogen or HTerrain class directly, so it parses in either project.

var out_dir := ""
var recipes_dir := ""
var passed := 0
var failed := 0


func _initialize() -> void:
	var phase := ""
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--phase="):
			phase = arg.get_slice("=", 1)
		elif arg.begins_with("--out="):
			out_dir = arg.get_slice("=", 1)
		elif arg.begins_with("--recipes="):
			recipes_dir = arg.get_slice("=", 1)
	if phase == "export":
		_export_phase.call_deferred()
	elif phase == "import":
		_import_phase.call_deferred()
	else:
		_check(false, "arguments", "--phase=export or --phase=import")
		_finish()


func _check(ok: bool, name: String, why := "") -> bool:
	if ok:
		passed += 1
		print("PASS ", name)
	else:
		failed += 1
		print("FAIL ", name, ": ", why)
	return ok


func _finish() -> void:
	print("RESULT passed=%d failed=%d" % [passed, failed])
	quit(0 if failed == 0 else 1)


func _read_json(path: String) -> Variant:
	return JSON.parse_string(FileAccess.get_file_as_string(path))


# --- phase 1: in Orogen's project -----------------------------------------------------------

func _export_phase() -> void:
	var recipe: Resource = ClassDB.instantiate(&"TerrainRecipe")
	recipe.set(&"ron", FileAccess.get_file_as_string(recipes_dir.path_join("strata_small.ron")))
	var size_err := String(recipe.call(&"set_value", "size", "(90, 70)"))
	_check(size_err == "", "the recipe takes size (90, 70)", size_err)
	var terrain: Node3D = ClassDB.instantiate(&"TerrainWorld")
	terrain.set(&"recipe", recipe)
	root.add_child(terrain)
	terrain.call(&"generate")
	var start := Time.get_ticks_msec()
	var heights_img: Image = null
	# The result is applied when the run finishes.
	while heights_img == null and Time.get_ticks_msec() - start < 120000:
		await process_frame
		heights_img = terrain.call(&"get_map", "height")
	if not _check(heights_img != null and heights_img.get_format() == Image.FORMAT_RF,
			"the terrain was generated", "no RF height map"):
		_finish()
		return
	var w := heights_img.get_width()
	var h := heights_img.get_height()
	var heights := heights_img.get_data().to_float32_array()
	_check(w == 90 and h == 70, "the terrain is 90 x 70", "%d x %d" % [w, h])
	var f := FileAccess.open(out_dir.path_join("orogen_height.raw"), FileAccess.WRITE)
	f.store_buffer(heights_img.get_data())
	f.close()
	f = FileAccess.open(out_dir.path_join("orogen_height.json"), FileAccess.WRITE)
	f.store_string(JSON.stringify({"width": w, "height": h}))
	f.close()

	_check_terrain3d(terrain, heights, w, h)

	var ht_dir := out_dir.path_join("hterrain")
	var err := String(terrain.call(&"save_for_hterrain", ht_dir))
	_check(err == "", "save_for_hterrain writes the folder", err)
	var img := Image.load_from_file(ht_dir.path_join("height.exr"))
	_check(img != null and img.get_format() == Image.FORMAT_RF and img.get_width() == 129
			and img.get_height() == 129, "height.exr loads as a 129 x 129 FORMAT_RF image",
			"%s" % [img])
	var splat := Image.load_from_file(ht_dir.path_join("splat.png"))
	_check(splat != null and splat.get_format() == Image.FORMAT_RGBA8 and splat.get_width() == 129,
			"splat.png loads as a 129 x 129 RGBA8 image", "%s" % [splat])
	for k: int in 2:
		var s16 := Image.load_from_file(ht_dir.path_join("splat16_%d.png" % k))
		_check(s16 != null and s16.get_format() == Image.FORMAT_RGBA8 and s16.get_width() == 129,
				"splat16_%d.png (MULTISPLAT16) loads as a 129 x 129 RGBA8 image" % k, "%s" % [s16])
	_check(FileAccess.file_exists(ht_dir.path_join("color.png"))
			and FileAccess.file_exists(ht_dir.path_join("README.txt")),
			"a layered terrain gets color.png, and the folder a README.txt")

	_prepare_hterrain_project()
	terrain.queue_free()
	await process_frame
	_finish()


## Terrain3D: 90 x 70 at region size 64 makes 2 x 2 tiles of 64², FORMAT_RF heights equal to
## Orogen's, FORMAT_RF control maps whose bits hold Orogen's ground layers (base and overlay 0..7,
## autoshader off) with a hole past the edge, RGBA8 colour maps. A region size Terrain3D has not is refused, naming region-size.
func _check_terrain3d(terrain: Node3D, heights: PackedFloat32Array, w: int, h: int) -> void:
	var dir := out_dir.path_join("terrain3d")
	var err := String(terrain.call(&"save_for_terrain3d", dir, 64))
	_check(err == "", "save_for_terrain3d writes the folder", err)
	for bad: int in [63, 100, 4096, 0, -64]:
		var e := String(terrain.call(&"save_for_terrain3d", out_dir.path_join("t3d_bad"), bad))
		_check(e.contains("region-size") and e.contains(str(bad)),
				"region size %d is refused naming region-size" % bad, e)
	var info: Variant = _read_json(dir.path_join("export.json"))
	if not _check(info is Dictionary and info["tile_list"].size() == 4 and info["region_size"] == 64,
			"export.json lists 2 x 2 tiles of 64", "%s" % [info]):
		return
	var worst_height := 0
	var worst_control := 0
	var formats_ok := true
	for tile: Dictionary in info["tile_list"]:
		var tx: int = tile["tile"][0]
		var tz: int = tile["tile"][1]
		var hi := Image.load_from_file(dir.path_join(tile["height"]))
		var ci := Image.load_from_file(dir.path_join(tile["control"]))
		var co := Image.load_from_file(dir.path_join(tile["color"]))
		for im: Image in [hi, ci, co]:
			formats_ok = formats_ok and im != null and im.get_width() == 64 and im.get_height() == 64
		formats_ok = formats_ok and hi.get_format() == Image.FORMAT_RF \
				and ci.get_format() == Image.FORMAT_RF and co.get_format() == Image.FORMAT_RGBA8
		if not formats_ok:
			break
		var hv := hi.get_data().to_float32_array()
		var cv := ci.get_data()
		for j: int in 64:
			for i: int in 64:
				var sx := tx * 64 + i
				var sz := tz * 64 + j
				var ref := heights[mini(sz, h - 1) * w + mini(sx, w - 1)]
				if hv[j * 64 + i] != ref:
					worst_height += 1
				# Orogen's ground layers as base (bits 27+), overlay (22+) and blend (14+),
				# ids 0..7; autoshader (bit 0) off; hole (bit 2) exactly past the edge.
				var bits := cv.decode_u32((j * 64 + i) * 4)
				var hole := (bits >> 2) & 1 == 1
				if bits & 1 != 0 or hole != (sx >= w or sz >= h) \
						or (bits >> 27) & 0x1F > 7 or (bits >> 22) & 0x1F > 7:
					worst_control += 1
	_check(formats_ok, "the tiles load as 64 x 64 FORMAT_RF heights and control, RGBA8 colour")
	_check(worst_height == 0, "every tile height equals Orogen's", "%d differ" % worst_height)
	_check(worst_control == 0, "control bits: ground layers 0..7 as base and overlay, " \
			+ "autoshader off, hole past the edge", "%d differ" % worst_control)


## The folder holding addons/zylann.hterrain: $OROGEN_HTERRAIN, else ../shared/vendor/hterrain
## beside the repository. "" when neither exists.
func _hterrain_root() -> String:
	var repo := ProjectSettings.globalize_path("res://").trim_suffix("/").get_base_dir()
	var candidates: Array[String] = []
	var env := OS.get_environment("OROGEN_HTERRAIN")
	if env != "":
		candidates.append(env)
	candidates.append(repo.get_base_dir().path_join("shared/vendor/hterrain"))
	for c: String in candidates:
		if DirAccess.dir_exists_absolute(c.path_join("addons/zylann.hterrain")):
			return c
	print("SKIPPED HTerrain import: no addons/zylann.hterrain in %s" % ", ".join(candidates))
	return ""


func _copy_dir(from: String, to: String) -> bool:
	if DirAccess.make_dir_recursive_absolute(to) != OK:
		return false
	for file: String in DirAccess.get_files_at(from):
		if DirAccess.copy_absolute(from.path_join(file), to.path_join(file)) != OK:
			return false
	for sub: String in DirAccess.get_directories_at(from):
		if not _copy_dir(from.path_join(sub), to.path_join(sub)):
			return false
	return true


func _prepare_hterrain_project() -> void:
	var ht_root := _hterrain_root()
	if ht_root == "":
		return
	var project := out_dir.path_join("project")
	var ok := _copy_dir(ht_root.path_join("addons/zylann.hterrain"),
			project.path_join("addons/zylann.hterrain"))
	var f := FileAccess.open(project.path_join("project.godot"), FileAccess.WRITE)
	ok = ok and f != null
	if f != null:
		f.store_string("config_version=5\n\n[application]\n\nconfig/name=\"hterrain import test\"\n")
		f.close()
	ok = ok and DirAccess.copy_absolute(ProjectSettings.globalize_path("res://tests/hterrain_export.gd"),
			project.path_join("hterrain_export.gd")) == OK
	_check(ok, "a scratch project with HTerrain (from %s) is laid out in %s" % [ht_root, project])


# --- phase 2: in the scratch project with HTerrain -----------------------------------------

func _import_phase() -> void:
	var meta: Variant = _read_json(out_dir.path_join("orogen_height.json"))
	var heights := FileAccess.get_file_as_bytes(out_dir.path_join("orogen_height.raw")).to_float32_array()
	var w: int = meta["width"]
	var h: int = meta["height"]
	var HData: GDScript = load("res://addons/zylann.hterrain/hterrain_data.gd")
	if not _check(HData != null, "HTerrain's HTerrainData loads"):
		_finish()
		return
	var data: Resource = HData.new()
	var dir := out_dir.path_join("hterrain")
	var height_path := dir.path_join("height.exr")
	# What HTerrain's import dialog checks first: a 2ⁿ+1 size it will not crop.
	var probe := Image.load_from_file(height_path)
	var adjusted: int = HData.get_adjusted_map_size(probe.get_width(), probe.get_height())
	_check(adjusted == probe.get_width() and adjusted == probe.get_height(),
			"HTerrain takes the size as it is (no crop)", "%d vs %s" % [adjusted, probe.get_size()])
	# The parameters HTerrain's import dialog passes (importer_dialog.gd _on_ImportButton_pressed).
	var params := {
		HData.CHANNEL_HEIGHT: {
			"path": height_path, "min_height": 0.0, "max_height": 400.0,
			"big_endian": false, "bit_depth": HData.BIT_DEPTH_16,
		},
		HData.CHANNEL_SPLAT: {"path": dir.path_join("splat.png")},
		HData.CHANNEL_COLOR: {"path": dir.path_join("color.png")},
	}
	var imported: bool = data.call(&"_edit_import_maps", params)
	_check(imported, "HTerrainData imports height.exr, splat.png and color.png")
	var res: int = data.call(&"get_resolution")
	_check(res == 129 and ((res - 1) & (res - 2)) == 0, "the HTerrain map is 2ⁿ+1 (129)", str(res))
	var him: Image = data.call(&"get_image", HData.CHANNEL_HEIGHT)
	_check(him.get_format() == Image.FORMAT_RF, "HTerrain holds the heights as FORMAT_RF")
	var differ := 0
	var first := ""
	for y: int in res:
		for x: int in res:
			var got: float = data.call(&"get_height_at", Vector2i(x, y))
			var ref := heights[mini(y, h - 1) * w + mini(x, w - 1)]
			if got != ref:
				differ += 1
				if first == "":
					first = "(%d, %d): %f vs %f" % [x, y, got, ref]
	_check(differ == 0, "get_height_at equals Orogen's height at all %d samples" % (res * res),
			"%d differ, first %s" % [differ, first])
	var splat: Image = data.call(&"get_image", HData.CHANNEL_SPLAT)
	var bad_sums := 0
	if _check(splat.get_format() == Image.FORMAT_RGBA8 and splat.get_width() == res,
			"HTerrain's splat map is RGBA8 at 129", "%s" % [splat]):
		var bytes := splat.get_data()
		for i: int in range(0, bytes.size(), 4):
			if bytes[i] + bytes[i + 1] + bytes[i + 2] + bytes[i + 3] != 255:
				bad_sums += 1
		_check(bad_sums == 0, "every splat pixel's weights sum to 255", "%d do not" % bad_sums)
	# MULTISPLAT16, as the export's README loads it: four splat maps, the two eight-layer
	# maps as the first two; all eight weights of a pixel sum to 255.
	while int(data.call(&"get_map_count", HData.CHANNEL_SPLAT)) < 4:
		data.call(&"_edit_add_map", HData.CHANNEL_SPLAT)
	for k: int in 2:
		var src := Image.load_from_file(dir.path_join("splat16_%d.png" % k))
		var dst: Image = data.call(&"get_image", HData.CHANNEL_SPLAT, k)
		dst.copy_from(src)
		data.call(&"notify_region_change", Rect2i(0, 0, res, res), HData.CHANNEL_SPLAT, k)
	var b0: PackedByteArray = (data.call(&"get_image", HData.CHANNEL_SPLAT, 0) as Image).get_data()
	var b1: PackedByteArray = (data.call(&"get_image", HData.CHANNEL_SPLAT, 1) as Image).get_data()
	var bad8 := 0
	for i: int in range(0, b0.size(), 4):
		var sum := 0
		for c: int in 4:
			sum += b0[i + c] + b1[i + c]
		if sum != 255:
			bad8 += 1
	_check(b0.size() == res * res * 4 and bad8 == 0,
			"HTerrain's MULTISPLAT16 maps hold eight weights summing to 255", "%d do not" % bad8)
	var colour: Image = data.call(&"get_image", HData.CHANNEL_COLOR)
	_check(colour.get_width() == res, "HTerrain's colour map is 129 wide")
	_finish()
