@tool
extends RefCounted
## The viewport brushes of a TerrainWorld, as Terrain3D's editor has them: sculpt the height
## (raise, lower, flatten, smooth, set), the erosion brush (stream power and thermal erosion
## only under the brush, stepped off the main thread while the mouse is held), and painting
## the uplift and the rain (shown on the terrain as an overlay while their brush is active),
## and painting the ground's material layers by hand (kept over the simulation's and written
## by the Terrain3D and HTerrain exports).
## Each stroke is one undo step: a sculpt or erosion stroke stores only its bounding
## rectangle's heights before and after (TerrainWorld.end_sculpt / set_height_region); a
## paint stroke is the painter's (runtime/painter.gd).
##
## The plugin forwards 3D viewport input here (forward_input) and calls process each frame;
## a test drives begin_stroke / stroke_to / end_stroke with global positions.

const Painter := preload("../runtime/painter.gd")

## Tool names, in the toolbar's order.
const RAISE := "raise"
const LOWER := "lower"
const FLATTEN := "flatten"
const SMOOTH := "smooth"
const SET := "set"
const ERODE := "erode"
const UPLIFT := "uplift"
const RAIN := "rain"
const TEXTURE := "texture"
const TOOLS: Array[String] = [RAISE, LOWER, FLATTEN, SMOOTH, SET, ERODE, UPLIFT, RAIN, TEXTURE]
## The tools the painter (runtime/painter.gd) strokes, with its own undo.
const PAINT_TOOLS: Array[String] = [UPLIFT, RAIN, TEXTURE]
## The ground layers the Texture brush paints, in the material system's order.
const GROUND_LAYERS: Array[String] = ["rock", "cliff", "scree", "soil", "grass", "dry grass",
		"sand", "snow"]
const SCULPT_TOOLS: Array[String] = [RAISE, LOWER, FLATTEN, SMOOTH, SET]
## Erosion brush: erodibility k (the StreamPower stage's default) and thermal sweeps a step.
const EROSION_K := 5e-6
const EROSION_SWEEPS := 1

## The tool changed (its name, "" for none).
signal tool_changed(tool: String)
## Settings changed (by the tool settings bar or a new terrain's brush size).
signal settings_changed

## The tool in use, "" for none (viewport clicks then pass to the editor).
var tool := ""
## Brush radius, metres: a twentieth of the terrain's larger extent until changed.
var radius := 100.0
## Share of the change one dab makes, 0–1.
var strength := 0.5
## Share of the radius over which the brush fades out, 0–1.
var falloff := 0.5
## Metres raised or lowered at full strength (raise, lower).
var height_step := 10.0
## The height Set gives, metres.
var set_height := 0.0
## Years of stream power per erosion step.
var erosion_years := 5000.0
## Uplift painted, mm/yr (add at full strength; the maps hold m/yr).
var uplift_mm := 1.0
## Rain painted, mm/yr.
var rain_mm := 1000.0
## Paint mode of the uplift and rain brushes: add, subtract, smooth or set.
var paint_mode := "add"
## The ground layer the Texture brush paints (an index into GROUND_LAYERS).
var ground_layer := 6
## Whether the Texture brush erases hand-painted ground (back to the simulation's).
var ground_erase := false

var painter := Painter.new()
var _terrain: Node3D = null
var _undo: Object = null
var _stroking := false
var _last := Vector3.ZERO
var _error := ""
var _strokes := 0


func _init(undo_redo: Object) -> void:
	_undo = undo_redo


## Follows `terrain` (null: none): the brush takes a twentieth of its extent and the
## overlay of the active paint tool moves to it.
func set_terrain(terrain: Node3D) -> void:
	if terrain == _terrain:
		return
	if _stroking:
		end_stroke()
	_show_overlay("")
	hide_brush()
	_terrain = terrain
	if terrain != null:
		radius = default_radius(terrain)
		_show_overlay(_overlay_map())
	settings_changed.emit()


func get_terrain() -> Node3D:
	return _terrain


## A twentieth of `terrain`'s larger extent, metres (100 without data or recipe).
static func default_radius(terrain: Node3D) -> float:
	var e: Vector2 = terrain.call(&"get_extent")
	var m := maxf(e.x, e.y)
	return m / 20.0 if m > 0.0 else 100.0


func set_tool(name: String) -> void:
	if name != "" and not TOOLS.has(name):
		push_error("Orogen brushes: no tool `%s`; the tools are %s" % [name, ", ".join(TOOLS)])
		return
	if _stroking:
		end_stroke()
	tool = name
	_show_overlay(_overlay_map())
	if tool == "":
		hide_brush()
	tool_changed.emit(tool)


## The painted map the tool paints ("" for a sculpt or erosion tool).
func _overlay_map() -> String:
	if tool == UPLIFT:
		return "uplift"
	if tool == RAIN:
		return "precipitation"
	return ""


func _show_overlay(map_name: String) -> void:
	if _terrain != null and is_instance_valid(_terrain):
		_terrain.call(&"set_overlay", map_name)


func is_active() -> bool:
	return tool != "" and _terrain != null and is_instance_valid(_terrain)


func is_stroking() -> bool:
	return _stroking


## The last error a dab reported ("" when none).
func get_error() -> String:
	return _error


## Strokes recorded as undo steps so far.
func get_stroke_count() -> int:
	return _strokes


func hide_brush() -> void:
	if _terrain != null and is_instance_valid(_terrain):
		_terrain.call(&"set_brush_indicator", false, Vector3.ZERO, radius)


## Handles a 3D viewport event while a tool is active; true when it was used.
func forward_input(camera: Camera3D, event: InputEvent) -> bool:
	if not is_active() or not (event is InputEventMouse):
		return false
	var pos: Vector2 = (event as InputEventMouse).position
	var hit: Variant = _terrain.call(&"intersect_ray", camera.project_ray_origin(pos),
			camera.project_ray_normal(pos))
	if hit == null:
		hide_brush()
	else:
		_terrain.call(&"set_brush_indicator", true, hit, radius)
	if event is InputEventMouseButton:
		var mb := event as InputEventMouseButton
		if mb.button_index != MOUSE_BUTTON_LEFT:
			return false
		if mb.pressed and hit != null:
			var err := begin_stroke(hit as Vector3)
			if err != "":
				push_warning("Orogen brush: %s" % err)
			return true
		if not mb.pressed and _stroking:
			end_stroke()
			return true
	elif event is InputEventMouseMotion and _stroking:
		if hit != null:
			stroke_to(hit as Vector3)
		return true
	return false


## Starts a stroke of the current tool at `position` (global) with a first dab. Returns ""
## or the error.
func begin_stroke(position: Vector3) -> String:
	if not is_active():
		return "no tool or no terrain"
	if _stroking:
		end_stroke()
	_error = ""
	_last = position
	if tool in PAINT_TOOLS:
		_set_painter()
		_error = painter.begin_stroke(_terrain, position)
		_stroking = _error == ""
		return _error
	if tool == ERODE:
		_error = String(_terrain.call(&"begin_erosion", position, EROSION_K, erosion_years,
				EROSION_SWEEPS))
	else:
		_error = String(_terrain.call(&"begin_sculpt", position))
	if _error != "":
		return _error
	_stroking = true
	_dab(position)
	return _error


## Continues the stroke to `position`, with dabs every quarter radius along the way (the
## erosion brush steps where the mouse is, as often as its steps finish).
func stroke_to(position: Vector3) -> void:
	if not _stroking:
		return
	if tool in PAINT_TOOLS:
		painter.stroke_to(position)
		return
	if tool == ERODE:
		_last = position
		_dab(position)
		return
	var a := Vector2(_last.x, _last.z)
	var b := Vector2(position.x, position.z)
	var step := maxf(radius * 0.25, 1e-3)
	var dist := a.distance_to(b)
	if dist < step:
		return
	var n := int(floor(dist / step))
	for i in range(1, n + 1):
		_dab(_last.lerp(position, float(i) * step / dist))
	_last = _last.lerp(position, float(n) * step / dist)


## While the mouse is held the erosion brush keeps stepping where it is.
func process(_delta: float) -> void:
	if _stroking and tool == ERODE and _terrain != null and is_instance_valid(_terrain) \
			and not bool(_terrain.call(&"is_eroding")):
		_dab(_last)


## Ends the stroke and records it as one undo step (already done). Returns whether the
## terrain changed.
func end_stroke() -> bool:
	if not _stroking:
		return false
	_stroking = false
	var terrain := _terrain
	if terrain == null or not is_instance_valid(terrain):
		return false
	if tool in PAINT_TOOLS:
		var changed := painter.end_stroke(_undo)
		if changed:
			_strokes += 1
		return changed
	var done: Dictionary = terrain.call(&"end_sculpt")
	if done.is_empty():
		return false
	var err := String(done.get("error", ""))
	if err != "":
		_error = err
	var rect: Rect2i = done["rect"]
	var before: PackedFloat32Array = done["before"]
	var after: PackedFloat32Array = done["after"]
	var action := "Erode terrain" if tool == ERODE else "Sculpt terrain (%s)" % tool
	if _undo is EditorUndoRedoManager:
		var ur := _undo as EditorUndoRedoManager
		ur.create_action(action, UndoRedo.MERGE_DISABLE, terrain)
		ur.add_do_method(terrain, &"set_height_region", rect, after)
		ur.add_undo_method(terrain, &"set_height_region", rect, before)
		ur.commit_action(false)
	elif _undo is UndoRedo:
		var ur := _undo as UndoRedo
		ur.create_action(action)
		ur.add_do_method(Callable(terrain, &"set_height_region").bind(rect, after))
		ur.add_undo_method(Callable(terrain, &"set_height_region").bind(rect, before))
		ur.commit_action(false)
	_strokes += 1
	return true


func _dab(position: Vector3) -> void:
	var err := ""
	if tool == ERODE:
		err = String(_terrain.call(&"erosion_dab", position, radius, strength, falloff))
	else:
		var value := set_height if tool == SET else height_step
		err = String(_terrain.call(&"sculpt_dab", position, tool, radius, strength, falloff, value))
	if err != "":
		_error = err


func _set_painter() -> void:
	painter.radius = radius
	painter.strength = strength
	painter.falloff = falloff
	if tool == TEXTURE:
		painter.map = "ground"
		painter.mode = "subtract" if ground_erase else "add"
		painter.value = float(ground_layer)
		return
	painter.map = "uplift" if tool == UPLIFT else "precipitation"
	painter.mode = paint_mode
	# The maps hold m/yr.
	painter.value = (uplift_mm if tool == UPLIFT else rain_mm) * 0.001
