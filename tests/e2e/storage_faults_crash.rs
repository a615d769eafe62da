//! A kill -9 while the data directory is full: the real binary on a small
//! tmpfs, flooded with inbound messages until the store answers `507`,
//! killed with SIGKILL while still full, then restarted once the space is
//! freed. Every message answered `200` before the kill is there after the
//! restart, none answered `507` is, and writes are taken again.

use reqwest::Method;
use serde_json::json;
use switchboard_tests::crash::{Intervals, Rig};
use switchboard_tests::small_disk::SmallDisk;

use crate::BINARY;
use crate::storage_faults::{
    Flood, SESSION, SMALL_DISK_ENV, check_history, flood_until_full, readiness,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gateway_killed_while_its_disk_is_full_keeps_every_answered_message() {
    let disk = SmallDisk::mount(16);
    let mut rig = Rig::start_in(BINARY, Intervals::Fast, SMALL_DISK_ENV, disk.path()).await;
    rig.api().pair(SESSION).await;
    let filler = disk.fill();
    let mut flood = Flood::default();
    flood_until_full(rig.api(), &mut flood).await;
    assert_eq!(readiness(rig.api()).await.0, 503);

    rig.kill().await;
    std::fs::remove_file(&filler).expect("the filler is deleted");
    rig.restart(&[SESSION]).await;

    check_history(rig.api(), &flood).await;
    let body = rig
        .api()
        .expect(
            Method::POST,
            &format!("/api/v1/sim/sessions/{SESSION}/inbound"),
            Some(json!({"from": "15550002222", "text": "after", "message_id": "DISKAFTER"})),
            200,
        )
        .await;
    assert_eq!(body["message_id"], "DISKAFTER");
}
