//! Answers to the IQs a client sends: the ones of a companion waiting to be
//! linked (pings, the pair-code stages, its answer to `pair-success`) and
//! the ones of a logged-in device (keys, device lists, app state, media
//! connections, privacy, props, logout…). An IQ the server has no special
//! answer for gets an empty result, as the real server gives most setters.

use std::sync::Arc;

use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::{Node, NodeContent};
use whatsapp_rust::waproto::whatsapp as wa;

use crate::conn::Sender;
use crate::pairing::{self, CodeExchange};
use crate::server::{Seen, State, lock};
use crate::world::{Device, Keys};

/// How long after a companion's answer to `pair-success` the server
/// restarts its stream.
const LINK_RESTART_AFTER: std::time::Duration = std::time::Duration::from_millis(250);

/// The keys a registering companion sent in its `ClientPayload`.
pub fn registration_keys(reg: &wa::client_payload::DevicePairingRegistrationData) -> Option<Keys> {
    let regid = reg.e_regid.as_deref()?;
    let ident: [u8; 32] = reg.e_ident.as_deref()?.try_into().ok()?;
    let skey_id = reg.e_skey_id.as_deref()?;
    let skey: [u8; 32] = reg.e_skey_val.as_deref()?.try_into().ok()?;
    let sig = reg.e_skey_sig.clone()?;
    Some(Keys {
        registration_id: be(regid),
        identity: ident,
        signed: (be(skey_id), skey, sig),
        one_time: Default::default(),
    })
}

/// A big-endian number of up to four bytes.
pub fn be(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b))
}

/// The attribute `key` of `node`, as a string.
pub fn attr(node: &Node, key: &str) -> Option<String> {
    node.attrs.get(key).map(|v| v.as_str().into_owned())
}

/// A child's byte content.
pub fn child_bytes<'a>(node: &'a Node, tag: &str) -> Option<&'a [u8]> {
    match &node.get_optional_child(tag)?.content {
        Some(NodeContent::Bytes(b)) => Some(b),
        Some(NodeContent::String(s)) => Some(s.as_bytes()),
        _ => None,
    }
}

/// An empty result for the IQ `id`.
pub fn result(id: &str) -> NodeBuilder {
    NodeBuilder::new("iq")
        .attr("from", "s.whatsapp.net")
        .attr("id", id.to_owned())
        .attr("type", "result")
}

/// An error answer for the IQ `id`.
pub fn error(id: &str, code: u16, text: &str) -> Node {
    NodeBuilder::new("iq")
        .attr("from", "s.whatsapp.net")
        .attr("id", id.to_owned())
        .attr("type", "error")
        .children([NodeBuilder::new("error")
            .attr("code", code.to_string())
            .attr("text", text.to_owned())
            .build()])
        .build()
}

/// What a companion waiting to be linked sends.
pub fn pairing_stanza(state: &Arc<State>, sender: &Sender, node: Node) {
    if node.tag != "iq" {
        return;
    }
    let id = attr(&node, "id").unwrap_or_default();
    let kind = attr(&node, "type").unwrap_or_default();
    if kind == "result" || kind == "error" {
        if node.get_optional_child("pair-device-sign").is_some() || kind == "error" {
            linked(state, sender, &id, kind == "result");
        }
        return;
    }
    if let Some(reg) = node.get_optional_child("link_code_companion_reg") {
        let stage = attr(reg, "stage").unwrap_or_default();
        match stage.as_str() {
            "companion_hello" => {
                let phone = attr(reg, "jid")
                    .map(|j| j.split('@').next().unwrap_or_default().to_owned())
                    .unwrap_or_default();
                let wrapped = child_bytes(reg, "link_code_pairing_wrapped_companion_ephemeral_pub")
                    .unwrap_or_default()
                    .to_vec();
                let pairing_ref = format!("wire-code-ref-{}", sender.id).into_bytes();
                if let Some(p) = lock(&state.pending).get_mut(&sender.id) {
                    p.code = Some((
                        phone,
                        CodeExchange {
                            pairing_ref: pairing_ref.clone(),
                            wrapped_companion: wrapped,
                            primary_eph: None,
                            code: None,
                        },
                    ));
                }
                sender.send(
                    result(&id)
                        .children([NodeBuilder::new("link_code_companion_reg")
                            .children([NodeBuilder::new("link_code_pairing_ref")
                                .bytes(pairing_ref)
                                .build()])
                            .build()])
                        .build(),
                );
            }
            "companion_finish" => {
                let bundle = child_bytes(reg, "link_code_pairing_wrapped_key_bundle")
                    .unwrap_or_default()
                    .to_vec();
                sender.send(result(&id).build());
                if let Err(e) = crate::WireServer::finish_code(state, sender.id, &bundle) {
                    log::warn!("wire: pair code: {e:#}");
                }
            }
            _ => {
                sender.send(result(&id).build());
            }
        }
        return;
    }
    sender.send(ping_or_empty(&node, &id));
}

/// A privacy IQ's answer: a trusted-contact token for each one asked to
/// be issued (`<tokens>`, WhatsApp Web's issue), the (empty) privacy
/// settings otherwise.
fn privacy(node: &Node, id: &str) -> Node {
    let Some(NodeContent::Nodes(children)) = &node.content else {
        return result(id)
            .children([NodeBuilder::new("privacy").build()])
            .build();
    };
    let Some(asked) = children.iter().find(|c| c.tag == "tokens") else {
        return result(id)
            .children([NodeBuilder::new("privacy").build()])
            .build();
    };
    let issued: Vec<Node> = match &asked.content {
        Some(NodeContent::Nodes(tokens)) => tokens
            .iter()
            .filter_map(|t| {
                let jid = attr(t, "jid")?;
                let token = format!("wire-token:{jid}").into_bytes();
                Some(
                    NodeBuilder::new("token")
                        .attr("jid", jid)
                        .attr("t", crate::now().to_string())
                        .attr("type", "trusted_contact")
                        .bytes(token)
                        .build(),
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    result(id)
        .children([NodeBuilder::new("tokens").children(issued).build()])
        .build()
}

/// A ping's answer (with the server's clock) or an empty result.
fn ping_or_empty(node: &Node, id: &str) -> Node {
    let b = result(id);
    if attr(node, "xmlns").as_deref() == Some("w:p") {
        b.attr("t", crate::now().to_string()).build()
    } else {
        b.build()
    }
}

/// The companion answered `pair-success`: it is linked (the device was
/// added when the phone scanned), so the server restarts its stream and
/// it logs in.
fn linked(state: &Arc<State>, sender: &Sender, id: &str, ok: bool) {
    let linking = lock(&state.pending)
        .get_mut(&sender.id)
        .and_then(|p| p.linking.take());
    let Some((phone, device, expected)) = linking else {
        return;
    };
    if expected != id {
        return;
    }
    if !ok {
        let mut world = state.world();
        if let Some(a) = world.accounts.get_mut(&phone) {
            a.devices.remove(&device);
        }
        return;
    }
    state.saw(Seen::Linked { phone, device });
    // WhatsApp restarts the stream a network round trip after the answer;
    // at once, on loopback, the restart would overtake the client's own
    // bookkeeping of the pairing, which no real link does.
    let sender = sender.clone();
    tokio::spawn(async move {
        tokio::time::sleep(LINK_RESTART_AFTER).await;
        sender.send(NodeBuilder::new("stream:error").attr("code", "515").build());
        sender.close();
    });
}

/// Adds a linked device to an account (at the phone's scan or code).
pub fn add_device(
    state: &State,
    phone: &str,
    noise: [u8; 32],
    keys: Keys,
) -> Option<(u16, String)> {
    let mut world = state.world();
    let account = world.accounts.get_mut(phone)?;
    let device = account.next_device;
    account.next_device += 1;
    account.devices.insert(
        device,
        Device {
            id: device,
            noise,
            keys,
            owed: Default::default(),
            conn: None,
            removed: false,
        },
    );
    let lid = account.lid.clone();
    Some((device, lid))
}

/// Sends `pair-success` to a waiting companion.
pub fn send_pair_success(
    state: &State,
    conn: u64,
    phone: &str,
    adv_secret: &[u8; 32],
) -> anyhow::Result<()> {
    let (sender, noise, keys) = {
        let pending = lock(&state.pending);
        let p = pending
            .get(&conn)
            .ok_or_else(|| anyhow::anyhow!("the companion is no longer waiting"))?;
        (p.conn.clone(), p.noise, p.keys.clone())
    };
    let identity_key = keys.identity;
    let (device, lid) = add_device(state, phone, noise, keys)
        .ok_or_else(|| anyhow::anyhow!("no account {phone} on the wire server"))?;
    let (identity, name, id) = {
        let mut world = state.world();
        let id = world.id();
        let account = &world.accounts[phone];
        (
            pairing::device_identity(
                &account.identity,
                &identity_key,
                adv_secret,
                u32::from(device),
            )?,
            account.push_name.clone(),
            id,
        )
    };
    if let Some(p) = lock(&state.pending).get_mut(&conn) {
        p.linking = Some((phone.to_owned(), device, id.clone()));
    }
    sender.send(pairing::pair_success(
        &id,
        identity,
        &format!("{phone}:{device}@s.whatsapp.net"),
        &format!("{lid}:{device}@lid"),
        &name,
    ));
    Ok(())
}

/// The answer to an IQ of a logged-in device, or `None` when the IQ is
/// answered elsewhere (or not at all).
pub fn answer(state: &State, phone: &str, device: u16, node: &Node) -> Option<Node> {
    let id = attr(node, "id")?;
    let kind = attr(node, "type").unwrap_or_default();
    if kind == "result" || kind == "error" {
        return None;
    }
    let xmlns = attr(node, "xmlns").unwrap_or_default();
    Some(match xmlns.as_str() {
        "w:p" => ping_or_empty(node, &id),
        "encrypt" => crate::keys::answer(state, phone, device, node, &id),
        "usync" => crate::keys::usync(state, node, &id),
        "w:sync:app:state" => {
            if let Some(code) = lock(&state.script).app_state_error(phone) {
                return Some(error(&id, code, "internal-server-error"));
            }
            app_state(state, phone, node, &id)
        }
        "abt" => {
            state.saw(Seen::PropsAsked {
                phone: phone.to_owned(),
            });
            result(&id)
                .children([NodeBuilder::new("props").attr("protocol", "1").build()])
                .build()
        }
        "privacy" => privacy(node, &id),
        "blocklist" => blocklist(state, phone, node, &id),
        "w:m" => media_conn(state, &id),
        "md" => {
            let remove = node.get_optional_child("remove-companion-device");
            if remove.is_some() && lock(&state.script).refuses_unlink(phone) {
                return Some(error(&id, 500, "internal-server-error"));
            }
            if let Some(remove) = remove {
                let target = attr(remove, "jid").unwrap_or_default();
                let dev = target
                    .split('@')
                    .next()
                    .and_then(|u| u.split(':').nth(1))
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(device);
                crate::WireServer::unlink(state, phone, dev, false);
                state.saw(Seen::LoggedOut {
                    phone: phone.to_owned(),
                    device: dev,
                });
            }
            result(&id).build()
        }
        "w:g2" => crate::groups::answer(state, phone, node, &id),
        "w:mex" => crate::mex::answer(state, phone, node, &id),
        _ => result(&id).build(),
    })
}

/// The account's blocklist: read (`get`), or an item blocked or unblocked
/// (`set`). WhatsApp keys a block by the blocked account's LID and takes a
/// block only with its phone number beside it (`pn_jid`): one without is
/// refused, as the real server refuses it.
fn blocklist(state: &State, phone: &str, node: &Node, id: &str) -> Node {
    let mut world = state.world();
    let Some(account) = world.accounts.get_mut(phone) else {
        return error(id, 404, "item-not-found");
    };
    if attr(node, "type").as_deref() == Some("get") {
        let items = account
            .blocked
            .iter()
            .map(|(jid, t)| {
                NodeBuilder::new("item")
                    .attr("jid", jid.clone())
                    .attr("t", t.to_string())
                    .build()
            })
            .collect::<Vec<_>>();
        return result(id)
            .children([NodeBuilder::new("list").children(items).build()])
            .build();
    }
    let Some(item) = node.get_optional_child("item") else {
        return error(id, 400, "bad-request");
    };
    let jid = attr(item, "jid").unwrap_or_default();
    match attr(item, "action").as_deref() {
        Some("block") if jid.ends_with("@lid") && attr(item, "pn_jid").is_some() => {
            account.blocked.insert(jid, crate::now());
        }
        Some("unblock") => {
            account.blocked.remove(&jid);
        }
        _ => return error(id, 400, "bad-request"),
    }
    result(id).build()
}

/// App state: every collection asked for is synced at version 0 (empty).
fn app_state(state: &State, phone: &str, node: &Node, id: &str) -> Node {
    let collections: Vec<Node> = node
        .get_optional_child("sync")
        .map(|s| {
            s.get_children_by_tag("collection")
                .filter_map(|c| {
                    let name = attr(c, "name")?;
                    state.saw(Seen::AppStateAsked {
                        phone: phone.to_owned(),
                        collection: name.clone(),
                        snapshot: attr(c, "return_snapshot").as_deref() == Some("true"),
                    });
                    Some(name)
                })
                .map(|name| NodeBuilder::new("collection").attr("name", name).build())
                .collect()
        })
        .unwrap_or_default();
    result(id)
        .children([NodeBuilder::new("sync").children(collections).build()])
        .build()
}

/// A media connection naming the server's media host.
fn media_conn(state: &State, id: &str) -> Node {
    result(id)
        .children([NodeBuilder::new("media_conn")
            .attr("auth", "wire-media-auth")
            .attr("ttl", "3600")
            .attr("auth_ttl", "3600")
            .attr("max_buckets", "12")
            .children([NodeBuilder::new("host")
                .attr("hostname", state.media_host.clone())
                .build()])
            .build()])
        .build()
}
