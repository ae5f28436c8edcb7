//! What the account page shows and reads: its steps, its forms' fields and cookies, its refusals.

use crate::domain::{ClientId, PasskeyCredential, SignInSession};
use crate::errors::{Denial, Refusal};
use crate::flows::second_factor::Enrolment;
use crate::flows::sign_in::{IdpChoice, Step};
use crate::limits::Exceeded;

pub const ACCOUNT_PATH: &str = "/oauth2/v0/account";
/// The sign-in form's nonce, sent to the account page only.
pub const SIGN_IN_NONCE_COOKIE: &str = "account_sign_in";
pub const SIGN_IN_NONCE_TTL_SECONDS: i64 = 600;

pub(super) const SIGN_IN_FORM: &[u8] = b"account-sign-in";
pub(crate) const ACCOUNT_FORM: &[u8] = b"account";

/// What the browser is shown or sent to next.
#[derive(Debug)]
pub enum AccountStep {
    /// The sign-in form. `new_nonce` is the nonce cookie's value to set, when it changed.
    SignIn {
        csrf_token: String,
        new_nonce: Option<String>,
        login: String,
        error: Option<&'static str>,
        /// The company identity providers the login may continue with, a button each.
        idp_choices: Vec<IdpChoice>,
    },
    /// `303` to the company's identity provider.
    Upstream {
        location: String,
    },
    Overview(Overview),
    /// `303` to the account page; `session_cookie` set when a sign-in started one.
    Reload {
        session_cookie: Option<String>,
    },
    /// The browser's own session ended: the signed-out page, the cookie removed.
    SignedOut,
    /// The browser's own session ended, and the company identity provider that started it
    /// signs the browser out too: `303` there, the cookie removed.
    SignedOutVia {
        location: String,
    },
    /// The authenticator-app enrolment page (a new secret, or the same after a wrong code).
    TotpEnrol {
        csrf_token: String,
        enrolment: Enrolment,
        error: Option<&'static str>,
    },
    /// The enrolment is stored: its recovery codes, shown this once.
    RecoveryCodes(Vec<String>),
    /// One of the sign-in interaction's own pages (the code, the enrolment, the recovery
    /// codes), its forms carrying the sealed state `carried`.
    SignInStep {
        csrf_token: String,
        carried: String,
        step: Step,
    },
}

/// The account page's content.
#[derive(Debug)]
pub struct Overview {
    pub csrf_token: String,
    /// Oldest first; `current` marks this browser's.
    pub sessions: Vec<ListedSession>,
    pub apps: Vec<ConnectedApp>,
    /// Whether the user has an authenticator app.
    pub totp_enrolled: bool,
    /// Oldest first.
    pub passkeys: Vec<PasskeyCredential>,
    /// Why the last passkey form was refused.
    pub error: Option<&'static str>,
    /// Whether this session's sign-in may change how the user signs in (add or remove a
    /// passkey or the authenticator app): else the page offers to sign in again first.
    pub factors_unlocked: bool,
}

#[derive(Debug)]
pub struct ListedSession {
    pub session: SignInSession,
    pub current: bool,
    /// The company identity provider that started it (its button's name), if one did.
    pub started_with: Option<String>,
}

#[derive(Debug)]
pub struct ConnectedApp {
    pub client_id: ClientId,
    pub name: String,
    pub scopes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccountDenial {
    #[error("The form could not be accepted. Please open your account page again.")]
    BadForm,
    #[error("Too many sign-in attempts from your network. Please wait a minute and try again.")]
    SlowDown { retry_after: i64 },
    #[error("That code was not accepted. Please open your account page and try again.")]
    WrongCode,
    /// A factor change from a session whose sign-in is not fresh (the passkey options the
    /// page's script asks for; the forms answer with the sign-in form instead).
    #[error("To change how you sign in, please sign in again first: open your account page.")]
    SignInAgain,
}

impl Denial for AccountDenial {}

impl From<Exceeded> for AccountDenial {
    fn from(exceeded: Exceeded) -> Self {
        Self::SlowDown {
            retry_after: exceeded.retry_after,
        }
    }
}

/// The sign-in interaction's refusal: this page's 429.
impl From<crate::flows::sign_in::SlowDown> for AccountDenial {
    fn from(slow: crate::flows::sign_in::SlowDown) -> Self {
        Self::SlowDown {
            retry_after: slow.retry_after,
        }
    }
}

pub type AccountError = Refusal<AccountDenial>;

/// The fields the page's forms post. Holds a password: no `Debug`.
#[derive(Default, serde::Deserialize, utoipa::ToSchema)]
pub struct AccountForm {
    pub csrf_token: Option<String>,
    /// `sign_in`, `sign_out` (with `sid`), `sign_out_everywhere`, `disconnect` (with
    /// `client_id`).
    pub action: Option<String>,
    pub login: Option<String>,
    pub password: Option<String>,
    pub sid: Option<String>,
    pub client_id: Option<String>,
    /// `totp_confirm`, `totp_remove`: an authenticator-app code (or, to remove, a recovery
    /// code).
    pub code: Option<String>,
    /// `totp_confirm`: the sealed enrolment the enrolment page carries.
    pub enrolment: Option<String>,
    /// `sign_in_code`, `sign_in_totp_confirm`: the sealed password step the code and
    /// enrolment pages carry; `sign_in_enrolled`: the sealed proof of both factors.
    pub pending: Option<String>,
    /// A passkey sign-in or the `add_passkey` form: the ceremony id and the browser's answer
    /// (JSON), filled in by the page's script.
    pub passkey_ceremony: Option<String>,
    pub passkey_answer: Option<String>,
    /// The sign-in form's company identity provider button: its id.
    pub idp: Option<String>,
    /// `rename_passkey`, `remove_passkey`.
    pub credential_id: Option<String>,
    /// `add_passkey`, `rename_passkey`: the passkey's name.
    pub name: Option<String>,
}

/// The cookies the page reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct AccountCookies<'a> {
    pub session: Option<&'a str>,
    pub sign_in_nonce: Option<&'a str>,
}
