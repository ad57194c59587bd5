extends SceneTree
## Checks a screenshot of a demo scene shows terrain (run headless by tests/godot/run.sh):
##
##   godot --headless --path godot_project -s res://tests/check_screenshot.gd -- \
##       --image=PATH [--small=PATH] [--materials=R,G,B;R,G,B;...] [--min-materials=N]
##       [--min-terrain=PERCENT] [--basic] [--no-water] [--image=PATH [options]...]
##
## Several `--image=PATH`s check several frames in one Godot start, each with the options that
## follow it (its reports then start with its file name).
##
## Asserts: not one flat colour; terrain (neither sky nor water) covers a large part of the
## frame (over 30%, or --min-terrain); sky is present; water pixels are present or, with --materials (a layered scene: its
## recipe's material colours, sRGB 0-255), at least two of the materials' colours each cover
## over 1% of the terrain (a pixel counts for the material nearest its hue; grey materials
## are not told apart; --min-materials sets how many, default 2). --small writes a 960×540 copy (for the README; JPEG when its name ends in .jpg).
## Prints `PASS name` / `FAIL name: why` and `RESULT passed=N failed=M`.

var passed: int = 0
var failed: int = 0
## The name reports start with: the image's file name when several are checked.
var label: String = ""
## --basic: only the frame's own checks (not one flat colour, terrain covers --min-terrain,
## default 10% here): for close and low views, where sky, water or materials may be out of frame.
var basic: bool = false
## Material colours to find (--materials), empty for a one-material scene.
var materials: Array[Color] = []
## How many of the material colours must each cover over 1% of the terrain (--min-materials).
var min_materials: int = 2
## Share of the frame, percent, that terrain pixels must cover (--min-terrain).
var min_terrain: float = 30.0
## --no-water: a scene without water (the sky is still checked).
var no_water: bool = false


## Each `--image=PATH` starts one image's check; the options after it, up to the next
## `--image=`, are that image's (one Godot start checks all of a scene's views).
func _initialize() -> void:
	var jobs: Array[PackedStringArray] = []
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--image="):
			jobs.append(PackedStringArray([arg]))
		elif jobs.is_empty():
			report("arguments", false, "%s comes before any --image=PATH" % arg)
		else:
			jobs[-1].append(arg)
	if jobs.is_empty():
		report("arguments", false, "no --image=PATH given")
	for job: PackedStringArray in jobs:
		label = job[0].get_slice("=", 1).get_file().get_basename() + ": " if jobs.size() > 1 else ""
		_check(job)
	finish()


func _check(args: PackedStringArray) -> void:
	var image_path: String = ""
	var small_path: String = ""
	basic = false
	no_water = false
	materials = []
	min_materials = 2
	min_terrain = 30.0
	for arg: String in args:
		if arg.begins_with("--image="):
			image_path = arg.get_slice("=", 1)
		elif arg.begins_with("--small="):
			small_path = arg.get_slice("=", 1)
		elif arg == "--basic":
			basic = true
			min_terrain = min(min_terrain, 10.0)
		elif arg == "--no-water":
			no_water = true
		elif arg.begins_with("--min-terrain="):
			min_terrain = float(arg.get_slice("=", 1))
		elif arg.begins_with("--min-materials="):
			min_materials = int(arg.get_slice("=", 1))
		elif arg.begins_with("--materials="):
			for rgb: String in arg.get_slice("=", 1).split(";", false):
				var parts: PackedStringArray = rgb.split(",")
				materials.append(Color8(int(parts[0]), int(parts[1]), int(parts[2])))
		else:
			report("arguments", false, "unknown option " + arg)
	var img: Image = Image.load_from_file(image_path)
	if img == null or img.is_empty():
		report("screenshot_loads", false, "cannot load " + image_path)
		return
	img.convert(Image.FORMAT_RGB8)
	var w: int = img.get_width()
	var h: int = img.get_height()
	var total: int = 0
	var sky: int = 0
	var water: int = 0
	var terrain: int = 0
	# Which of the 16³ colour bins some pixel falls in.
	var colours := PackedByteArray()
	colours.resize(4096)
	var per_material: Array[int] = []
	per_material.resize(materials.size())
	per_material.fill(0)
	var mean := Vector3.ZERO
	var mean_sq := Vector3.ZERO
	# Every second pixel of every second row, read from the bytes: get_pixel makes a Color a
	# pixel, several times slower (a Color is made only to find a terrain pixel's material).
	var bytes: PackedByteArray = img.get_data()
	for y: int in range(0, h, 2):
		var row: int = y * w * 3
		for x: int in range(0, w, 2):
			var k: int = row + x * 3
			var r8: int = bytes[k]
			var g8: int = bytes[k + 1]
			var b8: int = bytes[k + 2]
			total += 1
			var v := Vector3(r8, g8, b8) / 255.0
			mean += v
			mean_sq += v * v
			colours[(r8 * 15 / 255) * 256 + (g8 * 15 / 255) * 16 + b8 * 15 / 255] = 1
			var lum: float = 0.2126 * v.x + 0.7152 * v.y + 0.0722 * v.z
			# Sky and water are strongly blue; lit terrain (even snow under a blue sky) is not.
			var bluish: bool = v.z > v.x + 0.12 and v.z > v.y
			if bluish and lum > 0.55:
				sky += 1
			elif bluish:
				water += 1
			else:
				terrain += 1
				if not materials.is_empty():
					var m: int = _nearest_material(Color(v.x, v.y, v.z))
					if m >= 0:
						per_material[m] += 1
	var bins: int = 0
	for i: int in range(4096):
		bins += colours[i]
	mean /= total
	var variance: Vector3 = mean_sq / total - mean * mean
	var spread: float = sqrt(max(variance.x + variance.y + variance.z, 0.0))
	print("  screenshot %s%dx%d: terrain %.1f%%, water %.1f%%, sky %.1f%%, %d colour bins, spread %.3f" % [label,
		w, h, 100.0 * terrain / total, 100.0 * water / total, 100.0 * sky / total, bins, spread])
	# The demo scenes' graded sky alone fills 27 of the 16³ bins, so terrain of one flat colour
	# under it about 28; a desert of one sand seen low, shaded and textured, fills 54.
	report("not_one_flat_colour", bins > 40 and spread > 0.05,
		"%d colour bins, spread %.3f" % [bins, spread])
	report("terrain_covers_the_frame", 100.0 * terrain / total > min_terrain,
		"terrain %.1f%% (at least %.0f%%)" % [100.0 * terrain / total, min_terrain])
	if basic or no_water:
		pass
	elif materials.is_empty():
		report("water_present", float(water) / total > 0.003, "water %.2f%%" % (100.0 * water / total))
	else:
		var shown: int = 0
		var shares: PackedStringArray = []
		for i: int in range(materials.size()):
			var share: float = float(per_material[i]) / max(terrain, 1)
			shares.append("%s %.1f%%" % [materials[i].to_html(false), 100.0 * share])
			if share > 0.01:
				shown += 1
		print("  materials (share of terrain pixels): ", ", ".join(shares))
		report("several_material_colours", shown >= min_materials,
				"%d material colours cover more than 1%% of the terrain (%s)" % [shown, ", ".join(shares)])
	if not basic:
		report("sky_present", float(sky) / total > 0.01, "sky %.2f%%" % (100.0 * sky / total))
	if small_path != "":
		var small: Image = img.duplicate() as Image
		small.resize(960, 540, Image.INTERPOLATE_LANCZOS)
		var err: Error = small.save_jpg(small_path, 0.85) if small_path.ends_with(".jpg") else small.save_png(small_path)
		report("small_copy_saved", err == OK, "cannot write %s (%s)" % [small_path, error_string(err)])


## The material whose hue is nearest `c`'s, within 25°, among the materials coloured enough
## for their hue to mean something (saturation 0.15 or more); -1 if none is, or the pixel is
## too grey or dark to tell. Hue survives light, shade and this renderer's washed-out
## highlights far better than the colour itself.
func _nearest_material(c: Color) -> int:
	if c.s < 0.1 or c.v < 0.08:
		return -1
	var best: int = -1
	var best_d: float = 25.0
	for i: int in range(materials.size()):
		var m: Color = materials[i]
		if m.s < 0.15:
			continue
		var d: float = absf(fposmod(c.h * 360.0 - m.h * 360.0 + 180.0, 360.0) - 180.0)
		if d < best_d:
			best_d = d
			best = i
	return best


func report(name: String, ok: bool, why: String) -> void:
	if ok:
		passed += 1
		print("PASS ", label, name)
	else:
		failed += 1
		print("FAIL ", label, name, ": ", why)


func finish() -> void:
	print("RESULT passed=%d failed=%d" % [passed, failed])
	quit(0 if failed == 0 else 1)
