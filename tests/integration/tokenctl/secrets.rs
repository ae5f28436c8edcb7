//! What the tool printed over a whole session: secrets only where they are meant to be.

use super::clients::CreatedClients;
use super::target::Target;
use super::users::{ADMIN_PASSWORD, STDIN_PASSWORD};

/// Nothing the tool printed along the way leaked a secret other than at creation: each client
/// secret was printed by exactly one run (its `clients create`), the passwords by none.
pub fn printed_only_at_creation(t: &Target, clients: &CreatedClients) {
    t.fails(&["no-such-verb"], 2);
    assert!(
        t.transcript.lock().unwrap().len() > 30,
        "every run is in the transcript"
    );
    for client_secret in [&clients.partner_secret, &clients.other_secret] {
        assert_eq!(
            t.runs_that_printed(client_secret),
            1,
            "a client secret reprinted"
        );
    }
    for user_password in [ADMIN_PASSWORD, STDIN_PASSWORD] {
        assert_eq!(t.runs_that_printed(user_password), 0, "a password printed");
    }
}
