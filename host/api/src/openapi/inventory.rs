//! The routes a built router really serves, read from axum's `Debug`
//! rendering of it (axum has no other way to list them). Tests compare
//! this list with the OpenAPI document, so a route cannot be added without
//! being documented. The reading is strict: an unexpected rendering yields
//! an error, never a silently short list.

use std::fmt::Debug;

/// One method on one path, e.g. `GET /api/v1/sessions/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RouteEntry {
    /// The path as registered, with `{param}` segments.
    pub path: String,
    /// Upper-case HTTP method.
    pub method: String,
}

/// Methods as axum's `MethodRouter` names its fields, in its order. `head`
/// is left out: axum answers HEAD for every GET route by itself.
const METHODS: &[&str] = &[
    "get", "delete", "options", "patch", "post", "put", "trace", "connect",
];

/// Every method and path of `router` (any `axum::Router`, before or after
/// `with_state`), sorted. Errors name what could not be read.
pub fn routes_of(router: &impl Debug) -> Result<Vec<RouteEntry>, String> {
    let text = format!("{router:?}");
    // The first `PathRouter` is the router's own; the fallback router's follows.
    let own = text
        .split_once("fallback_router:")
        .map(|(own, _)| own)
        .ok_or("no `fallback_router` in the router's rendering")?;
    let (routes, paths) = own
        .split_once("node: Node { paths: {")
        .ok_or("no `node: Node { paths:` in the router's rendering")?;
    let mut out = Vec::new();
    for (id, path) in path_ids(paths)? {
        let endpoint = endpoint_of(routes, &id)
            .ok_or_else(|| format!("no endpoint for RouteId({id}) `{path}`"))?;
        for method in methods(endpoint, &path)? {
            out.push(RouteEntry {
                method,
                path: path.clone(),
            });
        }
    }
    if out.is_empty() {
        return Err("the router's rendering lists no routes".into());
    }
    out.sort();
    Ok(out)
}

/// `RouteId(3): "/x", RouteId(4): "/y/{id}"}, …` → `[("3", "/x"), ("4", "/y/{id}")]`:
/// entries are read one after another up to the `}` that closes the map
/// (paths hold braces of their own, so the map's end is found by reading).
fn path_ids(paths: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = paths.trim_start();
    while let Some(item) = rest.strip_prefix("RouteId(") {
        let (id, after) = item
            .split_once("): \"")
            .ok_or_else(|| format!("unreadable path entry `{item}`"))?;
        let (path, after) = after
            .split_once('"')
            .ok_or_else(|| format!("unterminated path in `{item}`"))?;
        out.push((id.to_owned(), path.to_owned()));
        rest = match after.strip_prefix(", ") {
            Some(next) => next,
            None if after.starts_with('}') => break,
            None => return Err(format!("unexpected text after path `{path}`")),
        };
    }
    Ok(out)
}

/// The rendering of RouteId(`id`)'s endpoint in the `routes` map.
fn endpoint_of<'a>(routes: &'a str, id: &str) -> Option<&'a str> {
    let marker = format!("RouteId({id}): ");
    let start = routes.find(&marker)? + marker.len();
    let rest = &routes[start..];
    let end = rest.find("RouteId(").unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The methods a `MethodRouter(MethodRouter { get: …, … })` rendering serves.
fn methods(endpoint: &str, path: &str) -> Result<Vec<String>, String> {
    let fields = endpoint
        .strip_prefix("MethodRouter(MethodRouter { ")
        .ok_or_else(|| format!("`{path}` is not a method router (a nested service?)"))?;
    let mut out = Vec::new();
    for field in fields.split(", ") {
        let Some((name, value)) = field.split_once(": ") else {
            continue;
        };
        if METHODS.contains(&name) && value != "None" {
            out.push(name.to_ascii_uppercase());
        }
    }
    if out.is_empty() {
        return Err(format!("`{path}` serves no method in `{endpoint}`"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::routing::get;

    use super::*;

    async fn ok() {}

    #[test]
    fn every_method_of_every_path_is_listed() {
        let router: Router = Router::new()
            .route("/a", get(ok).post(ok))
            .route("/b/{id}", axum::routing::delete(ok))
            .fallback(ok);
        let routes = routes_of(&router).unwrap();
        let got: Vec<String> = routes
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        assert_eq!(
            got,
            ["GET /a", "POST /a", "DELETE /b/{id}"],
            "sorted by path, then method"
        );
    }

    #[test]
    fn a_router_without_routes_is_an_error() {
        let router: Router = Router::new();
        assert!(routes_of(&router).is_err());
    }
}
