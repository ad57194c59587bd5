@tool
extends RefCounted
## The Orogen dock's layered-rock form: the recipe's materials (name, colour, talus angle,
## susceptibility, dissolubility, wind resistance, erodibility) and its strata (top, repeat,
## bottom and sediment materials, dip, strike, warp, and the layers from the top down, each a
## material and a thickness). Add, remove and reorder materials and layers; every field shows
## its unit and range, from the core's descriptions (TerrainRecipe.describe_material_fields,
## describe_strata_fields, describe_stratum_fields).
##
## Every edit is one undoable action on the recipe's RON (DockContext.edit_recipe). The core
## validates each one; a value it refuses is not applied, its message (naming the field, e.g.
## `materials[1].talus_deg`) is shown in the dock and the form goes back to the recipe's value.

const Context := preload("dock_context.gd")
const UI := preload("dock_ui.gd")
const StagePanel := preload("stage_panel.gd")
const MaterialPanel := preload("material_panel.gd")

## Thickness of a layer added with Add Layer, metres.
const NEW_LAYER_M := 50.0

var _ctx: Context
var _materials_box: VBoxContainer
var _add_material_kind: OptionButton
var _strata_box: VBoxContainer
var _no_strata_box: HBoxContainer
var _strata_fields: GridContainer
var _layers_box: VBoxContainer
var _add_layer_material: OptionButton
var _add_material_button: Button
var _add_layer_button: Button
var _restore_queued := false
## Strata field name → its control (EditorSpinSlider, OptionButton, LineEdit, CheckBox), and
## one dictionary per layer {material: OptionButton, thickness: EditorSpinSlider or LineEdit};
## for tests.
var strata_controls: Dictionary = {}
var layer_rows: Array[Dictionary] = []


func _init(ctx: Context) -> void:
	_ctx = ctx


## Adds the materials and strata sections to `parent`.
func build(parent: Control) -> void:
	parent.add_child(UI.section("Materials"))
	_materials_box = VBoxContainer.new()
	_materials_box.add_theme_constant_override(&"separation", 4)
	parent.add_child(_materials_box)
	var add_row := HBoxContainer.new()
	_add_material_kind = OptionButton.new()
	_add_material_kind.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_add_material_kind.tooltip_text = "A new material, or a copy of a built-in one to change."
	add_row.add_child(_add_material_kind)
	_add_material_button = UI.button("Add Material", &"Add", "Append a material to the recipe.",
			func() -> void: add_material(_chosen_new_material()))
	add_row.add_child(_add_material_button)
	parent.add_child(add_row)

	parent.add_child(UI.section("Strata"))
	_strata_box = VBoxContainer.new()
	_strata_box.add_theme_constant_override(&"separation", 4)
	parent.add_child(_strata_box)
	_no_strata_box = HBoxContainer.new()
	var none := Label.new()
	none.text = "No strata: the terrain is one material."
	none.modulate = Color(1, 1, 1, 0.6)
	none.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	none.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	_no_strata_box.add_child(none)
	parent.add_child(_no_strata_box)
	_strata_fields = GridContainer.new()
	_strata_fields.columns = 2
	_strata_box.add_child(_strata_fields)
	_strata_box.add_child(StagePanel.field_label("Layers, top down", "Each layer's material and thickness, from the top down; they repeat `repeat` times over the bottom material."))
	_layers_box = VBoxContainer.new()
	_layers_box.add_theme_constant_override(&"separation", 2)
	_strata_box.add_child(_layers_box)
	var layer_row := HBoxContainer.new()
	_add_layer_material = OptionButton.new()
	_add_layer_material.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_add_layer_material.tooltip_text = "Material of the layer to add."
	layer_row.add_child(_add_layer_material)
	_add_layer_button = UI.button("Add Layer", &"Add",
			"Append a %d m layer of this material under the others (creates the strata if there are none)." % int(NEW_LAYER_M),
			func() -> void:
				if _add_layer_material.selected >= 0:
					add_stratum(_add_layer_material.get_item_text(_add_layer_material.selected), NEW_LAYER_M))
	layer_row.add_child(_add_layer_button)
	parent.add_child(layer_row)
	var remove_row := HBoxContainer.new()
	remove_row.add_child(UI.button("Remove Strata", &"Remove", "Take the strata away: one material again.",
			remove_strata))
	_strata_box.add_child(remove_row)


## Rebuilds both sections from `recipe` (its dictionary `d`). Leaves the dock's messages alone.
func rebuild(recipe: Resource, d: Dictionary) -> void:
	for child: Node in _materials_box.get_children() + _layers_box.get_children() \
			+ _strata_fields.get_children():
		child.get_parent().remove_child(child)
		child.queue_free()
	strata_controls = {}
	layer_rows = []
	if recipe == null:
		return
	var names: PackedStringArray = recipe.call(&"get_material_names")
	var materials: Array = d.get("materials", []) if typeof(d.get("materials")) == TYPE_ARRAY else []
	var fields: Array = recipe.call(&"describe_material_fields")
	for i in materials.size():
		var panel := MaterialPanel.new()
		panel.build(i, materials.size(), materials[i] as Dictionary, fields)
		panel.value_edited.connect(func(index: int, field: String, value_ron: String) -> void:
			set_value("materials[%d].%s" % [index, field], value_ron))
		panel.rename_requested.connect(rename_material)
		panel.move_requested.connect(func(index: int, delta: int) -> void: move_material(index, delta))
		panel.remove_requested.connect(remove_material)
		_materials_box.add_child(panel)
	if materials.is_empty():
		var none := Label.new()
		none.text = "Built-in materials only: %s." % ", ".join(recipe.call(&"get_built_in_material_names"))
		none.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		none.modulate = Color(1, 1, 1, 0.6)
		_materials_box.add_child(none)
	_add_material_kind.clear()
	_add_material_kind.add_item("New material")
	var defined := PackedStringArray()
	for m: Variant in materials:
		defined.append(String((m as Dictionary).get("name", "")))
	for n: String in recipe.call(&"get_built_in_material_names"):
		if not defined.has(n):
			_add_material_kind.add_item("Copy of %s" % n)
			_add_material_kind.set_item_metadata(_add_material_kind.item_count - 1, n)
	_add_material_kind.select(0)
	_fill_names(_add_layer_material, names, _add_layer_material.get_item_text(_add_layer_material.selected)
			if _add_layer_material.selected >= 0 else "")

	var strata: Variant = d.get("strata")
	var has_strata := typeof(strata) == TYPE_DICTIONARY
	_strata_box.visible = has_strata
	_no_strata_box.visible = not has_strata
	if has_strata:
		_build_strata(recipe, strata as Dictionary, names)


func _build_strata(recipe: Resource, strata: Dictionary, names: PackedStringArray) -> void:
	for info: Dictionary in recipe.call(&"describe_strata_fields"):
		var field := String(info["name"])
		var doc := String(info.get("doc", ""))
		var unit := String(info.get("unit", ""))
		var lo := float(info.get("min", 0.0))
		var hi := float(info.get("max", 1.0))
		var path := "strata.%s" % field
		var value: Variant = strata.get(field)
		var control: Control = null
		match String(info.get("kind", "")):
			"Number", "Integer":
				var is_int := String(info["kind"]) == "Integer"
				var num: float = lo if value == null else float(value)
				var slider := StagePanel.number_slider(num, is_int, unit, lo, hi, doc)
				slider.value_changed.connect(func(v: float) -> void:
					set_value(path, StagePanel.to_ron(v, is_int)))
				control = slider
			"OptionalNumber":
				# Ticked: the value; unticked: left out (the doc says what applies then).
				var row := HBoxContainer.new()
				row.size_flags_horizontal = Control.SIZE_EXPAND_FILL
				var toggle := CheckBox.new()
				toggle.button_pressed = value != null
				toggle.tooltip_text = "Tick to set %s; unticked: %s" % [field, doc]
				var num: float = 0.0 if value == null else float(value)
				var slider := StagePanel.number_slider(num, false, unit, lo, hi, doc)
				slider.read_only = value == null
				toggle.toggled.connect(func(on: bool) -> void:
					slider.read_only = not on
					set_value(path, StagePanel.to_ron(slider.value, false) if on else "None"))
				slider.value_changed.connect(func(v: float) -> void: set_value(path, StagePanel.to_ron(v, false)))
				row.add_child(toggle)
				row.add_child(slider)
				strata_controls[field + ".set"] = toggle
				strata_controls[field] = slider
				_strata_fields.add_child(StagePanel.field_label(field, doc))
				_strata_fields.add_child(row)
				continue
			"MaterialName":
				var pick := OptionButton.new()
				pick.size_flags_horizontal = Control.SIZE_EXPAND_FILL
				pick.tooltip_text = doc
				_fill_names(pick, names, String(value))
				pick.item_selected.connect(func(i: int) -> void:
					set_value(path, JSON.stringify(pick.get_item_text(i))))
				control = pick
			"Ron":
				if field == "layers":
					continue
				control = _ron_edit(value, doc, path)
		if control == null:
			continue
		strata_controls[field] = control
		_strata_fields.add_child(StagePanel.field_label(field, doc))
		_strata_fields.add_child(control)

	var layer_fields: Dictionary = {}
	for info: Dictionary in recipe.call(&"describe_stratum_fields"):
		layer_fields[String(info["name"])] = info
	var thick: Dictionary = layer_fields.get("thickness", {})
	var layers: Array = strata.get("layers", []) if typeof(strata.get("layers")) == TYPE_ARRAY else []
	for i in layers.size():
		var layer: Dictionary = layers[i]
		var row := HBoxContainer.new()
		row.name = "Layer%d" % i
		var number := Label.new()
		number.text = "%d." % (i + 1)
		row.add_child(number)
		var pick := OptionButton.new()
		pick.size_flags_horizontal = Control.SIZE_EXPAND_FILL
		pick.custom_minimum_size.x = 80
		pick.tooltip_text = String((layer_fields.get("material", {}) as Dictionary).get("doc", ""))
		_fill_names(pick, names, String(layer.get("material", "")))
		var at := i
		pick.item_selected.connect(func(k: int) -> void:
			set_value("strata.layers[%d].material" % at, JSON.stringify(pick.get_item_text(k))))
		row.add_child(pick)
		var t: Variant = layer.get("thickness")
		var thickness: Control
		var path := "strata.layers[%d].thickness" % i
		if t is Dictionary and (t as Dictionary).has("Constant"):
			var slider := StagePanel.number_slider(float((t as Dictionary)["Constant"]), false,
					String(thick.get("unit", "m")), float(thick.get("min", 0.0)), float(thick.get("max", 1000.0)),
					String(thick.get("doc", "")))
			slider.value_changed.connect(func(v: float) -> void:
				set_value(path, "Constant(%s)" % StagePanel.to_ron(v, false)))
			thickness = slider
		else:
			# An image or noise thickness: its RON text.
			thickness = _ron_edit(t, String(thick.get("doc", "")), path)
		thickness.size_flags_horizontal = Control.SIZE_EXPAND_FILL
		thickness.size_flags_stretch_ratio = 1.2
		row.add_child(thickness)
		row.add_child(_icon_button(&"MoveUp", "Move layer up", i > 0, func() -> void: move_stratum(at, -1)))
		row.add_child(_icon_button(&"MoveDown", "Move layer down", i < layers.size() - 1,
				func() -> void: move_stratum(at, 1)))
		row.add_child(_icon_button(&"Remove", "Remove layer", true, func() -> void: remove_stratum(at)))
		_layers_box.add_child(row)
		layer_rows.append({"material": pick, "thickness": thickness})
	if layers.is_empty():
		var none := Label.new()
		none.text = "No layers: the bottom material under the sediment."
		none.modulate = Color(1, 1, 1, 0.6)
		_layers_box.add_child(none)


func get_material_panels() -> Array[Node]:
	var out: Array[Node] = []
	if _materials_box != null:
		for n: Node in _materials_box.get_children():
			if n is MaterialPanel and not n.is_queued_for_deletion():
				out.append(n)
	return out


# --- Edits ---------------------------------------------------------------------------------

## Sets `path` (e.g. `materials[0].talus_deg`, `strata.layers[1].thickness`) to a RON value, as
## one undoable action (a slider drag merges into one). A refused value is not applied: the
## dock shows the core's message and the form goes back to the recipe's values.
func set_value(path: String, value_ron: String) -> String:
	var err := _ctx.edit_recipe("Set terrain recipe %s" % path, func(r: Resource) -> String:
		return String(r.call(&"set_value", path, value_ron)), UndoRedo.MERGE_ENDS)
	if err != "":
		_queue_restore()
	return err


func add_material(material_name: String) -> String:
	return _structural("Add terrain material", func(r: Resource) -> String:
		return String(r.call(&"add_material", material_name)))


func remove_material(index: int) -> String:
	return _structural("Remove terrain material", func(r: Resource) -> String:
		return String(r.call(&"remove_material", index)))


func move_material(index: int, delta: int) -> String:
	return _structural("Move terrain material", func(r: Resource) -> String:
		return String(r.call(&"move_material", index, index + delta)))


func rename_material(index: int, new_name: String) -> String:
	return _structural("Rename terrain material", func(r: Resource) -> String:
		return String(r.call(&"rename_material", index, new_name)))


func add_stratum(material: String, thickness_m: float) -> String:
	return _structural("Add strata layer", func(r: Resource) -> String:
		return String(r.call(&"add_stratum", material, thickness_m)))


func remove_stratum(index: int) -> String:
	return _structural("Remove strata layer", func(r: Resource) -> String:
		return String(r.call(&"remove_stratum", index)))


func move_stratum(index: int, delta: int) -> String:
	return _structural("Move strata layer", func(r: Resource) -> String:
		return String(r.call(&"move_stratum", index, index + delta)))


func remove_strata() -> String:
	return _structural("Remove terrain strata", func(r: Resource) -> String:
		return String(r.call(&"remove_strata")))


## An edit that adds, removes or moves something: the sections are rebuilt after it, and after
## a refused one too (to show the recipe as it still is), keeping the dock's message.
func _structural(action: String, op: Callable) -> String:
	var err := _ctx.edit_recipe(action, op)
	_rebuild_now()
	return err


func _queue_restore() -> void:
	if not _restore_queued:
		_restore_queued = true
		_restore.call_deferred()


func _restore() -> void:
	_restore_queued = false
	_rebuild_now()


func _rebuild_now() -> void:
	var recipe := _ctx.recipe()
	rebuild(recipe, Context.dict_of(recipe))


func _chosen_new_material() -> String:
	var i := _add_material_kind.selected
	if i <= 0:
		return ""
	return String(_add_material_kind.get_item_metadata(i))


# --- Widgets -------------------------------------------------------------------------------

static func _fill_names(pick: OptionButton, names: PackedStringArray, current: String) -> void:
	pick.clear()
	for n: String in names:
		pick.add_item(n)
	if current != "" and not names.has(current):
		pick.add_item(current)
	var at := -1
	for i in pick.item_count:
		if pick.get_item_text(i) == current:
			at = i
	pick.select(at if at >= 0 else (0 if pick.item_count > 0 else -1))


## A one-line RON editor for a nested value (`None` when absent), applied on Enter or when it
## loses focus.
func _ron_edit(value: Variant, doc: String, path: String) -> LineEdit:
	var edit := LineEdit.new()
	edit.text = to_ron(value)
	edit.tooltip_text = "%s\nRON; Enter applies it." % doc
	edit.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	edit.custom_minimum_size.x = 80
	edit.set_meta(&"applied", edit.text)
	var apply := func(text: String) -> void:
		if text != String(edit.get_meta(&"applied")) and edit.is_inside_tree():
			edit.set_meta(&"applied", text)
			set_value(path, text)
	edit.text_submitted.connect(apply)
	edit.focus_exited.connect(func() -> void: apply.call(edit.text))
	return edit


func _icon_button(icon: StringName, tip: String, enabled: bool, pressed: Callable) -> Button:
	var b := Button.new()
	b.flat = true
	b.icon = EditorInterface.get_editor_theme().get_icon(icon, &"EditorIcons")
	b.tooltip_text = tip
	b.disabled = not enabled
	b.pressed.connect(pressed)
	return b


## A value of the recipe's dictionary form (TerrainRecipe.to_dict) written back as RON: enum
## variants `Name(…)`, structs `(field: …)`, lists `[…]`, `None` for null.
static func to_ron(v: Variant) -> String:
	match typeof(v):
		TYPE_NIL:
			return "None"
		TYPE_BOOL:
			return "true" if v else "false"
		TYPE_INT:
			return str(v)
		TYPE_FLOAT:
			return StagePanel.to_ron(float(v), false)
		TYPE_STRING, TYPE_STRING_NAME:
			return JSON.stringify(String(v))
		TYPE_ARRAY:
			var items := PackedStringArray()
			for item: Variant in v:
				items.append(to_ron(item))
			return "[%s]" % ", ".join(items)
		TYPE_DICTIONARY:
			var d := v as Dictionary
			if d.size() == 1:
				var key := String(d.keys()[0])
				if key.length() > 0 and key[0] == key[0].to_upper() and key[0] != key[0].to_lower():
					var inner: Variant = d[d.keys()[0]]
					if typeof(inner) == TYPE_DICTIONARY:
						return key + to_ron(inner)
					return "%s(%s)" % [key, to_ron(inner)]
			var fields := PackedStringArray()
			for k: Variant in d:
				fields.append("%s: %s" % [String(k), to_ron(d[k])])
			return "(%s)" % ", ".join(fields)
	return str(v)
