//! HTTP request metrics: counts by method, route template and status, and a
//! latency histogram by method and route. Every label comes from a closed
//! set, because requests are counted before they are authenticated and a
//! stranger must not be able to add series: routes are the templates axum
//! matched (`/api/v1/sessions/{id}`), never raw paths, and requests that
//! matched no route share one label; methods are the nine HTTP defines, and
//! any other method a client makes up is `other`.
//! And the authorization outcome of each request by token name (never its
//! secret): `allowed`, `unauthorized`, `forbidden` (lacks the scope),
//! `hidden` (another session's route), `rate_limited`.

use axum::http::Method;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The `route` label of requests that matched no route.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// The `method` label of a request whose method is none of HTTP's own.
pub const OTHER_METHOD: &str = "other";

/// The `method` label of `method`: its name when HTTP defines it, else
/// [`OTHER_METHOD`] (a made-up method is accepted by the parser, and would
/// otherwise be a new series for every name a client invents).
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => OTHER_METHOD,
    }
}

/// Labels of the request counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: u16,
}

/// Labels of the authorization counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct AuthLabels {
    token: String,
    outcome: &'static str,
}

/// Labels of the latency histogram.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: String,
}

fn latency_histogram() -> Histogram {
    // 100 µs … ~26 s, doubling.
    Histogram::new(exponential_buckets(0.000_1, 2.0, 19))
}

/// The HTTP metric families; cheap to clone.
#[derive(Debug, Clone)]
pub struct HttpMetrics {
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    auth: Family<AuthLabels, Counter>,
}

impl Default for HttpMetrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            auth: Family::default(),
        }
    }
}

impl HttpMetrics {
    /// Records one finished request; `route` is the template it matched
    /// (or [`UNMATCHED_ROUTE`]), never a raw path.
    pub fn observe(&self, method: &Method, route: &str, status: u16, seconds: f64) {
        let method = method_label(method);
        let route = route.to_owned();
        self.latency
            .get_or_create(&RouteLabels {
                method,
                route: route.clone(),
            })
            .observe(seconds);
        self.requests
            .get_or_create(&RequestLabels {
                method,
                route,
                status,
            })
            .inc();
    }

    /// Records one authorization outcome; `token` is the token's name
    /// (`None` when no valid token was presented: counted as `none`).
    pub fn auth(&self, token: Option<&str>, outcome: &'static str) {
        self.auth
            .get_or_create(&AuthLabels {
                token: token.unwrap_or("none").to_owned(),
                outcome,
            })
            .inc();
    }

    pub(crate) fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_api_authorizations",
            "Authorization outcomes of API requests, by token name (`admin`, a minted token's name, or `none`) and outcome (allowed, unauthorized, forbidden, hidden, rate_limited)",
            self.auth.clone(),
        );
        r.register(
            "switchboard_http_requests",
            "HTTP requests answered, by method, route template and status",
            self.requests.clone(),
        );
        r.register(
            "switchboard_http_request_duration_seconds",
            "Time to answer HTTP requests (until the response head), by method and route template",
            self.latency.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_route_template_and_status() {
        let m = HttpMetrics::default();
        m.observe(&Method::GET, "/api/v1/sessions/{id}", 200, 0.001);
        m.observe(&Method::GET, "/api/v1/sessions/{id}", 200, 0.002);
        m.observe(&Method::GET, UNMATCHED_ROUTE, 404, 0.001);
        let mut r = Registry::default();
        m.register(&mut r);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &r).unwrap();
        assert!(text.contains(
            "switchboard_http_requests_total{method=\"GET\",route=\"/api/v1/sessions/{id}\",status=\"200\"} 2"
        ));
        assert!(text.contains(
            "switchboard_http_request_duration_seconds_count{method=\"GET\",route=\"/api/v1/sessions/{id}\"} 2"
        ));
        assert!(text.contains("route=\"unmatched\",status=\"404\""));
    }

    #[test]
    fn a_made_up_method_is_counted_as_other_and_adds_no_series() {
        let m = HttpMetrics::default();
        for i in 0..50 {
            let made_up = Method::from_bytes(format!("M{i}XYZ").as_bytes()).unwrap();
            m.observe(&made_up, UNMATCHED_ROUTE, 405, 0.001);
        }
        m.observe(&Method::PATCH, UNMATCHED_ROUTE, 404, 0.001);
        let mut r = Registry::default();
        m.register(&mut r);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &r).unwrap();
        assert!(
            text.contains("switchboard_http_requests_total{method=\"other\",route=\"unmatched\",status=\"405\"} 50"),
            "{text}"
        );
        assert!(text.contains("method=\"PATCH\""), "{text}");
        assert!(!text.contains("XYZ"), "{text}");
    }
}
