//! The authorize request's `resource` (RFC 8707): checked after every other parameter, against
//! the deployment's `RESOURCES` and the client's `--resource` list. A refusal is an error
//! redirect with `invalid_target` (code 160): by then the redirect address is the client's own.

use super::redirect::ErrorRedirect;
use super::request::{AuthorizeParams, AuthorizeRejection, ValidatedAuthorization};
use crate::config::Policy;
use crate::domain::Client;
use crate::errors::ErrorCode;

/// Sets `request.resources` to the request's resources, each allowed for `client`.
pub(super) fn check_resources(
    policy: &Policy,
    client: &Client,
    params: &AuthorizeParams,
    request: &mut ValidatedAuthorization,
) -> Result<(), AuthorizeRejection> {
    match policy
        .resources
        .requested(&client.resources, &params.resources)
    {
        Ok(resources) => {
            request.resources = resources;
            Ok(())
        }
        Err(refusal) => {
            tracing::info!(%refusal, "authorize request: resource refused");
            Err(AuthorizeRejection::Redirect(ErrorRedirect::from_code(
                &request.redirect_uri,
                request.state.as_deref(),
                ErrorCode::InvalidTarget,
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ClientId, ClientSecrets, SecretId};
    use crate::domain::{NewClient, Resource, ResourcePolicy, Scopes};
    use crate::flows::authorize::ValidatedAuthorization;
    use crate::random::{OsRandom, RandomExt};
    use crate::secrets::TokenHash;

    fn client(resources: &[&str]) -> Client {
        let secrets =
            ClientSecrets::first(SecretId::new(OsRandom.uuid()), TokenHash::of("s"), 0, None);
        NewClient {
            resources: resources
                .iter()
                .map(|r| Resource::parse(r).unwrap())
                .collect(),
            ..NewClient::named("app", Scopes::empty())
        }
        .into_client(ClientId::new(OsRandom.uuid()), secrets, 0)
    }

    fn params(resources: &[&str]) -> AuthorizeParams {
        AuthorizeParams {
            resources: resources.iter().map(|r| (*r).to_owned()).collect(),
            ..AuthorizeParams::default()
        }
    }

    fn check(
        policy: &Policy,
        client: &Client,
        params: &AuthorizeParams,
    ) -> Result<Vec<String>, String> {
        let mut request = ValidatedAuthorization {
            state: Some("st".into()),
            ..ValidatedAuthorization::for_tests("openid")
        };
        match check_resources(policy, client, params, &mut request) {
            Ok(()) => Ok(request.resources.iter().map(ToString::to_string).collect()),
            Err(AuthorizeRejection::Redirect(redirect)) => {
                assert_eq!(redirect.error_code(), Some(160));
                Err(redirect.location(
                    &crate::domain::Geolocation::parse("https://us.example.com").unwrap(),
                ))
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn allowed_resources_are_granted_and_others_redirect_with_160() {
        let policy = Policy::default();
        let anyone = client(&[]);
        assert_eq!(check(&policy, &anyone, &params(&[])), Ok(vec![]));
        assert_eq!(
            check(
                &policy,
                &anyone,
                &params(&["https://a.example.com", "https://b.example.com/x"])
            ),
            Ok(vec![
                "https://a.example.com".into(),
                "https://b.example.com/x".into()
            ])
        );
        let refused = check(&policy, &anyone, &params(&["https://a.example.com#f"])).unwrap_err();
        assert!(refused.starts_with("https://app.example/cb?"), "{refused}");
        assert!(refused.contains("error=invalid_target"), "{refused}");
        assert!(refused.contains("error_code=160"), "{refused}");
        assert!(refused.contains("state=st"), "{refused}");
        assert!(check(&policy, &anyone, &params(&["/relative"])).is_err());
        let narrowed = client(&["https://a.example.com"]);
        assert!(check(&policy, &narrowed, &params(&["https://b.example.com"])).is_err());
        let listed = Policy {
            resources: ResourcePolicy::parse("https://b.example.com").unwrap(),
            ..Policy::default()
        };
        assert!(check(&listed, &anyone, &params(&["https://a.example.com"])).is_err());
        assert!(check(&listed, &anyone, &params(&["https://b.example.com"])).is_ok());
    }
}
