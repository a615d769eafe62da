//! Every `message_type` of the spec as a consumer sees it: the `message`
//! envelope on the event stream and the stored record carry the same data.

use serde_json::{Value, json};
use switchboard_tests::TestServer;
use switchboard_tests::sse::EventStream;

/// A paired session `s` and a stream of its message events.
async fn setup() -> (TestServer, EventStream) {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let stream = server.open_stream("session=s&events=message").await;
    (server, stream)
}

/// Injects `body` into `s` and returns the `message` event data as delivered,
/// after checking that the stored record holds the same data.
async fn deliver(server: &TestServer, stream: &mut EventStream, body: Value) -> Value {
    let got = server
        .post("/api/v1/sim/sessions/s/inbound", body)
        .await
        .expect(200);
    let id = got["message_id"].as_str().unwrap().to_owned();
    let env = stream
        .find(|e| e["data"]["message_id"] == id.as_str())
        .await;
    assert_eq!(env["event"], "message");
    let history = server.get("/api/v1/sessions/s/messages").await.expect(200);
    let record = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["message_id"] == id.as_str())
        .expect("stored")
        .clone();
    assert_eq!(record["body"], env["data"], "stored as published");
    assert_eq!(record["kind"], env["data"]["message_type"]);
    env["data"].clone()
}

fn assert_no_reply_fields(data: &Value) {
    assert!(data["selected_id"].is_null(), "{data}");
    assert!(data["selected_text"].is_null(), "{data}");
    assert!(data["native_flow"].is_null(), "{data}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_message_has_its_text_and_null_reply_and_location_fields() {
    let (server, mut stream) = setup().await;
    let data = deliver(
        &server,
        &mut stream,
        json!({ "from": "15550001111", "text": "plain" }),
    )
    .await;
    assert_eq!(data["message_type"], "text");
    assert_eq!(data["text"], "plain");
    assert!(data["location"].is_null());
    assert!(data["quoted_message_id"].is_null());
    assert!(data["quoted_sender_jid"].is_null());
    assert_no_reply_fields(&data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_location_carries_the_location_object_and_a_live_one_its_sequence() {
    let (server, mut stream) = setup().await;
    let location = json!({
        "latitude": 52.52, "longitude": 13.405, "name": "Office", "address": "Main St 1",
        "url": "https://maps.example/office", "accuracy_meters": 5.0, "speed_mps": 0.0, "is_live": false,
    });
    let data = deliver(
        &server,
        &mut stream,
        json!({ "from": "15550001111", "location": location }),
    )
    .await;
    assert_eq!(data["message_type"], "location");
    assert_eq!(data["location"], location);
    assert!(data["text"].is_null());
    assert_no_reply_fields(&data);

    let live = json!({ "latitude": 52.5, "longitude": 13.4, "is_live": true, "sequence_number": 7, "caption": "omw" });
    let data = deliver(
        &server,
        &mut stream,
        json!({ "from": "15550001111", "message_id": "LIVE", "location": live }),
    )
    .await;
    assert_eq!(data["message_type"], "location");
    assert_eq!(data["location"]["is_live"], true);
    assert_eq!(data["location"]["sequence_number"], 7);
    assert_eq!(data["location"]["caption"], "omw");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_response_arrives_with_parsed_params_and_its_label_as_text() {
    let (server, mut stream) = setup().await;
    let data = deliver(
        &server,
        &mut stream,
        json!({
            "from": "15550001111",
            "quoted_message_id": "3EBINTERACTIVE",
            "selected_text": "Option two",
            "native_flow": { "name": "quick_reply", "params": "{\"id\":\"opt_2\",\"display_text\":\"Option two\"}" },
        }),
    )
    .await;
    assert_eq!(data["message_type"], "interactive_response");
    assert_eq!(
        data["selected_id"], "opt_2",
        "taken from the reply's params"
    );
    assert_eq!(data["selected_text"], "Option two");
    assert_eq!(data["text"], "Option two");
    assert_eq!(data["quoted_message_id"], "3EBINTERACTIVE");
    assert_eq!(
        data["native_flow"],
        json!({ "name": "quick_reply", "params": { "id": "opt_2", "display_text": "Option two" } })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_response_without_a_label_has_its_id_as_text_and_a_flow_may_have_no_id() {
    let (server, mut stream) = setup().await;
    let data = deliver(
        &server,
        &mut stream,
        json!({ "from": "15550001111", "native_flow": { "name": "single_select", "params": "{\"id\":\"row_9\"}" } }),
    )
    .await;
    assert_eq!(data["selected_id"], "row_9");
    assert!(data["selected_text"].is_null());
    assert_eq!(data["text"], "row_9");

    let form = json!({ "flow_token": "T1", "name": "Ada", "size": "M" });
    let data = deliver(
        &server,
        &mut stream,
        json!({ "from": "15550001111", "native_flow": { "name": "flow", "params": form.to_string() } }),
    )
    .await;
    assert_eq!(data["message_type"], "interactive_response");
    assert_eq!(
        data["native_flow"]["params"], form,
        "the whole form, parsed"
    );
    assert!(data["selected_id"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_button_list_and_template_replies_carry_the_chosen_id_and_label() {
    let (server, mut stream) = setup().await;
    for (kind, id, label) in [
        ("buttons_response", "btn_yes", "Yes"),
        ("list_response", "row_1", "Row one"),
        ("template_button_reply", "tpl_ok", "OK"),
    ] {
        let data = deliver(
            &server,
            &mut stream,
            json!({
                "from": "15550001111", "message_type": kind, "quoted_message_id": "3EBASKED",
                "selected_id": id, "selected_text": label,
            }),
        )
        .await;
        assert_eq!(data["message_type"], kind);
        assert_eq!(data["selected_id"], id);
        assert_eq!(data["selected_text"], label);
        assert_eq!(data["text"], label);
        assert_eq!(data["quoted_message_id"], "3EBASKED");
        assert!(data["native_flow"].is_null());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_message_has_no_text() {
    let (server, mut stream) = setup().await;
    let data = deliver(
        &server,
        &mut stream,
        json!({ "from": "15550001111", "message_type": "unknown" }),
    )
    .await;
    assert_eq!(data["message_type"], "unknown");
    assert!(data["text"].is_null());
    assert!(data["location"].is_null());
    assert_no_reply_fields(&data);
}
