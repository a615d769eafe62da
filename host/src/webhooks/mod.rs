//! Webhooks: the registry, signing, delivery with retries, the dead-letter
//! queue and per-URL suspension.

pub mod config;
