//! Failures a test asks the server to inject: refused logins, refused
//! sends, slow acknowledgements, reach-out timelocks, refused app-state
//! fetches. Stream errors and dropped connections act
//! at once and live on [`crate::WireServer`].

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::Node;

/// A `<failure>` the server answers a login with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginFailure {
    /// The reason code (401 logged out, 402 temporary ban, 403 locked, 405
    /// client outdated, 409, 503 service unavailable…).
    pub reason: u16,
    /// Further attributes (`expire` of a ban in seconds, `code`…).
    pub attrs: Vec<(String, String)>,
}

impl LoginFailure {
    /// A failure with only a reason.
    pub fn reason(reason: u16) -> Self {
        Self {
            reason,
            attrs: Vec::new(),
        }
    }

    /// Adds an attribute.
    pub fn with(mut self, key: &str, value: impl ToString) -> Self {
        self.attrs.push((key.to_owned(), value.to_string()));
        self
    }

    /// The stanza.
    pub fn node(&self) -> Node {
        let mut node = NodeBuilder::new("failure")
            .attr("reason", self.reason.to_string())
            .build();
        for (k, v) in &self.attrs {
            node.attrs.insert(k.clone(), v.clone());
        }
        node
    }
}

/// What is scripted, per phone number.
#[derive(Default)]
pub struct Script {
    /// Logins refused once each, in order.
    once: HashMap<String, VecDeque<LoginFailure>>,
    /// A refusal of every login until cleared.
    always: HashMap<String, LoginFailure>,
    /// Sends refused once each with these error codes, in order.
    refusals: HashMap<String, VecDeque<u16>>,
    /// How long the server waits before it acknowledges a send.
    ack_delay: HashMap<String, Duration>,
    /// The pause between two stanzas of an offline drain.
    offline_pace: HashMap<String, Duration>,
    /// Reach-out timelocks: until when (Unix seconds), and whether the
    /// account's timelock query says so (else it answers without an end).
    timelocks: HashMap<String, (u64, bool)>,
    /// Accounts whose devices' requests to be unlinked are refused.
    refuse_unlink: std::collections::HashSet<String>,
    /// Accounts whose app-state fetches are answered with this IQ error.
    app_state_errors: HashMap<String, u16>,
}

impl Script {
    /// The failure the next login of `phone` gets, if any.
    pub fn login_failure(&mut self, phone: &str) -> Option<LoginFailure> {
        if let Some(f) = self.once.get_mut(phone).and_then(VecDeque::pop_front) {
            return Some(f);
        }
        self.always.get(phone).cloned()
    }

    /// Refuses the next login of `phone` with `failure`.
    pub fn refuse_login_once(&mut self, phone: &str, failure: LoginFailure) {
        self.once
            .entry(phone.to_owned())
            .or_default()
            .push_back(failure);
    }

    /// Refuses every login of `phone` with `failure` (`None`: stops).
    pub fn refuse_logins(&mut self, phone: &str, failure: Option<LoginFailure>) {
        match failure {
            Some(f) => self.always.insert(phone.to_owned(), f),
            None => self.always.remove(phone),
        };
    }

    /// Refuses the next send of `phone` with `code`.
    pub fn refuse_send(&mut self, phone: &str, code: u16) {
        self.refusals
            .entry(phone.to_owned())
            .or_default()
            .push_back(code);
    }

    /// The error the next send of `phone` gets, if any.
    pub fn send_refusal(&mut self, phone: &str) -> Option<u16> {
        self.refusals.get_mut(phone).and_then(VecDeque::pop_front)
    }

    /// Delays every acknowledgement of `phone`'s sends.
    pub fn delay_acks(&mut self, phone: &str, delay: Duration) {
        self.ack_delay.insert(phone.to_owned(), delay);
    }

    /// Paces the offline drain of `phone`'s devices: `pace` between two
    /// stanzas (a drain a test can interrupt).
    pub fn pace_offline(&mut self, phone: &str, pace: Duration) {
        self.offline_pace.insert(phone.to_owned(), pace);
    }

    /// The pause between two stanzas of `phone`'s offline drain.
    pub fn offline_pace(&self, phone: &str) -> Duration {
        self.offline_pace.get(phone).copied().unwrap_or_default()
    }

    /// Puts a reach-out timelock on `phone` until `until` (`None` lifts it).
    pub fn set_timelock(&mut self, phone: &str, until: Option<(u64, bool)>) {
        match until {
            Some(lock) => self.timelocks.insert(phone.to_owned(), lock),
            None => self.timelocks.remove(phone),
        };
    }

    /// `phone`'s reach-out timelock while it holds: its end, and whether
    /// the server states it.
    pub fn timelock(&self, phone: &str) -> Option<(u64, bool)> {
        self.timelocks
            .get(phone)
            .copied()
            .filter(|(until, _)| *until > crate::now())
    }

    /// Refuses (or, with `false`, accepts again) the unlink requests of
    /// `phone`'s devices.
    pub fn set_refuse_unlink(&mut self, phone: &str, refuse: bool) {
        if refuse {
            self.refuse_unlink.insert(phone.to_owned());
        } else {
            self.refuse_unlink.remove(phone);
        }
    }

    /// Whether `phone`'s devices' unlink requests are refused.
    pub fn refuses_unlink(&self, phone: &str) -> bool {
        self.refuse_unlink.contains(phone)
    }

    /// Answers `phone`'s app-state fetches with IQ error `code` (`None`:
    /// answers them again).
    pub fn set_app_state_error(&mut self, phone: &str, code: Option<u16>) {
        match code {
            Some(c) => self.app_state_errors.insert(phone.to_owned(), c),
            None => self.app_state_errors.remove(phone),
        };
    }

    /// The IQ error `phone`'s app-state fetches get, if any.
    pub fn app_state_error(&self, phone: &str) -> Option<u16> {
        self.app_state_errors.get(phone).copied()
    }

    /// The delay before `phone`'s sends are acknowledged.
    pub fn ack_delay(&self, phone: &str) -> Duration {
        self.ack_delay.get(phone).copied().unwrap_or_default()
    }
}
