//! One unit of work for writes that span aggregates: a [`WriteBatch`] to which each aggregate
//! adds its typed operations ([`FamilyWrite`], audit events, a [`LoginRefund`], a [`LegacyLink`],
//! a company auth token, a `jti`'s first use, a rate count first), committed at once by
//! [`BatchWrites::commit`]: one `TransactWriteItems` on DynamoDB, one transaction on SQLite.
//!
//! A batch is made of parts. A *required* part's conditions decide the batch: if one fails,
//! nothing is written and the commit answers [`Committed::Refused`] naming that part (a renewal
//! whose token is no longer current, a legacy link another exchange moved). An *optional* part
//! is written only if its own conditions hold and the rest does not depend on it (taking back a
//! login attempt whose window has ended, revoking a family someone else revoked first): the
//! commit lists it as skipped. Conditions that only guard integrity (a new item's id is free, a
//! token being rotated exists) are not outcomes: one failing is the store's error.
//!
//! A rate count ([`WriteBatch::count_first`]) goes before everything else and gates it: at its
//! limit, nothing else is written ([`Committed::Limited`]). On DynamoDB it is its own
//! `UpdateItem` (a transaction cannot return the count, and would cost twice the write units);
//! on SQLite it is in the same transaction.

use async_trait::async_trait;

use super::{
    FamilyWrite, FirstUse, LegacyLink, LoginRefund, RateKey, RateLimit, Rotation, StoreResult,
};
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{AuthToken, Family};

/// One aggregate's operation in a batch.
#[derive(Debug, Clone)]
pub enum WriteOp {
    /// Boxed: a family's records are most of a batch's bytes, the other operations small.
    Family(Box<FamilyWrite>),
    /// New audit events, each filed under its subjects.
    Audit(Vec<AuditEvent>),
    /// Takes back a login attempt; its condition: the attempt's window is still the counter's.
    LoginRefund(LoginRefund),
    /// Moves a legacy token's exchange link; its condition: the link is still where the caller
    /// saw it.
    LegacyLink(LegacyLink),
    /// A new company auth token (its hash is new: an integrity condition).
    AuthToken(AuthToken),
    /// A `jti` used for the first time; its condition: no unexpired use is stored.
    FirstUse(FirstUse),
}

impl WriteOp {
    /// The name the write is measured and logged under (its DynamoDB operation's, where a batch
    /// replaced a method of that name).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Family(write) => write.name(),
            Self::Audit(_) => "PutAuditEvent",
            Self::LoginRefund(_) => "RefundLoginAttempt",
            Self::LegacyLink(_) => "CreateFamily",
            Self::AuthToken(_) => "PutAuthToken",
            Self::FirstUse(_) => "MarkJtiUsed",
        }
    }
}

impl From<FirstUse> for WriteOp {
    fn from(first_use: FirstUse) -> Self {
        Self::FirstUse(first_use)
    }
}

impl From<FamilyWrite> for WriteOp {
    fn from(write: FamilyWrite) -> Self {
        Self::Family(Box::new(write))
    }
}

impl From<Vec<AuditEvent>> for WriteOp {
    fn from(events: Vec<AuditEvent>) -> Self {
        Self::Audit(events)
    }
}

impl From<AuditEvent> for WriteOp {
    fn from(event: AuditEvent) -> Self {
        Self::Audit(vec![event])
    }
}

impl From<LoginRefund> for WriteOp {
    fn from(refund: LoginRefund) -> Self {
        Self::LoginRefund(refund)
    }
}

impl From<AuthToken> for WriteOp {
    fn from(token: AuthToken) -> Self {
        Self::AuthToken(token)
    }
}

impl From<LegacyLink> for WriteOp {
    fn from(link: LegacyLink) -> Self {
        Self::LegacyLink(link)
    }
}

/// Which part of a batch a [`Committed`] speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartId(usize);

impl PartId {
    pub fn index(self) -> usize {
        self.0
    }
}

/// Operations that stand or fall together.
#[derive(Debug, Clone)]
pub struct Part {
    pub ops: Vec<WriteOp>,
    /// A failed condition refuses the batch (`true`), or only skips this part (`false`).
    pub required: bool,
}

/// The rate count a batch starts with.
#[derive(Debug, Clone)]
pub struct Gate {
    pub key: RateKey,
    pub limit: RateLimit,
    pub now: UnixTime,
}

/// Writes to commit at once; see the module's documentation.
#[derive(Debug, Clone, Default)]
pub struct WriteBatch {
    gate: Option<Gate>,
    parts: Vec<Part>,
}

impl WriteBatch {
    pub fn new() -> Self {
        Self::default()
    }

    /// A batch of one required part.
    pub fn of(ops: impl IntoIterator<Item = WriteOp>) -> Self {
        let mut batch = Self::new();
        batch.require(ops);
        batch
    }

    /// Counts one hit on `key` (as [`RateLimitStore::count_hit`](super::RateLimitStore::count_hit))
    /// before anything else, and writes the rest only if it was counted.
    pub fn count_first(&mut self, key: RateKey, limit: RateLimit, now: UnixTime) -> &mut Self {
        self.gate = Some(Gate { key, limit, now });
        self
    }

    /// Operations whose conditions decide the whole batch.
    pub fn require(&mut self, ops: impl IntoIterator<Item = WriteOp>) -> PartId {
        self.push(ops, true)
    }

    /// Operations written only if their own conditions hold.
    pub fn if_possible(&mut self, ops: impl IntoIterator<Item = WriteOp>) -> PartId {
        self.push(ops, false)
    }

    fn push(&mut self, ops: impl IntoIterator<Item = WriteOp>, required: bool) -> PartId {
        self.parts.push(Part {
            ops: ops.into_iter().collect(),
            required,
        });
        PartId(self.parts.len() - 1)
    }

    pub fn gate(&self) -> Option<&Gate> {
        self.gate.as_ref()
    }

    /// The parts, in order, each with its id.
    pub fn parts(&self) -> impl Iterator<Item = (PartId, &Part)> {
        self.parts
            .iter()
            .enumerate()
            .map(|(i, part)| (PartId(i), part))
    }

    /// The part `id` names (of this batch).
    pub fn part(&self, id: PartId) -> &Part {
        &self.parts[id.0]
    }

    /// The operation, when the batch is one part of one operation.
    pub fn sole_op(&self) -> Option<&WriteOp> {
        match &self.parts[..] {
            [part] => match &part.ops[..] {
                [op] => Some(op),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(|part| part.ops.is_empty())
    }

    /// The name of the batch's first operation: what the commit is measured and logged as.
    pub fn name(&self) -> &'static str {
        self.parts
            .iter()
            .find_map(|part| part.ops.first())
            .map_or("WriteBatch", WriteOp::name)
    }
}

/// A gated write's outcome: refused at the gate's limit, or counted (the count in its window,
/// this hit included) with the write's own outcome.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gated<T> {
    Limited { retry_after: i64 },
    Counted { count: u32, outcome: T },
}

/// What a commit did. A failed condition is one of these outcomes, never an error.
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Committed {
    /// Every required part was written, with the optional parts not in `skipped`.
    Applied {
        skipped: Vec<PartId>,
        /// The gate's count in its window, this hit included (`None`: the batch had no gate).
        counted: Option<u32>,
    },
    /// This required part's condition failed: nothing of the batch was written (a gate's hit
    /// stays counted: the request was made).
    Refused(PartId),
    /// The gate's limit was reached: nothing was written or counted. Its window ends
    /// `retry_after` seconds from the gate's `now` (at least 1).
    Limited { retry_after: i64 },
}

impl Committed {
    /// Whether `part` was written.
    pub fn applied(&self, part: PartId) -> bool {
        matches!(self, Self::Applied { skipped, .. } if !skipped.contains(&part))
    }
}

#[async_trait]
pub trait BatchWrites: Send + Sync {
    /// Commits `batch` as one write. An error means nothing of it is known to have been written
    /// (`Unavailable`: the same request may be retried).
    async fn commit(&self, batch: WriteBatch) -> StoreResult<Committed>;

    /// Rotates a family's refresh token ([`Rotation`]) and records `events` with it: `true` if
    /// it landed, `false` if its condition failed (the token is no longer current, or the family
    /// is revoked or expired) and nothing was written. Of concurrent rotations of one token, at
    /// most one lands.
    ///
    /// Unlike [`Self::commit`], an error may follow a rotation that landed: on DynamoDB the
    /// family's conditional update decides alone (docs/decisions.md, "What a refresh writes"),
    /// and the successor's record, the access token and the events are written after it. The
    /// client's retry then finds the rotation made and its token rotated away, and
    /// [`Self::complete_rotation`] writes what is missing.
    async fn rotate(&self, rotation: Rotation, events: Vec<AuditEvent>) -> StoreResult<bool>;

    /// [`Self::rotate`] gated by a rate count, as [`WriteBatch::count_first`] gates a batch: at
    /// the gate's limit nothing is written or counted; otherwise the hit stays counted whether
    /// the rotation lands or not (the request was made). On SQLite the count is a statement of
    /// the rotation's own transaction, so a refresh is one write of the group commit, not two;
    /// on DynamoDB it is its own `UpdateItem` first, as for a batch.
    async fn rotate_counted(
        &self,
        rotation: Rotation,
        events: Vec<AuditEvent>,
        gate: Gate,
    ) -> StoreResult<Gated<bool>>;

    /// Writes what the family's last rotation left unwritten, if it failed after its decisive
    /// write: the record of its current token (from the family) and `events` (the rotation's,
    /// with the ids it recorded them under), each only if absent. `true` if anything was missing,
    /// which means the rotation's answer never reached the client.
    async fn complete_rotation(&self, family: &Family, events: &[AuditEvent]) -> StoreResult<bool>;
}
