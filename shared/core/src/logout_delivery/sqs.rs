//! Deliveries in Lambda: the token function sends one SQS message per delivery and answers the
//! user; the `logout-delivery` function receives them and makes the attempts. A failed attempt
//! is reported as a batch item failure, so SQS offers the message again after the queue's
//! visibility timeout (30 s, template.yaml); the third receipt's failure is final: recorded as
//! `logout.failed` and reported as done, so at least [`MAX_ATTEMPTS`] attempts are made over at
//! least a minute. The dead-letter queue (after three receipts) only ever holds messages this
//! code could not read.

use std::time::Duration;

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent, SqsMessage};
use aws_sdk_sqs::config::timeout::TimeoutConfig;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;

use super::{Attempt, Deliverer, LogoutDelivery, LogoutQueue};
use crate::errors::ServerError;

/// Attempts per delivery: the queue's redrive policy's `maxReceiveCount` (template.yaml).
pub const MAX_ATTEMPTS: u32 = 3;

/// SendMessageBatch takes at most ten messages.
const BATCH: usize = 10;

/// The token function's side: one message per delivery.
#[derive(Debug, Clone)]
pub struct SqsLogoutQueue {
    client: aws_sdk_sqs::Client,
    queue_url: String,
}

impl SqsLogoutQueue {
    /// The queue at `queue_url`, through [`client`]`(endpoint)`.
    pub async fn connect(queue_url: &str, endpoint: Option<&str>) -> Self {
        Self::new(client(endpoint).await, queue_url)
    }

    pub fn new(client: aws_sdk_sqs::Client, queue_url: &str) -> Self {
        Self {
            client,
            queue_url: queue_url.to_owned(),
        }
    }
}

/// An SQS client on the one AWS SDK configuration; with `endpoint` (a local emulator) requests
/// go there, under the one rule for local endpoints (`token_store::aws_sdk::loader_for`).
/// Short timeouts: the user's answer waits for the send.
pub async fn client(endpoint: Option<&str>) -> aws_sdk_sqs::Client {
    let timeouts = TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(1))
        .operation_timeout(Duration::from_secs(3))
        .build();
    let loader = token_store::aws_sdk::loader_for(endpoint, "sqs-local").timeout_config(timeouts);
    aws_sdk_sqs::Client::new(&loader.load().await)
}

#[async_trait::async_trait]
impl LogoutQueue for SqsLogoutQueue {
    async fn enqueue(&self, deliveries: Vec<LogoutDelivery>) -> Result<(), ServerError> {
        for batch in deliveries.chunks(BATCH) {
            let mut entries = Vec::with_capacity(batch.len());
            for (index, delivery) in batch.iter().enumerate() {
                let body = serde_json::to_string(delivery)
                    .map_err(|e| ServerError::internal_because("encode a logout delivery", e))?;
                let entry = SendMessageBatchRequestEntry::builder()
                    .id(index.to_string())
                    .message_body(body)
                    .build()
                    .map_err(|e| ServerError::internal_because("a logout delivery message", e))?;
                entries.push(entry);
            }
            let sent = self
                .client
                .send_message_batch()
                .queue_url(&self.queue_url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| {
                    let e = aws_sdk_sqs::error::DisplayErrorContext(e).to_string();
                    ServerError::unavailable_because("queue back-channel logouts", e)
                })?;
            if let Some(failed) = sent.failed().first() {
                let why = format!("{}: {:?}", failed.code(), failed.message());
                return Err(ServerError::unavailable_because(
                    "queue back-channel logouts",
                    why,
                ));
            }
        }
        Ok(())
    }
}

/// The `logout-delivery` function's handler: one attempt per message, all at once; the messages
/// to offer again are the batch item failures.
pub async fn handle_event(deliverer: &Deliverer, event: SqsEvent) -> SqsBatchResponse {
    let attempts = event
        .records
        .iter()
        .map(|message| handle_message(deliverer, message));
    let mut response = SqsBatchResponse::default();
    for (message, done) in event
        .records
        .iter()
        .zip(futures::future::join_all(attempts).await)
    {
        if !done {
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = message.message_id.clone().unwrap_or_default();
            response.batch_item_failures.push(failure);
        }
    }
    response
}

/// Whether the message is done with (delivered, or failed for good and recorded).
async fn handle_message(deliverer: &Deliverer, message: &SqsMessage) -> bool {
    let parsed = message
        .body
        .as_deref()
        .map(serde_json::from_str::<LogoutDelivery>);
    let Some(Ok(delivery)) = parsed else {
        // Left for the dead-letter queue: nothing in it can be audited.
        tracing::error!(message_id = ?message.message_id, "unreadable logout delivery message");
        return false;
    };
    let receipt: u32 = message
        .attributes
        .get("ApproximateReceiveCount")
        .and_then(|count| count.parse().ok())
        .unwrap_or(1);
    let outcome = deliverer.attempt(&delivery).await;
    let last = match outcome {
        Attempt::Delivered => true,
        Attempt::Failed { reason, .. } => !reason.is_retryable() || receipt >= MAX_ATTEMPTS,
    };
    if last {
        deliverer.record(&delivery, receipt, outcome).await;
    }
    last
}
