## Frame time of the terrain's material (issue #37: the material system may cost at most 1.3×
## the frame time of the shader before it at 1025², 1600×900, under the same renderer, in the
## same run). Grows the default recipe at --size (1025 by default) under a fixed overview
## camera, then draws frames with the shader before the material system
## (bench/terrain_before.gdshader, the shader of 0c4f188) and with today's, alternating in
## blocks, and prints the median frame time of each and their ratio. Run by
## scripts/bench-godot-material.sh under Xvfb; not a test.
extends Node3D

const BLOCKS: int = 4
const FRAMES: int = 12


func _ready() -> void:
	var side: int = 1025
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--size="):
			side = int(arg.trim_prefix("--size="))
	var recipe: TerrainRecipe = TerrainRecipe.default_recipe()
	var err: String = recipe.set_value("size", "(%d, %d)" % [side, side])
	if err != "":
		printerr("recipe: ", err)
		get_tree().quit(1)
		return
	var env := WorldEnvironment.new()
	env.environment = Environment.new()
	env.environment.background_mode = Environment.BG_COLOR
	env.environment.background_color = Color(0.6, 0.72, 0.88)
	add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation = Vector3(-0.75, -0.9, 0.0)
	sun.shadow_enabled = true
	add_child(sun)
	var terrain := TerrainWorld.new()
	terrain.recipe = recipe
	add_child(terrain)
	var camera := Camera3D.new()
	add_child(camera)
	var sim: ErosionSimulator = terrain.generate()
	await sim.finished
	var extent: float = float(side - 1) * terrain.data.cell_size
	camera.far = extent * 4.0
	camera.near = extent * 0.0005
	camera.look_at_from_position(Vector3(extent * 0.55, extent * 0.3, extent * 0.55), Vector3.ZERO, Vector3.UP)
	var material: ShaderMaterial = terrain.get_terrain_material()
	var today: Shader = material.shader
	var before := Shader.new()
	before.code = FileAccess.get_file_as_string("res://bench/terrain_before.gdshader")
	var times := {"before": [], "today": []}
	for block: int in range(BLOCKS):
		for which: String in ["before", "today"]:
			material.shader = before if which == "before" else today
			# Two frames to compile and settle, then the timed ones.
			for i: int in range(2):
				await get_tree().process_frame
			await RenderingServer.frame_post_draw
			for i: int in range(FRAMES):
				var t0: int = Time.get_ticks_usec()
				await RenderingServer.frame_post_draw
				times[which].append((Time.get_ticks_usec() - t0) / 1000.0)
	var med := {}
	for which: String in times:
		var list: Array = times[which]
		list.sort()
		med[which] = list[list.size() / 2]
	print("| %d² | %dx%d | %.1f ms | %.1f ms | %.2f× |" % [side, get_viewport().size.x, get_viewport().size.y,
		med["before"], med["today"], med["today"] / med["before"]])
	get_tree().quit(0)
