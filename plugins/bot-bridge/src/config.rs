//! The binding's configuration and the endpoint URL in it, checked once per
//! event so that a mistake reaches the operator as a clear error (the host
//! retries it, then dead-letters it) instead of a failed request later.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The configuration as written in the binding; [`parse_config`] checks it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    /// Optional here so that its absence gets a message of its own.
    endpoint: Option<String>,
    #[serde(default = "default_reply_kind")]
    reply_kind: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    quote: bool,
}

/// The send kind of a reply when the configuration names none.
fn default_reply_kind() -> String {
    "text".to_owned()
}

/// A checked configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Where each incoming message is posted.
    pub endpoint: Endpoint,
    /// The send kind of the reply (`text` unless configured).
    pub reply_kind: String,
    /// Extra request headers (for example an API key), in name order.
    pub headers: Vec<(String, String)>,
    /// Whether the reply quotes the incoming message.
    pub quote: bool,
}

/// The URL scheme of the endpoint: plain HTTP or HTTPS, nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `http://`
    Http,
    /// `https://`
    Https,
}

/// An endpoint URL split the way an outgoing wasi:http request takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The scheme.
    pub scheme: Scheme,
    /// `host` or `host:port` (an IPv6 host in brackets).
    pub authority: String,
    /// The path and query, always starting with `/`.
    pub path_with_query: String,
}

/// Parses and checks the binding's JSON configuration.
pub fn parse_config(json: &str) -> Result<Config, String> {
    let raw: RawConfig =
        serde_json::from_str(json).map_err(|e| format!("invalid configuration: {e}"))?;
    let endpoint = raw.endpoint.ok_or(
        "invalid configuration: `endpoint` is missing \
         (the http:// or https:// URL each message is posted to)",
    )?;
    let endpoint =
        parse_endpoint(&endpoint).map_err(|e| format!("invalid configuration: `endpoint`: {e}"))?;
    if raw.reply_kind.trim().is_empty() {
        return Err("invalid configuration: `reply_kind` is empty".to_owned());
    }
    // The plugin computes the length from the body it writes; a configured
    // one could only disagree with it.
    if raw
        .headers
        .keys()
        .any(|name| name.eq_ignore_ascii_case("content-length"))
    {
        return Err(
            "invalid configuration: `headers` may not set content-length (it is computed)"
                .to_owned(),
        );
    }
    Ok(Config {
        endpoint,
        reply_kind: raw.reply_kind,
        headers: raw.headers.into_iter().collect(),
        quote: raw.quote,
    })
}

/// Splits `scheme://authority/path?query` into its parts. Only `http` and
/// `https` are accepted; a fragment is dropped (it never reaches a server);
/// credentials in the URL are refused, since headers are the place for them.
pub fn parse_endpoint(url: &str) -> Result<Endpoint, String> {
    if url.is_empty() {
        return Err("the URL is empty".to_owned());
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("`{url}` contains whitespace"));
    }
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("`{url}` is not an http:// or https:// URL"))?;
    let scheme = if scheme.eq_ignore_ascii_case("http") {
        Scheme::Http
    } else if scheme.eq_ignore_ascii_case("https") {
        Scheme::Https
    } else {
        return Err(format!(
            "the scheme `{scheme}` is not supported (only http and https)"
        ));
    };
    let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path_with_query) = rest.split_at(split);
    check_authority(authority)?;
    let path_with_query = if path_with_query.starts_with('/') {
        path_with_query.to_owned()
    } else {
        format!("/{path_with_query}")
    };
    Ok(Endpoint {
        scheme,
        authority: authority.to_owned(),
        path_with_query,
    })
}

/// Checks `host`, `host:port`, `[v6]` or `[v6]:port`.
fn check_authority(authority: &str) -> Result<(), String> {
    if authority.is_empty() {
        return Err("the URL has no host".to_owned());
    }
    if authority.contains('@') {
        return Err("credentials in the URL are not supported (use `headers`)".to_owned());
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (inside, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("`{authority}` has an unclosed `[`"))?;
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or_else(|| format!("`{authority}` is not a valid host"))?,
            ),
        };
        (inside, port)
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("the URL has no host".to_owned());
    }
    if let Some(port) = port {
        let valid = !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u16>().is_ok_and(|p| p != 0);
        if !valid {
            return Err(format!("`{port}` is not a valid port"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(url: &str) -> Endpoint {
        parse_endpoint(url).unwrap()
    }

    #[test]
    fn a_url_splits_into_scheme_authority_and_path_with_query() {
        assert_eq!(
            endpoint("http://bot.local:8080/hooks/wa?token=abc"),
            Endpoint {
                scheme: Scheme::Http,
                authority: "bot.local:8080".into(),
                path_with_query: "/hooks/wa?token=abc".into(),
            }
        );
        let https = endpoint("HTTPS://api.example.com/v1/chat");
        assert_eq!(https.scheme, Scheme::Https);
        assert_eq!(https.authority, "api.example.com");
        assert_eq!(https.path_with_query, "/v1/chat");
    }

    #[test]
    fn a_missing_path_becomes_the_root_and_a_bare_query_gets_one() {
        assert_eq!(endpoint("http://h").path_with_query, "/");
        assert_eq!(endpoint("http://h:81?x=1").path_with_query, "/?x=1");
        assert_eq!(endpoint("http://h:81?x=1").authority, "h:81");
    }

    #[test]
    fn a_fragment_is_dropped() {
        assert_eq!(endpoint("http://h/p?q=1#frag").path_with_query, "/p?q=1");
        assert_eq!(endpoint("http://h#frag").path_with_query, "/");
    }

    #[test]
    fn ipv6_hosts_keep_their_brackets() {
        let e = endpoint("http://[::1]:9000/bot");
        assert_eq!(e.authority, "[::1]:9000");
        assert_eq!(e.path_with_query, "/bot");
        assert_eq!(endpoint("http://[::1]").authority, "[::1]");
    }

    #[test]
    fn other_schemes_and_malformed_urls_are_refused() {
        for (url, why) in [
            ("", "empty"),
            ("ftp://h/x", "not supported"),
            ("bot.local/x", "not an http"),
            ("http:///x", "no host"),
            ("http://:80/x", "no host"),
            ("http://user:pw@h/x", "credentials"),
            ("http://h:/x", "not a valid port"),
            ("http://h:99999/x", "not a valid port"),
            ("http://h:0/x", "not a valid port"),
            ("http://h:8a/x", "not a valid port"),
            ("http://[::1/x", "unclosed"),
            ("http://[::1]x/", "not a valid host"),
            ("http://h/a b", "whitespace"),
        ] {
            let err = parse_endpoint(url).unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
        }
    }

    #[test]
    fn a_full_configuration_is_read_with_its_headers_in_name_order() {
        let c = parse_config(
            r#"{"endpoint": "https://n8n.local/webhook/x", "reply_kind": "text",
                "headers": {"x-api-key": "k", "authorization": "Bearer t"}, "quote": true}"#,
        )
        .unwrap();
        assert_eq!(c.endpoint.authority, "n8n.local");
        assert_eq!(c.reply_kind, "text");
        assert_eq!(
            c.headers,
            vec![
                ("authorization".to_owned(), "Bearer t".to_owned()),
                ("x-api-key".to_owned(), "k".to_owned()),
            ]
        );
        assert!(c.quote);
    }

    #[test]
    fn the_reply_kind_defaults_to_text_and_quoting_to_off() {
        let c = parse_config(r#"{"endpoint": "http://h/"}"#).unwrap();
        assert_eq!(c.reply_kind, "text");
        assert!(c.headers.is_empty());
        assert!(!c.quote);
    }

    #[test]
    fn a_missing_or_invalid_endpoint_is_a_clear_error() {
        let missing = parse_config("{}").unwrap_err();
        assert!(missing.contains("`endpoint` is missing"), "{missing}");
        let invalid = parse_config(r#"{"endpoint": "ftp://h"}"#).unwrap_err();
        assert!(
            invalid.starts_with("invalid configuration: `endpoint`:"),
            "{invalid}"
        );
        let not_a_string = parse_config(r#"{"endpoint": 5}"#).unwrap_err();
        assert!(
            not_a_string.starts_with("invalid configuration:"),
            "{not_a_string}"
        );
    }

    #[test]
    fn unknown_fields_bad_headers_and_an_empty_reply_kind_are_refused() {
        for json in [
            r#"{"endpoint": "http://h/", "endpont": "x"}"#,
            r#"{"endpoint": "http://h/", "headers": {"x": 1}}"#,
            r#"{"endpoint": "http://h/", "headers": {"Content-Length": "3"}}"#,
            r#"{"endpoint": "http://h/", "reply_kind": " "}"#,
            "not json",
        ] {
            let err = parse_config(json).unwrap_err();
            assert!(err.starts_with("invalid configuration:"), "{json}: {err}");
        }
    }
}
