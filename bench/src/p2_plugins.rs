//! P2, the cost of plugin filter calls, measured on the plugins module
//! directly (`Plugins::start` on a store of its own, `upload`,
//! `put_binding`, `filter`) on a ~1 KB `message` envelope: one filter, and
//! a chain of three that decide without changing the data, in contract 0.2
//! (keyword-filter, which gets the message as a typed record) and in 0.1
//! (keyword-router, which gets the data as JSON text); and, for 0.1 only,
//! the chain the HTTP-injected P1 uses, whose redactor rewrites the data.

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
    /// One 0.2 keyword-filter call.
    pub one_v2: CallCost,
    /// Three 0.2 keyword-filters that each keep the event.
    pub deciding_v2: CallCost,
    /// One 0.1 keyword-router call.
    pub one_v1: CallCost,
    /// Three 0.1 keyword-routers that each decide (keep or drop) and change nothing.
    pub deciding_v1: CallCost,
    /// The 0.1 chain router, redactor (which rewrites the data), router.
    pub rewriting_v1: CallCost,
}

impl PluginCosts {
    /// The table rows: the 0.2 call against 1.5 µs at p50 and the 0.2
    /// deciding chain against 5 µs at p99 (the targets hold for the current
    /// contract); the 0.1 figures beside them for information.
    pub fn rows(&self) -> Vec<Row> {
        [
            (
                "P2 one 0.2 filter (keyword-filter), 1 KB event: p50",
                &self.one_v2,
                true,
                Goal::AtMost,
                1.5,
            ),
            (
                "P2 chain of three deciding 0.2 filters: p99",
                &self.deciding_v2,
                false,
                Goal::AtMost,
                5.0,
            ),
            (
                "P2 one 0.1 filter (keyword-router), 1 KB event: p50",
                &self.one_v1,
                true,
                Goal::Info,
                0.0,
            ),
            (
                "P2 chain of three deciding 0.1 filters: p99",
                &self.deciding_v1,
                false,
                Goal::Info,
                0.0,
            ),
            (
                "P2 0.1 chain with the rewriting redactor: p99",
                &self.rewriting_v1,
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

/// Measures each filter and chain, `calls` calls each.
pub fn run(calls: usize) -> anyhow::Result<PluginCosts> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    let plugins = Plugins::start(store, PluginConfig::default(), dir.path())?;
    let upload = |path: &str, name: &str| -> anyhow::Result<String> {
        let view = plugins.upload(&std::fs::read(path)?, Some(name.into()))?;
        Ok(view.record.id)
    };
    let filter = upload(crate::KEYWORD_FILTER, "keyword-filter")?;
    let router = upload(crate::KEYWORD_ROUTER, "router")?;
    let redactor = upload(crate::REDACTOR, "redactor")?;
    let env = envelope();
    let cost_of = |chain: &[(&str, Value)]| -> anyhow::Result<CallCost> {
        let bindings = chain
            .iter()
            .enumerate()
            .map(|(order, (plugin, config))| bind(&plugins, plugin, order as i32, config.clone()))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let cost = measure(&plugins, &env, calls)?;
        for b in bindings {
            plugins.delete_binding(&b)?;
        }
        Ok(cost)
    };

    // The same keywords as P1's in-process chain: every filter keeps the event.
    let order = json!({ "keywords": ["order"] });
    let one_v2 = cost_of(&[(&filter, order.clone())])?;
    let deciding_v2 = cost_of(&[
        (&filter, order.clone()),
        (&filter, json!({ "keywords": ["order", "x"] })),
        (&filter, order),
    ])?;

    let keep_orders = json!({ "keywords": ["order"], "mode": "keep" });
    let drop_unsent = json!({ "keywords": ["never-sent"], "mode": "drop" });
    let one_v1 = cost_of(&[(&router, keep_orders.clone())])?;
    let deciding_v1 = cost_of(&[
        (&router, keep_orders.clone()),
        (&router, drop_unsent.clone()),
        (&router, json!({ "keywords": ["lorem"] })),
    ])?;
    let rewriting_v1 = cost_of(&[
        (&router, keep_orders),
        (&redactor, json!({})),
        (&router, drop_unsent),
    ])?;
    Ok(PluginCosts {
        one_v2,
        deciding_v2,
        one_v1,
        deciding_v1,
        rewriting_v1,
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
