@tool
extends PanelContainer
## One material of a recipe in the Orogen dock: a header (name, colour, move up/down, remove)
## and one slider per number field, with its unit as suffix and its doc and range as tooltip.
##
## Fields come from TerrainRecipe.describe_material_fields() ({name, unit, min, max, doc,
## kind}), the core's one description of a material (the CLI's `orogen materials` prints the
## same).

const StagePanel := preload("stage_panel.gd")

## A field was edited: `value_ron` is the new value written as RON (`35.0`, `(201, 146, 88)`).
signal value_edited(index: int, field: String, value_ron: String)
## The name was edited (the strata's uses of the old name follow it).
signal rename_requested(index: int, new_name: String)
## Move this material by `delta` places (-1 up, +1 down).
signal move_requested(index: int, delta: int)
signal remove_requested(index: int)

var index: int = 0
## Field name → its slider, for tests and refreshes.
var sliders: Dictionary = {}
## Field name → its label (in words: "Angle of repose"), for tests.
var labels: Dictionary = {}
var name_edit: LineEdit
var colour_button: ColorPickerButton


## Builds the panel for material `material_index` with its current `values` (the material's
## dictionary from TerrainRecipe.to_dict()) and `fields` from describe_material_fields().
func build(material_index: int, material_count: int, values: Dictionary, fields: Array) -> void:
	index = material_index
	name = "Material%d" % material_index
	var theme_src := EditorInterface.get_editor_theme()
	var style := StyleBoxFlat.new()
	style.bg_color = theme_src.get_color(&"dark_color_2", &"Editor")
	style.set_corner_radius_all(4)
	style.set_content_margin_all(6)
	add_theme_stylebox_override(&"panel", style)

	var docs: Dictionary = {}
	for info: Dictionary in fields:
		docs[String(info.get("name", ""))] = info

	var box := VBoxContainer.new()
	add_child(box)
	var header := HBoxContainer.new()
	box.add_child(header)
	name_edit = LineEdit.new()
	name_edit.text = String(values.get("name", ""))
	name_edit.set_meta(&"submitted", name_edit.text)
	name_edit.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	name_edit.custom_minimum_size.x = 80
	name_edit.tooltip_text = String((docs.get("name", {}) as Dictionary).get("doc", "Name"))
	name_edit.add_theme_font_override(&"font", theme_src.get_font(&"bold", &"EditorFonts"))
	name_edit.text_submitted.connect(func(t: String) -> void: _submit_name(t))
	name_edit.focus_exited.connect(func() -> void: _submit_name(name_edit.text))
	header.add_child(name_edit)
	colour_button = ColorPickerButton.new()
	colour_button.custom_minimum_size = Vector2(36, 0)
	colour_button.edit_alpha = false
	var rgb: Array = Array(values.get("colour", [128, 128, 128]))
	if rgb.size() == 3:
		colour_button.color = Color8(int(rgb[0]), int(rgb[1]), int(rgb[2]))
	var colour_info: Dictionary = docs.get("colour", {})
	colour_button.tooltip_text = "%s\n(r, g, b), 0–255 each." % String(colour_info.get("doc", "Colour"))
	colour_button.color_changed.connect(func(c: Color) -> void:
		value_edited.emit(index, "colour", "(%d, %d, %d)" % [c.r8, c.g8, c.b8]))
	header.add_child(colour_button)
	header.add_child(_icon_button(&"MoveUp", "Move material up", material_index > 0,
			func() -> void: move_requested.emit(index, -1)))
	header.add_child(_icon_button(&"MoveDown", "Move material down", material_index < material_count - 1,
			func() -> void: move_requested.emit(index, 1)))
	header.add_child(_icon_button(&"Remove", "Remove material", true,
			func() -> void: remove_requested.emit(index)))

	var grid := GridContainer.new()
	grid.columns = 2
	box.add_child(grid)
	for info: Dictionary in fields:
		var field := String(info.get("name", ""))
		if String(info.get("kind", "")) != "Number" or not values.has(field):
			continue
		# In words and the unit a designer reads (the schema's label and display unit); the
		# recipe keeps its own unit, `display_scale` converts.
		var scale := float(info.get("display_scale", 1.0))
		var unit := String(info.get("display_unit", info.get("unit", "")))
		var slider := StagePanel.number_slider(float(values[field]) * scale, false, unit,
				float(info.get("min", 0.0)) * scale, float(info.get("max", 1.0)) * scale,
				String(info.get("doc", "")))
		slider.value_changed.connect(func(v: float) -> void:
			value_edited.emit(index, field, StagePanel.to_ron(v / scale, false)))
		var label := StagePanel.field_label(String(info.get("label", field)), "%s (%s)" % [
				String(info.get("doc", "")), field])
		grid.add_child(label)
		grid.add_child(slider)
		sliders[field] = slider
		labels[field] = label


func _submit_name(text: String) -> void:
	var n := text.strip_edges()
	if n != "" and n != String(name_edit.get_meta(&"submitted", "")) and is_inside_tree():
		name_edit.set_meta(&"submitted", n)
		rename_requested.emit(index, n)


func _icon_button(icon: StringName, tip: String, enabled: bool, pressed: Callable) -> Button:
	var b := Button.new()
	b.flat = true
	b.icon = EditorInterface.get_editor_theme().get_icon(icon, &"EditorIcons")
	b.tooltip_text = tip
	b.disabled = not enabled
	b.pressed.connect(pressed)
	return b
