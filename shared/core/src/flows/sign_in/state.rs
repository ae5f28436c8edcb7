//! What the interaction carries between pages and what it continues with.

use serde::{Deserialize, Serialize};

use crate::domain::PrincipalId;

/// What the page continues with once the user is signed in (as matrix-authentication-service's
/// `PostAuthAction`): the carried state is bound to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Continue {
    /// The authorize page's pending request (its id): the consent, or the code.
    Authorization(String),
    /// The device page's typed user code (its digest, hex): the device's approval.
    DeviceCode(String),
    /// The account page's overview.
    Account,
}

/// Where the interaction stands between two pages. Before the first it is the sign-in form,
/// which carries nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum State {
    /// The password was right and the user has an authenticator app: a code, counted against
    /// the password step `step`.
    SecondFactor { user: PrincipalId, step: String },
    /// The password was right and the user's company requires a second factor they have none
    /// of: an authenticator app is set up now, confirmed by its first code.
    Enrol { user: PrincipalId },
    /// That enrolment is stored and its recovery codes shown: continuing starts the session
    /// with both factors.
    Enrolled { user: PrincipalId },
}

/// One sign-in: what the browser holds for it (the form nonce of its cookie, the pending
/// request's id), what it continues with, and the browser's session cookie (a sign-in of the
/// same user signs in again within it).
#[derive(Debug, Clone, Copy)]
pub struct Interaction<'a> {
    pub browser: &'a str,
    pub then: &'a Continue,
    pub session_cookie: Option<&'a str>,
    /// The only user who may sign in (an authorization request's verified `id_token_hint`).
    pub expected_user: Option<PrincipalId>,
}
