//! P2, the cost of plugin filter calls, measured on the plugins module
//! directly (`Plugins::start` on a store of its own, `upload`,
//! `put_binding`, `filter`): one call of one filter on a ~1 KB `message`
//! envelope, and the chain of three the pipeline uses.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard::domain::event::{Envelope, EventName};
use switchboard::plugins::config::PluginConfig;
use switchboard::plugins::{BindingIn, Plugins};
use switchboard::store::Store;

use crate::stats::Samples;

/// Percentiles of one measurement.
#[derive(Debug)]
pub struct CallCost {
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
}

/// Measures one filter and the chain of three, `calls` calls each.
pub fn run(calls: usize) -> anyhow::Result<(CallCost, CallCost)> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    let plugins = Plugins::start(store, PluginConfig::default(), dir.path())?;
    let router = plugins.upload(
        &std::fs::read(crate::KEYWORD_ROUTER)?,
        Some("router".into()),
    )?;
    let redactor = plugins.upload(&std::fs::read(crate::REDACTOR)?, Some("redactor".into()))?;
    let router = router.record.id.clone();
    let redactor = redactor.record.id.clone();
    let env = envelope();

    bind(
        &plugins,
        &router,
        0,
        json!({ "keywords": ["order"], "mode": "keep" }),
    )?;
    let one = measure(&plugins, &env, calls)?;
    bind(&plugins, &redactor, 1, json!({}))?;
    bind(
        &plugins,
        &router,
        2,
        json!({ "keywords": ["never-sent"], "mode": "drop" }),
    )?;
    let three = measure(&plugins, &env, calls)?;
    Ok((one, three))
}

fn bind(plugins: &Plugins, plugin: &str, order: i32, config: Value) -> anyhow::Result<()> {
    let b: BindingIn = serde_json::from_value(json!({
        "plugin_id": plugin, "hook": "event_filter", "order": order, "config": config
    }))?;
    plugins.put_binding(None, b)?;
    Ok(())
}

fn measure(plugins: &Plugins, env: &Envelope, calls: usize) -> anyhow::Result<CallCost> {
    // Warm up: first calls instantiate and fault memory in.
    for _ in 0..200 {
        anyhow::ensure!(
            plugins.filter(env.clone()).is_some(),
            "the filter dropped the event"
        );
    }
    let mut s = Samples::with_capacity(calls);
    for _ in 0..calls {
        let e = env.clone();
        let t = Instant::now();
        let out = plugins.filter(e);
        s.push(t.elapsed());
        drop(out);
    }
    Ok(CallCost {
        p50: s.percentile(50.0),
        p99: s.percentile(99.0),
    })
}

/// A `message` envelope of about 1 KB when serialized.
fn envelope() -> Envelope {
    let text = format!("order 42: {}", "lorem ipsum dolor sit amet ".repeat(28));
    let env = Envelope::now(
        "bench",
        EventName::Message,
        json!({
            "message_id": "3EB0C0FFEE0000000001",
            "from": "15550001111@s.whatsapp.net",
            "from_phone": "15550001111",
            "chat": "15550001111@s.whatsapp.net",
            "push_name": "Bench",
            "message_type": "text",
            "text": text,
            "is_group": false,
            "from_me": false,
            "timestamp": 1_700_000_000,
        }),
    );
    debug_assert!((900..1200).contains(&serde_json::to_vec(&env).map(|v| v.len()).unwrap_or(0)));
    env
}
