//! The OpenAPI document at `/api/v1/openapi.json` against the router the
//! gateway really serves (read with `inventory::routes_of`), its structure as
//! OpenAPI 3.1 (self-contained checks: version, references, responses, path
//! parameters, security), its security declarations against real answers, and
//! the `/docs` page, which must load nothing from outside the gateway.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::Value;
use switchboard::api::openapi::inventory::RouteEntry;
use switchboard_tests::TestServer;

use switchboard_tests::assembled::Assembled;

/// The operation keys of a path item (OpenAPI 3.1).
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// `METHOD path` of every operation of the document's `paths`.
fn documented(doc: &Value) -> BTreeSet<String> {
    let paths = doc["paths"].as_object().expect("`paths` is an object");
    let mut out = BTreeSet::new();
    for (path, item) in paths {
        for method in METHODS {
            if item.get(method).is_some() {
                out.insert(format!("{} {path}", method.to_ascii_uppercase()));
            }
        }
    }
    out
}

/// `METHOD path` of every route; a catch-all `{*rest}` is written `{rest}`
/// as OpenAPI writes a parameter.
fn served(routes: &[RouteEntry]) -> BTreeSet<String> {
    routes
        .iter()
        .map(|r| format!("{} {}", r.method, r.path.replace("{*", "{")))
        .collect()
}

async fn served_document(server: &TestServer) -> Value {
    let resp = server
        .http()
        .get(format!("{}/api/v1/openapi.json", server.base()))
        .send()
        .await
        .expect("request sent");
    assert_eq!(resp.status(), 200, "the document is public");
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("application/json"), "{ct}");
    resp.json().await.expect("the document is JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_served_route_is_in_the_document() {
    let server = TestServer::start().await;
    let doc = served_document(&server).await;
    let app = Assembled::new(true).await;
    let missing: Vec<_> = served(&app.routes())
        .difference(&documented(&doc))
        .cloned()
        .collect();
    assert!(missing.is_empty(), "served but undocumented: {missing:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_operation_is_served() {
    let server = TestServer::start().await;
    let doc = served_document(&server).await;
    let app = Assembled::new(true).await;
    let extra: Vec<_> = documented(&doc)
        .difference(&served(&app.routes()))
        .cloned()
        .collect();
    assert!(extra.is_empty(), "documented but not served: {extra:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_sim_the_document_matches_the_router_and_has_no_sim_routes() {
    let with_sim = switchboard::api::openapi::document(true);
    let without = switchboard::api::openapi::document(false);
    let app = Assembled::new(false).await;
    let (routes, docs) = (served(&app.routes()), documented(&without));
    let differ: Vec<_> = routes.symmetric_difference(&docs).collect();
    assert!(differ.is_empty(), "served xor documented: {differ:#?}");
    let sim = |ops: &BTreeSet<String>| ops.iter().filter(|o| o.contains(" /api/v1/sim/")).count();
    assert_eq!(sim(&documented(&without)), 0);
    assert!(
        sim(&documented(&with_sim)) > 0,
        "the sim routes are documented when enabled"
    );
}

/// Every `$ref` string anywhere under `v`, with where it was found.
fn refs<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                match (k.as_str(), child) {
                    ("$ref", Value::String(r)) => out.push((at.clone(), r)),
                    _ => refs(child, format!("{at}/{k}"), out),
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                refs(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// `v`, or what its `$ref` points at.
fn deref<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str() {
        Some(r) => doc.pointer(&r[1..]).unwrap_or(&Value::Null),
        None => v,
    }
}

/// Every operation of a paths-like map (`paths` or `webhooks`): (name, path item, operation).
fn operations(map: &Value) -> Vec<(String, &Value, &Value)> {
    let mut out = Vec::new();
    for (path, item) in map.as_object().into_iter().flatten() {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                out.push((format!("{method} {path}"), item, op));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_is_structurally_valid_openapi_3_1() {
    let server = TestServer::start().await;
    let doc = served_document(&server).await;
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1.")),
        "openapi: {}",
        doc["openapi"]
    );
    for key in ["title", "version"] {
        assert!(
            doc["info"][key].as_str().is_some_and(|s| !s.is_empty()),
            "info.{key}"
        );
    }

    let mut all = Vec::new();
    refs(&doc, String::new(), &mut all);
    assert!(!all.is_empty(), "the document uses components");
    for (at, r) in &all {
        assert!(r.starts_with("#/components/"), "{at}: non-local $ref {r}");
        assert!(doc.pointer(&r[1..]).is_some(), "{at}: dangling $ref {r}");
    }

    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["bearer"]["type"], "http", "{schemes}");
    assert!(
        schemes["bearer"]["scheme"]
            .as_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("bearer")),
        "{schemes}"
    );
    let declared_tags: BTreeSet<&str> = doc["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();

    let mut ids = BTreeSet::new();
    let mut ops = operations(&doc["paths"]);
    assert!(ops.len() > 50, "only {} operations", ops.len());
    ops.extend(operations(&doc["webhooks"]));
    for (name, item, op) in ops {
        let responses = op["responses"].as_object();
        assert!(
            responses.is_some_and(|r| !r.is_empty()),
            "{name}: no responses"
        );
        for (code, resp) in responses.into_iter().flatten() {
            let valid = code == "default"
                || (code.len() == 3
                    && (code.parse::<u16>().is_ok_and(|c| (100..600).contains(&c))
                        || (code.ends_with("XX")
                            && ('1'..='5').contains(&code.chars().next().unwrap()))));
            assert!(valid, "{name}: response key {code}");
            assert!(
                deref(&doc, resp)["description"].is_string(),
                "{name} {code}: a response needs a description"
            );
        }
        if let Some(id) = op["operationId"].as_str() {
            assert!(
                ids.insert(id.to_owned()),
                "{name}: duplicate operationId {id}"
            );
        }
        for tag in op["tags"].as_array().into_iter().flatten() {
            let tag = tag.as_str().unwrap_or_default();
            assert!(declared_tags.contains(tag), "{name}: undeclared tag {tag}");
        }
        for requirement in op["security"].as_array().into_iter().flatten() {
            for scheme in requirement.as_object().expect("a requirement").keys() {
                assert!(
                    schemes.get(scheme).is_some(),
                    "{name}: unknown scheme {scheme}"
                );
            }
        }
        if let Some(body) = op.get("requestBody") {
            let content = deref(&doc, body)["content"].as_object();
            assert!(
                content.is_some_and(|c| !c.is_empty()),
                "{name}: a request body needs content"
            );
        }
        // Every `{param}` of the template is a required path parameter, and
        // every path parameter is in the template.
        let path = name.split_once(' ').unwrap().1;
        let template: BTreeSet<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        let params: Vec<&Value> = [&item["parameters"], &op["parameters"]]
            .into_iter()
            .flat_map(|p| p.as_array().into_iter().flatten())
            .map(|p| deref(&doc, p))
            .collect();
        for p in &params {
            let place = p["in"].as_str().unwrap_or_default();
            assert!(
                ["path", "query", "header", "cookie"].contains(&place),
                "{name}: {p}"
            );
            assert!(
                p["name"].is_string(),
                "{name}: a parameter needs a name: {p}"
            );
            assert!(
                p.get("schema").is_some() || p.get("content").is_some(),
                "{name}: {p}"
            );
        }
        let in_path: BTreeSet<&str> = params
            .iter()
            .filter(|p| p["in"] == "path")
            .map(|p| {
                assert_eq!(
                    p["required"], true,
                    "{name}: path parameter {p} must be required"
                );
                p["name"].as_str().expect("a parameter name")
            })
            .collect();
        assert_eq!(in_path, template, "{name}: path parameters");
    }
}

/// The path with every `{param}` replaced by a value.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|s| if s.starts_with('{') { "x" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether an operation overrides the document's security with "none needed".
fn is_public(doc: &Value, op: &Value) -> bool {
    let security = op.get("security").unwrap_or(&doc["security"]);
    security.as_array().is_some_and(|reqs| {
        reqs.iter()
            .any(|r| r.as_object().is_some_and(|o| o.is_empty()))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_need_the_token_exactly_when_the_document_says_so() {
    let server = TestServer::start().await;
    let doc = served_document(&server).await;
    let mut public = 0;
    for (name, _, op) in operations(&doc["paths"]) {
        let (method, path) = name.split_once(' ').unwrap();
        if path == "/api/v1/events/stream" && is_public(&doc, op) {
            panic!("the event stream must not be public");
        }
        let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
        let resp = server
            .http()
            .request(method, format!("{}{}", server.base(), concrete(path)))
            .send()
            .await
            .expect("request sent");
        if is_public(&doc, op) {
            public += 1;
            assert_ne!(resp.status(), 401, "{name} is documented as public");
        } else {
            assert_eq!(
                resp.status(),
                401,
                "{name} is documented as needing the token"
            );
            assert_eq!(resp.headers()["www-authenticate"], "Bearer", "{name}");
        }
    }
    assert!(
        public >= 3,
        "the health routes and the reference are public"
    );
}

/// The values of `attr="…"` attributes in `html`.
fn attributes<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let marker = format!("{attr}=\"");
    html.match_indices(&marker)
        .filter_map(|(i, _)| {
            let rest = &html[i + marker.len()..];
            rest.split_once('"').map(|(v, _)| v)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_page_loads_only_assets_the_gateway_serves() {
    let server = TestServer::start().await;
    let get = |path: String| {
        let http = server.http().clone();
        async move { http.get(path).send().await.expect("request sent") }
    };
    let page = get(format!("{}/docs", server.base())).await;
    assert_eq!(page.status(), 200);
    let ct = page.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/html"), "{ct}");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(directive), "{directive} in {csp}");
    }
    let html = page.text().await.unwrap();
    let scripts = attributes(&html, "src");
    let styles = attributes(&html, "href");
    assert!(!scripts.is_empty() && !styles.is_empty(), "{html}");
    for scheme in ["http:", "https:", "//"] {
        assert!(!html.contains(scheme), "`{scheme}` in the page: {html}");
    }
    let mut initializer = String::new();
    for asset in scripts.iter().chain(&styles) {
        assert!(
            asset.starts_with('/') && !asset.starts_with("//"),
            "`{asset}` is not a path on the gateway"
        );
        let resp = get(format!("{}{asset}", server.base())).await;
        assert_eq!(resp.status(), 200, "{asset}");
        let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
        let wanted = if asset.ends_with(".css") {
            "text/css"
        } else {
            "text/javascript"
        };
        assert!(ct.starts_with(wanted), "{asset}: {ct}");
        let body = resp.text().await.unwrap();
        assert!(!body.is_empty(), "{asset} is empty");
        if asset.contains("initializer") {
            initializer = body;
        }
    }
    // The page points Swagger UI at the document, served here, with no
    // validator badge (which would call out).
    assert!(
        initializer.contains("\"/api/v1/openapi.json\""),
        "{initializer}"
    );
    assert!(initializer.contains("validatorUrl: null"), "{initializer}");
    for scheme in ["http:", "https:", "//"] {
        assert!(
            !initializer.contains(scheme),
            "`{scheme}` in: {initializer}"
        );
    }
}
