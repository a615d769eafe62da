//! The wire server's certificate chain is trusted by test builds only: the
//! release binary's dependency graph leaves whatsapp-rust's certificate
//! check on (the chain itself fails that check: see the wire crate's
//! unit test), and the test build's graph turns it off.

/// The features `wacore-noise` is built with for `package` alone, as
/// `cargo build -p <package>` would build it.
fn noise_features(package: &str) -> String {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "features",
            "-i",
            "wacore-noise",
            "-p",
            package,
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_release_binary_checks_the_servers_certificate_chain_and_only_the_test_build_skips_it() {
    let release = noise_features("switchboard");
    assert!(release.contains("wacore-noise"), "{release}");
    assert!(
        !release.contains("danger-skip-cert-chain-verify"),
        "the release binary must verify WhatsApp's certificate chain:\n{release}"
    );
    let tests = noise_features("switchboard-tests");
    assert!(
        tests.contains("danger-skip-cert-chain-verify"),
        "the test build trusts the wire server's chain:\n{tests}"
    );
}
