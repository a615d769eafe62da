//! The server: the listener, and the driver of each connection from its
//! handshake to its end: a new companion waits to be paired, a linked one
//! logs in (or is refused as the script says), then every stanza it sends
//! is answered ([`crate::iq`]) or routed ([`crate::routing`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::TcpListener;
use tokio::sync::Notify;
use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::Node;

use crate::cert::ServerIdentity;
use crate::conn::{self, Accepted, Sender};
use crate::pairing::CodeExchange;
use crate::script::Script;
use crate::world::{Device, Keys, World};

/// A companion that connected unregistered and waits to be linked.
pub struct Pending {
    /// Its connection.
    pub conn: Sender,
    /// The refs it was handed for its QR codes.
    pub refs: Vec<String>,
    /// Its Noise static key.
    pub noise: [u8; 32],
    /// The keys it registered with.
    pub keys: Keys,
    /// A pair-code exchange it started, and the phone it named.
    pub code: Option<(String, CodeExchange)>,
    /// The pair-success sent (phone, device, IQ id), waiting for its answer.
    pub linking: Option<(String, u16, String)>,
}

/// What happened, for tests to wait on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A device logged in.
    LoggedIn {
        /// The account.
        phone: String,
        /// The device number.
        device: u16,
    },
    /// A login was refused.
    Refused {
        /// The account.
        phone: String,
        /// The `<failure>` reason.
        reason: u16,
    },
    /// A device was linked.
    Linked {
        /// The account.
        phone: String,
        /// The new device's number.
        device: u16,
    },
    /// A device sent a message stanza.
    Sent {
        /// The sending account.
        phone: String,
        /// The message id.
        id: String,
        /// The error code it was refused with; none: accepted.
        error: Option<u16>,
        /// The native flow its `<biz>` child announces (an interactive
        /// message), if it has one.
        biz: Option<String>,
    },
    /// A device acknowledged a stanza it was owed.
    Acked {
        /// The account.
        phone: String,
        /// The device number.
        device: u16,
        /// The stanza id.
        id: String,
    },
    /// A device's connection ended.
    Closed {
        /// The account.
        phone: String,
        /// The device number.
        device: u16,
    },
    /// A device unlinked itself.
    LoggedOut {
        /// The account.
        phone: String,
        /// The device number.
        device: u16,
    },
    /// A device asked for an app-state collection.
    AppStateAsked {
        /// The account.
        phone: String,
        /// The collection.
        collection: String,
        /// Whether it asked for a snapshot (else the patches after a version).
        snapshot: bool,
    },
    /// A device asked for the server's AB props.
    PropsAsked {
        /// The account.
        phone: String,
    },
}

/// The shared state of a running server.
pub struct State {
    /// The server's Noise identity.
    pub identity: Arc<ServerIdentity>,
    /// Accounts, devices, groups, media.
    pub world: Mutex<World>,
    /// Companions waiting to be linked, by connection number.
    pub pending: Mutex<HashMap<u64, Pending>>,
    /// Failures to inject.
    pub script: Mutex<Script>,
    /// What happened, in order.
    pub seen: Mutex<Vec<Seen>>,
    /// Woken when something is seen.
    pub changed: Notify,
    /// The media host's origin (`http://127.0.0.1:port`), and the host name
    /// media connections name.
    pub media_host: String,
    /// The number the next accepted connection gets (from 1).
    pub(crate) next_conn: AtomicU64,
}

impl State {
    /// A fresh state.
    pub fn new(media_host: String) -> Self {
        Self {
            identity: Arc::new(ServerIdentity::generate()),
            world: Mutex::new(World::default()),
            pending: Mutex::new(HashMap::new()),
            script: Mutex::new(Script::default()),
            seen: Mutex::new(Vec::new()),
            changed: Notify::new(),
            media_host,
            next_conn: AtomicU64::new(1),
        }
    }

    /// Records what happened.
    pub fn saw(&self, seen: Seen) {
        if std::env::var_os("WIRE_TRACE").is_some() {
            log::warn!("wire saw {seen:?}");
        }
        lock(&self.seen).push(seen);
        self.changed.notify_waiters();
    }

    /// The world, locked.
    pub fn world(&self) -> std::sync::MutexGuard<'_, World> {
        lock(&self.world)
    }
}

/// Locks a mutex, through poisoning (a panicked test thread must not wedge
/// the server for the others).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Accepts connections until the listener fails.
pub async fn serve(state: Arc<State>, listener: TcpListener) {
    while let Ok((tcp, _)) = listener.accept().await {
        let state = state.clone();
        tokio::spawn(async move {
            let id = state.next_conn.fetch_add(1, Ordering::Relaxed);
            match conn::accept(tcp, state.identity.clone(), id).await {
                Ok(accepted) => drive(state, accepted).await,
                Err(e) => log::warn!("wire: handshake failed: {e:#}"),
            }
        });
    }
}

async fn drive(state: Arc<State>, accepted: Accepted) {
    let Accepted {
        payload,
        client_static,
        sender,
        mut nodes,
    } = accepted;
    if let Some(reg) = payload.device_pairing_data.as_option() {
        let Some(keys) = crate::iq::registration_keys(reg) else {
            sender.close();
            return;
        };
        let refs: Vec<String> = (0..6)
            .map(|i| format!("wire-ref-{}-{i}", sender.id))
            .collect();
        let id = state.world().id();
        sender.send(
            NodeBuilder::new("iq")
                .attr("from", "s.whatsapp.net")
                .attr("id", id)
                .attr("type", "set")
                .attr("xmlns", "md")
                .children([NodeBuilder::new("pair-device")
                    .children(
                        refs.iter()
                            .map(|r| NodeBuilder::new("ref").bytes(r.as_bytes().to_vec()).build()),
                    )
                    .build()])
                .build(),
        );
        lock(&state.pending).insert(
            sender.id,
            Pending {
                conn: sender.clone(),
                refs,
                noise: client_static,
                keys,
                code: None,
                linking: None,
            },
        );
        while let Some(node) = nodes.recv().await {
            crate::iq::pairing_stanza(&state, &sender, node);
        }
        lock(&state.pending).remove(&sender.id);
        return;
    }
    let (Some(user), Some(device)) = (payload.username, payload.device) else {
        sender.close();
        return;
    };
    let phone = user.to_string();
    let device = device as u16;
    let Some(owed) = login(&state, &sender, &phone, device, &client_static) else {
        return;
    };
    tokio::spawn(drain(state.clone(), sender.clone(), phone.clone(), owed));
    while let Some(node) = nodes.recv().await {
        crate::routing::stanza(&state, &sender, &phone, device, node).await;
    }
    {
        let mut world = state.world();
        if let Some(dev) = world
            .accounts
            .get_mut(&phone)
            .and_then(|a| a.devices.get_mut(&device))
            && dev.conn.as_ref().is_some_and(|c| c.id == sender.id)
        {
            dev.conn = None;
        }
    }
    state.saw(Seen::Closed { phone, device });
}

/// Sends what a device was owed at its login (marked offline), paced as
/// scripted, then the end of the offline queue.
async fn drain(state: Arc<State>, sender: Sender, phone: String, owed: VecDeque<Node>) {
    let pace = lock(&state.script).offline_pace(&phone);
    let count = owed.len();
    for node in owed {
        if pace > std::time::Duration::ZERO {
            tokio::time::sleep(pace).await;
        }
        if !sender.send(node) {
            return;
        }
    }
    sender.send(
        NodeBuilder::new("ib")
            .children([NodeBuilder::new("offline")
                .attr("count", count.to_string())
                .build()])
            .build(),
    );
}

/// Answers a login: `<failure>` when the script or the device's state says
/// so, else `<success>`; gives what the device is owed, for [`drain`]. A
/// second connection of the same device replaces the first.
fn login(
    state: &State,
    sender: &Sender,
    phone: &str,
    device: u16,
    noise: &[u8; 32],
) -> Option<VecDeque<Node>> {
    let scripted = lock(&state.script).login_failure(phone);
    let mut world = state.world();
    let known = world
        .accounts
        .get(phone)
        .and_then(|a| a.devices.get(&device))
        .map(|d: &Device| !d.removed && d.noise == *noise);
    let refusal = match (scripted, known) {
        (Some(f), _) => Some(f),
        (None, Some(true)) => None,
        (None, _) => Some(crate::script::LoginFailure::reason(401)),
    };
    if let Some(f) = refusal {
        drop(world);
        sender.send(f.node());
        sender.close();
        state.saw(Seen::Refused {
            phone: phone.to_owned(),
            reason: f.reason,
        });
        return None;
    }
    let lid = world.accounts[phone].lid.clone();
    let dev = world
        .accounts
        .get_mut(phone)
        .and_then(|a| a.devices.get_mut(&device))
        .expect("checked above");
    if let Some(old) = dev.conn.replace(sender.clone()) {
        old.send(
            NodeBuilder::new("stream:error")
                .children([NodeBuilder::new("conflict")
                    .attr("type", "replaced")
                    .build()])
                .build(),
        );
        old.close();
    }
    sender.send(
        NodeBuilder::new("success")
            .attr("t", crate::now().to_string())
            .attr("lid", format!("{lid}:{device}@lid"))
            .attr("props", "1")
            .attr("location", "wire")
            .build(),
    );
    let owed: VecDeque<Node> = dev.owed.iter().map(|o| offline(&o.node)).collect();
    drop(world);
    state.saw(Seen::LoggedIn {
        phone: phone.to_owned(),
        device,
    });
    Some(owed)
}

/// A stanza redelivered after a login carries `offline`.
fn offline(node: &Node) -> Node {
    let mut node = node.clone();
    if !node.attrs.contains_key("offline") {
        node.attrs.insert("offline", "1");
    }
    node
}
