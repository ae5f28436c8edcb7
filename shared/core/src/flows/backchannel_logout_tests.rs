//! Which clients are told and with what; the in-process queue's retries and the SQS consumer's
//! decisions, against a loopback receiver.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::clock::ManualClock;
use crate::context::Context;
use crate::domain::audit::{AuditEvent, AuditSubject};
use crate::domain::{ClientSecrets, Geolocation, NewClient, Scopes};
use crate::jwt::AccessTokenCodec;
use crate::logout_delivery::{sqs, Deliverer, InProcessLogoutQueue, LogoutQueue, RetrySchedule};
use crate::outbound::plain_http::PlainHttp;
use crate::outbound::{AllowedHosts, Fetcher};
use crate::random::{OsRandom, RandomExt};
use crate::secrets::TokenHash;
use crate::signing::KeyRing;
use crate::store::sqlite::SqliteStore;
use crate::store::AuditQuery;

const SID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// Keeps what it is handed; refuses everything when `refuse`.
#[derive(Debug, Default)]
struct Recorded {
    deliveries: Mutex<Vec<LogoutDelivery>>,
    refuse: bool,
}

#[async_trait::async_trait]
impl LogoutQueue for Recorded {
    async fn enqueue(&self, deliveries: Vec<LogoutDelivery>) -> Result<(), ServerError> {
        if self.refuse {
            return Err(ServerError::unavailable("the queue is down"));
        }
        self.deliveries.lock().unwrap().extend(deliveries);
        Ok(())
    }
}

struct Fixture {
    services: Services,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    let clock = Arc::new(ManualClock::new(1_800_000_000));
    let ctx = Context::new(Arc::new(store)).with_clock(clock.clone());
    let keys = Arc::new(KeyRing::generate(&OsRandom, clock.as_ref()));
    let codec = AccessTokenCodec::new(keys, Geolocation::parse("https://eu.example.com").unwrap());
    Fixture {
        services: Services::new(ctx, codec, Default::default()),
        _dir: dir,
    }
}

async fn client(services: &Services, uri: Option<&str>) -> ClientId {
    let client = NewClient {
        backchannel_logout_uri: uri.map(str::to_owned),
        ..NewClient::named("rp", Scopes::parse("read").unwrap())
    }
    .into_client(
        ClientId::new(OsRandom.uuid()),
        ClientSecrets::from_single_hash(TokenHash::of("secret")),
        0,
    );
    services
        .ctx
        .store
        .clients()
        .put_client(&client)
        .await
        .unwrap();
    client.id
}

async fn events(services: &Services, client: ClientId) -> Vec<AuditEvent> {
    services
        .ctx
        .store
        .audit()
        .audit_events(AuditQuery {
            subject: AuditSubject::Client(client),
            since: None,
            now: services.ctx.clock.now(),
        })
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind.name().starts_with("logout."))
        .collect()
}

#[tokio::test]
async fn each_client_with_a_logout_uri_is_told_once() {
    let fixture = fixture();
    let queue = Arc::new(Recorded::default());
    let services = fixture.services.clone().with_logout_queue(queue.clone());
    let with_uri = client(&services, Some("https://rp.example/bcl")).await;
    let without = client(&services, None).await;
    let unknown = ClientId::new(uuid::Uuid::from_u128(9));
    let principal = PrincipalId::new(uuid::Uuid::from_u128(7));
    let ended = EndedSession {
        sid: SID.into(),
        principal_id: principal,
        clients: vec![with_uri, without, unknown, with_uri],
    };
    announce_session_end(&services, &ended).await.unwrap();
    let deliveries = queue.deliveries.lock().unwrap().clone();
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    let delivery = &deliveries[0];
    assert_eq!(delivery.client_id, with_uri);
    assert_eq!(delivery.uri, "https://rp.example/bcl");
    assert_eq!(delivery.sid.as_str(), SID);
    let header = jsonwebtoken::decode_header(&delivery.logout_token).unwrap();
    assert_eq!(header.typ.as_deref(), Some("logout+jwt"));
    assert!(
        !format!("{delivery:?}").contains(&delivery.logout_token),
        "Debug hides it"
    );
}

#[tokio::test]
async fn a_queue_that_refuses_is_an_error_and_audited() {
    let fixture = fixture();
    let queue = Arc::new(Recorded {
        refuse: true,
        ..Recorded::default()
    });
    let services = fixture.services.clone().with_logout_queue(queue);
    let rp = client(&services, Some("https://rp.example/bcl")).await;
    let ended = EndedSession {
        sid: SID.into(),
        principal_id: PrincipalId::new(uuid::Uuid::from_u128(7)),
        clients: vec![rp],
    };
    assert!(announce_session_end(&services, &ended).await.is_err());
    let events = events(&services, rp).await;
    assert!(
        matches!(
            &events[..],
            [AuditEvent {
                kind: AuditKind::LogoutFailed {
                    reason: LogoutFailure::NotQueued,
                    ..
                },
                ..
            }]
        ),
        "{events:?}"
    );
    let ended = EndedSession {
        sid: "not a sid".into(),
        ..ended
    };
    assert!(announce_session_end(&services, &ended).await.is_err());
}

/// A loopback receiver answering every request with `status`; the number of requests.
async fn receiver(status: u16) -> (u16, Arc<Mutex<u32>>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(Mutex::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buffer = vec![0_u8; 8192];
            let mut request = Vec::new();
            while !String::from_utf8_lossy(&request).contains("logout_token=") {
                let n = socket.read(&mut buffer).await.unwrap();
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..n]);
            }
            *seen.lock().unwrap() += 1;
            let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n");
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    (port, count)
}

fn deliverer(services: &Services, port: u16) -> Deliverer {
    let allowed = AllowedHosts::parse(&format!("127.0.0.1:{port}")).unwrap();
    Deliverer::new(
        services.ctx.clone(),
        Fetcher::new(allowed, Arc::new(PlainHttp)),
    )
}

#[tokio::test]
async fn the_in_process_queue_retries_then_records_the_failure() {
    let fixture = fixture();
    let (port, requests) = receiver(503).await;
    let schedule = RetrySchedule::new(vec![Duration::from_millis(50); 2]);
    let queue = Arc::new(InProcessLogoutQueue::new(
        deliverer(&fixture.services, port),
        schedule,
    ));
    let services = fixture.services.clone().with_logout_queue(queue.clone());
    let rp = client(&services, Some(&format!("http://127.0.0.1:{port}/bcl"))).await;
    let ended = EndedSession {
        sid: SID.into(),
        principal_id: PrincipalId::new(uuid::Uuid::from_u128(7)),
        clients: vec![rp],
    };
    announce_session_end(&services, &ended).await.unwrap();
    queue.drain().await;
    assert_eq!(*requests.lock().unwrap(), 3);
    let events = events(&services, rp).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0].kind,
        AuditKind::LogoutFailed {
            sid: SessionId::parse(SID).unwrap(),
            attempts: 3,
            reason: LogoutFailure::Rejected,
            status: Some(503),
        }
    );
}

fn message(delivery: &LogoutDelivery, receipt: u32) -> SqsMessage {
    let mut message = SqsMessage::default();
    message.message_id = Some(format!("m{receipt}"));
    message.body = Some(serde_json::to_string(delivery).unwrap());
    message
        .attributes
        .insert("ApproximateReceiveCount".into(), receipt.to_string());
    message
}

#[tokio::test]
async fn the_sqs_consumer_asks_again_until_the_third_receipt() {
    let fixture = fixture();
    let services = &fixture.services;
    let (port, requests) = receiver(500).await;
    let rp = client(services, None).await;
    let delivery = LogoutDelivery {
        client_id: rp,
        principal_id: PrincipalId::new(uuid::Uuid::from_u128(7)),
        sid: SessionId::parse(SID).unwrap(),
        uri: format!("http://127.0.0.1:{port}/bcl"),
        logout_token: "a.b.c".into(),
    };
    let deliverer = deliverer(services, port);
    let mut event = SqsEvent::default();
    event.records = vec![message(&delivery, 1), message(&delivery, 2)];
    let response = sqs::handle_event(&deliverer, event).await;
    let failed: Vec<_> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    assert_eq!(failed, ["m1", "m2"], "offered again");
    assert!(events(services, rp).await.is_empty(), "nothing final yet");

    let mut event = SqsEvent::default();
    event.records = vec![message(&delivery, 3)];
    let response = sqs::handle_event(&deliverer, event).await;
    assert!(response.batch_item_failures.is_empty(), "done with");
    assert_eq!(*requests.lock().unwrap(), 3);
    let events = events(services, rp).await;
    assert!(
        matches!(
            &events[..],
            [AuditEvent {
                kind: AuditKind::LogoutFailed { attempts: 3, .. },
                ..
            }]
        ),
        "{events:?}"
    );

    let mut unreadable = SqsEvent::default();
    let mut garbage = SqsMessage::default();
    garbage.message_id = Some("g".into());
    garbage.body = Some("{}".into());
    unreadable.records = vec![garbage];
    let response = sqs::handle_event(&deliverer, unreadable).await;
    assert_eq!(
        response.batch_item_failures.len(),
        1,
        "left for the dead-letter queue"
    );
}

#[tokio::test]
async fn a_refused_address_is_final_at_once() {
    let fixture = fixture();
    let services = &fixture.services;
    let rp = client(services, None).await;
    let delivery = LogoutDelivery {
        client_id: rp,
        principal_id: PrincipalId::new(uuid::Uuid::from_u128(7)),
        sid: SessionId::parse(SID).unwrap(),
        uri: "https://10.0.0.1/bcl".into(),
        logout_token: "a.b.c".into(),
    };
    let deliverer = Deliverer::new(
        services.ctx.clone(),
        Fetcher::new(AllowedHosts::none(), Arc::new(PlainHttp)),
    );
    let mut event = SqsEvent::default();
    event.records = vec![message(&delivery, 1)];
    let response = sqs::handle_event(&deliverer, event).await;
    assert!(response.batch_item_failures.is_empty());
    let events = events(services, rp).await;
    assert!(
        matches!(
            &events[..],
            [AuditEvent {
                kind: AuditKind::LogoutFailed {
                    attempts: 1,
                    reason: LogoutFailure::AddressRefused,
                    ..
                },
                ..
            }]
        ),
        "{events:?}"
    );
}
