# Switchboard developer recipes. `just` installs with `pip install rust-just`.

set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# Run the gateway on http://127.0.0.1:3451 (sim network; extra flags go to `serve`).
run *ARGS:
    cargo run --release -p switchboard -- serve {{ARGS}}

# Run the whole test suite (unit and end-to-end).
test:
    cargo test --workspace --locked

# Layering, formatting and lints of both workspaces and the plugin template, exactly as CI runs them.
check:
    python3 .ci/layers.py
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets --locked -- -D warnings
    cargo fmt --manifest-path plugins/Cargo.toml --all -- --check
    cargo clippy --manifest-path plugins/Cargo.toml --all-targets --locked -- -D warnings
    cargo clippy --manifest-path plugins/Cargo.toml --target wasm32-wasip2 --locked -- -D warnings
    cargo fmt --manifest-path examples/plugin-template/Cargo.toml --all -- --check
    cargo clippy --manifest-path examples/plugin-template/Cargo.toml --target-dir target/plugin-template --all-targets --locked -- -D warnings
    cargo clippy --manifest-path examples/plugin-template/Cargo.toml --target-dir target/plugin-template --target wasm32-wasip2 --locked -- -D warnings

# Fuzz the HTTP API from its own OpenAPI document with schemathesis (installed into target/fuzz-venv): fails on a 5xx, a schema-valid request refused, or an answer off its schema (`just fuzz --examples 50`).
fuzz *ARGS:
    python3 .ci/fuzz.py {{ARGS}}

# Benchmark the hot paths against ceilings measured in the same run (`just bench --quick`, or name sections: p1 … p5).
bench *ARGS:
    cargo run --locked --profile bench-fast -p switchboard-bench -- {{ARGS}}
