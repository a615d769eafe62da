//! Groups across sim sessions of one gateway: creating one (the member session
//! is told), reading it as a member, changing its name, description and
//! settings (members see `group_update`), and the validation of every body.

use serde_json::json;
use switchboard_tests::TestServer;

use crate::group_support::{create, info, jid, path, put, role};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_a_group_makes_the_creator_superadmin_and_tells_the_added_session() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let mut stream = server.open_stream("session=bob&events=joined_group").await;

    let created = server
        .post(
            "/api/v1/sessions/alice/groups",
            json!({ "name": "Team", "participants": [format!("+{}", bob["phone_number"].as_str().unwrap()), "15559990000"] }),
        )
        .await
        .expect(201);
    let group = created["group_jid"].as_str().unwrap().to_owned();
    let id = group.strip_suffix("@g.us").expect("a group jid");
    assert!(id.len() == 18 && id.starts_with("120363"), "{group}");
    assert!(id.chars().all(|c| c.is_ascii_digit()));
    assert_eq!(
        created["participants"],
        json!([
            { "jid": jid(&bob), "status": "Added" },
            { "jid": "15559990000@s.whatsapp.net", "status": "NotOnNetwork" },
        ])
    );

    let joined = stream.find_event("bob", "joined_group").await;
    assert_eq!(joined["data"]["jid"], group.as_str());
    assert_eq!(joined["data"]["name"], "Team");
    assert_eq!(joined["data"]["reason"], "create");
    assert_eq!(joined["data"]["sender"], jid(&alice).as_str());
    assert_eq!(
        joined["data"]["participants"],
        json!([jid(&alice), jid(&bob)])
    );

    let list = server.get("/api/v1/sessions/bob/groups").await.expect(200);
    assert_eq!(list["total"], 1);
    assert_eq!(
        list["groups"],
        json!([{
            "jid": group, "name": "Team", "subject": "Team", "participant_count": 2,
            "participants": [
                { "jid": jid(&alice), "role": "superadmin", "phone_number": jid(&alice) },
                { "jid": jid(&bob), "role": "member", "phone_number": jid(&bob) },
            ],
            "addressing_mode": "Pn",
        }])
    );

    let got = server.get(&path("bob", &group, "")).await.expect(200);
    assert_eq!(got["jid"], group.as_str());
    assert_eq!(got["name"], "Team");
    assert_eq!(got["topic"], "");
    assert_eq!(got["participant_count"], 2);
    assert!(got["created_at"].as_i64().unwrap() > 0);

    let details = info(&server, "bob", &group).await;
    assert_eq!(details["owner"], jid(&alice).as_str());
    assert_eq!(details["created_at"], got["created_at"]);
    assert_eq!(role(&details, &jid(&alice)).as_deref(), Some("superadmin"));
    assert_eq!(role(&details, &jid(&bob)).as_deref(), Some("member"));
    assert_eq!(
        details["settings"],
        json!({ "membership_approval_mode": "off", "member_add_mode": "admin_add", "member_link_mode": "admin_link" })
    );
    // The bare group id works in paths too.
    server.get(&path("bob", id, "")).await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_takes_the_settings_and_refuses_bad_bodies_naming_the_field() {
    let server = TestServer::start().await;
    server.paired_session("alice").await;
    let url = "/api/v1/sessions/alice/groups";
    let created = server
        .post(
            url,
            json!({ "name": "Open", "participants": [], "membership_approval_mode": "on", "member_add_mode": "all_member_add", "member_link_mode": "all_member_link" }),
        )
        .await
        .expect(201);
    let details = info(&server, "alice", created["group_jid"].as_str().unwrap()).await;
    assert_eq!(details["settings"]["membership_approval_mode"], "on");
    assert_eq!(details["settings"]["member_add_mode"], "all_member_add");
    assert_eq!(details["settings"]["member_link_mode"], "all_member_link");
    assert_eq!(details["participants"].as_array().unwrap().len(), 1);

    let cases = [
        (json!({ "participants": [] }), "`name`"),
        (json!({ "name": "  ", "participants": [] }), "`name`"),
        (
            json!({ "name": "x".repeat(101), "participants": [] }),
            "`name`",
        ),
        (json!({ "name": "T" }), "`participants`"),
        (
            json!({ "name": "T", "participants": ["15551234567", "1@g.us"] }),
            "`participants[1]`",
        ),
        (
            json!({ "name": "T", "participants": ["not a phone"] }),
            "`participants[0]`",
        ),
        (
            json!({ "name": "T", "participants": [], "member_add_mode": "everyone" }),
            "`member_add_mode`",
        ),
        (
            json!({ "name": "T", "participants": [], "membership_approval_mode": true }),
            "`membership_approval_mode`",
        ),
        (
            json!({ "name": "T", "participants": [], "subject": "x" }),
            "subject",
        ),
    ];
    for (body, field) in cases {
        let msg = server
            .post(url, body.clone())
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(field), "{body}: {msg}");
    }
    let list = server
        .get("/api/v1/sessions/alice/groups")
        .await
        .expect(200);
    assert_eq!(list["total"], 1, "refused creates changed nothing");

    server
        .post(
            "/api/v1/sessions/ghost/groups",
            json!({ "name": "T", "participants": [] }),
        )
        .await
        .expect_error(404, "session_not_found");
    server.create_session("idle").await;
    server
        .post(
            "/api/v1/sessions/idle/groups",
            json!({ "name": "T", "participants": [] }),
        )
        .await
        .expect_error(409, "invalid_session_state");
    server
        .get("/api/v1/sessions/idle/groups")
        .await
        .expect_error(409, "invalid_session_state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn name_description_and_settings_changes_reach_the_member_and_show_in_reads() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let group = create(&server, "alice", "Team", &[&jid(&bob)]).await;
    let mut stream = server.open_stream("session=bob&events=group_update").await;

    put(
        &server,
        &path("alice", &group, "/subject"),
        json!({ "subject": "Renamed" }),
    )
    .await
    .expect(200);
    let ev = stream.find_event("bob", "group_update").await;
    assert_eq!(ev["data"]["jid"], group.as_str());
    assert_eq!(ev["data"]["sender"], jid(&alice).as_str());
    assert_eq!(ev["data"]["name"], "Renamed");
    assert!(ev["data"]["timestamp"].as_i64().unwrap() > 0);
    assert_eq!(
        server.get(&path("bob", &group, "")).await.expect(200)["name"],
        "Renamed"
    );

    let desc = path("alice", &group, "/description");
    put(
        &server,
        &desc,
        json!({ "description": "House rules", "prev_id": null }),
    )
    .await
    .expect(200);
    let ev = stream.find_event("bob", "group_update").await;
    assert_eq!(ev["data"]["topic"], "House rules");
    let got = server.get(&path("bob", &group, "")).await.expect(200);
    assert_eq!(got["topic"], "House rules");
    let first_id = got["topic_id"]
        .as_str()
        .expect("a description id")
        .to_owned();
    assert_eq!(ev["data"]["topic_id"], first_id.as_str());

    put(
        &server,
        &desc,
        json!({ "description": "Newer", "prev_id": "STALE" }),
    )
    .await
    .expect_error(409, "description_conflict");
    put(
        &server,
        &desc,
        json!({ "description": "Newer", "prev_id": first_id }),
    )
    .await
    .expect(200);
    let details = info(&server, "bob", &group).await;
    assert_eq!(details["topic"], "Newer");
    assert_ne!(details["topic_id"], first_id.as_str());
    put(&server, &desc, json!({ "description": null }))
        .await
        .expect(200);
    let ev = stream
        .find(|e| e["event"] == "group_update" && e["data"]["topic"].is_null())
        .await;
    assert!(ev["data"]["topic_id"].is_null());
    let got = server.get(&path("bob", &group, "")).await.expect(200);
    assert_eq!(got["topic"], "");
    assert!(got["topic_id"].is_null());

    let settings = path("alice", &group, "/settings");
    put(
        &server,
        &settings,
        json!({ "member_add_mode": "all_member_add" }),
    )
    .await
    .expect(200);
    let ev = stream.find_event("bob", "group_update").await;
    assert_eq!(ev["data"]["member_add_mode"], "all_member_add");
    assert!(
        ev["data"].get("member_link_mode").is_none(),
        "only what changed: {ev}"
    );
    let details = info(&server, "bob", &group).await;
    assert_eq!(
        details["settings"],
        json!({ "membership_approval_mode": "off", "member_add_mode": "all_member_add", "member_link_mode": "admin_link" })
    );
    // Repeating a value changes nothing and tells nobody; a later change is the next event.
    put(
        &server,
        &settings,
        json!({ "member_add_mode": "all_member_add", "membership_approval_mode": "on" }),
    )
    .await
    .expect(200);
    let ev = stream.find_event("bob", "group_update").await;
    assert_eq!(ev["data"]["membership_approval_mode"], "on");
    assert!(ev["data"].get("member_add_mode").is_none(), "{ev}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_bodies_are_validated_before_anything_changes() {
    let server = TestServer::start().await;
    server.paired_session("alice").await;
    let group = create(&server, "alice", "Team", &[]).await;
    let subject = path("alice", &group, "/subject");
    let desc = path("alice", &group, "/description");
    let settings = path("alice", &group, "/settings");
    let refused = [
        (subject.clone(), json!({ "subject": "" }), "`subject`"),
        (subject.clone(), json!({}), "`subject`"),
        (
            subject.clone(),
            json!({ "subject": "y".repeat(101) }),
            "`subject`",
        ),
        (desc.clone(), json!({ "prev_id": null }), "`description`"),
        (
            desc.clone(),
            json!({ "description": "d".repeat(2049) }),
            "`description`",
        ),
        (
            desc.clone(),
            json!({ "description": "d", "prev_id": 7 }),
            "`prev_id`",
        ),
        (
            settings.clone(),
            json!({ "member_link_mode": "anyone" }),
            "`member_link_mode`",
        ),
        (settings.clone(), json!({ "announce": true }), "announce"),
    ];
    for (url, body, field) in refused {
        let msg = put(&server, &url, body.clone())
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(field), "{body}: {msg}");
    }
    let details = info(&server, "alice", &group).await;
    assert_eq!(details["name"], "Team");
    assert_eq!(details["topic"], "");
    assert_eq!(details["settings"]["member_link_mode"], "admin_link");
    // An empty settings body is a valid no-op.
    put(&server, &settings, json!({})).await.expect(200);
    put(
        &server,
        &path("alice", "15551234567@s.whatsapp.net", "/subject"),
        json!({ "subject": "x" }),
    )
    .await
    .expect_error(400, "invalid_path");
}
