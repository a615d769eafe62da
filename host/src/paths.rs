//! Filesystem paths from configuration, made absolute and checked once at
//! start.
//!
//! Configuration may name a path relative to the working directory (the
//! default data directory is `./data`). Parts of the gateway keep paths for
//! later or hand them to libraries that refuse relative ones (wasmtime's
//! compilation cache), and a working directory can change under a process,
//! so every configured path is resolved against the working directory once,
//! before anything uses it. A directory the gateway must write to is created
//! and probed here, so a bad one stops the start with a message that names
//! the path and the option that set it, instead of failing deep inside the
//! store or the plugin engine.

use std::io;
use std::path::{Path, PathBuf};

/// A configured path that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{what} {path} ({option}) {problem}: {source}")]
pub struct PathError {
    /// What the path is for, for the message ("the data directory").
    pub what: &'static str,
    /// The option that set it, flag and environment variable.
    pub option: &'static str,
    /// The path as resolved.
    pub path: PathBuf,
    /// What could not be done with it.
    pub problem: &'static str,
    /// The operating system's reason.
    #[source]
    pub source: io::Error,
}

/// Where a configured path came from, for error messages.
#[derive(Debug, Clone, Copy)]
pub struct PathOption {
    /// What the path is for ("the data directory").
    pub what: &'static str,
    /// The flag and environment variable that set it.
    pub option: &'static str,
}

/// `--data-dir` / `SWITCHBOARD_DATA_DIR`.
pub const DATA_DIR: PathOption = PathOption {
    what: "the data directory",
    option: "--data-dir / SWITCHBOARD_DATA_DIR",
};

/// `--media-dir` / `SWITCHBOARD_MEDIA_DIR`.
pub const MEDIA_DIR: PathOption = PathOption {
    what: "the media directory",
    option: "--media-dir / SWITCHBOARD_MEDIA_DIR",
};

/// `--plugin-dir` / `SWITCHBOARD_PLUGIN_DIR`.
pub const PLUGIN_DIR: PathOption = PathOption {
    what: "the plugin directory",
    option: "--plugin-dir / SWITCHBOARD_PLUGIN_DIR",
};

impl PathOption {
    fn error(self, path: &Path, problem: &'static str, source: io::Error) -> PathError {
        PathError {
            what: self.what,
            option: self.option,
            path: path.to_path_buf(),
            problem,
            source,
        }
    }
}

/// `path` made absolute against the current working directory, with `.`
/// components removed (`..` is kept: it may cross a symbolic link).
pub fn absolute(path: &Path, opt: PathOption) -> Result<PathBuf, PathError> {
    std::path::absolute(path)
        .map(|p| p.components().collect())
        .map_err(|e| opt.error(path, "cannot be made absolute", e))
}

/// `path` made absolute, created when missing, and checked to be a directory
/// the gateway can write to.
pub fn writable_dir(path: &Path, opt: PathOption) -> Result<PathBuf, PathError> {
    let path = absolute(path, opt)?;
    std::fs::create_dir_all(&path).map_err(|e| opt.error(&path, "cannot be created", e))?;
    let probe = path.join(format!(".write-check-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| opt.error(&path, "is not writable", e))?;
    Ok(path)
}

/// `path` made absolute, created when missing (so plugins can be dropped into
/// it later), and checked to be a directory.
pub fn readable_dir(path: &Path, opt: PathOption) -> Result<PathBuf, PathError> {
    let path = absolute(path, opt)?;
    std::fs::create_dir_all(&path).map_err(|e| opt.error(&path, "cannot be created", e))?;
    std::fs::read_dir(&path).map_err(|e| opt.error(&path, "cannot be read", e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_path_becomes_absolute_without_dot_components() {
        let p = absolute(Path::new("./data/./x"), DATA_DIR).unwrap();
        assert!(p.is_absolute());
        assert!(p.ends_with("data/x"), "{}", p.display());
        assert!(!p.components().any(|c| c.as_os_str() == "."));
    }

    #[test]
    fn a_missing_data_directory_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let want = dir.path().join("a/b");
        assert_eq!(writable_dir(&want, DATA_DIR).unwrap(), want);
        assert!(want.is_dir());
    }

    #[test]
    fn a_data_directory_under_a_file_names_the_path_and_the_option() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let err = writable_dir(&file.join("data"), DATA_DIR).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("--data-dir / SWITCHBOARD_DATA_DIR"), "{text}");
        assert!(
            text.contains(&file.join("data").display().to_string()),
            "{text}"
        );
        assert!(text.contains("cannot be created"), "{text}");
    }
}
