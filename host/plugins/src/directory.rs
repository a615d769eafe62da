//! Hot loading from the plugin directory (`--plugin-dir`): every
//! `<stem>.toml` manifest (see [`super::manifest`]) loads its component as
//! plugin `dir-<stem>` with the manifest's bindings. The directory is
//! scanned at start and then every `--plugin-dir-poll-ms`: a manifest or
//! component whose contents changed is reloaded in place (like
//! `PUT /plugins/{id}`: calls in flight finish on the old version), a
//! removed manifest unloads its plugin, and a file that does not load is
//! reported (logged, and in `GET /api/v1/plugins/directory`) while the last
//! good version, if any, keeps running. Directory plugins and their
//! bindings are not stored: the files are the truth.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::manifest::{self, Manifest};
use super::model::{Binding, PluginRecord, PluginStatus, Source};
use super::{PluginError, Plugins};
use crate::domain::time::unix_now;

/// What was last seen of a file: its size and modification time.
type Stat = Option<(u64, SystemTime)>;

/// What the watcher knows of one manifest.
#[derive(Debug, Clone)]
struct Entry {
    /// The manifest's text and its component's stat when last processed.
    seen: (String, Stat),
    /// The plugin id, when the stem is valid.
    plugin_id: Option<String>,
    /// sha256 of the component and the manifest text now running.
    running: Option<(String, String)>,
    /// Why the last change did not load.
    error: Option<String>,
    checked_at: i64,
}

/// The watcher's state.
#[derive(Debug, Default, Clone)]
pub struct DirState {
    entries: BTreeMap<String, Entry>,
    error: Option<String>,
}

/// One manifest as the API shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileView {
    /// The manifest's file name.
    pub manifest: String,
    /// The plugin it loads (`dir-<stem>`).
    pub plugin_id: Option<String>,
    /// `loaded` (the current files run), `stale` (a change did not load;
    /// the last good version runs) or `error` (nothing runs).
    pub status: &'static str,
    /// Why the last change did not load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Unix seconds of the last change processed.
    pub checked_at: i64,
}

/// The plugin directory as the API shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DirectoryView {
    /// The directory, or `null` when directory loading is off.
    pub path: Option<String>,
    /// The scan interval in milliseconds.
    pub poll_ms: u64,
    /// Why the directory itself could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Every manifest found, by file name.
    pub files: Vec<FileView>,
}

fn stat(path: &Path) -> Stat {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

impl Plugins {
    /// Scans the directory once now (blocking: it compiles), then spawns the
    /// poller. Does nothing when no directory is configured.
    pub async fn watch_directory(&self, cancel: CancellationToken, tasks: &TaskTracker) {
        let Some(dir) = self.config().dir.clone() else {
            return;
        };
        let poll = self.config().dir_poll;
        let p = self.clone();
        let d = dir.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || p.scan_directory(&d)).await {
            tracing::error!(error = %e, "the first plugin directory scan failed");
        }
        tracing::info!(dir = %dir.display(), poll_ms = poll.as_millis() as u64, "watching the plugin directory");
        let p = self.clone();
        tasks.spawn(async move {
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(poll) => {}
                }
                let (p2, d) = (p.clone(), dir.clone());
                if let Err(e) = tokio::task::spawn_blocking(move || p2.scan_directory(&d)).await {
                    tracing::error!(error = %e, "a plugin directory scan failed");
                }
            }
        });
    }

    /// One pass over the directory: loads new manifests, reloads changed
    /// ones, unloads removed ones. Scans run one at a time (the poller is
    /// sequential); the state is published when the pass ends.
    pub fn scan_directory(&self, dir: &Path) {
        let mut state = self
            .inner
            .directory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        self.scan_into(&mut state, dir);
        *self
            .inner
            .directory
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = state;
    }

    fn scan_into(&self, state: &mut DirState, dir: &Path) {
        let listing = match std::fs::read_dir(dir) {
            Ok(l) => l,
            Err(e) => {
                let why = format!("the plugin directory {} cannot be read: {e}", dir.display());
                if state.error.as_deref() != Some(why.as_str()) {
                    tracing::error!("{why}");
                }
                state.error = Some(why);
                return;
            }
        };
        state.error = None;
        let mut found: Vec<(String, PathBuf)> = listing
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
            .filter_map(|p| Some((p.file_name()?.to_str()?.to_owned(), p)))
            .collect();
        found.sort();
        let names: HashSet<&String> = found.iter().map(|(n, _)| n).collect();
        let gone: Vec<String> = state
            .entries
            .keys()
            .filter(|k| !names.contains(k))
            .cloned()
            .collect();
        for name in gone {
            if let Some(Entry {
                plugin_id: Some(id),
                running: Some(_),
                ..
            }) = state.entries.remove(&name)
            {
                self.unload_directory_plugin(&id, &name);
            }
        }
        for (name, path) in found {
            self.scan_manifest(state, dir, name, &path);
        }
    }

    fn scan_manifest(&self, state: &mut DirState, dir: &Path, name: String, path: &Path) {
        let Ok(text) = std::fs::read_to_string(path) else {
            return; // Removed or unreadable mid-scan; the next scan sees it settled.
        };
        let parsed = manifest::parse(&text);
        let wasm_path = parsed.as_ref().ok().map(|m| dir.join(&m.wasm));
        let seen = (text.clone(), wasm_path.as_deref().and_then(stat));
        let entry = state.entries.get(&name);
        if entry.is_some_and(|e| e.seen == seen) {
            return;
        }
        let stem = name.trim_end_matches(".toml");
        let plugin_id = manifest::plugin_id(stem).ok();
        let running = entry.and_then(|e| e.running.clone());
        let result = manifest::plugin_id(stem).and_then(|id| {
            let m = parsed?;
            let wasm = wasm_path.unwrap_or_default();
            let bytes = std::fs::read(&wasm)
                .map_err(|e| format!("the component `{}` cannot be read: {e}", m.wasm))?;
            let sha = hex::encode(Sha256::digest(&bytes));
            if running.as_ref() == Some(&(sha.clone(), text.clone())) {
                return Ok((sha, text.clone()));
            }
            self.load_directory_plugin(&id, &name, &m, &bytes, &sha)
                .map_err(|e| e.to_string())?;
            Ok((sha, text.clone()))
        });
        let (running, error) = match result {
            Ok(r) => (Some(r), None),
            Err(why) => {
                let keeps = if running.is_some() {
                    "; the last good version keeps running"
                } else {
                    ""
                };
                tracing::error!(manifest = %name, error = %why, "plugin directory: could not load{keeps}");
                (running, Some(why))
            }
        };
        state.entries.insert(
            name,
            Entry {
                seen,
                plugin_id,
                running,
                error,
                checked_at: unix_now(),
            },
        );
    }

    /// Loads (or reloads in place) one directory plugin with its bindings.
    fn load_directory_plugin(
        &self,
        id: &str,
        manifest_name: &str,
        m: &Manifest,
        bytes: &[u8],
        sha: &str,
    ) -> Result<(), PluginError> {
        let (loaded, info) = self.inner.engine.load(id, bytes, &self.inner.store)?;
        let hooks = info.hooks.clone();
        let now = unix_now();
        let bindings: Vec<Binding> = m
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| {
                self.make_binding(
                    format!("{id}-binding-{i}"),
                    b.clone().into_binding_in(id),
                    &hooks,
                    now,
                    Source::Directory,
                )
                .map_err(|e| match e {
                    PluginError::Invalid { field, message } => PluginError::Managed(format!(
                        "binding {} of the manifest: `{field}` {message}",
                        i + 1
                    )),
                    other => other,
                })
            })
            .collect::<Result<_, _>>()?;
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
        let name = m.name.clone().unwrap_or_else(|| info.name.clone());
        match self.slot(id) {
            Some(slot) => {
                {
                    let mut r = slot.record.lock().unwrap_or_else(|p| p.into_inner());
                    r.name = name;
                    r.version = info.version.clone();
                    r.sha256 = sha.to_owned();
                    r.size = bytes.len() as u64;
                    r.hooks = hooks;
                    r.endpoints = info.endpoints;
                    r.world = info.world;
                    r.updated_at = now;
                    r.status = PluginStatus::Active;
                    r.quarantined_reason = None;
                }
                slot.loaded.store(loaded);
                slot.stats.succeed();
                slot.quarantined.store(false, Ordering::Release);
                tracing::info!(plugin = id, manifest = manifest_name, version = %info.version, "plugin directory: reloaded in place");
            }
            None => {
                let record = PluginRecord {
                    id: id.to_owned(),
                    name,
                    version: info.version.clone(),
                    sha256: sha.to_owned(),
                    size: bytes.len() as u64,
                    hooks,
                    endpoints: info.endpoints,
                    world: info.world,
                    created_at: now,
                    updated_at: now,
                    status: PluginStatus::Active,
                    quarantined_reason: None,
                    source: Source::Directory,
                    manifest: Some(manifest_name.to_owned()),
                };
                self.insert_slot(record, loaded);
                tracing::info!(plugin = id, manifest = manifest_name, version = %info.version, "plugin directory: loaded");
            }
        }
        self.inner
            .dir_bindings
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_owned(), bindings);
        self.rebuild_chains()?;
        Ok(())
    }

    /// Unloads a directory plugin whose manifest is gone: its bindings (also
    /// any made through the API) and its key-value store go with it.
    fn unload_directory_plugin(&self, id: &str, manifest_name: &str) {
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
        self.write_slots().remove(id);
        self.inner
            .dir_bindings
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        if let Err(e) = self
            .inner
            .store
            .delete_plugin(id)
            .map(|_| ())
            .and_then(|()| self.rebuild_chains())
        {
            tracing::error!(plugin = id, error = %e, "plugin directory: could not remove the unloaded plugin's bindings");
        }
        tracing::info!(
            plugin = id,
            manifest = manifest_name,
            "plugin directory: manifest removed, plugin unloaded"
        );
    }

    /// The plugin directory and what became of each manifest.
    pub fn directory(&self) -> DirectoryView {
        let state = self
            .inner
            .directory
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        DirectoryView {
            path: self.config().dir.as_ref().map(|d| d.display().to_string()),
            poll_ms: self.config().dir_poll.as_millis() as u64,
            error: state.error.clone(),
            files: state
                .entries
                .iter()
                .map(|(name, e)| FileView {
                    manifest: name.clone(),
                    plugin_id: e.plugin_id.clone(),
                    status: match (&e.running, &e.error) {
                        (_, None) => "loaded",
                        (Some(_), Some(_)) => "stale",
                        (None, Some(_)) => "error",
                    },
                    error: e.error.clone(),
                    checked_at: e.checked_at,
                })
                .collect(),
        }
    }
}
