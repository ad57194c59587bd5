//! The crust a point carries.

use serde::{Deserialize, Serialize};

/// The crust a point carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Crust {
    /// Dense, young, low: ocean floor.
    Oceanic,
    /// Light, old, high: continents.
    Continental,
}
