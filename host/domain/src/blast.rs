//! Blasts as records: a job and its recipients with their states and pure
//! transitions (`model`), and the validation and dedup of a create request
//! (`plan`). The worker that sends them lives in the runtime.

pub mod model;
pub mod plan;
