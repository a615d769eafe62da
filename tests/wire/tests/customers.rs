//! The wire server with two real clients and no gateway: both link by QR
//! code, and a text encrypted by one is decrypted by the other.

use std::time::Duration;

use switchboard_wire::WireServer;
use switchboard_wire::customer::Customer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_linked_clients_exchange_an_end_to_end_encrypted_text() {
    let wire = WireServer::start().await.unwrap();
    let alice = Customer::link(&wire, "15550000001", "Alice").await.unwrap();
    let bob = Customer::link(&wire, "15550000002", "Bob").await.unwrap();
    alice.send_text("15550000002", "hello bob").await.unwrap();
    let (text, _) = bob
        .wait_text("15550000001", |t| t == "hello bob")
        .await
        .unwrap();
    assert_eq!(text, "hello bob");
    bob.send_text("15550000001", "hi alice").await.unwrap();
    alice
        .wait_text("15550000002", |t| t == "hi alice")
        .await
        .unwrap();
    // Bob's delivery receipt cleared what he was owed.
    wire.wait(Duration::from_secs(10), |_| wire_owed_is_zero(&wire))
        .await
        .unwrap();
}

fn wire_owed_is_zero(wire: &WireServer) -> bool {
    wire.owed("15550000002", 1) == 0
}
