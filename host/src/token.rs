//! The API token: configured, or generated once and kept in the data directory
//! with owner-only permissions.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::Rng;

pub use crate::domain::data_dir::TOKEN_FILE;

/// Where the token in use came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// `--api-token` / `API_TOKEN`.
    Configured,
    /// Read from the token file of an earlier start.
    File(PathBuf),
    /// Generated now and written to the token file.
    Generated(PathBuf),
}

/// The token to use, and where it came from.
pub fn resolve(
    configured: Option<&str>,
    data_dir: &Path,
) -> std::io::Result<(String, TokenSource)> {
    if let Some(t) = configured {
        return Ok((t.trim().to_owned(), TokenSource::Configured));
    }
    let path = data_dir.join(TOKEN_FILE);
    match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => return Ok((t.trim().to_owned(), TokenSource::File(path))),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let bytes: [u8; 32] = rand::rng().random();
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(data_dir)?;
    write_owner_only(&path, &token)?;
    Ok((token, TokenSource::Generated(path)))
}

fn write_owner_only(path: &Path, token: &str) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(token.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_token_is_kept_owner_only_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let (t1, s1) = resolve(None, dir.path()).unwrap();
        assert!(matches!(s1, TokenSource::Generated(_)));
        assert_eq!(t1.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(TOKEN_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let (t2, s2) = resolve(None, dir.path()).unwrap();
        assert_eq!(t1, t2);
        assert!(matches!(s2, TokenSource::File(_)));
    }

    #[test]
    fn a_configured_token_wins_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        resolve(None, dir.path()).unwrap();
        let (t, s) = resolve(Some("secret-token"), dir.path()).unwrap();
        assert_eq!((t.as_str(), s), ("secret-token", TokenSource::Configured));
    }
}
