//! The bridge's effects as host and `wasi:http` calls. Kept thin: every
//! decision is made by the pure functions it calls, which are tested
//! natively; this module only runs inside the gateway.

use crate::Effects;
use crate::bindings::switchboard::plugin::{gateway, host};
use crate::bindings::wasi::http::outgoing_handler;
use crate::bindings::wasi::http::types::{
    ErrorCode, Fields, FutureIncomingResponse, IncomingResponse, Method, OutgoingBody,
    OutgoingRequest, Scheme as WasiScheme, http_error_code,
};
use crate::bindings::wasi::io::streams::StreamError;
use crate::config::{Endpoint, Scheme};
use crate::exchange::{MAX_ANSWER_BYTES, WRITE_CHUNK_BYTES, read_capped, wants_body};

/// How much one `blocking-read` of the answer asks for.
const READ_CHUNK_BYTES: u64 = 64 * 1024;

/// The effects of the running plugin.
pub(crate) struct WasiEffects;

impl Effects for WasiEffects {
    fn config(&mut self) -> String {
        host::config()
    }

    fn post(
        &mut self,
        endpoint: &Endpoint,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<(u16, Vec<u8>), String> {
        post(endpoint, headers, body)
    }

    fn send(&mut self, session_id: &str, kind: &str, body: &str) -> Result<String, String> {
        gateway::send(session_id, kind, body)
    }
}

/// An error code as the error of the event: its Debug text, unchanged, so
/// that the gateway's own words (a refused host names the missing grant)
/// reach the operator.
fn code_text(code: &ErrorCode) -> String {
    format!("{code:?}")
}

/// A stream error as text: the HTTP error code behind it when there is one.
fn stream_error_text(error: StreamError, doing: &str) -> String {
    match error {
        StreamError::LastOperationFailed(e) => match http_error_code(&e) {
            Some(code) => code_text(&code),
            None => format!("{doing} failed: {}", e.to_debug_string()),
        },
        StreamError::Closed => format!("the connection closed while {doing}"),
    }
}

/// Posts `body` and answers the status and (for a 2xx other than 204) the
/// body, read up to [`MAX_ANSWER_BYTES`].
fn post(
    endpoint: &Endpoint,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<(u16, Vec<u8>), String> {
    // One by one rather than `from-list`, so that a refusal names the
    // header (a forbidden one like `host`, or a value with a line break).
    let fields = Fields::new();
    for (name, value) in headers {
        fields
            .append(name, value.as_bytes())
            .map_err(|e| format!("the request header `{name}` was refused: {e:?}"))?;
    }
    let request = OutgoingRequest::new(fields);
    let scheme = match endpoint.scheme {
        Scheme::Http => WasiScheme::Http,
        Scheme::Https => WasiScheme::Https,
    };
    request
        .set_method(&Method::Post)
        .map_err(|()| "the request method was refused".to_owned())?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| "the request scheme was refused".to_owned())?;
    request
        .set_authority(Some(&endpoint.authority))
        .map_err(|()| format!("the authority `{}` was refused", endpoint.authority))?;
    request
        .set_path_with_query(Some(&endpoint.path_with_query))
        .map_err(|()| format!("the path `{}` was refused", endpoint.path_with_query))?;
    let outgoing_body = request
        .body()
        .map_err(|()| "the request body was already taken".to_owned())?;

    // The request is handed over before its body is written: until then
    // the host buffers only a couple of chunks, so writing a longer body
    // first would wait forever.
    let future = outgoing_handler::handle(request, None).map_err(|code| code_text(&code))?;
    let written = write_body(&outgoing_body, body);
    let finished = OutgoingBody::finish(outgoing_body, None).map_err(|code| code_text(&code));
    // A failed connection shows in the response as its error code, a
    // better cause than the write that failed with it: wait for it first.
    let response = wait(&future)?;
    written.and(finished)?;

    let status = response.status();
    if !wants_body(status) {
        return Ok((status, Vec::new()));
    }
    let answer = read_answer(&response)?;
    Ok((status, answer))
}

/// Writes `bytes` to the request body in pieces `blocking-write-and-flush`
/// accepts; the stream is dropped on return, before the body is finished.
fn write_body(body: &OutgoingBody, bytes: &[u8]) -> Result<(), String> {
    let stream = body
        .write()
        .map_err(|()| "the request body stream was already taken".to_owned())?;
    for chunk in bytes.chunks(WRITE_CHUNK_BYTES) {
        stream
            .blocking_write_and_flush(chunk)
            .map_err(|e| stream_error_text(e, "writing the request"))?;
    }
    Ok(())
}

/// Waits for the response (or the error code that replaced it).
fn wait(future: &FutureIncomingResponse) -> Result<IncomingResponse, String> {
    loop {
        // The pollable is a child of the future: dropped right after use.
        future.subscribe().block();
        match future.get() {
            Some(Ok(Ok(response))) => return Ok(response),
            Some(Ok(Err(code))) => return Err(code_text(&code)),
            Some(Err(())) => return Err("the response was already taken".to_owned()),
            // Woken before the response was ready: wait again.
            None => {}
        }
    }
}

/// Reads the response body until the stream closes, up to the cap.
fn read_answer(response: &IncomingResponse) -> Result<Vec<u8>, String> {
    let body = response
        .consume()
        .map_err(|()| "the response body was already taken".to_owned())?;
    let stream = body
        .stream()
        .map_err(|()| "the response body stream was already taken".to_owned())?;
    let answer = read_capped(MAX_ANSWER_BYTES, || {
        match stream.blocking_read(READ_CHUNK_BYTES) {
            Ok(piece) => Ok(Some(piece)),
            Err(StreamError::Closed) => Ok(None),
            Err(e) => Err(stream_error_text(e, "reading the answer")),
        }
    });
    // The stream is a child of the body: it goes first.
    drop(stream);
    drop(body);
    answer
}
