//! What the browser test needs on the machine, installed when missing:
//! Debian's `chromium` (through apt, as root) and `playwright-core` (through
//! `npm ci` from the lock file in `tests/browser`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser Debian's `chromium` package installs.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The workspace root (the parent of the tests crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

/// The Chromium executable: `$CHROMIUM` when set, else Debian's, installed
/// with apt when missing and running as root.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "CHROMIUM={} does not exist", path.display());
        return path;
    }
    let path = PathBuf::from(CHROMIUM);
    if !path.exists() {
        apt_install(&["chromium"], "the browser the console test drives");
    }
    assert!(
        path.exists(),
        "{CHROMIUM} is still missing after `apt-get install chromium`"
    );
    path
}

/// `tests/browser` with `playwright-core` installed (`npm ci` when it is
/// missing; nothing is fetched once it is there).
pub fn playwright() -> PathBuf {
    let dir = workspace_root().join("tests").join("browser");
    if !has("node") || !has("npm") {
        apt_install(
            &["nodejs", "npm"],
            "Node.js, which runs the Playwright story",
        );
    }
    let installed = dir
        .join("node_modules")
        .join("playwright-core")
        .join("package.json");
    if !installed.exists() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .expect("npm runs");
        assert!(
            status.success(),
            "`npm ci` in {} failed: it installs playwright-core from the npm registry",
            dir.display()
        );
    }
    dir
}

/// Whether `program` runs.
fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Installs Debian packages, or fails saying how to when not root.
fn apt_install(packages: &[&str], what: &str) {
    let list = packages.join(" ");
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    assert!(
        root,
        "the console test needs {what}: install it with \
         `sudo apt-get update && sudo apt-get install -y {list}` and run the tests again"
    );
    eprintln!("installing {list} ({what}) with apt-get");
    for args in [
        vec!["update"],
        [vec!["install", "-y"], packages.to_vec()].concat(),
    ] {
        let status = Command::new("apt-get")
            .args(&args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .expect("apt-get runs");
        assert!(status.success(), "`apt-get {}` failed", args.join(" "));
    }
}
