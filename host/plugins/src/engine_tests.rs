use super::*;

fn engine() -> PluginEngine {
    PluginEngine::new(PluginConfig::default(), None).unwrap()
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

#[test]
fn garbage_bytes_are_refused_as_not_a_component() {
    let (_d, store) = store();
    let err = engine()
        .load("p", b"definitely not wasm", &store)
        .err()
        .unwrap();
    assert_eq!(err.code(), "not_a_component");
    assert!(err.to_string().contains("not WebAssembly"));
}

#[test]
fn a_core_module_is_refused_naming_why() {
    let (_d, store) = store();
    // The smallest valid core module: magic and version 1, no sections.
    let err = engine()
        .load("p", b"\0asm\x01\0\0\0", &store)
        .err()
        .unwrap();
    assert_eq!(err.code(), "not_a_component");
    assert!(err.to_string().contains("core WebAssembly module"));
}

#[test]
fn an_empty_component_is_refused_as_targeting_no_known_world() {
    let (_d, store) = store();
    // The smallest valid component: magic, component version and layer, no sections.
    let err = engine()
        .load("p", b"\0asm\x0d\0\x01\0", &store)
        .err()
        .unwrap();
    assert_eq!(err.code(), "incompatible_world");
    assert!(err.to_string().contains("switchboard:plugin@0.1.0"));
}

#[test]
fn a_truncated_component_fails_to_compile() {
    let (_d, store) = store();
    let err = engine()
        .load("p", b"\0asm\x0d\0\x01\0\x01\xff", &store)
        .err()
        .unwrap();
    assert_eq!(err.code(), "invalid_component");
}
