//! What a step of the interaction answers: the page to show next, the session it signed in
//! with, or where the browser goes.

use crate::clock::UnixTime;
use crate::domain::{AuthMethod, PrincipalId, SessionId, StartedSession, User};
use crate::errors::{Denial, Refusal};
use crate::flows::second_factor::{self, Enrolment, SpentStep};
use crate::limits::Exceeded;
use crate::services::Services;

use super::state::Continue;

/// What the page shows next, `carried` being the sealed [`State`] its form sends back.
#[derive(Debug)]
pub enum Shown {
    /// The sign-in form, `login` filled in, with why the last try was refused. A login with no
    /// password and no identity provider comes back here, the password step, whether or not it
    /// exists.
    Identify {
        login: String,
        error: Option<&'static str>,
    },
    /// The login's domain has several of its company's identity providers: a button each.
    ChooseIdp {
        login: String,
        choices: Vec<IdpChoice>,
    },
    /// One of the interaction's own pages.
    Step { carried: String, step: Step },
}

/// The interaction's own pages, rendered alike on every page that runs it.
#[derive(Debug)]
pub enum Step {
    /// An authenticator-app or recovery code.
    SecondFactor { error: Option<&'static str> },
    /// The company requires a second factor and the user has none: an authenticator app, set
    /// up now and confirmed by its first code.
    Enrol {
        enrolment: Enrolment,
        error: Option<&'static str>,
    },
    /// That enrolment is stored: its recovery codes, shown once, and the button that continues.
    RecoveryCodes { codes: Vec<String> },
}

/// One identity provider's button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdpChoice {
    pub id: String,
    /// What the button says ("Sign in with Acme").
    pub name: String,
}

pub(super) fn shown(carried: String, step: Step) -> Next {
    Next::Show(Shown::Step { carried, step })
}

/// The user proved who they are: the session (started, or signed in again), and what to do.
#[derive(Debug)]
pub struct SignedIn {
    pub started: StartedSession,
    pub then: Continue,
    /// The authenticator-app code step this sign-in used, to give back if what the page does
    /// next fails (a 503 must not spend the code).
    pub(super) spent: Option<(User, SpentStep)>,
}

impl SignedIn {
    /// What the page continued with failed and answers 503: the code typed may be typed again.
    pub async fn give_back_code(self, services: &Services) {
        if let Some((user, spent)) = self.spent {
            second_factor::give_back(services, &user, spent).await;
        }
    }

    pub fn user(&self) -> PrincipalId {
        self.started.session.principal_id
    }

    pub fn sid(&self) -> &SessionId {
        &self.started.session.sid
    }

    pub fn amr(&self) -> &[AuthMethod] {
        &self.started.session.amr
    }

    pub fn auth_time(&self) -> UnixTime {
        self.started.session.authenticated_at
    }
}

#[derive(Debug)]
pub enum Next {
    Show(Shown),
    SignedIn(Box<SignedIn>),
    /// To the company's identity provider: the page answers with a redirect there.
    Upstream {
        location: String,
    },
    /// The carried state or the enrolment is not this service's, is another browser's, or is
    /// no longer valid (expired, its user gone): nothing was compared. The page shows its
    /// sign-in form again, or refuses a form it cannot have made (the authorize page's 400).
    Restart,
}

/// Too many sign-in posts from the source address: the page answers 429.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Too many sign-in attempts from your network. Please wait a minute and try again.")]
pub struct SlowDown {
    pub retry_after: i64,
}

impl Denial for SlowDown {}

impl From<Exceeded> for SlowDown {
    fn from(exceeded: Exceeded) -> Self {
        Self {
            retry_after: exceeded.retry_after,
        }
    }
}

pub type SignInError = Refusal<SlowDown>;

/// The sign-in form again.
pub fn identify(login: &str, error: Option<&'static str>) -> Next {
    Next::Show(Shown::Identify {
        login: login.to_owned(),
        error,
    })
}
