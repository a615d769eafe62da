//! Signal keys and device lists: the prekey upload a device makes at login
//! (stored per device), the bundles another client fetches before its
//! first message to a device (each one-time prekey handed out once), and
//! the usync device lists that say which devices an account has.

use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::{Node, NodeContent};
use whatsapp_rust::waproto::buffa::Message;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::iq::{attr, be, child_bytes, error, result};
use crate::server::State;
use crate::world::{PN_SERVER, World};

/// Three big-endian bytes (a key id on the wire).
fn id3(id: u32) -> Vec<u8> {
    id.to_be_bytes()[1..].to_vec()
}

/// The `xmlns="encrypt"` IQs: upload, rotation, count, digest, fetch.
pub fn answer(state: &State, phone: &str, device: u16, node: &Node, id: &str) -> Node {
    let mut world = state.world();
    let kind = attr(node, "type").unwrap_or_default();
    if kind == "set" {
        if let Some(rotate) = node.get_optional_child("rotate") {
            if let (Some(skey), Some(dev)) = (
                rotate.get_optional_child("skey"),
                device_mut(&mut world, phone, device),
            ) && let Some(signed) = signed_key(skey)
            {
                dev.keys.signed = signed;
            }
            return result(id).build();
        }
        if let Some(dev) = device_mut(&mut world, phone, device) {
            if let Some(r) = child_bytes(node, "registration") {
                dev.keys.registration_id = be(r);
            }
            if let Some(i) =
                child_bytes(node, "identity").and_then(|i| <[u8; 32]>::try_from(i).ok())
            {
                dev.keys.identity = i;
            }
            if let Some(signed) = node.get_optional_child("skey").and_then(signed_key) {
                dev.keys.signed = signed;
            }
            if let Some(list) = node.get_optional_child("list") {
                for key in list.get_children_by_tag("key") {
                    if let (Some(kid), Some(value)) =
                        (child_bytes(key, "id"), child_bytes(key, "value"))
                        && let Ok(value) = <[u8; 32]>::try_from(value)
                    {
                        dev.keys.one_time.push_back((be(kid), value));
                    }
                }
            }
        }
        return result(id).build();
    }
    if node.get_optional_child("count").is_some() {
        let n = device_mut(&mut world, phone, device).map_or(0, |d| d.keys.one_time.len());
        return result(id)
            .children([NodeBuilder::new("count")
                .attr("value", n.to_string())
                .build()])
            .build();
    }
    if node.get_optional_child("digest").is_some() {
        // "No digest here": the client keeps what it uploaded.
        return error(id, 503, "service-unavailable");
    }
    let Some(key) = node.get_optional_child("key") else {
        return result(id).build();
    };
    let users: Vec<Node> = key
        .get_children_by_tag("user")
        .filter_map(|u| attr(u, "jid"))
        .map(|jid| bundle(&mut world, &jid))
        .collect();
    result(id)
        .children([NodeBuilder::new("list").children(users).build()])
        .build()
}

fn device_mut<'a>(
    world: &'a mut World,
    phone: &str,
    device: u16,
) -> Option<&'a mut crate::world::Device> {
    world.accounts.get_mut(phone)?.devices.get_mut(&device)
}

fn signed_key(skey: &Node) -> Option<(u32, [u8; 32], Vec<u8>)> {
    Some((
        be(child_bytes(skey, "id")?),
        child_bytes(skey, "value")?.try_into().ok()?,
        child_bytes(skey, "signature")?.to_vec(),
    ))
}

/// Splits `user[:device]@server` into its parts.
pub fn split_jid(jid: &str) -> (String, u16, String) {
    let (left, server) = jid.split_once('@').unwrap_or((jid, PN_SERVER));
    let (user, device) = match left.split_once(':') {
        Some((u, d)) => (u, d.parse().unwrap_or(0)),
        None => (left, 0),
    };
    let user = user.split('.').next().unwrap_or(user);
    (user.to_owned(), device, server.to_owned())
}

/// One device's bundle, a one-time prekey taken from its pool.
fn bundle(world: &mut World, jid: &str) -> Node {
    let (user, device, _) = split_jid(jid);
    let keys = world
        .account_mut(&user)
        .and_then(|a| a.devices.get_mut(&device))
        .filter(|d| !d.removed)
        .map(|d| (d.keys.clone(), d.keys.one_time.pop_front()));
    let Some((keys, one_time)) = keys else {
        log::warn!("wire: no keys for {jid}: answered 406");
        return NodeBuilder::new("user")
            .attr("jid", jid.to_owned())
            .children([NodeBuilder::new("error").attr("code", "406").build()])
            .build();
    };
    let mut children = vec![
        NodeBuilder::new("registration")
            .bytes(keys.registration_id.to_be_bytes().to_vec())
            .build(),
        NodeBuilder::new("type").bytes(vec![5u8]).build(),
        NodeBuilder::new("identity")
            .bytes(keys.identity.to_vec())
            .build(),
        NodeBuilder::new("skey")
            .children([
                NodeBuilder::new("id").bytes(id3(keys.signed.0)).build(),
                NodeBuilder::new("value")
                    .bytes(keys.signed.1.to_vec())
                    .build(),
                NodeBuilder::new("signature")
                    .bytes(keys.signed.2.clone())
                    .build(),
            ])
            .build(),
    ];
    if let Some((kid, value)) = one_time {
        children.push(
            NodeBuilder::new("key")
                .children([
                    NodeBuilder::new("id").bytes(id3(kid)).build(),
                    NodeBuilder::new("value").bytes(value.to_vec()).build(),
                ])
                .build(),
        );
    }
    NodeBuilder::new("user")
        .attr("jid", jid.to_owned())
        .children(children)
        .build()
}

/// usync: device lists (the linked companions, never a phantom phone),
/// LID lookups (answered without a mapping: the wire keeps to phone-number
/// addressing), and contact lookups (whether a number is on the network).
pub fn usync(state: &State, node: &Node, id: &str) -> Node {
    let world = state.world();
    let Some(usync) = node.get_optional_child("usync") else {
        return result(id).build();
    };
    let query = usync.get_optional_child("query");
    let wants = |tag: &str| query.is_some_and(|q| q.get_optional_child(tag).is_some());
    let users: Vec<Node> = usync
        .get_optional_child("list")
        .map(|l| l.get_children_by_tag("user").collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|u| {
            let jid = attr(u, "jid").or_else(|| {
                // A contact lookup names the number as the content of
                // `<contact>+15550001111</contact>`.
                u.get_optional_child("contact")
                    .and_then(|c| match &c.content {
                        Some(NodeContent::String(s)) => {
                            Some(format!("{}@{PN_SERVER}", s.trim_start_matches('+')))
                        }
                        Some(NodeContent::Bytes(b)) => Some(format!(
                            "{}@{PN_SERVER}",
                            String::from_utf8_lossy(b).trim_start_matches('+')
                        )),
                        _ => None,
                    })
            })?;
            let (user, _, _) = split_jid(&jid);
            let account = world.account_of(&user);
            let mut children = Vec::new();
            if wants("devices") {
                children.push(devices(&account?.live_devices()));
            }
            if wants("contact") {
                let kind = if account.is_some() { "in" } else { "out" };
                children.push(NodeBuilder::new("contact").attr("type", kind).build());
            }
            if wants("lid")
                && let Some(a) = account
            {
                children.push(
                    NodeBuilder::new("lid")
                        .attr("val", format!("{}@lid", a.lid))
                        .build(),
                );
            }
            let jid = match account {
                Some(a) => format!("{}@{PN_SERVER}", a.phone),
                None => jid,
            };
            Some(
                NodeBuilder::new("user")
                    .attr("jid", jid)
                    .children(children)
                    .build(),
            )
        })
        .collect();
    result(id)
        .children([NodeBuilder::new("usync")
            .attr("sid", attr(usync, "sid").unwrap_or_default())
            .children([NodeBuilder::new("list").children(users).build()])
            .build()])
        .build()
}

/// `<devices>` naming the companions, each with its key index, and the key
/// index list that vouches for them.
fn devices(ids: &[u16]) -> Node {
    let list = wa::ADVKeyIndexList {
        raw_id: Some(1),
        timestamp: Some(crate::now()),
        current_index: Some(0),
        valid_indexes: ids.iter().map(|d| u32::from(*d)).collect(),
        account_type: None,
    }
    .encode_to_vec();
    let signed = wa::ADVSignedKeyIndexList {
        details: Some(list),
        account_signature: Some(vec![0u8; 64]),
        account_signature_key: None,
    }
    .encode_to_vec();
    NodeBuilder::new("devices")
        .children([
            NodeBuilder::new("device-list")
                .children(ids.iter().map(|d| {
                    NodeBuilder::new("device")
                        .attr("id", d.to_string())
                        .attr("key-index", d.to_string())
                        .build()
                }))
                .build(),
            NodeBuilder::new("key-index-list")
                .attr("ts", crate::now().to_string())
                .bytes(signed)
                .build(),
        ])
        .build()
}
