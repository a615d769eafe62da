//! The outbound guard: every request the gateway makes on someone else's
//! behalf (webhook deliveries, media fetched by URL for a send, inbound
//! media downloads, plugin HTTP) connects through this crate, so one rule
//! holds for all of them:
//!
//! - a host name is resolved once, every address it answers is checked
//!   against the public-address rule ([`switchboard_domain::ip_scope`]),
//!   and the connection goes only to the addresses that passed (pinned: a
//!   DNS answer that changes between a check and the connection cannot
//!   turn the request inward); an IP literal is checked before connecting;
//! - no redirect is followed and no proxy is taken from the environment;
//! - time and size are bounded by the caller's limits;
//! - a request that reached nothing fails with one wording, so a caller
//!   cannot tell a closed port from a filtered one or a timeout.
//!
//! An operator opens private addresses on purpose, per purpose, with the
//! knob a [`Guard`] names in its refusals (`WEBHOOK_ALLOW_PRIVATE`,
//! `MEDIA_URL_ALLOW_PRIVATE`, a plugin grant's `allow_private`).
//!
//! `hosts`: test-only fixed DNS answers; `guard`: the rule and its
//! refusals; `connector`: the pinned, guarded connector a hyper client
//! connects through; `fetch`: the bounded GET of a media URL;
//! `media_urls`: the knobs of media fetched by URL; `proxy`: a connection
//! through a session's proxy (the operator's, so its own address is not
//! held to the rule).

pub mod connector;
pub mod fetch;
pub mod guard;
pub mod hosts;
pub mod media_urls;
pub mod proxy;

pub use connector::{Connector, connector};
pub use fetch::{FetchError, Fetcher};
pub use guard::{Blocked, Guard, Refusal};
pub use hosts::StaticHosts;
pub use media_urls::MediaUrlConfig;
pub use proxy::ProxyError;
pub use switchboard_domain::ip_scope::is_public;
