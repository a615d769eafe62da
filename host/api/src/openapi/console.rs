//! The operator console's routes in the document (`api/console.rs` serves
//! them with closures, so they are described here as JSON rather than by
//! `#[utoipa::path]`). Public, like the console: it holds no data.

use serde_json::{Value, json};

/// The console's tag.
pub(super) const TAG: &str = "console";

/// The path items of `/console`, `/console/` and `/console/{path}`.
pub(super) fn paths() -> Vec<(&'static str, Value)> {
    let public = json!([{}]);
    let file = |content: &str, description: &str| {
        json!({
            "description": description,
            "content": { content: { "schema": { "type": "string" } } }
        })
    };
    vec![
        (
            "/console",
            json!({ "get": {
                "tags": [TAG],
                "summary": "The operator console (redirect)",
                "operationId": "console_redirect",
                "security": public,
                "responses": { "308": {
                    "description": "Redirects to `/console/`.",
                    "headers": { "Location": { "schema": { "type": "string" } } }
                } }
            } }),
        ),
        (
            "/console/",
            json!({ "get": {
                "tags": [TAG],
                "summary": "The operator console",
                "description": "A browser app over this API; it signs in with the API token, kept in the browser's session storage.",
                "operationId": "console_index",
                "security": public,
                "responses": { "200": file("text/html", "The console's page.") }
            } }),
        ),
        (
            "/console/{path}",
            json!({ "get": {
                "tags": [TAG],
                "summary": "A file of the console",
                "description": "A script, stylesheet or image the console's page loads, by its path under `/console/` (it may hold slashes, e.g. `js/main.js`).",
                "operationId": "console_asset",
                "security": public,
                "parameters": [{
                    "name": "path", "in": "path", "required": true,
                    "description": "The file's path under `/console/`.",
                    "schema": { "type": "string" }
                }],
                "responses": {
                    "200": file("application/octet-stream", "The file, with its own content type."),
                    "404": {
                        "description": "No such file (`route_not_found`).",
                        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ErrorBody" } } }
                    }
                }
            } }),
        ),
    ]
}
