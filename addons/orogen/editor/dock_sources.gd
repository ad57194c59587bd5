@tool
extends RefCounted
## The Orogen dock's form for the starting terrain and the uplift, the recipe's main creative
## controls: the terrain's kind (flat, noise, inclined plane, heightmap, planet region) with a
## noise's kind, basis and numbers; the uplift as a constant, noise, an image or the painted
## map. Labels, units and tooltips come from the core's schema (TerrainRecipe.
## describe_noise_fields, describe_source_fields): lengths of kilometres in km, uplift in
## mm/yr, angles in degrees; the recipe keeps metres and m/yr.
##
## Every edit is one undoable action on the recipe's RON (DockContext.edit_recipe); a slider
## drag merges into one.

const Context := preload("dock_context.gd")
const UI := preload("dock_ui.gd")
const StagePanel := preload("stage_panel.gd")

const TERRAIN_KINDS: PackedStringArray = ["Flat", "Noise", "Plane", "Heightmap", "Planet"]
const UPLIFT_KINDS: PackedStringArray = ["Constant", "Noise", "Image", "Painted", "Planet"]

## What a kind starts as when the form switches to it (RON; a heightmap and an image need a
## file first).
const TERRAIN_DEFAULTS := {
	"Flat": "Flat(0.0)",
	"Noise": "Noise(kind: Fbm, octaves: 6, wavelength: 8000.0, amplitude: 200.0)",
	"Plane": "Plane(height: 0.0, slope: (0.01, 0.0))",
	"Planet": "Planet(region: (lat: 10.0, lon: 175.0, width_km: 400.0))",
}
const UPLIFT_DEFAULTS := {
	"Constant": "Constant(0.001)",
	"Noise": "Noise(noise: (kind: Fbm, octaves: 3, wavelength: 40000.0), min: 0.0, max: 0.001)",
	"Planet": "Planet(region: (lat: 10.0, lon: 175.0, width_km: 400.0))",
}
## Noise fields that mean nothing for a map normalised to [min, max].
const UPLIFT_NOISE_SKIP: PackedStringArray = ["amplitude", "offset"]

## The form needs rebuilding (a kind changed).
signal rebuild_requested

var _ctx: Context
var _terrain_grid: GridContainer
var _uplift_grid: GridContainer
## Recipe path (`terrain.kind`, `uplift.Noise.max`, `terrain.Noise.wavelength`) → its control.
var controls: Dictionary = {}
## Recipe path → its label, for tests.
var labels: Dictionary = {}


func _init(ctx: Context) -> void:
	_ctx = ctx


func build(parent: Control) -> void:
	parent.add_child(UI.section("Starting terrain"))
	_terrain_grid = GridContainer.new()
	_terrain_grid.columns = 2
	parent.add_child(_terrain_grid)
	parent.add_child(UI.section("Uplift"))
	_uplift_grid = GridContainer.new()
	_uplift_grid.columns = 2
	parent.add_child(_uplift_grid)


## Rebuilds both parts from the recipe's dictionary `d` (TerrainRecipe.to_dict()).
func rebuild(recipe: Resource, d: Dictionary) -> void:
	controls.clear()
	labels.clear()
	for grid: GridContainer in [_terrain_grid, _uplift_grid]:
		for child: Node in grid.get_children():
			grid.remove_child(child)
			child.queue_free()
	if recipe == null or d.is_empty():
		return
	var noise_fields: Array = ClassDB.class_call_static(Context.RECIPE_CLASS, &"describe_noise_fields")
	var source_fields: Dictionary = {}
	for info: Dictionary in ClassDB.class_call_static(Context.RECIPE_CLASS, &"describe_source_fields"):
		source_fields[String(info.get("name", ""))] = info
	_build_terrain(d.get("terrain"), noise_fields, source_fields)
	_build_uplift(d.get("uplift"), noise_fields, source_fields)


# --- The starting terrain ------------------------------------------------------------------

func _build_terrain(src: Variant, noise_fields: Array, source_fields: Dictionary) -> void:
	var g := _terrain_grid
	var kind := Context.variant_name(src)
	var inner: Variant = (src as Dictionary)[kind] if typeof(src) == TYPE_DICTIONARY and kind != "" else null
	_kind_row(g, "terrain", "Kind", "Where the starting heights come from: one height everywhere, "
			+ "procedural noise, an inclined plane, a heightmap file or a region of the recipe's planet.",
			TERRAIN_KINDS, kind)
	match kind:
		"Flat":
			var info: Dictionary = source_fields.get("height", {})
			_number(g, "terrain", info, float(inner), func(v: String) -> String:
				return "Flat(%s)" % v)
		"Noise":
			if typeof(inner) == TYPE_DICTIONARY:
				_noise(g, "terrain.Noise", inner, noise_fields, [])
		"Plane":
			if typeof(inner) == TYPE_DICTIONARY:
				var plane := inner as Dictionary
				var info: Dictionary = source_fields.get("height", {}).duplicate()
				info["doc"] = "Height at the centre of the map, metres."
				_number(g, "terrain.Plane.height", info, float(plane.get("height", 0.0)))
				_readonly(g, "Slope", "Gradient (east, south), m/m: edit with Edit RON…",
						str(plane.get("slope", "")))
		"Heightmap":
			var path := String((inner as Dictionary).get("path", "")) if typeof(inner) == TYPE_DICTIONARY else ""
			_path_row(g, "terrain.Heightmap.path", "File", "The heightmap (PNG, EXR, R16 or raw), "
					+ "relative to the recipe's folder.", path, func(p: String) -> String:
						return "Heightmap(path: %s)" % JSON.stringify(p), "terrain")
		"Planet":
			_readonly(g, "Region", "A region of the recipe's planet: edit with Edit RON…", str(inner))
		_:
			_readonly(g, "Source", "Edit with Edit RON…", str(src))


# --- The uplift ----------------------------------------------------------------------------

func _build_uplift(src: Variant, noise_fields: Array, source_fields: Dictionary) -> void:
	var g := _uplift_grid
	var kind := Context.variant_name(src)
	var inner: Variant = (src as Dictionary)[kind] if typeof(src) == TYPE_DICTIONARY and kind != "" else null
	var painted := _ctx.terrain != null and _ctx.terrain.get(&"uplift_paint") != null
	_kind_row(g, "uplift", "Kind", "How fast the rock rises under the rivers, in mm per year: "
			+ "the same everywhere, noise between a least and a greatest rate, a grayscale image, "
			+ "or the map painted with the Paint section's uplift brush.",
			UPLIFT_KINDS, "Painted" if painted else kind)
	if painted:
		_note(g, "The painted uplift map replaces the recipe's (%s). Clear it in Paint to use the recipe's." % kind)
		return
	var info: Dictionary = source_fields.get("uplift", {})
	match kind:
		"Constant":
			_number(g, "uplift", info, float(inner), func(v: String) -> String:
				return "Constant(%s)" % v)
		"Noise":
			if typeof(inner) == TYPE_DICTIONARY:
				var n := inner as Dictionary
				_rate(g, "uplift.Noise.min", "Least", info, float(n.get("min", 0.0)))
				_rate(g, "uplift.Noise.max", "Greatest", info, float(n.get("max", 0.0)))
				if typeof(n.get("noise")) == TYPE_DICTIONARY:
					_noise(g, "uplift.Noise.noise", n["noise"], noise_fields, UPLIFT_NOISE_SKIP)
		"Image":
			if typeof(inner) == TYPE_DICTIONARY:
				var m := inner as Dictionary
				_path_row(g, "uplift.Image.path", "Image", "A grayscale PNG (black: least, white: "
						+ "greatest) or a float EXR, relative to the recipe's folder.",
						String(m.get("path", "")), Callable(), "")
				_rate(g, "uplift.Image.min", "Black", info, float(m.get("min", 0.0)))
				_rate(g, "uplift.Image.max", "White", info, float(m.get("max", 0.0)))
		"Planet":
			_readonly(g, "Region", "A region of the recipe's planet: edit with Edit RON…", str(inner))
	var fade: Dictionary = source_fields.get("uplift_fade_m", {}).duplicate()
	fade["label"] = "Fade at borders"
	_number(g, "uplift_fade_m", fade,
			float(Context.dict_of(_ctx.recipe()).get("uplift_fade_m", 0.0)))
	var ragged: Dictionary = source_fields.get("uplift_fade_ragged", {}).duplicate()
	ragged["label"] = "Ragged coast"
	_number(g, "uplift_fade_ragged", ragged,
			float(Context.dict_of(_ctx.recipe()).get("uplift_fade_ragged", 0.0)))


## A rate field (uplift, m/yr in the recipe) labelled `label`.
func _rate(g: GridContainer, path: String, label: String, info: Dictionary, value: float) -> void:
	var i := info.duplicate()
	i["label"] = label
	_number(g, path, i, value)


# --- Kinds ---------------------------------------------------------------------------------

func _kind_row(g: GridContainer, source: String, label: String, doc: String,
		kinds: PackedStringArray, current: String) -> void:
	_add_label(g, "%s.kind" % source, label, doc)
	var pick := OptionButton.new()
	pick.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	pick.tooltip_text = doc
	for k: String in kinds:
		pick.add_item(k)
	var at := kinds.find(current)
	if at < 0 and current != "":
		pick.add_item(current)
		at = pick.item_count - 1
	pick.select(at)
	pick.item_selected.connect(func(i: int) -> void:
		set_kind(source, pick.get_item_text(i)))
	g.add_child(pick)
	controls["%s.kind" % source] = pick


## Switches `source` (`terrain` or `uplift`) to kind `kind` with its starting values, as one
## undoable action; "" or the error. A heightmap or an image waits for its file (the form
## shows the file field); "Painted" is the Paint section's brush, not a recipe value.
func set_kind(source: String, kind: String) -> String:
	var defaults: Dictionary = TERRAIN_DEFAULTS if source == "terrain" else UPLIFT_DEFAULTS
	var current := Context.variant_name(Context.dict_of(_ctx.recipe()).get(source))
	if kind == current:
		return ""
	if kind == "Painted":
		_ctx.set_status("Paint the uplift with the Paint section's uplift brush: the painted map "
				+ "then replaces the recipe's.")
		rebuild_requested.emit()
		return ""
	if kind == "Heightmap" or kind == "Image":
		_show_file_field(source, kind)
		return ""
	if not defaults.has(kind):
		return _ctx.show_error("%s cannot be %s." % [source, kind])
	var err := _ctx.edit_recipe("Terrain recipe %s: %s" % [source, kind], func(r: Resource) -> String:
		return String(r.call(&"set_value", source, String(defaults[kind]))))
	rebuild_requested.emit()
	return err


## Shows only the file field of a heightmap or image source: choosing the file makes it one.
func _show_file_field(source: String, kind: String) -> void:
	var g := _terrain_grid if source == "terrain" else _uplift_grid
	var keep: Node = controls["%s.kind" % source]
	for child: Node in g.get_children():
		if child != keep and child != labels.get("%s.kind" % source):
			g.remove_child(child)
			child.queue_free()
	if source == "terrain":
		_path_row(g, "terrain.Heightmap.path", "File", "The heightmap file (PNG, EXR, R16 or raw), "
				+ "relative to the recipe's folder: enter it to use it.", "", func(p: String) -> String:
					return "Heightmap(path: %s)" % JSON.stringify(p), "terrain")
	else:
		_path_row(g, "uplift.Image.path", "Image", "A grayscale PNG or a float EXR, relative to "
				+ "the recipe's folder: enter it to use it (black 0, white 1 mm/yr).", "",
				func(p: String) -> String:
					return "Image(path: %s, min: 0.0, max: 0.001)" % JSON.stringify(p), "uplift")


# --- Fields --------------------------------------------------------------------------------


## A noise's kind, basis and number fields under `prefix` (`terrain.Noise`).
func _noise(g: GridContainer, prefix: String, n: Dictionary, fields: Array,
		skip: PackedStringArray) -> void:
	var kinds: PackedStringArray = ClassDB.class_call_static(Context.RECIPE_CLASS, &"get_noise_kinds")
	_choice(g, "%s.kind" % prefix, "Noise", "How octaves combine: Fbm rolling hills, Ridged sharp "
			+ "crests, Multifractal smooth lowlands under rough peaks.", kinds, String(n.get("kind", "Fbm")))
	var basis: Variant = n.get("basis", "Perlin")
	if typeof(basis) == TYPE_STRING or typeof(basis) == TYPE_STRING_NAME:
		var bases: PackedStringArray = ClassDB.class_call_static(Context.RECIPE_CLASS, &"get_noise_bases")
		_choice(g, "%s.basis" % prefix, "Basis", "The noise function the octaves sum.", bases, String(basis))
	else:
		_readonly(g, "Basis", "A FastNoiseLite resource: edit with Edit RON…", Context.variant_name(basis))
	for info: Dictionary in fields:
		var field := String(info.get("name", ""))
		if field in skip or not n.has(field):
			continue
		_number(g, "%s.%s" % [prefix, field], info, float(n[field]))


func _choice(g: GridContainer, path: String, label: String, doc: String,
		options: PackedStringArray, current: String) -> void:
	_add_label(g, path, label, doc)
	var pick := OptionButton.new()
	pick.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	pick.tooltip_text = doc
	for o: String in options:
		pick.add_item(o)
	var at := options.find(current)
	if at < 0:
		pick.add_item(current)
		at = pick.item_count - 1
	pick.select(at)
	pick.item_selected.connect(func(i: int) -> void:
		_edit(path, pick.get_item_text(i), false))
	g.add_child(pick)
	controls[path] = pick


## A number field: its label in words, its slider in the displayed unit (mm/yr, km, °); the
## recipe gets the value in its own unit. `wrap` makes the RON of the whole source from the
## number's (a constant or a flat height); without it `path` is set.
func _number(g: GridContainer, path: String, info: Dictionary, value: float,
		wrap := Callable()) -> void:
	var scale := float(info.get("display_scale", 1.0))
	var unit := String(info.get("display_unit", info.get("unit", "")))
	var is_int := String(info.get("kind", "")) == "Integer"
	var doc := String(info.get("doc", ""))
	_add_label(g, path, String(info.get("label", path.get_slice(".", path.get_slice_count(".") - 1))), doc)
	var slider := StagePanel.number_slider(value * scale, is_int, unit,
			float(info.get("min", 0.0)) * scale, float(info.get("max", 1.0)) * scale, doc)
	var target := path.get_slice(".", 0) if wrap.is_valid() else path
	slider.value_changed.connect(func(v: float) -> void:
		var ron := StagePanel.to_ron(v if is_int else v / scale, is_int)
		_edit(target, String(wrap.call(ron)) if wrap.is_valid() else ron, true))
	g.add_child(slider)
	controls[path] = slider


func _path_row(g: GridContainer, path: String, label: String, doc: String, value: String,
		wrap: Callable, target: String) -> void:
	_add_label(g, path, label, doc)
	var edit := LineEdit.new()
	edit.text = value
	edit.placeholder_text = "res://… or a path beside the recipe"
	edit.tooltip_text = doc
	edit.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	edit.text_submitted.connect(func(t: String) -> void:
		var p := t.strip_edges()
		if p == "":
			return
		if wrap.is_valid():
			_edit(target, String(wrap.call(p)), false)
			rebuild_requested.emit()
		else:
			_edit(path, JSON.stringify(p), false))
	g.add_child(edit)
	controls[path] = edit


func _readonly(g: GridContainer, label: String, doc: String, text: String) -> void:
	_add_label(g, "", label, doc)
	var shown := Label.new()
	shown.text = text if text.length() <= 40 else text.substr(0, 39) + "…"
	shown.tooltip_text = "%s\n%s" % [doc, text]
	shown.mouse_filter = Control.MOUSE_FILTER_PASS
	shown.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	shown.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	g.add_child(shown)


func _note(g: GridContainer, text: String) -> void:
	g.add_child(Control.new())
	var l := Label.new()
	l.text = text
	l.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	l.modulate = Color(1, 1, 1, 0.7)
	l.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	l.custom_minimum_size.x = 120
	g.add_child(l)


func _add_label(g: GridContainer, path: String, text: String, doc: String) -> void:
	var l := UI.label(text, doc)
	g.add_child(l)
	if path != "":
		labels[path] = l


## Sets `path` to `value_ron` as one undoable action; slider drags (`merge`) merge into one.
func _edit(path: String, value_ron: String, merge: bool) -> String:
	return _ctx.edit_recipe("Set terrain recipe %s" % path, func(r: Resource) -> String:
		return String(r.call(&"set_value", path, value_ron)),
		UndoRedo.MERGE_ENDS if merge else UndoRedo.MERGE_DISABLE)
