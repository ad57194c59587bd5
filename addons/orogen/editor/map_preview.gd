@tool
extends RefCounted
## Turns a terrain map (an Image from TerrainWorld.get_map) into a small texture for the dock.
##
## Scalar maps (FORMAT_RF, metres or m/yr or m²) are shrunk first, then normalised from their
## minimum to their maximum into grey levels; heights get a hypsometric tint and a hillshade so
## relief reads at thumbnail size. Masks and labels (L8 / RGB8) are shown as they are, an index
## map (the exposed material) with its values spread over the grey levels, and RGBA maps (splat,
## surface colour) without their alpha. Shrinking
## before normalising keeps the work per map at thumbnail size, so live previews stay cheap.

## Largest side of a thumbnail, pixels.
const THUMB_SIZE := 128

## Hypsometric tint for heights, low to high.
const HEIGHT_RAMP: Array[Color] = [
	Color(0.20, 0.36, 0.22),
	Color(0.45, 0.55, 0.30),
	Color(0.62, 0.55, 0.38),
	Color(0.55, 0.47, 0.42),
	Color(0.95, 0.95, 0.97),
]


## Result of [method make]: `texture` (ImageTexture or null), `min`, `max` (scalar maps only,
## over the thumbnail) and `summary` (a one-line tooltip).
static func make(map_name: String, image: Image, max_size: int = THUMB_SIZE) -> Dictionary:
	var out := {"texture": null, "min": 0.0, "max": 0.0, "summary": map_name}
	if image == null or image.is_empty():
		out["summary"] = "%s: empty" % map_name
		return out
	var full_w := image.get_width()
	var full_h := image.get_height()
	var thumb := image.duplicate() as Image
	if thumb.is_compressed():
		thumb.decompress()
	var scale := minf(1.0, float(max_size) / float(maxi(full_w, full_h)))
	var w := maxi(1, roundi(full_w * scale))
	var h := maxi(1, roundi(full_h * scale))
	var fmt := thumb.get_format()
	if w != full_w or h != full_h:
		# Labels and masks keep their exact colours; continuous maps are averaged.
		var scalar := fmt == Image.FORMAT_RF or fmt == Image.FORMAT_RH
		thumb.resize(w, h, Image.INTERPOLATE_BILINEAR if scalar else Image.INTERPOLATE_NEAREST)
	if fmt == Image.FORMAT_RF or fmt == Image.FORMAT_RH:
		if fmt == Image.FORMAT_RH:
			thumb.convert(Image.FORMAT_RF)
		var values := thumb.get_data().to_float32_array()
		var lo := INF
		var hi := -INF
		for v: float in values:
			if is_finite(v):
				lo = minf(lo, v)
				hi = maxf(hi, v)
		if lo > hi:
			lo = 0.0
			hi = 0.0
		out["min"] = lo
		out["max"] = hi
		var log_scale := _heavy_tailed(values, lo, hi)
		out["summary"] = "%s: %d×%d, %s … %s%s" % [map_name, full_w, full_h, _num(lo), _num(hi),
				" (log scale)" if log_scale else (" (constant)" if lo == hi else "")]
		if log_scale:
			# Drainage area, discharge, lake depth: most cells are near zero and a few are huge,
			# so grey levels follow log(1 + v) to show the river network and the lakes.
			for i in values.size():
				values[i] = log(1.0 + maxf(values[i], 0.0))
			lo = log(1.0 + lo)
			hi = log(1.0 + hi)
		thumb = _shade(values, w, h, lo, hi, map_name == "height")
	else:
		if fmt == Image.FORMAT_L8:
			_stretch_small_values(thumb)
		elif fmt != Image.FORMAT_RGB8:
			# Splat weights and surface colours: the colour without its alpha (a splat map's
			# fourth weight), which would otherwise show the dock through the thumbnail.
			thumb.convert(Image.FORMAT_RGB8)
		out["summary"] = "%s: %d×%d" % [map_name, full_w, full_h]
	out["texture"] = ImageTexture.create_from_image(thumb)
	return out


## An index map (the exposed material: 0, 1, 2, …) is near black as it is: its values are
## spread over the grey levels. Masks (0 or 255) are left alone.
static func _stretch_small_values(img: Image) -> void:
	var data := img.get_data()
	var top := 0
	for v: int in data:
		top = maxi(top, v)
	if top == 0 or top == 255:
		return
	for i in data.size():
		data[i] = roundi(float(data[i]) * 255.0 / float(top))
	img.set_data(img.get_width(), img.get_height(), false, Image.FORMAT_L8, data)


## Whether a non-negative map is better seen in log scale: its median is under 1% of its max.
static func _heavy_tailed(values: PackedFloat32Array, lo: float, hi: float) -> bool:
	if lo < 0.0 or hi <= 0.0 or values.is_empty():
		return false
	var sorted := values.duplicate()
	sorted.sort()
	return sorted[sorted.size() >> 1] < 0.01 * hi


## Grey (or, for heights, tinted and hillshaded) RGB8 image of `values` (w×h, row-major).
static func _shade(values: PackedFloat32Array, w: int, h: int, lo: float, hi: float,
		hillshade: bool) -> Image:
	var span := hi - lo
	var inv := 1.0 / span if span > 0.0 else 0.0
	# A constant map is drawn mid-grey (its value is in the tooltip).
	var flat := 0.5 if span <= 0.0 else 0.0
	var bytes := PackedByteArray()
	bytes.resize(w * h * 3)
	# Light from the north-west; slopes are taken in normalised units (the whole range over a
	# quarter of the thumbnail is 45°), since the thumbnail does not know the cell size.
	var light := Vector3(-1.0, -1.0, 1.4).normalized()
	var relief := 0.125 * float(maxi(w, h)) * inv
	for y in h:
		for x in w:
			var i := y * w + x
			var v := values[i]
			var t := clampf((v - lo) * inv + flat, 0.0, 1.0) if is_finite(v) else 0.0
			var c := Color(t, t, t)
			if hillshade:
				c = _ramp(t)
				var xl := values[y * w + maxi(x - 1, 0)]
				var xr := values[y * w + mini(x + 1, w - 1)]
				var yu := values[maxi(y - 1, 0) * w + x]
				var yd := values[mini(y + 1, h - 1) * w + x]
				var dx := (xr - xl) * relief
				var dy := (yd - yu) * relief
				var n := Vector3(-dx, -dy, 1.0).normalized()
				var lambert := clampf(n.dot(light), 0.0, 1.0)
				c = c * (0.35 + 0.75 * lambert)
			bytes[i * 3] = clampi(roundi(c.r * 255.0), 0, 255)
			bytes[i * 3 + 1] = clampi(roundi(c.g * 255.0), 0, 255)
			bytes[i * 3 + 2] = clampi(roundi(c.b * 255.0), 0, 255)
	return Image.create_from_data(w, h, false, Image.FORMAT_RGB8, bytes)


static func _ramp(t: float) -> Color:
	var last := HEIGHT_RAMP.size() - 1
	var f := clampf(t, 0.0, 1.0) * float(last)
	var i := mini(floori(f), last - 1)
	return HEIGHT_RAMP[i].lerp(HEIGHT_RAMP[i + 1], f - float(i))


## Compact number for tooltips: 3 significant digits, scientific when tiny or huge.
static func _num(v: float) -> String:
	var a := absf(v)
	if a != 0.0 and (a < 0.01 or a >= 1.0e6):
		var e := floori(log(a) / log(10.0))
		return "%.2fe%d" % [v / pow(10.0, e), e]
	return "%.3f" % v if a < 10.0 else "%.1f" % v
