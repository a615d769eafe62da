//! What each authenticated route needs of a token: one scope, or only a
//! valid token (`Any`). This table is the one place the authorization layer
//! reads; a route missing from it is open to the admin token alone, and the
//! authorization matrix test fails on it, so a new route cannot ship
//! undeclared.

use axum::http::Method;

use crate::domain::token::Scope;

/// What a route needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Any valid token (it answers about the token itself).
    Any,
    /// A token with this scope (`admin` has every scope).
    Needs(Scope),
}

/// Every authenticated route: method, path as registered, and its access.
pub const ROUTES: &[(&str, &str, Access)] = &[
    ("GET", "/api/v1/blasts", Access::Needs(Scope::Read)),
    ("GET", "/api/v1/events/stream", Access::Needs(Scope::Read)),
    ("GET", "/api/v1/nats", Access::Needs(Scope::Admin)),
    ("GET", "/api/v1/plugins", Access::Needs(Scope::Admin)),
    ("POST", "/api/v1/plugins", Access::Needs(Scope::Admin)),
    (
        "GET",
        "/api/v1/plugins/bindings",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/plugins/bindings",
        Access::Needs(Scope::Admin),
    ),
    (
        "DELETE",
        "/api/v1/plugins/bindings/{id}",
        Access::Needs(Scope::Admin),
    ),
    (
        "PUT",
        "/api/v1/plugins/bindings/{id}",
        Access::Needs(Scope::Admin),
    ),
    (
        "GET",
        "/api/v1/plugins/directory",
        Access::Needs(Scope::Admin),
    ),
    (
        "DELETE",
        "/api/v1/plugins/{id}",
        Access::Needs(Scope::Admin),
    ),
    ("GET", "/api/v1/plugins/{id}", Access::Needs(Scope::Admin)),
    ("PUT", "/api/v1/plugins/{id}", Access::Needs(Scope::Admin)),
    (
        "POST",
        "/api/v1/plugins/{id}/enable",
        Access::Needs(Scope::Admin),
    ),
    ("GET", "/api/v1/scheduled", Access::Needs(Scope::Read)),
    ("GET", "/api/v1/sessions", Access::Needs(Scope::Read)),
    ("POST", "/api/v1/sessions", Access::Needs(Scope::Manage)),
    (
        "DELETE",
        "/api/v1/sessions/{id}",
        Access::Needs(Scope::Manage),
    ),
    ("GET", "/api/v1/sessions/{id}", Access::Needs(Scope::Read)),
    (
        "POST",
        "/api/v1/sessions/{id}/appstate/resync",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/blast",
        Access::Needs(Scope::Send),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/blasts",
        Access::Needs(Scope::Read),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/blasts/{job}",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/blasts/{job}/cancel",
        Access::Needs(Scope::Send),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/blasts/{job}/recipients",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/blasts/{job}/retry",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/blocking/block",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/blocking/check/{jid}",
        Access::Needs(Scope::Read),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/blocking/list",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/blocking/unblock",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/chats",
        Access::Needs(Scope::Read),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/chats/{jid}",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/chats/{jid}",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/chats/{jid}/archive",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/chats/{jid}/messages",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/chats/{jid}/mute",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/chats/{jid}/pin",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/chats/{jid}/unmute",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/chats/{jid}/unread",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/chatstate/send",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/chatstate/typing",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/connect",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/contacts",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/contacts/check",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/contacts/info",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/contacts/users",
        Access::Needs(Scope::Read),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/contacts/{jid}/picture",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/disconnect",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/groups",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/groups",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/groups/{group}",
        Access::Needs(Scope::Read),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/groups/{group}/admins",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/groups/{group}/admins",
        Access::Needs(Scope::Manage),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/groups/{group}/description",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/groups/{group}/info",
        Access::Needs(Scope::Read),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/groups/{group}/invite-link",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/groups/{group}/leave",
        Access::Needs(Scope::Manage),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/groups/{group}/participants",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/groups/{group}/participants",
        Access::Needs(Scope::Manage),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/groups/{group}/settings",
        Access::Needs(Scope::Manage),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/groups/{group}/subject",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/history-sync",
        Access::Needs(Scope::Read),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/history-sync",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/lid/{jid}",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/logout",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/media",
        Access::Needs(Scope::Send),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/media/{media_id}",
        Access::Needs(Scope::Send),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/media/{media_id}",
        Access::Needs(Scope::Read),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/media/{media_id}/info",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/media/{media_id}/retry",
        Access::Needs(Scope::Read),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/messages",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/messages/edit",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/messages/forward",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/messages/pin",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/messages/read",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/messages/revoke",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/messages/star",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/messages/{kind}",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/pair",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/pause",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/presence/set",
        Access::Needs(Scope::Send),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/presence/subscribe",
        Access::Needs(Scope::Send),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/profile",
        Access::Needs(Scope::Read),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/profile/about",
        Access::Needs(Scope::Manage),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/profile/name",
        Access::Needs(Scope::Manage),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/profile/picture",
        Access::Needs(Scope::Manage),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/profile/picture",
        Access::Needs(Scope::Manage),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/proxy",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/proxy",
        Access::Needs(Scope::Read),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/proxy",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/qr",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/reconnect",
        Access::Needs(Scope::Read),
    ),
    (
        "PUT",
        "/api/v1/sessions/{id}/reconnect",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/resume",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/scheduled",
        Access::Needs(Scope::Read),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/scheduled/{scheduled_id}",
        Access::Needs(Scope::Send),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/scheduled/{scheduled_id}",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/spam/report",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/status",
        Access::Needs(Scope::Read),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/tctoken/expired",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/tctoken/issue",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/tctoken/list",
        Access::Needs(Scope::Read),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/tctoken/{jid}",
        Access::Needs(Scope::Read),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/webhooks",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/webhooks",
        Access::Needs(Scope::Manage),
    ),
    (
        "GET",
        "/api/v1/sessions/{id}/webhooks/dlq",
        Access::Needs(Scope::Read),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/webhooks/dlq/{entry_id}/replay",
        Access::Needs(Scope::Manage),
    ),
    (
        "DELETE",
        "/api/v1/sessions/{id}/webhooks/{webhook_id}",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sessions/{id}/webhooks/{webhook_id}/enable",
        Access::Needs(Scope::Manage),
    ),
    (
        "POST",
        "/api/v1/sim/groups/join",
        Access::Needs(Scope::Admin),
    ),
    (
        "GET",
        "/api/v1/sim/sessions/{id}/address-book",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/sim/sessions/{id}/address-book",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/sim/sessions/{id}/events",
        Access::Needs(Scope::Admin),
    ),
    (
        "DELETE",
        "/api/v1/sim/sessions/{id}/faults",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/sim/sessions/{id}/faults",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/sim/sessions/{id}/inbound",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/sim/sessions/{id}/lock",
        Access::Needs(Scope::Admin),
    ),
    (
        "GET",
        "/api/v1/sim/sessions/{id}/outbox",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/sim/sessions/{id}/replace",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/sim/sessions/{id}/scan",
        Access::Needs(Scope::Admin),
    ),
    (
        "DELETE",
        "/api/v1/sim/sessions/{id}/timelock",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/sim/sessions/{id}/timelock",
        Access::Needs(Scope::Admin),
    ),
    (
        "GET",
        "/api/v1/sim/sessions/{id}/spam-reports",
        Access::Needs(Scope::Admin),
    ),
    (
        "GET",
        "/api/v1/sim/sessions/{id}/starred",
        Access::Needs(Scope::Admin),
    ),
    ("GET", "/api/v1/sim/users", Access::Needs(Scope::Admin)),
    ("POST", "/api/v1/sim/users", Access::Needs(Scope::Admin)),
    ("GET", "/api/v1/tokens", Access::Needs(Scope::Admin)),
    ("POST", "/api/v1/tokens", Access::Needs(Scope::Admin)),
    ("GET", "/api/v1/tokens/current", Access::Any),
    (
        "DELETE",
        "/api/v1/tokens/{token_id}",
        Access::Needs(Scope::Admin),
    ),
    (
        "GET",
        "/api/v1/tokens/{token_id}",
        Access::Needs(Scope::Admin),
    ),
    (
        "POST",
        "/api/v1/tokens/{token_id}/rotate",
        Access::Needs(Scope::Admin),
    ),
    ("GET", "/metrics", Access::Needs(Scope::Admin)),
];

/// The access `method` on the registered `path` needs; `None` when the
/// route is not declared (only the admin token may use it).
pub fn access(method: &Method, path: &str) -> Option<Access> {
    ROUTES
        .iter()
        .find(|(m, p, _)| *p == path && *m == method.as_str())
        .map(|(_, _, a)| *a)
}

/// The session a request names, when its route is one session's
/// (`/api/v1/sessions/{id}/…`): the `{id}` segment of the request's path.
pub fn session_of<'a>(template: &str, path: &'a str) -> Option<&'a str> {
    let mut t = template.split('/');
    let mut p = path.split('/');
    for (want, got) in ["", "api", "v1", "sessions", "{id}"].iter().zip(t.by_ref()) {
        if *want != got {
            return None;
        }
    }
    p.nth(4).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_declared_once() {
        let mut seen = std::collections::HashSet::new();
        for (m, p, _) in ROUTES {
            assert!(seen.insert((m, p)), "{m} {p} is declared twice");
        }
    }

    #[test]
    fn a_routes_access_is_found_by_method_and_registered_path() {
        assert_eq!(
            access(&Method::POST, "/api/v1/sessions/{id}/messages/{kind}"),
            Some(Access::Needs(Scope::Send))
        );
        assert_eq!(
            access(&Method::GET, "/api/v1/sessions/{id}/messages"),
            Some(Access::Needs(Scope::Read))
        );
        assert_eq!(
            access(&Method::POST, "/api/v1/tokens"),
            Some(Access::Needs(Scope::Admin))
        );
        assert_eq!(access(&Method::PATCH, "/api/v1/tokens"), None);
    }

    #[test]
    fn the_session_of_a_request_is_the_id_segment_of_a_session_route() {
        assert_eq!(
            session_of(
                "/api/v1/sessions/{id}/messages",
                "/api/v1/sessions/crm-1/messages"
            ),
            Some("crm-1")
        );
        assert_eq!(
            session_of("/api/v1/sessions/{id}", "/api/v1/sessions/a"),
            Some("a")
        );
        assert_eq!(session_of("/api/v1/sessions", "/api/v1/sessions"), None);
        assert_eq!(
            session_of(
                "/api/v1/sim/sessions/{id}/scan",
                "/api/v1/sim/sessions/a/scan"
            ),
            None
        );
        assert_eq!(session_of("/api/v1/blasts", "/api/v1/blasts"), None);
    }
}
