//! One bridge socket from upgrade to close: a pending-handshake place, the hello within its
//! bound, admission (which may wait for the pong of another socket carrying the same id), then a
//! read loop (events through the rate cap into the session's buffer, results to their pending
//! commands, pongs to whoever pinged) beside a writer task fed by the session (text, pings,
//! the close). Every way out sends the close code and reason of its [`CloseReason`], or none
//! when the page left first.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::ws::{CloseFrame, Message as Frame, WebSocket};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc::UnboundedReceiver;

use super::rate::RateCap;
use super::registry::Bridge;
use super::session::{Identity, Outbound, Session, SocketLink};
use crate::wire::messages::{self, FrameClues};
use crate::wire::{CloseReason, DecodeError, EventMessage, EventType, KnownEventType, Message};

/// How long the writer gets to put a close frame on the wire once the socket is done.
const CLOSE_BOUND: std::time::Duration = std::time::Duration::from_secs(1);

/// What the first frame turned out to be.
enum First {
    Text(String),
    Refuse(CloseReason),
    Gone,
}

/// How the read loop ended.
enum End {
    /// The page closed or its TCP connection dropped.
    PageLeft(&'static str),
    /// A newer socket took the session; the close frame is already queued.
    Replaced,
    /// The bridge refuses to go on.
    Refuse(CloseReason),
}

/// Serves one upgraded socket.
pub async fn serve(bridge: Bridge, mut socket: WebSocket, origin: Option<String>) {
    let _live = bridge.track_socket();
    let Some(slot) = bridge.begin_handshake() else {
        refuse(
            &bridge,
            &mut socket,
            CloseReason::TooManyHandshakes,
            None,
            origin.as_deref(),
        )
        .await;
        return;
    };
    let first = tokio::select! {
        _ = bridge.shutdown().cancelled() => First::Refuse(CloseReason::ShuttingDown),
        read = tokio::time::timeout(bridge.config().hello_timeout, first_text(&mut socket)) => {
            read.unwrap_or(First::Refuse(CloseReason::HelloTimeout))
        }
    };
    let text = match first {
        First::Text(text) => text,
        First::Refuse(refusal) => {
            refuse(&bridge, &mut socket, refusal, None, origin.as_deref()).await;
            return;
        }
        First::Gone => return,
    };
    let hello = match messages::decode(&text) {
        Ok(Message::Hello(hello)) => hello,
        Ok(_) => {
            let clues = messages::clues(&text);
            refuse(
                &bridge,
                &mut socket,
                CloseReason::HelloFirst,
                Some(&clues),
                origin.as_deref(),
            )
            .await;
            return;
        }
        Err(err) => {
            let clues = messages::clues(&text);
            refuse(
                &bridge,
                &mut socket,
                refusal_for(err),
                Some(&clues),
                origin.as_deref(),
            )
            .await;
            return;
        }
    };
    let (link, outbound) = bridge.new_link();
    let admitted = tokio::select! {
        _ = bridge.shutdown().cancelled() => Err(CloseReason::ShuttingDown),
        admitted = bridge.admit(&hello, link.clone()) => admitted,
    };
    let session = match admitted {
        Ok(session) => session,
        Err(refusal) => {
            let clues = FrameClues {
                kind: Some("hello".into()),
                session_id: Some(hello.session_id.clone()),
                url: Some(messages::clip(&hello.url, 512)),
                sdk_version: hello.sdk_version.clone(),
            };
            refuse(
                &bridge,
                &mut socket,
                refusal,
                Some(&clues),
                origin.as_deref(),
            )
            .await;
            return;
        }
    };
    drop(slot);
    let (sink, stream) = socket.split();
    let writer = tokio::spawn(write(sink, outbound));
    let end = read(&bridge, &session, &link, stream).await;
    let why = match &end {
        End::PageLeft(why) => *why,
        End::Replaced => "replaced by a newer socket",
        End::Refuse(refusal) => {
            let _ = link.outbound.send(Outbound::Close(refusal.clone()));
            refusal.word()
        }
    };
    if let End::Refuse(refusal) = &end
        && !matches!(refusal, CloseReason::ShuttingDown)
    {
        let clues = FrameClues {
            session_id: Some(session.id().to_string()),
            url: Some(session.identity().url),
            ..FrameClues::default()
        };
        bridge.note_refusal(
            refusal.code(),
            refusal.word(),
            &refusal.reason(),
            &clues,
            origin.as_deref(),
        );
    }
    bridge.detach(&session, link.id, why);
    drop(link);
    let _ = tokio::time::timeout(CLOSE_BOUND, writer).await;
}

/// Reads the first data frame.
async fn first_text(socket: &mut WebSocket) -> First {
    loop {
        match socket.recv().await {
            None => return First::Gone,
            Some(Err(err)) => {
                return if too_big(err) {
                    First::Refuse(CloseReason::TooBig)
                } else {
                    First::Gone
                };
            }
            Some(Ok(Frame::Text(text))) => return First::Text(text.as_str().to_string()),
            Some(Ok(Frame::Binary(bytes))) => {
                return match String::from_utf8(bytes.to_vec()) {
                    Ok(text) => First::Text(text),
                    Err(_) => First::Refuse(CloseReason::Invalid(
                        "a binary frame that is not UTF-8".into(),
                    )),
                };
            }
            Some(Ok(Frame::Close(_))) => return First::Gone,
            Some(Ok(Frame::Ping(_) | Frame::Pong(_))) => {}
        }
    }
}

/// Sends a refusal's close frame on a socket not yet split, and records it.
async fn refuse(
    bridge: &Bridge,
    socket: &mut WebSocket,
    refusal: CloseReason,
    clues: Option<&FrameClues>,
    origin: Option<&str>,
) {
    if !matches!(refusal, CloseReason::ShuttingDown) {
        let clues = clues.cloned().unwrap_or_default();
        bridge.note_refusal(
            refusal.code(),
            refusal.word(),
            &refusal.reason(),
            &clues,
            origin,
        );
    }
    let frame = close_frame(&refusal);
    let _ = tokio::time::timeout(CLOSE_BOUND, socket.send(frame)).await;
}

fn close_frame(refusal: &CloseReason) -> Frame {
    Frame::Close(Some(CloseFrame {
        code: refusal.code(),
        reason: refusal.reason().into(),
    }))
}

/// The refusal a decode error earns.
pub fn refusal_for(err: DecodeError) -> CloseReason {
    match err {
        DecodeError::Version { page } => CloseReason::VersionMismatch { page },
        DecodeError::NotJson => CloseReason::Invalid("not JSON".into()),
        other => CloseReason::Invalid(other.to_string()),
    }
}

/// Whether a read error is the frame or message size limit.
fn too_big(err: axum::Error) -> bool {
    matches!(
        err.into_inner()
            .downcast::<tungstenite::Error>()
            .map(|e| *e),
        Ok(tungstenite::Error::Capacity(_))
    )
}

async fn read(
    bridge: &Bridge,
    session: &Arc<Session>,
    link: &SocketLink,
    mut stream: SplitStream<WebSocket>,
) -> End {
    let mut cap = RateCap::new(bridge.config().max_events_per_second, Instant::now());
    loop {
        let frame = tokio::select! {
            _ = link.cancel.cancelled() => return End::Replaced,
            _ = bridge.shutdown().cancelled() => return End::Refuse(CloseReason::ShuttingDown),
            frame = stream.next() => frame,
        };
        let text = match frame {
            None => return End::PageLeft("the connection dropped"),
            Some(Err(err)) => {
                return if too_big(err) {
                    End::Refuse(CloseReason::TooBig)
                } else {
                    End::PageLeft("the connection failed")
                };
            }
            Some(Ok(Frame::Text(text))) => text,
            Some(Ok(Frame::Binary(bytes))) => match axum::extract::ws::Utf8Bytes::try_from(bytes) {
                Ok(text) => text,
                Err(_) => {
                    return End::Refuse(CloseReason::Invalid(
                        "a binary frame that is not UTF-8".into(),
                    ));
                }
            },
            Some(Ok(Frame::Close(_))) => return End::PageLeft("the page closed the socket"),
            Some(Ok(Frame::Pong(_))) => {
                session.touch_page();
                link.pong.notify_waiters();
                continue;
            }
            Some(Ok(Frame::Ping(_))) => {
                session.touch_page();
                continue;
            }
        };
        match messages::decode(text.as_str()) {
            Ok(Message::Event(EventMessage { event })) => {
                if cap.admit(event.kind.is_high_value(), Instant::now()) {
                    if event.kind == EventType::Known(KnownEventType::FlowRecorded) {
                        bridge.keep_recorded(session.id(), event.data.clone());
                    }
                    session.record(event, text.len());
                } else {
                    session.note_dropped();
                }
            }
            Ok(Message::CommandResult(result)) => session.settle(result),
            Ok(Message::Hello(hello)) if hello.session_id == session.page_id() => {
                session.refresh(Identity::from_hello(&hello));
            }
            Ok(Message::Hello(_)) => return End::Refuse(CloseReason::SecondHello),
            Ok(Message::Command(_)) => return End::Refuse(CloseReason::WrongDirection),
            Err(err) => return End::Refuse(refusal_for(err)),
        }
    }
}

/// Writes what the session sends until a close frame or until every sender is gone.
async fn write(mut sink: SplitSink<WebSocket, Frame>, mut outbound: UnboundedReceiver<Outbound>) {
    while let Some(item) = outbound.recv().await {
        match item {
            Outbound::Text(text) => {
                if sink.send(Frame::Text(text.into())).await.is_err() {
                    return;
                }
            }
            Outbound::Ping => {
                if sink.send(Frame::Ping(Default::default())).await.is_err() {
                    return;
                }
            }
            Outbound::Close(refusal) => {
                let _ = sink.send(close_frame(&refusal)).await;
                return;
            }
        }
    }
    let _ = sink.close().await;
}
