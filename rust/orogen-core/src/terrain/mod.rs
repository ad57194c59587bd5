//! Initial terrain: procedural noise and scalar sources (uplift, erodibility, rain).

pub mod noise;
pub mod scalar_source;
