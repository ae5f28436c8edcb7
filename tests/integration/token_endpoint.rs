//! `POST /v0/token` over real HTTP, on both stores: every grant, rotation and reuse detection,
//! expiry by the manual clock, and the specification's error catalogue. One module per subject; the
//! request builders they share are here.

mod company_grant;
mod issuance;
mod refusals;

use crate::support::app::TestClient;

const PASSWORD: &str = "correct horse battery staple";

fn client_form<'a>(
    client: &'a TestClient,
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    form.extend_from_slice(extra);
    form
}
