@tool
extends RefCounted
## The viewport brushes (addons/orogen/editor/brushes.gd) in a real editor: the tool bar
## follows the selection; the brush starts at a twentieth of the terrain; a raise stroke
## through the plugin's viewport input raises only under the brush and is one undo step;
## flatten and smooth do what they say; an erosion stroke changes heights only under the
## brush and lowers its channel most; painting uplift shows the overlay.


func run(t: Node, _dock: Control, terrain: Node3D) -> void:
	var plugin: EditorPlugin = t.get(&"_plugin")
	var brushes: RefCounted = plugin.call(&"get_brushes")
	var toolbar: Control = plugin.call(&"get_toolbar")
	var settings: Control = plugin.call(&"get_tool_settings")
	if not t._check(brushes != null and toolbar != null and settings != null,
			"the plugin makes the brushes, their tool bar and their settings bar"):
		return
	if not t._check(terrain.get(&"data") != null, "the brushes' terrain has heights"):
		return
	t._check(toolbar.is_inside_tree() and toolbar.visible, "the tool bar shows while a TerrainWorld is selected")
	var ids: Array[String] = []
	var labelled := true
	for tool: String in ["raise", "lower", "flatten", "smooth", "set", "erode", "uplift", "rain"]:
		var b: Button = toolbar.call(&"get_button", tool)
		if b == null or b.icon == null or b.tooltip_text.length() < 20:
			labelled = false
		else:
			ids.append(tool)
	t._check(labelled, "every tool has a button with an icon and a tooltip in words (%s)" % ", ".join(ids))
	EditorInterface.get_selection().clear()
	await t._frames(2)
	t._check(not toolbar.visible and brushes.call(&"get_terrain") == null,
			"the tool bar hides when no TerrainWorld is selected")
	t._select(terrain)
	await t._frames(2)
	t._check(toolbar.visible, "it shows again when the terrain is selected again")

	var extent: Vector2 = terrain.call(&"get_extent")
	var radius := float(brushes.get(&"radius"))
	t._check(extent.x > 0.0 and absf(radius - maxf(extent.x, extent.y) / 20.0) < 1e-3,
			"the brush starts at a twentieth of the terrain (%.1f m of %.0f m)" % [radius, extent.x])

	var data: Resource = terrain.get(&"data")
	var w := int(data.call(&"get_width"))
	var dep := int(data.call(&"get_depth"))
	var cell := float(data.get(&"cell_size"))
	var ur: UndoRedo = t._history(terrain)

	# The erosion brush first, on the generated terrain: only under the brush, the channel
	# (largest drainage) lowered most.
	brushes.call(&"set_tool", "erode")
	brushes.set(&"radius", extent.x / 6.0)
	brushes.set(&"strength", 1.0)
	brushes.set(&"falloff", 0.3)
	var e_before := _heights(data)
	var e_at := Vector3(extent.x * -0.15, 0, extent.y * 0.1)
	var strokes := int(brushes.call(&"get_stroke_count"))
	brushes.call(&"begin_stroke", e_at)
	var steps_done: bool = await t._wait_for(func() -> bool:
		brushes.call(&"process", 0.016)
		return int(terrain.call(&"get_erosion_steps")) >= 3)
	brushes.call(&"end_stroke")
	var e_after := _heights(data)
	var drainage: PackedFloat32Array = terrain.call(&"get_erosion_drainage")
	var er := float(brushes.get(&"radius"))
	var out_same := true
	var best := -1
	var sum := 0.0
	var n := 0
	for i in e_after.size():
		var p := _cell_pos(i, w, dep, cell)
		var d := p.distance_to(Vector2(e_at.x, e_at.z))
		if d >= er and e_after[i] != e_before[i]:
			out_same = false
		if d <= er * 0.7:
			sum += e_before[i] - e_after[i]
			n += 1
			if best < 0 or drainage[i] > drainage[best]:
				best = i
	var mean := sum / maxf(float(n), 1.0)
	var channel := e_before[best] - e_after[best] if best >= 0 else 0.0
	t._check(steps_done and drainage.size() == e_after.size() and e_after != e_before,
			"an erosion stroke steps while held and changes the terrain (%d steps)" % int(terrain.call(&"get_erosion_steps")))
	t._check(out_same, "the erosion brush changes no height outside the brush")
	t._check(channel > mean and channel > 0.0,
			"it lowers the channel (largest drainage under the brush) more than the brush's mean (%.3f vs %.3f m)" % [channel, mean])
	t._check(int(brushes.call(&"get_stroke_count")) == strokes + 1, "the erosion stroke is one undo step")
	ur.undo()
	t._check(_heights(data) == e_before, "undo takes the erosion back exactly")

	# Raise through the viewport: looking straight down on the middle, press, drag, release.
	var toolbar_button: Button = toolbar.call(&"get_button", "raise")
	toolbar_button.button_pressed = true
	t._check(String(brushes.get(&"tool")) == "raise" and settings.visible
			and String(settings.call(&"get_value_label")) == "Height step (m)",
			"pressing Raise picks it and the settings bar shows its Height step in metres (%s, %s, %s)"
			% [String(brushes.get(&"tool")), str(settings.visible), String(settings.call(&"get_value_label"))])
	brushes.set(&"radius", extent.x / 8.0)
	brushes.set(&"strength", 1.0)
	brushes.set(&"falloff", 0.5)
	brushes.set(&"height_step", 25.0)
	var before := _heights(data)
	var vp := EditorInterface.get_editor_viewport_3d(0)
	var cam := vp.get_camera_3d()
	var down := Transform3D(Basis.looking_at(Vector3.DOWN, Vector3.FORWARD), Vector3(0, 20000, 0))
	cam.global_transform = down
	var centre := Vector2(vp.size) * 0.5
	var press := InputEventMouseButton.new()
	press.button_index = MOUSE_BUTTON_LEFT
	press.pressed = true
	press.position = centre
	var used := int(plugin.call(&"_forward_3d_gui_input", cam, press))
	var motion := InputEventMouseMotion.new()
	motion.position = centre + Vector2(10, 0)
	motion.button_mask = MOUSE_BUTTON_MASK_LEFT
	cam.global_transform = down
	plugin.call(&"_forward_3d_gui_input", cam, motion)
	var release := InputEventMouseButton.new()
	release.button_index = MOUSE_BUTTON_LEFT
	release.pressed = false
	release.position = motion.position
	plugin.call(&"_forward_3d_gui_input", cam, release)
	var raised := _heights(data)
	var hit: Variant = terrain.call(&"intersect_ray", cam.project_ray_origin(centre), cam.project_ray_normal(centre))
	var r := float(brushes.get(&"radius"))
	var outside_same := true
	var inside_up := 0
	var any_down := false
	var max_up := 0.0
	for i in raised.size():
		var p := _cell_pos(i, w, dep, cell)
		var reach := r + _drag_m(cam, vp)
		if p.length() >= reach and raised[i] != before[i]:
			outside_same = false
		if raised[i] > before[i]:
			inside_up += 1
			max_up = maxf(max_up, raised[i] - before[i])
		if raised[i] < before[i]:
			any_down = true
	t._check(used == EditorPlugin.AFTER_GUI_INPUT_STOP and hit != null and inside_up > 0 and not any_down
			and max_up <= 25.0 + 1e-3 and max_up > 24.0,
			"a raise stroke through the viewport raises the ground under the brush by up to its step (%d cells, top %.2f m)" % [inside_up, max_up])
	t._check(outside_same, "and leaves every cell beyond the brush's reach exactly as it was")
	ur.undo()
	t._check(_heights(data) == before, "undo restores the exact heights (one step)")
	ur.redo()
	t._check(_heights(data) == raised, "redo raises them again, exactly")

	# Flatten: towards the height where the stroke began.
	brushes.call(&"set_tool", "flatten")
	var start := Vector3(0, 0, 0)
	var h0 := float(terrain.call(&"get_height", 0.0, 0.0))
	var spread_before := _spread(terrain, extent.x / 16.0)
	for _k in 4:
		brushes.call(&"begin_stroke", start)
		brushes.call(&"end_stroke")
	var spread_after := _spread(terrain, extent.x / 16.0)
	t._check(spread_after < spread_before * 0.5 and absf(float(terrain.call(&"get_height", 0.0, 0.0)) - h0) < 1.0,
			"flatten brings the ground near the stroke's start to its height (spread %.2f → %.2f m)" % [spread_before, spread_after])
	# Smooth: the roughness (variance of neighbour differences) goes down.
	brushes.call(&"set_tool", "smooth")
	var q := Vector3(extent.x * 0.2, 0, -extent.y * 0.2)
	var rough_before := _roughness(terrain, q, extent.x / 16.0, cell)
	for _k in 3:
		brushes.call(&"begin_stroke", q)
		brushes.call(&"end_stroke")
	var rough_after := _roughness(terrain, q, extent.x / 16.0, cell)
	t._check(rough_after < rough_before, "smooth makes the ground under it smoother (%.3f → %.3f)" % [rough_before, rough_after])

	# Uplift painting shows the overlay before any erosion.
	brushes.call(&"set_tool", "uplift")
	var mat: ShaderMaterial = terrain.call(&"get_terrain_material")
	t._check(String(terrain.call(&"get_overlay")) == "uplift" and String(settings.call(&"get_value_label")) == "Uplift (mm/yr)",
			"the uplift brush colours the terrain by the uplift and takes mm/yr")
	brushes.set(&"uplift_mm", 2.0)
	brushes.set(&"strength", 1.0)
	brushes.set(&"paint_mode", "add")
	terrain.call(&"begin_paint", "uplift")
	terrain.call(&"end_paint")
	var up0: PackedFloat32Array = terrain.call(&"get_paint_values", "uplift")
	brushes.call(&"begin_stroke", Vector3.ZERO)
	brushes.call(&"end_stroke")
	var up: PackedFloat32Array = terrain.call(&"get_paint_values", "uplift")
	var top := 0.0
	for i in mini(up.size(), up0.size()):
		top = maxf(top, up[i] - up0[i])
	t._check(mat != null and bool(mat.get_shader_parameter(&"has_overlay"))
			and int(mat.get_shader_parameter(&"overlay_mode")) == 1,
			"painting uplift shows it on the terrain at once (overlay on)")
	t._check(absf(top - 0.002) < 1e-6,
			"2 mm/yr painted at full strength adds 0.002 m/yr at the brush's centre (%.6f)" % top)
	ur.undo()

	# The Texture brush paints a ground layer over the simulation's: one undo step.
	brushes.call(&"set_tool", "texture")
	var bar: Control = plugin_toolbar(t)
	t._check(bar != null and bar.call(&"get_button", "texture") != null,
			"the tool bar has a Texture brush")
	brushes.set(&"ground_layer", 6)
	brushes.set(&"ground_erase", false)
	var g0: PackedByteArray = terrain.call(&"get_ground_paint_bytes")
	var g_strokes := int(brushes.call(&"get_stroke_count"))
	brushes.call(&"begin_stroke", Vector3.ZERO)
	brushes.call(&"end_stroke")
	var g1: PackedByteArray = terrain.call(&"get_ground_paint_bytes")
	var rows: int = int(data.call(&"get_depth"))
	var mid: int = (int((rows - 1) / 2.0) * w + int((w - 1) / 2.0)) * 8
	t._check(g1.size() == w * rows * 8 and g1[mid + 6] > 200,
			"a Texture stroke paints sand at the brush's centre (weight %d of 255)" % (g1[mid + 6] if g1.size() > mid + 6 else -1))
	t._check(int(brushes.call(&"get_stroke_count")) == g_strokes + 1, "the Texture stroke is one stroke")
	ur.undo()
	t._check(PackedByteArray(terrain.call(&"get_ground_paint_bytes")) == g0, "undo takes the painted ground back")
	brushes.call(&"set_tool", "")
	t._check(not bool(mat.get_shader_parameter(&"has_overlay")) and not settings.visible,
			"putting the tool away hides the overlay and the settings bar")


static func plugin_toolbar(t: Node) -> Control:
	var plugin: Object = t.get(&"_plugin")
	return plugin.call(&"get_toolbar") as Control if plugin != null else null


static func _heights(data: Resource) -> PackedFloat32Array:
	var img: Image = data.get(&"heights")
	return img.get_data().to_float32_array()


## A cell's centre in the terrain's local metres (x, z).
static func _cell_pos(i: int, w: int, d: int, cell: float) -> Vector2:
	return Vector2((float(i % w) - (w - 1) * 0.5) * cell, (floorf(float(i) / float(w)) - (d - 1) * 0.5) * cell)


## How far the drag moved on the ground (10 px at the camera's height), metres.
static func _drag_m(cam: Camera3D, vp: SubViewport) -> float:
	var a := cam.project_ray_normal(Vector2(vp.size) * 0.5)
	var b := cam.project_ray_normal(Vector2(vp.size) * 0.5 + Vector2(10, 0))
	return 20000.0 * (b / absf(b.y) - a / absf(a.y)).length() + 1.0


## Largest height difference within `r` of the middle, metres.
static func _spread(terrain: Node3D, r: float) -> float:
	var lo := INF
	var hi := -INF
	for k in 9:
		for j in 9:
			var p := Vector2(-r + r * 0.25 * k, -r + r * 0.25 * j)
			if p.length() > r:
				continue
			var h := float(terrain.call(&"get_height", p.x, p.y))
			lo = minf(lo, h)
			hi = maxf(hi, h)
	return hi - lo


## Mean squared difference between neighbouring cells within `r` of `at`.
static func _roughness(terrain: Node3D, at: Vector3, r: float, cell: float) -> float:
	var s := 0.0
	var n := 0
	var k := int(r / cell)
	for y in range(-k, k):
		for x in range(-k, k):
			var a := float(terrain.call(&"get_height", at.x + x * cell, at.z + y * cell))
			var b := float(terrain.call(&"get_height", at.x + (x + 1) * cell, at.z + y * cell))
			s += (a - b) * (a - b)
			n += 1
	return s / maxf(float(n), 1.0)
