@tool
extends RefCounted
## The Orogen dock's map thumbnails: one tile per map of the followed terrain (MapPreview),
## refreshed when its data changes, and about once a second while a generation updates it live.

const Context := preload("dock_context.gd")
const UI := preload("dock_ui.gd")
const MapPreview := preload("map_preview.gd")

## Seconds between thumbnail refreshes while a generation updates the terrain live.
const LIVE_THUMB_SECONDS := 1.0

## The tiles were refreshed (the bake button follows whether there is data).
signal refreshed

var _ctx: Context
var _flow: HFlowContainer
## Map name → its tile.
var _tiles: Dictionary = {}
var _dirty := false
var _timer := 0.0


func _init(ctx: Context) -> void:
	_ctx = ctx


## Adds the Maps section to `parent`.
func build(parent: Control) -> void:
	parent.add_child(UI.section("Maps"))
	_flow = HFlowContainer.new()
	_flow.add_theme_constant_override(&"h_separation", 6)
	_flow.add_theme_constant_override(&"v_separation", 6)
	parent.add_child(_flow)


## Asks for a refresh: at the next frame when `now`, else when the live interval has passed.
func mark_dirty(now: bool) -> void:
	_dirty = true
	if now:
		_timer = 0.0


## Called every frame: refreshes the tiles when they are due.
func process(delta: float) -> void:
	if not _dirty:
		return
	_timer -= delta
	if _timer <= 0.0:
		_dirty = false
		_timer = LIVE_THUMB_SECONDS if _ctx.generating else 0.0
		refresh()


func get_tile_names() -> PackedStringArray:
	var names := PackedStringArray()
	for key: Variant in _tiles.keys():
		names.append(String(key))
	return names


## The texture shown for map `map_name`, or null.
func get_texture(map_name: String) -> Texture2D:
	var tile := _tiles.get(map_name) as Control
	if tile == null:
		return null
	return (tile.get_node(^"Texture") as TextureRect).texture


func refresh() -> void:
	var terrain := _ctx.terrain
	var names := PackedStringArray()
	if _ctx.has_data():
		names = terrain.call(&"get_map_names")
	for key: Variant in _tiles.keys():
		if not names.has(String(key)):
			var old := _tiles[key] as Control
			_tiles.erase(key)
			if is_instance_valid(old):
				old.queue_free()
	for map_name: String in names:
		var image := terrain.call(&"get_map", map_name) as Image
		var preview := MapPreview.make(map_name, image)
		var tile := _tiles.get(map_name) as Control
		if tile == null or not is_instance_valid(tile):
			tile = _make_tile(map_name)
			_tiles[map_name] = tile
			_flow.add_child(tile)
		var rect := tile.get_node(^"Texture") as TextureRect
		rect.texture = preview["texture"] as Texture2D
		tile.tooltip_text = String(preview["summary"])
	if names.is_empty() and _flow.get_child_count() == 0:
		var none := Label.new()
		none.name = "NoMaps"
		none.text = "No maps yet: press Generate."
		none.modulate = Color(1, 1, 1, 0.6)
		_flow.add_child(none)
	elif not names.is_empty():
		var none := _flow.get_node_or_null(^"NoMaps")
		if none != null:
			_flow.remove_child(none)
			none.queue_free()
	refreshed.emit()


func clear() -> void:
	for key: Variant in _tiles.keys():
		var tile := _tiles[key] as Control
		if is_instance_valid(tile):
			tile.get_parent().remove_child(tile)
			tile.queue_free()
	_tiles.clear()


func _make_tile(map_name: String) -> Control:
	var tile := VBoxContainer.new()
	tile.name = "Map_" + map_name.validate_node_name()
	tile.mouse_filter = Control.MOUSE_FILTER_STOP
	tile.add_theme_constant_override(&"separation", 0)
	var rect := TextureRect.new()
	rect.name = "Texture"
	rect.custom_minimum_size = Vector2(88, 88)
	rect.expand_mode = TextureRect.EXPAND_IGNORE_SIZE
	rect.stretch_mode = TextureRect.STRETCH_KEEP_ASPECT_CENTERED
	rect.mouse_filter = Control.MOUSE_FILTER_PASS
	tile.add_child(rect)
	var label := Label.new()
	label.text = map_name
	label.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
	label.custom_minimum_size.x = 88
	label.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	label.mouse_filter = Control.MOUSE_FILTER_PASS
	tile.add_child(label)
	return tile
