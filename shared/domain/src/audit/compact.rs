//! `family.refreshed` in a compact binary form, for a store whose keys already carry the event's
//! time, id and family (docs/decisions.md, Audit events, "Compact refreshes"): one per refresh
//! and kept 400 days, it is most of the audit trail's storage, and its JSON spends most of its
//! bytes on field names and on what those keys repeat.
//!
//! What the form keeps is what nothing else can give back for the whole retention: the
//! generation, the client and the principal (a family's `family.started` may expire before its
//! refreshes), and the request's facts. Layout, version 1:
//!
//! | bytes | what |
//! |---|---|
//! | 1 | the version, 1 |
//! | 1 to 5 | the generation, LEB128 |
//! | 1 | which fields follow (`HAS_*`) |
//! | 16 | `client_id`, when present |
//! | 1 | `principal_type` (0 user, 1 company, 2 application), when present |
//! | 16 | `principal_id`, when present |
//! | 4 or 16 | `source_address`, IPv4 or IPv6, when present |
//! | LEB128 length, then the text | `user_agent`, when present |
//! | 16, or LEB128 length then the text | `correlation_id`: a lower-case hyphenated UUID (what the service generates) as its bytes, any other as text |
//!
//! Reading refuses anything else (another version, a field cut short, bytes left over, a value
//! the event's own types refuse), so that a damaged item reads as an error, never as a wrong
//! event.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use uuid::Uuid;

use super::{AuditEvent, AuditId, AuditKind, CorrelationId, RequestFacts, UserAgent};
use crate::clock::UnixTime;
use crate::{ClientId, FamilyId, PrincipalId, PrincipalType};

const VERSION: u8 = 1;
const HAS_CLIENT: u8 = 1;
const HAS_PRINCIPAL_TYPE: u8 = 1 << 1;
const HAS_PRINCIPAL: u8 = 1 << 2;
const HAS_IPV4: u8 = 1 << 3;
const HAS_IPV6: u8 = 1 << 4;
const HAS_USER_AGENT: u8 = 1 << 5;
const HAS_CORRELATION_UUID: u8 = 1 << 6;
const HAS_CORRELATION_TEXT: u8 = 1 << 7;

impl AuditEvent {
    /// This event in the compact form, if it is a `family.refreshed` about a family, at a time a
    /// sort key holds as is (not before 1970): otherwise `None`, and the store keeps it whole.
    pub fn to_compact_refresh(&self) -> Option<Vec<u8>> {
        let AuditKind::FamilyRefreshed { generation } = self.kind else {
            return None;
        };
        if self.family_id.is_none() || self.time < 0 {
            return None;
        }
        let mut out = Vec::with_capacity(64);
        out.push(VERSION);
        push_length(&mut out, generation as usize);
        let flags_at = out.len();
        out.push(0);
        let mut flags = 0;
        if let Some(client) = self.client_id {
            flags |= HAS_CLIENT;
            out.extend_from_slice(client.as_uuid().as_bytes());
        }
        if let Some(kind) = self.principal_type {
            flags |= HAS_PRINCIPAL_TYPE;
            out.push(match kind {
                PrincipalType::User => 0,
                PrincipalType::Company => 1,
                PrincipalType::Application => 2,
            });
        }
        if let Some(principal) = self.principal_id {
            flags |= HAS_PRINCIPAL;
            out.extend_from_slice(principal.as_uuid().as_bytes());
        }
        match self.request.source_address {
            Some(IpAddr::V4(address)) => {
                flags |= HAS_IPV4;
                out.extend_from_slice(&address.octets());
            }
            Some(IpAddr::V6(address)) => {
                flags |= HAS_IPV6;
                out.extend_from_slice(&address.octets());
            }
            None => {}
        }
        if let Some(agent) = &self.request.user_agent {
            flags |= HAS_USER_AGENT;
            push_text(&mut out, agent.as_str());
        }
        if let Some(correlation) = &self.request.correlation_id {
            match canonical_uuid(correlation.as_str()) {
                Some(uuid) => {
                    flags |= HAS_CORRELATION_UUID;
                    out.extend_from_slice(uuid.as_bytes());
                }
                None => {
                    flags |= HAS_CORRELATION_TEXT;
                    push_text(&mut out, correlation.as_str());
                }
            }
        }
        out[flags_at] = flags;
        Some(out)
    }

    /// The event [`to_compact_refresh`](Self::to_compact_refresh) made `bytes` of, with what
    /// the store's keys carry: its time, id and family. `None` if `bytes` are not that form.
    pub fn from_compact_refresh(
        time: UnixTime,
        id: AuditId,
        family_id: FamilyId,
        bytes: &[u8],
    ) -> Option<Self> {
        let mut input = Reader(bytes);
        if input.byte()? != VERSION {
            return None;
        }
        let generation = u32::try_from(input.length()?).ok()?;
        let flags = input.byte()?;
        let has = |flag: u8| flags & flag != 0;
        let client_id = if has(HAS_CLIENT) {
            Some(ClientId::new(input.uuid()?))
        } else {
            None
        };
        let principal_type = if has(HAS_PRINCIPAL_TYPE) {
            Some(match input.byte()? {
                0 => PrincipalType::User,
                1 => PrincipalType::Company,
                2 => PrincipalType::Application,
                _ => return None,
            })
        } else {
            None
        };
        let principal_id = if has(HAS_PRINCIPAL) {
            Some(PrincipalId::new(input.uuid()?))
        } else {
            None
        };
        let source_address = match (has(HAS_IPV4), has(HAS_IPV6)) {
            (false, false) => None,
            (true, false) => Some(IpAddr::V4(Ipv4Addr::from(input.array::<4>()?))),
            (false, true) => Some(IpAddr::V6(Ipv6Addr::from(input.array::<16>()?))),
            (true, true) => return None,
        };
        let user_agent = if has(HAS_USER_AGENT) {
            let text = input.text()?;
            // The text must be what the type keeps as is, or the event would not read back.
            Some(UserAgent::from_header(text.as_bytes()).filter(|a| a.as_str() == text)?)
        } else {
            None
        };
        let correlation_id = match (has(HAS_CORRELATION_UUID), has(HAS_CORRELATION_TEXT)) {
            (false, false) => None,
            (true, false) => CorrelationId::parse(&input.uuid()?.hyphenated().to_string()),
            (false, true) => Some(CorrelationId::parse(input.text()?)?),
            (true, true) => return None,
        };
        if !input.0.is_empty() {
            return None;
        }
        Some(Self {
            time,
            kind: AuditKind::FamilyRefreshed { generation },
            client_id,
            principal_type,
            principal_id,
            family_id: Some(family_id),
            request: RequestFacts {
                source_address,
                user_agent,
                correlation_id,
            },
            id,
        })
    }
}

/// `text` as a UUID if it is one spelt exactly as the UUID's canonical form, so that its 16
/// bytes give the same text back.
fn canonical_uuid(text: &str) -> Option<Uuid> {
    Uuid::try_parse(text)
        .ok()
        .filter(|uuid| uuid.hyphenated().to_string() == text)
}

fn push_length(out: &mut Vec<u8>, mut value: usize) {
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn push_text(out: &mut Vec<u8>, text: &str) {
    push_length(out, text.len());
    out.extend_from_slice(text.as_bytes());
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Option<&'a [u8]> {
        if self.0.len() < count {
            return None;
        }
        let (taken, rest) = self.0.split_at(count);
        self.0 = rest;
        Some(taken)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn uuid(&mut self) -> Option<Uuid> {
        self.array::<16>().map(Uuid::from_bytes)
    }

    /// A LEB128 length of at most 5 bytes (a `u32`'s).
    fn length(&mut self) -> Option<usize> {
        let mut value = 0usize;
        for shift in (0..35).step_by(7) {
            let byte = self.byte()?;
            value |= usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn text(&mut self) -> Option<&'a str> {
        let length = self.length()?;
        std::str::from_utf8(self.take(length)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refreshed(request: RequestFacts) -> AuditEvent {
        AuditEvent::new(
            AuditId::of_rotation(&family(), 7, 1_795_000_000),
            1_795_000_000,
            AuditKind::FamilyRefreshed { generation: 7 },
            request,
        )
        .client(ClientId::new(Uuid::from_u128(1)))
        .principal(PrincipalType::Company, PrincipalId::new(Uuid::from_u128(2)))
        .family(family())
    }

    fn family() -> FamilyId {
        FamilyId::new(Uuid::from_u128(3))
    }

    fn read_back(event: &AuditEvent) -> Option<AuditEvent> {
        let bytes = event
            .to_compact_refresh()
            .expect("a refresh about a family");
        AuditEvent::from_compact_refresh(event.time, event.id, family(), &bytes)
    }

    #[test]
    fn reads_back_the_same_event_and_json() {
        let generated = Uuid::from_u128(0xfeed).hyphenated().to_string();
        let cases = [
            RequestFacts::default(),
            RequestFacts {
                source_address: Some(IpAddr::from([192, 0, 2, 1])),
                user_agent: UserAgent::from_header(b"curl/8.5.0"),
                correlation_id: CorrelationId::parse(&generated),
            },
            RequestFacts {
                source_address: Some("2001:db8::1".parse().unwrap()),
                user_agent: UserAgent::from_header(&[b'x'; 1000]),
                // Upper case is a UUID too, but only its own spelling reads back.
                correlation_id: CorrelationId::parse(&generated.to_uppercase()),
            },
            RequestFacts {
                correlation_id: CorrelationId::parse("abc-123"),
                ..RequestFacts::default()
            },
        ];
        for request in cases {
            let event = refreshed(request);
            let back = read_back(&event);
            assert_eq!(back.as_ref(), Some(&event));
            assert_eq!(back.unwrap().to_json(), event.to_json());
        }
        let mut bare = refreshed(RequestFacts::default());
        bare.client_id = None;
        bare.principal_type = None;
        bare.principal_id = None;
        bare.kind = AuditKind::FamilyRefreshed {
            generation: u32::MAX,
        };
        assert_eq!(read_back(&bare), Some(bare));
    }

    #[test]
    fn is_a_fraction_of_the_json() {
        let event = refreshed(RequestFacts {
            source_address: Some(IpAddr::from([192, 0, 2, 1])),
            user_agent: None,
            correlation_id: CorrelationId::parse(&Uuid::from_u128(9).to_string()),
        });
        let bytes = event.to_compact_refresh().unwrap();
        // Version, generation, flags, two UUIDs and the type, an IPv4 address, a UUID.
        assert_eq!(bytes.len(), 3 + 33 + 4 + 16);
        assert!(event.to_json().len() > 5 * bytes.len());
    }

    #[test]
    fn only_a_refresh_about_a_family_is_made_compact() {
        let mut revoked = refreshed(RequestFacts::default());
        revoked.kind = AuditKind::RefreshReuseDetected;
        assert_eq!(revoked.to_compact_refresh(), None);
        let mut without_family = refreshed(RequestFacts::default());
        without_family.family_id = None;
        assert_eq!(without_family.to_compact_refresh(), None);
        let mut before_1970 = refreshed(RequestFacts::default());
        before_1970.time = -1;
        assert_eq!(before_1970.to_compact_refresh(), None);
    }

    #[test]
    fn anything_but_the_form_is_refused() {
        let event = refreshed(RequestFacts {
            user_agent: UserAgent::from_header(b"agent"),
            correlation_id: CorrelationId::parse("abc"),
            ..RequestFacts::default()
        });
        let bytes = event.to_compact_refresh().unwrap();
        let read =
            |bytes: &[u8]| AuditEvent::from_compact_refresh(event.time, event.id, family(), bytes);
        assert!(read(&bytes).is_some());
        for cut in 0..bytes.len() {
            assert_eq!(read(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(read(&longer), None, "bytes left over");
        let mut other_version = bytes.clone();
        other_version[0] = 2;
        assert_eq!(read(&other_version), None);
        let mut both_addresses = bytes.clone();
        both_addresses[2] |= HAS_IPV4 | HAS_IPV6;
        assert_eq!(read(&both_addresses), None);
        // A correlation id with a space: not one the type accepts.
        let mut spaced = bytes;
        let at = spaced.len() - 2;
        spaced[at] = b' ';
        assert_eq!(read(&spaced), None);
    }
}
