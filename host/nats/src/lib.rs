//! The NATS JetStream broker: Switchboard's first step past one process.
//!
//! Optional and off by default (`--nats-url`). When configured:
//! - **events out**: every envelope the event bus records owes one delivery
//!   to the events stream, stored in the durable outbox with the event
//!   (like a webhook's), published in sequence order with `Nats-Msg-Id` set
//!   to the delivery's stable id, so a republish after a crash is one
//!   message in the stream; while NATS is unreachable, events wait in the
//!   outbox (bounded like a webhook's backlog) and drain in order when it
//!   returns ([`publisher`]);
//! - **sends in**: a work-queue stream of send commands, read by a durable
//!   pull consumer and sent through the HTTP API's own send path, each
//!   answered with one result ([`commands`]).
//!
//! This crate sits above the API crate because the send queue sends through
//! the API's path (same validation, errors, scheduled sends); the API sees
//! the broker only through its [`Broker`] trait.

pub mod commands;
pub mod config;
mod connection;
pub mod counters;
pub mod publisher;
pub mod streams;
pub mod subjects;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_nats::jetstream;
use switchboard_api::broker::Broker;
use switchboard_domain::broker::{BrokerStatus, BrokerStream};
use switchboard_runtime::events::OutboxLimits;
use switchboard_runtime::store::Store;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use config::{NatsConfig, Storage};
use connection::Link;
pub use counters::NatsCounters;
use streams::Role;
use subjects::Subjects;

/// The broker; cheap to clone.
#[derive(Clone)]
pub struct Nats {
    inner: Arc<Inner>,
}

struct Inner {
    config: NatsConfig,
    subjects: Subjects,
    client: async_nats::Client,
    js: jetstream::Context,
    store: Store,
    link: Arc<Link>,
    lane: Mutex<publisher::Lane>,
    /// Wakes the publisher: new events, or the streams became ready.
    wake: Notify,
    streams: Mutex<Vec<BrokerStream>>,
    /// Events the outbox may hold for the stream before the oldest are
    /// dead-lettered, and the dead-letter capacity (the webhooks' own).
    limits: OutboxLimits,
    events_ready: AtomicBool,
    send_ready: AtomicBool,
    /// One stream setup at a time.
    setup: tokio::sync::Mutex<()>,
    counters: NatsCounters,
    cancel: CancellationToken,
    tasks: TaskTracker,
}

impl Nats {
    /// Starts the client (it connects in the background), takes over the
    /// events the outbox still owes the stream, and starts publishing;
    /// runs until `cancel`. Fails only on a configuration it cannot use (an
    /// unreadable credentials file, a malformed server address). The
    /// outbox keeps the webhooks' `limits` for the stream.
    pub async fn start(
        config: NatsConfig,
        limits: OutboxLimits,
        store: Store,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> anyhow::Result<Nats> {
        let counters = NatsCounters::default();
        let link = Arc::new(Link::new(counters.connected.clone()));
        let client = connection::connect(&config, link.clone()).await?;
        let js = jetstream::ContextBuilder::new()
            .timeout(config.ack_timeout)
            .build(client.clone());
        let nats = Nats {
            inner: Arc::new(Inner {
                subjects: Subjects::new(&config.prefix),
                config,
                client,
                js,
                store,
                link,
                lane: Mutex::new(publisher::Lane::default()),
                wake: Notify::new(),
                streams: Mutex::new(Vec::new()),
                limits,
                events_ready: AtomicBool::new(false),
                send_ready: AtomicBool::new(false),
                setup: tokio::sync::Mutex::new(()),
                counters,
                cancel,
                tasks,
            }),
        };
        nats.resume()?;
        let publisher = nats.clone();
        nats.inner
            .tasks
            .spawn(async move { publisher.publish_loop().await });
        Ok(nats)
    }

    /// The broker's counters (registered by the metrics module).
    pub fn counters(&self) -> &NatsCounters {
        &self.inner.counters
    }

    fn connected(&self) -> bool {
        self.inner.client.connection_state() == async_nats::connection::State::Connected
    }

    /// Sleeps `d`, or less if the gateway stops.
    pub(crate) async fn pause(&self, d: std::time::Duration) {
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = self.inner.cancel.cancelled() => {}
        }
    }

    /// Sets up both streams once NATS answers; until then (or after a stream
    /// vanished) the publisher and the consumer wait. Safe to call again.
    async fn setup(&self) {
        let _one = self.inner.setup.lock().await;
        if self.inner.events_ready.load(Ordering::SeqCst)
            && self.inner.send_ready.load(Ordering::SeqCst)
        {
            return;
        }
        let mut reports = Vec::new();
        for (role, ready) in [
            (Role::Events, &self.inner.events_ready),
            (Role::Send, &self.inner.send_ready),
        ] {
            match streams::ensure(&self.inner.js, &self.inner.config, role).await {
                Ok(report) => {
                    ready.store(true, Ordering::SeqCst);
                    self.inner.link.clear_error();
                    reports.push(report);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "NATS stream setup failed; trying again");
                    self.inner.link.set_error(e.clone());
                    let want = streams::wanted(&self.inner.config, role);
                    reports.push(BrokerStream {
                        name: want.name,
                        role: match role {
                            Role::Events => "events".into(),
                            Role::Send => "send".into(),
                        },
                        subjects: want.subjects,
                        setup: "unavailable".into(),
                        drift: Vec::new(),
                    });
                }
            }
        }
        *self.inner.streams.lock().unwrap_or_else(|p| p.into_inner()) = reports;
        self.inner.wake.notify_one();
    }
}

impl Broker for Nats {
    fn status(&self) -> BrokerStatus {
        let connected = self.connected();
        BrokerStatus {
            configured: true,
            connected,
            servers: self
                .inner
                .config
                .servers
                .iter()
                .map(|s| without_credentials(s))
                .collect(),
            last_error: self.inner.link.last_error(),
            streams: self
                .inner
                .streams
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            events: self.inner.counters.events(),
            commands: self.inner.counters.commands(),
        }
    }

    fn ready(&self) -> bool {
        self.connected()
            && self.inner.events_ready.load(Ordering::SeqCst)
            && self.inner.send_ready.load(Ordering::SeqCst)
    }
}

/// A server URL without the user and password it may carry.
fn without_credentials(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}{}", &url[..scheme + 3], &url[at + 1..])
        }
        (None, Some(at)) => url[at + 1..].to_owned(),
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::without_credentials;

    #[test]
    fn a_server_url_is_shown_without_its_credentials() {
        assert_eq!(
            without_credentials("nats://gw:s3cret@n1:4222"),
            "nats://n1:4222"
        );
        assert_eq!(without_credentials("tok@n2:4222"), "n2:4222");
        assert_eq!(without_credentials("tls://n3:4222"), "tls://n3:4222");
    }
}
