extends "res://tests/test_tree.gd"
## Randomly mutated recipes through ErosionSimulator, headless (issue #11). Run by
## tests/godot/run.sh:
##
##   godot --headless --path godot_project -s res://tests/mutated_recipes.gd -- \
##       --recipes=DIR --builtin=DIR [--seed=N] [--count=N] [--only=I]
##
## --recipes: tests/godot/recipes (the small test recipes)
## --builtin: rust/orogen-core/recipes (the built-in recipes)
## --seed:    the RNG seed (default 20261201, or $OROGEN_FUZZ_SEED); printed, so a failure can
##            be run again
## --count:   how many mutated recipes (default 200)
## --only:    run case I alone (with the same seed it is the same recipe) and print its text
##
## Each case takes one base recipe, shrinks it (17²–65², one to four iterations a stage),
## mutates its RON text (bit flips, deletions, duplications, token splices, extreme numbers,
## truncation, values of the wrong type, unknown fields and stages) and runs it the way a
## game would: a TerrainWorld with an ErosionSimulator child, the recipe set, start(), then
## frames until the simulator says how it ended. Every case must end in exactly one
## `finished` or one `failed(message)` with a non-empty message; some are cancelled mid-run
## and a run still going after a few seconds is cancelled, which must end it too. Afterwards
## no worker or pool thread may be left.
##
## Prints `PASS name` / `FAIL name: why` per test and a last line `RESULT passed=N failed=M`.

const DEFAULT_SEED: int = 20261201
## A run still going after this long is cancelled (a mutated iteration count can be huge).
const PATIENCE_MS: int = 3000
## From start() to the outcome, cancel included: longer is a hang.
const CASE_TIMEOUT_MS: int = 20000
## Cases whose mutated size is larger than this are not run (see _make_case).
const MAX_CELLS: int = 1 << 20

## Numbers a mutation puts in place of one in the recipe.
const EXTREMES: PackedStringArray = [
	"0", "-1", "0.0", "-0.0", "1", "1e38", "-1e38", "3.4028236e38", "1e308", "1e-45", "NaN",
	"inf", "-inf", "+inf", "4294967295", "4294967296", "-4294967296", "9223372036854775807",
	"18446744073709551615", "18446744073709551616", "99999999999999999999999999", "16385",
	"16386", "65535", "0x7fffffff", "1_000_000", ".5", "5.", "1e", "-",
]

## Values of other types (and odd sources) a mutation puts in place of a field's value.
const WRONG_VALUES: PackedStringArray = [
	"\"text\"", "\"\"", "true", "false", "None", "Some(3)", "Some(\"x\")", "()", "[]", "(1, 2)",
	"(1, 2, 3)", "[1, 2]", "{}", "{\"a\": 1}", "'c'", "Constant(NaN)", "Constant(1e38)",
	"Constant(-1)", "Flat(3e38)", "Flat(NaN)", "Noise()", "Noise(octaves: 4294967295)",
	"Noise(wavelength: 0.0)", "Noise(kind: Nope)", "Heightmap(path: \"missing.png\")",
	"Heightmap(path: \"/dev/zero\", format: Some(RawF32), raw_size: Some((33, 33)))",
	"Heightmap(path: \"/dev/stdin\", format: Some(R16), raw_size: Some((17, 17)))",
	"Heightmap(path: \"/\")", "Heightmap(path: \"\")", "Heightmap(path: \"res://icon.svg\")",
	"Image(path: \"/dev/null\", min: 0.0, max: 1.0)", "Image(path: \"missing.png\", min: 1.0, max: 0.0)",
	"Noise(noise: (), min: 1.0, max: 0.0)", "Uniform(rate_m_per_s: inf)", "Fill(epsilon: NaN)",
]

## Whole stages, known and unknown, a mutation inserts into a stage list.
const STAGES: PackedStringArray = [
	"Erode(iterations: 2)", "StreamPower(iterations: 2, nope: 1)", "Thermal(iterations: 0)",
	"Thermal(iterations: 4294967295)", "Hydrology()", "Hydrology(river_threshold: -1.0)",
	"Hydraulic(iterations: 2)", "LayeredThermal(iterations: 2)", "Wind(iterations: 2)",
	"TimeLoop(iterations: 2, processes: [])", "TimeLoop(iterations: 2, processes: [Hydrology()])",
	"TimeLoop(iterations: 2, processes: [TimeLoop(iterations: 1, processes: [])])",
	"StreamPower", "Thermal(iterations: 2, talus: Noise(min_deg: 45.0, max_deg: 25.0))",
	"Hydraulic(iterations: 2, dt: 1e38)", "Wind(iterations: 2, dt: NaN)",
	"Thermal(iterations: 3)", "Hydrology(river_threshold: 1e5)", "Hydraulic(iterations: 3)",
	"Wind(iterations: 2)", "StreamPower(iterations: 2, dt: 1e6)", "TimeLoop(iterations: 2, processes: [Thermal()])",
	"TimeLoop(iterations: 3, mode: Every, processes: [StreamPower(), LayeredThermal(), Wind()])",
	"Hydraulic(iterations: 3, dt: 10.0)", "Thermal(iterations: 3, talus: Constant(0.0))",
]

const NUMBER_RE: String = "(?<![A-Za-z_0-9.])[-+]?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?"
const TOKEN_RE: String = "[A-Za-z_][A-Za-z0-9_]*|[-+]?[0-9][0-9_]*(\\.[0-9]*)?([eE][-+]?[0-9]+)?|\"[^\"\\n]*\"|[^\\s]"
const FIELD_RE: String = "([A-Za-z_][A-Za-z0-9_]*)\\s*:"

var recipes_dir: String = ""
var builtin_dir: String = ""
var seed_base: int = DEFAULT_SEED
var count: int = 200
var only: int = -1

var bases: Array[Dictionary] = [] # {name, ron}
var tokens: PackedStringArray = []
var number_re: RegEx
var token_re: RegEx
var field_re: RegEx
## Case index -> what happened, for the summary.
var outcomes: Dictionary = {}
## The longest case from start() to its outcome: [ms, case].
var slowest: Array = [0, ""]


func _initialize() -> void:
	var env_seed: String = OS.get_environment("OROGEN_FUZZ_SEED")
	if env_seed.is_valid_int():
		seed_base = env_seed.to_int()
	for arg: String in OS.get_cmdline_user_args():
		var value: String = arg.get_slice("=", 1)
		if arg.begins_with("--recipes="):
			recipes_dir = value
		elif arg.begins_with("--builtin="):
			builtin_dir = value
		elif arg.begins_with("--seed=") and value.is_valid_int():
			seed_base = value.to_int()
		elif arg.begins_with("--count=") and value.is_valid_int():
			count = value.to_int()
		elif arg.begins_with("--only=") and value.is_valid_int():
			only = value.to_int()
	number_re = RegEx.create_from_string(NUMBER_RE)
	token_re = RegEx.create_from_string(TOKEN_RE)
	field_re = RegEx.create_from_string(FIELD_RE)
	_run_all.call_deferred()


func _run_all() -> void:
	print("mutated recipes: seed %d, %d cases (run one again with --seed=%d --only=I)" % [seed_base, count, seed_base])
	var t0: int = Time.get_ticks_msec()
	var tests: Array[Callable] = [
		test_bases_load_and_finish,
		test_mutated_recipes_end_once,
		test_no_thread_left,
	]
	await run_tests(tests, 20)
	print("  measured: mutated recipes, seed %d: %s in %.1f s (slowest: case %s, %d ms)" % [
		seed_base, _summary(), (Time.get_ticks_msec() - t0) / 1000.0, slowest[1], slowest[0]])
	finish()


# --- helpers -----------------------------------------------------------------------------

func _summary() -> String:
	var by_kind: Dictionary = {}
	for k: Variant in outcomes.values():
		by_kind[k] = int(by_kind.get(k, 0)) + 1
	var keys: Array = by_kind.keys()
	keys.sort()
	var parts: PackedStringArray = []
	for k: Variant in keys:
		parts.append("%s %d" % [k, by_kind[k]])
	return ", ".join(parts)


func _read(path: String) -> String:
	var f: FileAccess = FileAccess.open(path, FileAccess.READ)
	return f.get_as_text() if f != null else ""


## The small test recipes and the built-in ones, each as its RON text.
func _load_bases() -> void:
	bases.clear()
	for dir: String in [recipes_dir, builtin_dir]:
		if dir.is_empty():
			continue
		var files: PackedStringArray = DirAccess.get_files_at(dir)
		files.sort()
		for f: String in files:
			if f.ends_with(".ron"):
				bases.append({"name": f, "ron": _read(dir.path_join(f))})
	tokens.clear()
	for b: Dictionary in bases:
		for m: RegExMatch in token_re.search_all(b["ron"]):
			tokens.append(m.get_string())


## `base`'s recipe at `w`×`h` cells with one to four iterations a stage (at least a
## CoarseToFine schedule's levels), as RON text ("" and
## a failure when the base does not take the edits).
func _shrink(base: Dictionary, w: int, h: int, rng: RandomNumberGenerator) -> String:
	var r: TerrainRecipe = TerrainRecipe.new()
	r.ron = base["ron"]
	# The size and a Graph domain's spacing change together, in one from_dict: set_value
	# checks the whole recipe, and neither order of two calls fits every size (the old
	# spacing may leave no node in the shrunk grid; a spacing fitted to it makes too many
	# nodes over the recipe's own extent). A Graph domain gets four node spacings across the
	# shorter side, or the grid domain when the grid has no area.
	var d: Dictionary = r.to_dict()
	d["size"] = [w, h]
	if typeof(d.get("domain")) == TYPE_DICTIONARY and (d["domain"] as Dictionary).has("Graph"):
		var cs: Variant = d.get("cell_size", 1.0)
		var dx: float = float(cs[0]) if typeof(cs) == TYPE_ARRAY else float(cs)
		var dy: float = float(cs[1]) if typeof(cs) == TYPE_ARRAY else dx
		var side: float = min((w - 1) * dx, (h - 1) * dy)
		if side > 0.0:
			(d["domain"]["Graph"] as Dictionary)["spacing"] = side / 4.0
		else:
			d["domain"] = "Grid"
	# A planet shrinks to a few thousand points and a few steps.
	if typeof(d.get("planet")) == TYPE_DICTIONARY:
		var planet: Dictionary = d["planet"]
		planet["points"] = rng.randi_range(200, 3000)
		planet["plates"] = rng.randi_range(1, 12)
		planet["steps"] = rng.randi_range(1, 8)
	var err: String = r.from_dict(d)
	var stages: Array = r.to_dict().get("stages", [])
	for i: int in range(stages.size()):
		var body: Variant = (stages[i] as Dictionary).values()[0]
		if body is Dictionary and (body as Dictionary).has("iterations"):
			# A CoarseToFine schedule needs an iteration for each of its levels (the base
			# must finish; fewer is an error naming `schedule.refine`).
			var low: int = 1
			var schedule: Variant = (body as Dictionary).get("schedule")
			if schedule is Dictionary and (schedule as Dictionary).has("CoarseToFine"):
				low = int((schedule["CoarseToFine"] as Dictionary).get("levels", 2))
			var e: String = r.set_value("stages[%d].iterations" % i, str(rng.randi_range(low, maxi(low, 4))))
			err = e if err.is_empty() else err
	if not err.is_empty():
		check(false, "%s does not shrink: %s" % [base["name"], err])
		return ""
	return r.ron


## The end of the value that starts at `from` (after `name:`): an identifier, number or
## string, with a bracketed group after it if there is one.
func _value_end(text: String, from: int) -> int:
	var i: int = from
	var n: int = text.length()
	while i < n and text[i] in " \t\n":
		i += 1
	if i < n and text[i] == "\"":
		var close: int = text.find("\"", i + 1)
		return n if close < 0 else close + 1
	while i < n and not (text[i] in "([{,)]}\n "):
		i += 1
	while i < n and text[i] == " ":
		i += 1
	if i < n and text[i] in "([{":
		var depth: int = 0
		while i < n:
			if text[i] in "([{":
				depth += 1
			elif text[i] in ")]}":
				depth -= 1
				if depth == 0:
					return i + 1
			i += 1
	return i


## One random mutation of `text`; appends what it did to `done_ops`.
func _mutate(text: String, rng: RandomNumberGenerator, done_ops: PackedStringArray) -> String:
	if text.is_empty():
		done_ops.append("insert")
		return tokens[rng.randi() % tokens.size()]
	var n: int = text.length()
	# Half the mutations keep the text well formed (numbers scaled or made extreme, values
	# swapped, stages added), so that many recipes parse and reach the worker.
	var op: int = [0, 1, 2, 3, 4, 7, 11, 5, 6, 8, 9, 10, 10, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13][rng.randi() % 23]
	match op:
		0: # flip one bit of an ASCII character (never to NUL)
			var i: int = rng.randi() % n
			var c: int = text.unicode_at(i)
			if c < 128:
				c = c ^ (1 << rng.randi_range(0, 6))
				if c == 0:
					c = 1
			else:
				c = 0x41
			done_ops.append("flip@%d" % i)
			return text.substr(0, i) + String.chr(c) + text.substr(i + 1)
		1: # delete a short span
			var i: int = rng.randi() % n
			var l: int = rng.randi_range(1, 12)
			done_ops.append("delete@%d+%d" % [i, l])
			return text.substr(0, i) + text.substr(i + l)
		2: # duplicate a span in place
			var i: int = rng.randi() % n
			var l: int = rng.randi_range(1, 40)
			done_ops.append("dup@%d+%d" % [i, l])
			return text.substr(0, i + l) + text.substr(i, l) + text.substr(i + l)
		3: # replace a token by one from any base recipe
			var ms: Array[RegExMatch] = token_re.search_all(text)
			var m: RegExMatch = ms[rng.randi() % ms.size()]
			var t: String = tokens[rng.randi() % tokens.size()]
			done_ops.append("splice@%d=%s" % [m.get_start(), t])
			return text.substr(0, m.get_start()) + t + text.substr(m.get_end())
		4: # insert a token from any base recipe
			var i: int = rng.randi() % n
			var t: String = tokens[rng.randi() % tokens.size()]
			done_ops.append("insert@%d=%s" % [i, t])
			return text.substr(0, i) + " " + t + " " + text.substr(i)
		5, 6: # replace a number (or every number, now and then) by an extreme
			var ms: Array[RegExMatch] = number_re.search_all(text)
			if ms.is_empty():
				return _mutate(text, rng, done_ops)
			var x: String = EXTREMES[rng.randi() % EXTREMES.size()]
			if rng.randi() % 8 == 0:
				done_ops.append("all-numbers=%s" % x)
				return number_re.sub(text, x, true)
			var m: RegExMatch = ms[rng.randi() % ms.size()]
			done_ops.append("number@%d=%s" % [m.get_start(), x])
			return text.substr(0, m.get_start()) + x + text.substr(m.get_end())
		12: # scale, negate or nudge a number (the text stays well formed)
			var ms: Array[RegExMatch] = number_re.search_all(text)
			if ms.is_empty():
				return _mutate(text, rng, done_ops)
			var m: RegExMatch = ms[rng.randi() % ms.size()]
			var old: String = m.get_string()
			var x: String
			if old.is_valid_int():
				x = str(old.to_int() * [0, 2, 10, 1000, -1][rng.randi() % 5] + rng.randi_range(-1, 1))
			else:
				x = str(old.to_float() * [0.0, 0.001, 0.5, 2.0, 100.0, 1e6, -1.0][rng.randi() % 7])
				if x.is_valid_int():
					x += ".0"
			done_ops.append("number@%d:%s->%s" % [m.get_start(), old, x])
			return text.substr(0, m.get_start()) + x + text.substr(m.get_end())
		13: # a field's value from the same field in another recipe (often well formed)
			var ms: Array[RegExMatch] = field_re.search_all(text)
			if ms.is_empty():
				return _mutate(text, rng, done_ops)
			var m: RegExMatch = ms[rng.randi() % ms.size()]
			var other: String = bases[rng.randi() % bases.size()]["ron"]
			var same: Array[RegExMatch] = []
			for o: RegExMatch in field_re.search_all(other):
				if o.get_string(1) == m.get_string(1):
					same.append(o)
			if same.is_empty():
				return _mutate(text, rng, done_ops)
			var o: RegExMatch = same[rng.randi() % same.size()]
			var v: String = other.substr(o.get_end(), _value_end(other, o.get_end()) - o.get_end()).strip_edges()
			done_ops.append("value(%s)=%s" % [m.get_string(1), v])
			return text.substr(0, m.get_end()) + " " + v + text.substr(_value_end(text, m.get_end()))
		7: # truncate
			var i: int = rng.randi() % n
			done_ops.append("truncate@%d" % i)
			return text.substr(0, i)
		8: # a field's value of the wrong type, or another field's value
			var ms: Array[RegExMatch] = field_re.search_all(text)
			if ms.is_empty():
				return _mutate(text, rng, done_ops)
			var m: RegExMatch = ms[rng.randi() % ms.size()]
			var end: int = _value_end(text, m.get_end())
			var v: String
			if rng.randi() % 3 == 0:
				var o: RegExMatch = ms[rng.randi() % ms.size()]
				v = text.substr(o.get_end(), _value_end(text, o.get_end()) - o.get_end()).strip_edges()
			else:
				v = WRONG_VALUES[rng.randi() % WRONG_VALUES.size()]
			done_ops.append("value(%s)=%s" % [m.get_string(1), v])
			return text.substr(0, m.get_end()) + " " + v + text.substr(end)
		9: # an unknown field, or a field twice, after an opening parenthesis
			var opens: PackedInt32Array = []
			for i: int in range(n):
				if text[i] == "(":
					opens.append(i)
			if opens.is_empty():
				return _mutate(text, rng, done_ops)
			var at: int = opens[rng.randi() % opens.size()] + 1
			var ms: Array[RegExMatch] = field_re.search_all(text)
			var f: String = "bogus: 1, "
			if not ms.is_empty() and rng.randi() % 2 == 0:
				var m: RegExMatch = ms[rng.randi() % ms.size()]
				f = text.substr(m.get_start(), _value_end(text, m.get_end()) - m.get_start()) + ", "
			done_ops.append("field@%d=%s" % [at, f])
			return text.substr(0, at) + f + text.substr(at)
		10: # a stage inserted into a stage list (known or not, odd parameters)
			var lists: PackedInt32Array = []
			for key: String in ["stages: [", "processes: ["]:
				var i: int = text.find(key)
				while i >= 0:
					lists.append(i + key.length())
					i = text.find(key, i + 1)
			if lists.is_empty():
				return _mutate(text, rng, done_ops)
			var at: int = lists[rng.randi() % lists.size()]
			var s: String = STAGES[rng.randi() % STAGES.size()]
			done_ops.append("stage=%s" % s)
			return text.substr(0, at) + s + ", " + text.substr(at)
		_: # rename an identifier (a stage, variant or field) to a near miss
			var ids: Array[RegExMatch] = []
			for m: RegExMatch in token_re.search_all(text):
				var t: String = m.get_string()
				if t.unicode_at(0) > 64 and not t.is_valid_float():
					ids.append(m)
			if ids.is_empty():
				return _mutate(text, rng, done_ops)
			var m: RegExMatch = ids[rng.randi() % ids.size()]
			var t: String = m.get_string()
			var renamed: String = [t + "s", t.to_lower(), t.to_upper(), t.substr(1), t + "_", "é" + t][rng.randi() % 6]
			done_ops.append("rename %s=%s" % [t, renamed])
			return text.substr(0, m.get_start()) + renamed + text.substr(m.get_end())


## Case `i`'s recipe text, what was done to it and how to run it, from the seed alone.
func _make_case(i: int) -> Dictionary:
	var rng := RandomNumberGenerator.new()
	rng.seed = seed_base * 1000003 + i
	var base: Dictionary = bases[rng.randi() % bases.size()]
	var sizes: PackedInt32Array = [17, 24, 33, 48, 65, 17, 24, 33, 48, 65, 1, 2, 5]
	var w: int = sizes[rng.randi() % sizes.size()]
	var h: int = w if rng.randi() % 3 != 0 else sizes[rng.randi() % sizes.size()]
	var text: String = _shrink(base, w, h, rng)
	var done_ops: PackedStringArray = []
	for k: int in range([1, 1, 1, 1, 1, 1, 1, 2, 2, 3][rng.randi() % 10]):
		text = _mutate(text, rng, done_ops)
		done_ops[-1] = done_ops[-1].replace("\n", " ").replace("    ", "").left(80)
	# A mutated size can ask for gigabytes; a test machine shared with others runs none of
	# those (the simulator would refuse what does not fit, but may take what barely does).
	var probe: TerrainRecipe = TerrainRecipe.new()
	probe.ron = text
	var size: Array = probe.to_dict().get("size", [0, 0])
	var too_big: bool = size.size() == 2 and int(size[0]) * int(size[1]) > MAX_CELLS
	return {
		"base": base["name"], "size": "%dx%d" % [w, h], "ron": text, "done_ops": done_ops,
		# How a game would wire it: 0 the simulator's recipe, 1 the terrain's, 2 generate().
		"wiring": rng.randi() % 3,
		# One case in 25 a pool size start() must refuse (it used to spawn them all).
		"threads": [0, 1, 2][rng.randi() % 3] if rng.randi() % 25 != 0 else [-1, 257, 1000000][rng.randi() % 3],
		"live_update": rng.randi() % 2 == 0,
		"apply_on_finish": rng.randi() % 4 != 0,
		# Cancel after this many frames of running (-1: only if it runs too long).
		"cancel_after": rng.randi_range(0, 12) if rng.randi() % 5 == 0 else -1,
		# Free the terrain (and its simulator) after this many frames, as a game leaving the
		# scene would (-1: never).
		"free_after": rng.randi_range(0, 8) if rng.randi() % 12 == 0 else -1,
		"too_big": too_big,
	}


## Runs one recipe as a game would and checks it ends in exactly one `finished` or one
## `failed(message)` with a message. Returns what happened (for the summary) or "" on a hang.
func _run_case(c: Dictionary, tag: String) -> String:
	if c.get("too_big", false):
		print("  case %s %s: not run, its size is over %d cells" % [tag, c["base"], MAX_CELLS])
		return "not run: too big"
	var recipe: TerrainRecipe = TerrainRecipe.new()
	recipe.ron = c["ron"]
	var terrain: TerrainWorld = TerrainWorld.new()
	root.add_child(terrain)
	var sim: ErosionSimulator
	if c["wiring"] == 2:
		terrain.recipe = recipe
		sim = terrain.generate()
	else:
		sim = ErosionSimulator.new()
		sim.name = "Simulator"
		sim.terrain = NodePath("..")
		if c["wiring"] == 0:
			sim.recipe = recipe
		else:
			terrain.recipe = recipe
		terrain.add_child(sim)
	sim.threads = c["threads"]
	sim.live_update = c["live_update"]
	sim.apply_on_finish = c["apply_on_finish"]
	var ends: Array = [] # ["finished"] or ["failed", message]
	var steps: Array[int] = [0]
	# Handlers ask the simulator about itself, as a game's would (`terrain.data =
	# sim.get_result()`): it must answer from inside its own signals, no longer running.
	var answers: Array = []
	sim.finished.connect(func() -> void:
		ends.append(["finished"])
		answers.append([sim.is_running(), sim.get_result() != null]))
	sim.failed.connect(func(m: String) -> void:
		ends.append(["failed", m])
		answers.append([sim.is_running(), sim.get_result() != null]))
	sim.step_finished.connect(func(_i: int) -> void: steps[0] += 1)
	var stages: Array[int] = [0]
	sim.progress.connect(func(_i: int, _s: String, _f: float) -> void: stages[0] += 1)
	var started: bool = true
	if c["wiring"] != 2:
		started = sim.start()
	var t0: int = Time.get_ticks_msec()
	var frames: int = 0
	var cancelled: String = ""
	while ends.is_empty() or (is_instance_valid(sim) and sim.is_running()):
		if c.get("free_after", -1) >= 0 and frames >= c["free_after"]:
			return await _free_mid_run(c, tag, terrain, ends)
		var took: int = Time.get_ticks_msec() - t0
		if took > CASE_TIMEOUT_MS:
			check(false, "%s: no outcome %d ms after start%s (hang)" % [tag, took, " and cancel" if cancelled else ""])
			terrain.queue_free()
			return ""
		if is_instance_valid(sim) and sim.is_running() and cancelled.is_empty():
			if c["cancel_after"] >= 0 and frames >= c["cancel_after"]:
				sim.cancel()
				cancelled = "cancel"
			elif took > PATIENCE_MS:
				sim.cancel()
				cancelled = "slow"
		await process_frame
		frames += 1
	var took_ms: int = Time.get_ticks_msec() - t0
	if took_ms > slowest[0]:
		slowest = [took_ms, tag]
	# A few more frames: nothing else may arrive.
	for k: int in range(3):
		await process_frame
	for a: Array in answers:
		check(a[0] == false, "%s: is_running() inside its own outcome signal" % tag)
	if ends.size() == 1 and ends[0][0] == "finished":
		check(answers.size() == 1 and answers[0][1], "%s: get_result() null inside finished" % tag)
	var what: String = ""
	if not check(ends.size() == 1, "%s: %d outcomes %s (want exactly one)" % [tag, ends.size(), ends]):
		what = "several"
	elif ends[0][0] == "finished":
		what = "finished"
		if is_instance_valid(sim):
			check(sim.get_result() != null, "%s: finished without a result" % tag)
		if c["apply_on_finish"]:
			check(terrain.data != null, "%s: finished but nothing applied" % tag)
		var data: TerrainData = terrain.data
		if is_instance_valid(sim) and sim.get_result() != null:
			data = sim.get_result()
		if data != null:
			var bad: String = _first_non_finite(data)
			check(bad.is_empty(), "%s: finished with %s" % [tag, bad])
	else:
		var message: String = ends[0][1]
		check(not message.strip_edges().is_empty(), "%s: failed with an empty message" % tag)
		if message == "cancelled":
			check(not cancelled.is_empty(), "%s: failed('cancelled') though nobody cancelled" % tag)
			what = "cancelled (%s)" % ("on purpose" if cancelled == "cancel" else "too slow")
		elif message.begins_with("recipe ") and stages[0] == 0:
			what = "refused: does not parse"
		elif message.begins_with("invalid value") and stages[0] == 0:
			what = "refused: invalid"
		elif stages[0] == 0:
			what = "failed before a stage"
		else:
			what = "failed while running"
		check(terrain.data == null, "%s: failed but data applied" % tag)
	if is_instance_valid(sim):
		check(not sim.is_running(), "%s: still running after its outcome" % tag)
	if c["wiring"] != 2 and not started:
		check(ends.size() == 1 and ends[0][0] == "failed", "%s: start() returned false without failed" % tag)
	var shown: String = ends[0][1] if not ends.is_empty() and ends[0].size() > 1 else (ends[0][0] if not ends.is_empty() else "")
	print("  case %s %s %s [%s] wiring %d threads %d%s: %s in %d ms — %s" % [
		tag, c["base"], c["size"], ", ".join(c["done_ops"]), c["wiring"], c["threads"],
		" cancel@%d" % c["cancel_after"] if c["cancel_after"] >= 0 else "", what, took_ms,
		shown.replace("\n", " ").left(160)])
	terrain.queue_free()
	await process_frame
	check(await wait_no_threads(3000), "%s: %d threads left after the case" % [tag, ErosionSimulator.live_thread_count()])
	return what


## Frees the terrain (and the simulator in it) mid-run: at most one outcome may have
## arrived, and no thread may be left.
func _free_mid_run(c: Dictionary, tag: String, terrain: TerrainWorld, ends: Array) -> String:
	terrain.queue_free()
	await process_frame
	await process_frame
	check(ends.size() <= 1, "%s: %d outcomes %s" % [tag, ends.size(), ends])
	check(await wait_no_threads(3000), "%s: %d threads left after freeing mid-run" % [tag, ErosionSimulator.live_thread_count()])
	print("  case %s %s %s [%s] wiring %d threads %d: freed after %d frames — %s" % [
		tag, c["base"], c["size"], ", ".join(c["done_ops"]), c["wiring"], c["threads"], c["free_after"],
		str(ends).left(160)])
	return "freed mid-run" if ends.is_empty() else "freed after its outcome"


## Waits until no worker or pool thread is alive (or `timeout_ms`); true if none is.
## "" when every float map of `data` (heights included) is finite, else which is not.
func _first_non_finite(data: TerrainData) -> String:
	var maps: Dictionary = {"heights": data.heights}
	if data.get_width() * data.get_depth() <= 100000:
		maps.merge(data.maps)
	for name: Variant in maps.keys():
		var img: Image = maps[name] as Image
		if img == null or img.get_format() != Image.FORMAT_RF:
			continue
		var values: PackedFloat32Array = img.get_data().to_float32_array()
		for k: int in range(values.size()):
			if not is_finite(values[k]):
				return "%s[%d] = %f" % [name, k, values[k]]
	return ""


# --- tests -------------------------------------------------------------------------------

## The base recipes load, shrink and, unmutated, finish: the mutations start from recipes
## that work, and the harness sees a finish.
func test_bases_load_and_finish() -> void:
	_load_bases()
	if not check(bases.size() >= 6, "base recipes found in %s and %s (%d)" % [recipes_dir, builtin_dir, bases.size()]):
		return
	var rng := RandomNumberGenerator.new()
	rng.seed = seed_base
	for b: Dictionary in bases:
		var text: String = _shrink(b, 33, 33, rng)
		if text.is_empty():
			continue
		var c: Dictionary = {
			"base": b["name"], "size": "33x33", "ron": text, "done_ops": PackedStringArray(["none"]),
			"wiring": 0, "threads": 1, "live_update": true, "apply_on_finish": true, "cancel_after": -1,
		}
		var what: String = await _run_case(c, "base " + b["name"])
		check(what == "finished", "%s shrunk to 33² finishes (%s)" % [b["name"], what])


func test_mutated_recipes_end_once() -> void:
	if bases.is_empty():
		check(false, "no base recipes")
		return
	var first: int = 0 if only < 0 else only
	var last: int = count if only < 0 else only + 1
	for i: int in range(first, last):
		var c: Dictionary = _make_case(i)
		if only >= 0:
			print("  recipe of case %d:\n%s" % [i, c["ron"]])
		var failures_before: int = current_failures.size()
		var what: String = await _run_case(c, str(i))
		if current_failures.size() > failures_before:
			print("  FAILED case %d, recipe: \"%s\"" % [i, (c["ron"] as String).c_escape()])
		if what.is_empty():
			return
		outcomes[i] = what
	check(outcomes.size() == last - first, "every case ran (%d of %d)" % [outcomes.size(), last - first])


## Nothing left behind: no worker or pool thread, no simulator still running.
func test_no_thread_left() -> void:
	var t0: int = Time.get_ticks_msec()
	while ErosionSimulator.live_thread_count() != 0 and Time.get_ticks_msec() - t0 < 5000:
		await process_frame
	check(ErosionSimulator.live_thread_count() == 0, "no worker or pool thread left (%d)" % ErosionSimulator.live_thread_count())
