//! The mail a user gets whenever a sign-in factor of theirs is added or removed (a passkey, an
//! authenticator app), wherever the change was made: whoever used their session, the user hears
//! of it. A user without an address gets none; a mail that cannot be sent is logged (its kind
//! only) and changes nothing about the change, which has already happened.

use crate::domain::{ChannelHandle, PrincipalId};
use crate::mail::{FactorChange, FactorNotice};
use crate::services::Services;

pub async fn notify(services: &Services, user: &PrincipalId, change: FactorChange) {
    let address = match services.ctx.store.principals().get_user(user).await {
        Ok(found) => found
            .and_then(|user| user.email)
            .and_then(|email| ChannelHandle::parse(&email).ok()),
        Err(error) => {
            tracing::warn!(%error, "a sign-in factor notice was not sent: the user was not read");
            None
        }
    };
    let Some(to) = address else {
        return;
    };
    let notice = FactorNotice {
        to,
        change,
        at: services.ctx.clock.now(),
    };
    if let Err(error) = services.mailer.send_notice(&notice).await {
        tracing::warn!(%error, "a sign-in factor notice was not sent");
    }
}
