//! Builds every plugin the end-to-end tests load, from source, so that
//! `cargo test --workspace --locked` needs nothing installed by hand:
//!
//! 1. the `wasm32-wasip2` target (`rustup target add` when it is missing);
//! 2. the Rust plugins: `cargo build --release --target wasm32-wasip2` of the
//!    plugins workspace (`plugins/Cargo.toml`, `--locked`), into
//!    `target/plugins` (its own target directory: the outer build holds the
//!    lock of `target/debug`);
//! 3. componentize-py (pinned, in a venv at `target/py` when missing) and
//!    the Python plugins `plugins/python-shouter` and
//!    `plugins/python-keyword-filter`;
//! 4. jco and ComponentizeJS (pinned by `plugins/js-keyword-filter`'s
//!    `package-lock.json`, installed with `npm ci` into `target/js` when
//!    missing or outdated) and the JavaScript plugin
//!    `plugins/js-keyword-filter`.
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
    ("keyword-filter", "KEYWORD_FILTER"),
    ("bot-bridge", "BOT_BRIDGE"),
    ("redactor", "REDACTOR"),
    ("footer", "FOOTER"),
    ("greeting", "GREETING"),
    ("hostile-loop", "HOSTILE_LOOP"),
    ("hostile-memory", "HOSTILE_MEMORY"),
    ("hostile-trap", "HOSTILE_TRAP"),
    ("record-echo", "RECORD_ECHO"),
];

/// The componentize-py release the Python plugins are built with.
const COMPONENTIZE_PY: &str = "0.25.1";

/// A plugin written in Python, built with componentize-py.
struct PythonPlugin {
    /// Its directory under `plugins/`; its entry module is `app`.
    dir: &'static str,
    /// The contract version it targets (a directory under `wit/`).
    wit: &'static str,
    /// The world it implements.
    world: &'static str,
    /// The suffix of its `SWITCHBOARD_PLUGIN_<NAME>` variable.
    env: &'static str,
}

/// The Python plugins.
const PYTHON_PLUGINS: &[PythonPlugin] = &[
    PythonPlugin {
        dir: "python-shouter",
        wit: "0.1.0",
        world: "plugin",
        env: "PYTHON_SHOUTER",
    },
    PythonPlugin {
        dir: "python-keyword-filter",
        wit: "0.2.0",
        world: "event-filter-plugin",
        env: "PYTHON_KEYWORD_FILTER",
    },
];

/// The JavaScript plugin's directory under `plugins/`: `app.js` (its entry),
/// `bundle.config.js`, and the `package.json` and `package-lock.json` that
/// pin its build tools.
const JS_PLUGIN: &str = "js-keyword-filter";
/// The contract version the JavaScript plugin targets (a directory under `wit/`).
const JS_WIT: &str = "0.2.0";
/// The world the JavaScript plugin implements.
const JS_WORLD: &str = "event-filter-plugin";

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
    let componentize_py = install_componentize_py(&root);
    for plugin in PYTHON_PLUGINS {
        build_python_plugin(&root, &out, &componentize_py, plugin);
    }
    let jco = install_jco(&root);
    build_js_plugin(&root, &out, &jco);
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
        if ["target", "__pycache__", "node_modules"]
            .map(OsStr::new)
            .contains(&name.as_os_str())
        {
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

/// Installs componentize-py into the venv `target/py` unless the pinned
/// release is already there, and returns the tool's path.
fn install_componentize_py(root: &Path) -> PathBuf {
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
    tool
}

/// Builds one Python plugin with componentize-py into `out/<dir>.wasm` and
/// exports the component's path.
fn build_python_plugin(root: &Path, out: &Path, componentize_py: &Path, plugin: &PythonPlugin) {
    let source = root.join("plugins").join(plugin.dir);
    let wasm = out.join(format!("{}.wasm", plugin.dir));
    let mut cmd = clean_command(componentize_py);
    cmd.arg("-d")
        .arg(root.join("wit").join(plugin.wit))
        .args(["-w", plugin.world, "componentize", "app", "-p"])
        .arg(&source)
        .arg("-o")
        .arg(&wasm)
        .current_dir(&source);
    run(
        cmd,
        &format!(
            "building the Python plugin plugins/{} with componentize-py",
            plugin.dir
        ),
    );
    println!(
        "cargo:rustc-env=SWITCHBOARD_PLUGIN_{}={}",
        plugin.env,
        wasm.display()
    );
}

/// Installs the JavaScript plugin's build tools (jco and ComponentizeJS,
/// exactly as its `package-lock.json` pins them) into `target/js` with
/// `npm ci`, unless that very lock is already installed there, and returns
/// the path of `jco`.
///
/// Reinstalling only when the manifest or the lock changed keeps warm
/// builds off the network; `npm ci` itself starts by deleting
/// `node_modules`, so the marker inside it never outlives a failed install.
fn install_jco(root: &Path) -> PathBuf {
    let source = root.join("plugins").join(JS_PLUGIN);
    let tools = root.join("target").join("js");
    let read = |name: &str| {
        let path = source.join(name);
        fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    };
    let (manifest, lock) = (read("package.json"), read("package-lock.json"));
    let wanted = [manifest.as_slice(), &b"\n"[..], lock.as_slice()].concat();
    let node_modules = tools.join("node_modules");
    let marker = node_modules.join(".switchboard-installed");
    let jco = node_modules.join(".bin").join("jco");
    if jco.is_file() && fs::read(&marker).is_ok_and(|installed| installed == wanted) {
        return jco;
    }
    fs::create_dir_all(&tools).expect("create target/js");
    fs::write(tools.join("package.json"), &manifest).expect("copy package.json into target/js");
    fs::write(tools.join("package-lock.json"), &lock)
        .expect("copy package-lock.json into target/js");
    let mut cmd = clean_command("npm");
    // No package in the lock has an install script: refusing them keeps the
    // install to unpacking what the lock names.
    cmd.args([
        "ci",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ])
    .current_dir(&tools);
    run(
        cmd,
        &format!(
            "installing jco and ComponentizeJS from npm into target/js (needs Node.js and npm; \
             the versions are pinned by plugins/{JS_PLUGIN}/package-lock.json)"
        ),
    );
    assert!(
        jco.is_file(),
        "npm ci in {} succeeded, but {} is missing",
        tools.display(),
        jco.display()
    );
    fs::write(&marker, &wanted).expect("mark the jco install");
    jco
}

/// Builds `plugins/js-keyword-filter` with `jco componentize` into
/// `out/js_keyword_filter.wasm` and exports the component's path.
fn build_js_plugin(root: &Path, out: &Path, jco: &Path) {
    let source = root.join("plugins").join(JS_PLUGIN);
    let wasm = out.join(format!("{}.wasm", JS_PLUGIN.replace('-', "_")));
    fs::create_dir_all(out).expect("create target/plugins");
    let mut cmd = clean_command(jco);
    cmd.args(["componentize", "app.js"])
        // ComponentizeJS takes a single ES module: the bundler folds the
        // plugin's own modules into it.
        .arg("--bundle")
        .arg("--bundle-config")
        .arg(source.join("bundle.config.js"))
        .arg("--wit")
        .arg(root.join("wit").join(JS_WIT))
        .args(["--world-name", JS_WORLD])
        // No clock, random, stdio or HTTP: the component then imports no
        // WASI interface at all, only the host's.
        .args(["--disable", "all"])
        .arg("--out")
        .arg(&wasm)
        .current_dir(&source);
    run(
        cmd,
        &format!("building the JavaScript plugin plugins/{JS_PLUGIN} with jco componentize"),
    );
    println!(
        "cargo:rustc-env=SWITCHBOARD_PLUGIN_{}={}",
        JS_PLUGIN.replace('-', "_").to_uppercase(),
        wasm.display()
    );
}
