//! `/livez` and `/readyz`, answered without authentication.
//!
//! `/livez` only says the process serves HTTP (no I/O, no locks). `/readyz`
//! checks what the gateway needs to do its work: the store answers a read
//! and is not failing with a storage fault (a full disk, an I/O error),
//! and the background workers (blast worker, scheduler, webhook delivery
//! workers) are running — one that stopped or panicked makes it unready —
//! and, when a message broker is configured, the broker is connected and its
//! streams are set up.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::get;
use serde::Serialize;

use super::AppState;
use switchboard_runtime::store::StoreStatus;

/// The health routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
}

/// The answer of `GET /livez`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Live {
    /// `ok`.
    pub status: LiveStatus,
}

/// What `/livez` says: the process is up.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LiveStatus {
    /// The process serves HTTP.
    Ok,
}

/// The answer of `GET /readyz`: `200` when every check is `ok`, else `503`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Ready {
    /// Each check: `ok` or `down`.
    pub checks: ReadyChecks,
    /// With `unavailable`: the first failing check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<ReadyCheck>,
    /// `ready` or `unavailable`.
    pub status: ReadyStatus,
}

/// Whether the gateway is ready.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadyStatus {
    /// Every check is `ok`.
    Ready,
    /// A check is `down`.
    Unavailable,
}

/// The parts `/readyz` checks, in the order they are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadyCheck {
    /// The store answers a read.
    Store,
    /// The blast worker runs.
    BlastWorker,
    /// The scheduler runs.
    Scheduler,
    /// The webhook delivery workers run.
    WebhookWorkers,
    /// The message broker (NATS), when configured: connected, streams set up.
    Nats,
}

impl ReadyCheck {
    /// The check's name as the answer spells it.
    fn as_str(self) -> &'static str {
        match self {
            Self::Store => "store",
            Self::BlastWorker => "blast_worker",
            Self::Scheduler => "scheduler",
            Self::WebhookWorkers => "webhook_workers",
            Self::Nats => "nats",
        }
    }
}

/// The state of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckState {
    /// The part works.
    Ok,
    /// The part does not answer or does not run.
    Down,
}

impl CheckState {
    fn of(ok: bool) -> Self {
        if ok { Self::Ok } else { Self::Down }
    }
}

/// The `checks` of `/readyz`: the state of each part.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ReadyChecks {
    /// The blast worker runs.
    pub blast_worker: CheckState,
    /// The scheduler runs.
    pub scheduler: CheckState,
    /// The store answers a read.
    pub store: CheckState,
    /// The webhook delivery workers run.
    pub webhook_workers: CheckState,
    /// The message broker, only when one is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nats: Option<CheckState>,
}

/// The process is up and serving HTTP.
#[utoipa::path(
    get,
    path = "/livez",
    operation_id = "health_livez",
    tag = "health",
    summary = "Liveness: the process serves HTTP",
    security(()),
    responses(
        (status = 200, description = "Alive.", body = Live),
    )
)]
async fn livez() -> Json<Live> {
    Json(Live {
        status: LiveStatus::Ok,
    })
}

/// The parts `/readyz` checks, in order, and whether each is fine.
fn checks(state: &AppState) -> Vec<(ReadyCheck, bool)> {
    // A store failing with a storage fault is down until it is reopened,
    // even where a read could still be answered from its cache.
    // Under its free-space floor the store is as good as full: a reopen
    // that worked does not make a full disk ready again.
    let store = match (state.store.status(), state.store.schema_version()) {
        (StoreStatus::Ok, Ok(_)) => match state.store.check_free_space() {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "readiness: the store is under its free-space floor");
                false
            }
        },
        (StoreStatus::Failing(fault), _) => {
            tracing::warn!(kind = fault.as_str(), "readiness: the store is failing");
            false
        }
        (_, Err(e)) => {
            tracing::warn!(error = %e, "readiness: the store does not answer");
            false
        }
    };
    let mut checks = vec![
        (ReadyCheck::Store, store),
        (ReadyCheck::BlastWorker, state.blasts.worker_running()),
        (ReadyCheck::Scheduler, state.scheduler.worker_running()),
        (ReadyCheck::WebhookWorkers, state.webhooks.workers_running()),
    ];
    if let Some(broker) = state.broker.get() {
        checks.push((ReadyCheck::Nats, broker.ready()));
    }
    checks
}

/// The store answers reads and the background workers run.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "health_readyz",
    tag = "health",
    summary = "Readiness: the store answers, the background workers run, the broker (when configured) is connected",
    security(()),
    responses(
        (status = 200, description = "Ready.", body = Ready),
        (status = 503, description = "Not ready; `reason` names the first failing check.", body = Ready),
    )
)]
async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Ready>) {
    let checks = checks(&state);
    let failing: Vec<ReadyCheck> = checks
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(check, _)| *check)
        .collect();
    let state_of =
        |which: ReadyCheck| CheckState::of(checks.iter().any(|(check, ok)| *check == which && *ok));
    let detail = ReadyChecks {
        blast_worker: state_of(ReadyCheck::BlastWorker),
        scheduler: state_of(ReadyCheck::Scheduler),
        store: state_of(ReadyCheck::Store),
        webhook_workers: state_of(ReadyCheck::WebhookWorkers),
        nats: state.broker.get().map(|_| state_of(ReadyCheck::Nats)),
    };
    match failing.first() {
        None => (
            StatusCode::OK,
            Json(Ready {
                checks: detail,
                reason: None,
                status: ReadyStatus::Ready,
            }),
        ),
        Some(first) => {
            let names: Vec<&str> = failing.iter().map(|c| c.as_str()).collect();
            tracing::warn!(failing = ?names, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(Ready {
                    checks: detail,
                    reason: Some(*first),
                    status: ReadyStatus::Unavailable,
                }),
            )
        }
    }
}
