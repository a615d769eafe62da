//! The token registry: every minted token in memory (found by the hash of
//! the secret a request presents), written through to the store, with what
//! goes with a live token: its per-minute request window, and a
//! cancellation that ends its open event streams when it is revoked.
//!
//! Authentication runs on the async path of every request, so it never
//! writes to the store: a token's new `last_used_at` is set in memory and
//! written by a background flusher on the blocking pool
//! ([`Tokens::start_flusher`]), which writes what is left when the gateway
//! stops.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::domain::time::unix_now;
use crate::domain::token::{SECRET_PREFIX, Scope, SessionSet, TokenRecord, TokenRefusal};
use switchboard_runtime::store::{Store, StoreResult};

/// How often a token's `last_used_at` is written (it is kept to this
/// precision, so a busy token does not write on every request).
const LAST_USED_PRECISION: i64 = 60;

/// What an admin asks for when minting.
#[derive(Debug, Clone)]
pub struct NewToken {
    /// Its name.
    pub name: String,
    /// The sessions it may act on.
    pub sessions: SessionSet,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// Unix seconds after which it stops working.
    pub expires_at: Option<i64>,
    /// Most requests per minute.
    pub rate_per_minute: Option<u32>,
}

/// Why a presented secret is not let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No token has this secret.
    Unknown,
    /// The token was revoked or expired.
    Gone(TokenRefusal),
}

/// One token's request window.
struct Window {
    started: Instant,
    count: u32,
}

#[derive(Default)]
struct State {
    /// Tokens by the hash of their secret.
    by_hash: HashMap<String, Arc<TokenRecord>>,
    /// Ended when the token is revoked (its open streams watch it).
    ended: HashMap<String, CancellationToken>,
    windows: HashMap<String, Window>,
    /// `last_used_at` set in memory and not yet written, by token id.
    unwritten_use: HashMap<String, i64>,
    /// Session creates under way, by token id: each holds a place in its
    /// token's session quota until it is added or fails.
    creating: HashMap<String, usize>,
}

/// The token registry; cheap to clone.
#[derive(Clone)]
pub struct Tokens {
    store: Store,
    state: Arc<Mutex<State>>,
    /// Held while a change is written, so two changes of one token cannot
    /// lose each other; never held by authentication, which reads `state`.
    writes: Arc<Mutex<()>>,
    /// The window `rate_per_minute` counts in: a minute, shorter in tests.
    window: Duration,
    /// Wakes the flusher of `unwritten_use`.
    used: Arc<Notify>,
    /// Most sessions a token limited to some sessions may hold.
    session_quota: usize,
}

/// Most sessions a token limited to some sessions may hold unless
/// configured otherwise: the most ids a token may be minted with.
pub const DEFAULT_SESSION_QUOTA: usize = 10_000;

/// A token is at its session quota: creating one more session would take
/// it past it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaFull {
    /// The token's name.
    pub token: String,
    /// The quota.
    pub limit: usize,
}

/// A place in a token's session quota, held while a session it creates is
/// made; given back when dropped (the session was added to the token's
/// set, or it was not created).
pub struct QuotaSlot {
    tokens: Tokens,
    token_id: String,
}

impl Drop for QuotaSlot {
    fn drop(&mut self) {
        let mut state = self.tokens.lock();
        if let Some(n) = state.creating.get_mut(&self.token_id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                state.creating.remove(&self.token_id);
            }
        }
    }
}

/// The hex SHA-256 of a secret: all the store keeps of it.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A new secret: the prefix and 64 hex digits from two random UUIDs
/// (244 random bits).
fn new_secret() -> String {
    let a = uuid::Uuid::new_v4();
    let b = uuid::Uuid::new_v4();
    format!(
        "{SECRET_PREFIX}{}{}",
        hex::encode(a.as_bytes()),
        hex::encode(b.as_bytes())
    )
}

/// The part of a secret lists show: the prefix and six more characters.
fn shown_prefix(secret: &str) -> String {
    secret.chars().take(SECRET_PREFIX.len() + 6).collect()
}

impl Tokens {
    /// The registry over every token the store holds; `rate_per_minute`
    /// counts requests in windows of `window` (a minute, but for tests).
    pub fn load(store: Store, window: Duration) -> StoreResult<Self> {
        let mut state = State::default();
        for t in store.list_tokens()? {
            state.by_hash.insert(t.hash.clone(), Arc::new(t));
        }
        Ok(Self {
            store,
            state: Arc::new(Mutex::new(state)),
            writes: Arc::new(Mutex::new(())),
            window,
            used: Arc::new(Notify::new()),
            session_quota: DEFAULT_SESSION_QUOTA,
        })
    }

    /// The same registry holding each token limited to some sessions to at
    /// most `quota` of them (at least one).
    pub fn with_session_quota(mut self, quota: usize) -> Self {
        self.session_quota = quota.max(1);
        self
    }

    /// Most sessions a token limited to some sessions may hold.
    pub fn session_quota(&self) -> usize {
        self.session_quota
    }

    /// A place for one more session in the quota of token `token_id`, held
    /// until the returned slot drops; `Err` when the sessions it holds and
    /// those it is creating already fill it. A token over every session
    /// (`"*"`) has no quota.
    pub fn reserve_session(&self, token_id: &str) -> Result<Option<QuotaSlot>, QuotaFull> {
        let mut state = self.lock();
        let Some(token) = state.by_hash.values().find(|t| t.id == token_id).cloned() else {
            return Ok(None);
        };
        let SessionSet::Only(ids) = &token.sessions else {
            return Ok(None);
        };
        let creating = state.creating.get(token_id).copied().unwrap_or(0);
        if ids.len() + creating >= self.session_quota {
            return Err(QuotaFull {
                token: token.name.clone(),
                limit: self.session_quota,
            });
        }
        *state.creating.entry(token_id.to_owned()).or_default() += 1;
        Ok(Some(QuotaSlot {
            tokens: self.clone(),
            token_id: token_id.to_owned(),
        }))
    }

    /// Starts the task that writes the tokens' `last_used_at` kept by
    /// [`Tokens::authenticate`], on the blocking pool, as they change; when
    /// `stop` is cancelled it writes what is left and ends (tracked by
    /// `tasks`, so a clean stop waits for that last write).
    pub fn start_flusher(&self, stop: CancellationToken, tasks: &TaskTracker) {
        let tokens = self.clone();
        tasks.spawn(async move {
            loop {
                let stopping = tokio::select! {
                    _ = tokens.used.notified() => false,
                    _ = stop.cancelled() => true,
                };
                let flusher = tokens.clone();
                if let Err(e) = tokio::task::spawn_blocking(move || flusher.flush_last_used()).await
                {
                    tracing::warn!(error = %e, "the token last-use writer failed");
                }
                if stopping {
                    break;
                }
            }
        });
    }

    /// Writes every `last_used_at` set in memory and not yet stored
    /// (blocking: it writes to the store). One that cannot be written now
    /// is kept for the next call.
    pub fn flush_last_used(&self) {
        let pending = std::mem::take(&mut self.lock().unwritten_use);
        for (id, used) in pending {
            let written = self.update(&id, |t| {
                t.last_used_at = t.last_used_at.max(Some(used));
            });
            if let Err(e) = written {
                tracing::warn!(token_id = %id, error = %e, "could not keep a token's last use");
                self.lock()
                    .unwritten_use
                    .entry(id)
                    .and_modify(|t| *t = (*t).max(used))
                    .or_insert(used);
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Mints a token; returns its record and its secret (shown this once).
    pub fn mint(&self, new: NewToken) -> StoreResult<(TokenRecord, String)> {
        let _write = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let secret = new_secret();
        let record = TokenRecord {
            id: uuid::Uuid::new_v4().to_string(),
            name: new.name,
            prefix: shown_prefix(&secret),
            hash: hash_secret(&secret),
            sessions: new.sessions,
            scopes: new.scopes,
            created_at: unix_now(),
            expires_at: new.expires_at,
            last_used_at: None,
            revoked_at: None,
            rate_per_minute: new.rate_per_minute,
        };
        self.store.put_token(&record)?;
        self.lock()
            .by_hash
            .insert(record.hash.clone(), Arc::new(record.clone()));
        Ok((record, secret))
    }

    /// Every token, newest first.
    pub fn list(&self) -> Vec<TokenRecord> {
        let mut all: Vec<TokenRecord> = self
            .lock()
            .by_hash
            .values()
            .map(|t| (**t).clone())
            .collect();
        all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
        all
    }

    /// The token with this id.
    pub fn get(&self, id: &str) -> Option<TokenRecord> {
        self.lock()
            .by_hash
            .values()
            .find(|t| t.id == id)
            .map(|t| (**t).clone())
    }

    /// Changes the token with this id and writes it through (the store
    /// first, then memory; the registry's lock is not held while the store
    /// writes); `None` when there is none.
    fn update(
        &self,
        id: &str,
        f: impl FnOnce(&mut TokenRecord),
    ) -> StoreResult<Option<TokenRecord>> {
        let _write = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let Some(old) = self.find(id) else {
            return Ok(None);
        };
        let mut new = (*old).clone();
        f(&mut new);
        self.store.put_token(&new)?;
        self.replace(&old, new.clone());
        Ok(Some(new))
    }

    fn find(&self, id: &str) -> Option<Arc<TokenRecord>> {
        self.lock().by_hash.values().find(|t| t.id == id).cloned()
    }

    fn replace(&self, old: &TokenRecord, new: TokenRecord) {
        let mut state = self.lock();
        state.by_hash.remove(&old.hash);
        state.by_hash.insert(new.hash.clone(), Arc::new(new));
    }

    /// Ends the open event streams of a token (revoked, or its secret
    /// rotated).
    fn end_streams(&self, id: &str) {
        if let Some(ended) = self.lock().ended.remove(id) {
            ended.cancel();
        }
    }

    /// Revokes a token at once: it is refused from the next request on
    /// (in memory before the store is written: a failed write leaves it
    /// refused, not working) and its open event streams end. Revoking twice
    /// keeps the first time.
    pub fn revoke(&self, id: &str) -> StoreResult<Option<TokenRecord>> {
        let _write = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let Some(old) = self.find(id) else {
            return Ok(None);
        };
        let mut new = (*old).clone();
        new.revoked_at.get_or_insert(unix_now());
        self.replace(&old, new.clone());
        self.end_streams(id);
        self.store.put_token(&new)?;
        Ok(Some(new))
    }

    /// Takes `session` out of every token limited to some sessions (it was
    /// deleted: a later session of that id may be someone else's), and ends
    /// those tokens' open streams, which hold the session set they opened
    /// with (in memory first: a stream opened meanwhile reads the new set).
    pub fn remove_session(&self, session: &str) -> StoreResult<()> {
        let holders: Vec<String> = self
            .lock()
            .by_hash
            .values()
            .filter(|t| t.sessions.names(session))
            .map(|t| t.id.clone())
            .collect();
        for id in holders {
            let updated = self.update(&id, |t| {
                if let SessionSet::Only(ids) = &mut t.sessions {
                    ids.retain(|s| s != session);
                }
            });
            self.end_streams(&id);
            updated?;
        }
        Ok(())
    }

    /// Whether a working token other than `token_id` names `session` in its
    /// list: that id is kept for its tenant, and no other may create it.
    pub fn reserved_by_other(&self, token_id: &str, session: &str) -> bool {
        let now = unix_now();
        self.lock()
            .by_hash
            .values()
            .any(|t| t.id != token_id && t.check(now).is_ok() && t.sessions.names(session))
    }

    /// Gives a token a new secret (the old one stops working at once); its
    /// id, name, scopes and sessions stay. A revoked token is not rotated.
    pub fn rotate(&self, id: &str) -> StoreResult<Option<(TokenRecord, String)>> {
        let secret = new_secret();
        let rotated = self.update(id, |t| {
            if t.revoked_at.is_none() {
                t.hash = hash_secret(&secret);
                t.prefix = shown_prefix(&secret);
            }
        })?;
        let rotated = rotated.filter(|t| t.hash == hash_secret(&secret));
        if rotated.is_some() {
            // A stream opened with the old secret must not outlive it.
            self.end_streams(id);
        }
        Ok(rotated.map(|t| (t, secret)))
    }

    /// Adds a session to a token limited to some sessions (it created it).
    /// The token's open streams end: they hold the set they opened with,
    /// and a client reconnects to see the new session.
    pub fn add_session(&self, id: &str, session: &str) -> StoreResult<()> {
        let mut added = false;
        self.update(id, |t| {
            if let SessionSet::Only(ids) = &mut t.sessions
                && !ids.iter().any(|s| s == session)
            {
                ids.push(session.to_owned());
                added = true;
            }
        })?;
        if added {
            self.end_streams(id);
        }
        Ok(())
    }

    /// The token a presented secret belongs to, if it works now; its
    /// `last_used_at` is kept (to the minute): set in memory at once, and
    /// written to the store by the flusher, never here (this runs on the
    /// async path of every request).
    pub fn authenticate(&self, secret: &str) -> Result<Arc<TokenRecord>, Refusal> {
        let hash = hash_secret(secret);
        let now = unix_now();
        let mut state = self.lock();
        let token = state.by_hash.get(&hash).cloned().ok_or(Refusal::Unknown)?;
        token.check(now).map_err(Refusal::Gone)?;
        let stale = token
            .last_used_at
            .is_none_or(|t| now - t >= LAST_USED_PRECISION);
        if !stale {
            return Ok(token);
        }
        let mut used = (*token).clone();
        used.last_used_at = Some(now);
        let used = Arc::new(used);
        state.by_hash.insert(hash, used.clone());
        state.unwritten_use.insert(used.id.clone(), now);
        drop(state);
        self.used.notify_one();
        Ok(used)
    }

    /// Counts a request against the token's per-minute limit; `Err` with
    /// how long to wait when it is over.
    pub fn admit(&self, token: &TokenRecord) -> Result<(), Duration> {
        let Some(limit) = token.rate_per_minute else {
            return Ok(());
        };
        let minute = self.window;
        let now = Instant::now();
        let mut state = self.lock();
        let w = state.windows.entry(token.id.clone()).or_insert(Window {
            started: now,
            count: 0,
        });
        if now.duration_since(w.started) >= minute {
            w.started = now;
            w.count = 0;
        }
        if w.count >= limit {
            return Err(minute.saturating_sub(now.duration_since(w.started)));
        }
        w.count += 1;
        Ok(())
    }

    /// Cancelled when the token is revoked or rotated: what its open
    /// streams watch. Already cancelled for a token revoked between its
    /// request's authentication and this call.
    pub fn ended(&self, id: &str) -> CancellationToken {
        let mut state = self.lock();
        let working = state
            .by_hash
            .values()
            .any(|t| t.id == id && t.revoked_at.is_none());
        if !working {
            let t = CancellationToken::new();
            t.cancel();
            return t;
        }
        state.ended.entry(id.to_owned()).or_default().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::token::AllSessions;

    fn stored_last_use(store: &Store, id: &str) -> Option<i64> {
        store
            .list_tokens()
            .unwrap()
            .into_iter()
            .find(|t| t.id == id)
            .and_then(|t| t.last_used_at)
    }

    /// A fresh store, its token registry, and one token minted in it (the
    /// directory is held so the store outlives the test's use of it).
    fn one_minted_token() -> (tempfile::TempDir, Store, Tokens, TokenRecord, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let tokens = Tokens::load(store.clone(), Duration::from_secs(60)).unwrap();
        let (record, secret) = tokens
            .mint(NewToken {
                name: "crm".into(),
                sessions: SessionSet::All(AllSessions::Star),
                scopes: vec![Scope::Read],
                expires_at: None,
                rate_per_minute: None,
            })
            .unwrap();
        (dir, store, tokens, record, secret)
    }

    #[test]
    fn authenticating_writes_nothing_and_the_flusher_keeps_the_last_use() {
        let (_dir, store, tokens, record, secret) = one_minted_token();
        let used = tokens.authenticate(&secret).unwrap();
        assert!(used.last_used_at.is_some(), "kept in memory at once");
        assert_eq!(
            tokens.get(&record.id).unwrap().last_used_at,
            used.last_used_at
        );
        assert_eq!(
            stored_last_use(&store, &record.id),
            None,
            "authentication itself wrote to the store"
        );
        tokens.flush_last_used();
        assert_eq!(stored_last_use(&store, &record.id), used.last_used_at);
        // Nothing is left to write, and the token still works.
        assert!(tokens.lock().unwritten_use.is_empty());
        assert!(tokens.authenticate(&secret).is_ok());
    }

    #[tokio::test]
    async fn a_clean_stop_writes_the_last_use_still_in_memory() {
        let (_dir, store, tokens, record, secret) = one_minted_token();
        let stop = CancellationToken::new();
        let tasks = TaskTracker::new();
        // Cancelled before it starts: only the write at the stop can keep it.
        stop.cancel();
        let used = tokens.authenticate(&secret).unwrap();
        tokens.start_flusher(stop, &tasks);
        tasks.close();
        tasks.wait().await;
        assert_eq!(stored_last_use(&store, &record.id), used.last_used_at);
    }
}
