//! Login attempts on DynamoDB: one counter item per login (`FAILEDLOGIN#<login>`, `ATTEMPTS`)
//! with `attempts`, `window_start` and the TTL `expires_at` (the window's end).
//!
//! An attempt is one conditional `UpdateItem` (`ADD attempts :one` if the window is live and not
//! full), so DynamoDB serialises parallel attempts and at most `threshold` pass per window. Only
//! when that condition fails does a strongly consistent read tell a full window (locked) from
//! a missing or ended one, which a conditional `PutItem` then opens. Each lost race leaves
//! nothing written and starts over.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{ReturnValue, TransactWriteItem, Update};

use super::codec::{key, keys, n, Item};
use super::errors::{build_error, store_error};
use super::requests::update_if;
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::Login;
use crate::{
    AllowedAttempt, Attempt, AttemptLimit, LockoutStore, LoginRefund, StoreError, StoreResult,
};

/// Rounds of "increment, else open a window" before giving up. Each lost round means another
/// request changed the counter in between, which can happen at most twice per window (one
/// opening, one filling), so this bound is never reached in practice.
const ROUNDS: usize = 4;

/// What a failed increment found.
enum Counter {
    Full,
    /// Missing, or its window has ended.
    Absent,
    /// Changed since the increment failed (a new window opened): increment again.
    Live,
}

#[async_trait]
impl LockoutStore for DynamoStore {
    async fn register_login_attempt(
        &self,
        login: &Login,
        limit: AttemptLimit,
        now: UnixTime,
    ) -> StoreResult<Attempt> {
        let since = now - limit.window_seconds;
        for _ in 0..ROUNDS {
            if let Some(allowed) = self.increment(login, limit, since).await? {
                return Ok(Attempt::Allowed(allowed));
            }
            match self.inspect(login, limit, since).await? {
                Counter::Full => return Ok(Attempt::Locked),
                Counter::Live => continue,
                Counter::Absent => {
                    if self.open_window(login, limit, now, since).await? {
                        return Ok(Attempt::Allowed(AllowedAttempt {
                            count: 1,
                            window_start: now,
                        }));
                    }
                }
            }
        }
        Err(StoreError::Unavailable(
            "RegisterLoginAttempt: the counter kept changing".into(),
        ))
    }

    async fn is_login_locked(
        &self,
        login: &Login,
        limit: AttemptLimit,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let since = now - limit.window_seconds;
        Ok(matches!(
            self.inspect(login, limit, since).await?,
            Counter::Full
        ))
    }

    async fn refund_login_attempt(
        &self,
        login: &Login,
        attempt: &AllowedAttempt,
    ) -> StoreResult<()> {
        let refund = self
            .update_item(keys::login_attempts(login))
            .update_expression("ADD attempts :minus_one")
            .condition_expression("window_start = :start AND attempts > :zero")
            .expression_attribute_values(":minus_one", n(-1))
            .expression_attribute_values(":start", n(attempt.window_start))
            .expression_attribute_values(":zero", n(0));
        // A failed condition means the window ended (or was already refunded to zero): nothing
        // to take back.
        update_if("RefundLoginAttempt", refund).await?;
        Ok(())
    }
}

impl DynamoStore {
    /// [`LockoutStore::refund_login_attempt`] as an item of another transaction (the family's).
    /// Its condition fails when there is nothing to take back; the caller then writes without it.
    pub(super) fn refund_item(&self, refund: &LoginRefund) -> StoreResult<TransactWriteItem> {
        let (pk, sk) = keys::login_attempts(&refund.login);
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("ADD attempts :minus_one")
            .condition_expression("window_start = :start AND attempts > :zero")
            .expression_attribute_values(":minus_one", n(-1))
            .expression_attribute_values(":start", n(refund.attempt.window_start))
            .expression_attribute_values(":zero", n(0))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Counts the attempt in a live window with room; `None` if there is no such window.
    async fn increment(
        &self,
        login: &Login,
        limit: AttemptLimit,
        since: UnixTime,
    ) -> StoreResult<Option<AllowedAttempt>> {
        let result = self
            .update_item(keys::login_attempts(login))
            .update_expression("ADD attempts :one")
            .condition_expression("window_start > :since AND attempts < :threshold")
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":since", n(since))
            .expression_attribute_values(":threshold", n(limit.threshold))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match result {
            Ok(out) => {
                let item = out.attributes.unwrap_or_default();
                Ok(Some(AllowedAttempt {
                    count: number(&item, "attempts")?,
                    window_start: number(&item, "window_start")?,
                }))
            }
            Err(e) if is_condition_failure(&e) => Ok(None),
            Err(e) => Err(store_error("RegisterLoginAttempt", e)),
        }
    }

    /// Why the increment failed, read consistently.
    async fn inspect(
        &self,
        login: &Login,
        limit: AttemptLimit,
        since: UnixTime,
    ) -> StoreResult<Counter> {
        let (pk, sk) = keys::login_attempts(login);
        let Some(item) = self.get_item("RegisterLoginAttempt", key(pk, sk)).await? else {
            return Ok(Counter::Absent);
        };
        let window_start: UnixTime = number(&item, "window_start")?;
        let attempts: u32 = number(&item, "attempts")?;
        Ok(if window_start <= since {
            Counter::Absent
        } else if attempts >= limit.threshold {
            Counter::Full
        } else {
            Counter::Live
        })
    }

    /// Opens a new window holding this attempt, unless another request just did.
    async fn open_window(
        &self,
        login: &Login,
        limit: AttemptLimit,
        now: UnixTime,
        since: UnixTime,
    ) -> StoreResult<bool> {
        let (pk, sk) = keys::login_attempts(login);
        let mut item = key(pk, sk);
        item.insert("attempts".into(), n(1));
        item.insert("window_start".into(), n(now));
        item.insert("expires_at".into(), n(now + limit.window_seconds));
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk) OR window_start <= :since")
            .expression_attribute_values(":since", n(since))
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e) if is_condition_failure(&e) => Ok(false),
            Err(e) => Err(store_error("RegisterLoginAttempt", e)),
        }
    }
}

fn is_condition_failure<E, R>(error: &aws_sdk_dynamodb::error::SdkError<E, R>) -> bool
where
    E: aws_sdk_dynamodb::error::ProvideErrorMetadata,
{
    error.as_service_error().and_then(|e| e.code()) == Some("ConditionalCheckFailedException")
}

/// A numeric attribute of the counter item.
fn number<T: std::str::FromStr>(item: &Item, name: &str) -> StoreResult<T> {
    item.get(name)
        .and_then(|value| value.as_n().ok())
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| StoreError::internal(format!("malformed login attempt counter: {name}")))
}
