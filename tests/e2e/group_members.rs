//! Group membership across sim sessions: add and remove with a status per
//! participant, promote and demote, the invite link and its reset, joining by
//! code, and leaving (admin handed on, the last member deletes the group).

use reqwest::Method;
use serde_json::json;
use switchboard_tests::TestServer;

use crate::group_support::{create, info, jid, path, register_user, role, send, statuses};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_and_removing_participants_answers_a_status_for_each() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let carol = server.paired_session("carol").await;
    register_user(&server, "4915112345678").await;
    let group = create(&server, "alice", "Team", &[&jid(&bob)]).await;
    let mut bobs = server.open_stream("session=bob&events=group_update").await;
    let mut carols = server
        .open_stream("session=carol&events=joined_group")
        .await;
    let url = path("alice", &group, "/participants");

    let added = server
        .post(
            &url,
            json!({ "participants": [jid(&carol), jid(&bob), "15559990000", "+49 151 12345678", jid(&carol)] }),
        )
        .await
        .expect(200);
    assert_eq!(
        statuses(&added),
        ["Added", "AlreadyMember", "NotOnNetwork", "Added"]
    );
    assert_eq!(added["results"][2]["jid"], "15559990000@s.whatsapp.net");
    assert_eq!(added["results"][3]["jid"], "4915112345678@s.whatsapp.net");
    let joined = carols.find_event("carol", "joined_group").await;
    assert_eq!(joined["data"]["reason"], "add");
    assert_eq!(joined["data"]["sender"], jid(&alice).as_str());
    let ev = bobs.find_event("bob", "group_update").await;
    assert_eq!(
        ev["data"]["join"],
        json!([jid(&carol), "4915112345678@s.whatsapp.net"])
    );
    assert_eq!(
        info(&server, "carol", &group).await["participants"]
            .as_array()
            .unwrap()
            .len(),
        4
    );

    let removed = send(
        &server,
        Method::DELETE,
        &url,
        json!({ "participants": [jid(&carol), jid(&alice), "15559990000"] }),
    )
    .await
    .expect(200);
    assert_eq!(statuses(&removed), ["Removed", "NotAllowed", "NotMember"]);
    let ev = bobs.find_event("bob", "group_update").await;
    assert_eq!(ev["data"]["leave"], json!([jid(&carol)]));
    server
        .get(&path("carol", &group, ""))
        .await
        .expect_error(404, "group_not_found");
    let list = server
        .get("/api/v1/sessions/carol/groups")
        .await
        .expect(200);
    assert_eq!(list["total"], 0);

    for (body, field) in [
        (json!({ "participants": [] }), "`participants`"),
        (json!({ "participants": ["nope"] }), "`participants[0]`"),
        (json!({ "participants": ["123@lid"] }), "`participants[0]`"),
        (json!({}), "`participants`"),
    ] {
        for method in [Method::POST, Method::DELETE] {
            let msg = send(&server, method, &url, body.clone())
                .await
                .expect_error(400, "invalid_field");
            assert!(msg.contains(field), "{body}: {msg}");
        }
    }
    let stranger = path("ghost", &group, "/participants");
    send(
        &server,
        Method::POST,
        &stranger,
        json!({ "participants": [jid(&bob)] }),
    )
    .await
    .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promote_and_demote_change_roles_all_or_nothing_and_spare_the_creator() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let carol = server.paired_session("carol").await;
    let group = create(&server, "alice", "Team", &[&jid(&bob), &jid(&carol)]).await;
    let mut carols = server
        .open_stream("session=carol&events=group_update")
        .await;
    let admins = path("alice", &group, "/admins");

    let ok = server
        .post(&admins, json!({ "participants": [jid(&bob)] }))
        .await
        .expect(200);
    assert_eq!(ok, json!({ "success": true }));
    let ev = carols.find_event("carol", "group_update").await;
    assert_eq!(ev["data"]["promote"], json!([jid(&bob)]));
    assert_eq!(
        role(&info(&server, "carol", &group).await, &jid(&bob)).as_deref(),
        Some("admin")
    );

    let msg = server
        .post(
            &admins,
            json!({ "participants": [jid(&carol), "15559990000"] }),
        )
        .await
        .expect_error(422, "not_a_participant");
    assert!(msg.contains("15559990000"), "{msg}");
    assert_eq!(
        role(&info(&server, "carol", &group).await, &jid(&carol)).as_deref(),
        Some("member")
    );

    // Bob is an admin now: he may rename, but not demote the creator.
    crate::group_support::put(
        &server,
        &path("bob", &group, "/subject"),
        json!({ "subject": "Bob's" }),
    )
    .await
    .expect(200);
    send(
        &server,
        Method::DELETE,
        &path("bob", &group, "/admins"),
        json!({ "participants": [jid(&alice)] }),
    )
    .await
    .expect_error(422, "not_allowed");
    assert_eq!(
        role(&info(&server, "bob", &group).await, &jid(&alice)).as_deref(),
        Some("superadmin")
    );

    send(
        &server,
        Method::DELETE,
        &admins,
        json!({ "participants": [jid(&bob)] }),
    )
    .await
    .expect(200);
    let ev = carols
        .find(|e| e["event"] == "group_update" && e["data"].get("demote").is_some())
        .await;
    assert_eq!(ev["data"]["demote"], json!([jid(&bob)]));
    assert_eq!(
        role(&info(&server, "bob", &group).await, &jid(&bob)).as_deref(),
        Some("member")
    );
    crate::group_support::put(
        &server,
        &path("bob", &group, "/subject"),
        json!({ "subject": "Again" }),
    )
    .await
    .expect_error(403, "not_group_admin");
    send(
        &server,
        Method::POST,
        &admins,
        json!({ "participants": ["x@g.us"] }),
    )
    .await
    .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resetting_the_invite_link_makes_the_old_code_stop_working() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let carol = server.paired_session("carol").await;
    register_user(&server, "4915112345678").await;
    let group = create(&server, "alice", "Team", &[]).await;
    let link_url = path("alice", &group, "/invite-link");
    let first = server.get(&link_url).await.expect(200)["invite_link"]
        .as_str()
        .unwrap()
        .to_owned();
    let code = first
        .strip_prefix("https://chat.whatsapp.com/")
        .expect("the invite base");
    assert_eq!(code.len(), 22);
    assert!(code.chars().all(|c| c.is_ascii_alphanumeric()));
    let again = server
        .get(&format!("{link_url}?reset=false"))
        .await
        .expect(200);
    assert_eq!(
        again["invite_link"],
        first.as_str(),
        "reading does not change it"
    );

    let mut alices = server
        .open_stream("session=alice&events=group_update")
        .await;
    let reset = server
        .get(&format!("{link_url}?reset=true"))
        .await
        .expect(200);
    let second = reset["invite_link"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    let ev = alices.find_event("alice", "group_update").await;
    assert_eq!(ev["data"]["invite_link"], second.as_str());
    assert_eq!(
        server.get(&link_url).await.expect(200)["invite_link"],
        second.as_str()
    );

    let join = "/api/v1/sim/groups/join";
    server
        .post(join, json!({ "phone": "4915112345678", "code": code }))
        .await
        .expect_error(404, "invite_not_found");
    let mut carols = server
        .open_stream("session=carol&events=joined_group")
        .await;
    let joined = server
        .post(join, json!({ "session_id": "carol", "code": second }))
        .await
        .expect(200);
    assert_eq!(joined, json!({ "group_jid": group, "status": "joined" }));
    let ev = carols.find_event("carol", "joined_group").await;
    assert_eq!(ev["data"]["reason"], "invite");
    let ev = alices
        .find(|e| e["event"] == "group_update" && e["data"].get("join").is_some())
        .await;
    assert_eq!(ev["data"]["join"], json!([jid(&carol)]));
    assert_eq!(ev["data"]["sender"], jid(&carol).as_str());
    let again = server
        .post(join, json!({ "session_id": "carol", "code": second }))
        .await
        .expect(200);
    assert_eq!(again["status"], "already_member");

    // With approval on, a join by link waits for an admin.
    crate::group_support::put(
        &server,
        &path("alice", &group, "/settings"),
        json!({ "membership_approval_mode": "on" }),
    )
    .await
    .expect(200);
    let code2 = second.rsplit('/').next().unwrap();
    let pending = server
        .post(join, json!({ "phone": "+49 151 12345678", "code": code2 }))
        .await
        .expect(200);
    assert_eq!(pending["status"], "pending_approval");
    let now = info(&server, "alice", &group).await;
    assert_eq!(now["participants"].as_array().unwrap().len(), 2);
    assert_eq!(role(&now, &jid(&alice)).as_deref(), Some("superadmin"));

    server
        .get(&format!("{link_url}?reset=maybe"))
        .await
        .expect_error(400, "invalid_query");
    for body in [
        json!({ "code": code2 }),
        json!({ "code": code2, "session_id": "carol", "phone": "4915112345678" }),
    ] {
        server
            .post(join, body)
            .await
            .expect_error(400, "invalid_body");
    }
    server
        .post(
            join,
            json!({ "code": "not a code!", "session_id": "carol" }),
        )
        .await
        .expect_error(400, "invalid_field");
    server
        .post(join, json!({ "code": code2, "phone": "15550000000" }))
        .await
        .expect_error(404, "not_found_on_network");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_hands_admin_on_and_the_last_member_leaving_deletes_the_group() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let group = create(&server, "alice", "Team", &[&jid(&bob)]).await;
    let link = server
        .get(&path("alice", &group, "/invite-link"))
        .await
        .expect(200)["invite_link"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut bobs = server.open_stream("session=bob&events=group_update").await;

    let left = server
        .post_empty(&path("alice", &group, "/leave"))
        .await
        .expect(200);
    assert_eq!(left, json!({ "success": true }));
    let ev = bobs.find_event("bob", "group_update").await;
    assert_eq!(ev["data"]["leave"], json!([jid(&alice)]));
    assert_eq!(
        ev["data"]["promote"],
        json!([jid(&bob)]),
        "the earliest member becomes admin"
    );
    let now = info(&server, "bob", &group).await;
    assert_eq!(
        now["owner"],
        jid(&alice).as_str(),
        "the owner stays the creator"
    );
    assert_eq!(
        now["participants"],
        json!([{ "jid": jid(&bob), "role": "admin", "phone_number": jid(&bob) }])
    );
    assert_eq!(
        server
            .get("/api/v1/sessions/alice/groups")
            .await
            .expect(200)["total"],
        0
    );
    server
        .post_empty(&path("alice", &group, "/leave"))
        .await
        .expect_error(404, "group_not_found");

    server
        .post_empty(&path("bob", &group, "/leave"))
        .await
        .expect(200);
    server
        .get(&path("bob", &group, ""))
        .await
        .expect_error(404, "group_not_found");
    server
        .post(
            "/api/v1/sim/groups/join",
            json!({ "session_id": "alice", "code": link }),
        )
        .await
        .expect_error(404, "invite_not_found");
}
