extends "res://tests/test_tree.gd"
## Orogen's tests inside a real Godot (headless). Run by tests/godot/run.sh:
##
##   godot --headless --path godot_project -s res://tests/run_tests.gd -- \
##       --recipes=DIR --bake=DIR --out=DIR
##
## --recipes: tests/godot/recipes (equiv.ron, long.ron, big.ron, strata_small.ron, …)
## --bake:    what `orogen bake recipes/equiv.ron --out DIR` wrote (the CLI reference)
## --out:     a scratch folder for files the tests write
##
## Prints `PASS name` / `FAIL name: why` per test and a last line `RESULT passed=N failed=M`.

var recipes_dir: String = ""
var bake_dir: String = ""
var out_dir: String = ""
## `--only=NAME`: run only the tests whose names contain NAME (while working on one).
var only: String = ""


func _initialize() -> void:
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--recipes="):
			recipes_dir = arg.get_slice("=", 1)
		elif arg.begins_with("--bake="):
			bake_dir = arg.get_slice("=", 1)
		elif arg.begins_with("--out="):
			out_dir = arg.get_slice("=", 1)
		elif arg.begins_with("--only="):
			only = arg.get_slice("=", 1)
	_run_all.call_deferred()


func _run_all() -> void:
	var tests: Array[Callable] = [
		test_classes_register,
		test_recipe_api,
		test_recipe_emits_changed,
		test_recipe_materials_and_strata,
		test_same_heights_as_cli,
		test_fastnoiselite_matches_godot,
		test_signals_in_order,
		test_cancel_stops_quickly,
		test_bad_recipe_fails_with_reason,
		test_run_time_error_fails_with_reason,
		test_stage_reports_carry_figures,
		test_threads_out_of_range_refused,
		test_start_while_finishing_is_refused,
		test_apply_on_finish_false_leaves_terrain,
		test_get_height_matches_height_map,
		test_collision_matches_heights,
		test_free_mid_run_leaks_no_thread,
		test_generate_and_data_changed,
		test_save_maps_matches_cli_files,
		test_load_heightmap_and_resource_round_trip,
		test_load_heightmap_non_square_with_nodata,
		test_layered_surface_colour,
		test_hydraulic_water_live,
		test_graph_rivers,
		test_frame_time_at_512,
		test_paint_stroke_stays_in_radius_and_undoes,
		test_paint_api_refuses_bad_input,
		test_painted_run_for_cli_comparison,
		test_live_erosion_while_painting,
		test_sea_plane,
		test_run_and_data_show_the_same_water_and_edge,
	]
	if only != "":
		tests = tests.filter(func(t: Callable) -> bool: return t.get_method().contains(only))
	await run_tests(tests)
	finish()


# --- helpers -----------------------------------------------------------------------------

func read_text(path: String) -> String:
	var f: FileAccess = FileAccess.open(path, FileAccess.READ)
	if f == null:
		current_failures.append("cannot read " + path)
		return ""
	return f.get_as_text()


func recipe_from(file: String) -> TerrainRecipe:
	var r: TerrainRecipe = TerrainRecipe.new()
	r.ron = read_text(recipes_dir.path_join(file))
	return r


# --- tests -------------------------------------------------------------------------------

func test_classes_register() -> void:
	for cls: String in ["TerrainRecipe", "TerrainData", "TerrainWorld", "ErosionSimulator"]:
		check(ClassDB.class_exists(cls), cls + " is registered")
	check(ClassDB.is_parent_class("TerrainWorld", "Node3D"), "TerrainWorld is a Node3D")
	check(ClassDB.is_parent_class("ErosionSimulator", "Node"), "ErosionSimulator is a Node")
	check(ClassDB.is_parent_class("TerrainRecipe", "Resource"), "TerrainRecipe is a Resource")
	check(ClassDB.is_parent_class("TerrainData", "Resource"), "TerrainData is a Resource")
	var r: TerrainRecipe = TerrainRecipe.default_recipe()
	check(r.validate() == "", "the default recipe validates: " + r.validate())
	check(r.ron.contains("StreamPower"), "the default recipe has a StreamPower stage")
	var sim: ErosionSimulator = ErosionSimulator.new()
	check(sim.live_update and sim.apply_on_finish and sim.threads == 0, "simulator defaults")
	sim.free()
	var t: TerrainWorld = TerrainWorld.new()
	check(t.collision_enabled, "collision on by default")
	check(t.get_height(0.0, 0.0) == 0.0 and t.get_normal(0.0, 0.0) == Vector3.UP, "no data: flat queries")
	check(t.get_map("height") == null and t.get_map_names().is_empty(), "no data: no maps")
	t.free()


func test_recipe_api() -> void:
	var r: TerrainRecipe = TerrainRecipe.default_recipe()
	var d: Dictionary = r.to_dict()
	check(d.has("size") and d.has("stages"), "to_dict has size and stages")
	var stages: Array = d["stages"]
	check(stages.size() > 0 and (stages[0] as Dictionary).has("StreamPower"), "stages are one-key dictionaries")
	var r2: TerrainRecipe = TerrainRecipe.new()
	r2.ron = "(size: (3, 3), cell_size: 1.0, seed: 0, terrain: Flat(0.0))"
	check(r2.from_dict(d) == "", "from_dict accepts to_dict's output")
	check(r2.to_dict() == d, "to_dict/from_dict round trip")
	check(r2.set_value("seed", "9") == "", "set_value seed")
	check(int(r2.to_dict()["seed"]) == 9, "seed is 9 after set_value")
	var err: String = r2.set_value("sead", "1")
	check(err.contains("sead"), "unknown path named in error: " + err)
	err = r2.set_value("cell_size", "-1.0")
	check(err.contains("cell_size"), "invalid value rejected naming the field: " + err)
	check(float(r2.to_dict()["cell_size"]) > 0.0, "rejected value left the recipe unchanged")
	var n: int = (r2.to_dict()["stages"] as Array).size()
	check(r2.add_stage("Hydrology") == "", "add_stage Hydrology")
	check(r2.add_stage("Nope") != "", "add_stage rejects unknown kinds")
	var after: Array = r2.to_dict()["stages"]
	check(after.size() == n + 1 and (after[n] as Dictionary).has("Hydrology"), "stage appended")
	r2.move_stage(n, 0)
	check((r2.to_dict()["stages"][0] as Dictionary).has("Hydrology"), "move_stage moved it first")
	r2.remove_stage(0)
	check((r2.to_dict()["stages"] as Array).size() == n, "remove_stage removed it")
	check(r2.remove_stage(99) != "", "remove_stage out of range is an error")
	check(r.get_stage_names() == PackedStringArray(["StreamPower", "Thermal", "Hydrology", "Hydraulic", "LayeredThermal", "Wind", "TimeLoop"]), "stage names")
	var params: Array[Dictionary] = r.describe_stage("StreamPower")
	check(params.size() > 0, "StreamPower has described parameters")
	for p: Dictionary in params:
		check(p.has("name") and p.has("unit") and p.has("min") and p.has("max") and p.has("doc"), "param keys")
		check(float(p["min"]) <= float(p["max"]), "min <= max for " + str(p.get("name")))
	var bad: TerrainRecipe = TerrainRecipe.new()
	bad.ron = "(size: (0, 9), cell_size: 1.0, seed: 0, terrain: Flat(0.0))"
	check(bad.validate().contains("size"), "validate names the field: " + bad.validate())
	bad.ron = "(size: (9, 9), cell_sise: 1.0)"
	check(bad.validate() != "", "syntax/unknown field error")
	var path: String = out_dir.path_join("saved.ron")
	check(r2.save_ron(path) == "", "save_ron")
	var r3: TerrainRecipe = TerrainRecipe.new()
	check(r3.load_ron(path) == "", "load_ron")
	check(r3.to_dict() == r2.to_dict(), "save_ron/load_ron round trip")
	check(r3.load_ron(out_dir.path_join("missing.ron")).contains("missing.ron"), "load_ron names a missing file")


## The dock follows a recipe through its `changed` signal, so every API that alters the recipe
## must emit it (once), and one that leaves it as it was must not; the terrain says when its
## recipe is replaced by another resource.
func test_recipe_emits_changed() -> void:
	var r: TerrainRecipe = TerrainRecipe.default_recipe()
	var count: Array[int] = [0]
	r.changed.connect(func() -> void: count[0] += 1)
	var expect := func(what: String, want: int) -> void:
		check(count[0] == want, "%s emits changed %d time(s) (got %d)" % [what, want, count[0]])
		count[0] = 0
	var original: String = r.ron
	r.ron = original + "\n"
	expect.call("setting ron", 1)
	r.ron = r.ron
	expect.call("setting the same ron", 0)
	r.set("ron", original)
	expect.call("set(\"ron\") (inspector, undo)", 1)
	r.set_value("seed", "12345")
	expect.call("set_value", 1)
	r.set_value("cell_size", "-1.0")
	expect.call("a rejected set_value", 0)
	r.add_stage("Thermal")
	expect.call("add_stage", 1)
	r.add_stage("Nope")
	expect.call("a rejected add_stage", 0)
	r.move_stage(0, 1)
	expect.call("move_stage", 1)
	r.remove_stage(0)
	expect.call("remove_stage", 1)
	r.remove_stage(99)
	expect.call("a rejected remove_stage", 0)
	r.from_dict(TerrainRecipe.default_recipe().to_dict())
	expect.call("from_dict", 1)
	var path: String = out_dir.path_join("changed.ron")
	var other: TerrainRecipe = TerrainRecipe.default_recipe()
	other.set_value("seed", "777")
	other.save_ron(path)
	r.load_ron(path)
	expect.call("load_ron", 1)
	r.load_ron(out_dir.path_join("missing.ron"))
	expect.call("a failed load_ron", 0)
	var terrain: TerrainWorld = TerrainWorld.new()
	var replaced: Array[int] = [0]
	terrain.recipe_changed.connect(func() -> void: replaced[0] += 1)
	terrain.recipe = r
	terrain.recipe = r
	check(replaced[0] == 1, "recipe_changed once for a new recipe, not for the same one (%d)" % replaced[0])
	terrain.set("recipe", null)
	check(replaced[0] == 2 and terrain.recipe == null, "recipe_changed when the recipe is removed")
	terrain.free()


## Materials and strata through TerrainRecipe: their fields are described with units and
## ranges; add, remove, move, rename and set_value edit them (round trips through the RON);
## a bad value (an unknown material in the strata, a negative thickness, talus 95°,
## susceptibility 1.5, a duplicate name, a material still in use) is an error naming the field
## and leaves the recipe as it was, without emitting changed.
func test_recipe_materials_and_strata() -> void:
	var r: TerrainRecipe = TerrainRecipe.default_recipe()
	var fields: Array[Dictionary] = r.describe_material_fields()
	var by_name: Dictionary = {}
	for f: Dictionary in fields:
		check(f.has("unit") and f.has("min") and f.has("max") and f.has("doc") and f.has("kind"), "field keys")
		by_name[f["name"]] = f
	check(by_name.keys() == ["name", "talus_deg", "thermal_susceptibility", "dissolubility", "wind_resistance",
			"erodibility", "colour"], "material fields in recipe order: %s" % [by_name.keys()])
	check(by_name["talus_deg"]["unit"] == "deg" and by_name["talus_deg"]["max"] == 90.0
			and by_name["erodibility"]["unit"] == "×k" and by_name["colour"]["kind"] == "Colour",
			"units, ranges and kinds: %s" % [by_name["talus_deg"]])
	var strata_names: Array = r.describe_strata_fields().map(func(f: Dictionary) -> String: return f["name"])
	check(strata_names.has("dip_deg") and strata_names.has("bottom") and strata_names.has("repeat"), "strata fields")
	check(r.describe_stratum_fields().size() == 2, "a layer is a material and a thickness")
	var names: PackedStringArray = r.get_material_names()
	check(names.has("granite") and names.has("shale") and r.get_built_in_material_names().size() == 6,
			"built-in materials listed: %s" % names)

	check(r.add_material("sandstone") == "", "add a copy of built-in sandstone")
	check(r.add_material("") == "", "add a new material")
	var mats: Array = r.to_dict()["materials"]
	check(mats.size() == 2 and mats[0]["name"] == "sandstone" and mats[1]["name"] == "material_1",
			"two materials: %s" % [mats])
	check(int(mats[0]["colour"][0]) == 196, "the copy has sandstone's colour")
	check(r.get_material_names()[1] == "material_1", "the recipe's own materials come first")
	check(r.set_value("materials[1].talus_deg", "42.0") == "", "set a talus angle")
	check(r.set_value("materials[1].colour", "(10, 20, 30)") == "", "set a colour")
	check(r.move_material(1, 0) == "", "move a material up")
	mats = r.to_dict()["materials"]
	check(mats[0]["name"] == "material_1" and float(mats[0]["talus_deg"]) == 42.0
			and Array(mats[0]["colour"]) == [10, 20, 30], "moved, with its values: %s" % [mats[0]])
	check(r.add_stratum("material_1", 30.0) == "" and r.add_stratum("shale", 20.0) == "", "add two layers")
	check(r.set_value("strata.repeat", "3") == "" and r.set_value("strata.dip_deg", "5.0") == ""
			and r.set_value("strata.top", "100.0") == "" and r.set_value("strata.bottom", "\"granite\"") == "",
			"set strata fields")
	check(r.set_value("strata.layers[1].thickness", "Constant(25.0)") == "", "set a layer's thickness")
	check(r.move_stratum(1, 0) == "", "move a layer up")
	var strata: Dictionary = r.to_dict()["strata"]
	check(strata["layers"][0]["material"] == "shale" and float(strata["layers"][0]["thickness"]["Constant"]) == 25.0
			and int(strata["repeat"]) == 3 and float(strata["top"]) == 100.0 and strata["bottom"] == "granite",
			"strata as edited: %s" % [strata])
	check(r.rename_material(0, "basalt") == "", "rename a material")
	strata = r.to_dict()["strata"]
	check(strata["layers"][1]["material"] == "basalt", "its layer follows the new name")
	check(r.set_value("strata.top", "None") == "" and r.to_dict()["strata"]["top"] == null, "top left out again")
	# Round trip through RON text.
	var copy: TerrainRecipe = TerrainRecipe.new()
	copy.ron = r.ron
	check(copy.validate() == "" and copy.to_dict() == r.to_dict(), "materials and strata survive the RON text")

	var count: Array[int] = [0]
	r.changed.connect(func() -> void: count[0] += 1)
	var before: String = r.ron
	var refused := func(what: String, err: String, field: String) -> void:
		check(err.contains(field), "%s: the error names %s (%s)" % [what, field, err])
		check(r.ron == before, "%s: the recipe is unchanged" % what)
	refused.call("unknown material", r.set_value("strata.layers[0].material", "\"marble\""), "strata.layers[0].material")
	refused.call("unknown material added", r.add_stratum("marble", 10.0), "strata.layers[2].material")
	refused.call("negative thickness", r.set_value("strata.layers[0].thickness", "Constant(-5.0)"), "strata.layers[0].thickness")
	refused.call("negative new layer", r.add_stratum("shale", -1.0), "strata.layers[2].thickness")
	refused.call("talus 95", r.set_value("materials[0].talus_deg", "95.0"), "materials[0].talus_deg")
	refused.call("susceptibility 1.5", r.set_value("materials[1].thermal_susceptibility", "1.5"),
			"materials[1].thermal_susceptibility")
	refused.call("duplicate name", r.add_material("basalt"), "materials[2].name")
	refused.call("rename onto another", r.rename_material(1, "basalt"), "materials[1].name")
	refused.call("material in use", r.remove_material(0), "strata.layers[1].material")
	refused.call("dip 75", r.set_value("strata.dip_deg", "75.0"), "strata.dip_deg")
	check(r.remove_material(7) != "" and r.move_stratum(0, 9) != "" and r.ron == before, "indices out of range refused")
	check(count[0] == 0, "no refused edit emitted changed (%d)" % count[0])
	check(r.remove_stratum(1) == "" and r.remove_material(0) == "", "remove the layer, then its material")
	check(r.remove_strata() == "" and not r.to_dict().has("strata"), "remove the strata")
	check(count[0] == 3, "each edit emitted changed once (%d)" % count[0])
	check(r.validate() == "", "the recipe is valid: " + r.validate())


func test_same_heights_as_cli() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	check(sim.start(), "start")
	check(await wait_done(sim, 120000), "finished in time")
	var ours: Image = terrain.get_map("height")
	var ref: Image = Image.load_from_file(bake_dir.path_join("height.exr"))
	if not check(ours != null and ref != null, "both height maps exist"):
		return
	check(ours.get_format() == Image.FORMAT_RF, "TerrainWorld heights are FORMAT_RF")
	check(ref.get_format() == Image.FORMAT_RF, "CLI height.exr loads as FORMAT_RF (got %d)" % ref.get_format())
	check(ours.get_size() == ref.get_size(), "same size %s vs %s" % [ours.get_size(), ref.get_size()])
	check(ours.get_data() == ref.get_data(), "height bytes identical to `orogen bake`")
	# Every scalar map the CLI wrote as EXR matches too.
	for name: String in terrain.get_map_names():
		var exr: String = bake_dir.path_join(name + ".exr")
		if name == "height" or not FileAccess.file_exists(exr):
			continue
		var m: Image = terrain.get_map(name)
		var r: Image = Image.load_from_file(exr)
		check(m.get_data() == r.get_data(), "map %s bytes identical to the CLI's" % name)
	# The same bytes whatever the size of the simulator's own thread pool.
	var t1: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var s1: ErosionSimulator = sim_of(t1)
	s1.threads = 1
	check(s1.start(), "start with threads = 1")
	check(await wait_done(s1, 120000), "threads = 1 run finished")
	check(t1.data != null and t1.get_map("height").get_data() == ours.get_data(), "threads = 1 gives the same bytes")
	var names: PackedStringArray = terrain.get_map_names()
	for want: String in ["height", "uplift", "drainage", "water_surface", "rivers", "basins"]:
		check(names.has(want), "map %s present (have %s)" % [want, names])


## Godot's FastNoiseLite and Orogen's `basis: FastNoiseLite(...)` with the same fields: a
## TerrainWorld baked from the recipe (amplitude 1, so each height is the noise value) holds
## Godot's get_noise_2d(x, y) at every cell, bit for bit; its uplift map (the same basis as a
## scalar, normalised over the grid) reads as Godot's get_image(w, h) to within 8-bit rounding.
func test_fastnoiselite_matches_godot() -> void:
	var cases: Array = []
	cases.append(["", FastNoiseLite.new()])
	var b := FastNoiseLite.new()
	b.noise_type = FastNoiseLite.TYPE_PERLIN
	b.seed = 1337
	b.frequency = 0.0123
	b.fractal_type = FastNoiseLite.FRACTAL_RIDGED
	b.fractal_octaves = 6
	b.fractal_lacunarity = 2.1
	b.fractal_gain = 0.45
	b.fractal_weighted_strength = 0.3
	b.offset = Vector3(12.5, -3.25, 4.0)
	cases.append(["noise_type: Perlin, seed: 1337, frequency: 0.0123, fractal_type: Ridged, fractal_octaves: 6, "
			+ "fractal_lacunarity: 2.1, fractal_gain: 0.45, fractal_weighted_strength: 0.3, offset: (12.5, -3.25, 4.0)", b])
	var c := FastNoiseLite.new()
	c.noise_type = FastNoiseLite.TYPE_CELLULAR
	c.seed = 1337
	c.frequency = 0.05
	c.fractal_type = FastNoiseLite.FRACTAL_PING_PONG
	c.fractal_octaves = 3
	c.cellular_distance_function = FastNoiseLite.DISTANCE_HYBRID
	c.cellular_return_type = FastNoiseLite.RETURN_DISTANCE2_SUB
	c.cellular_jitter = 0.7
	cases.append(["noise_type: Cellular, seed: 1337, frequency: 0.05, fractal_type: PingPong, fractal_octaves: 3, "
			+ "cellular_distance_function: Hybrid, cellular_return_type: Distance2Sub, cellular_jitter: 0.7", c])
	var d := FastNoiseLite.new()
	d.noise_type = FastNoiseLite.TYPE_SIMPLEX
	d.seed = 1337
	d.fractal_type = FastNoiseLite.FRACTAL_NONE
	d.domain_warp_enabled = true
	d.domain_warp_type = FastNoiseLite.DOMAIN_WARP_SIMPLEX_REDUCED
	d.domain_warp_amplitude = 40.0
	d.domain_warp_fractal_type = FastNoiseLite.DOMAIN_WARP_FRACTAL_INDEPENDENT
	cases.append(["noise_type: Simplex, seed: 1337, fractal_type: None, domain_warp_enabled: true, "
			+ "domain_warp_type: SimplexReduced, domain_warp_amplitude: 40.0, domain_warp_fractal_type: Independent", d])
	var e := FastNoiseLite.new()
	e.noise_type = FastNoiseLite.TYPE_VALUE_CUBIC
	e.seed = 1337
	e.frequency = 0.03
	cases.append(["noise_type: ValueCubic, seed: 1337, frequency: 0.03", e])
	var w: int = 96
	var h: int = 64
	for k: int in range(cases.size()):
		var fields: String = cases[k][0]
		var godot: FastNoiseLite = cases[k][1]
		var r: TerrainRecipe = TerrainRecipe.new()
		r.ron = ("(size: (%d, %d), cell_size: 25.0, seed: 3, terrain: Noise(amplitude: 1.0, basis: FastNoiseLite(%s)), "
				+ "uplift: Noise(noise: (basis: FastNoiseLite(%s)), min: 0.0, max: 1.0), stages: [])") % [w, h, fields, fields]
		if not check(r.validate() == "", "case %d validates: %s" % [k, r.validate()]):
			continue
		var terrain: TerrainWorld = make_scene(r)
		var sim: ErosionSimulator = sim_of(terrain)
		check(sim.start(), "case %d starts" % k)
		check(await wait_done(sim, 60000), "case %d finished" % k)
		var img: Image = terrain.get_map("height")
		var up: Image = terrain.get_map("uplift")
		if not check(img != null and img.get_size() == Vector2i(w, h) and up != null, "case %d: height and uplift maps" % k):
			continue
		var ours: PackedFloat32Array = floats_of(img)
		var theirs := PackedFloat32Array()
		theirs.resize(w * h)
		for y: int in range(h):
			for x: int in range(w):
				theirs[y * w + x] = godot.get_noise_2d(x, y)
		var worst: float = 0.0
		for i: int in range(w * h):
			worst = max(worst, abs(ours[i] - theirs[i]))
		print("  measured FastNoiseLite case %d: max |Orogen - Godot| = %s over %d cells" % [k, worst, w * h])
		check(ours.to_byte_array() == theirs.to_byte_array(), "case %d: heights are Godot's get_noise_2d bit for bit (max diff %s)" % [k, worst])
		# get_image (normalize = true) quantises (v - min) / (max - min) * 255 in f32; Orogen's
		# uplift is the same ratio in f64, so a level may round the other way.
		var gi: Image = godot.get_image(w, h)
		var ups: PackedFloat32Array = floats_of(up)
		var off_by: int = 0
		var worst_level: int = 0
		for y: int in range(h):
			for x: int in range(w):
				var level: int = int(clampf(ups[y * w + x] * 255.0, 0.0, 255.0))
				var dl: int = absi(level - gi.get_pixel(x, y).r8)
				worst_level = maxi(worst_level, dl)
				if dl != 0:
					off_by += 1
		print("  measured FastNoiseLite case %d: get_image levels differing: %d of %d (max %d)" % [k, off_by, w * h, worst_level])
		check(worst_level <= 1, "case %d: uplift reads as get_image (max level difference %d)" % [k, worst_level])
		terrain.queue_free()


func test_signals_in_order() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	var log: Array = []
	sim.progress.connect(func(index: int, stage: String, f: float) -> void: log.append(["progress", stage, f, index]))
	sim.step_finished.connect(func(i: int) -> void: log.append(["step", i]))
	sim.finished.connect(func() -> void: log.append(["finished"]))
	sim.failed.connect(func(m: String) -> void: log.append(["failed", m]))
	check(sim.start(), "start")
	check(sim.is_running(), "running after start")
	check(await wait_done(sim, 120000), "finished in time")
	for i: int in range(10):
		await process_frame
	var finished_at: Array[int] = []
	for i: int in range(log.size()):
		if log[i][0] == "finished":
			finished_at.append(i)
		check(log[i][0] != "failed", "no failure: " + str(log[i]))
	check(finished_at.size() == 1, "finished exactly once (%d)" % finished_at.size())
	check(not finished_at.is_empty() and finished_at[0] == log.size() - 1, "finished is the last signal")
	# Stages in recipe order, their indices 0, 1, 2… (one per recipe stage, named as in the
	# recipe); fractions never go back within a stage; steps count up.
	var recipe_stages: Array = []
	for s: Dictionary in terrain.recipe.to_dict()["stages"]:
		recipe_stages.append(s.keys()[0])
	var seen: Array = []
	var seen_indices: Array[int] = []
	var last_f: float = -1.0
	var last_step: int = 0
	for e: Array in log:
		if e[0] == "progress":
			if seen_indices.is_empty() or seen_indices[-1] != e[3]:
				seen_indices.append(e[3])
				seen.append(e[1])
				last_f = -1.0
				last_step = 0
			var at: int = e[3]
			check(at >= 0 and at < recipe_stages.size() and recipe_stages[at] == e[1],
					"stage %d is called %s in the recipe" % [at, e[1]])
			check(e[2] >= last_f and e[2] >= 0.0 and e[2] <= 1.0, "fraction order in %s: %f after %f" % [e[1], e[2], last_f])
			last_f = e[2]
		elif e[0] == "step":
			check(e[1] > last_step, "step numbers increase (%d after %d)" % [e[1], last_step])
			last_step = e[1]
	check(seen == recipe_stages, "stages reported in order %s (got %s)" % [recipe_stages, seen])
	var want_indices: Array[int] = []
	for i: int in range(recipe_stages.size()):
		want_indices.append(i)
	check(recipe_stages.size() >= 2 and seen_indices == want_indices,
			"stage indices arrive in order %s, one per recipe stage (got %s)" % [want_indices, seen_indices])
	check(not sim.is_running(), "not running after finished")
	check(sim.get_result() != null and sim.get_result() == terrain.data, "result applied to the terrain")


func test_cancel_stops_quickly() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("long.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	var messages: PackedStringArray = []
	var steps: Array[int] = [0]
	sim.failed.connect(func(m: String) -> void: messages.append(m))
	sim.step_finished.connect(func(_i: int) -> void: steps[0] += 1)
	var finished: Array[int] = [0]
	sim.finished.connect(func() -> void: finished[0] += 1)
	check(sim.start(), "start")
	var t0: int = Time.get_ticks_msec()
	while steps[0] < 2 and Time.get_ticks_msec() - t0 < 60000:
		await process_frame
	check(steps[0] >= 2, "the run made steps")
	var start: int = Time.get_ticks_msec()
	var at_cancel: int = steps[0]
	sim.cancel()
	var stopped: bool = await wait_done(sim, 5000)
	var took: int = Time.get_ticks_msec() - start
	# The worker checks cancel between steps: what follows cancel() is the step in flight
	# and the steps already queued for the main thread's next poll (a frame's worth, a few
	# milliseconds each). A step count, not a time, so a loaded machine cannot fail it; the
	# time is reported.
	var after: int = steps[0] - at_cancel
	check(stopped and after <= 50, "stopped within a frame's steps of cancel() (%d more of 100000)" % after)
	print("  measured: cancel -> failed signal in %d ms, %d steps after cancel" % [took, after])
	check(messages == PackedStringArray(["cancelled"]), "failed('cancelled') once: %s" % messages)
	check(finished[0] == 0, "no finished after cancel")
	check(sim.get_result() == null and terrain.data == null, "nothing applied")
	check(await wait_no_threads(3000), "worker and pool threads gone")


func test_bad_recipe_fails_with_reason() -> void:
	var r: TerrainRecipe = TerrainRecipe.new()
	r.ron = "(size: (65, 65), cell_size: -5.0, seed: 1, terrain: Flat(0.0))"
	var terrain: TerrainWorld = make_scene(r)
	var sim: ErosionSimulator = sim_of(terrain)
	var messages: PackedStringArray = []
	sim.failed.connect(func(m: String) -> void: messages.append(m))
	check(not sim.start(), "start refuses an invalid recipe")
	check(messages.size() == 1 and messages[0].contains("cell_size"), "failed names the field: %s" % messages)
	check(not sim.is_running(), "not running")
	r.ron = "(size: (65, 65), cell_size: 5.0, seed: 1, terrain: Flat(0.0), stages: [Erode()])"
	messages.clear()
	check(not sim.start(), "start refuses a recipe that does not parse")
	check(messages.size() == 1 and messages[0].contains("Erode"), "parse error names the culprit: %s" % messages)
	var lone: ErosionSimulator = ErosionSimulator.new()
	root.add_child(lone)
	messages.clear()
	lone.failed.connect(func(m: String) -> void: messages.append(m))
	check(not lone.start(), "no recipe, no terrain: refused")
	check(messages.size() == 1 and messages[0].contains("recipe"), "says the recipe is missing: %s" % messages)
	check(ErosionSimulator.live_thread_count() == 0, "no thread started")


## A pool size outside 0 (one per CPU) to 256 is refused by start() with a message naming
## `threads`, before any thread starts (1,024 threads took a 33² run from 30 ms to 14 s).
func test_threads_out_of_range_refused() -> void:
	var r: TerrainRecipe = recipe_from("equiv.ron")
	for n: int in [-1, 257, 1000000]:
		var lone: ErosionSimulator = ErosionSimulator.new()
		lone.recipe = r
		lone.apply_on_finish = false
		lone.threads = n
		var messages: PackedStringArray = []
		lone.failed.connect(func(m: String) -> void: messages.append(m))
		check(not lone.start(), "threads = %d: start() refuses" % n)
		check(messages.size() == 1 and messages[0].contains("threads") and messages[0].contains(str(n)),
				"threads = %d: failed once naming `threads`: %s" % [n, messages])
		check(not lone.is_running() and ErosionSimulator.live_thread_count() == 0, "threads = %d: nothing started" % n)
		lone.free()


func test_stage_reports_carry_figures() -> void:
	# A finished run reports each stage with its seconds and figures, as bake.json does: sand
	# blown over an open border is counted (`wind_blown_off_m3`), a closed border loses none
	# but rounding (7e-5 of 6,042 m³ measured)
	# (the core's wind_borders test checks the figure against the sand that left).
	var blown: Dictionary = {}
	for borders: String in ["Open", "Closed"]:
		var r: TerrainRecipe = TerrainRecipe.new()
		r.ron = ("(size: (64, 48), cell_size: 2.0, seed: 3,"
				+ " terrain: Noise(kind: Fbm, octaves: 3, wavelength: 30.0, amplitude: 0.5),"
				+ " materials: [(name: \"rock\", wind_resistance: 1.0)],"
				+ " strata: (layers: [(material: \"sand\", thickness: Constant(1.0))], bottom: \"rock\", sediment: \"sand\"),"
				+ " stages: [Wind(iterations: 30, direction_deg: 20.0, borders: %s), Thermal(iterations: 2)])") % borders
		var terrain: TerrainWorld = make_scene(r)
		var sim: ErosionSimulator = sim_of(terrain)
		check(sim.get_stage_reports().is_empty(), "%s: no reports before a run" % borders)
		check(sim.start(), "%s: the wind run starts" % borders)
		check(await wait_done(sim, 20000), "%s: the wind run finishes" % borders)
		var reports: Array[Dictionary] = sim.get_stage_reports()
		var names: Array = reports.map(func(d: Dictionary) -> String: return d.get("stage", ""))
		check(names == ["initial terrain", "Wind", "Thermal"], "%s: one report per stage, in order: %s" % [borders, names])
		if reports.size() == 3:
			check(reports.all(func(d: Dictionary) -> bool: return float(d["seconds"]) >= 0.0), "%s: seconds" % borders)
			var figures: Dictionary = reports[1]["figures"]
			check(figures.has("wind_blown_off_m3"), "%s: the wind stage reports what blew off: %s" % [borders, figures])
			blown[borders] = float(figures.get("wind_blown_off_m3", -1.0))
			check((reports[2]["figures"] as Dictionary).is_empty(), "%s: thermal measures nothing" % borders)
		terrain.queue_free()
	check(blown.get("Open", 0.0) > 1.0 and absf(blown.get("Closed", 1.0)) < 1.0e-3,
			"open borders lose sand, closed ones none: %s m³" % blown)


func test_run_time_error_fails_with_reason() -> void:
	# A missing file is refused before the run starts (the recipe does not validate).
	var r: TerrainRecipe = TerrainRecipe.new()
	r.ron = "(size: (33, 33), cell_size: 10.0, seed: 1, terrain: Heightmap(path: \"no_such_file_orogen.exr\"))"
	var terrain: TerrainWorld = make_scene(r)
	var sim: ErosionSimulator = sim_of(terrain)
	var messages: PackedStringArray = []
	sim.failed.connect(func(m: String) -> void: messages.append(m))
	check(not sim.start(), "a recipe naming a missing file does not start")
	check(messages.size() == 1 and messages[0].contains("no_such_file_orogen.exr") and messages[0].contains("terrain.Heightmap.path"),
			"failed names the field and the file: %s" % messages)
	terrain.queue_free()
	# A file that is there but is no EXR fails while the run reads it, naming the file.
	var bad: String = ProjectSettings.globalize_path("user://orogen_not_an_exr.exr")
	var f: FileAccess = FileAccess.open(bad, FileAccess.WRITE)
	f.store_string("this is not an EXR file")
	f.close()
	var r2: TerrainRecipe = TerrainRecipe.new()
	r2.ron = "(size: (33, 33), cell_size: 10.0, seed: 1, terrain: Heightmap(path: \"%s\"))" % bad
	var terrain2: TerrainWorld = make_scene(r2)
	var sim2: ErosionSimulator = sim_of(terrain2)
	var messages2: PackedStringArray = []
	sim2.failed.connect(func(m: String) -> void: messages2.append(m))
	check(sim2.start(), "a recipe naming an existing file starts")
	check(await wait_done(sim2, 10000), "stops")
	check(messages2.size() == 1 and messages2[0].contains("orogen_not_an_exr.exr"), "failed names the file: %s" % messages2)
	check(terrain2.data == null, "nothing applied")
	DirAccess.remove_absolute(bad)


func test_apply_on_finish_false_leaves_terrain() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	sim.apply_on_finish = false
	sim.live_update = false
	var changes: Array[int] = [0]
	terrain.data_changed.connect(func() -> void: changes[0] += 1)
	check(sim.start(), "start")
	check(await wait_done(sim, 120000), "finished")
	check(terrain.data == null and changes[0] == 0, "terrain untouched")
	var result: TerrainData = sim.get_result()
	if not check(result != null, "result available"):
		return
	check(result.get_width() == 129 and result.get_depth() == 97 and result.cell_size == 50.0, "result shape and cell size")
	var ref: Image = Image.load_from_file(bake_dir.path_join("height.exr"))
	check(ref != null and result.heights.get_data() == ref.get_data(), "result heights are the CLI's")
	terrain.data = result
	check(changes[0] == 1 and terrain.get_map_names().has("drainage"), "applying it by hand works (the dock's undo path)")


## start() while the last run's result is still being applied (is_finishing()) is refused:
## it returns false and emits `failed` with the reason, and the run carries on: its result is
## applied and `finished` comes once. Once it has, start() works again. (Before, such a start
## began a second run that the end of the delivery then stopped processing, so it never ended.)
func test_start_while_finishing_is_refused() -> void:
	var recipe := recipe_from("big.ron")
	var terrain: TerrainWorld = make_scene(recipe)
	var sim: ErosionSimulator = sim_of(terrain)
	# One piece of the result a poll, so that applying it takes several polls on any machine.
	sim.apply_budget_ms = 0.0
	var finished: Array[int] = [0]
	var failures: Array[String] = []
	sim.finished.connect(func() -> void: finished[0] += 1)
	sim.failed.connect(func(m: String) -> void: failures.append(m))
	check(sim.start(), "start")
	sim.set_process(false)
	var seen_finishing := false
	var second_start := true
	var t0: int = Time.get_ticks_msec()
	while sim.is_running() and Time.get_ticks_msec() - t0 < 120000:
		await process_frame
		sim.poll()
		if sim.is_finishing() and not seen_finishing:
			seen_finishing = true
			second_start = sim.start()
	if not check(seen_finishing, "the result took more than one poll to apply"):
		terrain.queue_free()
		return
	check(not second_start, "start() while finishing returns false")
	check(failures.size() == 1 and failures[0].contains("still being applied"), "it emits failed with the reason: %s" % [failures])
	check(finished[0] == 1 and not sim.is_running(), "the run still finished, once (finished %d times)" % finished[0])
	check(terrain.data != null and terrain.data.get_width() == 513, "its result was applied")
	sim.apply_budget_ms = 6.0
	check(sim.start(), "start() after finished works")
	check(await wait_done(sim, 120000) and finished[0] == 2, "and that run finishes too")
	terrain.queue_free()


## A Graph-domain run (issue #9): get_rivers() gives curves on the drawn terrain, beds never
## rising downstream, a width and discharge per point, and they survive a .res round trip.
func test_graph_rivers() -> void:
	var r := TerrainRecipe.new()
	r.ron = "(size: (129, 129), cell_size: 200.0, seed: 3, domain: Graph(spacing: 500.0), " \
		+ "terrain: Noise(octaves: 3, wavelength: 8000.0, amplitude: 10.0), " \
		+ "uplift: Constant(0.001), stages: [StreamPower(iterations: 40, dt: 50000.0)])"
	var terrain: TerrainWorld = make_scene(r)
	var sim: ErosionSimulator = sim_of(terrain)
	sim.start()
	if not check(await wait_done(sim, 120000), "graph run finished"):
		return
	var rivers: Array = terrain.get_rivers()
	if not check(rivers.size() > 3, "rivers from the graph (%d)" % rivers.size()):
		return
	var half: float = 64.0 * 200.0
	var inside: bool = true
	var falling: bool = true
	var sizes: bool = true
	var diff_sum: float = 0.0
	var shifted_sum: float = 0.0
	var count: int = 0
	var hi: float = -INF
	var lo: float = INF
	for d: Dictionary in rivers:
		var curve: Curve3D = d["curve"]
		var n: int = curve.point_count
		sizes = sizes and n >= 2 and (d["width"] as PackedFloat32Array).size() == n \
			and (d["discharge"] as PackedFloat32Array).size() == n and int(d["order"]) >= 1
		var prev: float = INF
		for i: int in range(n):
			var p: Vector3 = curve.get_point_position(i)
			inside = inside and abs(p.x) <= half + 1.0 and abs(p.z) <= half + 1.0
			falling = falling and p.y <= prev + 1e-3
			prev = p.y
			diff_sum += abs(terrain.get_height(p.x, p.z) - p.y)
			# The same point three cells off: on the valley side, well above the bed.
			shifted_sum += abs(terrain.get_height(p.x + 600.0, p.z + 600.0) - p.y)
			count += 1
	check(sizes, "each river has a width, a discharge per point and an order")
	check(inside, "river points lie on the terrain (centred, metres)")
	check(falling, "beds never rise downstream")
	var hs: PackedFloat32Array = floats_of(terrain.get_map("height"))
	for v: float in hs:
		hi = max(hi, v)
		lo = min(lo, v)
	var mean_diff: float = diff_sum / max(count, 1)
	var mean_shifted: float = shifted_sum / max(count, 1)
	# The bed line runs along the drawn valley floors (channels narrower than a cell, so
	# within metres); three cells off, the curves would sit on the valley sides.
	check(mean_diff < 0.03 * (hi - lo) and mean_diff < 0.5 * mean_shifted,
		"curves follow the drawn valleys (mean |terrain - bed| %.2f m over %d points, %.2f m three cells off, relief %.0f m)" % [mean_diff, count, mean_shifted, hi - lo])
	# The graph's nodes for overlays: one drainage each, on the drawn terrain.
	var nodes: PackedVector3Array = terrain.data.graph_nodes
	var node_diff: float = 0.0
	for p: Vector3 in nodes:
		node_diff += abs(terrain.get_height(p.x, p.z) - p.y)
	node_diff /= max(nodes.size(), 1)
	check(nodes.size() > 1000 and terrain.data.graph_drainage.size() == nodes.size(),
		"graph nodes with their drainage (%d)" % nodes.size())
	check(node_diff < 0.03 * (hi - lo), "graph nodes sit on the drawn terrain (mean %.2f m off)" % node_diff)
	var path: String = out_dir.path_join("graph_rivers.res")
	check(ResourceSaver.save(terrain.data, path) == OK, "saved")
	var back: TerrainData = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE) as TerrainData
	check(back != null and back.rivers.size() == rivers.size(), "rivers survive a .res round trip")
	terrain.queue_free()


func test_get_height_matches_height_map() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	sim.start()
	check(await wait_done(sim, 120000), "finished")
	var img: Image = terrain.get_map("height")
	if not check(img != null, "heights"):
		return
	var w: int = img.get_width()
	var h: int = img.get_height()
	var cs: float = terrain.data.cell_size
	var hs: PackedFloat32Array = floats_of(img)
	var rng := RandomNumberGenerator.new()
	rng.seed = 12345
	var worst: float = 0.0
	for k: int in range(300):
		var i: int = rng.randi_range(0, w - 1)
		var j: int = rng.randi_range(0, h - 1)
		var x: float = (i - (w - 1) * 0.5) * cs
		var z: float = (j - (h - 1) * 0.5) * cs
		worst = max(worst, abs(terrain.get_height(x, z) - hs[j * w + i]))
		if i + 1 < w and j + 1 < h:
			# Cell centre of four samples: bilinear = their mean.
			var mid: float = (hs[j * w + i] + hs[j * w + i + 1] + hs[(j + 1) * w + i] + hs[(j + 1) * w + i + 1]) * 0.25
			worst = max(worst, abs(terrain.get_height(x + cs * 0.5, z + cs * 0.5) - mid))
	check(worst < 1e-2, "get_height agrees with the height map (worst %f m)" % worst)
	# Normals: unit length, pointing up, tilted downhill.
	var n: Vector3 = terrain.get_normal(0.0, 0.0)
	check(abs(n.length() - 1.0) < 1e-4 and n.y > 0.0, "normal is a unit up vector")
	var xa: float = 3.0 * cs
	var slope_x: float = (terrain.get_height(xa + cs, 0.0) - terrain.get_height(xa - cs, 0.0)) / (2.0 * cs)
	var nx: Vector3 = terrain.get_normal(xa, 0.0)
	check(abs(-nx.x / nx.y - slope_x) < 1e-3, "normal matches the x slope")


func test_collision_matches_heights() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	sim.start()
	check(await wait_done(sim, 120000), "finished")
	await physics_frame
	await physics_frame
	var img: Image = terrain.get_map("height")
	if not check(img != null, "heights"):
		return
	var w: int = img.get_width()
	var h: int = img.get_height()
	var cs: float = terrain.data.cell_size
	var hs: PackedFloat32Array = floats_of(img)
	var space: PhysicsDirectSpaceState3D = terrain.get_world_3d().direct_space_state
	var rng := RandomNumberGenerator.new()
	rng.seed = 777
	var hits: int = 0
	var worst: float = 0.0
	for k: int in range(200):
		var i: int = rng.randi_range(0, w - 1)
		var j: int = rng.randi_range(0, h - 1)
		var x: float = (i - (w - 1) * 0.5) * cs
		var z: float = (j - (h - 1) * 0.5) * cs
		var q := PhysicsRayQueryParameters3D.create(Vector3(x, 20000.0, z), Vector3(x, -20000.0, z))
		var hit: Dictionary = space.intersect_ray(q)
		if hit.is_empty():
			continue
		hits += 1
		worst = max(worst, abs((hit["position"] as Vector3).y - hs[j * w + i]))
	check(hits == 200, "every ray hits the terrain (%d/200)" % hits)
	check(worst < 0.05, "collision height = height map at samples (worst %f m)" % worst)
	terrain.collision_enabled = false
	await physics_frame
	await physics_frame
	var q2 := PhysicsRayQueryParameters3D.create(Vector3(0, 20000.0, 0), Vector3(0, -20000.0, 0))
	check(space.intersect_ray(q2).is_empty(), "no collision when disabled")


func test_free_mid_run_leaks_no_thread() -> void:
	check(await wait_no_threads(3000), "no thread before")
	# A simulator in the tree, freed while running (exit_tree + drop).
	var terrain: TerrainWorld = make_scene(recipe_from("long.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	var steps: Array[int] = [0]
	sim.step_finished.connect(func(_i: int) -> void: steps[0] += 1)
	check(sim.start(), "start")
	var t0: int = Time.get_ticks_msec()
	while steps[0] < 1 and Time.get_ticks_msec() - t0 < 60000:
		await process_frame
	check(ErosionSimulator.live_thread_count() >= 2, "worker and pool threads alive while running")
	terrain.queue_free()
	await process_frame
	await process_frame
	check(await wait_no_threads(3000), "no thread left after freeing the terrain mid-run (%d)" % ErosionSimulator.live_thread_count())
	# A simulator outside any tree, freed with free() while running (drop only).
	var r: TerrainRecipe = recipe_from("long.ron")
	var lone: ErosionSimulator = ErosionSimulator.new()
	lone.recipe = r
	lone.apply_on_finish = false
	check(lone.start(), "start outside the tree")
	var t1: int = Time.get_ticks_msec()
	while Time.get_ticks_msec() - t1 < 300:
		lone.poll()
		await process_frame
	lone.free()
	check(await wait_no_threads(3000), "no thread left after free() (%d)" % ErosionSimulator.live_thread_count())


func test_generate_and_data_changed() -> void:
	var terrain: TerrainWorld = TerrainWorld.new()
	terrain.recipe = recipe_from("equiv.ron")
	root.add_child(terrain)
	var changes: Array[int] = [0]
	terrain.data_changed.connect(func() -> void:
		changes[0] += 1
		# Queries work from inside the signal.
		terrain.get_height(0.0, 0.0))
	var sim: ErosionSimulator = terrain.generate()
	check(sim != null, "generate returns a simulator")
	var seen_result: Array[bool] = [false]
	# Calling back into the simulator from the terrain's signal is allowed.
	terrain.data_changed.connect(func() -> void: seen_result[0] = sim.get_result() != null and not sim.is_running(), CONNECT_ONE_SHOT)
	var done: Array[bool] = [false]
	sim.finished.connect(func() -> void: done[0] = true)
	var t0: int = Time.get_ticks_msec()
	while not done[0] and Time.get_ticks_msec() - t0 < 120000:
		await process_frame
	check(done[0], "generate finished")
	check(terrain.data != null and changes[0] == 1, "data set once (%d data_changed)" % changes[0])
	check(seen_result[0], "the simulator answered from inside data_changed")
	var first: TerrainData = terrain.data
	var flat := TerrainData.new()
	var img := Image.create_empty(5, 4, false, Image.FORMAT_RF)
	img.fill(Color(7.5, 0, 0))
	flat.heights = img
	flat.cell_size = 2.0
	terrain.data = flat
	check(changes[0] == 2 and is_equal_approx(terrain.get_height(1.0, 1.0), 7.5), "set_data swaps terrain")
	terrain.data = first
	check(changes[0] == 3 and terrain.get_map("height").get_data() == first.heights.get_data(), "undo-style set_data restores")
	for i: int in range(3):
		await process_frame
	check(terrain.get_child_count(true) >= 1 and not terrain.has_node("OrogenGenerate"), "generate's simulator freed itself")


func test_save_maps_matches_cli_files() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	sim.start()
	check(await wait_done(sim, 120000), "finished")
	var dir: String = out_dir.path_join("saved_maps")
	check(terrain.save_maps(dir) == "", "save_maps")
	for f: String in DirAccess.get_files_at(bake_dir):
		if f == "bake.json":
			continue
		var ours: PackedByteArray = FileAccess.get_file_as_bytes(dir.path_join(f))
		var ref: PackedByteArray = FileAccess.get_file_as_bytes(bake_dir.path_join(f))
		check(ours.size() > 0 and ours == ref, "%s identical to the CLI's" % f)
	check(terrain.save_maps("/proc/orogen/no").length() > 0, "save_maps to an unwritable place returns an error")


func test_load_heightmap_and_resource_round_trip() -> void:
	var terrain: TerrainWorld = TerrainWorld.new()
	root.add_child(terrain)
	check(terrain.load_heightmap(bake_dir.path_join("height.exr")) == "", "load_heightmap EXR")
	var ref: Image = Image.load_from_file(bake_dir.path_join("height.exr"))
	check(terrain.get_map("height").get_data() == ref.get_data(), "loaded heights are the file's")
	var err: String = terrain.load_heightmap(out_dir.path_join("nothing_here.exr"))
	check(err.contains("nothing_here.exr"), "missing file named: " + err)
	# TerrainData saved as a resource and read back keeps every map exactly.
	var t2: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var sim: ErosionSimulator = sim_of(t2)
	sim.start()
	check(await wait_done(sim, 120000), "finished")
	var path: String = out_dir.path_join("terrain.res")
	check(ResourceSaver.save(t2.data, path) == OK, "ResourceSaver.save")
	var back: TerrainData = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE) as TerrainData
	if not check(back != null, "ResourceLoader.load gives a TerrainData"):
		return
	check(back.heights.get_data() == t2.data.heights.get_data(), "heights survive .res")
	check(back.cell_size == t2.data.cell_size, "cell size survives .res")
	for k: Variant in t2.data.maps.keys():
		check(back.maps.has(k) and (back.maps[k] as Image).get_data() == (t2.data.maps[k] as Image).get_data(), "map %s survives .res" % k)
	var dir2: String = out_dir.path_join("from_res")
	t2.data = back
	check(t2.save_maps(dir2) == "", "save_maps from a loaded resource")
	for f: String in ["height.exr", "basins.png", "rivers.png", "drainage.exr"]:
		if FileAccess.file_exists(bake_dir.path_join(f)):
			check(FileAccess.get_file_as_bytes(dir2.path_join(f)) == FileAccess.get_file_as_bytes(bake_dir.path_join(f)), "%s from the .res equals the CLI's" % f)


## A DEM with non-square cells and NaN holes, loaded as a user would: the terrain keeps
## (dx, dy) from the recipe, queries and collision follow the plane it holds on both axes, the
## holes are outlets at the lowest valid height and the `nodata` map, and all of it survives a
## saved .res. Without `nodata` the NaN is an error naming the file.
func test_load_heightmap_non_square_with_nodata() -> void:
	var w: int = 21
	var h: int = 13
	var dx: float = 30.0
	var dy: float = 50.0
	var a: float = 0.2
	var b: float = -0.1
	var img: Image = Image.create_empty(w, h, false, Image.FORMAT_RF)
	var lowest: float = INF
	for j: int in range(h):
		for i: int in range(w):
			var x: float = (i - (w - 1) * 0.5) * dx
			var z: float = (j - (h - 1) * 0.5) * dy
			var v: float = 500.0 + a * x + b * z
			var hole: bool = i >= 3 and i <= 5 and j >= 2 and j <= 4
			if hole:
				v = NAN
			else:
				lowest = min(lowest, v)
			img.set_pixel(i, j, Color(v, 0.0, 0.0))
	var path: String = out_dir.path_join("dem_holes.exr")
	if not check(img.save_exr(path, true) == OK, "Image.save_exr"):
		return
	var recipe: TerrainRecipe = TerrainRecipe.new()
	recipe.ron = "(size: (3, 3), cell_size: (30.0, 50.0), seed: 0, terrain: Flat(0.0))"
	var terrain: TerrainWorld = TerrainWorld.new()
	terrain.recipe = recipe
	root.add_child(terrain)
	var err: String = terrain.load_heightmap(path)
	check(err.contains("dem_holes.exr") and err.to_lower().contains("nan"), "NaN without nodata is an error naming the file: " + err)
	err = terrain.load_heightmap(path, NAN)
	if not check(err == "", "load_heightmap with nodata NAN: " + err):
		return
	var d: TerrainData = terrain.data
	check(d.get_width() == w and d.get_depth() == h, "size %dx%d" % [d.get_width(), d.get_depth()])
	check(d.cell_size == dx and d.cell_size_y == dy, "cell size (%f, %f) from the recipe" % [d.cell_size, d.cell_size_y])
	# Queries: the plane on both axes, away from the hole.
	var worst: float = 0.0
	for p: Vector2 in [Vector2(250.0, 200.0), Vector2(-90.0, 260.0), Vector2(270.0, -10.0), Vector2(0.0, 140.0)]:
		worst = max(worst, abs(terrain.get_height(p.x, p.y) - (500.0 + a * p.x + b * p.y)))
	check(worst < 1e-3, "get_height follows the plane on dx and dy (worst %f m)" % worst)
	var n: Vector3 = terrain.get_normal(250.0, 200.0)
	check(abs(-n.x / n.y - a) < 1e-3 and abs(-n.z / n.y - b) < 1e-3, "normal has the plane's slopes on both axes: %s" % n)
	# The holes: outlets at the lowest valid height, in the nodata map.
	var mask: Image = terrain.get_map("nodata")
	if check(mask != null, "nodata map present: %s" % terrain.get_map_names()):
		var ok: bool = true
		for j: int in range(h):
			for i: int in range(w):
				var hole: bool = i >= 3 and i <= 5 and j >= 2 and j <= 4
				ok = ok and ((mask.get_pixel(i, j).r > 0.5) == hole)
		check(ok, "nodata map marks exactly the NaN cells")
	var hs: PackedFloat32Array = floats_of(terrain.get_map("height"))
	check(abs(hs[3 * w + 4] - lowest) < 1e-3, "a hole sits at the lowest valid height (%f vs %f)" % [hs[3 * w + 4], lowest])
	# Collision over the same non-square extent, out to the far corner.
	await physics_frame
	await physics_frame
	var space: PhysicsDirectSpaceState3D = terrain.get_world_3d().direct_space_state
	var hits: int = 0
	worst = 0.0
	for p: Vector2 in [Vector2(250.0, 200.0), Vector2(-280.0, 280.0), Vector2(280.0, -280.0), Vector2(0.0, 0.0)]:
		var q := PhysicsRayQueryParameters3D.create(Vector3(p.x, 5000.0, p.y), Vector3(p.x, -5000.0, p.y))
		var hit: Dictionary = space.intersect_ray(q)
		if hit.is_empty():
			continue
		hits += 1
		worst = max(worst, abs((hit["position"] as Vector3).y - (500.0 + a * p.x + b * p.y)))
	check(hits == 4, "rays hit the collision across the %.0f x %.0f m terrain (%d/4)" % [(w - 1) * dx, (h - 1) * dy, hits])
	check(worst < 0.05, "collision follows the plane (worst %f m)" % worst)
	# The shader draws non-square cells and cuts the holes.
	var m: ShaderMaterial = terrain.get_terrain_material()
	if check(m != null, "terrain material"):
		check(m.get_shader_parameter("cell_size") == Vector2(dx, dy), "shader cell size %s" % m.get_shader_parameter("cell_size"))
		check(m.get_shader_parameter("has_nodata") == true, "shader cuts the holes")
	# A saved .res keeps dy and the holes, and a terrain set from it treats them as nodata.
	var res_path: String = out_dir.path_join("dem_holes.res")
	check(ResourceSaver.save(d, res_path) == OK, "ResourceSaver.save")
	var back: TerrainData = ResourceLoader.load(res_path, "", ResourceLoader.CACHE_MODE_IGNORE) as TerrainData
	if check(back != null, "ResourceLoader.load"):
		check(back.cell_size_y == dy, "cell_size_y survives .res")
		var t2: TerrainWorld = TerrainWorld.new()
		root.add_child(t2)
		t2.data = back
		check(abs(t2.get_height(250.0, 200.0) - (500.0 + a * 250.0 + b * 200.0)) < 1e-3, "a terrain from the .res has the same non-square layout")
		t2.queue_free()
	terrain.queue_free()


## A layered world is drawn in its materials' colours: the shader's surface colour is on, its
## texture holds each exposed material's recipe colour (different for sandstone and shale),
## and it comes back when the terrain is set from its TerrainData (undo, a saved .res); a
## one-material terrain is coloured by slope and height.
func test_layered_surface_colour() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("strata_small.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	# Live snapshots would create the texture and the result update it in place, which the
	# headless (dummy) renderer ignores: read back, the texture would still be the first
	# snapshot's. Without them the result creates it.
	sim.live_update = false
	check(sim.start(), "start")
	check(await wait_done(sim, 120000), "finished")
	var mat: ShaderMaterial = terrain.get_terrain_material()
	if not check(mat != null and terrain.data != null, "the terrain is drawn"):
		return
	check(mat.get_shader_parameter("has_surface_colour") == true, "surface colour on for a layered world")
	var tex: Texture2D = mat.get_shader_parameter("surface_colour") as Texture2D
	var map: Image = terrain.get_map("surface_colour")
	var material: Image = terrain.get_map("material")
	if not check(tex != null and map != null and material != null, "surface colour texture and maps exist"):
		return
	var img: Image = tex.get_image()
	check(img.get_size() == map.get_size() and img.get_size() == Vector2i(65, 65), "one texel per cell")
	var sandstone := Color8(201, 146, 88)
	var shale := Color8(118, 108, 128)
	var seen: Dictionary = {}
	var same: bool = true
	for y: int in range(img.get_height()):
		for x: int in range(img.get_width()):
			var c: Color = img.get_pixel(x, y)
			same = same and c.is_equal_approx(map.get_pixel(x, y))
			var key: String = c.to_html(false)
			var m: int = material.get_pixel(x, y).r8
			if not seen.has(key):
				seen[key] = m
	check(same, "the texture is the surface_colour map")
	check(seen.has(sandstone.to_html(false)) and seen[sandstone.to_html(false)] == 1,
			"sandstone cells show sandstone's colour (%s)" % [seen.keys().slice(0, 8)])
	check(seen.has(shale.to_html(false)) and seen[shale.to_html(false)] == 2, "shale cells show shale's colour")
	# Beds of one thickness are drawn as bands: each cell's place in the column, and the
	# column, whose texel at a cell's place is that cell's exposed material where the bed is
	# thicker than a metre (then the per-cell colour is the material's own).
	check(mat.get_shader_parameter("has_strata") == true, "strata drawn as bands")
	var position: Image = terrain.get_map("strata_position")
	var column: Image = terrain.get_map("strata_column")
	var column_tex: Texture2D = mat.get_shader_parameter("strata_column") as Texture2D
	if check(position != null and column != null and column_tex != null and column.get_height() == 1,
			"the strata position and column maps exist"):
		var agree: int = 0
		var cells: int = 0
		for y: int in range(position.get_height()):
			for x: int in range(position.get_width()):
				var c: Color = map.get_pixel(x, y)
				if not (c.is_equal_approx(sandstone) or c.is_equal_approx(shale)):
					continue
				cells += 1
				var texel: int = clampi(int(position.get_pixel(x, y).r * column.get_width() - 1.5), 0, column.get_width() - 1)
				if column.get_pixel(texel, 0).is_equal_approx(c):
					agree += 1
		check(cells > 100 and agree == cells, "the column at each cell's place is its material (%d of %d)" % [agree, cells])
	# From the data alone (the dock's undo path, a saved resource).
	var data: TerrainData = terrain.data
	var path: String = out_dir.path_join("strata.res")
	check(ResourceSaver.save(data, path) == OK, "save the layered TerrainData")
	var back: TerrainData = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE) as TerrainData
	var flat := TerrainData.new()
	var heights := Image.create_empty(5, 4, false, Image.FORMAT_RF)
	flat.heights = heights
	terrain.data = flat
	check(mat.get_shader_parameter("has_surface_colour") == false, "a one-material terrain: surface colour off")
	check(mat.get_shader_parameter("has_strata") == false, "a one-material terrain: no bands")
	terrain.data = back
	var tex2: Texture2D = mat.get_shader_parameter("surface_colour") as Texture2D
	check(mat.get_shader_parameter("has_surface_colour") == true and tex2 != null
			and tex2.get_image().get_pixel(20, 20) == img.get_pixel(20, 20), "surface colour back from the .res")
	check(mat.get_shader_parameter("has_strata") == true, "bands back from the .res")
	var dir_a: String = out_dir.path_join("strata_a")
	var dir_b: String = out_dir.path_join("strata_b")
	terrain.data = data
	check(terrain.save_maps(dir_a) == "", "save_maps of the run")
	terrain.data = back
	check(terrain.save_maps(dir_b) == "", "save_maps of the reloaded resource")
	for f: String in ["material.png", "splat.png", "surface_colour.png", "layer_shale.exr"]:
		var a: PackedByteArray = FileAccess.get_file_as_bytes(dir_a.path_join(f))
		check(a.size() > 0 and a == FileAccess.get_file_as_bytes(dir_b.path_join(f)), "%s survives the .res" % f)


## A hydraulic run's live snapshots carry its water depth, and a layered terrain's colours:
## while the run goes on, with nothing applied yet, the terrain draws water deeper than the
## shader's threshold and colours by material. A run that finishes keeps its water in the
## result (a `water_depth` map though the recipe's outputs do not ask for it), so setting the
## terrain from its data shows it again; a terrain without water draws none.
func test_hydraulic_water_live() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("hydraulic_small.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	check(sim.start(), "start")
	var mat: ShaderMaterial = null
	var t0: int = Time.get_ticks_msec()
	# Until the first snapshot is shown (a hang guard, not a speed check). Its textures are
	# read back as created: the headless renderer ignores in-place updates, so later
	# snapshots cannot be seen here. The recipe's rain puts 5 cm on every cell each step.
	while sim.is_running() and Time.get_ticks_msec() - t0 < 120000:
		await process_frame
		mat = terrain.get_terrain_material()
		if mat != null and mat.get_shader_parameter("has_water_depth") == true:
			break
	var deepest: float = 0.0
	var tex: Texture2D = mat.get_shader_parameter("water_depth") as Texture2D if mat != null else null
	if tex != null:
		for v: float in floats_of(tex.get_image()):
			deepest = max(deepest, v)
	# The shader's own default (the headless renderer does not parse shaders).
	var found: RegExMatch = RegEx.create_from_string("uniform float water_depth_min = ([0-9.]+)").search(
			mat.shader.code if mat != null else "")
	var threshold: float = float(found.get_string(1)) if found != null else 0.0
	check(sim.is_running() and terrain.data == null, "still running, nothing applied: the view is a live snapshot")
	check(mat != null and mat.get_shader_parameter("has_water_depth") == true
			and threshold > 0.0 and deepest > threshold,
			"the live snapshot shows water deeper than the threshold (%.3f m > %.3f m)" % [deepest, threshold])
	check(mat != null and mat.get_shader_parameter("has_surface_colour") == true,
			"the live snapshot colours the layered terrain by material")
	sim.cancel()
	check(await wait_done(sim, 5000), "cancelled")
	# A short run to the end.
	var r: TerrainRecipe = recipe_from("hydraulic_small.ron")
	check(r.set_value("stages[0].iterations", "40") == "", "shorten the run")
	var t2: TerrainWorld = make_scene(r)
	var s2: ErosionSimulator = sim_of(t2)
	check(s2.start(), "start the short run")
	check(await wait_done(s2, 120000), "the short run finished")
	var m2: ShaderMaterial = t2.get_terrain_material()
	var water: Image = t2.get_map("water_depth")
	check(water != null and m2.get_shader_parameter("has_water_depth") == true, "the result keeps and shows its water")
	var data: TerrainData = t2.data
	var flat := TerrainData.new()
	flat.heights = Image.create_empty(5, 4, false, Image.FORMAT_RF)
	t2.data = flat
	check(m2.get_shader_parameter("has_water_depth") == false, "a terrain without water draws none")
	t2.data = data
	check(m2.get_shader_parameter("has_water_depth") == true, "set from its data, the terrain shows the water again")


## Not a pass/fail timing test: reports how long the main thread spends handling the
## worker's messages per frame (poll: signals + uploading the latest snapshot) while a 513²
## run streams live updates, and per frame while the finished result is applied (images,
## textures, collision, a slice per poll); the target is well under 16 ms. Asserts only that
## the result arrived.
func test_frame_time_at_512() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("big.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	sim.threads = 1
	var snapshots: Array[int] = [0]
	sim.step_finished.connect(func(_i: int) -> void: snapshots[0] += 1)
	check(sim.start(), "start")
	sim.set_process(false)
	var worst: int = 0
	var frames: int = 0
	var worst_final: int = 0
	var final_polls: int = 0
	var t0: int = Time.get_ticks_msec()
	while sim.is_running() and Time.get_ticks_msec() - t0 < 120000:
		await process_frame
		var before: int = Time.get_ticks_usec()
		sim.poll()
		var took: int = Time.get_ticks_usec() - before
		if sim.is_finishing() or not sim.is_running():
			worst_final = max(worst_final, took)
			final_polls += 1
		else:
			worst = max(worst, took)
			frames += 1
			if took > 4000:
				print("    slow poll %.2f ms at frame %d" % [took / 1000.0, frames])
	check(not sim.is_running(), "finished")
	check(terrain.data != null and terrain.data.get_width() == 513, "513² result applied")
	print("  measured: 513² run, %d frames, %d steps; longest poll while running %.2f ms; applying the result (TerrainData, display, collision) took %d polls, the longest %.2f ms" % [frames, snapshots[0], worst / 1000.0, final_polls, worst_final / 1000.0])


# --- painting (issue #13) ------------------------------------------------------------------

const Painter := preload("res://addons/orogen/runtime/painter.gd")


## Distance from `p` to the segment `a`–`b` (x, z).
func seg_dist(p: Vector2, a: Vector2, b: Vector2) -> float:
	var ab := b - a
	var t := 0.0 if ab.length_squared() == 0.0 else clampf((p - a).dot(ab) / ab.length_squared(), 0.0, 1.0)
	return p.distance_to(a + ab * t)


## A scripted stroke changes the uplift only within the brush's radius of its path; undo puts
## the map back byte for byte (and an unpainted map back to unpainted); redo repeats it.
func test_paint_stroke_stays_in_radius_and_undoes() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var w := 129
	var h := 97
	var cell := 50.0
	var ur := UndoRedo.new()
	var p = Painter.new()
	p.map = "uplift"
	p.radius = 600.0
	p.value = 0.002
	p.strength = 0.8
	p.falloff = 0.5
	check(not terrain.has_paint("uplift"), "unpainted at first")
	# Stroke 1 makes the map (from the recipe's constant 0.001 m/yr).
	check(p.begin_stroke(terrain, Vector3(-1500, 0, 0)) == "", "begin stroke 1")
	p.stroke_to(Vector3(-500, 0, 300))
	check(p.end_stroke(ur), "stroke 1 changed the map")
	var after1: PackedFloat32Array = terrain.get_paint_values("uplift")
	check(after1.size() == w * h, "one value per cell (%d)" % after1.size())
	# Stroke 2 from (-200, 100) to (1400, -800).
	var a := Vector2(-200, 100)
	var b := Vector2(1400, -800)
	p.mode = "subtract"
	p.value = 0.0005
	check(p.begin_stroke(terrain, Vector3(a.x, 0, a.y)) == "", "begin stroke 2")
	p.stroke_to(Vector3(b.x, 0, b.y))
	check(p.end_stroke(ur), "stroke 2 changed the map")
	var after2: PackedFloat32Array = terrain.get_paint_values("uplift")
	var changed := 0
	var outside := 0
	for j in h:
		for i in w:
			var k := j * w + i
			if after2[k] == after1[k]:
				continue
			changed += 1
			var pos := Vector2((i - (w - 1) * 0.5) * cell, (j - (h - 1) * 0.5) * cell)
			# Dabs sit on the path, every quarter radius up to its last whole step.
			if seg_dist(pos, a, b) >= p.radius:
				outside += 1
	check(changed > 100, "stroke 2 changed %d cells" % changed)
	check(outside == 0, "%d changed cells lie outside the brush's radius of its path" % outside)
	check(ur.undo(), "undo stroke 2")
	check(terrain.get_paint_values("uplift").to_byte_array() == after1.to_byte_array(), "undo restores the map byte for byte")
	check(ur.undo(), "undo stroke 1")
	check(not terrain.has_paint("uplift"), "undoing the first stroke leaves the map unpainted")
	check(ur.redo() and ur.redo(), "redo both")
	check(terrain.get_paint_values("uplift").to_byte_array() == after2.to_byte_array(), "redo repeats the strokes byte for byte")
	# The painted map is a property saved with the scene.
	var img: Image = terrain.uplift_paint
	check(img != null and img.get_size() == Vector2i(w, h) and img.get_format() == Image.FORMAT_RF, "uplift_paint is a %dx%d RF image" % [w, h])
	var copy: TerrainWorld = TerrainWorld.new()
	copy.uplift_paint = img
	check(copy.get_paint_values("uplift").to_byte_array() == after2.to_byte_array(), "the property round-trips the map")
	copy.free()
	ur.free()
	terrain.queue_free()


func test_paint_api_refuses_bad_input() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	check("precipitation" in String(terrain.begin_paint("rain")), "an unknown map is refused, naming the maps")
	check("radius" in String(terrain.paint_dab("uplift", Vector3.ZERO, "add", -1.0, 0.5, 0.5, 1.0)), "a negative radius is refused by name")
	check("mode" in String(terrain.paint_dab("uplift", Vector3.ZERO, "blur", 100.0, 0.5, 0.5, 1.0)), "an unknown mode is refused by name")
	check("strength" in String(terrain.paint_dab("uplift", Vector3.ZERO, "add", 100.0, 2.0, 0.5, 1.0)), "strength over 1 is refused by name")
	check("cells" in String(terrain.set_paint_values("uplift", PackedFloat32Array([1.0, 2.0]))), "values of the wrong size are refused")
	var bad := PackedFloat32Array()
	bad.resize(129 * 97)
	bad.fill(-1.0)
	check(">= 0" in String(terrain.set_paint_values("precipitation", bad)), "negative rain is refused")
	bad.fill(0.0)
	bad[7] = NAN
	check("nan" in String(terrain.set_paint_values("uplift", bad)).to_lower(), "NaN is refused")
	check(terrain.import_paint("uplift", "/nonexistent/map.png", 0.0, 1.0).length() > 0, "a missing file is refused")
	# Precipitation is floored at 0 by a subtracting brush.
	check(terrain.paint_dab("precipitation", Vector3.ZERO, "subtract", 800.0, 1.0, 0.0, 50.0) == "", "subtract rain")
	var rain: PackedFloat32Array = terrain.get_paint_values("precipitation")
	var lo := INF
	for v: float in rain:
		lo = minf(lo, v)
	check(lo == 0.0, "rain floored at 0 (lowest %f)" % lo)
	# The ray picks the terrain's surface.
	var sim: ErosionSimulator = sim_of(terrain)
	sim.start()
	check(await wait_done(sim, 120000), "finished")
	var hit: Variant = terrain.intersect_ray(Vector3(300, 5000, -200), Vector3(0, -1, 0))
	check(hit is Vector3 and absf((hit as Vector3).y - terrain.get_height(300, -200)) < 0.05, "a ray straight down hits the height (%s vs %f)" % [hit, terrain.get_height(300, -200)])
	var slant: Variant = terrain.intersect_ray(Vector3(-4000, 3000, 0), Vector3(1, -0.8, 0.1).normalized())
	check(slant is Vector3 and absf((slant as Vector3).y - terrain.get_height((slant as Vector3).x, (slant as Vector3).z)) < 0.05, "a slanted ray lands on the surface")
	check(terrain.intersect_ray(Vector3(0, 5000, 0), Vector3(0, 1, 0)) == null, "a ray upwards misses")
	# The heights' range a ray is clipped to is found once per terrain: new data, 5 km higher,
	# is picked at its own surface.
	var src: Image = terrain.data.heights
	var values: PackedFloat32Array = floats_of(src)
	for i: int in values.size():
		values[i] += 5000.0
	var raised := TerrainData.new()
	raised.heights = Image.create_from_data(src.get_width(), src.get_height(), false, Image.FORMAT_RF, values.to_byte_array())
	raised.cell_size = terrain.data.cell_size
	terrain.data = raised
	var high: Variant = terrain.intersect_ray(Vector3(300, 20000, -200), Vector3(0, -1, 0))
	check(terrain.get_height(300, -200) > 5000.0 and high is Vector3 and absf((high as Vector3).y - terrain.get_height(300, -200)) < 0.05, "after new data a ray hits the new surface (%s vs %f)" % [high, terrain.get_height(300, -200)])
	terrain.queue_free()


## Paints uplift and rain on the equivalence terrain, saves the painted uplift as EXR and runs
## the recipe; run.sh then bakes the same recipe with that EXR through the CLI and compares
## the height files byte for byte.
func test_painted_run_for_cli_comparison() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var p = Painter.new()
	p.radius = 900.0
	p.value = 0.003
	check(p.begin_stroke(terrain, Vector3(-2000, 0, -800)) == "", "begin stroke")
	p.stroke_to(Vector3(1500, 0, 900))
	p.end_stroke(null)
	var dir: String = out_dir.path_join("painted")
	DirAccess.make_dir_recursive_absolute(dir)
	check(terrain.save_paint("uplift", dir.path_join("uplift.exr")) == "", "save the painted uplift")
	var sim: ErosionSimulator = sim_of(terrain)
	sim.live_update = true
	check(sim.start(), "start")
	check(await wait_done(sim, 120000), "finished")
	check(terrain.save_maps(dir.path_join("godot")) == "", "save maps")
	# The painted uplift is the run's.
	var up: Image = terrain.get_map("uplift")
	check(up != null and floats_of(up).to_byte_array() == terrain.get_paint_values("uplift").to_byte_array(), "the run's uplift map is the painted one")
	terrain.queue_free()


## Live erosion on a 513² terrain while a script paints strokes: prints the refresh rate;
## asserts only that the terrain updated.
func test_live_erosion_while_painting() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("big.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	check(sim.start_live(), "start_live")
	var p = Painter.new()
	p.radius = 4000.0
	p.value = 0.004
	# Wait for the first view (the start terrain is made on the worker).
	var t0 := Time.get_ticks_msec()
	while sim.get_refresh_count() == 0 and Time.get_ticks_msec() - t0 < 60000:
		await process_frame
	check(sim.get_refresh_count() > 0, "a first live view arrived")
	var c0 := sim.get_refresh_count()
	var start := Time.get_ticks_msec()
	var strokes := 0
	var x := -12000.0
	while Time.get_ticks_msec() - start < 4000:
		if not p.is_stroking():
			p.begin_stroke(terrain, Vector3(x, 0, -10000))
			strokes += 1
		else:
			x += 2000.0
			p.stroke_to(Vector3(x, 0, -10000 + x * 0.3))
			if x > 12000.0:
				p.end_stroke(null)
				x = -12000.0
		await process_frame
	if p.is_stroking():
		p.end_stroke(null)
	var seconds := (Time.get_ticks_msec() - start) / 1000.0
	var views := sim.get_refresh_count() - c0
	print("  measured: live erosion at 513² while painting (%d strokes): %d terrain refreshes in %.1f s = %.1f per second" % [strokes, views, seconds, views / seconds])
	check(views > 0, "the terrain refreshed while painting")
	check(sim.is_live(), "still live")
	sim.cancel()
	check(await wait_done(sim, 60000), "stopping live applies the terrain")
	check(terrain.data != null and terrain.data.get_width() == 513, "the eroded 513² terrain is the terrain's data")
	check(terrain.get_map_names().has("drainage"), "with its drainage")
	terrain.queue_free()


## `sea_enabled` puts a water plane at `sea_level`, 460 times the terrain across (so it
## reaches past the horizon), tells the shader the level, and takes it away again.
func test_sea_plane() -> void:
	var terrain: TerrainWorld = make_scene(recipe_from("equiv.ron"))
	var sim: ErosionSimulator = sim_of(terrain)
	sim.start()
	check(await wait_done(sim, 120000), "finished")
	check(terrain.get_sea_mesh() == null, "no sea by default")
	terrain.sea_level = 12.5
	terrain.sea_enabled = true
	var sea: MeshInstance3D = terrain.get_sea_mesh()
	if not check(sea != null and sea.get_parent() == terrain, "the sea is a child of the terrain"):
		return
	check(is_equal_approx(sea.global_position.y, 12.5), "at sea level (%f)" % sea.global_position.y)
	var extent := maxf(128 * 50.0, 96 * 50.0)
	check(is_equal_approx((sea.mesh as PlaneMesh).size.x, extent * 460.0), "460 terrains across (%s)" % (sea.mesh as PlaneMesh).size)
	check(is_equal_approx(float(terrain.get_terrain_material().get_shader_parameter("sea_level")), 12.5), "the shader knows the level")
	terrain.sea_level = -3.0
	check(is_equal_approx(sea.global_position.y, -3.0), "moving the level moves the plane")
	terrain.sea_enabled = false
	check(terrain.get_sea_mesh() == null, "turning the sea off takes it away")
	check(float(terrain.get_terrain_material().get_shader_parameter("sea_level")) < -1e8, "and the shader's sea")
	terrain.queue_free()


## The vertex count of the internal mesh child `name` of `terrain` (-1 when it has none).
func internal_mesh_vertices(terrain: TerrainWorld, name: String) -> int:
	for c: Node in terrain.get_children(true):
		if c.name == name and c is MeshInstance3D:
			var mesh: Mesh = (c as MeshInstance3D).mesh
			if mesh == null or mesh.get_surface_count() == 0:
				return 0
			return (mesh.surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array).size()
	return -1


## The skirt's ground weights (CUSTOM0: rock, cliff, scree, soil; CUSTOM1: grass, dry grass,
## sand, snow; four floats a vertex each), or an empty array when it carries none.
func skirt_weights(terrain: TerrainWorld) -> PackedFloat32Array:
	for c: Node in terrain.get_children(true):
		if c.name == "Skirt" and c is MeshInstance3D:
			var mesh: Mesh = (c as MeshInstance3D).mesh
			if mesh == null or mesh.get_surface_count() == 0:
				break
			var arrays: Array = mesh.surface_get_arrays(0)
			if arrays[Mesh.ARRAY_CUSTOM0] == null or arrays[Mesh.ARRAY_CUSTOM1] == null:
				break
			var out: PackedFloat32Array = arrays[Mesh.ARRAY_CUSTOM0]
			out.append_array(arrays[Mesh.ARRAY_CUSTOM1] as PackedFloat32Array)
			return out
	return PackedFloat32Array()


## The skirt's rivers (CUSTOM3: channel value, metres, and how much the water shows; four
## floats a vertex): how many vertices lie in a river whose water shows, -1 without them.
func skirt_river_vertices(terrain: TerrainWorld) -> int:
	for c: Node in terrain.get_children(true):
		if c.name == "Skirt" and c is MeshInstance3D:
			var mesh: Mesh = (c as MeshInstance3D).mesh
			if mesh == null or mesh.get_surface_count() == 0 or mesh.surface_get_arrays(0)[Mesh.ARRAY_CUSTOM3] == null:
				break
			var channel: PackedFloat32Array = mesh.surface_get_arrays(0)[Mesh.ARRAY_CUSTOM3]
			var wet: int = 0
			for v: int in range(channel.size() / 4):
				if channel[4 * v] > 0.0 and channel[4 * v + 1] > 0.0:
					wet += 1
			return wet
	return -1


## A finished run's result arrives a slice at a time with the lakes' water and the skirt made
## on the worker; setting the same data (undo, a loaded scene) makes them on the main thread.
## Both must show the same: the lakes' water mesh (it once went missing after a run) and the
## skirt beyond the border, with the terrain's look (its ground weights) carried out on it.
func test_run_and_data_show_the_same_water_and_edge() -> void:
	# Uneroded noise with its hydrology: lakes wider than the rivers through them (the pits
	# a carving run leaves along its rivers are pools the rivers draw, not lake water).
	var recipe: TerrainRecipe = TerrainRecipe.new()
	recipe.ron = "(size: (193, 193), cell_size: 50.0, seed: 3, terrain: Noise(kind: Fbm, octaves: 5, wavelength: 3000.0, amplitude: 200.0), stages: [Hydrology()])"
	var terrain: TerrainWorld = make_scene(recipe)
	var sim: ErosionSimulator = sim_of(terrain)
	check(sim.start(), "start")
	check(await wait_done(sim, 300000), "the run finished")
	await process_frame
	var lakes_run: int = internal_mesh_vertices(terrain, "Lakes")
	var skirt_run: int = internal_mesh_vertices(terrain, "Skirt")
	check(lakes_run > 0, "after a run the lakes' water is drawn (%d vertices)" % lakes_run)
	check(skirt_run > 0, "after a run the skirt is drawn (%d vertices)" % skirt_run)
	var weights_run: PackedFloat32Array = skirt_weights(terrain)
	var sums_to_one: bool = weights_run.size() == 8 * skirt_run
	for v: int in range(0, skirt_run, 97):
		var sum: float = 0.0
		for k: int in range(4):
			sum += weights_run[4 * v + k] + weights_run[4 * (skirt_run + v) + k]
		sums_to_one = sums_to_one and absf(sum - 1.0) < 1.0e-3
	check(sums_to_one, "after a run the skirt carries ground weights summing to 1 (%d floats)" % weights_run.size())
	# The skirt is lit with bumps as steep as the border's hills (200 m of noise over 3 km:
	# a root-mean-square slope of a few tenths), whichever way it was made.
	var relief_run: float = float(internal_material(terrain, "Skirt").get_shader_parameter("skirt_relief"))
	check(relief_run > 0.05 and relief_run < 1.0, "after a run the skirt has the border's relief (%f)" % relief_run)
	# The rivers that leave the map run on over the skirt (noise drains out of every side).
	var rivers_run: int = skirt_river_vertices(terrain)
	check(rivers_run > 0 and bool(internal_material(terrain, "Skirt").get_shader_parameter("skirt_has_rivers")),
			"after a run the rivers run on over the skirt (%d vertices in them)" % rivers_run)
	var data: TerrainData = terrain.data
	terrain.data = null
	await process_frame # (a removed mesh node is freed at the frame's end)
	check(internal_mesh_vertices(terrain, "Lakes") == -1 and internal_mesh_vertices(terrain, "Skirt") == -1,
			"without data no lake water and no skirt")
	terrain.data = data
	await process_frame
	check(internal_mesh_vertices(terrain, "Lakes") == lakes_run,
			"set from its data, the same lake water (%d vertices)" % internal_mesh_vertices(terrain, "Lakes"))
	check(internal_mesh_vertices(terrain, "Skirt") == skirt_run, "set from its data, the same skirt")
	var weights_data: PackedFloat32Array = skirt_weights(terrain)
	var largest: float = 0.0 if weights_data.size() == weights_run.size() else INF
	for i: int in range(mini(weights_data.size(), weights_run.size())):
		largest = maxf(largest, absf(weights_data[i] - weights_run[i]))
	check(largest < 1.0e-4, "set from its data, the skirt carries the same ground weights (largest difference %f)" % largest)
	var relief_data: float = float(internal_material(terrain, "Skirt").get_shader_parameter("skirt_relief"))
	check(is_equal_approx(relief_data, relief_run), "set from its data, the same relief (%f)" % relief_data)
	check(skirt_river_vertices(terrain) == rivers_run, "set from its data, the same rivers on the skirt (%d)" % skirt_river_vertices(terrain))
	# A sea: lakes at or under its level are the sea's (the lakes' shader leaves them out;
	# drawn, their water lay over the sea's), and the sea reads the terrain's own heights.
	var lakes_material: ShaderMaterial = internal_material(terrain, "Lakes")
	check(float(lakes_material.get_shader_parameter("sea_level")) < -1.0e8, "no sea: every lake is drawn")
	terrain.sea_level = 40.0
	terrain.sea_enabled = true
	check(is_equal_approx(float(lakes_material.get_shader_parameter("sea_level")), 40.0), "the lakes' water knows the sea level")
	var sea_material: ShaderMaterial = (terrain.get_sea_mesh().mesh as PlaneMesh).material
	var material: ShaderMaterial = terrain.get_terrain_material()
	check(sea_material.get_shader_parameter("heights") == material.get_shader_parameter("heights")
			and sea_material.get_shader_parameter("cells") == Vector2i(193, 193)
			and is_equal_approx(float(sea_material.get_shader_parameter("sea_level")), 40.0),
			"the sea reads the terrain's heights (%s) at its level" % sea_material.get_shader_parameter("cells"))
	terrain.sea_level = -5.0
	check(is_equal_approx(float(lakes_material.get_shader_parameter("sea_level")), -5.0), "moving the sea moves the lakes' cut")
	terrain.sea_enabled = false
	check(float(lakes_material.get_shader_parameter("sea_level")) < -1.0e8, "no sea again: every lake is drawn")
	terrain.queue_free()


## The material override of the internal mesh child `name` of `terrain` (null when none).
func internal_material(terrain: TerrainWorld, name: String) -> ShaderMaterial:
	for c: Node in terrain.get_children(true):
		if c.name == name and c is MeshInstance3D:
			return (c as MeshInstance3D).material_override as ShaderMaterial
	return null
