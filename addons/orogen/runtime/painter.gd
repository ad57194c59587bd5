@tool
extends RefCounted
## Brush strokes on a TerrainWorld's painted uplift or precipitation (FastFlow's authoring
## loop, seed 002). A stroke is begin_stroke, any number of stroke_to along the drag, and
## end_stroke, which records the whole stroke as one undo step: the map's values before and
## after (an unpainted map comes back unpainted).
##
## The editor plugin drives it from the 3D viewport; a game or a test can drive it from a
## script. Positions are global; the terrain answers `intersect_ray` for picking.

## The map painted: `uplift` or `precipitation`.
var map := "uplift"
## `add`, `subtract`, `smooth` or `set`.
var mode := "add"
## Brush radius, metres.
var radius := 3000.0
## Share of the change one dab makes, 0–1.
var strength := 0.5
## Share of the radius over which the brush fades out, 0–1.
var falloff := 0.5
## Most a stroke adds or subtracts, at the brush's centre and full strength (or the value
## `set` paints), m/yr: overlapping dabs of one stroke do not add up, so a slow drag and a
## quick one paint the same.
var value := 0.001
## Dabs along a drag, as a share of the radius between two dabs.
var spacing := 0.25

var _terrain: Node3D = null
var _before := PackedFloat32Array()
var _last := Vector3.ZERO
var _dabs := 0
var _error := ""


## The usual amount for `map_name`, m/yr: 1 mm/yr of uplift, 1 m/yr of rain.
static func default_value(map_name: String) -> float:
	return 0.001 if map_name == "uplift" else 1.0


func is_stroking() -> bool:
	return _terrain != null


## The last error a dab reported ("" when none).
func get_error() -> String:
	return _error


## Dabs made by the current (or last) stroke.
func get_dab_count() -> int:
	return _dabs


## Starts a stroke on `terrain` with a dab at `position`. Returns "" or the error.
func begin_stroke(terrain: Node3D, position: Vector3) -> String:
	if _terrain != null:
		end_stroke(null)
	_before = terrain.call(&"get_paint_values", map)
	_error = String(terrain.call(&"begin_paint", map))
	if _error != "":
		return _error
	_terrain = terrain
	_dabs = 0
	_last = position
	_dab(position)
	return _error


## Continues the stroke to `position`, with dabs every `spacing · radius` along the way.
func stroke_to(position: Vector3) -> void:
	if _terrain == null or not is_instance_valid(_terrain):
		return
	var a := Vector2(_last.x, _last.z)
	var b := Vector2(position.x, position.z)
	var step := maxf(radius * spacing, 1e-3)
	var dist := a.distance_to(b)
	if dist < step:
		return
	var n := int(floor(dist / step))
	for i in range(1, n + 1):
		var p := _last.lerp(position, float(i) * step / dist)
		_dab(p)
	_last = _last.lerp(position, float(n) * step / dist)


## Ends the stroke and records it in `undo_redo` (an EditorUndoRedoManager, an UndoRedo or
## null for none) as one action, already done. Returns whether the map changed.
func end_stroke(undo_redo: Object) -> bool:
	var terrain := _terrain
	_terrain = null
	if terrain == null or not is_instance_valid(terrain):
		return false
	terrain.call(&"end_paint")
	var after: PackedFloat32Array = terrain.call(&"get_paint_values", map)
	if after == _before:
		return false
	if undo_redo == null:
		return true
	var action := "Paint %s" % map
	if undo_redo is UndoRedo:
		var ur := undo_redo as UndoRedo
		ur.create_action(action)
		ur.add_do_method(terrain.set_paint_values.bind(map, after))
		ur.add_undo_method(terrain.set_paint_values.bind(map, _before))
		ur.commit_action(false)
	else:
		undo_redo.call(&"create_action", action)
		undo_redo.call(&"add_do_method", terrain, &"set_paint_values", map, after)
		undo_redo.call(&"add_undo_method", terrain, &"set_paint_values", map, _before)
		undo_redo.call(&"commit_action", false)
	return true


func _dab(position: Vector3) -> void:
	var err := String(_terrain.call(&"paint_dab", map, position, mode, radius, strength,
			falloff, value))
	if err != "":
		_error = err
	else:
		_dabs += 1
