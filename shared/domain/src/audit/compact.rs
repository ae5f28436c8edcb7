//! `family.refreshed` in a compact binary form, for a store whose keys already carry the event's
//! time, id and family (docs/decisions.md, Audit events, "Compact refreshes"): one per refresh
//! and kept 400 days, it is most of the audit trail's storage, and its JSON spends most of its
//! bytes on field names and on what those keys repeat.
//!
//! What the form keeps is what nothing else can give back for the whole retention: the
//! generation, the client and the principal (a family's `family.started` may expire before its
//! refreshes), and the request's facts. The form is a version byte, 1 (so that another form can
//! be told from this one), then the postcard encoding (`postcard`'s documented wire format: varint
//! integers and lengths, a byte for an `Option`'s `None` or `Some` and a varint for an enum's
//! variant, no field names) of the private `Refresh` below, field by field:
//!
//! | bytes | what |
//! |---|---|
//! | 1 | the version, 1 |
//! | 1 to 5 | `generation`, a varint |
//! | 1, then 16 | `client_id`: 0 for none, or 1 and the UUID's bytes |
//! | 1, then 1 | `principal_type`: 0, or 1 and the variant (0 user, 1 company, 2 application) |
//! | 1, then 16 | `principal_id`, as `client_id` |
//! | 1, then 1 and 4 or 16 | `source_address`: 0, or 1, the variant (0 IPv4, 1 IPv6) and the address's bytes (serde's `IpAddr` in a binary format) |
//! | 1, then a varint length and the text | `user_agent`: 0, or 1 and the text |
//! | 1, then 1 and 16, or 1, a varint length and the text | `correlation_id`: 0, or 1 and either variant 0 with the bytes of a lower-case hyphenated UUID (what the service generates) or variant 1 with any other text |
//!
//! Reading refuses anything else (another version, a field cut short, bytes left over, a value
//! the event's own types refuse), so that a damaged item reads as an error, never as a wrong
//! event. Version 1 was never deployed in the hand-written layout that preceded this one, so
//! nothing stored in that layout needs reading.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{AuditEvent, AuditId, AuditKind, CorrelationId, RequestFacts, UserAgent};
use crate::clock::UnixTime;
use crate::{ClientId, FamilyId, PrincipalId, PrincipalType};

const VERSION: u8 = 1;

/// What the form stores after its version byte. The fields' order and types are the stored
/// layout (postcard writes no names): change them only with a new version. UUIDs are byte
/// arrays rather than `Uuid`s because serde's arrays are written bare, where `Uuid` in a binary
/// format is a length-prefixed byte string. `principal_type` is written as its variant's
/// position, so `PrincipalType`'s variants keep their order (a test pins it).
#[derive(Debug, Serialize, Deserialize)]
struct Refresh<'a> {
    generation: u32,
    client_id: Option<[u8; 16]>,
    principal_type: Option<PrincipalType>,
    principal_id: Option<[u8; 16]>,
    source_address: Option<IpAddr>,
    #[serde(borrow)]
    user_agent: Option<&'a str>,
    #[serde(borrow)]
    correlation_id: Option<Correlation<'a>>,
}

/// A correlation id the service generated (a UUID) in 16 bytes instead of 36, any other as sent.
#[derive(Debug, Serialize, Deserialize)]
enum Correlation<'a> {
    Uuid([u8; 16]),
    Text(&'a str),
}

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
        let refresh = Refresh {
            generation,
            client_id: self.client_id.map(|client| client.as_uuid().into_bytes()),
            principal_type: self.principal_type,
            principal_id: self.principal_id.map(|id| id.as_uuid().into_bytes()),
            source_address: self.request.source_address,
            user_agent: self.request.user_agent.as_ref().map(UserAgent::as_str),
            correlation_id: self.request.correlation_id.as_ref().map(|correlation| {
                match canonical_uuid(correlation.as_str()) {
                    Some(uuid) => Correlation::Uuid(uuid.into_bytes()),
                    None => Correlation::Text(correlation.as_str()),
                }
            }),
        };
        // The version first, in the same buffer: postcard writes the body after what it is given.
        // Writing into a `Vec` does not fail; were it to, the store would keep the event whole.
        postcard::to_extend(&refresh, vec![VERSION]).ok()
    }

    /// The event [`to_compact_refresh`](Self::to_compact_refresh) made `bytes` of, with what
    /// the store's keys carry: its time, id and family. `None` if `bytes` are not that form.
    pub fn from_compact_refresh(
        time: UnixTime,
        id: AuditId,
        family_id: FamilyId,
        bytes: &[u8],
    ) -> Option<Self> {
        let (&VERSION, body) = bytes.split_first()? else {
            return None;
        };
        // `take_from_bytes`, not `from_bytes`: the latter ignores bytes left over.
        let (refresh, rest) = postcard::take_from_bytes::<Refresh>(body).ok()?;
        if !rest.is_empty() {
            return None;
        }
        let user_agent = match refresh.user_agent {
            // The text must be what the type keeps as is, or the event would not read back.
            Some(text) => {
                Some(UserAgent::from_header(text.as_bytes()).filter(|a| a.as_str() == text)?)
            }
            None => None,
        };
        let correlation_id = match refresh.correlation_id {
            Some(Correlation::Uuid(bytes)) => Some(CorrelationId::parse(
                &Uuid::from_bytes(bytes).hyphenated().to_string(),
            )?),
            Some(Correlation::Text(text)) => Some(CorrelationId::parse(text)?),
            None => None,
        };
        Some(Self {
            time,
            kind: AuditKind::FamilyRefreshed {
                generation: refresh.generation,
            },
            client_id: refresh
                .client_id
                .map(|b| ClientId::new(Uuid::from_bytes(b))),
            principal_type: refresh.principal_type,
            principal_id: refresh
                .principal_id
                .map(|b| PrincipalId::new(Uuid::from_bytes(b))),
            family_id: Some(family_id),
            request: RequestFacts {
                source_address: refresh.source_address,
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
        // Version and generation; then per field its `Option` byte: two UUIDs and the type, an
        // IPv4 address and its variant, no user agent, a UUID and its variant.
        assert_eq!(bytes.len(), 2 + 36 + 6 + 1 + 18);
        assert!(event.to_json().len() > 5 * bytes.len());
    }

    /// The stored layout, byte for byte: a change of postcard's format, of serde's for `IpAddr`
    /// or of the order of `PrincipalType`'s variants must fail here, not in a store.
    #[test]
    fn is_the_documented_layout() {
        let mut event = refreshed(RequestFacts {
            source_address: Some(IpAddr::from([192, 0, 2, 1])),
            user_agent: UserAgent::from_header(b"ua"),
            correlation_id: CorrelationId::parse(&Uuid::from_u128(9).to_string()),
        });
        event.kind = AuditKind::FamilyRefreshed { generation: 300 };
        let uuid = |n: u8| {
            let mut bytes = [0; 16];
            bytes[15] = n;
            bytes
        };
        let mut expected = vec![1, 0xac, 0x02, 1];
        expected.extend(uuid(1));
        expected.extend([1, 1, 1]);
        expected.extend(uuid(2));
        expected.extend([1, 0, 192, 0, 2, 1, 1, 2, b'u', b'a', 1, 0]);
        expected.extend(uuid(9));
        assert_eq!(event.to_compact_refresh().unwrap(), expected);

        let kinds = [
            PrincipalType::User,
            PrincipalType::Company,
            PrincipalType::Application,
        ];
        for (index, kind) in kinds.into_iter().enumerate() {
            event.principal_type = Some(kind);
            assert_eq!(event.to_compact_refresh().unwrap()[21], index as u8);
        }

        event.request = RequestFacts {
            source_address: Some("2001:db8::1".parse().unwrap()),
            user_agent: None,
            correlation_id: CorrelationId::parse("c-1"),
        };
        let bytes = event.to_compact_refresh().unwrap();
        let mut tail = vec![1, 1, 0x20, 0x01, 0x0d, 0xb8];
        tail.extend([0; 11]);
        tail.extend([1, 0, 1, 1, 3, b'c', b'-', b'1']);
        assert_eq!(bytes[bytes.len() - tail.len()..], tail);
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
        // The client id's `Option` byte: neither none nor some.
        let mut neither = bytes.clone();
        neither[2] = 2;
        assert_eq!(read(&neither), None);
        // The principal type: a fourth variant.
        let mut fourth_type = bytes.clone();
        fourth_type[20] = 3;
        assert_eq!(read(&fourth_type), None);
        // A user agent the type would not keep as is (it trims).
        let mut padded = bytes.clone();
        let at = padded.len() - 11;
        assert_eq!(&padded[at..at + 5], b"agent");
        padded[at] = b' ';
        assert_eq!(read(&padded), None);
        // Text that is not UTF-8.
        let mut not_utf8 = bytes.clone();
        not_utf8[at] = 0xff;
        assert_eq!(read(&not_utf8), None);
        // A correlation id with a space: not one the type accepts.
        let mut spaced = bytes;
        let at = spaced.len() - 2;
        spaced[at] = b' ';
        assert_eq!(read(&spaced), None);
    }
}
