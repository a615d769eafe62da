//! A WhatsApp multi-device server for tests, speaking enough of the real
//! protocol that real whatsapp-rust clients connect to it, link as
//! companions (QR code or pair code), log in, upload their Signal keys,
//! look each other up and exchange end-to-end encrypted messages, groups,
//! receipts, presence and media, with an offline queue redelivered until
//! acknowledged.
//!
//! Each account has a mock phone (device 0) the server plays: it scans QR
//! codes, takes pair codes, signs the companions' device identities and
//! unlinks them. Tests script what the real network does when it says no:
//! refused logins, stream errors, refused sends, dropped connections, slow
//! acknowledgements.
//!
//! The server never decrypts a message: the clients' Signal sessions are
//! theirs; it routes `<enc>` payloads as WhatsApp's servers do. It is a
//! test-support crate: the release binary never links it, and a client
//! accepts its certificate chain only in builds that enable the crate's
//! `danger-skip-cert-chain-verify` (this crate's dependents).

mod cert;
mod conn;
pub mod customer;
mod groups;
mod iq;
mod keys;
mod media;
mod mex;
mod noise;
mod pairing;
mod routing;
mod script;
mod server;
mod world;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::wacore_binary::builder::NodeBuilder;

pub use cert::test_chain;
pub use script::LoginFailure;
pub use server::Seen;
use server::{State, lock};
use world::Account;

/// The seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// A running wire server: its chat socket and its media host on 127.0.0.1.
/// Stops when dropped.
pub struct WireServer {
    state: Arc<State>,
    chat: SocketAddr,
    media: SocketAddr,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for WireServer {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl WireServer {
    /// Starts a server on free ports.
    pub async fn start() -> anyhow::Result<Self> {
        customer::print_client_warnings();
        let chat = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let media = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let (chat_addr, media_addr) = (chat.local_addr()?, media.local_addr()?);
        let state = Arc::new(State::new(media_addr.to_string()));
        let tasks = vec![
            tokio::spawn(server::serve(state.clone(), chat)),
            tokio::spawn(media::serve(state.clone(), media)),
        ];
        Ok(Self {
            state,
            chat: chat_addr,
            media: media_addr,
            tasks,
        })
    }

    /// The websocket URL clients connect to.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws/chat", self.chat)
    }

    /// The media host (`127.0.0.1:port`) media connections name; it speaks
    /// plain HTTP, so clients of the wire rewrite `https://` to `http://`
    /// for it alone.
    pub fn media_host(&self) -> String {
        self.media.to_string()
    }

    /// Creates an account: a phone number with its mock phone.
    pub fn account(&self, phone: &str, name: &str) {
        let identity = KeyPair::generate(&mut rand::rng());
        let mut world = self.state.world();
        let lid = format!(
            "{}",
            100_000_000_000u64 + world.accounts.len() as u64 * 7919 + 17
        );
        world.lids.insert(lid.clone(), phone.to_owned());
        world.accounts.insert(
            phone.to_owned(),
            Account {
                phone: phone.to_owned(),
                lid,
                identity,
                devices: BTreeMap::new(),
                next_device: 1,
                push_name: name.to_owned(),
                available: false,
                watchers: Default::default(),
                blocked: Default::default(),
            },
        );
    }

    /// The account's LID user part.
    pub fn lid(&self, phone: &str) -> Option<String> {
        self.state
            .world()
            .accounts
            .get(phone)
            .map(|a| a.lid.clone())
    }

    /// The phone of `phone` scans a QR code a companion shows: the
    /// companion is linked to that account.
    pub fn scan(&self, phone: &str, qr: &str) -> anyhow::Result<()> {
        let scanned = pairing::parse_qr(qr)?;
        let conn = lock(&self.state.pending)
            .iter()
            .find(|(_, p)| p.refs.contains(&scanned.pairing_ref))
            .map(|(id, p)| (*id, p.noise, p.keys.identity));
        let Some((conn, noise, identity)) = conn else {
            bail!("no companion waiting shows that QR code");
        };
        if noise != scanned.noise || identity != scanned.identity {
            bail!("the QR code's keys are not the waiting companion's");
        }
        iq::send_pair_success(&self.state, conn, phone, &scanned.adv_secret)
    }

    /// The user types the pair code a companion shows into the phone of
    /// `phone`: the phone answers the companion's hello.
    pub fn enter_code(&self, phone: &str, code: &str) -> anyhow::Result<()> {
        let identity = self.identity(phone)?;
        let mut pending = lock(&self.state.pending);
        let (conn, p) = pending
            .iter_mut()
            .find(|(_, p)| p.code.as_ref().is_some_and(|(ph, _)| ph == phone))
            .ok_or_else(|| anyhow!("no companion asked for a pair code for {phone}"))?;
        let id = self.state.world().id();
        let (_, exchange) = p.code.as_mut().expect("found above");
        let hello = exchange.primary_hello(code, &identity, &id)?;
        let conn_sender = p.conn.clone();
        let _ = conn;
        drop(pending);
        conn_sender.send(hello);
        Ok(())
    }

    fn identity(&self, phone: &str) -> anyhow::Result<KeyPair> {
        self.state
            .world()
            .accounts
            .get(phone)
            .map(|a| a.identity.clone())
            .ok_or_else(|| anyhow!("no account {phone}"))
    }

    /// The companion finished a pair-code exchange: the phone opens its
    /// bundle and links it.
    fn finish_code(state: &Arc<State>, conn: u64, bundle: &[u8]) -> anyhow::Result<()> {
        let (phone, adv) = {
            let pending = lock(&state.pending);
            let p = pending.get(&conn).context("the companion is gone")?;
            let (phone, exchange) = p.code.as_ref().context("no pair-code exchange")?;
            let identity = state
                .world()
                .accounts
                .get(phone)
                .map(|a| a.identity.clone())
                .context("no such account")?;
            let (adv, companion_identity) = exchange.finish(bundle, &identity)?;
            if companion_identity != p.keys.identity {
                bail!("the bundle names another companion");
            }
            (phone.clone(), adv)
        };
        iq::send_pair_success(state, conn, &phone, &adv)
    }

    /// Unlinks a device. From the phone (`from_phone`), a connected device
    /// is told at once (its stream ends, `device_removed`); either way its
    /// next login is refused with 401.
    fn unlink(state: &State, phone: &str, device: u16, from_phone: bool) {
        let conn = {
            let mut world = state.world();
            let Some(dev) = world
                .accounts
                .get_mut(phone)
                .and_then(|a| a.devices.get_mut(&device))
            else {
                return;
            };
            dev.removed = true;
            dev.owed.clear();
            if from_phone { dev.conn.take() } else { None }
        };
        if let Some(conn) = conn {
            conn.send(
                NodeBuilder::new("stream:error")
                    .children([NodeBuilder::new("conflict")
                        .attr("type", "device_removed")
                        .build()])
                    .build(),
            );
            conn.close();
        }
    }

    /// The phone of `phone` unlinks its device `device`.
    pub fn unlink_from_phone(&self, phone: &str, device: u16) {
        Self::unlink(&self.state, phone, device, true);
    }

    /// The devices linked to `phone` (removed ones included), and whether
    /// each is connected.
    pub fn devices(&self, phone: &str) -> Vec<(u16, bool, bool)> {
        self.state
            .world()
            .accounts
            .get(phone)
            .map(|a| {
                a.devices
                    .values()
                    .map(|d| {
                        (
                            d.id,
                            d.conn.as_ref().is_some_and(|c| !c.is_closed()),
                            d.removed,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How many stanzas a device has not acknowledged.
    pub fn owed(&self, phone: &str, device: u16) -> usize {
        self.state
            .world()
            .accounts
            .get(phone)
            .and_then(|a| a.devices.get(&device))
            .map_or(0, |d| d.owed.len())
    }

    /// Ends the stream of every connected device of `phone` with
    /// `<stream:error code="…">` (`code` 0: a `<conflict type="replaced">`
    /// instead), then closes it.
    pub fn stream_error(&self, phone: &str, code: u16) {
        for conn in self.connections(phone) {
            let node = if code == 0 {
                NodeBuilder::new("stream:error")
                    .children([NodeBuilder::new("conflict")
                        .attr("type", "replaced")
                        .build()])
                    .build()
            } else {
                NodeBuilder::new("stream:error")
                    .attr("code", code.to_string())
                    .build()
            };
            conn.send(node);
            conn.close();
        }
    }

    /// Drops every connection of `phone` without a word.
    pub fn drop_connections(&self, phone: &str) {
        for conn in self.connections(phone) {
            conn.close();
        }
    }

    fn connections(&self, phone: &str) -> Vec<conn::Sender> {
        self.state
            .world()
            .accounts
            .get(phone)
            .map(|a| a.devices.values().filter_map(|d| d.conn.clone()).collect())
            .unwrap_or_default()
    }

    /// Refuses the next login of `phone`.
    pub fn refuse_login_once(&self, phone: &str, failure: LoginFailure) {
        lock(&self.state.script).refuse_login_once(phone, failure);
    }

    /// Refuses every login of `phone` (`None`: no longer).
    pub fn refuse_logins(&self, phone: &str, failure: Option<LoginFailure>) {
        lock(&self.state.script).refuse_logins(phone, failure);
    }

    /// Refuses the next message `phone` sends with error `code` (463
    /// reach-out timelock, 479, 421…).
    pub fn refuse_send(&self, phone: &str, code: u16) {
        lock(&self.state.script).refuse_send(phone, code);
    }

    /// Puts a reach-out timelock on `phone` until `until` (Unix seconds;
    /// `None` lifts it): its messages to people it never exchanged one with
    /// are refused with error 463, and its timelock query answers active,
    /// with the end when `stated`.
    pub fn reach_out_timelock(&self, phone: &str, until: Option<u64>, stated: bool) {
        lock(&self.state.script).set_timelock(phone, until.map(|u| (u, stated)));
    }

    /// Refuses the requests of `phone`'s devices to be unlinked (a server
    /// error), so the device stays among the account's linked devices.
    pub fn refuse_unlink(&self, phone: &str) {
        lock(&self.state.script).set_refuse_unlink(phone, true);
    }

    /// Paces the offline drain of `phone`'s devices (`pace` between two
    /// stanzas), so a test can stop the gateway in the middle of one.
    pub fn pace_offline(&self, phone: &str, pace: Duration) {
        lock(&self.state.script).pace_offline(phone, pace);
    }

    /// Answers the app-state fetches of `phone`'s devices with IQ error
    /// `code` (`None`: answers them again).
    pub fn refuse_app_state(&self, phone: &str, code: Option<u16>) {
        lock(&self.state.script).set_app_state_error(phone, code);
    }

    /// Holds each acknowledgement of `phone`'s sends for `delay`.
    pub fn delay_acks(&self, phone: &str, delay: Duration) {
        lock(&self.state.script).delay_acks(phone, delay);
    }

    /// Everything seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        lock(&self.state.seen).clone()
    }

    /// How many connections the chat server has accepted (whether their
    /// handshake went through or not).
    pub fn accepted_connections(&self) -> u64 {
        // Numbered from 1.
        self.state
            .next_conn
            .load(std::sync::atomic::Ordering::Relaxed)
            - 1
    }

    /// How many of what was seen match.
    pub fn count(&self, f: impl Fn(&Seen) -> bool) -> usize {
        lock(&self.state.seen).iter().filter(|s| f(s)).count()
    }

    /// Waits until `f` holds of what was seen, or fails after `timeout`
    /// naming what was.
    pub async fn wait(&self, timeout: Duration, f: impl Fn(&[Seen]) -> bool) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.state.changed.notified();
            // A copy: `f` may ask the server more (its own lock included).
            let seen = lock(&self.state.seen).clone();
            if f(&seen) {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                bail!("not seen within {timeout:?}; seen: {:?}", self.seen());
            }
        }
    }

    /// The published keys of `phone`'s device (for tests of prekey upload).
    pub fn prekeys_left(&self, phone: &str, device: u16) -> usize {
        self.state
            .world()
            .accounts
            .get(phone)
            .and_then(|a| a.devices.get(&device))
            .map_or(0, |d| d.keys.one_time.len())
    }
}
