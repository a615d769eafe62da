//! `wasi:io` (streams and poll) and `wasi:sockets/udp-create-socket` for
//! plugins, replacing wasmtime-wasi's synchronous versions.
//!
//! wasmtime-wasi runs its blocking operations (`blocking-write-and-flush`,
//! dropping a stream, `poll`, …) with `Handle::block_on` on the Tokio
//! runtime around the caller, which panics when the caller is itself a task
//! of that runtime — and plugin calls are: the event bus publishes inside
//! request handlers. Any plugin that wrote to stderr (every Rust panic
//! message, `eprintln!`, a Python `print`) or dropped a stream crashed the
//! call in the host instead of carrying on.
//!
//! A plugin's stdio is a sink and it has no files or sockets, so every
//! operation it can reach completes at once: here each is polled once, on
//! the calling thread, and one that would really wait (a `sleep`, a poll on
//! a clock) is refused with a trap — plugins have a CPU deadline and must
//! not block. UDP sockets are refused before any is created (the sandbox
//! grants no network).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::io::poll as async_poll;
use wasmtime_wasi::p2::bindings::io::streams::{
    HostInputStream as AsyncInput, HostOutputStream as AsyncOutput,
};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode, IpAddressFamily};
use wasmtime_wasi::p2::bindings::sync::io::{poll, streams};
use wasmtime_wasi::p2::bindings::sync::sockets::udp_create_socket;
use wasmtime_wasi::p2::{
    DynInputStream, DynOutputStream, DynPollable, SocketError, SocketResult, StreamError,
    StreamResult, UdpSocket,
};

use super::engine::HostState;

/// Why a blocking operation was refused.
const WOULD_BLOCK: &str =
    "plugins cannot block: the operation would wait (sleeping or waiting on I/O is not available)";

/// Polls `f` once on this thread; `None` when it is not ready.
fn now<F: Future>(f: F) -> Option<F::Output> {
    let f = pin!(f);
    match f.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

fn stream_now<T>(f: impl Future<Output = StreamResult<T>>) -> StreamResult<T> {
    now(f).unwrap_or_else(|| Err(StreamError::trap(WOULD_BLOCK)))
}

fn trap_now<T>(f: impl Future<Output = wasmtime::Result<T>>) -> wasmtime::Result<T> {
    now(f).unwrap_or_else(|| Err(wasmtime::format_err!("{WOULD_BLOCK}")))
}

/// The resource table, seen through the non-blocking implementations.
pub(super) struct Io<'a>(&'a mut ResourceTable);

struct NonBlocking;

impl HasData for NonBlocking {
    type Data<'a> = Io<'a>;
}

/// UDP, refused.
pub(super) struct NoUdp;

impl HasData for NoUdp {
    type Data<'a> = NoUdp;
}

/// Replaces the synchronous `wasi:io/streams`, `wasi:io/poll` and
/// `wasi:sockets/udp-create-socket` already in `linker` (from
/// `add_to_linker_sync`) with the versions here.
pub(super) fn shadow(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    poll::add_to_linker::<HostState, NonBlocking>(linker, |s| Io(&mut s.table))?;
    streams::add_to_linker::<HostState, NonBlocking>(linker, |s| Io(&mut s.table))?;
    udp_create_socket::add_to_linker::<HostState, NoUdp>(linker, |_| NoUdp)?;
    linker.allow_shadowing(false);
    Ok(())
}

impl network::Host for NoUdp {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        error.downcast()
    }

    fn network_error_code(
        &mut self,
        _err: Resource<wasmtime_wasi::p2::IoError>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        Ok(None) // Not reachable: only `create-udp-socket` is linked through `NoUdp`.
    }
}

impl network::HostNetwork for NoUdp {
    fn drop(&mut self, _this: Resource<network::Network>) -> wasmtime::Result<()> {
        Ok(()) // Not reachable: only `create-udp-socket` is linked through `NoUdp`.
    }
}

impl udp_create_socket::Host for NoUdp {
    fn create_udp_socket(&mut self, _family: IpAddressFamily) -> SocketResult<Resource<UdpSocket>> {
        Err(ErrorCode::AccessDenied.into())
    }
}

impl poll::Host for Io<'_> {
    fn poll(&mut self, pollables: Vec<Resource<DynPollable>>) -> wasmtime::Result<Vec<u32>> {
        trap_now(async_poll::Host::poll(self.0, pollables))
    }
}

impl poll::HostPollable for Io<'_> {
    fn ready(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<bool> {
        trap_now(async_poll::HostPollable::ready(self.0, pollable))
    }

    fn block(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        trap_now(async_poll::HostPollable::block(self.0, pollable))
    }

    fn drop(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        async_poll::HostPollable::drop(self.0, pollable)
    }
}

impl streams::Host for Io<'_> {
    fn convert_stream_error(&mut self, err: StreamError) -> wasmtime::Result<streams::StreamError> {
        streams::Host::convert_stream_error(self.0, err)
    }
}

impl streams::HostOutputStream for Io<'_> {
    fn drop(&mut self, stream: Resource<DynOutputStream>) -> wasmtime::Result<()> {
        trap_now(AsyncOutput::drop(self.0, stream))
    }

    fn check_write(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<u64> {
        streams::HostOutputStream::check_write(self.0, stream)
    }

    fn write(&mut self, stream: Resource<DynOutputStream>, bytes: Vec<u8>) -> StreamResult<()> {
        streams::HostOutputStream::write(self.0, stream, bytes)
    }

    fn blocking_write_and_flush(
        &mut self,
        stream: Resource<DynOutputStream>,
        bytes: Vec<u8>,
    ) -> StreamResult<()> {
        stream_now(AsyncOutput::blocking_write_and_flush(self.0, stream, bytes))
    }

    fn blocking_write_zeroes_and_flush(
        &mut self,
        stream: Resource<DynOutputStream>,
        len: u64,
    ) -> StreamResult<()> {
        stream_now(AsyncOutput::blocking_write_zeroes_and_flush(
            self.0, stream, len,
        ))
    }

    fn subscribe(
        &mut self,
        stream: Resource<DynOutputStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        streams::HostOutputStream::subscribe(self.0, stream)
    }

    fn write_zeroes(&mut self, stream: Resource<DynOutputStream>, len: u64) -> StreamResult<()> {
        streams::HostOutputStream::write_zeroes(self.0, stream, len)
    }

    fn flush(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<()> {
        streams::HostOutputStream::flush(self.0, stream)
    }

    fn blocking_flush(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<()> {
        stream_now(AsyncOutput::blocking_flush(
            self.0,
            Resource::new_borrow(stream.rep()),
        ))
    }

    fn splice(
        &mut self,
        dst: Resource<DynOutputStream>,
        src: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        streams::HostOutputStream::splice(self.0, dst, src, len)
    }

    fn blocking_splice(
        &mut self,
        dst: Resource<DynOutputStream>,
        src: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        stream_now(AsyncOutput::blocking_splice(self.0, dst, src, len))
    }
}

impl streams::HostInputStream for Io<'_> {
    fn drop(&mut self, stream: Resource<DynInputStream>) -> wasmtime::Result<()> {
        trap_now(AsyncInput::drop(self.0, stream))
    }

    fn read(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<Vec<u8>> {
        streams::HostInputStream::read(self.0, stream, len)
    }

    fn blocking_read(
        &mut self,
        stream: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<Vec<u8>> {
        stream_now(AsyncInput::blocking_read(self.0, stream, len))
    }

    fn skip(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        streams::HostInputStream::skip(self.0, stream, len)
    }

    fn blocking_skip(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        stream_now(AsyncInput::blocking_skip(self.0, stream, len))
    }

    fn subscribe(
        &mut self,
        stream: Resource<DynInputStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        streams::HostInputStream::subscribe(self.0, stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ready_future_is_taken_and_a_waiting_one_is_refused() {
        assert_eq!(now(async { 7 }), Some(7));
        assert_eq!(now(std::future::pending::<u8>()), None);
        let refused = stream_now(std::future::pending::<StreamResult<()>>());
        assert!(matches!(refused, Err(StreamError::Trap(_))));
    }
}
