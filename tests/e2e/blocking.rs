//! The blocklist on the simulated network (`…/blocking/…`, waxum's routes):
//! a blocked account's messages never reach the session, an unblocked
//! one's do again, the list survives a restart, and bad input is refused
//! naming its field.

use serde_json::json;
use switchboard_tests::{TestServer, eventually};

const GRETA: &str = "4915112345678";

async fn with_greta() -> TestServer {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/users",
            json!({ "phone": GRETA, "push_name": "Greta" }),
        )
        .await
        .expect(201);
    server
}

async fn greta_writes(server: &TestServer, text: &str) {
    server
        .post(
            "/api/v1/sim/sessions/s/inbound",
            json!({ "from": format!("+{GRETA}"), "text": text }),
        )
        .await
        .expect(200);
}

async fn texts(server: &TestServer) -> Vec<String> {
    server
        .inbound_messages("s")
        .await
        .iter()
        .filter_map(|m| m["body"]["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_accounts_messages_do_not_arrive_until_it_is_unblocked_and_the_list_survives_a_restart()
 {
    let mut server = with_greta().await;
    let jid = format!("{GRETA}@s.whatsapp.net");
    let list = server
        .get("/api/v1/sessions/s/blocking/list")
        .await
        .expect(200);
    assert_eq!(list, json!({ "blocked": [], "count": 0, "entries": [] }));

    let blocked = server
        .post(
            "/api/v1/sessions/s/blocking/block",
            json!({ "jid": format!("+{GRETA}") }),
        )
        .await
        .expect(200);
    assert_eq!(blocked, json!({ "jid": jid, "blocked": true }));
    let list = server
        .get("/api/v1/sessions/s/blocking/list")
        .await
        .expect(200);
    assert_eq!(list["blocked"], json!([jid]), "{list}");
    assert_eq!(list["count"], 1);
    assert!(
        list["entries"][0]["blocked_at"].as_i64().unwrap() > 0,
        "{list}"
    );
    let check = server
        .get(&format!("/api/v1/sessions/s/blocking/check/{GRETA}"))
        .await
        .expect(200);
    assert_eq!(check, json!({ "jid": jid, "is_blocked": true }));

    greta_writes(&server, "are you there?").await;
    server.restart().await;
    eventually("the session to log in again", || async {
        let status = server.get("/api/v1/sessions/s/status").await.body;
        (status["status"] == "logged_in").then_some(())
    })
    .await;
    let list = server
        .get("/api/v1/sessions/s/blocking/list")
        .await
        .expect(200);
    assert_eq!(
        list["blocked"],
        json!([jid]),
        "kept across a restart: {list}"
    );
    greta_writes(&server, "hello?").await;

    server
        .post("/api/v1/sessions/s/blocking/unblock", json!({ "jid": jid }))
        .await
        .expect(200);
    greta_writes(&server, "finally").await;
    eventually("the message after the unblock", || async {
        texts(&server)
            .await
            .contains(&"finally".to_owned())
            .then_some(())
    })
    .await;
    assert_eq!(
        texts(&server).await,
        ["finally"],
        "what she wrote while blocked never arrived"
    );
    let check = server
        .get(&format!("/api/v1/sessions/s/blocking/check/{GRETA}"))
        .await
        .expect(200);
    assert_eq!(check["is_blocked"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_refuses_what_is_not_an_account_and_needs_a_connected_session() {
    let server = with_greta().await;
    for (body, field) in [
        (json!({ "jid": "not a number" }), "jid"),
        (json!({ "jid": "120363000000000001@g.us" }), "jid"),
        (json!({}), "jid"),
        (json!({ "jid": GRETA, "extra": 1 }), "extra"),
    ] {
        let r = server
            .post("/api/v1/sessions/s/blocking/block", body.clone())
            .await;
        assert_eq!(r.status.as_u16(), 400, "{body}: {}", r.body);
        let msg = r.body["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(field), "{body}: {msg}");
    }
    server
        .post(
            "/api/v1/sessions/nobody/blocking/block",
            json!({ "jid": GRETA }),
        )
        .await
        .expect_error(404, "session_not_found");
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    server
        .get("/api/v1/sessions/s/blocking/list")
        .await
        .expect_error(409, "invalid_session_state");
}
