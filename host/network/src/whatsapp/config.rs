//! Knobs of the `whatsapp` backend (built in every configuration so `Config`
//! has one shape; they only matter with the `whatsapp` feature).

use switchboard_egress::MediaUrlConfig;

/// How whatsapp clients are built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhatsAppConfig {
    /// The chat server's websocket URL; `None` is the crate's default
    /// (`wss://web.whatsapp.com/ws/chat`). Tests point it at a closed local
    /// port so nothing reaches out (`SWITCHBOARD_WHATSAPP_WS_URL`).
    pub ws_url: Option<String>,
    /// The WhatsApp Web version to announce, `primary.secondary.tertiary`;
    /// `None` fetches the current one from web.whatsapp.com once a day
    /// (`SWITCHBOARD_WHATSAPP_VERSION`).
    pub version: Option<(u32, u32, u32)>,
    /// How media named by `url` in a send is fetched: the public-address
    /// rule, its opener `MEDIA_URL_ALLOW_PRIVATE`, and the time bound.
    pub media_urls: MediaUrlConfig,
    /// The wire server's media host (`127.0.0.1:port`), reached over plain
    /// HTTP instead of WhatsApp's: test builds only (the `wire` feature,
    /// which also makes the client accept the wire server's certificate
    /// chain). A build without the feature refuses to start a client with
    /// it set.
    pub wire_media_host: Option<String>,
    /// How long a send waits for the server to accept or refuse it
    /// (`SWITCHBOARD_WHATSAPP_SEND_ACK_WAIT_MS`, 20 s).
    pub send_ack_wait: std::time::Duration,
    /// The proxy of every session that names none of its own
    /// (`SWITCHBOARD_PROXY`); `None` connects directly.
    pub proxy: Option<switchboard_domain::proxy::Proxy>,
}

impl Default for WhatsAppConfig {
    fn default() -> Self {
        Self {
            ws_url: None,
            version: None,
            media_urls: MediaUrlConfig::default(),
            wire_media_host: None,
            send_ack_wait: std::time::Duration::from_secs(20),
            proxy: None,
        }
    }
}

/// Parses a version `2.3000.1023456789` (the flag's value parser).
pub fn parse_version(s: &str) -> Result<(u32, u32, u32), String> {
    let parts: Vec<&str> = s.trim().split('.').collect();
    let [p, s2, t] = parts.as_slice() else {
        return Err(format!("`{s}` is not a version like 2.3000.1023456789"));
    };
    let num = |x: &str| {
        x.parse::<u32>()
            .map_err(|_| format!("`{x}` in `{s}` is not a number"))
    };
    Ok((num(p)?, num(s2)?, num(t)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_has_three_numbers() {
        assert_eq!(parse_version("2.3000.1023"), Ok((2, 3000, 1023)));
        assert!(parse_version("2.3000").is_err());
        assert!(parse_version("2.x.1").is_err());
    }
}
