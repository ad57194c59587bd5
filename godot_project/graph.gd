extends "res://main.gd"
## Orogen's graph demo (graph.tscn): a range eroded on a graph of random points, made into
## the heightfield by river, valley and ridge primitives; its rivers (TerrainWorld.get_rivers,
## one Curve3D per reach) are drawn as ribbons whose UVs follow the flow (u across, v along
## in channel widths), as a game would place water along them.

## Ribbons float this far above the river bed, metres, so they cover the carved channel.
@export var ribbon_lift: float = 2.0
## Ribbons are drawn at least this wide, metres, so thin reaches read from afar.
@export var min_ribbon_width: float = 120.0


func _terrain_ready() -> void:
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
