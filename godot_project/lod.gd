extends Node3D
## Level-of-detail check (tests/godot/run.sh): TerrainWorld draws 1025², 2049² and 4097²
## terrains (noise only, no erosion, 10 m cells) through its clipmap, and for each the
## rendering statistics of one frame are read with the camera low over the terrain.
##
## Asserts per size: the clipmap holds at most 1.5M vertices (every one is submitted each
## frame), the frame's primitives are the clipmap's triangles (nothing else is drawn: no
## shadows, and the terrain's `edge` is None, so no skirt), the LOD centre is the camera's cell, and the frame, looking down over several
## LOD borders onto terrain only, has no pixel of the magenta background: a crack between
## levels would show it; rays hit the collision (regions of 256 quads) at the heights. Prints `PASS`/`FAIL` lines and `RESULT passed=N failed=M`.
##
## Command-line options (after `--`): `--orogen-views=PREFIX` then saves the 4097² terrain's
## views under a sky (views.gd: PREFIX-overview.png, PREFIX-valley.png, PREFIX-ridge.png),
## each checked for background below the horizon, then quits.

const Views := preload("res://views.gd")
const SIZES: Array[int] = [1025, 2049, 4097]
const BUDGET: int = 1500000
const CELL: float = 10.0
const BACKGROUND := Color(1.0, 0.0, 1.0)

@onready var terrain: TerrainWorld = $Terrain
@onready var camera: Camera3D = $Camera

var views_prefix: String = ""
var passed: int = 0
var failed: int = 0


func _ready() -> void:
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--orogen-views="):
			views_prefix = arg.get_slice("=", 1)
	for n: int in SIZES:
		await _check_size(n)
	print("RESULT passed=%d failed=%d" % [passed, failed])
	get_tree().quit(0 if failed == 0 else 1)


func check(ok: bool, what: String) -> bool:
	if ok:
		passed += 1
		print("PASS ", what)
	else:
		failed += 1
		print("FAIL ", what)
	return ok


func _check_size(n: int) -> void:
	var recipe := TerrainRecipe.new()
	recipe.ron = "(size: (%d, %d), cell_size: %.1f, seed: 3, terrain: Noise(kind: Fbm, octaves: 10, wavelength: 6000.0, amplitude: 500.0), stages: [])" % [n, n, CELL]
	terrain.recipe = recipe
	# Nothing is drawn while the terrain generates: a software renderer's frame of the
	# previous size takes seconds from the generator's cores.
	get_viewport().disable_3d = true
	var sim: ErosionSimulator = terrain.generate()
	var result: Array = [false]
	sim.finished.connect(func() -> void: result[0] = true)
	sim.failed.connect(func(message: String) -> void: push_error("lod: %d² failed: %s" % [n, message]))
	while is_instance_valid(sim) and not result[0]:
		await get_tree().process_frame
	get_viewport().disable_3d = false
	if not check(result[0] and terrain.data != null and terrain.data.get_width() == n, "%d² terrain generated" % n):
		return
	# Low over a point a quarter of the way in from the north-west corner, looking south-east
	# and down 45°: level 0 fills the bottom of the frame, levels 1 to 3 the rest.
	var extent: float = (n - 1) * CELL
	var x: float = -extent * 0.25 + 37.0
	var z: float = -extent * 0.25 + 23.0
	var eye := Vector3(x, terrain.get_height(x, z) + 300.0, z)
	camera.look_at_from_position(eye, eye + Vector3(0.6, -1.2, 0.6), Vector3.UP)
	camera.near = 1.0
	camera.far = extent * 2.0
	var frame_ms: Array[float] = []
	var last: int = Time.get_ticks_usec()
	for i: int in range(6):
		await RenderingServer.frame_post_draw
		var now: int = Time.get_ticks_usec()
		frame_ms.append((now - last) / 1000.0)
		last = now
	var info: Dictionary = terrain.get_lod_info()
	var prims: int = RenderingServer.get_rendering_info(RenderingServer.RENDERING_INFO_TOTAL_PRIMITIVES_IN_FRAME)
	var draws: int = RenderingServer.get_rendering_info(RenderingServer.RENDERING_INFO_TOTAL_DRAW_CALLS_IN_FRAME)
	frame_ms.sort()
	print("  measured: %d²: clipmap R %d, %d levels, %d vertices, %d triangles; frame: %d primitives, %d draw calls; frame interval median %.0f ms (llvmpipe)" % [
		n, info.get("radius", 0), info.get("levels", 0), info.get("vertices", 0), info.get("triangles", 0), prims, draws, frame_ms[frame_ms.size() / 2]])
	check(int(info.get("vertices", BUDGET + 1)) <= BUDGET, "%d²: at most 1.5M vertices drawn (%d)" % [n, info.get("vertices", -1)])
	check(prims > 0 and prims <= int(info.get("triangles", 0)) + 16, "%d²: the frame draws the clipmap's triangles (%d primitives)" % [n, prims])
	check(not info.get("full_detail", true) and int(info.get("levels", 0)) >= 2, "%d²: drawn through several LOD levels" % n)
	var want := Vector2(x / CELL + (n - 1) * 0.5, z / CELL + (n - 1) * 0.5)
	var centre: Vector2 = info.get("centre", Vector2.INF)
	check(centre.distance_to(want) < 0.01, "%d²: the LOD centre follows the camera (%s, camera at %s)" % [n, centre, want])
	await _check_collision(n)
	var img: Image = get_viewport().get_texture().get_image()
	img.convert(Image.FORMAT_RGB8)
	var holes: int = 0
	for py: int in range(img.get_height()):
		for px: int in range(img.get_width()):
			var c: Color = img.get_pixel(px, py)
			if c.r > 0.9 and c.b > 0.9 and c.g < 0.1:
				holes += 1
	check(holes == 0, "%d²: no background shows through the terrain (no cracks: %d pixels)" % [n, holes])
	if n == SIZES[-1] and views_prefix != "":
		await _save_views()


## The 4097² terrain's views (views.gd), drawn as a game would: under a sky, the map's edge a
## coast into the sea (the checks above draw the terrain alone on magenta). Each view is
## checked for background below the horizon. (The noise terrain's hills of ±500 m at 10 m
## cells are dry grass on every steep cell; a skirt's smooth land to the horizon showed the
## map as a speckled rectangle in a green plain. With a coast at sea level 0 the map is an
## archipelago, the sea filling its low half, and no rectangle shows.)
func _save_views() -> void:
	var env: Environment = ($WorldEnvironment as WorldEnvironment).environment
	var sky_material := ProceduralSkyMaterial.new()
	sky_material.sky_top_color = Color(0.22, 0.42, 0.74)
	sky_material.sky_horizon_color = Color(0.6, 0.72, 0.88)
	sky_material.ground_bottom_color = Color(0.6, 0.72, 0.88)
	sky_material.ground_horizon_color = Color(0.6, 0.72, 0.88)
	var sky := Sky.new()
	sky.sky_material = sky_material
	env.sky = sky
	env.background_mode = Environment.BG_SKY
	terrain.edge = 3
	var views := Views.new(self, terrain, camera, views_prefix)
	views.check = true
	var ok: bool = await views.save()
	passed += views.passed
	failed += views.failed
	check(ok, "the 4097² views saved under " + views_prefix)


## Rays down onto cells, random and on the collision regions' shared edges (every 256th
## row or column), hit the height map's height there.
func _check_collision(n: int) -> void:
	await get_tree().physics_frame
	await get_tree().physics_frame
	var space: PhysicsDirectSpaceState3D = terrain.get_world_3d().direct_space_state
	var rng := RandomNumberGenerator.new()
	rng.seed = n
	var hits: int = 0
	var worst: float = 0.0
	var rays: int = 80
	for k: int in range(rays):
		var i: int = rng.randi_range(0, n - 1)
		var j: int = rng.randi_range(0, n - 1)
		if k % 2 == 0:
			i = 256 * rng.randi_range(0, (n - 1) / 256)
		if k % 4 == 0:
			j = 256 * rng.randi_range(0, (n - 1) / 256)
		var px: float = (i - (n - 1) * 0.5) * CELL
		var pz: float = (j - (n - 1) * 0.5) * CELL
		var q := PhysicsRayQueryParameters3D.create(Vector3(px, 5000.0, pz), Vector3(px, -5000.0, pz))
		var hit: Dictionary = space.intersect_ray(q)
		if hit.is_empty():
			continue
		hits += 1
		worst = max(worst, abs((hit["position"] as Vector3).y - terrain.get_height(px, pz)))
	check(hits == rays and worst < 0.05, "%d²: collision regions follow the heights (%d/%d rays hit, worst %.4f m)" % [n, hits, rays, worst])
