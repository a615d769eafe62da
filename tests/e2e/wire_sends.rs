//! Sends the wire server refuses, or answers slowly: the gateway's answer
//! waits for WhatsApp's acknowledgement, so a refusal (463, the reach-out
//! timelock; 479…) is the send's error, never a message read as sent.

use std::time::Duration;

use serde_json::json;
use switchboard_tests::wire::{GATEWAY_PHONE, Wired};

const CUSTOMER: &str = "15550000701";

async fn text(w: &Wired, body: &str) -> switchboard_tests::Resp {
    w.server
        .post(
            "/api/v1/sessions/wa/messages/text",
            json!({ "to": format!("+{CUSTOMER}"), "text": body }),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_refused_with_the_reach_out_timelock_fails_and_the_next_one_goes_through() {
    let w = Wired::start().await;
    w.linked("wa").await;
    let customer = w.customer(CUSTOMER, "Kim").await;
    w.wire.refuse_send(GATEWAY_PHONE, 463);
    let msg = text(&w, "refused")
        .await
        .expect_error(422, "network_rejected");
    assert!(
        msg.contains("463") && msg.contains("reach-out timelock"),
        "{msg}"
    );
    text(&w, "accepted").await.expect(200);
    customer
        .wait_text(GATEWAY_PHONE, |t| t == "accepted")
        .await
        .unwrap();
    // The refused one never reached the customer: the accepted one, sent
    // after it, has.
    assert_eq!(
        customer.events().count(|e| matches!(e,
            whatsapp_rust::types::events::Event::Messages(b)
                if b.messages.iter().any(|m| switchboard_wire::customer::text_of(&m.message).as_deref() == Some("refused")))),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_refusal_is_waited_for_and_still_fails_the_send() {
    let w = Wired::start_with(|c| c.whatsapp.send_ack_wait = Duration::from_secs(10)).await;
    w.linked("wa").await;
    let _customer = w.customer(CUSTOMER, "Lee").await;
    w.wire.delay_acks(GATEWAY_PHONE, Duration::from_millis(500));
    w.wire.refuse_send(GATEWAY_PHONE, 479);
    let msg = text(&w, "slowly refused")
        .await
        .expect_error(422, "network_rejected");
    assert!(msg.contains("479"), "{msg}");
    let sent = text(&w, "slowly accepted").await.expect(200);
    assert!(sent["timestamp"].as_i64().unwrap() > 0, "{sent}");
}
