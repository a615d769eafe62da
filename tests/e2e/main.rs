//! End-to-end tests: each starts a real gateway on 127.0.0.1:0 with a
//! temporary data directory and talks to it over HTTP.

mod auth;
mod errors;
mod messaging;
mod persistence;
mod send_kinds;
mod sessions;
