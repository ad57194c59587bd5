//! Orogen's Godot binding: thin classes over `orogen-core`. STUB: being written.

use godot::prelude::*;

struct OrogenExtension;

#[gdextension]
unsafe impl ExtensionLibrary for OrogenExtension {}

/// A terrain in the scene.
#[derive(GodotClass)]
#[class(init, base = Node3D, tool)]
pub struct TerrainWorld {
    base: Base<Node3D>,
}
