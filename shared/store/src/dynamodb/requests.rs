//! The requests every aggregate is built from: strongly consistent reads, puts, transactions
//! (retried while another transaction holds an item) and batch writes.

use std::time::Duration;

use aws_config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemFluentBuilder;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::query::QueryOutput;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::types::{Put, ReturnValue, TransactWriteItem, WriteRequest};
use rand::Rng;
use serde::de::DeserializeOwned;

use super::codec::{from_item, key, Item};
use super::errors::{build_error, cancellation_codes, store_error};
use super::DynamoStore;
use crate::{StoreError, StoreResult};

/// Rounds of resubmitting a batch's `UnprocessedItems` before giving up as unavailable.
const BATCH_ATTEMPTS: u32 = 10;

/// How long a transaction keeps being re-run while DynamoDB cancels it because another
/// transaction holds one of its items (`TransactionConflict`). Nothing is written by a cancelled
/// attempt and conditions are re-evaluated each round, so the loser of a race ends in a
/// condition failure (an outcome), never in an error, as long as the budget lasts.
///
/// A conflict lasts only while the other transaction is in flight: tens of milliseconds on AWS,
/// a few hundred on DynamoDB Local on a loaded 2-core machine. Even 20 racers on one refresh
/// token, served one after another at that worst pace, finish in about 20 x 300 ms = 6 s less
/// the jitter's spreading; 8 s covers that, and is still below the functions' 10 s timeout, so
/// a request that does give up answers 503 itself instead of being killed. A count of attempts
/// would not do: under load every attempt may be cancelled again, however many there are.
const TRANSACTION_CONFLICT_BUDGET: Duration = Duration::from_secs(8);
/// The backoff between conflicting attempts: from 10 ms, doubling, never over 250 ms, so that a
/// waiting transaction retries soon after the one holding its item has finished.
const CONFLICT_BACKOFF_BASE: Duration = Duration::from_millis(10);
const CONFLICT_BACKOFF_CAP: Duration = Duration::from_millis(250);

/// Bulk writes (the legacy import) are an administrator's batch job, not a request a client
/// waits on: a slow batch is better waited for than failed and resubmitted.
pub(super) fn bulk_timeouts() -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::config::Builder::default().timeout_config(
        TimeoutConfig::builder()
            .operation_attempt_timeout(Duration::from_secs(10))
            .operation_timeout(Duration::from_secs(30))
            .build(),
    )
}

/// Exponential backoff with full jitter, so that concurrent retriers spread out.
pub(super) fn backoff(attempt: u32, base: Duration, cap: Duration) -> Duration {
    let ceiling = base.saturating_mul(1 << attempt.min(16)).min(cap);
    let millis = ceiling.as_millis().max(1) as u64;
    Duration::from_millis(rand::thread_rng().gen_range(millis / 2..=millis))
}

/// What one attempt of a request sent by [`retry_while_conflicting`] came to.
enum Attempt<T, C> {
    /// The answer, or an error that no new attempt would change.
    Done(T),
    /// Refused because a transaction holds an item (nothing was written); `C` is what to fail
    /// with once the budget is spent.
    Conflict(C),
}

/// Sends a request again, with backoff, while another transaction holds one of its items, within
/// [`TRANSACTION_CONFLICT_BUDGET`]: `Err` with the last conflict once it is spent. Transactions
/// and conditional updates share it, so that both wait out a conflict alike.
async fn retry_while_conflicting<T, C, F>(mut send: impl FnMut() -> F) -> Result<T, C>
where
    F: std::future::Future<Output = Attempt<T, C>>,
{
    let started = std::time::Instant::now();
    let mut attempt = 0;
    loop {
        match send().await {
            Attempt::Done(done) => return Ok(done),
            Attempt::Conflict(conflict) => {
                attempt += 1;
                let pause = backoff(attempt, CONFLICT_BACKOFF_BASE, CONFLICT_BACKOFF_CAP);
                if started.elapsed() + pause >= TRANSACTION_CONFLICT_BUDGET {
                    return Err(conflict);
                }
                tokio::time::sleep(pause).await;
            }
        }
    }
}

/// Sends an `UpdateItem` that has a condition: `Ok(false)` when the condition did not hold, so
/// nothing was written.
///
/// An item a transaction is writing refuses the update (`TransactionConflictException`: nothing
/// was written): it is sent again, as a transaction is ([`retry_while_conflicting`]). A family's
/// rotation meets one when a revocation's transaction holds the family.
pub(super) async fn update_if(op: &str, update: UpdateItemFluentBuilder) -> StoreResult<bool> {
    let outcome = retry_while_conflicting(|| {
        let send = update.clone().send();
        async move {
            match send.await {
                Ok(_) => Attempt::Done(Ok(true)),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
                {
                    Attempt::Done(Ok(false))
                }
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_transaction_conflict_exception()) =>
                {
                    Attempt::Conflict(e)
                }
                Err(e) => Attempt::Done(Err(store_error(op, e))),
            }
        }
    })
    .await;
    outcome.unwrap_or_else(|conflict| Err(store_error(op, conflict)))
}

/// A transaction cancelled for `codes` (one per item) that are no condition failure: unavailable
/// when a retry may succeed (a conflict past its budget, throttling), an error otherwise.
fn cancelled(op: &str, codes: &[String]) -> StoreError {
    let summary = codes.join(", ");
    let transient = [
        "TransactionConflict",
        "ThrottlingError",
        "ProvisionedThroughputExceeded",
        "RequestLimitExceeded",
    ];
    if codes.iter().any(|c| transient.contains(&c.as_str())) {
        StoreError::unavailable(format!("{op}: transaction cancelled: [{summary}]"))
    } else {
        StoreError::internal(format!("{op}: transaction cancelled: [{summary}]"))
    }
}

/// Takes an item once: sends a `DeleteItem` that has a condition and answers the item it
/// deleted. Of racing takes one gets it; the others, and a take whose condition did not hold
/// (expired, another client's), get `None` and delete nothing.
pub(super) async fn take_if<T: DeserializeOwned>(
    op: &str,
    delete: DeleteItemFluentBuilder,
) -> StoreResult<Option<T>> {
    match delete.return_values(ReturnValue::AllOld).send().await {
        Ok(out) => out
            .attributes
            .filter(|item| !item.is_empty())
            .map(from_item)
            .transpose(),
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
        {
            Ok(None)
        }
        Err(e) => Err(store_error(op, e)),
    }
}

/// Sends `query` page after page (a `Query` answers at most 1 MB at a time), handing each page to
/// `each`, until DynamoDB reports no further page.
pub(super) async fn query_pages(
    op: &str,
    query: QueryFluentBuilder,
    mut each: impl FnMut(QueryOutput) -> StoreResult<()>,
) -> StoreResult<()> {
    let mut start = None;
    loop {
        let mut page = query
            .clone()
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| store_error(op, e))?;
        start = page.last_evaluated_key.take().filter(|key| !key.is_empty());
        each(page)?;
        if start.is_none() {
            return Ok(());
        }
    }
}

/// Every item `query` finds, all pages read.
pub(super) async fn query_items(op: &str, query: QueryFluentBuilder) -> StoreResult<Vec<Item>> {
    let mut items = Vec::new();
    query_pages(op, query, |page| {
        items.extend(page.items.unwrap_or_default());
        Ok(())
    })
    .await?;
    Ok(items)
}

/// How a transaction ended, when it did not fail outright.
pub(super) enum Transaction {
    Committed,
    /// Indexes (into the submitted items) whose condition failed. Nothing was written.
    ConditionsFailed(Vec<usize>),
}

impl DynamoStore {
    // Reads are strongly consistent: a token just rotated or a family just revoked must read as
    // such from every Lambda instance at once.
    pub(super) async fn get_item(&self, op: &str, key: Item) -> StoreResult<Option<Item>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| store_error(op, e))?;
        Ok(out.item)
    }

    pub(super) async fn get<T: DeserializeOwned>(
        &self,
        op: &str,
        (pk, sk): (String, impl Into<String>),
    ) -> StoreResult<Option<T>> {
        self.get_item(op, key(pk, sk))
            .await?
            .map(from_item)
            .transpose()
    }

    /// An `UpdateItem` of the item at `(pk, sk)`, for the caller to give its expressions.
    pub(super) fn update_item(
        &self,
        (pk, sk): (String, impl Into<String>),
    ) -> UpdateItemFluentBuilder {
        self.client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
    }

    pub(super) async fn put(&self, op: &str, item: Item) -> StoreResult<()> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| store_error(op, e))?;
        Ok(())
    }

    pub(super) fn put_new(&self, item: Item) -> StoreResult<TransactWriteItem> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    /// A `Put` of an item that must be there already.
    pub(super) fn put_existing(&self, item: Item) -> StoreResult<TransactWriteItem> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_exists(pk)")
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    /// Runs a transaction. A condition failure is an outcome; a cancellation because another
    /// transaction held an item is retried (nothing was written,
    /// [`retry_while_conflicting`]), so that the caller only sees real condition failures.
    pub(super) async fn transact(
        &self,
        op: &str,
        items: Vec<TransactWriteItem>,
    ) -> StoreResult<Transaction> {
        let outcome = retry_while_conflicting(|| {
            // The SDK fills in a ClientRequestToken, reused by its own retries: a retry after a
            // timeout of a transaction that did commit succeeds instead of failing its
            // conditions against its own writes.
            let send = self
                .client
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .send();
            async move {
                let err = match send.await {
                    Ok(_) => return Attempt::Done(Ok(Transaction::Committed)),
                    Err(err) => err,
                };
                let codes = match err.as_service_error() {
                    Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                        cancellation_codes(cancelled)
                    }
                    _ => return Attempt::Done(Err(store_error(op, err))),
                };
                let failed: Vec<usize> = codes
                    .iter()
                    .enumerate()
                    .filter(|(_, code)| code.as_str() == "ConditionalCheckFailed")
                    .map(|(index, _)| index)
                    .collect();
                if !failed.is_empty() {
                    Attempt::Done(Ok(Transaction::ConditionsFailed(failed)))
                } else if codes.iter().any(|c| c == "TransactionConflict") {
                    Attempt::Conflict(codes)
                } else {
                    Attempt::Done(Err(cancelled(op, &codes)))
                }
            }
        })
        .await;
        outcome.unwrap_or_else(|codes| Err(cancelled(op, &codes)))
    }

    /// One BatchWriteItem of at most 25 puts, resubmitting what DynamoDB left unprocessed
    /// (throttled partitions) with backoff until all is written or the attempts run out.
    pub(super) async fn write_batch(&self, mut pending: Vec<WriteRequest>) -> StoreResult<()> {
        for attempt in 0..BATCH_ATTEMPTS {
            let out = self
                .client
                .batch_write_item()
                .request_items(self.table.clone(), pending)
                .customize()
                .config_override(bulk_timeouts())
                .send()
                .await
                .map_err(|e| store_error("BatchWriteItem", e))?;
            pending = out
                .unprocessed_items
                .and_then(|mut unprocessed| unprocessed.remove(&self.table))
                .unwrap_or_default();
            if pending.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(backoff(
                attempt,
                Duration::from_millis(50),
                Duration::from_secs(2),
            ))
            .await;
        }
        Err(StoreError::unavailable(format!(
            "BatchWriteItem: {} items still unprocessed after {BATCH_ATTEMPTS} attempts",
            pending.len()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_conflict_is_sent_again_and_an_answer_ends_the_retries() {
        let mut sent = 0;
        let outcome: Result<&str, &str> = retry_while_conflicting(|| {
            sent += 1;
            let attempt = if sent < 3 {
                Attempt::Conflict("held")
            } else {
                Attempt::Done("written")
            };
            async move { attempt }
        })
        .await;
        assert_eq!((outcome, sent), (Ok("written"), 3));
    }
}
