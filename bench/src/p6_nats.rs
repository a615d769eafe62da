//! P6, the NATS broker: events from sim intake (the sim network delivering
//! inbound messages in-process, each answered once stored, as the real
//! network's are acknowledged; no HTTP injection in the way) to JetStream
//! acknowledgements in the events stream,
//! beside a ceiling measured in the same run: raw JetStream publishes of the
//! same payload size, with the same window of acknowledgements in flight;
//! and the send command's round trip (published into the send queue →
//! its result on `switchboard.results.<session>`), one command at a time.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use async_nats::jetstream::{self, stream};
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesOrdered;
use serde_json::json;
use tokio::runtime::Handle;

use switchboard::network::sim::SimInbound;

use crate::gateway::Gateway;
use crate::nats_server::NatsServer;
use crate::stats::Samples;

const SESSION: &str = "p6";
/// The gateway's publish window (its default): the ceiling keeps as many
/// acknowledgements in flight.
const WINDOW: usize = 256;

/// What P6 measured.
pub struct Figures {
    /// Events per second from injection to acknowledgement in the stream.
    pub events: f64,
    /// Events per second stored by the intake (answered), whatever NATS did.
    pub stored: f64,
    /// Raw JetStream publishes per second, same payload size and window.
    pub ceiling: f64,
    /// The payload size both used.
    pub payload_bytes: usize,
    /// Send-command round trips.
    pub round_trips: Samples,
}

/// Runs P6 against a `nats-server` of its own and a gateway started with it.
pub async fn run(server: &Handle, load_for: Duration) -> anyhow::Result<Figures> {
    let nats = tokio::task::spawn_blocking(NatsServer::start).await??;
    let url = nats.url().to_owned();
    let client = async_nats::connect(&url).await?;
    let js = jetstream::new(client.clone());
    let gw = {
        let url = url.clone();
        Gateway::start_with(server, move |c| c.nats.servers = vec![url]).await?
    };
    wait_ready(&gw).await?;
    gw.paired(SESSION).await?;
    let mut events = js.get_stream("SWITCHBOARD_EVENTS").await?;
    let before = events.info().await?.state.messages;

    // Events: delivered by the sim closed-loop for `load_for` (64 at a
    // time), timed until the last is acknowledged in the stream.
    let sim = gw.sim().context("the benchmark gateway has the sim")?;
    let start = Instant::now();
    let deadline = start + load_for;
    let mut tasks = Vec::new();
    for worker in 0..64u64 {
        let sim = sim.clone();
        tasks.push(server.spawn(async move {
            let mut sent = 0u64;
            while Instant::now() < deadline {
                let inbound: SimInbound = serde_json::from_value(json!({
                    "from": "15550001111",
                    "text": format!("p6 event {worker}/{sent} {}", "x".repeat(200)),
                }))?;
                let (message, _) = sim.build_inbound(inbound)?;
                sim.inject_inbound(SESSION, message).await?;
                sent += 1;
            }
            Ok::<u64, anyhow::Error>(sent)
        }));
    }
    let mut injected = 0u64;
    for t in tasks {
        injected += t.await??;
    }
    let stored = injected as f64 / start.elapsed().as_secs_f64();
    let want = before + injected;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if events.info().await?.state.messages >= want {
            break;
        }
        if Instant::now() > deadline {
            bail!("the events stream did not get the {injected} injected events");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let rate = injected as f64 / start.elapsed().as_secs_f64();
    let payload_bytes = events
        .get_last_raw_message_by_subject(&format!("switchboard.events.{SESSION}.message"))
        .await
        .context("the last event")?
        .payload
        .len();

    let round_trips = command_round_trips(&client, &js, 200).await?;
    gw.stop().await?;

    // The ceiling, with the gateway gone: the same payload size and window.
    let ceiling = raw_publishes(&js, payload_bytes, load_for).await?;
    Ok(Figures {
        events: rate,
        stored,
        ceiling,
        payload_bytes,
        round_trips,
    })
}

async fn wait_ready(gw: &Gateway) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = gw.get("/api/v1/nats").await?;
        if status["streams"].as_array().map_or(0, Vec::len) == 2 && status["connected"] == true {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the gateway did not set its NATS streams up: {status}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `n` commands, one at a time: each published into the send queue, timed
/// until its result arrives.
async fn command_round_trips(
    client: &async_nats::Client,
    js: &jetstream::Context,
    n: usize,
) -> anyhow::Result<Samples> {
    let mut results = client
        .subscribe(format!("switchboard.results.{SESSION}"))
        .await?;
    client.flush().await?;
    let mut samples = Samples::with_capacity(n);
    for i in 0..n {
        let command = json!({"kind": "text", "request_id": format!("p6-{i}"),
                             "to": "4940000001", "text": format!("p6 command {i}")});
        let t = Instant::now();
        js.publish(
            format!("switchboard.send.{SESSION}"),
            Bytes::from(command.to_string()),
        )
        .await?
        .await?;
        let result = tokio::time::timeout(Duration::from_secs(30), results.next())
            .await
            .context("a command's result in time")?
            .context("the results subscription ended")?;
        samples.push(t.elapsed());
        let v: serde_json::Value = serde_json::from_slice(&result.payload)?;
        if v["ok"] != true {
            bail!("command {i} failed: {v}");
        }
    }
    Ok(samples)
}

/// Raw publishes of `size`-byte payloads for `load_for`, `WINDOW`
/// acknowledgements in flight; publishes per second.
async fn raw_publishes(
    js: &jetstream::Context,
    size: usize,
    load_for: Duration,
) -> anyhow::Result<f64> {
    js.create_stream(stream::Config {
        name: "P6_CEILING".into(),
        subjects: vec!["p6.ceiling.>".into()],
        ..Default::default()
    })
    .await?;
    let payload = Bytes::from(vec![b'x'; size]);
    let start = Instant::now();
    let mut acks = FuturesOrdered::new();
    let mut acked = 0u64;
    let mut n = 0u64;
    while start.elapsed() < load_for {
        while acks.len() < WINDOW {
            let ack = js
                .publish(format!("p6.ceiling.{}", n % 16), payload.clone())
                .await?;
            acks.push_back(ack.into_future());
            n += 1;
        }
        if let Some(ack) = acks.next().await {
            ack?;
            acked += 1;
        }
    }
    while let Some(ack) = acks.next().await {
        ack?;
        acked += 1;
    }
    Ok(acked as f64 / start.elapsed().as_secs_f64())
}
