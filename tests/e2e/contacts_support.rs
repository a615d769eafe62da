//! Helpers of the contact directory tests: reading the directory, waiting
//! for a contact, and driving the sim (address book, network events).

use serde_json::{Value, json};
use switchboard_tests::{TestServer, eventually};

/// `GET /sessions/{id}/contacts?<query>`, expecting 200.
pub async fn contacts(server: &TestServer, id: &str, query: &str) -> Value {
    server
        .get(&format!("/api/v1/sessions/{id}/contacts?{query}"))
        .await
        .expect(200)
}

/// The stored contact with this phone, once it exists and satisfies `pred`.
pub async fn contact_where(
    server: &TestServer,
    id: &str,
    phone: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    eventually(&format!("contact {phone} in {id}'s directory"), || async {
        let body = contacts(server, id, "limit=1000").await;
        body["contacts"]
            .as_array()?
            .iter()
            .find(|c| c["phone"] == phone && pred(c))
            .cloned()
    })
    .await
}

/// Adds an entry to a sim session's address book.
pub async fn add_to_book(server: &TestServer, id: &str, entry: Value) -> Value {
    server
        .post(&format!("/api/v1/sim/sessions/{id}/address-book"), entry)
        .await
        .expect(201)
}

/// Delivers a network-side event to a sim session, expecting 200.
pub async fn event(server: &TestServer, id: &str, event: &str, data: Value) {
    server
        .post(
            &format!("/api/v1/sim/sessions/{id}/events"),
            json!({ "event": event, "data": data }),
        )
        .await
        .expect(200);
}

/// Whether `s` has the `YYYY-MM-DD HH:MM:SS` shape.
pub fn is_sql_datetime(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}
