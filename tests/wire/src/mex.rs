//! GraphQL queries over `w:mex`, as WhatsApp's servers answer them: a
//! `<result>` holding the JSON response. The wire serves the account's
//! reach-out timelock state; any other query is answered with an error the
//! client reads as one.

use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::Node;

use crate::iq::{attr, result};
use crate::server::{State, lock};

/// The persisted-query id of WhatsApp Web's `FetchReachoutTimelock`.
const REACHOUT_TIMELOCK: &str = "23983697327930364";

/// The answer to a `w:mex` IQ `id` of `phone`.
pub fn answer(state: &State, phone: &str, node: &Node, id: &str) -> Node {
    let query = node
        .get_optional_child("query")
        .and_then(|q| attr(q, "query_id"))
        .unwrap_or_default();
    let body = if query == REACHOUT_TIMELOCK {
        let lock = lock(&state.script).timelock(phone);
        let ends = lock.and_then(|(until, stated)| stated.then(|| until.to_string()));
        serde_json::json!({"data": {"xwa2_fetch_account_reachout_timelock": {
            "is_active": lock.is_some(),
            "time_enforcement_ends": ends,
            "enforcement_type": "DEFAULT",
        }}})
    } else {
        serde_json::json!({"data": null, "errors": [{
            "message": format!("the wire does not serve query {query}"),
            "extensions": {"error_code": 501, "is_summary": true},
        }]})
    };
    result(id)
        .children([NodeBuilder::new("result")
            .bytes(body.to_string().into_bytes())
            .build()])
        .build()
}
