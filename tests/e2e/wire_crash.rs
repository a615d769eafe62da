//! The real `whatsapp` backend killed with SIGKILL in the middle of an
//! offline drain from the wire server: after the restart every message is
//! stored exactly once, because the backend acknowledges a message only
//! once the store holds it, and the server redelivers what was not
//! acknowledged.

use std::collections::HashMap;
use std::time::Duration;

use switchboard_tests::crash::{CRASH_PATIENCE, Rig, until};
use switchboard_tests::wire::GATEWAY_PHONE;
use switchboard_wire::customer::Customer;
use switchboard_wire::{Seen, WireServer};

const BINARY: &str = env!("CARGO_BIN_EXE_switchboard-e2e");
const CUSTOMER: &str = "15550000601";
/// Messages the customer writes while the gateway is down.
const WRITTEN: usize = 40;

fn acked_by_gateway(wire: &WireServer) -> usize {
    wire.count(|s| matches!(s, Seen::Acked { phone, device: 1, .. } if phone == GATEWAY_PHONE))
}

/// The texts stored as inbound at `wa`, with how often each is there.
async fn stored(rig: &Rig) -> HashMap<String, usize> {
    let body = rig
        .api()
        .get("/api/v1/sessions/wa/messages?limit=500")
        .await;
    let mut seen = HashMap::new();
    for m in body["messages"].as_array().unwrap() {
        if m["direction"] == "inbound" {
            let text = m["body"]["text"].as_str().unwrap_or_default().to_owned();
            *seen.entry(text).or_insert(0) += 1;
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_killed_in_the_middle_of_an_offline_drain_stores_every_message_once() {
    let (wire, mut rig) = switchboard_tests::wire::linked_rig(
        BINARY,
        &[("SWITCHBOARD_RECONNECT_DELAYS_SECS", "0.2")],
    )
    .await;
    let customer = Customer::link(&wire, CUSTOMER, "Jo").await.unwrap();

    // Down: the customer's messages wait on the server.
    rig.kill().await;
    for i in 0..WRITTEN {
        customer
            .send_text(GATEWAY_PHONE, &format!("offline {i}"))
            .await
            .unwrap();
    }
    wire.wait(Duration::from_secs(30), |_| {
        wire.owed(GATEWAY_PHONE, 1) == WRITTEN
    })
    .await
    .unwrap();

    // Up: the drain comes slowly (6 s, past the client's 3 s flush of
    // offline batches); it is killed once some were acknowledged.
    wire.pace_offline(GATEWAY_PHONE, Duration::from_millis(150));
    let before = acked_by_gateway(&wire);
    rig.restart(&[]).await;
    wire.wait(CRASH_PATIENCE, |_| acked_by_gateway(&wire) >= before + 5)
        .await
        .unwrap();
    rig.kill().await;
    let acked_at_kill = acked_by_gateway(&wire) - before;
    let owed_at_kill = wire.owed(GATEWAY_PHONE, 1);
    assert!(
        owed_at_kill > 0 && acked_at_kill < WRITTEN,
        "the kill came in the middle of the drain ({acked_at_kill} acknowledged, {owed_at_kill} owed)"
    );

    // Up again: what was not acknowledged comes again; nothing twice.
    wire.pace_offline(GATEWAY_PHONE, Duration::ZERO);
    rig.restart(&["wa"]).await;
    wire.wait(CRASH_PATIENCE, |_| wire.owed(GATEWAY_PHONE, 1) == 0)
        .await
        .unwrap();
    until("every message stored", || async {
        stored(&rig).await.len() == WRITTEN
    })
    .await;
    let texts = stored(&rig).await;
    for i in 0..WRITTEN {
        assert_eq!(
            texts.get(&format!("offline {i}")),
            Some(&1),
            "`offline {i}` stored once: {texts:?}\n{}",
            rig.log()
        );
    }
}
