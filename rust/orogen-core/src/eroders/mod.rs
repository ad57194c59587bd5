//! Processes that change heights.

pub mod stream_power;
pub mod thermal;
