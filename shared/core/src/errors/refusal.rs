//! The one shape of every flow's error: the caller is refused (4xx, and the flow's own denial
//! type says why), or the server failed (5xx, [`ServerError`]).

use super::ServerError;
use crate::signing::SigningError;
use crate::store::StoreError;

/// What a flow answers instead of its result. `D` is the flow's denial: an enum (or struct) of
/// the reasons it refuses, each answered before anything is written. Flows return
/// `Result<T, Refusal<TheirDenial>>` and use `?` on store calls, server failures and their
/// own denials alike; the HTTP layer answers any `Refusal<D>` whose `D` it knows how to answer.
#[derive(Debug, thiserror::Error)]
pub enum Refusal<D: Denial> {
    /// The caller's request is refused.
    #[error("refused: {0:?}")]
    Denied(D),
    /// Our failure; nothing the caller did.
    #[error(transparent)]
    Server(#[from] ServerError),
}

/// A flow's reasons for refusing a request: what [`Refusal`] carries. Implemented by each
/// denial type, which gives every `Refusal<D>` its `From<D>`.
pub trait Denial: std::fmt::Debug {}

impl<D: Denial> From<D> for Refusal<D> {
    fn from(denial: D) -> Self {
        Self::Denied(denial)
    }
}

impl<D: Denial> From<StoreError> for Refusal<D> {
    fn from(error: StoreError) -> Self {
        Self::Server(error.into())
    }
}

impl<D: Denial> From<SigningError> for Refusal<D> {
    fn from(error: SigningError) -> Self {
        Self::Server(error.into())
    }
}

impl<D: Denial> Refusal<D> {
    /// The denial, if this is one.
    pub fn denial(&self) -> Option<&D> {
        match self {
            Self::Denied(denial) => Some(denial),
            Self::Server(_) => None,
        }
    }

    /// The same failure, or this denial seen as another flow's (a flow that runs another, such
    /// as the exchange running the bearer check, answers the inner refusals its own way).
    pub fn map_denied<E: Denial>(self, f: impl FnOnce(D) -> E) -> Refusal<E> {
        match self {
            Self::Denied(denial) => Refusal::Denied(f(denial)),
            Self::Server(error) => Refusal::Server(error),
        }
    }

    /// [`Refusal::map_denied`] with the outer denial's `From`.
    pub fn widen<E: Denial + From<D>>(self) -> Refusal<E> {
        self.map_denied(E::from)
    }
}
