//! The Connect redirect (spec 4.5): where an administrator's browser takes the auth token.

use url::Url;

use super::denial::CompanyAuthTokenDenial;
use crate::domain::{Client, PrincipalId};
use crate::secrets::Secret;

/// The query parameters the Connect redirect sets. Parameters of the same names already in a
/// registered Connect URL are replaced, so the app reads exactly one of each.
const REDIRECT_PARAMS: [&str; 3] = ["id", "requestToken", "userID"];

/// The app's registered Connect URL, if it is an absolute http(s) URL (application management
/// only registers such URLs).
pub(super) fn connect_url(client: &Client) -> Result<Url, CompanyAuthTokenDenial> {
    client
        .connect_url
        .as_deref()
        .and_then(|u| Url::parse(u).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or(CompanyAuthTokenDenial::BadRequest(
            "the app has no registered Connect URL to redirect to",
        ))
}

/// The Connect URL with `id`, `requestToken` and `userID` appended (spec 4.5). The URL's own
/// query parameters are kept as registered, byte for byte, except any named like ours.
pub(super) fn connect_redirect(
    mut url: Url,
    company: &PrincipalId,
    token: &Secret,
    user: &PrincipalId,
) -> Url {
    if let Some(query) = url.query() {
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| {
                let name = url::form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .map(|(name, _)| name.into_owned());
                !pair.is_empty() && !name.is_some_and(|n| REDIRECT_PARAMS.contains(&n.as_str()))
            })
            .collect();
        let kept = kept.join("&");
        url.set_query((!kept.is_empty()).then_some(kept.as_str()));
    }
    url.query_pairs_mut()
        .append_pair("id", &company.to_string())
        .append_pair("requestToken", token.expose())
        .append_pair("userID", &user.to_string());
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redirect(connect: &str) -> Url {
        let company = PrincipalId::parse("6f1c1d2e-0000-4000-8000-000000000001").unwrap();
        let user = PrincipalId::parse("6f1c1d2e-0000-4000-8000-000000000002").unwrap();
        connect_redirect(
            Url::parse(connect).unwrap(),
            &company,
            &Secret::new("tok-_en"),
            &user,
        )
    }

    #[test]
    fn appends_the_three_parameters() {
        assert_eq!(
            redirect("https://app.example.com/connect").as_str(),
            "https://app.example.com/connect?id=6f1c1d2e-0000-4000-8000-000000000001\
             &requestToken=tok-_en&userID=6f1c1d2e-0000-4000-8000-000000000002"
        );
    }

    #[test]
    fn keeps_existing_parameters_verbatim_and_replaces_ours() {
        let url = redirect("https://app.example.com/c?tenant=a%20b&flag&id=stale&x=1");
        assert_eq!(
            url.query(),
            Some(
                "tenant=a%20b&flag&x=1&id=6f1c1d2e-0000-4000-8000-000000000001\
                 &requestToken=tok-_en&userID=6f1c1d2e-0000-4000-8000-000000000002"
            )
        );
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert_eq!(pairs.iter().filter(|(k, _)| k == "id").count(), 1);
        assert!(pairs.contains(&("tenant".into(), "a b".into())));
    }

    #[test]
    fn encodes_values() {
        let company = PrincipalId::parse("6f1c1d2e-0000-4000-8000-000000000001").unwrap();
        let url = connect_redirect(
            Url::parse("https://app.example.com/c?").unwrap(),
            &company,
            &Secret::new("a+b&c=d"),
            &company,
        );
        let token: Vec<String> = url
            .query_pairs()
            .filter(|(k, _)| k == "requestToken")
            .map(|(_, v)| v.into_owned())
            .collect();
        assert_eq!(token, ["a+b&c=d"]);
        assert!(url.as_str().contains("requestToken=a%2Bb%26c%3Dd"));
    }
}
