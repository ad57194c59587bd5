@tool
extends RefCounted
## Widget builders the Orogen dock's parts share: section headers, labels, spin boxes and
## buttons with the editor theme's fonts and icons.


static func section(text: String) -> Control:
	var box := VBoxContainer.new()
	box.add_theme_constant_override(&"separation", 2)
	var title := Label.new()
	title.text = text
	title.add_theme_font_override(&"font", EditorInterface.get_editor_theme().get_font(&"bold", &"EditorFonts"))
	box.add_child(title)
	box.add_child(HSeparator.new())
	return box


static func label(text: String, tip: String) -> Label:
	var l := Label.new()
	l.text = text
	l.tooltip_text = tip
	l.mouse_filter = Control.MOUSE_FILTER_PASS
	return l


static func int_spin(lo: float, hi: float, tip: String) -> SpinBox:
	var spin := SpinBox.new()
	spin.min_value = lo
	spin.max_value = hi
	spin.step = 1.0
	spin.rounded = true
	spin.tooltip_text = tip
	spin.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	spin.select_all_on_focus = true
	return spin


static func button(text: String, icon: StringName, tip: String, pressed: Callable) -> Button:
	var b := Button.new()
	b.text = text
	b.icon = EditorInterface.get_editor_theme().get_icon(icon, &"EditorIcons")
	b.tooltip_text = tip
	b.pressed.connect(pressed)
	return b


static func icon_button(icon: StringName, tip: String, pressed: Callable) -> Button:
	var b := Button.new()
	b.icon = EditorInterface.get_editor_theme().get_icon(icon, &"EditorIcons")
	b.tooltip_text = tip
	b.flat = true
	b.pressed.connect(pressed)
	return b
