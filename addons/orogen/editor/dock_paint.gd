@tool
extends RefCounted
## The Orogen dock's Paint section: brushes that paint the followed terrain's uplift and
## precipitation in the 3D viewport (FastFlow's authoring loop, seed 002), or its ground
## (a layer picked by name, painted over the simulation's ground weights), their settings,
## the painted maps' thumbnails with Import, Save and Clear, and the Live toggle, which keeps
## the terrain eroding (ErosionSimulator.start_live) from where it is while you paint.
##
## Each stroke, import and clear is one undo step. Turning Live off applies the eroded terrain.

const Context := preload("dock_context.gd")
const UI := preload("dock_ui.gd")
const MapPreview := preload("map_preview.gd")
const Painter := preload("../runtime/painter.gd")

const MAPS: Array[String] = ["uplift", "precipitation", "ground"]
const MODES: Array[String] = ["add", "subtract", "smooth", "set"]
## The ground brush's modes: paint the layer, or erase paint.
const GROUND_MODES: Array[String] = ["add", "subtract"]
## The ground layers in TerrainWorld's order (get_ground_layer_names).
const GROUND_LAYERS: Array[String] = ["rock", "cliff", "scree", "soil", "grass", "dry_grass",
		"sand", "snow"]
## Seconds between thumbnail refreshes while painting.
const THUMB_SECONDS := 0.25

## A live run started or stopped (the run buttons follow).
signal live_changed

var painter := Painter.new()
var _ctx: Context
var _host: Node
var _paint_toggle: Button
var _map_option: OptionButton
var _mode_option: OptionButton
var _radius: SpinBox
var _strength: SpinBox
var _falloff: SpinBox
var _value: SpinBox
var _value_label: Control
var _layer_label: Control
var _layer_option: OptionButton
var _live: CheckButton
var _live_label: Label
var _tiles := {}
## Map name → the line under its thumbnail (its range, or that it is the recipe's).
var _notes := {}
var _live_sim: Node = null
var _followed: Node3D = null
var _thumb_dirty := true
var _thumb_timer := 0.0
var _dialog: FileDialog = null
var _dialog_map := ""


func _init(ctx: Context) -> void:
	_ctx = ctx


func build(parent: Control, host: Node) -> void:
	_host = host
	parent.add_child(UI.section("Paint"))
	var row := HBoxContainer.new()
	_paint_toggle = Button.new()
	_paint_toggle.text = "Paint"
	_paint_toggle.toggle_mode = true
	_paint_toggle.icon = EditorInterface.get_editor_theme().get_icon(&"Edit", &"EditorIcons")
	_paint_toggle.tooltip_text = "Paint the selected map in the 3D viewport (left drag). " \
			+ "Each stroke is one undo step."
	_paint_toggle.toggled.connect(func(_on: bool) -> void: _hide_brush())
	row.add_child(_paint_toggle)
	_map_option = OptionButton.new()
	for m: String in MAPS:
		_map_option.add_item(m.capitalize())
	_map_option.tooltip_text = "The map a stroke paints (m/yr)."
	_map_option.item_selected.connect(_on_map_selected)
	_map_option.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	row.add_child(_map_option)
	_mode_option = OptionButton.new()
	_fill_modes(false)
	_mode_option.item_selected.connect(func(i: int) -> void:
		painter.mode = (GROUND_MODES if painter.map == "ground" else MODES)[i])
	row.add_child(_mode_option)
	parent.add_child(row)

	var grid := GridContainer.new()
	grid.columns = 2
	_radius = _spin(grid, "Size (m)", 1.0, 100000.0, 1.0, painter.radius,
			"Brush radius, metres (a new terrain starts at a twentieth of its width).",
			func(v: float) -> void: painter.radius = v)
	_strength = _spin(grid, "Strength", 0.0, 1.0, 0.01, painter.strength,
			"Share of the change one dab makes.", func(v: float) -> void: painter.strength = v)
	_falloff = _spin(grid, "Falloff", 0.0, 1.0, 0.01, painter.falloff,
			"Share of the radius over which the brush fades out.",
			func(v: float) -> void: painter.falloff = v)
	_value = _spin(grid, "Value (mm/yr)", 0.0, 100000.0, 0.01, painter.value * 1000.0,
			"Amount added or subtracted at the brush's centre, or the value Set paints, in " \
			+ "millimetres a year; the white of an imported PNG.",
			func(v: float) -> void: painter.value = v * 0.001)
	_value_label = grid.get_child(grid.get_child_count() - 2) as Control
	_layer_label = UI.label("Layer", "The ground layer a stroke paints, over the ground " \
			+ "the simulation gives (kept over it, and written by the Terrain3D and HTerrain " \
			+ "exports).")
	grid.add_child(_layer_label)
	_layer_option = OptionButton.new()
	for l: String in GROUND_LAYERS:
		_layer_option.add_item(l.capitalize())
	_layer_option.select(int(Painter.default_value("ground")))
	_layer_option.tooltip_text = "The ground layer a stroke paints."
	_layer_option.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_layer_option.item_selected.connect(func(i: int) -> void:
		if painter.map == "ground":
			painter.value = float(i))
	grid.add_child(_layer_option)
	parent.add_child(grid)
	_show_ground_controls(false)

	_live = CheckButton.new()
	_live.text = "Live erosion"
	_live.tooltip_text = "Keep the terrain eroding from where it is, with the painted maps, " \
			+ "while you paint. Turning it off keeps the eroded terrain."
	_live.toggled.connect(func(on: bool) -> void:
		var err := set_live(on)
		if err != "":
			_ctx.show_error(err))
	parent.add_child(_live)
	_live_label = Label.new()
	_live_label.modulate = Color(1, 1, 1, 0.7)
	parent.add_child(_live_label)

	var flow := HFlowContainer.new()
	for m: String in MAPS:
		var box := VBoxContainer.new()
		var title := Label.new()
		title.text = m.capitalize()
		box.add_child(title)
		var tex := TextureRect.new()
		tex.custom_minimum_size = Vector2(96, 96)
		tex.expand_mode = TextureRect.EXPAND_IGNORE_SIZE
		tex.stretch_mode = TextureRect.STRETCH_KEEP_ASPECT_CENTERED
		box.add_child(tex)
		var note := Label.new()
		note.modulate = Color(1, 1, 1, 0.7)
		box.add_child(note)
		_notes[m] = note
		var buttons := VBoxContainer.new()
		if m != "ground":
			buttons.add_child(UI.button("Import…", &"Load", "Import a grayscale PNG (black 0, white " \
					+ "Value) or a float EXR (m/yr as they are).", _open_dialog.bind(m, true)))
			buttons.add_child(UI.button("Save…", &"Save", "Save as a float EXR a recipe can take: " \
					+ "Image(path: \"….exr\", min: 0.0, max: 1.0).", _open_dialog.bind(m, false)))
			buttons.add_child(UI.button("Clear", &"Remove", "Clear: runs take the recipe's map again.",
					func() -> void: clear_map(m)))
		else:
			buttons.add_child(UI.button("Clear", &"Remove",
					"Clear the painted ground: the simulation's ground shows everywhere again.",
					func() -> void: clear_map(m)))
		box.add_child(buttons)
		flow.add_child(box)
		_tiles[m] = tex
	parent.add_child(flow)


func _spin(grid: GridContainer, text: String, lo: float, hi: float, step: float, v: float,
		tip: String, changed: Callable) -> SpinBox:
	grid.add_child(UI.label(text, tip))
	var s := SpinBox.new()
	s.min_value = lo
	s.max_value = hi
	s.step = step
	s.value = v
	s.tooltip_text = tip
	s.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	s.value_changed.connect(changed)
	grid.add_child(s)
	return s


func _on_map_selected(i: int) -> void:
	select_map(MAPS[i])


## Paints `map_name` from now on (`uplift`, `precipitation` or `ground`).
func select_map(map_name: String) -> void:
	var ground := map_name == "ground"
	painter.map = map_name
	_map_option.select(MAPS.find(map_name))
	_fill_modes(ground)
	painter.mode = "add"
	if ground:
		painter.value = float(_layer_option.selected)
	else:
		painter.value = Painter.default_value(painter.map)
		_value.set_value_no_signal(painter.value * 1000.0)
	_show_ground_controls(ground)


## Paints ground layer `layer` (0 rock … 7 snow) from now on, the Ground map selected.
func select_ground_layer(layer: int) -> void:
	_layer_option.select(layer)
	select_map("ground")


func _fill_modes(ground: bool) -> void:
	_mode_option.clear()
	if ground:
		_mode_option.add_item("Paint")
		_mode_option.add_item("Erase")
		_mode_option.tooltip_text = "Paint the layer under the brush, or erase paint " \
				+ "(back to the simulation's ground)."
	else:
		for m: String in MODES:
			_mode_option.add_item(m.capitalize())
		_mode_option.tooltip_text = "Add, subtract, smooth or set the map under the brush."


func _show_ground_controls(ground: bool) -> void:
	_value_label.visible = not ground
	_value.visible = not ground
	_layer_label.visible = ground
	_layer_option.visible = ground


## Whether viewport input paints (the Paint toggle is on and a terrain is followed).
func is_active() -> bool:
	return _paint_toggle != null and _paint_toggle.button_pressed and _ctx.terrain != null


func set_active(on: bool) -> void:
	_paint_toggle.button_pressed = on


## Handles a 3D viewport event while painting; true when it was used (a stroke).
func forward_input(camera: Camera3D, event: InputEvent) -> bool:
	var terrain := _ctx.terrain
	if terrain == null or not is_active():
		return false
	if event is InputEventMouse:
		var pos: Vector2 = (event as InputEventMouse).position
		var hit: Variant = terrain.call(&"intersect_ray", camera.project_ray_origin(pos),
				camera.project_ray_normal(pos))
		if hit == null:
			terrain.call(&"set_brush_indicator", false, Vector3.ZERO, painter.radius)
		else:
			terrain.call(&"set_brush_indicator", true, hit, painter.radius)
		if event is InputEventMouseButton:
			var mb := event as InputEventMouseButton
			if mb.button_index != MOUSE_BUTTON_LEFT:
				return false
			if mb.pressed and hit != null:
				var err := painter.begin_stroke(terrain, hit)
				if err != "":
					_ctx.show_error(err)
				_thumb_dirty = true
				return true
			if not mb.pressed and painter.is_stroking():
				painter.end_stroke(_ctx.undo)
				_thumb_dirty = true
				return true
		elif event is InputEventMouseMotion and painter.is_stroking():
			if hit != null:
				painter.stroke_to(hit)
				_thumb_dirty = true
			return true
	return false


func _hide_brush() -> void:
	if _ctx.terrain != null and is_instance_valid(_ctx.terrain):
		_ctx.terrain.call(&"set_brush_indicator", false, Vector3.ZERO, painter.radius)


## Clears `map_name`'s paint as one undo step.
func clear_map(map_name: String) -> void:
	var terrain := _ctx.terrain
	if terrain == null:
		return
	var before: Variant = Painter.get_values(terrain, map_name)
	if before.is_empty():
		return
	var empty: Variant = PackedFloat32Array()
	if map_name == "ground":
		empty = PackedByteArray()
	_record(terrain, "Clear painted %s" % map_name, map_name, before, empty)


## Paints `map_name` from an image file as one undo step; "" or the error.
func import_map(map_name: String, path: String) -> String:
	var terrain := _ctx.terrain
	if terrain == null:
		return "no terrain"
	var before: PackedFloat32Array = terrain.call(&"get_paint_values", map_name)
	var exr := path.get_extension().to_lower() == "exr"
	var err := String(terrain.call(&"import_paint", map_name, path, 0.0,
			1.0 if exr else painter.value))
	if err != "":
		return err
	var after: PackedFloat32Array = terrain.call(&"get_paint_values", map_name)
	terrain.call(&"set_paint_values", map_name, before)
	_record(terrain, "Import painted %s" % map_name, map_name, before, after)
	return ""


func _record(terrain: Node3D, action: String, map_name: String, before: Variant,
		after: Variant) -> void:
	var do_call := Painter.set_call(map_name, after)
	if _ctx.undo == null:
		terrain.callv(do_call[0], do_call.slice(1))
	else:
		Painter.record(_ctx.undo, terrain, action, do_call, Painter.set_call(map_name, before),
				true)
	_thumb_dirty = true


func _open_dialog(map_name: String, open: bool) -> void:
	if _dialog == null:
		_dialog = EditorFileDialog.new()
		_dialog.access = EditorFileDialog.ACCESS_FILESYSTEM
		_dialog.file_selected.connect(_on_file_selected)
		_host.add_child(_dialog)
	_dialog_map = map_name
	_dialog.file_mode = EditorFileDialog.FILE_MODE_OPEN_FILE if open \
			else EditorFileDialog.FILE_MODE_SAVE_FILE
	_dialog.filters = PackedStringArray(["*.png, *.exr ; Maps"] if open else ["*.exr ; Float EXR"])
	_dialog.title = ("Import painted %s" if open else "Save painted %s") % map_name
	_dialog.set_meta(&"open", open)
	_dialog.popup_file_dialog()


func _on_file_selected(path: String) -> void:
	var err := ""
	if bool(_dialog.get_meta(&"open")):
		err = import_map(_dialog_map, path)
	elif _ctx.terrain != null:
		err = String(_ctx.terrain.call(&"save_paint", _dialog_map, path))
	if err != "":
		_ctx.show_error(err)


## Starts or stops live erosion on the followed terrain; "" or the error.
func set_live(on: bool) -> String:
	if on == is_live():
		return ""
	if not on:
		if _live_sim != null:
			_live_sim.call(&"cancel")
		_live_label.text = "Stopping: applying the eroded terrain…"
		return ""
	var terrain := _ctx.terrain
	if terrain == null:
		_live.set_pressed_no_signal(false)
		return "Select a TerrainWorld first."
	if _ctx.generating:
		_live.set_pressed_no_signal(false)
		return "A generation is running; wait for it or cancel it."
	if _live_sim == null:
		_live_sim = ClassDB.instantiate(Context.SIMULATOR_CLASS)
		_live_sim.name = "OrogenLiveSimulator"
		_host.add_child(_live_sim)
		_live_sim.connect(&"finished", _on_live_ended.bind(""))
		_live_sim.connect(&"failed", func(message: String) -> void: _on_live_ended(message))
	_live_sim.set(&"terrain", _live_sim.get_path_to(terrain))
	_live_sim.set(&"recipe", null)
	if not bool(_live_sim.call(&"start_live")):
		_live.set_pressed_no_signal(false)
		return "Live erosion could not start."
	_ctx.live = true
	_live.set_pressed_no_signal(true)
	_live_label.text = "Eroding live…"
	live_changed.emit()
	return ""


func is_live() -> bool:
	return _live_sim != null and bool(_live_sim.call(&"is_running"))


## The live simulator (null before the first live run), for tests.
func get_live_simulator() -> Node:
	return _live_sim


func _on_live_ended(message: String) -> void:
	_ctx.live = false
	_live.set_pressed_no_signal(false)
	_live_label.text = "" if message == "" else "Live erosion stopped: %s" % message
	if message != "":
		_ctx.show_error(message)
	_thumb_dirty = true
	live_changed.emit()


## Follows the dock's terrain: stops a live run on the one it leaves.
func follow(terrain: Node3D) -> void:
	if terrain == _followed:
		return
	if is_live():
		_live_sim.call(&"cancel")
	if _followed != null and is_instance_valid(_followed):
		_followed.call(&"set_brush_indicator", false, Vector3.ZERO, painter.radius)
		if _followed.is_connected(&"paint_changed", _on_paint_changed):
			_followed.disconnect(&"paint_changed", _on_paint_changed)
	_followed = terrain
	if terrain != null and terrain.has_method(&"get_extent"):
		var e: Vector2 = terrain.call(&"get_extent")
		if maxf(e.x, e.y) > 0.0:
			painter.radius = maxf(e.x, e.y) / 20.0
			if _radius != null:
				_radius.set_value_no_signal(painter.radius)
	if terrain != null and terrain.has_signal(&"paint_changed"):
		terrain.connect(&"paint_changed", _on_paint_changed)
	_thumb_dirty = true


func _on_paint_changed(_map: String) -> void:
	_thumb_dirty = true


func process(delta: float) -> void:
	_thumb_timer -= delta
	if _thumb_dirty and _thumb_timer <= 0.0:
		_thumb_dirty = false
		_thumb_timer = THUMB_SECONDS
		refresh()
	if is_live() and _live_sim != null:
		_live_label.text = "Eroding live: %d views" % int(_live_sim.call(&"get_refresh_count"))


## Redraws the painted maps' thumbnails.
func refresh() -> void:
	var terrain := _ctx.terrain
	for m: String in MAPS:
		var tex: TextureRect = _tiles.get(m)
		if tex == null:
			continue
		var img: Image = null
		if terrain != null and is_instance_valid(terrain):
			img = terrain.call(&"get_paint_image", m)
		if m == "ground":
			tex.texture = null
			if img != null:
				tex.texture = ImageTexture.create_from_image(img)
			tex.tooltip_text = "ground: not painted (the simulation's)" if img == null \
					else "ground: the painted layers' colours, brighter where painted more"
			var gnote: Label = _notes.get(m)
			if gnote != null:
				gnote.text = "the simulation's" if img == null else "painted"
			continue
		var made := MapPreview.make(m, img)
		tex.texture = made["texture"]
		var note: Label = _notes.get(m)
		if note != null:
			note.text = "the recipe's" if img == null else "%s–%s" % [
					String.num(made["min"], 4), String.num(made["max"], 4)]
		tex.tooltip_text = "%s: not painted (the recipe's)" % m if img == null else \
				"%s: %s to %s m/yr" % [m, String.num_scientific(made["min"]),
				String.num_scientific(made["max"])]


func shutdown() -> void:
	if _live_sim != null and is_instance_valid(_live_sim):
		_live_sim.call(&"cancel")
	follow(null)
