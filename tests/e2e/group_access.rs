//! Who may do what in a group: a member who is not an admin is refused admin
//! operations until the settings open them, and a session outside the group
//! cannot even see it.

use serde_json::json;
use switchboard_tests::TestServer;

use crate::group_support::{create, info, jid, path, put, role};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_who_is_not_an_admin_is_refused_admin_operations_until_the_settings_open_them() {
    let server = TestServer::start().await;
    server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let carol = server.paired_session("carol").await;
    let group = create(&server, "alice", "Team", &[&jid(&bob)]).await;
    let users = json!({ "participants": [jid(&carol)] });
    let p = |rest: &str| path("bob", &group, rest);
    use reqwest::Method;
    let refused = [
        (Method::PUT, p("/subject"), json!({ "subject": "Mine" })),
        (
            Method::PUT,
            p("/description"),
            json!({ "description": "Mine" }),
        ),
        (
            Method::PUT,
            p("/settings"),
            json!({ "member_add_mode": "all_member_add" }),
        ),
        (Method::POST, p("/participants"), users.clone()),
        (Method::DELETE, p("/participants"), users.clone()),
        (
            Method::POST,
            p("/admins"),
            json!({ "participants": [jid(&bob)] }),
        ),
        (
            Method::DELETE,
            p("/admins"),
            json!({ "participants": [jid(&bob)] }),
        ),
    ];
    for (method, url, body) in refused {
        let msg = crate::group_support::send(&server, method.clone(), &url, body)
            .await
            .expect_error(403, "not_group_admin");
        assert!(msg.contains("admins"), "{method} {url}: {msg}");
    }
    server
        .get(&p("/invite-link"))
        .await
        .expect_error(403, "not_group_admin");
    let details = info(&server, "alice", &group).await;
    assert_eq!(details["name"], "Team");
    assert_eq!(role(&details, &jid(&bob)).as_deref(), Some("member"));

    put(
        &server,
        &path("alice", &group, "/settings"),
        json!({ "member_add_mode": "all_member_add", "member_link_mode": "all_member_link" }),
    )
    .await
    .expect(200);
    let added = server.post(&p("/participants"), users).await.expect(200);
    assert_eq!(added["results"][0]["status"], "Added");
    let link = server.get(&p("/invite-link")).await.expect(200);
    assert!(
        link["invite_link"]
            .as_str()
            .unwrap()
            .starts_with("https://chat.whatsapp.com/")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_outside_the_group_cannot_see_it() {
    let server = TestServer::start().await;
    server.paired_session("alice").await;
    server.paired_session("carol").await;
    let group = create(&server, "alice", "Private", &[]).await;
    for rest in ["", "/info", "/invite-link"] {
        let msg = server
            .get(&path("carol", &group, rest))
            .await
            .expect_error(404, "group_not_found");
        assert!(msg.contains(&group), "{msg}");
    }
    server
        .post_empty(&path("carol", &group, "/leave"))
        .await
        .expect_error(404, "group_not_found");
    put(
        &server,
        &path("carol", &group, "/subject"),
        json!({ "subject": "Mine" }),
    )
    .await
    .expect_error(404, "group_not_found");
    server
        .get(&path("alice", "120363999999999999@g.us", ""))
        .await
        .expect_error(404, "group_not_found");
    let list = server
        .get("/api/v1/sessions/carol/groups")
        .await
        .expect(200);
    assert_eq!(list, json!({ "groups": [], "total": 0 }));
    let list = server
        .get("/api/v1/sessions/alice/groups")
        .await
        .expect(200);
    assert_eq!(list["groups"][0]["jid"], group.as_str());
}
