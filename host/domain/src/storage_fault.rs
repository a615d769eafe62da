//! What kind of storage fault stopped a write: the one vocabulary the store,
//! the media store, the runtime and the API share, so a full disk is answered
//! `507 insufficient_storage` and any other storage fault `503
//! storage_unavailable` by type, never by reading an error's text.

use serde::{Deserialize, Serialize};

/// Why the gateway could not keep something on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageFault {
    /// The filesystem is full (or a quota is reached), or free space is
    /// under the configured floor: writes fail until space is freed.
    NoSpace,
    /// Any other I/O fault, or the store is being reopened after one.
    Unavailable,
}

impl StorageFault {
    /// What an I/O error from the filesystem means; `None` when it is not a
    /// fault of the storage itself (a missing file, a refused permission).
    pub fn of_io(e: &std::io::Error) -> Option<StorageFault> {
        use std::io::ErrorKind;
        // ENOSPC and EDQUOT on Linux: the numbers, since not every error
        // carries its kind through a wrapper.
        const ENOSPC: i32 = 28;
        const EDQUOT: i32 = 122;
        match (e.kind(), e.raw_os_error()) {
            (ErrorKind::StorageFull | ErrorKind::QuotaExceeded, _) => Some(StorageFault::NoSpace),
            (_, Some(ENOSPC | EDQUOT)) => Some(StorageFault::NoSpace),
            (ErrorKind::NotFound | ErrorKind::PermissionDenied | ErrorKind::AlreadyExists, _) => {
                None
            }
            _ => Some(StorageFault::Unavailable),
        }
    }

    /// The label of this kind in metrics and events.
    pub fn as_str(self) -> &'static str {
        match self {
            StorageFault::NoSpace => "no_space",
            StorageFault::Unavailable => "io",
        }
    }

    /// The API error code of a write refused for this fault.
    pub fn code(self) -> &'static str {
        match self {
            StorageFault::NoSpace => "insufficient_storage",
            StorageFault::Unavailable => "storage_unavailable",
        }
    }
}

impl std::fmt::Display for StorageFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StorageFault::NoSpace => "the gateway's storage is full",
            StorageFault::Unavailable => "the gateway's storage is failing",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_told_apart_from_other_io_faults() {
        let full = std::io::Error::from_raw_os_error(28);
        assert_eq!(StorageFault::of_io(&full), Some(StorageFault::NoSpace));
        let quota = std::io::Error::from_raw_os_error(122);
        assert_eq!(StorageFault::of_io(&quota), Some(StorageFault::NoSpace));
        let eio = std::io::Error::from_raw_os_error(5);
        assert_eq!(StorageFault::of_io(&eio), Some(StorageFault::Unavailable));
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(StorageFault::of_io(&missing), None);
    }
}
