//! Stanzas a logged-in device sends, routed as WhatsApp's servers do: a
//! message is acknowledged (or refused, as scripted) and split into one
//! stanza per recipient device, each owed to that device until it sends a
//! receipt; receipts go back to the sender's devices; retries reach the
//! device that asked; presence and chat states reach who watches.

use std::time::Duration;

use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::Node;

use crate::conn::Sender;
use crate::iq::attr;
use crate::keys::split_jid;
use crate::server::{Seen, State, lock};
use crate::world::{PN_SERVER, World};

/// Handles one stanza of `phone`'s device `device`.
pub async fn stanza(state: &State, sender: &Sender, phone: &str, device: u16, node: Node) {
    match node.tag.as_ref() {
        "iq" => {
            if let Some(answer) = crate::iq::answer(state, phone, device, &node) {
                sender.send(answer);
            }
        }
        "message" => message(state, sender, phone, device, node).await,
        "receipt" => receipt(state, phone, device, &node),
        "ack" => {
            let class = attr(&node, "class").unwrap_or_default();
            let id = attr(&node, "id").unwrap_or_default();
            let class = if class == "message" {
                "message"
            } else {
                class.as_str()
            };
            if state.world().acknowledged(phone, device, class, &id) {
                state.saw(Seen::Acked {
                    phone: phone.to_owned(),
                    device,
                    id,
                });
            }
        }
        "presence" => presence(state, phone, &node),
        "chatstate" => chatstate(state, phone, &node),
        _ => {}
    }
}

/// A message: refused as scripted, or acknowledged and fanned out.
async fn message(state: &State, sender: &Sender, phone: &str, device: u16, node: Node) {
    let id = attr(&node, "id").unwrap_or_default();
    let to = attr(&node, "to").unwrap_or_default();
    let mut refusal = lock(&state.script).send_refusal(phone);
    // Under a reach-out timelock, a message to someone new is refused.
    let timelocked = lock(&state.script).timelock(phone).is_some();
    if refusal.is_none() && timelocked && state.world().first_contact(phone, &to) {
        refusal = Some(463);
    }
    let delay = lock(&state.script).ack_delay(phone);
    let mut ack = NodeBuilder::new("ack")
        .attr("class", "message")
        .attr("id", id.clone())
        .attr("from", to.clone())
        .attr("t", crate::now().to_string())
        .build();
    match refusal {
        Some(code) => ack.attrs.insert("error", code.to_string()),
        None => route(&mut state.world(), phone, device, &to, &id, &node),
    }
    if delay > Duration::ZERO {
        tokio::time::sleep(delay).await;
    }
    sender.send(ack);
    state.saw(Seen::Sent {
        phone: phone.to_owned(),
        id,
        error: refusal,
        biz: native_flow(&node),
    });
}

/// The native flow a message's `<biz>` child announces: its nested
/// `<interactive><native_flow name>` or its `native_flow_name` attribute.
/// A `<biz>` to a user goes with a `<bot biz_bot="1"/>`; one without it
/// reads as `missing-bot`.
fn native_flow(node: &Node) -> Option<String> {
    let biz = node.get_optional_child("biz")?;
    if !attr(node, "to").unwrap_or_default().ends_with("@g.us")
        && node
            .get_optional_child("bot")
            .and_then(|b| attr(b, "biz_bot"))
            .as_deref()
            != Some("1")
    {
        return Some("missing-bot".into());
    }
    attr(biz, "native_flow_name").or_else(|| {
        let flow = biz
            .get_optional_child("interactive")?
            .get_optional_child("native_flow")?;
        attr(flow, "name")
    })
}

/// The attributes a delivered message keeps from the one sent.
const KEPT: [&str; 4] = ["type", "edit", "addressing_mode", "category"];

/// The children a delivered message keeps (besides its `<enc>`).
const KEPT_CHILDREN: [&str; 2] = ["device-identity", "meta"];

fn route(world: &mut World, phone: &str, device: u16, to: &str, id: &str, node: &Node) {
    let from_device = format!("{phone}:{device}@{PN_SERVER}");
    let push_name = world
        .accounts
        .get(phone)
        .map(|a| a.push_name.clone())
        .unwrap_or_default();
    let base = |from: &str| {
        let mut b = NodeBuilder::new("message")
            .attr("from", from.to_owned())
            .attr("id", id.to_owned())
            .attr("t", crate::now().to_string())
            .attr("notify", push_name.clone())
            .build();
        for k in KEPT {
            if let Some(v) = attr(node, k) {
                b.attrs.insert(k, v);
            }
        }
        b
    };
    let kept: Vec<Node> = node
        .children()
        .unwrap_or_default()
        .iter()
        .filter(|c| KEPT_CHILDREN.contains(&c.tag.as_ref()))
        .cloned()
        .collect();
    let entries: Vec<(String, Node)> = node
        .get_optional_child("participants")
        .map(|p| {
            p.get_children_by_tag("to")
                .filter_map(|t| Some((attr(t, "jid")?, t.get_optional_child("enc")?.clone())))
                .collect()
        })
        .unwrap_or_default();
    let direct: Vec<Node> = node.get_children_by_tag("enc").cloned().collect();
    let (to_user, to_device, to_server) = split_jid(to);
    if to_server == "g.us" {
        let Some(group) = world.groups.get(&to_user) else {
            return;
        };
        // A resend after a retry names the one device it is for.
        let only = attr(node, "participant").map(|p| split_jid(&p));
        let members: Vec<String> = group.members.keys().cloned().collect();
        for member in members {
            for d in world.live_devices(&member) {
                if member == phone && d == device {
                    continue;
                }
                if let Some((u, od, _)) = &only
                    && (u != &member || *od != d)
                {
                    continue;
                }
                let mut out = base(&format!("{to_user}@g.us"));
                out.attrs.insert("participant", from_device.clone());
                let mut children = Vec::new();
                let own = format!("{member}:{d}@{PN_SERVER}");
                if let Some((_, enc)) = entries
                    .iter()
                    .find(|(j, _)| split_jid(j) == split_jid(&own))
                {
                    children.push(enc.clone());
                }
                children.extend(direct.iter().cloned());
                if children.is_empty() {
                    continue;
                }
                children.extend(kept.iter().cloned());
                out.content = Some(whatsapp_rust::wacore_binary::node::NodeContent::Nodes(
                    children,
                ));
                world.deliver(&member, d, "message", id, out);
            }
        }
        return;
    }
    let Some(to_phone) = world.account_of(&to_user).map(|a| a.phone.clone()) else {
        return;
    };
    // A blocked account's messages reach none of the blocker's devices
    // (the sender's own other devices still get their copy).
    let sender_lid = world
        .accounts
        .get(phone)
        .map(|a| format!("{}@lid", a.lid))
        .unwrap_or_default();
    let blocked = world
        .accounts
        .get(&to_phone)
        .is_some_and(|a| a.blocked.contains_key(&sender_lid));
    world.talk(phone, &to_phone);
    let mut targets: Vec<(String, u16, Node)> = entries
        .iter()
        .filter_map(|(jid, enc)| {
            let (u, d, _) = split_jid(jid);
            let p = world.account_of(&u)?.phone.clone();
            Some((p, d, enc.clone()))
        })
        .collect();
    if targets.is_empty() {
        // A resend after a retry goes straight to one device.
        for enc in &direct {
            targets.push((to_phone.clone(), to_device, enc.clone()));
        }
    }
    for (p, d, enc) in targets {
        if (p == phone && d == device) || (blocked && p == to_phone) {
            continue;
        }
        let mut out = base(&from_device);
        if p == phone {
            // A copy for the sender's own other device names the chat.
            out.attrs
                .insert("recipient", format!("{to_phone}@{PN_SERVER}"));
        }
        let mut children = vec![enc];
        children.extend(kept.iter().cloned());
        out.content = Some(whatsapp_rust::wacore_binary::node::NodeContent::Nodes(
            children,
        ));
        world.deliver(&p, d, "message", id, out);
    }
}

/// A receipt: what it names is no longer owed to the device that sent it,
/// and the sender's devices hear of it (a retry goes to the device that
/// sent the message, unchanged).
fn receipt(state: &State, phone: &str, device: u16, node: &Node) {
    let kind = attr(node, "type").unwrap_or_default();
    let first = attr(node, "id").unwrap_or_default();
    let mut ids = vec![first.clone()];
    if let Some(list) = node.get_optional_child("list") {
        ids.extend(
            list.get_children_by_tag("item")
                .filter_map(|i| attr(i, "id")),
        );
    }
    let mut world = state.world();
    if kind != "retry" {
        for id in &ids {
            if world.acknowledged(phone, device, "message", id) {
                drop(world);
                state.saw(Seen::Acked {
                    phone: phone.to_owned(),
                    device,
                    id: id.clone(),
                });
                world = state.world();
            }
        }
    }
    if kind == "sender" || kind == "peer_msg" {
        return;
    }
    let to = attr(node, "to").unwrap_or_default();
    let (to_user, to_device, to_server) = split_jid(&to);
    let from_device = format!("{phone}:{device}@{PN_SERVER}");
    let (target, target_device, from, participant) = if to_server == "g.us" {
        let Some(p) = attr(node, "participant") else {
            return;
        };
        let (u, d, _) = split_jid(&p);
        (u, Some(d), format!("{to_user}@g.us"), Some(from_device))
    } else {
        let single = to.contains(':');
        (to_user, single.then_some(to_device), from_device, None)
    };
    let Some(target_phone) = world.account_of(&target).map(|a| a.phone.clone()) else {
        return;
    };
    let devices: Vec<u16> = world
        .live_devices(&target_phone)
        .into_iter()
        .filter(|d| target_device.is_none_or(|t| t == *d))
        .collect();
    for d in devices {
        let mut out = node.clone();
        out.attrs = Default::default();
        out.attrs.insert("from", from.clone());
        out.attrs.insert("id", first.clone());
        out.attrs.insert("t", crate::now().to_string());
        if let Some(p) = &participant {
            out.attrs.insert("participant", p.clone());
        }
        if !kind.is_empty() && kind != "inactive" {
            out.attrs.insert("type", kind.clone());
        }
        if let Some(r) = attr(node, "recipient") {
            out.attrs.insert("recipient", r);
        }
        world.deliver(&target_phone, d, "receipt", &first, out);
    }
}

/// Presence: an account's own availability is told to its watchers; a
/// subscription is answered with the current one.
fn presence(state: &State, phone: &str, node: &Node) {
    let kind = attr(node, "type").unwrap_or_default();
    let mut world = state.world();
    match kind.as_str() {
        "available" | "unavailable" => {
            let Some(account) = world.accounts.get_mut(phone) else {
                return;
            };
            account.available = kind == "available";
            if let Some(name) = attr(node, "name") {
                account.push_name = name;
            }
            let watchers: Vec<String> = account.watchers.iter().cloned().collect();
            let update = presence_of(&world, phone);
            for w in watchers {
                world.tell(&w, update.clone());
            }
        }
        "subscribe" => {
            let to = attr(node, "to").unwrap_or_default();
            let (user, _, _) = split_jid(&to);
            let Some(target) = world.account_of(&user).map(|a| a.phone.clone()) else {
                return;
            };
            if let Some(a) = world.accounts.get_mut(&target) {
                a.watchers.insert(phone.to_owned());
            }
            let update = presence_of(&world, &target);
            world.tell(phone, update);
        }
        "unsubscribe" => {
            let to = attr(node, "to").unwrap_or_default();
            let (user, _, _) = split_jid(&to);
            if let Some(a) = world.account_mut(&user) {
                a.watchers.remove(phone);
            }
        }
        _ => {}
    }
}

fn presence_of(world: &World, phone: &str) -> Node {
    let mut b = NodeBuilder::new("presence").attr("from", format!("{phone}@{PN_SERVER}"));
    if !world.accounts.get(phone).is_some_and(|a| a.available) {
        b = b
            .attr("type", "unavailable")
            .attr("last", crate::now().to_string());
    }
    b.build()
}

/// A chat state (typing…) goes to the other side's devices as it is.
fn chatstate(state: &State, phone: &str, node: &Node) {
    let to = attr(node, "to").unwrap_or_default();
    let (user, _, server) = split_jid(&to);
    let mut world = state.world();
    let children = node.children().unwrap_or_default().to_vec();
    if server == "g.us" {
        let members: Vec<String> = world
            .groups
            .get(&user)
            .map(|g| g.members.keys().filter(|m| *m != phone).cloned().collect())
            .unwrap_or_default();
        for m in members {
            let out = NodeBuilder::new("chatstate")
                .attr("from", format!("{user}@g.us"))
                .attr("participant", format!("{phone}@{PN_SERVER}"))
                .children(children.clone())
                .build();
            world.tell(&m, out);
        }
        return;
    }
    let Some(target) = world.account_of(&user).map(|a| a.phone.clone()) else {
        return;
    };
    let out = NodeBuilder::new("chatstate")
        .attr("from", format!("{phone}@{PN_SERVER}"))
        .children(children)
        .build();
    world.tell(&target, out);
}
