//! Which of the IdP's company's users an upstream subject is: the link, once made, decides;
//! the first sign-in makes it, to the user whose `externalId` is the subject, else (with
//! `--link-by email`) to the company's user with the verified email, else (with `--jit on`)
//! to a new user of the company. A user of another company is never reached: every candidate
//! is checked to be of the IdP's company.

use crate::domain::random::RandomExt;
use crate::domain::{
    ChannelHandle, FederationLink, IdentityProvider, LinkBy, Login, PrincipalId, User, UserStatus,
};
use crate::errors::ServerError;
use crate::secrets::PasswordHash;
use crate::services::Services;
use crate::store::{Inserted, Linked};

use super::oidc::UpstreamIdentity;

/// The user an upstream sign-in is, and what this sign-in did to find them.
#[derive(Debug)]
pub struct Resolved {
    pub user: User,
    /// The link was made now.
    pub linked: bool,
    /// The user was created now (just in time).
    pub created: bool,
}

/// Why no user could be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoUser {
    /// No link, no match, and no just-in-time users for this IdP.
    NoAccount,
    /// The linked user is not active (disabled, or the company's status).
    Inactive,
}

impl NoUser {
    pub fn reason(self) -> &'static str {
        match self {
            Self::NoAccount => "no_account",
            Self::Inactive => "user_inactive",
        }
    }
}

pub async fn resolve(
    services: &Services,
    idp: &IdentityProvider,
    identity: &UpstreamIdentity,
) -> Result<Result<Resolved, NoUser>, ServerError> {
    let store = &services.ctx.store;
    let federation = store.federation();
    let company = &idp.company_id;
    if let Some(link) = federation
        .get_federation_link(&idp.id, &identity.subject)
        .await?
    {
        return Ok(linked_user(services, company, &link.user_id)
            .await?
            .map(|user| Resolved {
                user,
                linked: false,
                created: false,
            }));
    }
    let (user, created) = match candidate(services, idp, identity).await? {
        Some(user) => (user, false),
        None if idp.jit => match just_in_time(services, idp, identity).await? {
            Some(user) => (user, true),
            None => return Ok(Err(NoUser::NoAccount)),
        },
        None => return Ok(Err(NoUser::NoAccount)),
    };
    let link = FederationLink {
        idp_id: idp.id,
        subject: identity.subject.clone(),
        user_id: user.id,
        company_id: *company,
        linked_at: services.ctx.clock.now(),
    };
    match federation.put_federation_link(&link).await? {
        Linked::Linked => {
            if user.status != UserStatus::Active {
                return Ok(Err(NoUser::Inactive));
            }
            Ok(Ok(Resolved {
                user,
                linked: true,
                created,
            }))
        }
        // A sign-in of the same subject in parallel linked first: its link decides.
        Linked::AlreadyLinked(existing) => Ok(linked_user(services, company, &existing.user_id)
            .await?
            .map(|user| Resolved {
                user,
                linked: false,
                created: false,
            })),
    }
}

/// The linked user, if still of the company and active.
async fn linked_user(
    services: &Services,
    company: &PrincipalId,
    user: &PrincipalId,
) -> Result<Result<User, NoUser>, ServerError> {
    match services.ctx.store.principals().get_user(user).await? {
        Some(user) if user.company_id.as_ref() == Some(company) => {
            if user.status == UserStatus::Active {
                Ok(Ok(user))
            } else {
                Ok(Err(NoUser::Inactive))
            }
        }
        _ => Ok(Err(NoUser::NoAccount)),
    }
}

/// The company's user a first sign-in links to, if any.
async fn candidate(
    services: &Services,
    idp: &IdentityProvider,
    identity: &UpstreamIdentity,
) -> Result<Option<User>, ServerError> {
    let principals = services.ctx.store.principals();
    let company = &idp.company_id;
    let of_company = |user: &User| user.company_id.as_ref() == Some(company);
    if let Some(user) = principals
        .get_user_by_external_id(company, &identity.subject.subject)
        .await?
        .filter(of_company)
    {
        return Ok(Some(user));
    }
    if idp.link_by == LinkBy::Email {
        if let Some(address) = identity
            .email
            .as_deref()
            .and_then(|email| ChannelHandle::parse(email).ok())
        {
            let found = principals.get_user_by_email(&address).await?;
            return Ok(found.filter(of_company));
        }
    }
    Ok(None)
}

/// A new user of the IdP's company: its login the verified email (else the subject), its
/// address the email when no other user has it, and no usable password.
async fn just_in_time(
    services: &Services,
    idp: &IdentityProvider,
    identity: &UpstreamIdentity,
) -> Result<Option<User>, ServerError> {
    let Some(company) = services
        .ctx
        .store
        .principals()
        .get_company(&idp.company_id)
        .await?
    else {
        return Ok(None);
    };
    let wanted = identity
        .email
        .as_deref()
        .unwrap_or(&identity.subject.subject);
    let Ok(login) = Login::parse(wanted) else {
        return Ok(None);
    };
    let random = services.ctx.random.as_ref();
    // Nobody knows this password: the user signs in through the IdP (or is given one later).
    let password_hash = PasswordHash::new(&random.opaque_token(), random);
    let mut user = User {
        id: PrincipalId::new(random.uuid()),
        login,
        password_hash,
        company_id: Some(company.id),
        is_admin: false,
        geolocation: company.geolocation.clone(),
        status: UserStatus::Active,
        created_at: services.ctx.clock.now(),
        email: identity.email.clone(),
        local_sign_in: false,
        directory: None,
        revision: 0,
        deprovisioned_at: None,
        external_id: None,
    };
    let principals = services.ctx.store.principals();
    if principals.insert_user(&user).await? == Inserted::Inserted {
        return Ok(Some(user));
    }
    // The address is another user's (of any company): the new user goes without it.
    user.email = None;
    match principals.insert_user(&user).await? {
        Inserted::Inserted => Ok(Some(user)),
        // The login is taken too: no user can be made without guessing another name.
        Inserted::AlreadyExists => Ok(None),
    }
}
