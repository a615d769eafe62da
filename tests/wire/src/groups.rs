//! Groups (`xmlns="w:g2"`): create, metadata, subject, description,
//! participants added, removed, promoted, demoted, leave. Each change is
//! told to every member's devices as a `w:gp2` notification, owed until
//! acknowledged, so members' cached participant lists stay true.

use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::{Node, NodeContent};

use crate::iq::{attr, error, result};
use crate::keys::split_jid;
use crate::server::State;
use crate::world::{Group, PN_SERVER, World};

/// Answers a group IQ of `phone`.
pub fn answer(state: &State, phone: &str, node: &Node, id: &str) -> Node {
    let mut world = state.world();
    let to = attr(node, "to").unwrap_or_default();
    let (gid, _, _) = split_jid(&to);
    if let Some(create) = node.get_optional_child("create") {
        let subject = attr(create, "subject").unwrap_or_default();
        let gid = format!(
            "120363{:012}",
            100_000 + world.groups.len() as u64 * 7 + world.next_id
        );
        let now = crate::now();
        let mut members = std::collections::BTreeMap::new();
        members.insert(phone.to_owned(), true);
        for p in create.get_children_by_tag("participant") {
            if let Some(jid) = attr(p, "jid") {
                let (user, _, _) = split_jid(&jid);
                if let Some(a) = world.account_of(&user) {
                    members.entry(a.phone.clone()).or_insert(false);
                }
            }
        }
        let description = create
            .get_optional_child("description")
            .and_then(|d| d.get_optional_child("body"))
            .and_then(text);
        world.groups.insert(
            gid.clone(),
            Group {
                id: gid.clone(),
                subject,
                subject_time: now,
                creator: phone.to_owned(),
                created: now,
                members,
                description,
            },
        );
        let meta = metadata(&world.groups[&gid]);
        notify(
            &mut world,
            &gid,
            phone,
            NodeBuilder::new("create").children([meta.clone()]).build(),
        );
        return result(id).children([meta]).build();
    }
    if !world.groups.contains_key(&gid) {
        return error(id, 404, "item-not-found");
    }
    if !world.groups[&gid].members.contains_key(phone) {
        return error(id, 403, "forbidden");
    }
    if node.get_optional_child("query").is_some() {
        return result(id).children([metadata(&world.groups[&gid])]).build();
    }
    if let Some(subject) = node.get_optional_child("subject") {
        let text = text(subject).unwrap_or_default();
        let group = world.groups.get_mut(&gid).expect("checked");
        group.subject = text.clone();
        group.subject_time = crate::now();
        let change = NodeBuilder::new("subject")
            .attr("subject", text)
            .attr("s_o", format!("{phone}@{PN_SERVER}"))
            .attr("s_t", crate::now().to_string())
            .build();
        notify(&mut world, &gid, phone, change);
        return result(id).build();
    }
    if let Some(desc) = node.get_optional_child("description") {
        let body = desc.get_optional_child("body").and_then(text);
        world.groups.get_mut(&gid).expect("checked").description = body.clone();
        let mut change =
            NodeBuilder::new("description").attr("id", attr(desc, "id").unwrap_or_default());
        if let Some(b) = body {
            change = change.children([NodeBuilder::new("body").string_content(b).build()]);
        } else {
            change = change.children([NodeBuilder::new("delete").build()]);
        }
        notify(&mut world, &gid, phone, change.build());
        return result(id).build();
    }
    for op in ["add", "remove", "promote", "demote"] {
        let Some(change) = node.get_optional_child(op) else {
            continue;
        };
        let mut done = Vec::new();
        for p in change.get_children_by_tag("participant") {
            let Some(jid) = attr(p, "jid") else { continue };
            let (user, _, _) = split_jid(&jid);
            let known = world.account_of(&user).map(|a| a.phone.clone());
            let group = world.groups.get_mut(&gid).expect("checked");
            let outcome = match (op, known) {
                (_, None) => Some("404"),
                ("add", Some(p)) => {
                    group.members.entry(p).or_insert(false);
                    None
                }
                ("remove", Some(p)) => group.members.remove(&p).map_or(Some("404"), |_| None),
                ("promote" | "demote", Some(p)) => match group.members.get_mut(&p) {
                    Some(admin) => {
                        *admin = op == "promote";
                        None
                    }
                    None => Some("404"),
                },
                _ => Some("400"),
            };
            let mut b = NodeBuilder::new("participant").attr("jid", format!("{user}@{PN_SERVER}"));
            if let Some(code) = outcome {
                b = b.attr("error", code);
            }
            done.push((b.build(), outcome.is_none(), user));
        }
        let changed: Vec<Node> = done
            .iter()
            .filter(|(_, ok, _)| *ok)
            .map(|(_, _, u)| {
                NodeBuilder::new("participant")
                    .attr("jid", format!("{u}@{PN_SERVER}"))
                    .build()
            })
            .collect();
        if !changed.is_empty() {
            let note = NodeBuilder::new(op_tag(op))
                .children(changed.clone())
                .build();
            notify(&mut world, &gid, phone, note.clone());
            if op == "remove" {
                // Those removed hear of it too.
                for (_, ok, u) in &done {
                    if *ok {
                        tell_one(&mut world, &gid, phone, u, note.clone());
                    }
                }
            }
        }
        return result(id)
            .children([NodeBuilder::new(op_tag(op))
                .children(done.into_iter().map(|(n, _, _)| n))
                .build()])
            .build();
    }
    if node.get_optional_child("leave").is_some() {
        world
            .groups
            .get_mut(&gid)
            .expect("checked")
            .members
            .remove(phone);
        let note = NodeBuilder::new("remove")
            .children([NodeBuilder::new("participant")
                .attr("jid", format!("{phone}@{PN_SERVER}"))
                .build()])
            .build();
        notify(&mut world, &gid, phone, note);
        return result(id).build();
    }
    result(id).build()
}

/// The `<group>` metadata every client reads.
fn metadata(g: &Group) -> Node {
    let mut children: Vec<Node> = g
        .members
        .iter()
        .map(|(m, admin)| {
            let mut b = NodeBuilder::new("participant").attr("jid", format!("{m}@{PN_SERVER}"));
            if *m == g.creator {
                b = b.attr("type", "superadmin");
            } else if *admin {
                b = b.attr("type", "admin");
            }
            b.build()
        })
        .collect();
    if let Some(d) = &g.description {
        children.push(
            NodeBuilder::new("description")
                .attr("id", "wire-desc")
                .children([NodeBuilder::new("body").string_content(d.clone()).build()])
                .build(),
        );
    }
    NodeBuilder::new("group")
        .attr("id", g.id.clone())
        .attr("creator", format!("{}@{PN_SERVER}", g.creator))
        .attr("creation", g.created.to_string())
        .attr("subject", g.subject.clone())
        .attr("s_t", g.subject_time.to_string())
        .attr("s_o", format!("{}@{PN_SERVER}", g.creator))
        .attr("addressing_mode", "pn")
        .attr("size", g.members.len().to_string())
        .children(children)
        .build()
}

fn op_tag(op: &str) -> &'static str {
    match op {
        "add" => "add",
        "remove" => "remove",
        "promote" => "promote",
        _ => "demote",
    }
}

/// A node's text content.
fn text(node: &Node) -> Option<String> {
    match &node.content {
        Some(NodeContent::String(s)) => Some(s.to_string()),
        Some(NodeContent::Bytes(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

/// Tells every member's devices (but the actor's acting device, which
/// knows) of a change.
fn notify(world: &mut World, gid: &str, actor: &str, change: Node) {
    let members: Vec<String> = world.groups[gid].members.keys().cloned().collect();
    for m in members {
        tell_one(world, gid, actor, &m, change.clone());
    }
}

fn tell_one(world: &mut World, gid: &str, actor: &str, member: &str, change: Node) {
    for d in world.live_devices(member) {
        let id = world.id();
        let note = NodeBuilder::new("notification")
            .attr("type", "w:gp2")
            .attr("from", format!("{gid}@g.us"))
            .attr("id", id.clone())
            .attr("t", crate::now().to_string())
            .attr("participant", format!("{actor}@{PN_SERVER}"))
            .children([change.clone()])
            .build();
        world.deliver(member, d, "notification", &id, note);
    }
}
