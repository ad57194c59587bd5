@tool
extends RefCounted
## The Orogen dock's recipe form: size, cell size, seed, the ordered stages with their
## parameters, Add Stage, the materials and strata (dock_layers.gd), "Edit RON…", and "New
## Recipe" for a terrain without one. Every edit is one undoable action on the recipe's RON
## (DockContext.edit_recipe).

const Context := preload("dock_context.gd")
const UI := preload("dock_ui.gd")
const StagePanel := preload("stage_panel.gd")
const Layers := preload("dock_layers.gd")
const Sources := preload("dock_sources.gd")

## Largest grid side the recipe accepts (see Recipe::size).
const MAX_SIDE := 16385

## Import… or Export… was pressed: `action` is "import" or "export" (the bake part's dialog).
signal file_dialog_requested(action: String)
## Presets… was pressed: show the gallery of built-in recipes.
signal presets_requested

var _ctx: Context
## The materials and strata part of the form.
var layers: Layers
## The starting terrain and uplift part of the form.
var sources: Sources

var _no_recipe_box: HBoxContainer
var _recipe_box: VBoxContainer
var _width: SpinBox
var _height: SpinBox
var _cell: EditorSpinSlider
# dy of a (dx, dy) cell_size, kept when the field (dx) is edited; -1 for square cells.
var _cell_dy: float = -1.0
var _seed: SpinBox
## Grid or Graph domain, and the graph's node spacing (shown for Graph only).
var _domain: OptionButton
var _spacing: EditorSpinSlider
var _extent: Label
var _stages_box: VBoxContainer
var _add_kind: OptionButton
var _ron_dialog: ConfirmationDialog
var _ron_edit: CodeEdit


func _init(ctx: Context) -> void:
	_ctx = ctx
	_ctx.recipe_edited.connect(_update_extent)
	layers = Layers.new(ctx)
	sources = Sources.new(ctx)
	# A method callable, not a lambda: a lambda would hold this form and make a cycle.
	sources.rebuild_requested.connect(rebuild)


## Adds the form to `parent` and the RON dialog to `dialog_host`.
func build(parent: Control, dialog_host: Node) -> void:
	# A terrain without a recipe.
	_no_recipe_box = HBoxContainer.new()
	var no_recipe := Label.new()
	no_recipe.text = "This terrain has no recipe."
	no_recipe.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_no_recipe_box.add_child(no_recipe)
	_no_recipe_box.add_child(UI.button("New Recipe", &"New", "Give the terrain the default recipe "
			+ "(or pick a preset below).", create_recipe))
	parent.add_child(_no_recipe_box)

	_recipe_box = VBoxContainer.new()
	_recipe_box.add_theme_constant_override(&"separation", 6)
	parent.add_child(_recipe_box)
	_recipe_box.add_child(UI.section("Recipe"))

	var grid := GridContainer.new()
	grid.columns = 2
	_recipe_box.add_child(grid)

	grid.add_child(UI.label("Size", "Grid size in cells (width × height), 1 to %d each." % MAX_SIDE))
	var size_row := HBoxContainer.new()
	size_row.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_width = UI.int_spin(1, MAX_SIDE, "Width in cells (x, east).")
	_height = UI.int_spin(1, MAX_SIDE, "Height in cells (y, south).")
	_width.value_changed.connect(func(_v: float) -> void: _on_size_edited())
	_height.value_changed.connect(func(_v: float) -> void: _on_size_edited())
	size_row.add_child(_width)
	var times := Label.new()
	times.text = "×"
	size_row.add_child(times)
	size_row.add_child(_height)
	grid.add_child(size_row)

	grid.add_child(UI.label("Cell size", "Distance between cell centres, metres."))
	_cell = EditorSpinSlider.new()
	_cell.min_value = 0.01
	_cell.max_value = 10000.0
	_cell.step = 0.01
	_cell.exp_edit = true
	_cell.allow_greater = true
	_cell.suffix = "m"
	_cell.tooltip_text = "Distance between cell centres, metres."
	_cell.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_cell.value_changed.connect(func(v: float) -> void:
		# The field edits dx; a (dx, dy) pair keeps its dy.
		var value := StagePanel.to_ron(v, false)
		if _cell_dy > 0.0:
			value = "(%s, %s)" % [value, StagePanel.to_ron(_cell_dy, false)]
		_set_from_form("cell_size", value))
	grid.add_child(_cell)

	grid.add_child(UI.label("Seed", "Seed for every random choice: same recipe and seed, same terrain."))
	var seed_row := HBoxContainer.new()
	seed_row.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_seed = UI.int_spin(0, 9007199254740991, "Seed for every random choice.")
	_seed.value_changed.connect(func(v: float) -> void:
		_set_from_form("seed", str(int(v))))
	seed_row.add_child(_seed)
	seed_row.add_child(UI.icon_button(&"RandomNumberGenerator", "Pick a random seed.",
			func() -> void: _seed.value = randi()))
	grid.add_child(seed_row)

	grid.add_child(UI.label("Domain", "Where the stages run: the grid itself, or a graph of random points "
			+ "(no 45° river steps) made into the grid's heightfield at the end."))
	var domain_row := HBoxContainer.new()
	domain_row.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_domain = OptionButton.new()
	_domain.add_item("Grid")
	_domain.add_item("Graph")
	_domain.tooltip_text = "Grid: cell by cell. Graph: Poisson-disc nodes, Delaunay links; runs StreamPower and Thermal."
	_domain.item_selected.connect(func(i: int) -> void:
		if i == 0:
			_toggle_from_form("domain", "Grid")
		else:
			# Nodes about four cells apart to start with.
			_toggle_from_form("domain", "Graph(spacing: %s)" % StagePanel.to_ron(_cell.value * 4.0, false))
		rebuild())
	domain_row.add_child(_domain)
	_spacing = EditorSpinSlider.new()
	_spacing.min_value = 0.01
	_spacing.max_value = 100000.0
	_spacing.step = 0.01
	_spacing.exp_edit = true
	_spacing.allow_greater = true
	_spacing.suffix = "m"
	_spacing.tooltip_text = "Least distance between two graph nodes, metres."
	_spacing.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_spacing.value_changed.connect(func(v: float) -> void:
		_set_from_form("domain.Graph.spacing", StagePanel.to_ron(v, false)))
	domain_row.add_child(_spacing)
	grid.add_child(domain_row)

	_extent = Label.new()
	_extent.modulate = Color(1, 1, 1, 0.7)
	_recipe_box.add_child(_extent)
	sources.build(_recipe_box)

	_recipe_box.add_child(UI.section("Stages"))
	_stages_box = VBoxContainer.new()
	_stages_box.add_theme_constant_override(&"separation", 4)
	_recipe_box.add_child(_stages_box)
	var add_row := HBoxContainer.new()
	_add_kind = OptionButton.new()
	_add_kind.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_add_kind.tooltip_text = "Kind of stage to append."
	add_row.add_child(_add_kind)
	add_row.add_child(UI.button("Add Stage", &"Add", "Append a stage with default parameters.",
			func() -> void:
				if _add_kind.selected >= 0:
					add_stage(_add_kind.get_item_text(_add_kind.selected))))
	_recipe_box.add_child(add_row)
	layers.build(_recipe_box)

	var ron_row := HFlowContainer.new()
	ron_row.add_child(UI.button("Presets…", &"AssetLib", "Replace the recipe by a built-in one "
			+ "(undoable): a gallery with a picture of each.", func() -> void: presets_requested.emit()))
	ron_row.add_child(UI.button("Import…", &"Load", "Load a recipe from a .ron file (orogen bake format).",
			func() -> void: file_dialog_requested.emit("import")))
	ron_row.add_child(UI.button("Export…", &"Save", "Save the recipe as a .ron file for orogen bake.",
			func() -> void: file_dialog_requested.emit("export")))
	ron_row.add_child(UI.button("Edit RON…", &"Edit", "Edit the whole recipe as RON text.",
			open_ron_dialog))
	_recipe_box.add_child(ron_row)

	_ron_dialog = ConfirmationDialog.new()
	_ron_dialog.title = "Terrain Recipe (RON)"
	_ron_dialog.ok_button_text = "Apply"
	_ron_edit = CodeEdit.new()
	_ron_edit.custom_minimum_size = Vector2(560, 420)
	_ron_edit.gutters_draw_line_numbers = true
	_ron_edit.add_theme_font_override(&"font",
			EditorInterface.get_editor_theme().get_font(&"source", &"EditorFonts"))
	_ron_dialog.add_child(_ron_edit)
	_ron_dialog.confirmed.connect(_on_ron_dialog_confirmed)
	dialog_host.add_child(_ron_dialog)


## Fills the Add Stage menu once the extension can say which stage kinds exist.
func fill_stage_kinds() -> void:
	if _add_kind.item_count > 0:
		return
	var probe := _ctx.recipe_probe()
	if probe != null:
		var kinds: PackedStringArray = probe.call(&"get_stage_names")
		for kind: String in kinds:
			_add_kind.add_item(kind)


## Rebuilds the form from the recipe and records what it shows (DockContext.shown_*).
func rebuild() -> void:
	var recipe := _ctx.recipe()
	_ctx.shown_recipe = recipe
	_ctx.shown_ron = Context.ron_of(recipe)
	for child: Node in _stages_box.get_children():
		_stages_box.remove_child(child)
		child.queue_free()
	_no_recipe_box.visible = _ctx.terrain != null and recipe == null
	_recipe_box.visible = recipe != null
	if recipe == null:
		layers.rebuild(null, {})
		sources.rebuild(null, {})
		_ctx.update_validation()
		return
	var d := Context.dict_of(recipe)
	var cells := Context.pair(d.get("size"))
	_width.set_value_no_signal(cells.x)
	_height.set_value_no_signal(cells.y)
	# cell_size is one number, or (dx, dy) for non-square cells (the field shows dx).
	var cs = d.get("cell_size", 0.0)
	var pair: bool = typeof(cs) == TYPE_ARRAY and cs.size() == 2
	var cell := float(cs[0]) if pair else float(cs)
	var cell_y := float(cs[1]) if pair else cell
	_cell.set_value_no_signal(cell)
	_cell_dy = cell_y if pair else -1.0
	_cell.suffix = "m (dx; dy %s m)" % cell_y if pair else "m"
	_seed.set_value_no_signal(float(d.get("seed", 0)))
	var graph: Variant = (d["domain"] as Dictionary).get("Graph") \
			if typeof(d.get("domain")) == TYPE_DICTIONARY else null
	_domain.select(1 if typeof(graph) == TYPE_DICTIONARY else 0)
	_spacing.visible = typeof(graph) == TYPE_DICTIONARY
	if typeof(graph) == TYPE_DICTIONARY:
		_spacing.set_value_no_signal(float((graph as Dictionary).get("spacing", 500.0)))
	_extent.text = "Extent: %s × %s" % [Context.km(cells.x * cell), Context.km(cells.y * cell_y)] \
			if d.has("size") else ""
	var stages: Array = d.get("stages", []) if typeof(d.get("stages")) == TYPE_ARRAY else []
	for i in stages.size():
		var kind := Context.variant_name(stages[i])
		var params: Variant = (stages[i] as Dictionary)[kind] if kind != "" else {}
		var values: Dictionary = params if typeof(params) == TYPE_DICTIONARY else {}
		var schema: Array = recipe.call(&"describe_stage", kind)
		var panel := StagePanel.new()
		panel.build(i, stages.size(), kind, values, schema)
		panel.value_edited.connect(func(index: int, param: String, value_ron: String) -> void:
			_set_from_form("stages[%d].%s" % [index, param], value_ron))
		panel.option_toggled.connect(func(index: int, param: String, value_ron: String) -> void:
			_toggle_from_form("stages[%d].%s" % [index, param], value_ron))
		panel.move_requested.connect(func(index: int, delta: int) -> void:
			move_stage(index, delta))
		panel.remove_requested.connect(func(index: int) -> void:
			remove_stage(index))
		_stages_box.add_child(panel)
	if stages.is_empty():
		var none := Label.new()
		none.text = "No stages: the terrain is the initial noise, plane or heightmap."
		none.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		none.modulate = Color(1, 1, 1, 0.6)
		_stages_box.add_child(none)
	sources.rebuild(recipe, d)
	layers.rebuild(recipe, d)
	_ctx.update_validation()


## True when the recipe or its text differs from what the form was built from.
func is_stale() -> bool:
	var recipe := _ctx.recipe()
	return recipe != _ctx.shown_recipe or Context.ron_of(recipe) != _ctx.shown_ron


func get_stage_panels() -> Array[Node]:
	return _stages_box.get_children() if _stages_box != null else [] as Array[Node]


# --- Edits ---------------------------------------------------------------------------------

## Applies a `--set`-style override (`seed`, `size`, `stages[0].iterations`) with a RON value,
## as one undoable action; the recipe's `changed` signal then refreshes the form.
func set_recipe_value(path: String, value_ron: String) -> String:
	var shown := _ctx.shown_ron
	var err := _set_from_form(path, value_ron)
	_ctx.shown_ron = shown
	return err


## Like set_recipe_value, for edits made in the form itself: the form already shows the value,
## so it is not rebuilt (which would take the control from under the user's mouse), and
## successive edits of one control (a slider drag) merge into a single undoable action.
func _set_from_form(path: String, value_ron: String) -> String:
	return _ctx.edit_recipe("Set terrain recipe %s" % path, func(r: Resource) -> String:
		return String(r.call(&"set_value", path, value_ron)), UndoRedo.MERGE_ENDS)


## Sets (`value_ron`) or clears (`None`) an optional field from its checkbox in the form, as
## one undoable action of its own (a slider drag before or after is another).
func _toggle_from_form(path: String, value_ron: String) -> String:
	# Named apart from the slider's "Set …" action, which merges with an equally named one.
	var what := "Clear" if value_ron == "None" else "Turn on"
	return _ctx.edit_recipe("%s terrain recipe %s" % [what, path], func(r: Resource) -> String:
		return String(r.call(&"set_value", path, value_ron)))


func add_stage(kind: String) -> String:
	var err := _ctx.edit_recipe("Add %s stage" % kind, func(r: Resource) -> String:
		return String(r.call(&"add_stage", kind)))
	if err == "":
		rebuild()
	return err


func remove_stage(index: int) -> String:
	var err := _ctx.edit_recipe("Remove terrain stage", func(r: Resource) -> String:
		return String(r.call(&"remove_stage", index)))
	if err == "":
		rebuild()
	return err


func move_stage(index: int, delta: int) -> String:
	var count := Context.stage_kinds(_ctx.recipe()).size()
	var to := index + delta
	if to < 0 or to >= count:
		return ""
	var err := _ctx.edit_recipe("Move terrain stage", func(r: Resource) -> String:
		return String(r.call(&"move_stage", index, to)))
	if err == "":
		rebuild()
	return err


func _on_size_edited() -> void:
	_set_from_form("size", "(%d, %d)" % [int(_width.value), int(_height.value)])


func _update_extent() -> void:
	if _extent == null:
		return
	var cell := _cell.value
	_extent.text = "Extent: %s × %s" % [Context.km(_width.value * cell), Context.km(_height.value * cell)]


## Gives the terrain the default recipe, as one undoable action. The terrain's
## `recipe_changed` signal makes the dock follow and show it.
func create_recipe() -> void:
	var terrain := _ctx.terrain
	if terrain == null or not ClassDB.class_exists(Context.RECIPE_CLASS):
		return
	var recipe := ClassDB.instantiate(Context.RECIPE_CLASS) as Resource
	if _ctx.undo != null:
		_ctx.undo.create_action("Create terrain recipe", UndoRedo.MERGE_DISABLE, terrain)
		_ctx.undo.add_do_property(terrain, &"recipe", recipe)
		_ctx.undo.add_undo_property(terrain, &"recipe", null)
		_ctx.undo.add_do_reference(recipe)
		_ctx.undo.commit_action()
	else:
		terrain.set(&"recipe", recipe)


func open_ron_dialog() -> void:
	var recipe := _ctx.recipe()
	if recipe == null:
		return
	_ron_edit.text = Context.ron_of(recipe)
	_ron_dialog.popup_centered()


func _on_ron_dialog_confirmed() -> void:
	var text := _ron_edit.text
	var probe := ClassDB.instantiate(Context.RECIPE_CLASS) as Resource
	probe.set(&"ron", text)
	var invalid := String(probe.call(&"validate"))
	if invalid != "":
		_ctx.show_error("RON not applied: %s" % invalid)
		return
	var err := _ctx.edit_recipe("Edit terrain recipe RON", func(r: Resource) -> String:
		r.set(&"ron", text)
		return "")
	if err == "":
		rebuild()
