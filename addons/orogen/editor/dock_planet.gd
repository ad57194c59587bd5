@tool
extends RefCounted
## The Orogen dock's planet part: with a PlanetWorld selected, simulates it (live, off the
## main thread), picks a region on it (fields, its strongest collision, or a click on the
## planet in the 3D viewport) and makes a TerrainWorld whose recipe takes that region's
## uplift, as one undoable action.

const UI := preload("dock_ui.gd")
const PLANET_CLASS := &"PlanetWorld"
const TERRAIN_CLASS := &"TerrainWorld"
const RECIPE_CLASS := &"TerrainRecipe"
const SIZES: Array[int] = [129, 257, 513, 1025]

var undo: EditorUndoRedoManager = null
## The followed PlanetWorld, or null.
var planet: Node3D = null
var box: VBoxContainer
var lat: SpinBox
var lon: SpinBox
var width_km: SpinBox
var size: OptionButton
var pick_toggle: CheckButton
var simulate_button: Button
var cancel_button: Button
var make_button: Button
var status: Label


func _init(undo_redo: EditorUndoRedoManager) -> void:
	undo = undo_redo


static func is_planet(node: Object) -> bool:
	return node != null and is_instance_valid(node) and node is Node3D \
			and ClassDB.class_exists(PLANET_CLASS) \
			and ClassDB.is_parent_class(node.get_class(), PLANET_CLASS)


## The first PlanetWorld among `nodes`, or null.
static func pick_planet(nodes: Array[Node]) -> Node:
	for n: Node in nodes:
		if is_planet(n):
			return n
	return null


func build(parent: Control) -> void:
	box = UI.section("Planet")
	parent.add_child(box)
	var row := HBoxContainer.new()
	simulate_button = UI.button("Simulate", &"Play", "Simulate the plates off the main thread, drawn live.", simulate)
	cancel_button = UI.button("Cancel", &"Stop", "Stop the simulation within one step.", cancel)
	row.add_child(simulate_button)
	row.add_child(cancel_button)
	box.add_child(row)
	status = Label.new()
	status.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	box.add_child(status)
	var grid := GridContainer.new()
	grid.columns = 2
	box.add_child(grid)
	lat = _spin(grid, "Latitude °", -90.0, 90.0, 0.1, "Centre of the region, degrees north.")
	lon = _spin(grid, "Longitude °", -180.0, 180.0, 0.1, "Centre of the region, degrees east.")
	width_km = _spin(grid, "Width km", 50.0, 10000.0, 1.0, "Width of the region on the planet, km.")
	width_km.value = 1024.0
	grid.add_child(UI.label("Grid", "Cells per side of the TerrainWorld."))
	size = OptionButton.new()
	for s: int in SIZES:
		size.add_item("%d²" % s)
	size.select(1)
	grid.add_child(size)
	var row2 := HBoxContainer.new()
	row2.add_child(UI.button("Strongest collision", &"CenterView",
			"Centre the region on the planet's greatest uplift.", strongest_collision))
	pick_toggle = CheckButton.new()
	pick_toggle.text = "Pick"
	pick_toggle.tooltip_text = "Click the planet in the 3D viewport to centre the region there."
	row2.add_child(pick_toggle)
	box.add_child(row2)
	make_button = UI.button("Make TerrainWorld", &"Add",
			"Add a TerrainWorld whose uplift comes from this region (undoable).", make_terrain)
	box.add_child(make_button)
	update_ui()


func _spin(grid: GridContainer, text: String, lo: float, hi: float, step: float, tip: String) -> SpinBox:
	grid.add_child(UI.label(text, tip))
	var s := SpinBox.new()
	s.min_value = lo
	s.max_value = hi
	s.step = step
	s.tooltip_text = tip
	s.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	grid.add_child(s)
	return s


func set_planet(node: Node) -> void:
	var p: Node3D = node as Node3D if is_planet(node) else null
	if p == planet:
		return
	if planet != null and is_instance_valid(planet):
		for pair: Array in [[&"stepped", _on_stepped], [&"finished", _on_finished],
				[&"failed", _on_failed]]:
			if planet.is_connected(pair[0], pair[1]):
				planet.disconnect(pair[0], pair[1])
	planet = p
	if planet != null:
		planet.connect(&"stepped", _on_stepped)
		planet.connect(&"finished", _on_finished)
		planet.connect(&"failed", _on_failed)
		status.text = "%d points simulated." % planet.call(&"get_point_count") \
				if int(planet.call(&"get_point_count")) > 0 else "Not simulated yet."
	update_ui()


func update_ui() -> void:
	if box == null:
		return
	box.visible = planet != null
	if planet == null:
		return
	var running: bool = planet.call(&"is_running")
	simulate_button.disabled = running
	cancel_button.disabled = not running
	make_button.disabled = running


func simulate() -> void:
	if planet != null and not planet.call(&"is_running"):
		status.text = "Starting…"
		planet.call(&"start")
		update_ui()


func cancel() -> void:
	if planet != null:
		planet.call(&"cancel")


## Centres the region on the planet's greatest uplift; false before a simulation finished.
func strongest_collision() -> bool:
	if planet == null:
		return false
	var at: Vector2 = planet.call(&"greatest_uplift")
	if is_nan(at.x):
		status.text = "Simulate the planet first."
		return false
	set_centre(at.x, at.y)
	return true


func set_centre(latitude: float, longitude: float) -> void:
	lat.value = latitude
	lon.value = wrapf(longitude, -180.0, 180.0)
	status.text = "Region centre %.2f°, %.2f°." % [lat.value, lon.value]


## A click in the 3D viewport while Pick is on: centres the region where the ray meets the
## planet. True when it did (the plugin then consumes the click).
func pick_from_viewport(camera: Camera3D, event: InputEvent) -> bool:
	if planet == null or pick_toggle == null or not pick_toggle.button_pressed:
		return false
	var mb := event as InputEventMouseButton
	if mb == null or mb.button_index != MOUSE_BUTTON_LEFT or not mb.pressed:
		return false
	var to_local: Transform3D = planet.global_transform.affine_inverse()
	var from: Vector3 = to_local * camera.project_ray_origin(mb.position)
	var dir: Vector3 = to_local.basis * camera.project_ray_normal(mb.position)
	var at: Vector2 = planet.call(&"pick", from, dir)
	if is_nan(at.x):
		return false
	set_centre(at.x, at.y)
	return true


## Adds a TerrainWorld next to the planet with the region's recipe, as one undoable action.
## Returns the new node, or null (the reason in the status line).
func make_terrain() -> Node:
	if planet == null:
		return null
	var ron: String = planet.call(&"make_region_recipe", lat.value, lon.value, width_km.value,
			SIZES[size.selected])
	if ron == "":
		status.text = "Cannot make a recipe of this region: %s" % planet.call(&"get_last_error")
		return null
	var recipe: Resource = ClassDB.instantiate(RECIPE_CLASS)
	recipe.set(&"ron", ron)
	var terrain: Node3D = ClassDB.instantiate(TERRAIN_CLASS)
	terrain.name = "Region_%d_%d" % [roundi(lat.value), roundi(lon.value)]
	terrain.set(&"recipe", recipe)
	var parent: Node = planet.get_parent() if planet.get_parent() != null else planet
	var owner: Node = planet.owner if planet.owner != null else parent
	terrain.position = planet.position + Vector3(planet.get(&"display_radius") * 3.0, 0, 0)
	if undo != null:
		undo.create_action("Make TerrainWorld from planet region", UndoRedo.MERGE_DISABLE, planet)
		undo.add_do_method(parent, &"add_child", terrain, true)
		undo.add_do_method(terrain, &"set_owner", owner)
		undo.add_do_reference(terrain)
		undo.add_undo_method(parent, &"remove_child", terrain)
		undo.commit_action()
	else:
		parent.add_child(terrain, true)
		terrain.owner = owner
	status.text = "Added %s: its uplift is the region %.1f°, %.1f°, %.0f km." % [
		terrain.name, lat.value, lon.value, width_km.value]
	return terrain


func _on_stepped(step: int) -> void:
	status.text = "Step %d / %d" % [step, int(planet.get(&"steps"))]
	update_ui()


func _on_finished() -> void:
	status.text = "%d points simulated." % int(planet.call(&"get_point_count"))
	update_ui()


func _on_failed(message: String) -> void:
	status.text = "Planet: " + message
	update_ui()
