//! Conformance of [`WaStore`] to the crate's own in-memory store: the same
//! scenarios (`conformance_scenarios.rs`) run against both must answer
//! identically, with the redb database closed and reopened between the two
//! phases (the in-memory store simply lives on).

use std::sync::Arc;

use whatsapp_rust::wacore::store::InMemoryBackend;
use whatsapp_rust::wacore::store::traits::{Backend, SignalStore};

use super::WaStore;
use super::conformance_phase_two::phase_two;
use super::conformance_scenarios::{Trace, phase_one};
use crate::Store;
use crate::domain::session::SessionRecord;

async fn reference() -> (Trace, Trace) {
    let b: Arc<dyn Backend> = Arc::new(InMemoryBackend::new());
    let (mut one, mut two) = (Trace::new(), Trace::new());
    phase_one(&*b, &mut one).await;
    phase_two(&*b, &mut two).await;
    (one, two)
}

fn open(dir: &std::path::Path) -> Store {
    Store::open(dir).expect("store opens")
}

#[tokio::test]
async fn the_redb_store_answers_like_the_in_memory_store_across_a_reopen() {
    let (want_one, want_two) = reference().await;
    let dir = tempfile::tempdir().unwrap();
    let mut one = Trace::new();
    {
        let store = open(dir.path());
        phase_one(&WaStore::new(store, "s1"), &mut one).await;
    }
    let mut two = Trace::new();
    phase_two(&WaStore::new(open(dir.path()), "s1"), &mut two).await;
    for (got, want) in [(&one, &want_one), (&two, &want_two)] {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g, w);
        }
    }
}

#[tokio::test]
async fn sessions_do_not_see_each_others_state_and_deleting_one_drops_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    for id in ["a", "ab"] {
        store
            .insert_session(&SessionRecord::new(
                id.into(),
                None,
                "whatsapp".into(),
                None,
            ))
            .unwrap();
    }
    let (a, ab) = (
        WaStore::new(store.clone(), "a"),
        WaStore::new(store.clone(), "ab"),
    );
    let mut trace = Trace::new();
    phase_one(&a, &mut trace).await;
    assert_eq!(
        ab.load_identity("111:2@s.whatsapp.net").await.unwrap(),
        None
    );
    assert_eq!(ab.get_max_prekey_id().await.unwrap(), 0);
    assert!(!ab.has_signal_state_for_user("111").await.unwrap());
    ab.put_identity("111@s.whatsapp.net", [7; 32])
        .await
        .unwrap();

    assert!(store.delete_session("a").unwrap());
    let fresh = WaStore::new(store.clone(), "a");
    assert!(
        !whatsapp_rust::wacore::store::traits::DeviceStore::exists(&fresh)
            .await
            .unwrap()
    );
    assert_eq!(
        fresh.load_identity("111:2@s.whatsapp.net").await.unwrap(),
        None
    );
    assert_eq!(fresh.get_max_prekey_id().await.unwrap(), 0);
    assert_eq!(
        ab.load_identity("111@s.whatsapp.net").await.unwrap(),
        Some([7; 32]),
        "the neighbour keeps its state"
    );
}
