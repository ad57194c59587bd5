extends "res://main.gd"
## Orogen's graph demo (graph.tscn): a range eroded on a graph of random points, made into
## the heightfield by river, valley and ridge primitives; its rivers (TerrainWorld.get_rivers,
## one Curve3D per reach) are drawn as ribbons whose UVs follow the flow (u across, v along
## in channel widths), as a game would place water along them.

## Shows the eroded graph's nodes as dots coloured by drainage (white on the ridges to deep
## blue on the rivers); also `--graph-nodes` on the command line.
@export var show_graph_nodes: bool = false
## Draws the rivers again as ribbon meshes from get_rivers(), as a game would place its own
## water along them. Off by default: the terrain already draws its rivers from the same curves
## (one river system, not two); also `--graph-ribbons` on the command line.
@export var draw_ribbons: bool = false
## Ribbons float this far above the river bed, metres, so they cover the carved channel.
@export var ribbon_lift: float = 2.0
## Ribbons are drawn at least this wide, metres, so thin reaches read from afar.
@export var min_ribbon_width: float = 120.0


func _terrain_ready() -> void:
	if draw_ribbons or OS.get_cmdline_user_args().has("--graph-ribbons"):
		_draw_rivers()
	if show_graph_nodes or OS.get_cmdline_user_args().has("--graph-nodes"):
		_draw_graph_nodes()


## The graph's nodes (TerrainData.graph_nodes) as one MultiMesh of small quads facing up,
## coloured by log drainage.
func _draw_graph_nodes() -> void:
	var nodes: PackedVector3Array = terrain.data.graph_nodes
	var drainage: PackedFloat32Array = terrain.data.graph_drainage
	if nodes.is_empty() or drainage.size() != nodes.size():
		return
	var lo: float = INF
	var hi: float = -INF
	for a: float in drainage:
		lo = min(lo, log(max(a, 1.0)))
		hi = max(hi, log(max(a, 1.0)))
	var quad := QuadMesh.new()
	var size: float = _extent() / sqrt(float(nodes.size())) * 0.35
	quad.size = Vector2(size, size)
	quad.orientation = PlaneMesh.FACE_Y
	var multi := MultiMesh.new()
	multi.transform_format = MultiMesh.TRANSFORM_3D
	multi.use_colors = true
	multi.mesh = quad
	multi.instance_count = nodes.size()
	for i: int in range(nodes.size()):
		var p: Vector3 = nodes[i]
		p.y = max(p.y, terrain.get_height(p.x, p.z)) + ribbon_lift * 2.0
		multi.set_instance_transform(i, Transform3D(Basis(), p))
		var t: float = (log(max(drainage[i], 1.0)) - lo) / max(hi - lo, 1e-6)
		multi.set_instance_color(i, Color(1.0, 1.0, 1.0).lerp(Color(0.05, 0.2, 0.7), t))
	var mat := StandardMaterial3D.new()
	mat.vertex_color_use_as_albedo = true
	mat.shading_mode = BaseMaterial3D.SHADING_MODE_UNSHADED
	var dots := MultiMeshInstance3D.new()
	dots.name = "GraphNodes"
	dots.multimesh = multi
	dots.material_override = mat
	terrain.add_child(dots)


func _draw_rivers() -> void:
	var mesh := ArrayMesh.new()
	var verts := PackedVector3Array()
	var uvs := PackedVector2Array()
	var normals := PackedVector3Array()
	var indices := PackedInt32Array()
	for river: Dictionary in terrain.get_rivers():
		var curve: Curve3D = river["curve"]
		var widths: PackedFloat32Array = river["width"]
		var n: int = curve.point_count
		if n < 2:
			continue
		var along: float = 0.0
		for i: int in range(n):
			var p: Vector3 = curve.get_point_position(i)
			var a: Vector3 = curve.get_point_position(max(i - 1, 0))
			var b: Vector3 = curve.get_point_position(min(i + 1, n - 1))
			var t := Vector3(b.x - a.x, 0.0, b.z - a.z).normalized()
			var side := Vector3(-t.z, 0.0, t.x)
			var w: float = max(widths[i], min_ribbon_width)
			if i > 0:
				along += p.distance_to(curve.get_point_position(i - 1)) / w
			var base: int = verts.size()
			for s: float in [-0.5, 0.5]:
				var q: Vector3 = p + side * (s * w)
				# The ribbon's edge sits on the terrain or the bed line, whichever is higher.
				q.y = max(p.y, terrain.get_height(q.x, q.z)) + ribbon_lift
				verts.append(q)
				uvs.append(Vector2(s + 0.5, along))
				normals.append(Vector3.UP)
			if i > 0:
				indices.append_array([base - 2, base - 1, base, base - 1, base + 1, base])
	if verts.is_empty():
		return
	var arrays: Array = []
	arrays.resize(Mesh.ARRAY_MAX)
	arrays[Mesh.ARRAY_VERTEX] = verts
	arrays[Mesh.ARRAY_NORMAL] = normals
	arrays[Mesh.ARRAY_TEX_UV] = uvs
	arrays[Mesh.ARRAY_INDEX] = indices
	mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, arrays)
	var mat := StandardMaterial3D.new()
	mat.albedo_color = Color(0.16, 0.38, 0.62)
	mat.roughness = 0.15
	mat.metallic_specular = 0.7
	mat.cull_mode = BaseMaterial3D.CULL_DISABLED
	var ribbons := MeshInstance3D.new()
	ribbons.name = "Rivers"
	ribbons.mesh = mesh
	ribbons.material_override = mat
	terrain.add_child(ribbons)
	status.text += ", %d rivers" % terrain.get_rivers().size()
