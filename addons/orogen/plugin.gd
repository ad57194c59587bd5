@tool
extends EditorPlugin
## Orogen's editor plugin: adds the Orogen dock, which follows the selected TerrainWorld (or
## PlanetWorld, whose region a click in the 3D viewport can pick).
##
## Editor-only code lives in addons/orogen/editor/; a game that only generates terrain at load
## time uses the runtime classes and never loads any of it. The dock uses Godot 4.6's EditorDock
## + add_dock() where that class exists and add_control_to_dock() before it; both are reached by
## name so this script parses on either side of the change.

const DockScript := preload("editor/orogen_dock.gd")
const Icons := preload("editor/icons.gd")
const Brushes := preload("editor/brushes.gd")
const Toolbar := preload("editor/toolbar.gd")
const ToolSettings := preload("editor/tool_settings.gd")
const DOCK_TITLE := "Orogen"

## The dock's content (orogen_dock.gd).
var _content: Control = null
## What was handed to the editor: an EditorDock wrapping _content (4.6+) or _content itself.
var _dock: Control = null
var _uses_editor_dock := false
## The viewport brushes (editor/brushes.gd), their tool bar on the viewport's left side and
## their settings at its bottom.
var _brushes: Brushes = null
var _toolbar: Toolbar = null
var _tool_settings: ToolSettings = null


func _get_plugin_name() -> String:
	return DOCK_TITLE


func _get_plugin_icon() -> Texture2D:
	return Icons.texture(Icons.OROGEN)


func _enter_tree() -> void:
	_content = DockScript.new()
	_content.call(&"setup", get_undo_redo())
	if ClassDB.class_exists(&"EditorDock") and has_method(&"add_dock"):
		var dock := ClassDB.instantiate(&"EditorDock") as Control
		dock.name = DOCK_TITLE
		dock.set(&"title", DOCK_TITLE)
		dock.set(&"dock_icon", Icons.texture(Icons.OROGEN))
		dock.set(&"default_slot", ClassDB.class_get_integer_constant(&"EditorDock", &"DOCK_SLOT_RIGHT_BL"))
		dock.add_child(_content)
		call(&"add_dock", dock)
		_dock = dock
		_uses_editor_dock = true
	else:
		_content.name = DOCK_TITLE
		call(&"add_control_to_dock",
				ClassDB.class_get_integer_constant(&"EditorPlugin", &"DOCK_SLOT_RIGHT_BL"), _content)
		_dock = _content
		_uses_editor_dock = false
	_brushes = Brushes.new(get_undo_redo())
	_toolbar = Toolbar.new(_brushes)
	_toolbar.visible = false
	add_control_to_container(CONTAINER_SPATIAL_EDITOR_SIDE_LEFT, _toolbar)
	_tool_settings = ToolSettings.new(_brushes)
	add_control_to_container(CONTAINER_SPATIAL_EDITOR_BOTTOM, _tool_settings)
	var selection := EditorInterface.get_selection()
	selection.selection_changed.connect(_on_selection_changed)
	_on_selection_changed()
	# A scene opened with a terrain that has a recipe but no data shows a coarse preview.
	scene_changed.connect(_on_scene_changed)


func _exit_tree() -> void:
	var selection := EditorInterface.get_selection()
	if selection.selection_changed.is_connected(_on_selection_changed):
		selection.selection_changed.disconnect(_on_selection_changed)
	if scene_changed.is_connected(_on_scene_changed):
		scene_changed.disconnect(_on_scene_changed)
	if _brushes != null:
		_brushes.set_terrain(null)
	for c: Control in [_toolbar, _tool_settings]:
		if c != null:
			remove_control_from_container(
					CONTAINER_SPATIAL_EDITOR_SIDE_LEFT if c == _toolbar else CONTAINER_SPATIAL_EDITOR_BOTTOM, c)
			c.queue_free()
	_toolbar = null
	_tool_settings = null
	_brushes = null
	if _content != null:
		_content.call(&"shutdown")
	if _dock != null:
		if _uses_editor_dock:
			call(&"remove_dock", _dock)
		else:
			call(&"remove_control_from_docks", _dock)
		_dock.queue_free()
	_dock = null
	_content = null


func _on_selection_changed() -> void:
	if _content == null:
		return
	var nodes: Array[Node] = EditorInterface.get_selection().get_selected_nodes()
	var terrain := DockScript.pick_terrain(nodes) as Node3D
	_content.call(&"set_terrain", terrain)
	_content.call(&"set_planet", DockScript.pick_planet(nodes))
	if _brushes != null:
		_brushes.set_terrain(terrain)
		_toolbar.visible = terrain != null


func _process(delta: float) -> void:
	if _brushes != null:
		_brushes.process(delta)


func _on_scene_changed(root: Node) -> void:
	if _content != null and root != null:
		_content.call(&"preview_scene", root)


## A selected PlanetWorld takes viewport clicks while the dock's Pick is on; a selected
## TerrainWorld takes brush strokes while the dock's Paint is on.
func _handles(object: Object) -> bool:
	return DockScript.PlanetPart.is_planet(object) or DockScript.is_terrain(object)


func _forward_3d_gui_input(camera: Camera3D, event: InputEvent) -> int:
	if _content == null:
		return EditorPlugin.AFTER_GUI_INPUT_PASS
	if _brushes != null and _brushes.forward_input(camera, event):
		return EditorPlugin.AFTER_GUI_INPUT_STOP
	if _content.paint != null and _content.paint.forward_input(camera, event):
		return EditorPlugin.AFTER_GUI_INPUT_STOP
	if _content.get(&"planet_part") != null and _content.planet_part.pick_from_viewport(camera, event):
		return EditorPlugin.AFTER_GUI_INPUT_STOP
	return EditorPlugin.AFTER_GUI_INPUT_PASS


## The viewport brushes (editor/brushes.gd).
func get_brushes() -> RefCounted:
	return _brushes


## The brushes' tool bar (left of the 3D viewport) and settings bar (below it).
func get_toolbar() -> Control:
	return _toolbar


func get_tool_settings() -> Control:
	return _tool_settings


## The dock's content (orogen_dock.gd).
func get_dock_content() -> Control:
	return _content


## Whether the dock went through EditorDock/add_dock (Godot 4.6+).
func uses_editor_dock() -> bool:
	return _uses_editor_dock

