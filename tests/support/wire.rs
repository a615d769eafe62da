//! The gateway on the `whatsapp` network against the wire server
//! (`switchboard-wire`): a gateway configured for it, a session linked by
//! the wire's mock phone, and customers (real clients) on their own
//! accounts.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::config::Config;
use switchboard_wire::WireServer;
use switchboard_wire::customer::{Customer, VERSION};

use crate::{TestServer, eventually};

/// The phone number the gateway's session is linked to.
pub const GATEWAY_PHONE: &str = "15557770001";

/// How long a link or a login may take: a first login waits up to 10 s
/// for an app-state key share no phone sends.
pub const LOGIN_PATIENCE: Duration = Duration::from_secs(60);

/// The JID of a phone number, as the crate's clients take it.
pub fn jid(phone: &str) -> whatsapp_rust::Jid {
    format!("{phone}@s.whatsapp.net")
        .parse()
        .expect("a phone number's JID")
}

/// Points `config`'s `whatsapp` network at `wire`.
pub fn configure(config: &mut Config, wire: &WireServer) {
    config.whatsapp.ws_url = Some(wire.ws_url());
    config.whatsapp.version = Some(VERSION);
    config.whatsapp.wire_media_host = Some(wire.media_host());
    config.network = "whatsapp".into();
}

/// A wire server and a gateway pointed at it.
pub struct Wired {
    /// The wire server.
    pub wire: WireServer,
    /// The gateway.
    pub server: TestServer,
}

impl Wired {
    /// A wire server with the gateway's account, and a gateway on it.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// As [`Wired::start`], with the gateway's configuration changed by
    /// `tweak`.
    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> Self {
        let wire = WireServer::start().await.expect("the wire server starts");
        wire.account(GATEWAY_PHONE, "Gateway");
        let server = TestServer::start_with(|c| {
            configure(c, &wire);
            tweak(c);
        })
        .await;
        Self { wire, server }
    }

    /// Creates the `whatsapp` session `id` and connects it; its QR code.
    pub async fn qr(&self, id: &str) -> String {
        self.server
            .post(
                "/api/v1/sessions",
                json!({ "id": id, "network": "whatsapp" }),
            )
            .await
            .expect(201);
        self.server
            .post_empty(&format!("/api/v1/sessions/{id}/connect"))
            .await
            .expect(200);
        let path = format!("/api/v1/sessions/{id}/qr");
        eventually("a QR code", || async {
            let r = self.server.get(&path).await;
            (r.status == 200).then(|| r.body["qr"].as_str().unwrap_or_default().to_owned())
        })
        .await
    }

    /// Creates session `id`, has the mock phone of [`GATEWAY_PHONE`] scan
    /// its QR code, and waits until it is logged in; its status.
    pub async fn linked(&self, id: &str) -> Value {
        let qr = self.qr(id).await;
        self.wire
            .scan(GATEWAY_PHONE, &qr)
            .expect("the phone scans the QR code");
        self.logged_in(id).await
    }

    /// Waits (with [`LOGIN_PATIENCE`]) until session `id` is logged in.
    pub async fn logged_in(&self, id: &str) -> Value {
        self.wait_status(id, "logged_in").await
    }

    /// Waits (with [`LOGIN_PATIENCE`]) until session `id` reports `status`.
    pub async fn wait_status(&self, id: &str, status: &str) -> Value {
        let path = format!("/api/v1/sessions/{id}/status");
        let deadline = tokio::time::Instant::now() + LOGIN_PATIENCE;
        loop {
            let body = self.server.get(&path).await.body;
            if body["status"] == status {
                return body;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "session {id} is not {status}: {body}; the wire saw {:?}",
                self.wire.seen()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A customer on its own account.
    pub async fn customer(&self, phone: &str, name: &str) -> Customer {
        Customer::link(&self.wire, phone, name)
            .await
            .expect("the customer links")
    }

    /// Waits for an inbound message at session `id` that `f` accepts.
    pub async fn inbound(&self, id: &str, f: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + LOGIN_PATIENCE;
        loop {
            if let Some(m) = self
                .server
                .inbound_messages(id)
                .await
                .into_iter()
                .find(|m| f(m))
            {
                return m;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no such inbound message at {id}: {:?}",
                self.server.inbound_messages(id).await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The real binary (`binary`) on a fresh wire server with the gateway's
/// account, its session `wa` linked by the wire's mock phone; `extra` adds
/// environment (a faster reconnect, say). The wire server and the rig.
pub async fn linked_rig(binary: &str, extra: &[(&str, &str)]) -> (WireServer, crate::crash::Rig) {
    use reqwest::Method;
    let wire = WireServer::start().await.expect("the wire server starts");
    wire.account(GATEWAY_PHONE, "Gateway");
    let (ws, media) = (wire.ws_url(), wire.media_host());
    let version = format!("{}.{}.{}", VERSION.0, VERSION.1, VERSION.2);
    let mut env = vec![
        ("SWITCHBOARD_NETWORK", "whatsapp"),
        ("SWITCHBOARD_WHATSAPP_WS_URL", ws.as_str()),
        ("SWITCHBOARD_WHATSAPP_VERSION", version.as_str()),
        ("SWITCHBOARD_WHATSAPP_WIRE_MEDIA_HOST", media.as_str()),
    ];
    env.extend_from_slice(extra);
    let rig = crate::crash::Rig::start_with_env(binary, crate::crash::Intervals::Fast, &env).await;
    let api = rig.api().clone();
    api.expect(
        Method::POST,
        "/api/v1/sessions",
        Some(json!({ "id": "wa", "network": "whatsapp" })),
        201,
    )
    .await;
    api.expect(Method::POST, "/api/v1/sessions/wa/connect", None, 200)
        .await;
    let deadline = tokio::time::Instant::now() + crate::crash::CRASH_PATIENCE;
    let qr = loop {
        if let Ok((200, body)) = api.call(Method::GET, "/api/v1/sessions/wa/qr", None).await {
            break body["qr"].as_str().unwrap_or_default().to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "no QR code");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    wire.scan(GATEWAY_PHONE, &qr)
        .expect("the phone scans the QR code");
    api.wait_logged_in("wa").await;
    (wire, rig)
}
