//! Session operations: spam reports, trust contact tokens (issue, get, the
//! literal `list` route, expiry and prune), and the stored auto-reconnect and
//! history-sync settings that answer while the session is down.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::{TestServer, eventually};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spam_report_reaches_the_network_and_answers_a_report_id() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let body = server
        .post(
            "/api/v1/sessions/s/spam/report",
            json!({ "message_id": "M1", "message_timestamp": 1_700_000_000, "from_jid": "+1 555 000 1111" }),
        )
        .await
        .expect(200);
    assert_eq!(body["success"], true);
    let id = body["report_id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    for flow in [
        "message_menu",
        "group_spam_banner_report",
        "group_info_report",
        "contact_info",
        "status_report",
    ] {
        server
            .post(
                "/api/v1/sessions/s/spam/report",
                json!({
                    "message_id": "M2", "message_timestamp": 1.5, "spam_flow": flow,
                    "group_jid": "120363000000000001@g.us", "group_subject": "Team",
                    "participant_jid": "777@lid", "media_type": "image",
                }),
            )
            .await
            .expect(200);
    }
    let got = server
        .get("/api/v1/sim/sessions/s/spam-reports")
        .await
        .expect(200);
    assert_eq!(got["count"], 6);
    let first = &got["reports"][0];
    assert_eq!(first["report_id"], id.as_str());
    assert_eq!(first["spam_flow"], "message_menu", "the default flow");
    assert_eq!(first["from_jid"], "15550001111@s.whatsapp.net");
    assert_eq!(got["reports"][5]["spam_flow"], "status_report");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_spam_report_is_a_400_naming_the_field_and_reaches_nothing() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let ok = json!({ "message_id": "M1", "message_timestamp": 1 });
    let with = |k: &str, v: Value| {
        let mut b = ok.clone();
        b[k] = v;
        b
    };
    for (body, field) in [
        (with("spam_flow", json!("menu")), "spam_flow"),
        (with("message_id", json!(" ")), "message_id"),
        (
            with("message_timestamp", json!("yesterday")),
            "message_timestamp",
        ),
        (with("message_timestamp", json!(-1)), "message_timestamp"),
        (
            with("group_jid", json!("15550001111@s.whatsapp.net")),
            "group_jid",
        ),
        (with("from_jid", json!("x")), "from_jid"),
        (with("reason", json!("x")), "reason"),
        (json!({ "message_timestamp": 1 }), "message_id"),
        (json!({ "message_id": "M1" }), "message_timestamp"),
    ] {
        let msg = server
            .post("/api/v1/sessions/s/spam/report", body)
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(&format!("`{field}`")), "{msg}");
    }
    let got = server
        .get("/api/v1/sim/sessions/s/spam-reports")
        .await
        .expect(200);
    assert_eq!(got["count"], 0);
    server
        .post("/api/v1/sessions/ghost/spam/report", ok.clone())
        .await
        .expect_error(404, "session_not_found");
    server
        .post_empty("/api/v1/sessions/s/pause")
        .await
        .expect(200);
    server
        .post("/api/v1/sessions/s/spam/report", ok)
        .await
        .expect_error(409, "session_paused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issued_tokens_are_stored_on_both_sides_and_read_back() {
    let server = TestServer::start().await;
    let a = server.paired_session("a").await;
    let b = server.paired_session("b").await;
    let a_jid = a["jid"].as_str().unwrap();
    let b_jid = b["jid"].as_str().unwrap();
    let body = server
        .post(
            "/api/v1/sessions/a/tctoken/issue",
            json!({ "jids": [b_jid, "+1 555 000 1111", b_jid] }),
        )
        .await
        .expect(200);
    let tokens = body["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 2, "duplicates are issued once: {body}");
    assert_eq!(tokens[0]["jid"], b_jid);
    assert_eq!(tokens[1]["jid"], "15550001111@s.whatsapp.net");
    let issued_at = tokens[0]["timestamp"].as_i64().unwrap();
    assert!(issued_at > 1_700_000_000);
    let mine = server
        .get(&format!("/api/v1/sessions/a/tctoken/{b_jid}"))
        .await
        .expect(200);
    assert_eq!(mine["found"], true);
    assert_eq!(mine["sender_timestamp"], issued_at);
    assert_eq!(mine["token_timestamp"], Value::Null);
    let theirs = server
        .get(&format!("/api/v1/sessions/b/tctoken/{a_jid}"))
        .await
        .expect(200);
    assert_eq!(theirs["found"], true, "the peer session received the token");
    assert_eq!(theirs["token_timestamp"], issued_at);
    assert_eq!(theirs["sender_timestamp"], Value::Null);
    let list = server
        .get("/api/v1/sessions/a/tctoken/list")
        .await
        .expect(200);
    let mut want = vec![b_jid.to_owned(), "15550001111@s.whatsapp.net".to_owned()];
    want.sort();
    assert_eq!(
        list,
        json!({ "jids": want }),
        "`list` is the listing route, not a JID"
    );
    let none = server
        .get("/api/v1/sessions/a/tctoken/15559999999@s.whatsapp.net")
        .await
        .expect(200);
    assert_eq!(
        none,
        json!({ "jid": "15559999999@s.whatsapp.net", "token_timestamp": null, "sender_timestamp": null, "found": false, "expired": false })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_read_while_disconnected_but_issued_only_while_logged_in() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sessions/s/tctoken/issue",
            json!({ "jids": ["15550001111"] }),
        )
        .await
        .expect(200);
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    let got = server
        .get("/api/v1/sessions/s/tctoken/15550001111@s.whatsapp.net")
        .await
        .expect(200);
    assert_eq!(got["found"], true);
    assert_eq!(
        server
            .get("/api/v1/sessions/s/tctoken/list")
            .await
            .expect(200)["jids"][0],
        "15550001111@s.whatsapp.net"
    );
    server
        .delete("/api/v1/sessions/s/tctoken/expired")
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sessions/s/tctoken/issue",
            json!({ "jids": ["15550001111"] }),
        )
        .await
        .expect_error(409, "invalid_session_state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_token_requests_are_400s_and_unknown_sessions_404s() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    for (body, field) in [
        (json!({ "jids": [] }), "jids"),
        (
            json!({ "jids": ["15550001111", "120363000000000001@g.us"] }),
            "jids[1]",
        ),
        (json!({}), "jids"),
    ] {
        let msg = server
            .post("/api/v1/sessions/s/tctoken/issue", body)
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(&format!("`{field}`")), "{msg}");
    }
    server
        .get("/api/v1/sessions/s/tctoken/nonsense")
        .await
        .expect_error(400, "invalid_field");
    for (method, path) in [
        (Method::GET, "/api/v1/sessions/ghost/tctoken/list"),
        (
            Method::GET,
            "/api/v1/sessions/ghost/tctoken/15550001111@s.whatsapp.net",
        ),
        (Method::DELETE, "/api/v1/sessions/ghost/tctoken/expired"),
    ] {
        server
            .call(method, path, None)
            .await
            .expect_error(404, "session_not_found");
    }
    server
        .post(
            "/api/v1/sessions/ghost/tctoken/issue",
            json!({ "jids": ["15550001111"] }),
        )
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_expire_after_their_lifetime_and_prune_removes_them() {
    let server =
        TestServer::start_with(|c| c.sim.tctoken_lifetime = Duration::from_millis(2000)).await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sessions/s/tctoken/issue",
            json!({ "jids": ["15550001111", "15550002222"] }),
        )
        .await
        .expect(200);
    let fresh = server
        .get("/api/v1/sessions/s/tctoken/15550001111@s.whatsapp.net")
        .await
        .expect(200);
    assert_eq!(fresh["expired"], false);
    assert_eq!(
        server
            .delete("/api/v1/sessions/s/tctoken/expired")
            .await
            .expect(200),
        json!({ "pruned_count": 0 }),
        "nothing has expired yet"
    );
    eventually("the first tokens to expire", || async {
        let t = server
            .get("/api/v1/sessions/s/tctoken/15550001111@s.whatsapp.net")
            .await
            .expect(200);
        (t["expired"] == true).then_some(())
    })
    .await;
    server
        .post(
            "/api/v1/sessions/s/tctoken/issue",
            json!({ "jids": ["15550003333"] }),
        )
        .await
        .expect(200);
    let old = server
        .get("/api/v1/sessions/s/tctoken/15550001111@s.whatsapp.net")
        .await
        .expect(200);
    assert_eq!(old["found"], true, "an expired token stays until pruned");
    assert_eq!(old["expired"], true);
    assert_eq!(
        server
            .delete("/api/v1/sessions/s/tctoken/expired")
            .await
            .expect(200),
        json!({ "pruned_count": 2 })
    );
    assert_eq!(
        server
            .get("/api/v1/sessions/s/tctoken/list")
            .await
            .expect(200),
        json!({ "jids": ["15550003333@s.whatsapp.net"] })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_and_history_sync_are_stored_settings_read_while_disconnected() {
    let mut server = TestServer::start().await;
    server.create_session("s").await;
    assert_eq!(
        server.get("/api/v1/sessions/s/reconnect").await.expect(200),
        json!({ "enabled": true, "error_count": 0, "cooldown_until": null, "next_attempt": null })
    );
    assert_eq!(
        server
            .get("/api/v1/sessions/s/history-sync")
            .await
            .expect(200),
        json!({ "skip_history_sync": false })
    );
    let set = server
        .call(
            Method::PUT,
            "/api/v1/sessions/s/reconnect",
            Some(json!({ "enabled": false })),
        )
        .await
        .expect(200);
    assert_eq!(set["enabled"], false);
    assert_eq!(set["error_count"], 0);
    let set = server
        .call(
            Method::PUT,
            "/api/v1/sessions/s/history-sync",
            Some(json!({ "skip": true })),
        )
        .await
        .expect(200);
    assert_eq!(set, json!({ "skip_history_sync": true }));
    assert_eq!(
        server.get("/api/v1/sessions/s").await.body["auto_reconnect"],
        false
    );
    server.restart().await;
    assert_eq!(
        server.get("/api/v1/sessions/s/reconnect").await.expect(200)["enabled"],
        false
    );
    assert_eq!(
        server
            .get("/api/v1/sessions/s/history-sync")
            .await
            .expect(200),
        json!({ "skip_history_sync": true })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_and_history_sync_refuse_bad_bodies_and_404_unknown_sessions() {
    let server = TestServer::start().await;
    server.create_session("s").await;
    for (path, body, field) in [
        ("reconnect", json!({ "enabled": "yes" }), "enabled"),
        ("reconnect", json!({}), "enabled"),
        ("history-sync", json!({ "skip": 1 }), "skip"),
        ("history-sync", json!({}), "skip"),
        ("history-sync", json!({ "skip": true, "also": 1 }), "also"),
    ] {
        let msg = server
            .call(
                Method::PUT,
                &format!("/api/v1/sessions/s/{path}"),
                Some(body),
            )
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(&format!("`{field}`")), "{msg}");
    }
    for path in ["reconnect", "history-sync"] {
        server
            .get(&format!("/api/v1/sessions/ghost/{path}"))
            .await
            .expect_error(404, "session_not_found");
    }
    server
        .call(
            Method::PUT,
            "/api/v1/sessions/ghost/reconnect",
            Some(json!({ "enabled": true })),
        )
        .await
        .expect_error(404, "session_not_found");
    server
        .call(
            Method::PUT,
            "/api/v1/sessions/ghost/history-sync",
            Some(json!({ "skip": true })),
        )
        .await
        .expect_error(404, "session_not_found");
}
