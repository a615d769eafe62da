//! How P1's events enter the gateway. The same run loop drives either
//! source, so the two figures differ only in the way in:
//!
//! - [`Source::Sim`]: in process, as the network delivers a message. The
//!   sim builds the message it would have decoded and hands it to the
//!   session's event stream; the injection returns once the gateway has
//!   stored it, as a real server's delivery is acknowledged. The injecting
//!   tasks run on the gateway's runtime, where a network client's reader
//!   tasks run.
//! - [`Source::Http`]: through the sim's control API
//!   (`POST /api/v1/sim/sessions/{id}/inbound`) from the load runtime, which
//!   adds a whole HTTP exchange per event (client, axum, auth, JSON) that a
//!   network delivery never pays.

use std::future::Future;

use anyhow::bail;
use bytes::Bytes;
use http_body_util::Full;
use hyper::header;
use serde_json::json;
use switchboard::network::sim::{SimInbound, SimNetwork};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use crate::gateway::TOKEN;
use crate::load::{Http, send};

/// Where P1's events come from.
#[derive(Clone)]
pub enum Source {
    /// The sim network, in process, its tasks on the gateway's runtime.
    Sim {
        /// The gateway's simulated network.
        sim: SimNetwork,
        /// The gateway's runtime.
        runtime: Handle,
    },
    /// The sim's control API, over HTTP from the load runtime.
    Http {
        /// The benchmark's pooled client, boxed: it is several times the
        /// size of the other variant.
        http: Box<Http>,
        /// The gateway's base URL.
        base: String,
    },
}

impl Source {
    /// A short name for the table: `in-process` or `HTTP-injected`.
    pub fn label(&self) -> &'static str {
        match self {
            Source::Sim { .. } => "in-process",
            Source::Http { .. } => "HTTP-injected",
        }
    }

    /// Starts `task` where this source's injections run.
    pub fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self {
            Source::Sim { runtime, .. } => runtime.spawn(task),
            Source::Http { .. } => tokio::spawn(task),
        }
    }

    /// Delivers message `BENCH-<n>` ("order <n>", from one sender) to
    /// `session`; returns once the gateway has stored it.
    pub async fn inject(&self, session: &str, n: usize) -> anyhow::Result<()> {
        let body = json!({
            "from": "15550001111",
            "text": format!("order {n}"),
            "message_id": format!("BENCH-{n}"),
        });
        match self {
            Source::Sim { sim, .. } => {
                // The control API's body type, so both sources deliver the
                // very same message through the sim's own rules.
                let inbound: SimInbound = serde_json::from_value(body)?;
                let (message, _) = sim.build_inbound(inbound)?;
                sim.inject_inbound(session, message).await?;
            }
            Source::Http { http, base } => {
                let req =
                    hyper::Request::post(format!("{base}/api/v1/sim/sessions/{session}/inbound"))
                        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                        .header(header::CONTENT_TYPE, "application/json")
                        .body(Full::new(Bytes::from(body.to_string())))?;
                let (status, answer) = send(http, req).await?;
                if !status.is_success() {
                    bail!("inject: {status} {}", String::from_utf8_lossy(&answer));
                }
            }
        }
        Ok(())
    }
}
