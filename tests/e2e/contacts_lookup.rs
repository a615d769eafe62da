//! Contact lookups the network answers: which phones are registered, contact
//! info, profile pictures and user info; answered by the sim from its
//! registered users and this gateway's sim sessions.

use serde_json::{Value, json};
use switchboard_tests::TestServer;

/// A server with a logged-in session `s`, a peer session `peer` and two
/// registered users: a business with a picture, and a plain user.
async fn world() -> (TestServer, String) {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let peer = server.paired_session("peer").await;
    server
        .post(
            "/api/v1/sim/users",
            json!({
                "phone": "15550002222", "push_name": "Bakery", "business_name": "ACME Bakery",
                "lid": "222", "picture_url": "https://pics.example/bakery.jpg",
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
    (server, peer["phone_number"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_tells_which_phones_are_on_the_network() {
    let (server, peer) = world().await;
    let body = server
        .post(
            "/api/v1/sessions/s/contacts/check",
            json!({ "phones": ["+1 555 000 1111", peer, "15559999999"] }),
        )
        .await
        .expect(200);
    assert_eq!(
        body,
        json!({ "results": [
            { "phone": "+1 555 000 1111", "exists": true, "is_registered": true, "jid": "15550001111@s.whatsapp.net" },
            { "phone": peer, "exists": true, "is_registered": true, "jid": format!("{peer}@s.whatsapp.net") },
            { "phone": "15559999999", "exists": false, "is_registered": false, "jid": null },
        ]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waxum_client_checks_phone_numbers_and_reads_is_registered() {
    let (server, _) = world().await;
    let body = server
        .post(
            "/api/v1/sessions/s/contacts/check",
            json!({ "phone_numbers": ["15550001111", "15559999999"] }),
        )
        .await
        .expect(200);
    let registered: Vec<bool> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["is_registered"].as_bool().unwrap())
        .collect();
    assert_eq!(registered, [true, false], "{body}");
    let m = server
        .post(
            "/api/v1/sessions/s/contacts/check",
            json!({ "phones": ["15550001111"], "phone_numbers": ["15559999999"] }),
        )
        .await
        .expect_error(400, "invalid_body");
    assert!(
        m.contains("duplicate field `phones`"),
        "both spellings at once are refused: {m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_refuses_bad_lists_and_sessions_that_cannot_ask() {
    let (server, _) = world().await;
    for (body, field) in [
        (json!({ "phones": [] }), "phones"),
        (json!({ "phones": ["15550001111", "abc"] }), "phones[1]"),
        (
            json!({ "phones": ["120363000000000001@g.us"] }),
            "phones[0]",
        ),
        (json!({}), "phones"),
    ] {
        let msg = server
            .post("/api/v1/sessions/s/contacts/check", body)
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(&format!("`{field}`")), "{msg}");
    }
    let many: Vec<String> = (0..1001).map(|n| format!("1555{n:07}")).collect();
    server
        .post(
            "/api/v1/sessions/s/contacts/check",
            json!({ "phones": many }),
        )
        .await
        .expect_error(400, "invalid_field");
    server.create_session("idle").await;
    server
        .post(
            "/api/v1/sessions/idle/contacts/check",
            json!({ "phones": ["15550001111"] }),
        )
        .await
        .expect_error(409, "invalid_session_state");
    server
        .post(
            "/api/v1/sessions/ghost/contacts/check",
            json!({ "phones": ["15550001111"] }),
        )
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contact_info_comes_from_the_network_and_the_saved_name_from_the_address_book() {
    let (server, peer) = world().await;
    let pic = server
        .get("/api/v1/sessions/s/contacts/15550002222@s.whatsapp.net/picture")
        .await
        .expect(200);
    let info = |jid: Value| {
        let server = &server;
        async move {
            server
                .post("/api/v1/sessions/s/contacts/info", json!({ "jid": jid }))
                .await
        }
    };
    assert_eq!(
        info(json!("15550002222@s.whatsapp.net")).await.expect(200),
        json!({
            "jid": "15550002222@s.whatsapp.net", "name": "Bakery", "notify": "Bakery", "verified_name": "ACME Bakery",
            "lid": "222@lid", "is_registered": true, "is_business": true, "status": null, "picture_id": pic["id"],
        })
    );
    server
        .post(
            "/api/v1/sim/sessions/s/address-book",
            json!({ "phone": "15550001111", "full_name": "Ann Smith" }),
        )
        .await
        .expect(201);
    let ann = info(json!("+15550001111")).await.expect(200);
    assert_eq!(
        ann,
        json!({
            "jid": "15550001111@s.whatsapp.net", "name": "Ann Smith", "notify": "Ann", "verified_name": null,
            "lid": null, "is_registered": true, "is_business": false, "status": null, "picture_id": null,
        })
    );
    let p = info(json!(peer)).await.expect(200);
    assert_eq!(
        p["notify"], "Sim peer",
        "a sim session of this gateway is on the network"
    );
    let by_lid = info(json!("222@lid")).await.expect(200);
    assert_eq!(by_lid["jid"], "222@lid");
    assert_eq!(by_lid["verified_name"], "ACME Bakery");
    info(json!("15559999999"))
        .await
        .expect_error(404, "not_found_on_network");
    for bad in [json!("120363000000000001@g.us"), json!("nope"), json!(5)] {
        info(bad).await.expect_error(400, "invalid_field");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_picture_has_a_url_and_a_stable_id() {
    let (server, peer) = world().await;
    let pic = server
        .get("/api/v1/sessions/s/contacts/15550002222@s.whatsapp.net/picture")
        .await
        .expect(200);
    assert_eq!(pic["url"], "https://pics.example/bakery.jpg");
    let id = pic["id"].as_str().unwrap();
    assert_eq!(id.len(), 10);
    let again = server
        .get("/api/v1/sessions/s/contacts/15550002222%40s.whatsapp.net/picture")
        .await
        .expect(200);
    assert_eq!(
        again["id"], id,
        "percent-encoded paths work and the id is stable"
    );
    server
        .get("/api/v1/sessions/s/contacts/15550001111@s.whatsapp.net/picture")
        .await
        .expect_error(404, "no_profile_picture");
    server
        .get(&format!("/api/v1/sessions/s/contacts/{peer}/picture"))
        .await
        .expect_error(404, "no_profile_picture");
    server
        .get("/api/v1/sessions/s/contacts/15559999999@s.whatsapp.net/picture")
        .await
        .expect_error(404, "not_found_on_network");
    server
        .get("/api/v1/sessions/s/contacts/not-a-jid/picture")
        .await
        .expect_error(400, "invalid_field");
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    server
        .get("/api/v1/sessions/s/contacts/15550002222@s.whatsapp.net/picture")
        .await
        .expect_error(409, "invalid_session_state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_info_lists_the_users_on_the_network_and_leaves_out_the_rest() {
    let (server, peer) = world().await;
    let pic = server
        .get("/api/v1/sessions/s/contacts/15550002222@s.whatsapp.net/picture")
        .await
        .expect(200);
    let body = server
        .post(
            "/api/v1/sessions/s/contacts/users",
            json!({ "jids": ["15550002222@s.whatsapp.net", "15559999999@s.whatsapp.net", peer, "15550002222"] }),
        )
        .await
        .expect(200);
    assert_eq!(
        body,
        json!({ "users": [
            {
                "jid": "15550002222@s.whatsapp.net", "verified_name": "ACME Bakery", "picture_id": pic["id"],
                "lid": "222@lid", "is_business": true, "status": null,
            },
            {
                "jid": format!("{peer}@s.whatsapp.net"), "verified_name": null, "picture_id": null,
                "lid": null, "is_business": false, "status": null,
            },
        ]})
    );
    for (body, field) in [
        (json!({ "jids": [] }), "jids"),
        (json!({ "jids": ["x"] }), "jids[0]"),
        (json!({ "jids": "15550002222" }), "jids"),
    ] {
        let msg = server
            .post("/api/v1/sessions/s/contacts/users", body)
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(&format!("`{field}`")), "{msg}");
    }
    server
        .post_empty("/api/v1/sessions/s/pause")
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sessions/s/contacts/users",
            json!({ "jids": [peer] }),
        )
        .await
        .expect_error(409, "session_paused");
}
