@tool
extends RefCounted
## "Send to HTerrain": writes the followed TerrainWorld straight into an HTerrain node (Zylann's
## godot_heightmap_plugin) of the edited scene, making one beside the terrain when the scene
## has none.
##
## The terrain is exported as for "Save for HTerrain…" (TerrainWorld.save_for_hterrain: a 2ⁿ+1
## square height.exr with every height unchanged in its top-left corner, splat.png, color.png
## of a layered terrain) into a scratch folder, then imported by HTerrainData's own import
## (`_edit_import_maps`, the call HTerrain's import dialog makes), and the data saved into the
## HTerrain's data directory (`<scene>_hterrain/` for a new one). The HTerrain gets the cell size
## as its `map_scale` and a transform that puts each sample where the TerrainWorld draws it.
##
## Nothing here names an HTerrain class: its scripts are loaded by path, so the addon works
## (with the button off) in projects without HTerrain.

const HTERRAIN_SCRIPT := "res://addons/zylann.hterrain/hterrain.gd"
const HTERRAIN_DATA_SCRIPT := "res://addons/zylann.hterrain/hterrain_data.gd"
## HTerrainData's channels (hterrain_data.gd CHANNEL_HEIGHT, CHANNEL_SPLAT, CHANNEL_COLOR).
const CHANNEL_HEIGHT := 0
const CHANNEL_SPLAT := 2
const CHANNEL_COLOR := 3
## The scratch folder the export goes through.
const SCRATCH_DIR := "user://orogen_send_to_hterrain"

## Why the button is off in a project without HTerrain.
const MISSING := "HTerrain is not in this project (no addons/zylann.hterrain): install Zylann's " \
		+ "Heightmap Terrain plugin to send terrains to it, or use Save for HTerrain…."


## Whether HTerrain's scripts are in the project.
static func available() -> bool:
	return ResourceLoader.exists(HTERRAIN_SCRIPT) and ResourceLoader.exists(HTERRAIN_DATA_SCRIPT)


## The first HTerrain node under `node` (itself included), depth first, or null.
static func find_hterrain(node: Node) -> Node3D:
	if node == null:
		return null
	var script := node.get_script() as Script
	if script != null and script.resource_path == HTERRAIN_SCRIPT:
		return node as Node3D
	for child: Node in node.get_children():
		var found := find_hterrain(child)
		if found != null:
			return found
	return null


## Sends `terrain` to the scene's HTerrain (made when there is none), as one undoable action
## for the node and its placement (HTerrain's map data is replaced outright: HTerrain keeps no
## undo of an import either). Returns "" or the error.
static func send(terrain: Node3D, undo: EditorUndoRedoManager) -> String:
	if not available():
		return MISSING
	var data := terrain.get(&"data") as Resource
	if data == null:
		return "Nothing to send: generate the terrain first."
	var root := EditorInterface.get_edited_scene_root()
	if root == null or not (root == terrain or root.is_ancestor_of(terrain)):
		return "The terrain is not in the edited scene."
	var scratch := ProjectSettings.globalize_path(SCRATCH_DIR)
	var err := String(terrain.call(&"save_for_hterrain", scratch))
	if err != "":
		return "Send to HTerrain: %s" % err

	var ht := find_hterrain(root)
	var created := ht == null
	var parent: Node = terrain.get_parent() if terrain != root else root
	if created:
		if root.scene_file_path == "":
			return "Save the scene first: a new HTerrain keeps its data in a folder beside it."
		var data_dir := root.scene_file_path.get_basename() + "_hterrain"
		var mk := DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(data_dir))
		if mk != OK:
			return "Cannot create %s: %s" % [data_dir, error_string(mk)]
		# In the tree before it gets a data directory: HTerrain then starts from its default map.
		ht = (load(HTERRAIN_SCRIPT) as GDScript).new() as Node3D
		ht.name = "HTerrain"
		parent.add_child(ht, true)
		ht.owner = root
		ht.set(&"data_directory", data_dir)
	else:
		parent = ht.get_parent()
	var failure := _import(ht, scratch)
	if failure != "":
		if created:
			parent.remove_child(ht)
			ht.free()
		return failure

	# Placement: HTerrain sample (i, j) at (i·dx, h, j·dy) from its origin; the TerrainWorld
	# draws cell (i, j) at ((i − (w−1)/2)·dx, h, (j − (d−1)/2)·dy) from its own.
	var dx := float(data.get(&"cell_size"))
	var dy := float(data.get(&"cell_size_y"))
	if dy == 0.0:
		dy = dx
	var w := int(data.call(&"get_width"))
	var d := int(data.call(&"get_depth"))
	var corner := Transform3D(Basis(), Vector3(-0.5 * (w - 1) * dx, 0.0, -0.5 * (d - 1) * dy))
	var parent_global := (parent as Node3D).global_transform if parent is Node3D else Transform3D()
	var placed := parent_global.affine_inverse() * terrain.global_transform * corner
	var map_scale := Vector3(dx, 1.0, dy)
	var old := [ht.transform, ht.get(&"map_scale"), ht.get(&"centered")]
	_place(ht, placed, map_scale)
	if undo == null:
		return ""
	# Done already (the import needed the node in the tree); recorded as one action.
	undo.create_action("Send terrain to HTerrain", UndoRedo.MERGE_DISABLE, root)
	if created:
		undo.add_do_method(parent, &"add_child", ht, true)
		undo.add_do_method(ht, &"set_owner", root)
		undo.add_do_reference(ht)
		undo.add_undo_method(parent, &"remove_child", ht)
	else:
		undo.add_undo_property(ht, &"transform", old[0])
		undo.add_undo_property(ht, &"map_scale", old[1])
		undo.add_undo_property(ht, &"centered", old[2])
	undo.add_do_property(ht, &"transform", placed)
	undo.add_do_property(ht, &"map_scale", map_scale)
	undo.add_do_property(ht, &"centered", false)
	undo.commit_action(false)
	return ""


## Imports the export in `scratch` into `ht`'s data the way HTerrain's import dialog does, and
## saves the data into its directory. Returns "" or the error.
static func _import(ht: Node3D, scratch: String) -> String:
	var hdata := ht.call(&"get_data") as Resource
	if hdata == null:
		return "The HTerrain has no data: give it a data directory first."
	var params := {
		CHANNEL_HEIGHT: {"path": scratch.path_join("height.exr"), "min_height": 0.0, "max_height": 1.0,
				"big_endian": false, "bit_depth": 16},
		CHANNEL_SPLAT: {"path": scratch.path_join("splat.png")},
	}
	if FileAccess.file_exists(scratch.path_join("color.png")):
		params[CHANNEL_COLOR] = {"path": scratch.path_join("color.png")}
	if not bool(hdata.call(&"_edit_import_maps", params)):
		return "HTerrain could not import %s" % scratch
	var dir := String(hdata.resource_path).get_base_dir()
	if dir != "" and not bool(hdata.call(&"save_data", dir)):
		return "HTerrain imported the terrain but could not save its data to %s" % dir
	return ""


static func _place(ht: Node3D, placed: Transform3D, map_scale: Vector3) -> void:
	ht.transform = placed
	ht.set(&"map_scale", map_scale)
	ht.set(&"centered", false)
