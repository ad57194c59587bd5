@tool
extends RefCounted
## Brush strokes on a TerrainWorld's painted uplift or precipitation (FastFlow's authoring
## loop, seed 002), or on its painted ground (`map = "ground"`: `value` is the layer, 0 rock,
## 1 cliff, 2 scree, 3 soil, 4 grass, 5 dry grass, 6 sand, 7 snow; `add`/`set` paint it,
## `subtract` erases). A stroke is begin_stroke, any number of stroke_to along the drag, and
## end_stroke, which records the whole stroke as one undo step: the map's values before and
## after (an unpainted map comes back unpainted).
##
## The editor plugin drives it from the 3D viewport; a game or a test can drive it from a
## script. Positions are global; the terrain answers `intersect_ray` for picking.

## The map painted: `uplift`, `precipitation` or `ground`.
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
## quick one paint the same. For `ground`, the layer painted (0–7).
var value := 0.001
## Dabs along a drag, as a share of the radius between two dabs.
var spacing := 0.25

var _terrain: Node3D = null
var _before: Variant = PackedFloat32Array()
var _last := Vector3.ZERO
var _dabs := 0
var _error := ""


## The usual amount for `map_name`, m/yr: 1 mm/yr of uplift, 1 m/yr of rain; for `ground`
## the layer grass (4).
static func default_value(map_name: String) -> float:
	if map_name == "ground":
		return 4.0
	return 0.001 if map_name == "uplift" else 1.0


## `map_name`'s whole map for undo: a PackedFloat32Array of values, or for `ground` a
## PackedByteArray of painted weights (8 per cell); empty when it is not painted.
static func get_values(terrain: Node3D, map_name: String) -> Variant:
	if map_name == "ground":
		return terrain.call(&"get_ground_paint_bytes")
	return terrain.call(&"get_paint_values", map_name)


## The method and arguments that set `map_name` back to `values` (from get_values).
static func set_call(map_name: String, values: Variant) -> Array:
	if map_name == "ground":
		return [&"set_ground_paint_bytes", values]
	return [&"set_paint_values", map_name, values]


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
	_before = get_values(terrain, map)
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
	var after: Variant = get_values(terrain, map)
	if after == _before:
		return false
	if undo_redo == null:
		return true
	record(undo_redo, terrain, "Paint %s" % map, set_call(map, after), set_call(map, _before),
			false)
	return true


## Records an action `action` in `undo_redo` (an EditorUndoRedoManager or an UndoRedo) that
## calls `do_call` on `terrain` and undoes with `undo_call` (each [method, args...]);
## `execute`: whether committing does it now.
static func record(undo_redo: Object, terrain: Node3D, action: String, do_call: Array,
		undo_call: Array, execute: bool) -> void:
	var do_method: StringName = do_call[0]
	var undo_method: StringName = undo_call[0]
	if undo_redo is UndoRedo:
		var ur := undo_redo as UndoRedo
		ur.create_action(action)
		ur.add_do_method(Callable(terrain, do_method).bindv(do_call.slice(1)))
		ur.add_undo_method(Callable(terrain, undo_method).bindv(undo_call.slice(1)))
		ur.commit_action(execute)
	else:
		undo_redo.call(&"create_action", action)
		undo_redo.callv(&"add_do_method", [terrain, do_method] + do_call.slice(1))
		undo_redo.callv(&"add_undo_method", [terrain, undo_method] + undo_call.slice(1))
		undo_redo.call(&"commit_action", execute)


func _dab(position: Vector3) -> void:
	var err := String(_terrain.call(&"paint_dab", map, position, mode, radius, strength,
			falloff, value))
	if err != "":
		_error = err
	else:
		_dabs += 1
