//! Calls, as one `call` event whose `action` says what happened: the call
//! signalling a linked device sees (`offer`, `offer_notice` for a group
//! call, `preaccept`, `accept`, `reject`, `terminate`) and the outcomes the
//! crate works out for a call that rang here (`missed`, `accepted_elsewhere`,
//! `rejected_elsewhere`). The gateway cannot take part in a call, so the
//! in-call signalling (transport candidates, relay latency, video state,
//! group-call rosters and rekeys, waiting rooms, raised hands, screen
//! sharing) maps to nothing and is counted as `incoming_call`.

use serde_json::{Value, json};
use whatsapp_rust::Jid;
use whatsapp_rust::types::call::{
    CallAction, CallEndedElsewhere, ElsewhereOutcome, IncomingCall, MissedCall,
};

use super::{jid_user, other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// The phone digits behind `from`: its own user when it is a phone JID,
/// else the phone the network supplied beside an `@lid` caller.
fn from_phone(from: &Jid, caller_pn: Option<&Jid>) -> Option<String> {
    if from.is_pn() {
        return Some(jid_user(from));
    }
    caller_pn.filter(|j| j.is_pn()).map(jid_user)
}

/// The fields every `call` event has.
fn base(call_id: &str, from: &Jid, caller_pn: Option<&Jid>, action: &str, timestamp: i64) -> Value {
    json!({
        "call_id": call_id,
        "from": user_jid(from),
        "from_phone": from_phone(from, caller_pn),
        "action": action,
        "timestamp": timestamp,
    })
}

/// A `<call>` stanza: the signalling steps of a call, or nothing for
/// in-call signalling.
pub fn incoming(e: &IncomingCall) -> Option<NetworkEvent> {
    let (action, caller_pn) = match &e.action {
        CallAction::Offer { caller_pn, .. } => ("offer", caller_pn.as_ref()),
        CallAction::OfferNotice { .. } => ("offer_notice", None),
        CallAction::PreAccept { .. } => ("preaccept", None),
        CallAction::Accept { .. } => ("accept", None),
        CallAction::Reject { .. } => ("reject", None),
        CallAction::Terminate { .. } => ("terminate", None),
        _ => return None,
    };
    let mut data = base(
        e.action.call_id(),
        &e.from,
        caller_pn,
        action,
        e.timestamp.timestamp(),
    );
    data["call_creator"] = json!(user_jid(e.action.call_creator()));
    data["offline"] = json!(e.offline);
    match &e.action {
        CallAction::Offer {
            is_video,
            group_jid,
            ..
        } => {
            data["is_video"] = json!(is_video);
            data["is_group"] = json!(group_jid.is_some());
            data["group_jid"] = json!(group_jid.as_ref().map(user_jid));
        }
        CallAction::OfferNotice {
            is_video, is_group, ..
        } => {
            data["is_video"] = json!(is_video);
            data["is_group"] = json!(is_group);
        }
        CallAction::Reject { reason, .. } => data["reason"] = json!(reason),
        CallAction::Terminate {
            reason, duration, ..
        } => {
            data["reason"] = json!(reason);
            data["duration_seconds"] = json!(duration);
        }
        _ => {}
    }
    Some(other(EventName::Call, data))
}

/// A call that rang here and was not answered (`reason`: `remote` when the
/// caller gave up, `offline` for an offer replayed after a reconnect, which
/// never rings).
pub fn missed(e: &MissedCall) -> NetworkEvent {
    let mut data = base(&e.call_id, &e.from, None, "missed", e.timestamp.timestamp());
    data["reason"] = serde_json::to_value(&e.reason).unwrap_or(Value::Null);
    other(EventName::Call, data)
}

/// A call that rang here was answered or declined on another of the
/// account's devices; an outcome newer than the crate this was written
/// against maps to nothing (and is counted).
pub fn ended_elsewhere(e: &CallEndedElsewhere) -> Option<NetworkEvent> {
    let action = match e.outcome {
        ElsewhereOutcome::Accepted => "accepted_elsewhere",
        ElsewhereOutcome::Rejected => "rejected_elsewhere",
        _ => return None,
    };
    let data = base(&e.call_id, &e.from, None, action, e.timestamp.timestamp());
    Some(other(EventName::Call, data))
}
