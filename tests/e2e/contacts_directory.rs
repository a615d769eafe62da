//! The stored contact directory (`GET /sessions/{id}/contacts`): empty after
//! a fresh pair and filled only by the event stream: full and incremental
//! app-state sync, contact notifications, push names and inbound messages.

use serde_json::{Value, json};
use switchboard_tests::TestServer;

use crate::contacts_support::{add_to_book, contact_where, contacts, event, is_sql_datetime};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_directory_is_empty_right_after_a_fresh_pair() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let body = contacts(&server, "s", "").await;
    assert_eq!(
        body,
        json!({ "contacts": [], "total": 0, "limit": 100, "offset": 0 })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_full_app_state_sync_after_pairing_fills_the_directory_from_the_address_book() {
    let server = TestServer::start().await;
    server
        .post(
            "/api/v1/sim/users",
            json!({ "phone": "15550002222", "push_name": "Bakery", "business_name": "ACME Bakery", "lid": "222" }),
        )
        .await
        .expect(201);
    server.create_session("s").await;
    add_to_book(
        &server,
        "s",
        json!({ "phone": "+1 555 000 1111", "full_name": "Ann Smith", "first_name": "Ann", "lid": "111@lid" }),
    )
    .await;
    add_to_book(
        &server,
        "s",
        json!({ "phone": "15550002222", "full_name": "The bakery" }),
    )
    .await;
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
    let ann = contact_where(&server, "s", "15550001111", |_| true).await;
    assert_eq!(
        ann,
        json!({
            "jid": "15550001111@s.whatsapp.net", "phone": "15550001111", "lid_jid": "111@lid",
            "full_name": "Ann Smith", "first_name": "Ann", "push_name": null, "business_name": null,
            "source": "appstate_sync", "updated_at": ann["updated_at"],
        })
    );
    assert!(
        is_sql_datetime(ann["updated_at"].as_str().unwrap()),
        "{ann}"
    );
    let bakery = contact_where(&server, "s", "15550002222", |_| true).await;
    assert_eq!(
        bakery["business_name"], "ACME Bakery",
        "the network adds it"
    );
    assert_eq!(
        bakery["lid_jid"], "222@lid",
        "the network reveals a registered user's lid"
    );
    assert_eq!(contacts(&server, "s", "").await["total"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_book_change_while_online_arrives_as_an_incremental_mutation() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s&events=contact_update").await;
    add_to_book(
        &server,
        "s",
        json!({ "phone": "15550001111", "full_name": "Ann" }),
    )
    .await;
    let c = contact_where(&server, "s", "15550001111", |_| true).await;
    assert_eq!(c["source"], "appstate");
    assert_eq!(c["full_name"], "Ann");
    let env = stream.find_event("s", "contact_update").await;
    assert_eq!(env["data"]["jid"], "15550001111@s.whatsapp.net");
    assert_eq!(env["data"]["full_name"], "Ann");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_made_while_offline_arrive_with_the_next_login() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    add_to_book(
        &server,
        "s",
        json!({ "phone": "15550001111", "first_name": "Ann" }),
    )
    .await;
    assert_eq!(
        contacts(&server, "s", "").await["total"],
        0,
        "not delivered while offline"
    );
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    let c = contact_where(&server, "s", "15550001111", |_| true).await;
    assert_eq!(c["source"], "appstate");
    assert_eq!(c["first_name"], "Ann");
    let book = server
        .get("/api/v1/sim/sessions/s/address-book")
        .await
        .expect(200);
    assert_eq!(book["count"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contact_notification_fills_the_directory_and_keeps_the_lid() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    event(
        &server,
        "s",
        "contact_update",
        json!({ "jid": "15550001111@s.whatsapp.net", "full_name": "Ann Smith", "first_name": "Ann", "lid": "777@lid" }),
    )
    .await;
    let c = contact_where(&server, "s", "15550001111", |_| true).await;
    assert_eq!(c["source"], "notification");
    assert_eq!(c["full_name"], "Ann Smith");
    assert_eq!(c["lid_jid"], "777@lid");
    // A later push name under the lid lands on the same contact.
    event(
        &server,
        "s",
        "push_name_update",
        json!({ "jid": "777@lid", "push_name": "annie" }),
    )
    .await;
    let c = contact_where(&server, "s", "15550001111", |c| c["push_name"] == "annie").await;
    assert_eq!(c["source"], "push_name");
    assert_eq!(
        c["full_name"], "Ann Smith",
        "fields a source does not carry are kept"
    );
    assert_eq!(c["lid_jid"], "777@lid");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_name_update_fills_the_directory() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    event(
        &server,
        "s",
        "push_name_update",
        json!({ "jid": "15550001111@s.whatsapp.net", "push_name": "Ann", "old_push_name": null }),
    )
    .await;
    let c = contact_where(&server, "s", "15550001111", |_| true).await;
    assert_eq!(c["source"], "push_name");
    assert_eq!(c["push_name"], "Ann");
    assert_eq!(c["full_name"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inbound_message_with_a_phone_and_a_push_name_fills_the_directory() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let inbound = |body: Value| {
        let server = &server;
        async move {
            server
                .post("/api/v1/sim/sessions/s/inbound", body)
                .await
                .expect(200)
        }
    };
    inbound(json!({ "from": "15550001111", "text": "hi", "push_name": "Ann" })).await;
    let c = contact_where(&server, "s", "15550001111", |_| true).await;
    assert_eq!(c["source"], "message");
    assert_eq!(c["push_name"], "Ann");
    // An @lid sender whose phone is not known teaches nothing; with the phone
    // beside it, it does, and the lid is kept.
    inbound(json!({ "from": "888@lid", "text": "hi", "push_name": "Lid only" })).await;
    inbound(json!({ "from": "999@lid", "text": "hi", "push_name": "Bo", "sender_phone": "15550003333" }))
        .await;
    let bo = contact_where(&server, "s", "15550003333", |_| true).await;
    assert_eq!(bo["lid_jid"], "999@lid");
    assert_eq!(bo["source"], "message");
    let body = contacts(&server, "s", "").await;
    assert_eq!(body["total"], 2, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_between_sessions_teach_each_other_their_push_names() {
    let server = TestServer::start().await;
    let a = server.paired_session("a").await;
    server.paired_session("b").await;
    let b_phone = server.get("/api/v1/sessions/b").await.body["phone_number"].clone();
    server
        .post(
            "/api/v1/sessions/a/messages/text",
            json!({ "to": b_phone, "text": "hello" }),
        )
        .await
        .expect(200);
    let a_phone = a["phone_number"].as_str().unwrap();
    let c = contact_where(&server, "b", a_phone, |_| true).await;
    assert_eq!(c["push_name"], "Sim a");
    assert_eq!(c["source"], "message");
}
