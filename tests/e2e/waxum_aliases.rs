//! Clients written for waxum, the peer gateway whose API ours follows, work
//! unchanged on the contacts, groups and profile-picture routes: each test
//! sends the request as waxum's handlers take it and reads the answer as
//! waxum's models shape it, against the sim. Our own spellings keep working
//! beside them, and both spellings at once are refused.

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::TestServer;

use crate::group_support::{jid, path, put, send};

/// The registered business user the contact tests look up.
const BAKERY: &str = "15550002222@s.whatsapp.net";

/// A server with a logged-in session `s`, a peer session `peer` and two
/// registered users: a business with a lid, an about text and a picture, and
/// a plain user with nothing but a push name. Returns the peer's JID.
async fn world() -> (TestServer, String) {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let peer = server.paired_session("peer").await;
    server
        .post(
            "/api/v1/sim/users",
            json!({
                "phone": "15550002222", "push_name": "Bakery", "business_name": "ACME Bakery",
                "lid": "222", "about": "Fresh bread daily",
                "picture_url": "https://pics.example/v/t61/bakery.jpg?oh=1",
            }),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/v1/sim/users",
            json!({ "phone": "15550001111", "push_name": "Ann" }),
        )
        .await
        .expect(201);
    (server, jid(&peer))
}

/// The bakery's picture id, as our own picture route reports it.
async fn bakery_picture_id(server: &TestServer) -> Value {
    let pic = server
        .get(&format!("/api/v1/sessions/s/contacts/{BAKERY}/picture"))
        .await
        .expect(200);
    pic["id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_asks_contact_info_by_phones_and_reads_the_contacts_list() {
    let (server, peer) = world().await;
    let picture_id = bakery_picture_id(&server).await;
    let body = server
        .post(
            "/api/v1/sessions/s/contacts/info",
            json!({ "phones": ["15550002222", "15559999999", peer, "222@lid"] }),
        )
        .await
        .expect(200);
    assert_eq!(
        body,
        json!({ "contacts": [
            {
                "jid": BAKERY, "lid": "222@lid", "is_registered": true, "is_business": true,
                "status": "Fresh bread daily", "picture_id": picture_id,
                "name": "Bakery", "notify": "Bakery", "verified_name": "ACME Bakery",
            },
            {
                "jid": peer, "lid": null, "is_registered": true, "is_business": false,
                "status": null, "picture_id": null,
                "name": "Sim peer", "notify": "Sim peer", "verified_name": null,
            },
            {
                "jid": "222@lid", "lid": "222@lid", "is_registered": true, "is_business": true,
                "status": "Fresh bread daily", "picture_id": picture_id,
                "name": "Bakery", "notify": "Bakery", "verified_name": "ACME Bakery",
            },
        ]}),
        "in the order asked; an account not on the network is left out"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contact_info_by_jid_also_carries_waxums_fields() {
    let (server, _) = world().await;
    let picture_id = bakery_picture_id(&server).await;
    let bakery = server
        .post(
            "/api/v1/sessions/s/contacts/info",
            json!({ "jid": "+1 555 000 2222" }),
        )
        .await
        .expect(200);
    assert_eq!(
        bakery,
        json!({
            "jid": BAKERY, "name": "Bakery", "notify": "Bakery", "verified_name": "ACME Bakery",
            "lid": "222@lid", "is_registered": true, "is_business": true,
            "status": "Fresh bread daily", "picture_id": picture_id,
        })
    );
    let ann = server
        .post(
            "/api/v1/sessions/s/contacts/info",
            json!({ "jid": "15550001111" }),
        )
        .await
        .expect(200);
    assert_eq!(
        (
            &ann["lid"],
            &ann["is_business"],
            &ann["status"],
            &ann["picture_id"]
        ),
        (&json!(null), &json!(false), &json!(null), &json!(null)),
        "what the network does not have is null: {ann}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contact_info_refuses_both_spellings_at_once_and_names_a_bad_phone() {
    let (server, _) = world().await;
    let url = "/api/v1/sessions/s/contacts/info";
    let m = server
        .post(
            url,
            json!({ "jid": "15550002222", "phones": ["15550001111"] }),
        )
        .await
        .expect_error(400, "invalid_body");
    assert!(m.contains("not both"), "{m}");
    for (body, field) in [
        (json!({}), "`jid`"),
        (json!({ "phones": [] }), "`phones`"),
        (json!({ "phones": ["15550001111", "nope"] }), "`phones[1]`"),
        (
            json!({ "phones": ["120363000000000001@g.us"] }),
            "`phones[0]`",
        ),
        (json!({ "phones": "15550001111" }), "`phones`"),
        (json!({ "jid": 5 }), "`jid`"),
    ] {
        let m = server
            .post(url, body.clone())
            .await
            .expect_error(400, "invalid_field");
        assert!(m.contains(field), "{body}: {m}");
    }
    let many: Vec<String> = (0..1001).map(|n| format!("1555{n:07}")).collect();
    server
        .post(url, json!({ "phones": many }))
        .await
        .expect_error(400, "invalid_field");
    let m = server
        .post(url, json!({ "phones": ["15550001111"], "extra": 1 }))
        .await
        .expect_error(400, "invalid_field");
    assert!(m.contains("extra"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_reads_picture_id_and_direct_path_of_a_profile_picture() {
    let (server, _) = world().await;
    let pic = server
        .get(&format!("/api/v1/sessions/s/contacts/{BAKERY}/picture"))
        .await
        .expect(200);
    assert_eq!(pic["url"], "https://pics.example/v/t61/bakery.jpg?oh=1");
    assert_eq!(
        pic["direct_path"], "/v/t61/bakery.jpg?oh=1",
        "the URL without scheme and host, as WhatsApp's direct path is"
    );
    let id = pic["id"].as_str().expect("our id");
    assert_eq!(pic["picture_id"], id, "waxum's name for the same id");
    let by_lid = server
        .get("/api/v1/sessions/s/contacts/222@lid/picture")
        .await
        .expect(200);
    assert_eq!(by_lid, pic);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_reads_lid_status_and_is_business_of_users() {
    let (server, peer) = world().await;
    let picture_id = bakery_picture_id(&server).await;
    let body = server
        .post(
            "/api/v1/sessions/s/contacts/users",
            json!({ "jids": [BAKERY, "15559999999@s.whatsapp.net", peer] }),
        )
        .await
        .expect(200);
    assert_eq!(
        body,
        json!({ "users": [
            {
                "jid": BAKERY, "lid": "222@lid", "status": "Fresh bread daily",
                "is_business": true, "picture_id": picture_id, "verified_name": "ACME Bakery",
            },
            {
                "jid": peer, "lid": null, "status": null,
                "is_business": false, "picture_id": null, "verified_name": null,
            },
        ]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_checks_phones_and_reads_is_registered() {
    let (server, _) = world().await;
    let body = server
        .post(
            "/api/v1/sessions/s/contacts/check",
            json!({ "phones": ["559999999999", "15550001111"] }),
        )
        .await
        .expect(200);
    assert_eq!(
        body["results"],
        json!([
            { "phone": "559999999999", "jid": null, "is_registered": false, "exists": false },
            { "phone": "15550001111", "jid": "15550001111@s.whatsapp.net", "is_registered": true, "exists": true },
        ])
    );
}

/// Two paired sessions, `alice` and `bob`, and a group `alice` made with
/// `bob` through waxum's Create Group request. Returns the session
/// statuses and the group's JID.
async fn group_world() -> (TestServer, Value, Value, String) {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let created = server
        .post(
            "/api/v1/sessions/alice/groups",
            json!({
                "name": "My New Group",
                "participants": [jid(&bob)],
                "membership_approval_mode": "off",
                "member_add_mode": "admin_add",
                "member_link_mode": "admin_link",
            }),
        )
        .await
        .expect(201);
    let group = created["group_jid"].as_str().expect("group_jid").to_owned();
    (server, alice, bob, group)
}

/// The participants of the group of [`group_world`], as waxum lists them
/// (`phone_number` beside each) with our roles.
fn participants(alice: &Value, bob: &Value) -> Value {
    json!([
        { "jid": jid(alice), "phone_number": jid(alice), "role": "superadmin" },
        { "jid": jid(bob), "phone_number": jid(bob), "role": "member" },
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_lists_groups_with_subject_participants_and_addressing_mode() {
    let (server, alice, bob, group) = group_world().await;
    let list = server.get("/api/v1/sessions/bob/groups").await.expect(200);
    assert_eq!(list["total"], 1);
    assert_eq!(
        list["groups"],
        json!([{
            "jid": group, "subject": "My New Group", "addressing_mode": "Pn",
            "participants": participants(&alice, &bob),
            "name": "My New Group", "participant_count": 2,
        }])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_gets_a_group_with_subject_participants_and_addressing_mode() {
    let (server, alice, bob, group) = group_world().await;
    let got = server.get(&path("bob", &group, "")).await.expect(200);
    assert_eq!(got["jid"], group.as_str());
    assert_eq!(got["subject"], "My New Group");
    assert_eq!(got["addressing_mode"], "Pn");
    assert_eq!(got["participants"], participants(&alice, &bob));
    assert_eq!(got["name"], got["subject"], "our spelling beside waxum's");
    assert_eq!(got["participant_count"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_reads_addressing_mode_and_phone_numbers_from_group_info() {
    let (server, alice, bob, group) = group_world().await;
    let info = server
        .get(&path("alice", &group, "/info"))
        .await
        .expect(200);
    assert_eq!(info["addressing_mode"], "Pn");
    assert_eq!(info["participants"], participants(&alice, &bob));
    assert_eq!(info["subject"], "My New Group");
    assert_eq!(info["owner"], jid(&alice).as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_manages_a_group_with_its_own_requests() {
    let (server, alice, bob, group) = group_world().await;
    let carol = server.paired_session("carol").await;
    let ok = json!({ "success": true });
    let subject = put(
        &server,
        &path("alice", &group, "/subject"),
        json!({ "subject": "New Group Name" }),
    )
    .await
    .expect(200);
    assert_eq!(subject, ok);
    let described = put(
        &server,
        &path("alice", &group, "/description"),
        json!({ "description": "This is the group description", "prev_id": null }),
    )
    .await
    .expect(200);
    assert_eq!(described, ok);
    let settings = put(
        &server,
        &path("alice", &group, "/settings"),
        json!({ "membership_approval_mode": "on", "member_add_mode": "all_member_add" }),
    )
    .await
    .expect(200);
    assert_eq!(settings, ok);
    let participants_path = path("alice", &group, "/participants");
    let added = server
        .post(&participants_path, json!({ "participants": [jid(&carol)] }))
        .await
        .expect(200);
    assert_eq!(
        added,
        json!({ "results": [{ "jid": jid(&carol), "status": "Added" }] })
    );
    let admins = path("alice", &group, "/admins");
    let promoted = server
        .post(&admins, json!({ "participants": [jid(&bob)] }))
        .await
        .expect(200);
    assert_eq!(promoted, ok);
    let demoted = send(
        &server,
        Method::DELETE,
        &admins,
        json!({ "participants": [jid(&bob)] }),
    )
    .await
    .expect(200);
    assert_eq!(demoted, ok);
    let removed = send(
        &server,
        Method::DELETE,
        &participants_path,
        json!({ "participants": [jid(&carol)] }),
    )
    .await
    .expect(200);
    assert_eq!(
        removed,
        json!({ "results": [{ "jid": jid(&carol), "status": "Removed" }] })
    );
    let link = server
        .get(&path("alice", &group, "/invite-link?reset=true"))
        .await
        .expect(200);
    assert!(
        link["invite_link"]
            .as_str()
            .is_some_and(|l| l.starts_with("https://chat.whatsapp.com/")),
        "{link}"
    );
    let info = server.get(&path("bob", &group, "/info")).await.expect(200);
    assert_eq!(info["subject"], "New Group Name");
    assert_eq!(info["topic"], "This is the group description");
    assert_eq!(info["participants"], participants(&alice, &bob));
    let left = server
        .post_empty(&path("bob", &group, "/leave"))
        .await
        .expect(200);
    assert_eq!(left, ok);
}
