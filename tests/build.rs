//! Builds every plugin the end-to-end tests load, from source, so that
//! `cargo test --workspace --locked` needs nothing installed by hand:
//!
//! 1. the `wasm32-wasip2` target (`rustup target add` when it is missing);
//! 2. the Rust plugins: `cargo build --release --target wasm32-wasip2` of the
//!    plugins workspace (`plugins/Cargo.toml`, `--locked`), into
//!    `target/plugins` (its own target directory: the outer build holds the
//!    lock of `target/debug`);
//! 3. componentize-py (pinned, in a venv at `target/py` when missing) and
//!    the Python plugin `plugins/python-shouter`.
//!
//! Each component's absolute path becomes `SWITCHBOARD_PLUGIN_<NAME>` at
//! compile time (see `support/plugins.rs`). A plugin that fails to build
//! fails this build with the tool's output: nothing is skipped.

use std::env;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Rust plugins: (package name, environment suffix).
const RUST_PLUGINS: &[(&str, &str)] = &[
    ("keyword-router", "KEYWORD_ROUTER"),
    ("redactor", "REDACTOR"),
    ("footer", "FOOTER"),
    ("greeting", "GREETING"),
    ("hostile-loop", "HOSTILE_LOOP"),
    ("hostile-memory", "HOSTILE_MEMORY"),
    ("hostile-trap", "HOSTILE_TRAP"),
];

/// The componentize-py release the Python plugin is built with.
const COMPONENTIZE_PY: &str = "0.25.1";

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace root")
        .to_path_buf();
    for dir in ["plugins", "plugin-sdk", "wit"] {
        watch(&root.join(dir));
    }
    println!("cargo:rerun-if-changed=build.rs");

    let out = root.join("target").join("plugins");
    ensure_target();
    build_rust_plugins(&root, &out);
    build_python_plugin(&root, &out);
}

/// Asks cargo to rerun this script when any source file under `dir` changes
/// (build outputs and caches excluded, so running the plugins' own tests
/// does not trigger it).
fn watch(dir: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if [OsStr::new("target"), OsStr::new("__pycache__")].contains(&name.as_os_str()) {
            continue;
        }
        if path.is_dir() {
            watch(&path);
        } else {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// A command for a nested tool, without the variables cargo sets for this
/// build script (they describe the outer build, not the nested one).
fn clean_command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let outer = key.starts_with("CARGO_")
            && !["CARGO_HOME", "CARGO_MAKEFLAGS"].contains(&key)
            && !key.starts_with("CARGO_NET_")
            && !key.starts_with("CARGO_HTTP_")
            && !key.starts_with("CARGO_REGISTRIES_")
            && !key.starts_with("CARGO_TERM_");
        let build_script = [
            "RUSTFLAGS",
            "RUSTDOCFLAGS",
            "TARGET",
            "HOST",
            "OUT_DIR",
            "OPT_LEVEL",
            "PROFILE",
            "DEBUG",
            "NUM_JOBS",
            "RUSTC",
            "RUSTDOC",
            "RUSTC_LINKER",
        ]
        .contains(&key);
        if outer || build_script {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Runs `cmd`; on failure, fails the build with `what` and the tool's output.
fn run(mut cmd: Command, what: &str) {
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not run {cmd:?}: {e}"));
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        for line in stdout.lines().chain(stderr.lines()) {
            // Shown by cargo when the build script fails.
            eprintln!("{line}");
        }
        panic!(
            "{what} failed ({}); the command was {cmd:?}. Its output is above.",
            output.status
        );
    }
}

/// Installs the `wasm32-wasip2` standard library when the toolchain lacks it.
fn ensure_target() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let installed = libdir.is_some_and(|dir| {
        fs::read_dir(dir).is_ok_and(|mut entries| {
            entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libstd-")))
        })
    });
    if !installed {
        let mut cmd = clean_command("rustup");
        cmd.args(["target", "add", TARGET]);
        run(
            cmd,
            "installing the wasm32-wasip2 target (needs rustup; or install the target's standard library yourself)",
        );
    }
}

/// Builds the plugins workspace for `wasm32-wasip2` and exports each component's path.
fn build_rust_plugins(root: &Path, out: &Path) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = clean_command(cargo);
    cmd.args([
        "build",
        "--release",
        "--locked",
        "--target",
        TARGET,
        "--manifest-path",
    ])
    .arg(root.join("plugins").join("Cargo.toml"))
    .arg("--target-dir")
    .arg(out)
    .current_dir(root.join("plugins"));
    run(
        cmd,
        "building the Rust plugins (plugins/Cargo.toml; after changing their dependencies, \
         update plugins/Cargo.lock with `cargo update --manifest-path plugins/Cargo.toml --workspace`)",
    );
    let release = out.join(TARGET).join("release");
    for (package, name) in RUST_PLUGINS {
        let wasm = release.join(format!("{}.wasm", package.replace('-', "_")));
        assert!(
            wasm.is_file(),
            "the plugin `{package}` built, but {} is missing",
            wasm.display()
        );
        println!(
            "cargo:rustc-env=SWITCHBOARD_PLUGIN_{name}={}",
            wasm.display()
        );
    }
}

/// Builds `plugins/python-shouter` with componentize-py (installed into
/// `target/py` when missing) and exports the component's path.
fn build_python_plugin(root: &Path, out: &Path) {
    let venv = root.join("target").join("py");
    let tool = venv.join("bin").join("componentize-py");
    let python = venv.join("bin").join("python");
    let pinned = venv.join(format!("componentize-py-{COMPONENTIZE_PY}.installed"));
    if !tool.is_file() || !pinned.is_file() {
        let mut cmd = clean_command("python3");
        cmd.args(["-m", "venv", "--clear"]).arg(&venv);
        run(
            cmd,
            "creating the Python venv target/py for componentize-py (needs python3 with venv)",
        );
        let mut cmd = clean_command(&python);
        cmd.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg(format!("componentize-py=={COMPONENTIZE_PY}"));
        run(cmd, "installing componentize-py from PyPI into target/py");
        fs::write(&pinned, COMPONENTIZE_PY).expect("mark the componentize-py install");
    }
    let source = root.join("plugins").join("python-shouter");
    let wasm = out.join("python-shouter.wasm");
    let mut cmd = clean_command(&tool);
    cmd.arg("-d")
        .arg(root.join("wit").join("0.1.0"))
        .args(["-w", "plugin", "componentize", "app", "-p"])
        .arg(&source)
        .arg("-o")
        .arg(&wasm)
        .current_dir(&source);
    run(
        cmd,
        "building the Python plugin plugins/python-shouter with componentize-py",
    );
    println!(
        "cargo:rustc-env=SWITCHBOARD_PLUGIN_PYTHON_SHOUTER={}",
        wasm.display()
    );
}
