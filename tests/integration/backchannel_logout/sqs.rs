//! The Lambda path against a real SQS emulator (moto's server, the one `infra/kms-local.sh`
//! starts for KMS: `KMS_ENDPOINT` serves SQS too): the token function's queue sends one message
//! per delivery; the message, received with the SDK, is what the `logout-delivery` handler
//! gets; a failure is handed back until the third receipt, which records `logout.failed`.

use std::time::Duration;

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use aws_sdk_sqs::config::timeout::TimeoutConfig;
use aws_sdk_sqs::types::MessageSystemAttributeName;
use reqwest::StatusCode;
use token_adapters::outbound::fetcher;
use token_adapters::sqs::{self as sqs_queue, SqsLogoutQueue};
use token_core::flows::backchannel_logout::announce_session_end;
use token_core::logout_delivery::{sqs, Deliverer};
use token_core::outbound::AllowedHosts;
use token_domain::audit::{AuditEvent, AuditKind, LogoutFailure};
use token_domain::PrincipalId;

use super::{ended, logout_events, relying_party};
use crate::support::app::{Backend, TestApp};
use crate::support::logout_receiver::LogoutReceiver;

fn sqs_endpoint() -> String {
    std::env::var("KMS_ENDPOINT")
        .ok()
        .filter(|v| !v.is_empty())
        .expect(
            "KMS_ENDPOINT: moto's server, which serves SQS too: \
         `export KMS_ENDPOINT=$(infra/kms-local.sh start)` (infra/test.sh does)",
        )
}

/// A fresh queue on the emulator: its client and URL. The client is the service's, with longer
/// timeouts: moto loads its SQS backend at the first request, which takes seconds on a busy
/// machine (the service's own 3 s are for the user's answer, not for an emulator's start).
async fn queue() -> (aws_sdk_sqs::Client, String) {
    let client = sqs_queue::client(Some(&sqs_endpoint())).await;
    let patient = TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(5))
        .operation_timeout(Duration::from_secs(30))
        .build();
    let client = aws_sdk_sqs::Client::from_conf(
        client.config().to_builder().timeout_config(patient).build(),
    );
    let name = format!("logout-{}", uuid::Uuid::new_v4());
    let created = client
        .create_queue()
        .queue_name(name)
        .send()
        .await
        .expect("create a queue on the local SQS");
    (client, created.queue_url().unwrap().to_owned())
}

/// The queue's next message as the Lambda event source hands it over.
async fn receive(client: &aws_sdk_sqs::Client, url: &str) -> SqsEvent {
    let received = client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(10)
        .wait_time_seconds(2)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap();
    let mut event = SqsEvent::default();
    for message in received.messages() {
        let mut record = SqsMessage::default();
        record.message_id = message.message_id().map(str::to_owned);
        record.receipt_handle = message.receipt_handle().map(str::to_owned);
        record.body = message.body().map(str::to_owned);
        for (name, value) in message.attributes().into_iter().flatten() {
            record
                .attributes
                .insert(name.as_str().to_owned(), value.clone());
        }
        event.records.push(record);
    }
    event
}

/// What the event source does with the handler's answer: delete the messages that succeeded,
/// offer the failed ones again (at once here, instead of after the visibility timeout).
async fn settle(client: &aws_sdk_sqs::Client, url: &str, event: &SqsEvent, failed: &[String]) {
    for record in &event.records {
        let handle = record.receipt_handle.clone().unwrap();
        if failed.contains(record.message_id.as_ref().unwrap()) {
            client
                .change_message_visibility()
                .queue_url(url)
                .receipt_handle(handle)
                .visibility_timeout(0)
                .send()
                .await
                .unwrap();
        } else {
            client
                .delete_message()
                .queue_url(url)
                .receipt_handle(handle)
                .send()
                .await
                .unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn queued_deliveries_reach_the_client_through_the_consumer() {
    let Some(app) = TestApp::spawn(Backend::DynamoDb).await else {
        return;
    };
    let (client, url) = queue().await;
    let services = (*app.services)
        .clone()
        .with_logout_queue(std::sync::Arc::new(SqsLogoutQueue::new(
            client.clone(),
            &url,
        )));
    let good = LogoutReceiver::start(StatusCode::OK, None).await;
    let failing = LogoutReceiver::start(StatusCode::INTERNAL_SERVER_ERROR, None).await;
    let delivered = relying_party(&app, &good.url("/bcl")).await;
    let refused = relying_party(&app, &failing.url("/bcl")).await;
    let principal = PrincipalId::new(uuid::Uuid::new_v4());

    announce_session_end(&services, &ended(principal, vec![delivered, refused]))
        .await
        .unwrap();
    assert!(
        good.received().is_empty(),
        "nothing is delivered by the token function itself"
    );

    let allowed =
        AllowedHosts::parse(&format!("{},{}", good.host_port, failing.host_port)).unwrap();
    let deliverer = Deliverer::new(app.ctx().clone(), fetcher(allowed));
    let mut receipts = 0;
    while receipts < 5 {
        let event = receive(&client, &url).await;
        if event.records.is_empty() {
            break;
        }
        receipts += 1;
        let response = sqs::handle_event(&deliverer, event.clone()).await;
        let failed: Vec<String> = response
            .batch_item_failures
            .iter()
            .map(|f| f.item_identifier.clone())
            .collect();
        settle(&client, &url, &event, &failed).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    assert_eq!(good.received().len(), 1);
    assert_eq!(
        failing.received().len(),
        3,
        "three receipts, three attempts"
    );
    assert!(
        matches!(
            &logout_events(&app, delivered).await[..],
            [AuditEvent {
                kind: AuditKind::LogoutDelivered { attempts: 1, .. },
                ..
            }]
        ),
        "delivered"
    );
    let events = logout_events(&app, refused).await;
    assert!(
        matches!(
            &events[..],
            [AuditEvent {
                kind: AuditKind::LogoutFailed {
                    attempts: 3,
                    reason: LogoutFailure::Rejected,
                    status: Some(500),
                    ..
                },
                ..
            }]
        ),
        "{events:?}"
    );
    assert!(
        receive(&client, &url).await.records.is_empty(),
        "the queue is empty"
    );
}
