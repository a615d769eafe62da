//! The API token: configured, or generated once and kept in the data directory
//! with owner-only permissions. It opens everything, so a token short enough
//! to guess is refused at start ([`MIN_TOKEN_CHARS`]); a generated one is 64
//! hex digits.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::Rng;

pub use crate::domain::data_dir::TOKEN_FILE;

/// The fewest characters the admin token may have.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why there is no token to start with.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The token file could not be read or written.
    #[error("could not read or create the API token file: {0}")]
    Io(#[from] std::io::Error),
    /// The configured token is too short to be safe.
    #[error(
        "API_TOKEN (--api-token) is {chars} characters long; the admin token must have at least {MIN_TOKEN_CHARS}. \
         Set a longer one, for example `export API_TOKEN=$(openssl rand -hex 32)`, \
         or unset it to have one generated into the data directory"
    )]
    ConfiguredTooShort {
        /// How many characters it has.
        chars: usize,
    },
    /// The token file of an earlier start holds a token too short to be safe.
    #[error(
        "{} holds an API token of {chars} characters; the admin token must have at least {MIN_TOKEN_CHARS}. \
         Write a longer one into it (for example `openssl rand -hex 32 > {}`), \
         set API_TOKEN, or delete the file to have one generated",
        path.display(),
        path.display()
    )]
    FileTooShort {
        /// The token file.
        path: PathBuf,
        /// How many characters its token has.
        chars: usize,
    },
}

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

/// The token to use, and where it came from; a configured or stored token
/// shorter than [`MIN_TOKEN_CHARS`] is an error saying how to set a longer
/// one.
pub fn resolve(
    configured: Option<&str>,
    data_dir: &Path,
) -> Result<(String, TokenSource), TokenError> {
    if let Some(t) = configured {
        let t = t.trim();
        let chars = t.chars().count();
        if chars < MIN_TOKEN_CHARS {
            return Err(TokenError::ConfiguredTooShort { chars });
        }
        return Ok((t.to_owned(), TokenSource::Configured));
    }
    let path = data_dir.join(TOKEN_FILE);
    match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => {
            let t = t.trim();
            let chars = t.chars().count();
            if chars < MIN_TOKEN_CHARS {
                return Err(TokenError::FileTooShort { path, chars });
            }
            return Ok((t.to_owned(), TokenSource::File(path)));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
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
        let (t, s) = resolve(Some("secret-token-0123"), dir.path()).unwrap();
        assert_eq!(
            (t.as_str(), s),
            ("secret-token-0123", TokenSource::Configured)
        );
    }

    #[test]
    fn a_token_shorter_than_sixteen_characters_is_refused_saying_how_to_set_one() {
        let dir = tempfile::tempdir().unwrap();
        let e = resolve(Some("  fifteen-chars!!  "), dir.path()).unwrap_err();
        assert!(
            matches!(e, TokenError::ConfiguredTooShort { chars: 15 }),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(
            text.contains("at least 16") && text.contains("API_TOKEN"),
            "{text}"
        );
        assert!(resolve(Some("sixteen-chars-ok"), dir.path()).is_ok());
        // Counted in characters, not bytes.
        assert!(resolve(Some("ééééééééééééééé"), dir.path()).is_err());

        std::fs::write(dir.path().join(TOKEN_FILE), "short\n").unwrap();
        let e = resolve(None, dir.path()).unwrap_err();
        assert!(
            matches!(e, TokenError::FileTooShort { chars: 5, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("api-token"), "{e}");
    }
}
