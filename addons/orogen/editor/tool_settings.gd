@tool
extends HBoxContainer
## The brushes' settings at the bottom of the 3D viewport: Size (metres), Strength and
## Falloff (percent) and the tool's own value in a designer's units: Height step or Height
## (metres) for sculpting, Years a step for the erosion brush, mm/yr for uplift and rain, and
## the paint mode; the ground layer and Paint or Erase for the Texture brush. Each is labelled
## and has a tooltip. Shown while a tool is active.

const Brushes := preload("brushes.gd")

var brushes: Brushes
var _size: SpinBox
var _strength: SpinBox
var _falloff: SpinBox
var _value: SpinBox
var _value_label: Label
var _mode: OptionButton
var _mode_label: Label
var _layer: OptionButton
var _layer_label: Label
var _erase: CheckBox


func _init(with_brushes: Brushes) -> void:
	brushes = with_brushes
	name = "OrogenToolSettings"
	_size = _spin("Size (m)", "Brush radius, metres. A new terrain starts at a twentieth of its width.",
			1.0, 1e6, 1.0, func(v: float) -> void: brushes.radius = v)
	_size.allow_greater = true
	_strength = _spin("Strength (%)", "Share of the change one dab makes at the brush's centre.",
			0.0, 100.0, 1.0, func(v: float) -> void: brushes.strength = v / 100.0)
	_falloff = _spin("Falloff (%)", "Share of the radius over which the brush fades out (0: a hard edge).",
			0.0, 100.0, 1.0, func(v: float) -> void: brushes.falloff = v / 100.0)
	_value = _spin("Value", "", -1e5, 1e5, 0.01, _on_value)
	_value_label = get_child(get_child_count() - 2) as Label
	_mode_label = Label.new()
	_mode_label.text = "Mode"
	add_child(_mode_label)
	_mode = OptionButton.new()
	for m: String in ["add", "subtract", "smooth", "set"]:
		_mode.add_item(m.capitalize())
	_mode.tooltip_text = "Add to, subtract from, smooth or set the painted map under the brush."
	_mode.item_selected.connect(func(i: int) -> void:
		brushes.paint_mode = ["add", "subtract", "smooth", "set"][i])
	add_child(_mode)
	_layer_label = Label.new()
	_layer_label.text = "Layer"
	_layer_label.tooltip_text = "The ground layer the Texture brush paints."
	add_child(_layer_label)
	_layer = OptionButton.new()
	for l: String in Brushes.GROUND_LAYERS:
		_layer.add_item(l.capitalize())
	_layer.tooltip_text = _layer_label.tooltip_text
	_layer.item_selected.connect(func(i: int) -> void: brushes.ground_layer = i)
	add_child(_layer)
	_erase = CheckBox.new()
	_erase.text = "Erase"
	_erase.tooltip_text = "Erase hand-painted ground: the simulation's ground shows again."
	_erase.toggled.connect(func(on: bool) -> void: brushes.ground_erase = on)
	add_child(_erase)
	brushes.tool_changed.connect(func(_t: String) -> void: refresh())
	brushes.settings_changed.connect(refresh)
	refresh()


func _spin(text: String, tip: String, lo: float, hi: float, step: float,
		changed: Callable) -> SpinBox:
	var l := Label.new()
	l.text = text
	l.tooltip_text = tip
	l.mouse_filter = Control.MOUSE_FILTER_PASS
	add_child(l)
	var s := SpinBox.new()
	s.min_value = lo
	s.max_value = hi
	s.step = step
	s.tooltip_text = tip
	s.custom_minimum_size.x = 90.0
	s.select_all_on_focus = true
	s.value_changed.connect(changed)
	add_child(s)
	return s


func _on_value(v: float) -> void:
	match brushes.tool:
		Brushes.RAISE, Brushes.LOWER:
			brushes.height_step = v
		Brushes.SET:
			brushes.set_height = v
		Brushes.ERODE:
			brushes.erosion_years = maxf(v, 1.0)
		Brushes.UPLIFT:
			brushes.uplift_mm = v
		Brushes.RAIN:
			brushes.rain_mm = maxf(v, 0.0)


## Shows the active tool's settings (the value's label and units follow the tool).
func refresh() -> void:
	_size.set_value_no_signal(brushes.radius)
	_strength.set_value_no_signal(brushes.strength * 100.0)
	_falloff.set_value_no_signal(brushes.falloff * 100.0)
	var label := ""
	var tip := ""
	var v := 0.0
	match brushes.tool:
		Brushes.RAISE, Brushes.LOWER:
			label = "Height step (m)"
			tip = "Metres raised or lowered at the brush's centre at full strength, once a stroke."
			v = brushes.height_step
		Brushes.SET:
			label = "Height (m)"
			tip = "The height the brush brings the ground to, metres."
			v = brushes.set_height
		Brushes.ERODE:
			label = "Years a step"
			tip = "Years of stream power each erosion step runs while the mouse is held."
			v = brushes.erosion_years
		Brushes.UPLIFT:
			label = "Uplift (mm/yr)"
			tip = "Uplift added at the brush's centre at full strength (or set), millimetres a year."
			v = brushes.uplift_mm
		Brushes.RAIN:
			label = "Rain (mm/yr)"
			tip = "Precipitation added at the brush's centre at full strength (or set), millimetres a year."
			v = brushes.rain_mm
	_value_label.text = label
	_value_label.tooltip_text = tip
	_value.tooltip_text = tip
	_value.set_value_no_signal(v)
	_value_label.visible = label != ""
	_value.visible = label != ""
	var paints := brushes.tool == Brushes.UPLIFT or brushes.tool == Brushes.RAIN
	_mode_label.visible = paints
	_mode.visible = paints
	var texture := brushes.tool == Brushes.TEXTURE
	_layer.select(brushes.ground_layer)
	_erase.set_pressed_no_signal(brushes.ground_erase)
	_layer_label.visible = texture
	_layer.visible = texture
	_erase.visible = texture
	visible = brushes.tool != "" and brushes.get_terrain() != null


## The value field and its label (for tests).
func get_value_label() -> String:
	return _value_label.text


func get_size_value() -> float:
	return _size.value
