//! The account's own profile on the sim, through the HTTP API: the push
//! name, about text and picture are set and read back, another session
//! with the account in its address book hears each change and sees it in
//! its lookups, they outlive a restart, and bad input is refused.

use base64::Engine as _;
use serde_json::json;
use switchboard_tests::TestServer;

use crate::contacts_support::add_to_book;

/// A tiny PNG.
fn png() -> Vec<u8> {
    let picture =
        image::RgbImage::from_fn(8, 8, |x, y| image::Rgb([x as u8 * 30, y as u8 * 30, 90]));
    let mut out = Vec::new();
    picture
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_change_is_read_back_heard_by_a_contact_and_seen_in_its_lookups() {
    let mut server = TestServer::start().await;
    let me = server.paired_session("me").await;
    let phone = me["phone_number"].as_str().unwrap().to_owned();
    server.paired_session("friend").await;
    add_to_book(
        &server,
        "friend",
        json!({ "phone": phone, "full_name": "Me" }),
    )
    .await;
    let mut stream = server.open_stream("session=friend").await;

    let named = server
        .put(
            "/api/v1/sessions/me/profile/name",
            json!({ "name": "  Ada Support " }),
        )
        .await
        .expect(200);
    assert_eq!(named["push_name"], "Ada Support");
    let heard = stream.find_event("friend", "push_name_update").await;
    assert_eq!(heard["data"]["push_name"], "Ada Support", "{heard}");
    let session = server.get("/api/v1/sessions/me").await.expect(200);
    assert_eq!(
        session["push_name"], "Ada Support",
        "the session shows it: {session}"
    );

    server
        .put(
            "/api/v1/sessions/me/profile/about",
            json!({ "about": "Open 9 to 5" }),
        )
        .await
        .expect(200);
    let heard = stream.find_event("friend", "user_about_update").await;
    assert_eq!(heard["data"]["about"], "Open 9 to 5");

    let b64 = base64::engine::general_purpose::STANDARD.encode(png());
    let set = server
        .put(
            "/api/v1/sessions/me/profile/picture",
            json!({ "data": b64 }),
        )
        .await
        .expect(200);
    let picture_id = set["picture_id"].as_str().unwrap().to_owned();
    let heard = stream.find_event("friend", "picture_update").await;
    assert_eq!(heard["data"]["action"], "set");
    assert_eq!(heard["data"]["picture_id"], picture_id.as_str());

    let mine = server.get("/api/v1/sessions/me/profile").await.expect(200);
    assert_eq!(mine["push_name"], "Ada Support", "{mine}");
    assert_eq!(mine["about"], "Open 9 to 5");
    assert_eq!(mine["picture"]["id"], picture_id.as_str());
    let jid = mine["jid"].as_str().unwrap().to_owned();
    let seen = server
        .get(&format!("/api/v1/sessions/friend/contacts/{jid}/picture"))
        .await
        .expect(200);
    assert_eq!(
        seen["id"],
        picture_id.as_str(),
        "the contact's lookup sees it: {seen}"
    );

    server.restart().await;
    server.wait_for_status("me", "logged_in").await;
    let after = server.get("/api/v1/sessions/me/profile").await.expect(200);
    assert_eq!(
        after["about"], "Open 9 to 5",
        "kept across a restart: {after}"
    );
    assert_eq!(after["picture"]["id"], picture_id.as_str());

    let removed = server
        .delete("/api/v1/sessions/me/profile/picture")
        .await
        .expect(200);
    assert_eq!(removed["has_picture"], false);
    let cleared = server
        .put("/api/v1/sessions/me/profile/about", json!({ "about": "" }))
        .await
        .expect(200);
    assert_eq!(cleared["about"], json!(null));
    let now = server.get("/api/v1/sessions/me/profile").await.expect(200);
    assert_eq!(
        (now["about"].clone(), now["picture"].clone()),
        (json!(null), json!(null))
    );
}

#[tokio::test]
async fn bad_profile_input_is_refused_with_the_field_and_nothing_changes() {
    let server = TestServer::start().await;
    server.paired_session("me").await;
    for (path, body, field) in [
        ("name", json!({ "name": "   " }), "name"),
        ("name", json!({ "name": "x".repeat(26) }), "name"),
        ("about", json!({ "about": "y".repeat(140) }), "about"),
        ("picture", json!({ "data": "%% not base64" }), "data"),
        ("picture", json!({ "data": "" }), "data"),
    ] {
        let message = server
            .put(&format!("/api/v1/sessions/me/profile/{path}"), body)
            .await
            .expect_error(400, "invalid_field");
        assert!(message.contains(field), "{message}");
    }
    let not_an_image = base64::engine::general_purpose::STANDARD.encode(b"plain text, no picture");
    server
        .put(
            "/api/v1/sessions/me/profile/picture",
            json!({ "data": not_an_image }),
        )
        .await
        .expect_error(422, "network_rejected");
    server
        .put("/api/v1/sessions/me/profile/name", json!({ "nick": "a" }))
        .await
        .expect_error(400, "invalid_field");
    let profile = server.get("/api/v1/sessions/me/profile").await.expect(200);
    assert_eq!(
        (profile["about"].clone(), profile["picture"].clone()),
        (json!(null), json!(null))
    );

    server.create_session("off").await;
    server
        .get("/api/v1/sessions/off/profile")
        .await
        .expect_error(409, "invalid_session_state");
}
