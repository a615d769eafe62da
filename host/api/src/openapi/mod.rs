//! The OpenAPI 3.1 document, generated from the handlers' `#[utoipa::path]`
//! attributes and the DTOs' `ToSchema` derives, served at
//! `GET /api/v1/openapi.json`, and the interactive reference at `/docs`
//! (Swagger UI, embedded in the binary). Both are public: the document
//! describes the API, it grants nothing.
//!
//! Every route of the router must appear here: the end-to-end test
//! `openapi` compares the real router's routes (see [`inventory`]) with the
//! document, so a route added without `#[utoipa::path]` and an entry in
//! [`ApiDoc`]'s `paths(...)` fails it.

pub mod common;
mod docs_page;
pub(crate) mod events;
pub mod inventory;
pub mod send_bodies;

use std::sync::OnceLock;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::AppState;

/// Where the document is served.
pub const DOCUMENT_PATH: &str = "/api/v1/openapi.json";

/// The document's root: every operation, the security scheme and the event
/// components.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Switchboard",
        description = "A self-hosted HTTP gateway to sessions on a consumer messaging network \
            (WhatsApp linked devices), with a simulated network. Every `/api/v1` route needs \
            `Authorization: Bearer <API_TOKEN>` except this document; `/livez`, `/readyz` \
            and `/docs` are public. Errors are `{\"success\": false, \"error\": {\"code\", \
            \"message\"}}`. The `webhooks` section describes what the gateway POSTs to \
            registered webhook URLs.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    paths(
        super::health::livez,
        super::health::readyz,
        super::metrics::scrape_app,
        openapi_json,
        docs_page::index,
        docs_page::initializer,
        docs_page::stylesheet,
        docs_page::bundle,
        super::sessions::create,
        super::sessions::list,
        super::sessions::get_one,
        super::sessions::delete,
        super::sessions::status,
        super::sessions::connect,
        super::sessions::disconnect,
        super::sessions::logout,
        super::sessions::qr,
        super::sessions::pair,
        super::sessions::pause,
        super::sessions::resume,
        super::session_proxy::get_proxy,
        super::session_proxy::set_proxy,
        super::session_proxy::clear_proxy,
        super::messages::send,
        super::messages::list,
        super::message_actions::read,
        super::message_actions::revoke,
        super::message_actions::edit,
        super::message_actions::pin,
        super::message_actions::forward,
        super::message_actions::star,
        super::chats::list,
        super::chats::get_one,
        super::chats::history,
        super::chats::archive,
        super::chats::pin,
        super::chats::mute,
        super::chats::unmute,
        super::chats::unread,
        super::chats::delete,
        super::presence::set_presence,
        super::presence::subscribe,
        super::presence::send_chat_state,
        super::presence::typing,
        super::identity::look_up,
        super::groups::list,
        super::groups::create,
        super::groups::get_group,
        super::groups::info,
        super::groups::subject,
        super::groups::description,
        super::groups::settings,
        super::groups::leave,
        super::group_members::add_participants,
        super::group_members::remove_participants,
        super::group_members::promote,
        super::group_members::demote,
        super::group_members::invite_link,
        super::blasts::create,
        super::blasts::list_session,
        super::blasts::get_one,
        super::blasts::recipients,
        super::blasts::cancel,
        super::blasts::retry,
        super::blasts::list_all,
        super::scheduled::list_all,
        super::scheduled::list,
        super::scheduled::get_one,
        super::scheduled::cancel,
        super::contacts::list,
        super::contacts::check,
        super::contacts::info,
        super::contacts::users,
        super::contacts::picture,
        super::blocking::list,
        super::blocking::block,
        super::blocking::unblock,
        super::blocking::check,
        super::profile::get_profile,
        super::profile::set_name,
        super::profile::set_about,
        super::profile::set_picture,
        super::profile::remove_picture,
        super::media::upload,
        super::media::bytes,
        super::media::info,
        super::media::retry,
        super::media::delete,
        super::session_ops::report_spam,
        super::session_ops::issue_tokens,
        super::session_ops::list_tokens,
        super::session_ops::prune_tokens,
        super::session_ops::get_token,
        super::session_ops::get_reconnect,
        super::session_ops::set_reconnect,
        super::session_ops::get_history_sync,
        super::session_ops::set_history_sync,
        super::session_ops::resync,
        super::stream::stream_events,
        super::webhooks::register,
        super::webhooks::list,
        super::webhooks::list_dlq,
        super::webhooks::replay,
        super::webhooks::remove,
        super::webhooks::enable,
        super::plugins::upload,
        super::plugins::directory,
        super::plugins::list,
        super::plugins::get_one,
        super::plugins::replace,
        super::plugins::remove,
        super::plugins::enable,
        super::plugins::create_binding,
        super::plugins::list_bindings,
        super::plugins::update_binding,
        super::plugins::delete_binding,
        super::sim::register_user,
        super::sim::list_users,
        super::sim::scan,
        super::sim::inbound,
        super::sim::set_faults,
        super::sim::clear_faults,
        super::sim::outbox,
        super::sim_account::put_entry,
        super::sim_account::list_entries,
        super::sim_account::lock,
        super::sim_account::replace,
        super::sim_account::spam_reports,
        super::sim_account::starred,
        super::sim_timelock::set_timelock,
        super::sim_timelock::lift_timelock,
        super::sim_events::inject,
        super::sim_groups::join,
        super::broker::status,
        super::tokens::mint,
        super::tokens::list,
        super::tokens::current,
        super::tokens::get_one,
        super::tokens::revoke,
        super::tokens::rotate,
        super::console::redirect,
        super::console::index,
        super::console::file,
    ),
    components(schemas(
        common::ErrorBody,
        common::PhoneNumber,
        common::PhoneOrUserJid,
        common::UserAddress,
        common::ChatAddress,
        common::GroupAddress,
    )),
    modifiers(&BearerScheme),
    security(("bearer" = [])),
    tags(
        (name = "health", description = "Liveness and readiness, without authentication."),
        (name = "reference", description = "This document and the interactive reference page."),
        (name = "sessions", description = "Session lifecycle: create, connect, pair, pause, delete."),
        (name = "messages", description = "Sending every message kind, now or scheduled, and the stored history."),
        (name = "groups", description = "Group operations acting as a session's account."),
        (name = "chats", description = "The session's chats, their history, and archive, pin, mute, mark unread, delete."),
        (name = "presence", description = "The account's presence, subscriptions to contacts' presence, typing in a chat."),
        (name = "contacts", description = "The contact directory and lookups on the network."),
        (name = "profile", description = "The account's own profile: push name, about text, picture."),
        (name = "media", description = "Uploads for later sends, the bytes of inbound media, and retries of failed downloads."),
        (name = "session-ops", description = "Spam reports, trust tokens, reconnect and history-sync settings, app-state resync."),
        (name = "scheduled", description = "Sends with a future `send_at`."),
        (name = "blasts", description = "One message to many recipients, paced by one worker."),
        (name = "events", description = "The live event stream (Server-Sent Events)."),
        (name = "webhooks", description = "Webhook registration and the dead-letter queue."),
        (name = "plugins", description = "WebAssembly plugins and their bindings."),
        (name = "nats", description = "The NATS JetStream broker (`--nats-url`): events out, a send queue in."),
        (name = "tokens", description = "API tokens limited to some sessions and scopes (admin only; `current` for any token)."),
        (name = "sim", description = "The simulated network's control API (only when the sim is enabled)."),
        (name = "console", description = "The operator console, a browser app over this API (public: it holds no data)."),
    )
)]
pub struct ApiDoc;

/// Adds the `bearer` HTTP security scheme the document's `security` names.
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The gateway's API token (`API_TOKEN`, or the one generated into \
                         `<data-dir>/api-token` on first start).",
                    ))
                    .build(),
            ),
        );
    }
}

/// The document as this gateway serves it: the sim routes only when the
/// simulated network is enabled, the event components and the `webhooks`
/// section describing outbound deliveries.
pub fn document(sim_enabled: bool) -> serde_json::Value {
    let mut doc = ApiDoc::openapi();
    if !sim_enabled {
        doc.paths
            .paths
            .retain(|path, _| !path.starts_with("/api/v1/sim/"));
    }
    let mut json = serde_json::to_value(&doc).unwrap_or_else(|e| {
        // Serializing our own types cannot fail; the document's tests would
        // catch an empty one.
        tracing::error!(error = %e, "could not serialize the OpenAPI document");
        serde_json::json!({})
    });
    events::add_components(&mut json);
    if let Some(root) = json.as_object_mut() {
        root.insert("webhooks".into(), events::webhooks_section());
    }
    json
}

/// The document's routes and the reference page's.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(DOCUMENT_PATH, get(openapi_json))
        .merge(docs_page::routes())
}

/// The document, rendered once per process for each sim setting.
fn rendered(sim_enabled: bool) -> &'static str {
    static WITH_SIM: OnceLock<String> = OnceLock::new();
    static WITHOUT_SIM: OnceLock<String> = OnceLock::new();
    let cell = if sim_enabled { &WITH_SIM } else { &WITHOUT_SIM };
    cell.get_or_init(|| document(sim_enabled).to_string())
}

/// The OpenAPI 3.1 document of this gateway.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "reference",
    security(()),
    responses(
        (status = 200, description = "The OpenAPI 3.1 document (this one).", content_type = "application/json", body = Object),
    )
)]
async fn openapi_json(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        rendered(state.sim.is_some()),
    )
}
