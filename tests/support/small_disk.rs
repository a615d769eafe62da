//! A small filesystem for storage-fault tests: a tmpfs of a few MiB mounted
//! on a temporary directory (so a test can fill it and free it again), and
//! unmounted when dropped. Mounting needs root, which CI has; elsewhere the
//! test fails and says why instead of passing without having run.

use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A mounted tmpfs of a fixed size.
pub struct SmallDisk {
    dir: TempDir,
}

impl SmallDisk {
    /// Mounts a tmpfs of `mib` MiB on a fresh temporary directory.
    pub fn mount(mib: u64) -> SmallDisk {
        let dir = tempfile::tempdir().expect("a temporary directory to mount on");
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("the `mount` command runs");
        assert!(
            out.status.success(),
            "this test needs a small filesystem it can fill: it mounts a {mib} MiB tmpfs, which takes root \
             (CI runs as root; run it as root, or in a container with CAP_SYS_ADMIN). mount said: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        SmallDisk { dir }
    }

    /// The mounted directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a filler file until the filesystem is full; returns its path
    /// (delete it to free the space again).
    pub fn fill(&self) -> PathBuf {
        let path = self.dir.path().join("filler");
        let mut file = std::fs::File::create(&path).expect("the filler file is created");
        let chunk = vec![0xA5u8; 4096];
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => panic!("filling the small disk: {e}"),
            }
        }
        // Whatever fits of a last partial block.
        let one = [0xA5u8; 1];
        while file.write(&one).is_ok_and(|n| n == 1) {}
        path
    }

    /// Bytes still free on it.
    pub fn free_bytes(&self) -> u64 {
        let out = std::process::Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(self.dir.path())
            .output()
            .expect("df runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .expect("df reports the free bytes")
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazily: a process killed a moment ago may still hold a file.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
