//! Builds the filter plugins the benchmark binds (`keyword-router` and
//! `redactor` of contract 0.1, `keyword-filter` of 0.2) from `plugins/` for
//! `wasm32-wasip2`, the same way `tests/build.rs` does (into
//! `target/plugins`, the plugins workspace's own target directory), and
//! exposes their paths as `BENCH_PLUGIN_<NAME>`.

use std::env;
use std::path::PathBuf;
use std::process::Command;

const PLUGINS: &[(&str, &str)] = &[
    ("keyword-router", "KEYWORD_ROUTER"),
    ("redactor", "REDACTOR"),
    ("keyword-filter", "KEYWORD_FILTER"),
];
const TARGET: &str = "wasm32-wasip2";

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the bench crate lives in the workspace root")
        .to_path_buf();
    println!("cargo:rerun-if-changed=build.rs");
    for dir in ["plugins", "plugin-sdk", "wit"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let out = root.join("target").join("plugins");
    if !has_target() {
        run(
            clean(Command::new("rustup")).args(["target", "add", TARGET]),
            "installing the wasm32-wasip2 target",
        );
    }
    let mut cmd = clean(Command::new(
        env::var("CARGO").unwrap_or_else(|_| "cargo".into()),
    ));
    cmd.current_dir(root.join("plugins"))
        .args(["build", "--release", "--locked", "--target", TARGET])
        .arg("--target-dir")
        .arg(&out);
    for (package, _) in PLUGINS {
        cmd.args(["-p", package]);
    }
    run(&mut cmd, "building the benchmark's plugins");
    for (package, var) in PLUGINS {
        let file = out
            .join(TARGET)
            .join("release")
            .join(format!("{}.wasm", package.replace('-', "_")));
        assert!(file.exists(), "{} was not built", file.display());
        println!("cargo:rustc-env=BENCH_PLUGIN_{var}={}", file.display());
    }
}

/// Whether the toolchain has the wasm32-wasip2 standard library.
fn has_target() -> bool {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .is_some_and(|mut e| {
            e.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libstd-")))
        })
}

/// A command without the variables cargo set for this build script: they
/// describe the outer build, not the nested one.
fn clean(mut cmd: Command) -> Command {
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let outer = key.starts_with("CARGO_")
            && !["CARGO_HOME", "CARGO_MAKEFLAGS"].contains(&key)
            && !key.starts_with("CARGO_NET_")
            && !key.starts_with("CARGO_HTTP_")
            && !key.starts_with("CARGO_REGISTRIES_")
            && !key.starts_with("CARGO_TERM_");
        let script = [
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
        if outer || script {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn run(cmd: &mut Command, what: &str) {
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not run {cmd:?}: {e}"));
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stdout));
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        panic!("{what} failed ({})", output.status);
    }
}
