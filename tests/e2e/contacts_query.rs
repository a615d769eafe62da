//! Reading the contact directory: the `q` filter, the page clamp, local
//! reads in any state, and its life with the session (fresh pair, restart,
//! delete); plus the address-book control route's input checks.

use serde_json::{Value, json};
use switchboard_tests::{TestServer, eventually};

use crate::contacts_support::{add_to_book, contact_where, contacts, event};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q_filters_case_insensitively_over_names_phone_and_business_name() {
    let server = TestServer::start().await;
    server
        .post(
            "/api/v1/sim/users",
            json!({ "phone": "15550003333", "business_name": "Corner Bakery" }),
        )
        .await
        .expect(201);
    server.create_session("s").await;
    for entry in [
        json!({ "phone": "15550001111", "full_name": "Ann Smith" }),
        json!({ "phone": "15550002222", "first_name": "Bob" }),
        json!({ "phone": "15550003333", "full_name": "Shop" }),
    ] {
        add_to_book(&server, "s", entry).await;
    }
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    eventually("three contacts", || async {
        (contacts(&server, "s", "").await["total"] == 3).then_some(())
    })
    .await;
    event(
        &server,
        "s",
        "push_name_update",
        json!({ "jid": "15550002222@s.whatsapp.net", "push_name": "Bobby Tables" }),
    )
    .await;
    contact_where(&server, "s", "15550002222", |c| {
        c["push_name"] == "Bobby Tables"
    })
    .await;
    let phones = |body: Value| -> Vec<String> {
        body["contacts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["phone"].as_str().unwrap().to_owned())
            .collect()
    };
    for (q, want) in [
        ("SMITH", vec!["15550001111"]),
        ("bob", vec!["15550002222"]),
        ("TABLES", vec!["15550002222"]),
        ("bakery", vec!["15550003333"]),
        ("0002222", vec!["15550002222"]),
        ("1555000", vec!["15550001111", "15550002222", "15550003333"]),
        ("nobody", vec![]),
    ] {
        let body = contacts(&server, "s", &format!("q={q}")).await;
        assert_eq!(phones(body.clone()), want, "q={q}");
        assert_eq!(body["total"], want.len(), "q={q}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_size_is_clamped_to_1_through_1000_and_offset_pages() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    for n in 1..=3 {
        add_to_book(
            &server,
            "s",
            json!({ "phone": format!("1555000000{n}"), "full_name": format!("C{n}") }),
        )
        .await;
    }
    eventually("three contacts", || async {
        (contacts(&server, "s", "").await["total"] == 3).then_some(())
    })
    .await;
    let body = contacts(&server, "s", "limit=0").await;
    assert_eq!(
        (body["limit"].clone(), body["total"].clone()),
        (json!(1), json!(3))
    );
    assert_eq!(body["contacts"].as_array().unwrap().len(), 1);
    assert_eq!(contacts(&server, "s", "limit=-5").await["limit"], 1);
    assert_eq!(contacts(&server, "s", "limit=5000").await["limit"], 1000);
    let page = contacts(&server, "s", "limit=2&offset=2").await;
    assert_eq!(page["offset"], 2);
    assert_eq!(page["contacts"][0]["phone"], "15550000003");
    assert_eq!(page["contacts"].as_array().unwrap().len(), 1);
    assert_eq!(contacts(&server, "s", "offset=-1").await["offset"], 0);
    assert_eq!(
        contacts(&server, "s", "offset=9").await["contacts"],
        json!([])
    );
    server
        .get("/api/v1/sessions/s/contacts?limit=ten")
        .await
        .expect_error(400, "invalid_query");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_directory_is_local_data_read_while_disconnected_and_unknown_sessions_are_404() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    add_to_book(
        &server,
        "s",
        json!({ "phone": "15550001111", "full_name": "Ann" }),
    )
    .await;
    contact_where(&server, "s", "15550001111", |_| true).await;
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    assert_eq!(contacts(&server, "s", "").await["total"], 1);
    server
        .get("/api/v1/sessions/ghost/contacts")
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_pair_after_logout_starts_with_an_empty_directory() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    event(
        &server,
        "s",
        "push_name_update",
        json!({ "jid": "15550001111@s.whatsapp.net", "push_name": "Ann" }),
    )
    .await;
    contact_where(&server, "s", "15550001111", |_| true).await;
    server
        .post_empty("/api/v1/sessions/s/logout")
        .await
        .expect(200);
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
    assert_eq!(contacts(&server, "s", "").await["total"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_directory_survives_a_restart_and_goes_with_a_deleted_session() {
    let mut server = TestServer::start().await;
    server.paired_session("s").await;
    add_to_book(
        &server,
        "s",
        json!({ "phone": "15550001111", "full_name": "Ann" }),
    )
    .await;
    contact_where(&server, "s", "15550001111", |_| true).await;
    server.restart().await;
    assert_eq!(contacts(&server, "s", "").await["total"], 1);
    server.delete("/api/v1/sessions/s").await.expect(200);
    server.create_session("s").await;
    assert_eq!(contacts(&server, "s", "").await["total"], 0);
    let book = server
        .get("/api/v1/sim/sessions/s/address-book")
        .await
        .expect(200);
    assert_eq!(book["count"], 0, "the address book went with the session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_address_book_control_route_checks_its_input() {
    let server = TestServer::start().await;
    server.create_session("s").await;
    for (body, field) in [
        (json!({ "phone": "abc" }), "phone"),
        (json!({ "phone": "15550001111", "lid": "x@g.us" }), "lid"),
        (json!({ "phone": "15550001111", "nick": "x" }), "nick"),
        (json!({}), "phone"),
    ] {
        let msg = server
            .post("/api/v1/sim/sessions/s/address-book", body)
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(&format!("`{field}`")), "{msg}");
    }
    server
        .post(
            "/api/v1/sim/sessions/ghost/address-book",
            json!({ "phone": "15550001111" }),
        )
        .await
        .expect_error(404, "not_found_on_network");
}
