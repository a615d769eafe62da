//! Tells subscribers that the store failed and recovered: `storage_failed`
//! and `storage_recovered`, one of each per session, published once the
//! store takes writes again (while it fails no event can be recorded, and
//! an event is released only once it is). The log lines are the store's
//! own, at the moment it fails and the moment it recovers.

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::domain::event::{Envelope, EventName};
use crate::domain::event_data::own::{StorageFaultData, to_data};
use crate::events::EventBus;
use crate::store::{StorageEpisode, Store};

/// Starts the task that publishes the events of each run of failure the
/// store recovers from, until `stop`.
pub fn start(store: Store, bus: EventBus, stop: CancellationToken, tasks: &TaskTracker) {
    let mut health = store.watch_health();
    tasks.spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                changed = health.changed() => if changed.is_err() { return },
            }
            for episode in store.take_storage_episodes() {
                publish(&store, &bus, episode);
            }
        }
    });
}

/// One `storage_failed` and one `storage_recovered` for every session.
fn publish(store: &Store, bus: &EventBus, episode: StorageEpisode) {
    let sessions = match store.list_sessions() {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "the storage events could not be published: the sessions could not be read");
            return;
        }
    };
    let kind = episode.fault.as_str().to_owned();
    for session in sessions {
        let failed = StorageFaultData {
            kind: kind.clone(),
            failed_at: episode.failed_at,
            recovered_at: None,
        };
        bus.publish(Envelope::now(
            &session.id,
            EventName::StorageFailed,
            to_data(&failed),
        ));
        let recovered = StorageFaultData {
            recovered_at: Some(episode.recovered_at),
            ..failed
        };
        bus.publish(Envelope::now(
            &session.id,
            EventName::StorageRecovered,
            to_data(&recovered),
        ));
    }
}
