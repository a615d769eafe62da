//! Python tools the tests install for themselves: one venv per tool under
//! `target/`, made on first use from PyPI (needs `python3` with `venv`, and
//! the package registry once), then reused. A lock file keeps concurrent
//! tests and test processes from building the same venv twice.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (the tests crate lives in it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace root")
        .to_path_buf()
}

/// Runs `cmd` to completion; panics with its output when it fails.
fn run(cmd: &mut Command, what: &str) {
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not run {cmd:?}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}); the command was {cmd:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
}

/// The venv `target/<name>` with `package==version` installed; blocks while
/// it is made. Returns the venv's directory (its programs are in `bin/`).
pub fn venv_with(name: &str, package: &str, version: &str) -> PathBuf {
    let target = workspace_root().join("target");
    fs::create_dir_all(&target).expect("target/ exists");
    let venv = target.join(name);
    let python = venv.join("bin").join("python");
    let stamp = venv.join(format!("{package}-{version}.installed"));
    let lock = File::create(target.join(format!("{name}.lock"))).expect("the venv lock file");
    lock.lock().expect("lock the venv");
    if !python.is_file() || !stamp.is_file() {
        let python_env = |cmd: &mut Command| {
            cmd.env_remove("PYTHONPATH")
                .env_remove("PYTHONHOME")
                .env_remove("VIRTUAL_ENV");
        };
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "venv", "--clear"]).arg(&venv);
        python_env(&mut cmd);
        run(
            &mut cmd,
            &format!("creating the venv target/{name} (needs python3 with venv)"),
        );
        let mut cmd = Command::new(&python);
        cmd.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg(format!("{package}=={version}"));
        python_env(&mut cmd);
        run(
            &mut cmd,
            &format!("installing {package} from PyPI into target/{name}"),
        );
        fs::write(&stamp, version).expect("mark the install");
    }
    venv
}
