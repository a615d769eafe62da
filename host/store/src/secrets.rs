//! Secrets the gateway must use again (a proxy's credentials), kept sealed:
//! AES-256-GCM under a key of the data directory's own (`secret-key`, made
//! on first open, readable by its owner only), so the database file, its
//! copies and its backups never hold them in plain text. What is sealed
//! names its purpose as associated data, so a sealed value cannot be
//! moved to another use.
//!
//! A key that is lost or replaced leaves what was sealed unreadable: the
//! error says so, and setting the secret again seals it anew.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use switchboard_domain::proxy::{Proxy, ProxyChoice, ProxyCredentials, StoredProxy};

use crate::{Store, StoreError, StoreResult};

/// The key's file in the data directory.
pub const KEY_FILE: &str = "secret-key";

/// The key's length: AES-256.
const KEY_LEN: usize = 32;

/// The sealing key of one data directory.
pub(crate) struct Secrets {
    key: LessSafeKey,
    rng: SystemRandom,
    path: PathBuf,
}

impl Secrets {
    /// Reads the data directory's key, making one when there is none.
    pub(crate) fn open(data_dir: &Path) -> StoreResult<Secrets> {
        let path = data_dir.join(KEY_FILE);
        let rng = SystemRandom::new();
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => make_key(&path, &rng)?,
            Err(e) => return Err(key_error(&path, &e.to_string())),
        };
        if bytes.len() != KEY_LEN {
            return Err(key_error(
                &path,
                &format!("holds {} bytes, not a {KEY_LEN}-byte key", bytes.len()),
            ));
        }
        let key = UnboundKey::new(&AES_256_GCM, &bytes)
            .map_err(|_| key_error(&path, "is not a usable key"))?;
        Ok(Secrets {
            key: LessSafeKey::new(key),
            rng,
            path,
        })
    }

    /// `plain` sealed for `purpose`: base64 of a fresh nonce and the
    /// ciphertext with its tag.
    pub(crate) fn seal(&self, purpose: &str, plain: &[u8]) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng
            .fill(&mut nonce)
            .expect("the system's random source works");
        let mut sealed = plain.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(purpose.as_bytes()),
                &mut sealed,
            )
            .expect("sealing a small value cannot fail");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        base64::engine::general_purpose::STANDARD.encode(out)
    }

    /// What [`Secrets::seal`] sealed for `purpose`; `None` when it was not
    /// sealed with this key for it.
    pub(crate) fn open_sealed(&self, purpose: &str, sealed: &str) -> Option<Vec<u8>> {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(sealed)
            .ok()?;
        if raw.len() < NONCE_LEN {
            return None;
        }
        let (nonce, rest) = raw.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buf = rest.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(purpose.as_bytes()), &mut buf)
            .ok()?;
        Some(plain.to_vec())
    }
}

/// Writes a new random key to `path`, readable by its owner only; a key
/// another process wrote first is read instead.
fn make_key(path: &Path, rng: &SystemRandom) -> StoreResult<Vec<u8>> {
    let mut key = vec![0u8; KEY_LEN];
    rng.fill(&mut key)
        .map_err(|_| key_error(path, "could not be made: no random source"))?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut file) => {
            file.write_all(&key)
                .and_then(|()| file.sync_all())
                .map_err(|e| key_error(path, &e.to_string()))?;
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::read(path).map_err(|e| key_error(path, &e.to_string()))
        }
        Err(e) => Err(key_error(path, &e.to_string())),
    }
}

fn key_error(path: &Path, why: &str) -> StoreError {
    StoreError::Secret(format!("the key file {} {why}", path.display()))
}

/// The purpose a proxy's credentials are sealed for.
const PROXY_PURPOSE: &str = "session proxy credentials v1";

impl Store {
    /// A session's proxy choice as the store keeps it: the address in the
    /// clear, the credentials sealed.
    pub fn seal_proxy(&self, choice: &ProxyChoice) -> StoredProxy {
        match choice {
            ProxyChoice::Direct => StoredProxy {
                address: switchboard_domain::proxy::DIRECT.into(),
                sealed_credentials: None,
            },
            ProxyChoice::Via(proxy) => StoredProxy {
                address: proxy.address(),
                sealed_credentials: proxy.credentials.as_ref().map(|c| {
                    let plain = serde_json::to_vec(c).expect("credentials serialise");
                    self.secrets.seal(PROXY_PURPOSE, &plain)
                }),
            },
        }
    }

    /// The proxy choice `stored` keeps, its credentials unsealed. Fails
    /// when they were sealed under another key (the data directory's
    /// `secret-key` was lost or replaced).
    pub fn open_proxy(&self, stored: &StoredProxy) -> StoreResult<ProxyChoice> {
        if stored.is_direct() {
            return Ok(ProxyChoice::Direct);
        }
        let mut proxy = Proxy::parse(&stored.address, None, None)
            .map_err(|e| StoreError::Secret(format!("the stored proxy address {e}")))?;
        if let Some(sealed) = &stored.sealed_credentials {
            let plain = self
                .secrets
                .open_sealed(PROXY_PURPOSE, sealed)
                .ok_or_else(|| {
                    StoreError::Secret(format!(
                        "the credentials of the proxy {} cannot be read with the key in {}: it is not the key they were sealed with; set the session's proxy again",
                        stored.address,
                        self.secrets.path.display()
                    ))
                })?;
            let credentials: ProxyCredentials = serde_json::from_slice(&plain)?;
            proxy.credentials = Some(credentials);
        }
        Ok(ProxyChoice::Via(proxy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_for_its_purpose_only_and_with_its_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = Secrets::open(dir.path()).unwrap();
        let sealed = secrets.seal("a", b"hunter2");
        assert!(!sealed.contains("hunter2"));
        assert_eq!(
            secrets.open_sealed("a", &sealed).as_deref(),
            Some(&b"hunter2"[..])
        );
        assert_eq!(secrets.open_sealed("b", &sealed), None);
        let again = Secrets::open(dir.path()).unwrap();
        assert_eq!(
            again.open_sealed("a", &sealed).as_deref(),
            Some(&b"hunter2"[..])
        );
        let other = tempfile::tempdir().unwrap();
        let stranger = Secrets::open(other.path()).unwrap();
        assert_eq!(stranger.open_sealed("a", &sealed), None);
        assert_eq!(secrets.open_sealed("a", "not base64!"), None);
    }

    #[cfg(unix)]
    #[test]
    fn the_key_file_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        Secrets::open(dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_key_file_of_the_wrong_length_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(KEY_FILE), b"short").unwrap();
        let err = Secrets::open(dir.path()).err().unwrap().to_string();
        assert!(err.contains("not a 32-byte key"), "{err}");
    }
}
