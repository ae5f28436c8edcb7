//! What the interaction carries between pages and what it continues with.

use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;
use crate::domain::{AuthMethod, IdpId, PrincipalId};

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
    /// The first factor was right and the user has an authenticator app: a code, counted
    /// against the password step `step`.
    SecondFactor {
        user: PrincipalId,
        step: String,
        /// The first factor was the company's identity provider.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        upstream: Option<UpstreamProof>,
    },
    /// The first factor was right and the user's company requires a second factor they have
    /// none of: an authenticator app is set up now, confirmed by its first code.
    Enrol {
        user: PrincipalId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        upstream: Option<UpstreamProof>,
    },
    /// That enrolment is stored and its recovery codes shown: continuing starts the session
    /// with both factors.
    Enrolled {
        user: PrincipalId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        upstream: Option<UpstreamProof>,
    },
    /// The company's identity provider signed the user in; `two_factors` when that counts as
    /// two (the IdP reported `mfa`, or it is trusted to have asked for them).
    Upstream {
        user: PrincipalId,
        proof: UpstreamProof,
        two_factors: bool,
    },
}

/// What a company's identity provider said of a sign-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamProof {
    pub idp: IdpId,
    /// The methods as the IdP reported them.
    pub amr: Vec<AuthMethod>,
    /// When the user authenticated there, if it said (never later than its answer).
    pub auth_time: Option<UnixTime>,
    /// Its ID token, sent back as `id_token_hint` when the session ends there.
    pub id_token: String,
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
    /// What the page's address needs, besides the step, to continue after a company identity
    /// provider (the device page's `user_code=…`).
    pub resume: Option<&'a str>,
}
