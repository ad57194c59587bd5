extends RefCounted
## Godot's built-in help (F1) for the extension's classes: the class reference that gdext's
## `register-docs` feature builds from the binding's `///` comments. Each class's page is
## opened as the help search opens it (`ScriptEditor.goto_help`) and its text is read: it must
## hold the class's description and a member's, and no member may show Godot's "There is
## currently no description" placeholder.

## Each class, and words its page must show: from the class's description, then from the
## descriptions of a property, a method and a signal where it has them.
const PAGES := {
	"TerrainWorld": [
		"it draws a TerrainData, collides with it and answers queries on it",
		"Level of detail: quads from the camera",
		"A painted map changed",
	],
	"ErosionSimulator": [
		"Runs a recipe on a worker thread",
		"Threads of this simulator's own rayon pool",
	],
	"TerrainRecipe": [
		"A terrain recipe (RON text) with editing helpers",
		"The recipe's RON text, in the format of orogen bake",
	],
	"TerrainData": [
		"A generated terrain: its heights, cell size and maps",
		"Terrain heights, metres",
	],
	"PlanetWorld": [
		"A tectonic planet: plates drift, collide, subduct and rift",
		"Points on the sphere",
	],
}
const NO_DESCRIPTION := "There is currently no description"


func run(t: Node, _dock: Control, _terrain: Node3D) -> void:
	var script_editor := EditorInterface.get_script_editor()
	for class_id: String in PAGES:
		script_editor.goto_help("class_name:" + class_id)
		var words: Array = PAGES[class_id]
		var found := [""]
		var shown: bool = await t._wait_for(func() -> bool:
			found[0] = _page_text(script_editor, class_id)
			return String(found[0]).contains(String(words[0])))
		var text: String = found[0]
		t._check(shown, "F1 opens %s's help page with its description (%d characters)" % [class_id, text.length()])
		if not shown:
			printerr("    the page read: %s" % text.left(400).replace("\n", " | "))
			continue
		var missing: Array[String] = []
		for w: Variant in words:
			if not text.contains(String(w)):
				missing.append(String(w))
		t._check(missing.is_empty(), "%s's help page describes its members%s" % [class_id,
				"" if missing.is_empty() else " (missing: %s)" % ", ".join(missing)])
		var undocumented := _undocumented(text)
		t._check(undocumented.is_empty(), "every member on %s's help page has a description%s" % [class_id,
				"" if undocumented.is_empty() else " (not: %s)" % ", ".join(undocumented)])
	# The help opened the script editor; the rest of the self-test works in the 3D view.
	EditorInterface.set_main_screen_editor("3D")
	await t._frames(1)


## The text of the help page the script editor shows for `class_id`, or "" if it has none.
func _page_text(script_editor: Node, class_id: String) -> String:
	for help: Node in script_editor.find_children("*", "EditorHelp", true, false):
		if help.name != class_id:
			continue
		for label: Node in help.find_children("*", "RichTextLabel", true, false):
			var text := (label as RichTextLabel).get_parsed_text()
			if text.length() > 0:
				return text
	return ""


## The lines of `text` just before each placeholder for a missing description: the member
## it belongs to.
func _undocumented(text: String) -> Array[String]:
	var out: Array[String] = []
	var lines := text.split("\n")
	for i: int in lines.size():
		if lines[i].contains(NO_DESCRIPTION):
			var j := i - 1
			while j > 0 and lines[j].strip_edges() == "":
				j -= 1
			out.append(lines[maxi(j, 0)].strip_edges().left(60))
	return out
