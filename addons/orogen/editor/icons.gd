@tool
extends RefCounted
## Orogen's editor icons, rasterised from the SVGs in icons/ at the editor's scale.
##
## The SVG text is read directly (FileAccess) rather than through the import system, so the
## plugin has its icons even on the very first start of a project, before anything is imported.
## The same SVGs serve as class icons for TerrainWorld, ErosionSimulator, TerrainRecipe and
## TerrainData through the [icons] section of orogen.gdextension.

const DIR := "res://addons/orogen/editor/icons/"
const OROGEN := "orogen"
const TERRAIN_WORLD := "terrain_world"
const EROSION_SIMULATOR := "erosion_simulator"
const TERRAIN_RECIPE := "terrain_recipe"
const TERRAIN_DATA := "terrain_data"


## The icon called `icon_name` (a constant above) as a texture, or null if it cannot be read.
static func texture(icon_name: String) -> Texture2D:
	var svg := FileAccess.get_file_as_string(DIR + icon_name + ".svg")
	if svg == "":
		return null
	var image := Image.new()
	var scale := EditorInterface.get_editor_scale() if Engine.is_editor_hint() else 1.0
	if image.load_svg_from_string(svg, scale) != OK:
		return null
	return ImageTexture.create_from_image(image)
