//! Account operations: trust tokens (issued and pruned through the live
//! client, read in the session's redb state, where the crate keeps them under
//! its own keys), spam reports (`Client::send_spam_report`) and app-state
//! resync (the crate's one-collection sync, its outcome read from the
//! version writes it leaves). The conversions are in `map/account_ops.rs`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use whatsapp_rust::sync_task::MajorSyncTask;
use whatsapp_rust::wacore::appstate::patch_decode::WAPatchName;
use whatsapp_rust::wacore::iq::props::PropsSpec;
use whatsapp_rust::wacore::iq::tctoken::{
    TcTokenConfig, sender_tc_token_expiration_cutoff_with, tc_token_expiration_cutoff_with,
};
use whatsapp_rust::wacore::store::traits::ProtocolStore;
use whatsapp_rust::{Client, Jid as WaJid, TcTokenError};

use crate::NetworkError;
use crate::account::{
    AccountOps, Collection, CollectionOutcome, IssuedToken, ResyncMode, SpamReport, TrustToken,
};
use crate::domain::jid::Jid;
use crate::domain::time::unix_now;
use crate::store::whatsapp::WaStore;
use crate::whatsapp::map::account_ops::{
    TokenKey, report_id, spam_request, tc_token_config, token_jid, token_keys, trust_token,
};
use crate::whatsapp::map::iq_errors::iq_error;
use crate::whatsapp::send::wa_jid;
use crate::whatsapp::session::WaSession;

/// How long a token read waits for the server's props before it falls back
/// to the default timing (the read is otherwise local).
const PROPS_WAIT: Duration = Duration::from_secs(10);

/// What one collection's sync came to, told from the outside: the crate's
/// one-collection sync returns nothing, but it writes the collection's
/// version at the end of every fetch it applied (changed or not) and never
/// after a failure, which it logs and retries in the background. It also
/// writes what it applied of a fetch the connection cut short, so a write
/// counts only while the client is still connected and logged in: then it
/// is `synced`; no write, or a connection gone meanwhile, is `retryable`.
/// (Best effort: a sync of the same collection the crate ran meanwhile
/// writes too, and its write reads as this one's.)
fn resync_outcome(before: u64, after: u64, client: &Client) -> CollectionOutcome {
    if after > before && client.is_connected() && client.is_logged_in() {
        CollectionOutcome::Synced
    } else {
        CollectionOutcome::Retryable
    }
}

/// The collections one resync fetches: those no other resync of the
/// session is fetching, given back when it ends (so a second request for a
/// collection in flight answers `skipped`, as the crate's own syncs do).
struct Claim<'a> {
    held: &'a std::sync::Mutex<HashSet<Collection>>,
    mine: Vec<Collection>,
}

impl<'a> Claim<'a> {
    fn take(held: &'a std::sync::Mutex<HashSet<Collection>>, wanted: &[Collection]) -> Self {
        let mut busy = held.lock().unwrap_or_else(|p| p.into_inner());
        let mine = wanted.iter().copied().filter(|c| busy.insert(*c)).collect();
        Self { held, mine }
    }

    fn holds(&self, c: Collection) -> bool {
        self.mine.contains(&c)
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut busy = self.held.lock().unwrap_or_else(|p| p.into_inner());
        for c in &self.mine {
            busy.remove(c);
        }
    }
}

fn store_error(e: impl std::fmt::Display) -> NetworkError {
    NetworkError::Failed(format!("could not read the device store: {e}"))
}

fn token_error(what: &str, e: &TcTokenError) -> NetworkError {
    match e {
        TcTokenError::Iq(e) => iq_error(what, e),
        TcTokenError::Store(e) => store_error(e),
        other => NetworkError::Failed(format!("{what} failed: {other}")),
    }
}

impl WaSession {
    fn wa_store(&self) -> WaStore {
        WaStore::new(self.inner.store.clone(), &self.inner.id)
    }

    /// The token timing the crate applies. The crate derives it from the AB
    /// props the server sent on this connection and keeps them in memory
    /// only, behind a crate-private accessor, so a logged-in session asks
    /// the server for its props and derives the timing the same way. Without
    /// a connection the server's tuning is unknown and the protocol default
    /// (28 days) applies; so it does when the props do not come.
    /// The props are the connection's: the timing derived from them is kept
    /// with the run, so only a connection's first token read asks.
    async fn token_config(&self) -> TcTokenConfig {
        let Ok(client) = self.logged_in().await else {
            return TcTokenConfig::default();
        };
        let run = self.inner.current();
        if let Some(known) = run.as_ref().and_then(|r| r.state.token_config.get()) {
            return *known;
        }
        match tokio::time::timeout(PROPS_WAIT, client.execute(PropsSpec::new())).await {
            Ok(Ok(props)) => {
                let config = tc_token_config(props.experiment_props).await;
                if let Some(run) = run.filter(|r| Arc::ptr_eq(&r.client, &client)) {
                    let _ = run.state.token_config.set(config);
                }
                config
            }
            Ok(Err(e)) => {
                tracing::warn!(session = %self.inner.id, error = %e, "props fetch failed; default trust-token timing applies");
                TcTokenConfig::default()
            }
            Err(_) => {
                tracing::warn!(session = %self.inner.id, "props fetch timed out; default trust-token timing applies");
                TcTokenConfig::default()
            }
        }
    }

    /// The LID user the crate keys a phone's token by: the live client's
    /// lid-pn mapping (its cache can be ahead of the store), else the
    /// mapping the crate persisted.
    async fn token_lid(
        &self,
        store: &WaStore,
        phone: &WaJid,
    ) -> Result<Option<String>, NetworkError> {
        if let Ok(client) = self.client().await {
            let entry = client.get_lid_pn_entry(phone).await.map_err(store_error)?;
            return Ok(entry.map(|e| e.lid.to_string()));
        }
        let entry = store
            .get_pn_mapping(&phone.user)
            .await
            .map_err(store_error)?;
        Ok(entry.map(|e| e.lid))
    }
}

#[async_trait]
impl AccountOps for WaSession {
    async fn issue_trust_tokens(&self, jids: &[Jid]) -> Result<Vec<IssuedToken>, NetworkError> {
        let client = self.logged_in().await?;
        let targets = jids.iter().map(wa_jid).collect::<Result<Vec<_>, _>>()?;
        let issued = client
            .tc_token()
            .issue_tokens(&targets)
            .await
            .map_err(|e| token_error("issuing trust tokens", &e))?;
        Ok(issued
            .iter()
            .map(|t| IssuedToken {
                jid: t.jid.to_non_ad_string(),
                timestamp: t.timestamp,
            })
            .collect())
    }

    async fn trust_token(&self, jid: &Jid) -> Result<Option<TrustToken>, NetworkError> {
        let asked = wa_jid(jid)?;
        let store = self.wa_store();
        let lid = if asked.is_lid() {
            None
        } else {
            self.token_lid(&store, &asked).await?
        };
        for key in token_keys(&asked, lid.as_deref()) {
            if let Some(entry) = store.get_tc_token(&key).await.map_err(store_error)? {
                let config = self.token_config().await;
                return Ok(Some(trust_token(
                    jid.to_string(),
                    &entry,
                    &config,
                    unix_now(),
                )));
            }
        }
        Ok(None)
    }

    async fn trust_token_jids(&self) -> Result<Vec<String>, NetworkError> {
        let store = self.wa_store();
        let keys = store.get_all_tc_token_jids().await.map_err(store_error)?;
        let mut jids = Vec::with_capacity(keys.len());
        for key in keys {
            let kind = if store
                .get_lid_mapping(&key)
                .await
                .map_err(store_error)?
                .is_some()
            {
                TokenKey::Lid
            } else if store
                .get_pn_mapping(&key)
                .await
                .map_err(store_error)?
                .is_some()
            {
                TokenKey::Phone
            } else {
                TokenKey::Unknown
            };
            jids.push(token_jid(&key, kind));
        }
        jids.sort();
        jids.dedup();
        Ok(jids)
    }

    async fn prune_trust_tokens(&self) -> Result<usize, NetworkError> {
        if let Ok(client) = self.client().await {
            // The crate prunes with the timing the server tuned.
            let n = client
                .tc_token()
                .prune_expired()
                .await
                .map_err(|e| token_error("pruning trust tokens", &e))?;
            return Ok(n as usize);
        }
        // Not connected: the server's tuning is unknown (the crate holds it
        // in memory per connection), so the protocol default applies.
        let config = TcTokenConfig::default();
        let token_cutoff = tc_token_expiration_cutoff_with(&config);
        let sender_cutoff = sender_tc_token_expiration_cutoff_with(&config);
        let n = self
            .wa_store()
            .delete_expired_tc_tokens(token_cutoff, sender_cutoff)
            .await
            .map_err(store_error)?;
        Ok(n as usize)
    }

    async fn report_spam(&self, report: &SpamReport) -> Result<String, NetworkError> {
        let client = self.logged_in().await?;
        // The reported message as kept (received, sent, or from history):
        // the server sees what was reported. One not kept goes by its id.
        let raw = crate::whatsapp::history::kept_row(
            &self.inner.store,
            &self.inner.id,
            &report.message_id,
        )
        .await
        .map(|row| row.proto);
        let request = spam_request(report, raw)?;
        let result = client
            .send_spam_report(request)
            .await
            .map_err(|e| iq_error("the spam report", &e))?;
        Ok(report_id(&result))
    }

    async fn resync_app_state(
        &self,
        collections: &[Collection],
        mode: ResyncMode,
    ) -> Result<Vec<(Collection, CollectionOutcome)>, NetworkError> {
        self.logged_in().await?;
        // The run's own client: its writes are the ones the run counts.
        let run = self.inner.current().ok_or(NetworkError::NotConnected)?;
        let client = run.client.clone();
        let claim = Claim::take(&self.inner.resyncing, collections);
        let mut out = Vec::with_capacity(collections.len());
        for c in collections {
            if !claim.holds(*c) {
                out.push((*c, CollectionOutcome::Skipped));
                continue;
            }
            let name: WAPatchName = c.as_str().parse().unwrap_or(WAPatchName::Unknown);
            let before = run.versions.of(c.as_str());
            client
                .process_sync_task(MajorSyncTask::AppStateSync {
                    name,
                    full_sync: mode == ResyncMode::Snapshot,
                })
                .await;
            out.push((
                *c,
                resync_outcome(before, run.versions.of(c.as_str()), &client),
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;

    use super::Claim;
    use crate::account::Collection;

    #[test]
    fn a_resync_claims_only_what_no_other_holds_and_gives_it_back_when_done() {
        let held = Mutex::new(HashSet::new());
        let first = Claim::take(&held, &[Collection::Regular, Collection::RegularLow]);
        let second = Claim::take(&held, &[Collection::Regular, Collection::CriticalBlock]);
        assert!(first.holds(Collection::Regular) && first.holds(Collection::RegularLow));
        assert!(!second.holds(Collection::Regular), "the first holds it");
        assert!(second.holds(Collection::CriticalBlock));
        drop(first);
        let third = Claim::take(&held, &[Collection::Regular, Collection::CriticalBlock]);
        assert!(third.holds(Collection::Regular), "given back");
        assert!(
            !third.holds(Collection::CriticalBlock),
            "the second still holds it"
        );
    }
}
