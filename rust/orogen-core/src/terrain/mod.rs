//! Initial terrain: procedural noise and scalar sources (uplift, erodibility, rain).

pub mod faults;
pub mod noise;
pub mod scalar_source;
