//! What the wire server knows: accounts (a mock phone each, with its linked
//! devices), the devices' published Signal keys, the stanzas each device is
//! still owed, the live connections, and groups.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::wacore_binary::node::Node;

use crate::conn::Sender;

/// The server the JIDs of people live on.
pub const PN_SERVER: &str = "s.whatsapp.net";

/// One WhatsApp account: its phone (device 0, played by the server) and
/// the companions linked to it.
pub struct Account {
    /// The phone number (a JID's user part).
    pub phone: String,
    /// The account's hidden-number id (a `@lid` JID's user part).
    pub lid: String,
    /// The phone's identity key: it signs each companion's device identity.
    /// Device lists never name the phone itself, so nothing is encrypted
    /// to it.
    pub identity: KeyPair,
    /// Linked devices by device number (1 and up).
    pub devices: BTreeMap<u16, Device>,
    /// The number the next linked device gets.
    pub next_device: u16,
    /// The name the account shows.
    pub push_name: String,
    /// Whether the account is online (its last presence), and since when
    /// it was last seen.
    pub available: bool,
    /// Who asked to see this account's presence (phone numbers).
    pub watchers: std::collections::BTreeSet<String>,
    /// The accounts this one blocked (their `@lid` JIDs, as WhatsApp keys
    /// blocks) and when.
    pub blocked: BTreeMap<String, u64>,
}

/// A device's published Signal keys.
#[derive(Clone)]
pub struct Keys {
    /// Its registration id.
    pub registration_id: u32,
    /// Its identity public key (32 bytes).
    pub identity: [u8; 32],
    /// Its signed prekey: id, public key, signature.
    pub signed: (u32, [u8; 32], Vec<u8>),
    /// One-time prekeys not handed out yet.
    pub one_time: VecDeque<(u32, [u8; 32])>,
}

/// One linked companion device.
pub struct Device {
    /// Its device number.
    pub id: u16,
    /// Its Noise static key (how a login is recognised).
    pub noise: [u8; 32],
    /// Its published keys.
    pub keys: Keys,
    /// Stanzas sent to it that it has not acknowledged, oldest first:
    /// resent (marked offline) at each login until it does.
    pub owed: VecDeque<Owed>,
    /// The live connection, if any.
    pub conn: Option<Sender>,
    /// Unlinked: a login is answered with failure 401.
    pub removed: bool,
}

/// A stanza a device has not acknowledged yet.
#[derive(Clone)]
pub struct Owed {
    /// What acknowledges it: a `receipt` (for a message) or an `ack` of
    /// this class (for anything else).
    pub class: String,
    /// The stanza's id.
    pub id: String,
    /// The stanza.
    pub node: Node,
}

/// A group.
pub struct Group {
    /// Its id (the user part of `<id>@g.us`).
    pub id: String,
    /// Its subject.
    pub subject: String,
    /// When the subject was set, and by whom.
    pub subject_time: u64,
    /// Who created it (a phone number).
    pub creator: String,
    /// When it was created.
    pub created: u64,
    /// Members (phone numbers) and whether each is an admin.
    pub members: BTreeMap<String, bool>,
    /// Its description, if any.
    pub description: Option<String>,
}

/// Everything, behind one lock.
#[derive(Default)]
pub struct World {
    /// Accounts by phone number.
    pub accounts: BTreeMap<String, Account>,
    /// Phone numbers by LID.
    pub lids: HashMap<String, String>,
    /// Groups by id.
    pub groups: BTreeMap<String, Group>,
    /// Uploaded media (encrypted bytes) by path.
    pub media: HashMap<String, Vec<u8>>,
    /// Counter for ids the server makes.
    pub next_id: u64,
    /// Pairs of phone numbers that exchanged a one-to-one message (both
    /// orders): a reach-out timelock does not stop messages between them.
    pub talked: HashSet<(String, String)>,
}

impl Account {
    /// The numbers of its linked devices that are not unlinked.
    pub fn live_devices(&self) -> Vec<u16> {
        self.devices
            .values()
            .filter(|d| !d.removed)
            .map(|d| d.id)
            .collect()
    }
}

impl World {
    /// Records that `a` and `b` exchanged a message.
    pub fn talk(&mut self, a: &str, b: &str) {
        self.talked.insert((a.to_owned(), b.to_owned()));
        self.talked.insert((b.to_owned(), a.to_owned()));
    }

    /// Whether a message from `phone` to `to` (a user or `@lid` JID) would
    /// be its first contact with that person: never to a group, never to
    /// someone it exchanged a message with.
    pub fn first_contact(&self, phone: &str, to: &str) -> bool {
        let (user, _, server) = crate::keys::split_jid(to);
        if server == "g.us" || server == "broadcast" || server == "newsletter" {
            return false;
        }
        let other = self
            .account_of(&user)
            .map(|a| a.phone.clone())
            .unwrap_or(user);
        !self.talked.contains(&(phone.to_owned(), other))
    }

    /// The live devices of the account `phone` (none for an unknown one).
    pub fn live_devices(&self, phone: &str) -> Vec<u16> {
        self.accounts
            .get(phone)
            .map(Account::live_devices)
            .unwrap_or_default()
    }

    /// A fresh id for a stanza the server makes.
    pub fn id(&mut self) -> String {
        self.next_id += 1;
        format!("wire-{}", self.next_id)
    }

    /// The account a user part names, whether a phone number or a LID.
    pub fn account_of(&self, user: &str) -> Option<&Account> {
        self.accounts
            .get(user)
            .or_else(|| self.lids.get(user).and_then(|p| self.accounts.get(p)))
    }

    /// The account a user part names, mutably.
    pub fn account_mut(&mut self, user: &str) -> Option<&mut Account> {
        let phone = if self.accounts.contains_key(user) {
            user.to_owned()
        } else {
            self.lids.get(user)?.clone()
        };
        self.accounts.get_mut(&phone)
    }

    /// Queues `node` for a device and sends it at once if the device is
    /// connected; it stays owed until acknowledged.
    pub fn deliver(&mut self, phone: &str, device: u16, class: &str, id: &str, node: Node) {
        let Some(dev) = self
            .accounts
            .get_mut(phone)
            .and_then(|a| a.devices.get_mut(&device))
        else {
            return;
        };
        if dev.removed {
            return;
        }
        dev.owed.push_back(Owed {
            class: class.to_owned(),
            id: id.to_owned(),
            node: node.clone(),
        });
        if let Some(conn) = &dev.conn
            && !conn.send(node)
        {
            dev.conn = None;
        }
    }

    /// Sends `node` to every connected device of `phone` now, owing
    /// nothing (presence, chat states: a missed one is simply stale).
    pub fn tell(&mut self, phone: &str, node: Node) {
        let Some(account) = self.accounts.get(phone) else {
            return;
        };
        for dev in account.devices.values() {
            if let Some(conn) = &dev.conn
                && !dev.removed
            {
                conn.send(node.clone());
            }
        }
    }

    /// Drops what a device acknowledged.
    pub fn acknowledged(&mut self, phone: &str, device: u16, class: &str, id: &str) -> bool {
        let Some(dev) = self
            .accounts
            .get_mut(phone)
            .and_then(|a| a.devices.get_mut(&device))
        else {
            return false;
        };
        let before = dev.owed.len();
        dev.owed.retain(|o| !(o.id == id && o.class == class));
        dev.owed.len() != before
    }
}
