@tool
extends PanelContainer
## One stage of a recipe in the Orogen dock: a header (number, kind, move up/down, remove) and
## one slider per scalar parameter, with its unit as suffix and its doc as tooltip.
##
## Parameters come from TerrainRecipe.describe_stage(kind) ({name, unit, min, max, doc,
## optional}); an optional one has a checkbox that sets it or leaves it out (`None`);
## numeric fields the schema does not describe get a plain open-ended slider, and non-numeric
## fields (maps, nested settings) are listed read-only (edit them with "Edit RON…").

## A parameter was edited: `value_ron` is the new value written as RON (e.g. `0.5`, `20`).
signal value_edited(index: int, param: String, value_ron: String)
## An optional parameter's checkbox was toggled: `value_ron` is the slider's value (on) or
## `None` (off). One undoable action each, never merged with slider drags.
signal option_toggled(index: int, param: String, value_ron: String)
## Move this stage by `delta` places (-1 up, +1 down).
signal move_requested(index: int, delta: int)
signal remove_requested(index: int)

var index: int = 0
var kind: String = ""
## Parameter name → its slider, for tests and refreshes.
var sliders: Dictionary = {}
## Optional parameter name → the checkbox that sets or clears it.
var toggles: Dictionary = {}
## Parameter name → its label (in words: "Erodibility k"), for tests.
var labels: Dictionary = {}


## Builds the panel for stage `stage_index` of kind `stage_kind`, with current `values`
## (the stage's dictionary from TerrainRecipe.to_dict()) and `schema` from describe_stage.
func build(stage_index: int, stage_count: int, stage_kind: String, values: Dictionary,
		schema: Array) -> void:
	index = stage_index
	kind = stage_kind
	name = "Stage%d" % stage_index
	var theme_src := EditorInterface.get_editor_theme()
	var style := StyleBoxFlat.new()
	style.bg_color = theme_src.get_color(&"dark_color_2", &"Editor")
	style.set_corner_radius_all(4)
	style.set_content_margin_all(6)
	add_theme_stylebox_override(&"panel", style)

	var box := VBoxContainer.new()
	add_child(box)
	var header := HBoxContainer.new()
	box.add_child(header)
	var title := Label.new()
	title.text = "%d. %s" % [stage_index + 1, stage_kind]
	title.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	title.add_theme_font_override(&"font", theme_src.get_font(&"bold", &"EditorFonts"))
	header.add_child(title)
	header.add_child(_icon_button(&"MoveUp", "Move stage up", stage_index > 0,
			func() -> void: move_requested.emit(index, -1)))
	header.add_child(_icon_button(&"MoveDown", "Move stage down", stage_index < stage_count - 1,
			func() -> void: move_requested.emit(index, 1)))
	header.add_child(_icon_button(&"Remove", "Remove stage", true,
			func() -> void: remove_requested.emit(index)))

	var grid := GridContainer.new()
	grid.columns = 2
	box.add_child(grid)
	var described: Dictionary = {}
	for info: Dictionary in schema:
		var param := String(info.get("name", ""))
		if param == "" or not values.has(param):
			continue
		described[param] = true
		# In words and the unit a designer reads (the schema's label and display unit, e.g.
		# m/yr as mm/yr); the recipe keeps its own unit and `display_scale` converts.
		_add_slider(grid, param, values[param], String(info.get("display_unit", info.get("unit", ""))),
				float(info.get("min", 0.0)), float(info.get("max", 1.0)), String(info.get("doc", "")),
				bool(info.get("optional", false)), String(info.get("label", param)),
				float(info.get("display_scale", 1.0)))
	var keys: Array = values.keys()
	keys.sort()
	for key: Variant in keys:
		var param := String(key)
		if described.has(param):
			continue
		var v: Variant = values[key]
		if typeof(v) == TYPE_INT or typeof(v) == TYPE_FLOAT:
			var top := maxf(100.0, absf(float(v)) * 10.0)
			_add_slider(grid, param, v, "", 0.0, top, "")
		else:
			_add_readonly(grid, param, v)
	if grid.get_child_count() == 0:
		var none := Label.new()
		none.text = "No parameters."
		none.modulate = Color(1, 1, 1, 0.6)
		grid.add_child(none)


func _add_slider(grid: GridContainer, param: String, value: Variant, unit: String,
		lo: float, hi: float, doc: String, optional := false, label := "", scale := 1.0) -> void:
	# An optional parameter (Option in the recipe; `optional` in the schema, or null now) gets
	# a checkbox: ticked, the slider's value is written (RON's implicit `Some`); unticked, the
	# field is written as `None` and the slider is read-only, keeping the last value to turn it
	# back on with.
	var is_set := value != null
	optional = optional or not is_set
	var numeric := typeof(value) == TYPE_INT or typeof(value) == TYPE_FLOAT
	if is_set and not numeric:
		_add_readonly(grid, param, value)
		return
	var is_int := typeof(value) == TYPE_INT
	if is_int:
		scale = 1.0
	var words := words_of(param) if label == "" else label
	var field := field_label(words, doc if words == param else "%s (%s)" % [doc, param])
	grid.add_child(field)
	labels[param] = field
	var row := HBoxContainer.new()
	row.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	grid.add_child(row)
	var slider := number_slider(float(value) * scale if is_set else 0.0, is_int, unit, lo * scale,
			hi * scale, doc)
	if optional:
		var toggle := CheckBox.new()
		toggle.tooltip_text = "%s is optional: tick to set it, untick to leave it out (None)." % words
		toggle.button_pressed = is_set
		slider.read_only = not is_set
		if not is_set:
			slider.set_value_no_signal((lo if lo > 0.0 else (hi - lo) / 100.0 + lo) * scale)
		toggle.toggled.connect(func(on: bool) -> void:
			slider.read_only = not on
			option_toggled.emit(index, param, to_ron(slider.value / scale, is_int) if on else "None"))
		row.add_child(toggle)
		toggles[param] = toggle
	slider.value_changed.connect(func(v: float) -> void:
		value_edited.emit(index, param, to_ron(v / scale, is_int)))
	row.add_child(slider)
	sliders[param] = slider


## A recipe field's name in words (the core schema's labels: `k` → "Erodibility k").
static func words_of(param: String) -> String:
	return String(ClassDB.class_call_static(&"TerrainRecipe", &"field_label", param))


## A field's name, with its doc as tooltip.
static func field_label(text: String, doc: String) -> Label:
	var label := Label.new()
	label.text = text
	label.tooltip_text = doc
	label.mouse_filter = Control.MOUSE_FILTER_PASS
	return label


## A slider over [lo, hi] showing `value`, its unit as suffix (`deg` as °) and its doc and
## range as tooltip. The range is what the slider spans; typed values may go past it and the
## recipe's own validation has the last word (its message is shown in the dock).
static func number_slider(value: float, is_int: bool, unit: String, lo: float, hi: float,
		doc: String) -> EditorSpinSlider:
	var slider := EditorSpinSlider.new()
	slider.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	slider.custom_minimum_size.x = 110
	slider.min_value = lo
	slider.max_value = maxf(hi, lo + (1.0 if is_int else 1.0e-9))
	slider.step = 1.0 if is_int else step_for(lo, hi)
	# A value far inside a wide range (a river threshold of 1e6 on 0 … 1e10) keeps its own
	# digits rather than being rounded to the range's step.
	if not is_int and value != 0.0:
		slider.step = minf(slider.step, pow(10.0, floorf(log(absf(value)) / log(10.0)) - 3.0))
	slider.rounded = is_int
	slider.exp_edit = not is_int and lo > 0.0 and hi / lo >= 1000.0
	slider.allow_greater = true
	slider.allow_lesser = true
	var shown := unit_suffix(unit)
	slider.suffix = shown
	slider.tooltip_text = "%s%s\nRange %s … %s%s" % [
		doc, "" if doc == "" else "\n", _g(lo), _g(hi), "" if shown == "" else " " + shown]
	slider.set_value_no_signal(value)
	return slider


## A schema unit as the dock shows it: `deg` as °, others as written.
static func unit_suffix(unit: String) -> String:
	return "°" if unit == "deg" else unit


func _add_readonly(grid: GridContainer, param: String, value: Variant) -> void:
	var label := field_label(words_of(param), param)
	grid.add_child(label)
	labels[param] = label
	var shown := Label.new()
	shown.text = _short(value)
	shown.tooltip_text = "%s = %s\nEdit with \"Edit RON…\"." % [param, var_to_str(value)]
	shown.mouse_filter = Control.MOUSE_FILTER_PASS
	shown.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	shown.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	shown.custom_minimum_size.x = 60
	grid.add_child(shown)


func _icon_button(icon: StringName, tip: String, enabled: bool, pressed: Callable) -> Button:
	var b := Button.new()
	b.flat = true
	b.icon = EditorInterface.get_editor_theme().get_icon(icon, &"EditorIcons")
	b.tooltip_text = tip
	b.disabled = not enabled
	b.pressed.connect(pressed)
	return b


## A slider step fine enough for the range [lo, hi]: a thousandth of the span, or for ranges
## spanning decades (exponential sliders) a hundredth of the smallest value.
static func step_for(lo: float, hi: float) -> float:
	var span := absf(hi - lo)
	var base := span / 1000.0
	if lo > 0.0 and hi / lo >= 1000.0:
		base = lo / 100.0
	if base <= 0.0:
		return 0.001
	return pow(10.0, floorf(log(base) / log(10.0)))


## `v` written as RON: integers without a point, floats always with one (RON reads `1` as an
## integer, which a float field rejects).
static func to_ron(v: float, is_int: bool) -> String:
	if is_int:
		return str(roundi(v))
	var s := var_to_str(v)
	if not ("." in s or "e" in s or "n" in s):
		s += ".0"
	return s


static func _g(v: float) -> String:
	return str(v)


static func _short(v: Variant) -> String:
	if typeof(v) == TYPE_DICTIONARY and (v as Dictionary).size() == 1:
		var d := v as Dictionary
		var k: Variant = d.keys()[0]
		return "%s(…)" % str(k)
	var s := str(v)
	return s if s.length() <= 40 else s.substr(0, 39) + "…"
