//! Reading blasts back (a job's recipients, per-session and fleet-wide
//! listings with their filters), the refusals of cancel and retry, and the
//! session delete cascade.

use serde_json::{Value, json};

use crate::blasts_support::{create, phones, server, text_blast, wait_status};

/// A start far enough ahead that the worker leaves the job alone during a test.
const LATER: &str = "2999-01-01T00:00:00Z";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recipients_are_listed_in_order_filtered_by_status_and_paged() {
    let server = server().await;
    server.paired_session("s").await;
    let mut list = phones(1200);
    list.push(list[0].clone());
    let id = create(&server, "s", text_blast(&list, json!({ "send_at": LATER }))).await;
    let page = |q: &'static str| {
        let server = &server;
        let id = id.clone();
        async move {
            server
                .get(&format!("/api/v1/sessions/s/blasts/{id}/recipients{q}"))
                .await
                .expect(200)
        }
    };
    let first = page("").await;
    assert_eq!(first["count"], 100, "default limit");
    assert_eq!(first["recipients"][0]["id"], 1);
    let big = page("?limit=5000").await;
    assert_eq!(big["count"], 1000, "at most 1000");
    let tail = page("?limit=10&offset=1195").await;
    let ids: Vec<u64> = tail["recipients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1196, 1197, 1198, 1199, 1200, 1201]);
    let dups = page("?status=skipped_dup").await;
    assert_eq!(dups["count"], 1);
    assert_eq!(dups["recipients"][0]["id"], 1201);
    assert_eq!(page("?status=sent").await["count"], 0);
    server
        .get(&format!(
            "/api/v1/sessions/s/blasts/{id}/recipients?status=lost"
        ))
        .await
        .expect_error(400, "invalid_query");
    server
        .get("/api/v1/sessions/s/blasts/no-such-job/recipients")
        .await
        .expect_error(404, "blast_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blasts_are_listed_per_session_and_fleet_wide_newest_first_with_filters() {
    let server = server().await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    let later = json!({ "send_at": LATER });
    let a1 = create(&server, "a", text_blast(&phones(1), later.clone())).await;
    let b1 = create(&server, "b", text_blast(&phones(1), later.clone())).await;
    let a2 = create(&server, "a", text_blast(&phones(2), later.clone())).await;
    server
        .post_empty(&format!("/api/v1/sessions/a/blasts/{a1}/cancel"))
        .await
        .expect(200);
    let ids = |body: Value| -> Vec<String> {
        assert_eq!(
            body["count"],
            body["jobs"].as_array().unwrap().len(),
            "{body}"
        );
        body["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let get = |path: &'static str| server.get(path);
    assert_eq!(
        ids(get("/api/v1/blasts").await.expect(200)),
        [a2.as_str(), b1.as_str(), a1.as_str()]
    );
    assert_eq!(
        ids(get("/api/v1/blasts?session=a").await.expect(200)),
        [a2.as_str(), a1.as_str()]
    );
    assert_eq!(
        ids(get("/api/v1/blasts?status=cancelled").await.expect(200)),
        [a1.as_str()]
    );
    assert_eq!(
        ids(get("/api/v1/blasts?session=b&status=pending")
            .await
            .expect(200)),
        [b1.as_str()]
    );
    assert!(
        ids(get("/api/v1/blasts?session=b&status=cancelled")
            .await
            .expect(200))
        .is_empty()
    );
    assert!(ids(get("/api/v1/blasts?session=nobody").await.expect(200)).is_empty());
    assert_eq!(
        ids(get("/api/v1/sessions/a/blasts").await.expect(200)),
        [a2.as_str(), a1.as_str()]
    );
    assert_eq!(
        ids(get("/api/v1/sessions/a/blasts?status=pending")
            .await
            .expect(200)),
        [a2.as_str()]
    );
    get("/api/v1/blasts?status=finished")
        .await
        .expect_error(400, "invalid_query");
    get("/api/v1/sessions/nobody/blasts")
        .await
        .expect_error(404, "session_not_found");
    server
        .get(&format!("/api/v1/sessions/b/blasts/{a1}"))
        .await
        .expect_error(404, "blast_not_found");
    let full = get("/api/v1/blasts").await.expect(200);
    assert_eq!(full["jobs"][0]["total"], 2, "{full}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_retry_are_refused_when_the_state_does_not_allow_them() {
    let server = server().await;
    server.paired_session("s").await;
    let id = create(
        &server,
        "s",
        text_blast(&phones(1), json!({ "send_at": LATER })),
    )
    .await;
    let path = |op: &str| format!("/api/v1/sessions/s/blasts/{id}/{op}");
    server
        .post_empty(&path("retry"))
        .await
        .expect_error(400, "nothing_to_retry");
    let cancelled = server.post_empty(&path("cancel")).await.expect(200);
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled["finished_at"].is_string());
    server
        .post_empty(&path("cancel"))
        .await
        .expect_error(400, "not_cancellable");
    server
        .post_empty("/api/v1/sessions/s/blasts/nope/cancel")
        .await
        .expect_error(404, "blast_not_found");
    let done = create(
        &server,
        "s",
        text_blast(&phones(1), json!({ "delay_ms": 0 })),
    )
    .await;
    wait_status(&server, "s", &done, "completed").await;
    server
        .post_empty(&format!("/api/v1/sessions/s/blasts/{done}/cancel"))
        .await
        .expect_error(400, "not_cancellable");
    server
        .post_empty(&format!("/api/v1/sessions/s/blasts/{done}/retry"))
        .await
        .expect_error(400, "nothing_to_retry");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_deletes_its_blasts() {
    let server = server().await;
    server.paired_session("gone").await;
    server.paired_session("kept").await;
    create(
        &server,
        "gone",
        text_blast(&phones(3), json!({ "send_at": LATER })),
    )
    .await;
    let kept = create(
        &server,
        "kept",
        text_blast(&phones(3), json!({ "send_at": LATER })),
    )
    .await;
    server.delete("/api/v1/sessions/gone").await.expect(200);
    let all = server.get("/api/v1/blasts").await.expect(200);
    assert_eq!(all["count"], 1, "{all}");
    assert_eq!(all["jobs"][0]["id"], kept.as_str());
}
