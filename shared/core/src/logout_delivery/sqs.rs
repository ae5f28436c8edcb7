//! Deliveries in Lambda: the token function sends one SQS message per delivery and answers the
//! user (`token_adapters::sqs::SqsLogoutQueue`); the `logout-delivery` function receives them
//! and makes the attempts (here: the event and its answer are plain data). A failed attempt
//! is reported as a batch item failure, so SQS offers the message again after the queue's
//! visibility timeout (30 s, template.yaml); the third receipt's failure is final: recorded as
//! `logout.failed` and reported as done, so at least [`MAX_ATTEMPTS`] attempts are made over at
//! least a minute. The dead-letter queue (after three receipts) only ever holds messages this
//! code could not read.

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent, SqsMessage};

use super::{Attempt, Deliverer, LogoutDelivery};

/// Attempts per delivery: the queue's redrive policy's `maxReceiveCount` (template.yaml).
pub const MAX_ATTEMPTS: u32 = 3;

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
