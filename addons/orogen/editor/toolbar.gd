@tool
extends VBoxContainer
## The brushes' tool bar on the 3D viewport's left side (as Terrain3D's): one toggle button a
## tool, with an icon and a tooltip in words; pressing the pressed one again puts the tool
## away (viewport clicks then select as usual). Shown only while a TerrainWorld is selected.

const Brushes := preload("brushes.gd")
const Icons := preload("icons.gd")

## Per tool: its icon (icons/brush_<tool>.svg), its name and what it does.
const INFO := {
	"raise": ["Raise", "Raise the ground under the brush by Height step (metres) at full strength."],
	"lower": ["Lower", "Lower the ground under the brush by Height step (metres) at full strength."],
	"flatten": ["Flatten", "Flatten the ground towards the height where the stroke began."],
	"smooth": ["Smooth", "Smooth the ground under the brush (each cell towards its neighbours' mean)."],
	"set": ["Set height", "Bring the ground under the brush towards Height (metres)."],
	"erode": ["Erosion brush", "Erode under the brush while the mouse is held: stream power " \
			+ "and thermal erosion, with the flow of the whole map, so channels carve downhill."],
	"uplift": ["Paint uplift", "Paint the tectonic uplift (mm/yr) that generation and Live " \
			+ "erosion use; shown on the terrain in red (rising) and blue (sinking)."],
	"rain": ["Paint rain", "Paint the precipitation (mm/yr) that generation and Live erosion " \
			+ "use; shown on the terrain from brown (dry) to blue (wet)."],
	"texture": ["Paint texture", "Paint a ground layer (rock, cliff, scree, soil, grass, dry " \
			+ "grass, sand, snow) over the ground the simulation gives; kept when the terrain is " \
			+ "generated again and written by the Terrain3D and HTerrain exports."],
}

var brushes: Brushes
var _buttons := {}
var _group := ButtonGroup.new()


func _init(with_brushes: Brushes) -> void:
	brushes = with_brushes
	name = "OrogenToolbar"
	_group.allow_unpress = true
	var title := Label.new()
	title.text = "Orogen"
	title.tooltip_text = "Orogen's terrain brushes. Each stroke is one undo step."
	add_child(title)
	for tool: String in Brushes.TOOLS:
		if tool == Brushes.ERODE or tool == Brushes.UPLIFT or tool == Brushes.TEXTURE:
			add_child(HSeparator.new())
		var info: Array = INFO[tool]
		var b := Button.new()
		b.name = "Tool_%s" % tool
		b.toggle_mode = true
		b.button_group = _group
		b.flat = true
		b.icon = Icons.texture("brush_" + tool)
		b.tooltip_text = "%s: %s" % [info[0], info[1]]
		b.expand_icon = false
		b.custom_minimum_size = Vector2(28, 28) * _scale()
		b.toggled.connect(_on_toggled.bind(tool))
		add_child(b)
		_buttons[tool] = b
	brushes.tool_changed.connect(_on_tool_changed)


static func _scale() -> float:
	return EditorInterface.get_editor_scale() if Engine.is_editor_hint() else 1.0


func _on_toggled(on: bool, tool: String) -> void:
	if on:
		brushes.set_tool(tool)
	elif brushes.tool == tool and _group.get_pressed_button() == null:
		# Unpressed by hand (not by another tool's button taking over): put the tool away.
		brushes.set_tool("")


func _on_tool_changed(tool: String) -> void:
	for t: String in _buttons:
		var b: Button = _buttons[t]
		b.set_pressed_no_signal(t == tool)


## The button of `tool` (for tests and screenshots).
func get_button(tool: String) -> Button:
	return _buttons.get(tool)
