//! P2, the cost of plugin filter calls, measured on the plugins module
//! directly (`Plugins::start` on a store of its own, `upload`,
//! `put_binding`, `filter`): one call of one filter on a ~1 KB `message`
//! envelope, a chain of three filters that decide without changing the
//! data, and the chain of three the pipeline uses, whose redactor rewrites it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard::domain::event::{Envelope, EventName};
use switchboard::plugins::config::PluginConfig;
use switchboard::plugins::{BindingIn, Plugins};
use switchboard::store::Store;

use crate::stats::{Goal, Row, Samples, us};

/// Percentiles of one measurement.
#[derive(Debug)]
pub struct CallCost {
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
}

/// P2's figures.
#[derive(Debug)]
pub struct PluginCosts {
    /// One keyword-router call.
    pub one: CallCost,
    /// Three keyword-routers that each decide (keep or drop) and change nothing.
    pub deciding: CallCost,
    /// The pipeline's chain: router, redactor (which rewrites the data), router.
    pub rewriting: CallCost,
}

impl PluginCosts {
    /// The table rows: one call against 1.5 µs at p50, the deciding chain
    /// against 5 µs at p99, the rewriting chain for information.
    pub fn rows(&self) -> Vec<Row> {
        [
            (
                "P2 one filter, 1 KB event: p50",
                &self.one,
                true,
                Goal::AtMost,
                1.5,
            ),
            (
                "P2 chain of three deciding filters: p99",
                &self.deciding,
                false,
                Goal::AtMost,
                5.0,
            ),
            (
                "P2 chain with the rewriting redactor: p99",
                &self.rewriting,
                false,
                Goal::Info,
                0.0,
            ),
        ]
        .into_iter()
        .map(|(name, cost, median, goal, target)| {
            let (figure, other, label) = if median {
                (cost.p50, cost.p99, "p99")
            } else {
                (cost.p99, cost.p50, "p50")
            };
            let name = format!("{name} ({label} {:.2} µs)", us(other));
            Row::absolute(&name, us(figure), "µs", goal, target)
        })
        .collect()
    }
}

/// Measures one filter and two chains of three, `calls` calls each.
pub fn run(calls: usize) -> anyhow::Result<PluginCosts> {
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

    let keep_orders = json!({ "keywords": ["order"], "mode": "keep" });
    let drop_unsent = json!({ "keywords": ["never-sent"], "mode": "drop" });
    bind(&plugins, &router, 0, keep_orders.clone())?;
    let one = measure(&plugins, &env, calls)?;
    let second = bind(&plugins, &router, 1, drop_unsent.clone())?;
    let third = bind(&plugins, &router, 2, json!({ "keywords": ["lorem"] }))?;
    let deciding = measure(&plugins, &env, calls)?;
    plugins.delete_binding(&second)?;
    plugins.delete_binding(&third)?;
    bind(&plugins, &redactor, 1, json!({}))?;
    bind(&plugins, &router, 2, drop_unsent)?;
    let rewriting = measure(&plugins, &env, calls)?;
    Ok(PluginCosts {
        one,
        deciding,
        rewriting,
    })
}

/// Binds `plugin` as an event filter; returns the binding's id.
fn bind(plugins: &Plugins, plugin: &str, order: i32, config: Value) -> anyhow::Result<String> {
    let b: BindingIn = serde_json::from_value(json!({
        "plugin_id": plugin, "hook": "event_filter", "order": order, "config": config
    }))?;
    Ok(plugins.put_binding(None, b)?.id)
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
