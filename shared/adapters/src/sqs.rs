//! The token function's side of the back-channel logout deliveries in Lambda: one SQS message
//! per delivery (`token_core::logout_delivery::sqs` is the consumer's).

use std::time::Duration;

use aws_sdk_sqs::config::timeout::TimeoutConfig;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use token_core::errors::ServerError;
use token_core::logout_delivery::{LogoutDelivery, LogoutQueue};

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
