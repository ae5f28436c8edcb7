//! The interaction's [`State`] between two pages: sealed (the one `Sealer`, the second factors' key)
//! into the page's form, bound to what the browser holds for the sign-in and to what it
//! continues with, and valid [`STEP_TTL_SECONDS`]. Nothing is stored: a sealed step lives as long
//! as the form it is in.

use serde::{Deserialize, Serialize};

use super::state::{Continue, Interaction, State};
use crate::clock::UnixTime;
use crate::domain::{PrincipalId, User};
use crate::errors::ServerError;
use crate::flows::second_factor::sealer;
use crate::services::Services;

/// Time to type a code, or to set up an authenticator app and read its recovery codes.
pub const STEP_TTL_SECONDS: UnixTime = 600;

#[derive(Serialize, Deserialize)]
struct Carried {
    state: State,
    then: Continue,
    expires_at: UnixTime,
}

/// A carried state that opened: its user (`None` when deleted meanwhile) and when it ends.
pub(super) struct Opened {
    pub state: State,
    pub user: Option<User>,
    pub expires_at: UnixTime,
}

impl State {
    pub(super) fn user(&self) -> PrincipalId {
        match self {
            Self::SecondFactor { user, .. }
            | Self::Enrol { user, .. }
            | Self::Enrolled { user, .. }
            | Self::Upstream { user, .. } => *user,
        }
    }
}

fn context(interaction: Interaction<'_>) -> String {
    format!("sign-in\0{}", interaction.browser)
}

pub(super) async fn seal(
    services: &Services,
    interaction: Interaction<'_>,
    state: &State,
) -> Result<String, ServerError> {
    let key = sealer(services).await?;
    let carried = Carried {
        state: state.clone(),
        then: interaction.then.clone(),
        expires_at: services.ctx.clock.now() + STEP_TTL_SECONDS,
    };
    let payload = serde_json::to_vec(&carried).expect("the carried state serialises");
    Ok(key.seal(
        &context(interaction),
        &payload,
        services.ctx.random.as_ref(),
    ))
}

/// The state `sealed` carries, unless forged, another browser's, for another continuation, or
/// expired.
pub(super) async fn open(
    services: &Services,
    interaction: Interaction<'_>,
    sealed: &str,
) -> Result<Option<Opened>, ServerError> {
    let key = sealer(services).await?;
    let Some(payload) = key.open(&context(interaction), sealed) else {
        return Ok(None);
    };
    let Ok(carried) = serde_json::from_slice::<Carried>(&payload) else {
        return Ok(None);
    };
    if &carried.then != interaction.then || carried.expires_at <= services.ctx.clock.now() {
        return Ok(None);
    }
    let user = services
        .ctx
        .store
        .principals()
        .get_user(&carried.state.user())
        .await?;
    Ok(Some(Opened {
        state: carried.state,
        user,
        expires_at: carried.expires_at,
    }))
}
