//! `tokenctl companies idps`, `companies set-sso` and the users' federation verbs: their
//! arguments.

use clap::{ArgGroup, Args, Subcommand, ValueEnum};
use token_domain::{IdpId, LinkBy, PrincipalId, SsoPolicy};

#[derive(Subcommand)]
pub enum IdpsCommand {
    /// Add an identity provider; prints its idp_id and the redirect_uri to register at the
    /// IdP. Nothing is fetched now: the IdP's metadata is read at the first sign-in.
    Add(IdpsAdd),
    /// The company's identity providers, oldest first (never their secrets).
    List {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
    },
    /// One identity provider (never its secret).
    Show {
        #[arg(value_name = "IDP_ID")]
        idp_id: IdpId,
    },
    /// Remove an identity provider with its domains and every user's link to it.
    Remove {
        #[arg(value_name = "IDP_ID")]
        idp_id: IdpId,
    },
    /// Read a SAML identity provider's metadata again, from its URL or from the file given
    /// (after the IdP rolled its certificate, say): the old certificates stop counting.
    Refresh {
        #[arg(value_name = "IDP_ID")]
        idp_id: IdpId,
        #[arg(long, value_name = "FILE")]
        metadata_file: Option<std::path::PathBuf>,
    },
}

/// Each flag is one the contract spells; they are independent, so no enum would group them.
#[allow(clippy::struct_excessive_bools)]
#[derive(Args)]
#[command(group(ArgGroup::new("protocol").required(true).args(["oidc", "saml"])))]
pub struct IdpsAdd {
    #[arg(value_name = "COMPANY_ID")]
    pub company_id: PrincipalId,
    /// An OpenID Connect provider.
    #[arg(long)]
    pub oidc: bool,
    /// A SAML 2.0 provider, from its metadata (--metadata-file or --metadata-url).
    #[arg(long)]
    pub saml: bool,
    /// The SAML IdP's metadata document.
    #[arg(long, value_name = "FILE", conflicts_with = "metadata_url")]
    pub metadata_file: Option<std::path::PathBuf>,
    /// Where the SAML IdP publishes its metadata: fetched now and by `idps refresh`, under the
    /// outbound rules (https, no private address unless allowed).
    #[arg(long, value_name = "URL")]
    pub metadata_url: Option<String>,
    /// Accept sign-ins the SAML IdP starts (unsolicited responses); they land on the account
    /// page.
    #[arg(long)]
    pub allow_idp_initiated: bool,
    /// The SAML attribute the email is read from [default: the first of email, mail and the
    /// WS-Federation emailaddress claim].
    #[arg(long, value_name = "NAME")]
    pub email_attribute: Option<String>,
    /// The OpenID Provider's issuer: an https URL, compared exactly with its ID tokens' `iss`.
    #[arg(long, value_name = "URL")]
    pub issuer: Option<String>,
    /// Our client id at the IdP.
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// Our client secret at the IdP (visible to other local users in the process list; prefer
    /// --client-secret-stdin on shared machines). Stored sealed, never printed.
    #[arg(long, value_name = "S", conflicts_with = "client_secret_stdin")]
    pub client_secret: Option<String>,
    /// Read the client secret from the first line of standard input.
    #[arg(long)]
    pub client_secret_stdin: bool,
    /// What the sign-in page's button says ("Sign in with Acme").
    #[arg(long)]
    pub name: String,
    /// Logins of these domains are sent to this IdP (comma-separated).
    #[arg(long, value_name = "DOMAINS", value_delimiter = ',')]
    pub domains: Vec<String>,
    /// What the IdP is asked for; must contain openid [default: "openid email profile"].
    #[arg(long, value_name = "SCOPES")]
    pub scopes: Option<String>,
    /// How a first sign-in finds the user when no external id matches.
    #[arg(long, value_enum, default_value = "email")]
    pub link_by: LinkByArg,
    /// Whether a first sign-in that finds no user creates one in the company.
    #[arg(long, value_enum, default_value = "on")]
    pub jit: OnOff,
    /// Count a sign-in at this IdP as two factors even when it does not report mfa.
    #[arg(long)]
    pub trust_mfa: bool,
    /// Accept this IdP's ID-JAG assertions for its users.
    #[arg(long)]
    pub id_jag: bool,
}

#[derive(Args)]
pub struct UsersSetLocalSignIn {
    pub user_id: PrincipalId,
    /// on: a break-glass user, who signs in with a password even when the company requires
    /// its identity providers.
    #[arg(value_enum)]
    pub local_sign_in: OnOff,
}

#[derive(Args)]
#[command(group(ArgGroup::new("value_or_clear").required(true).args(["external_id", "clear"])))]
pub struct UsersSetExternalId {
    pub user_id: PrincipalId,
    /// The id the company's directory knows the user by; unique within the company, compared
    /// exactly.
    #[arg(value_name = "VALUE", allow_hyphen_values = true)]
    pub external_id: Option<String>,
    /// Remove the user's external id instead.
    #[arg(long)]
    pub clear: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl OnOff {
    pub fn is_on(self) -> bool {
        matches!(self, Self::On)
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LinkByArg {
    Email,
    None,
}

impl From<LinkByArg> for LinkBy {
    fn from(value: LinkByArg) -> Self {
        match value {
            LinkByArg::Email => Self::Email,
            LinkByArg::None => Self::None,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum SsoPolicyArg {
    Optional,
    Required,
}

impl From<SsoPolicyArg> for SsoPolicy {
    fn from(value: SsoPolicyArg) -> Self {
        match value {
            SsoPolicyArg::Optional => Self::Optional,
            SsoPolicyArg::Required => Self::Required,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::args::{Cli, Command, CompaniesCommand, UsersCommand};

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tokenctl").chain(args.iter().copied()))
    }

    const ID: &str = "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6";

    #[test]
    fn idps_add_takes_every_option() {
        let cli = parse(&[
            "companies",
            "idps",
            "add",
            ID,
            "--oidc",
            "--issuer",
            "https://idp.example",
            "--client-id",
            "concur",
            "--client-secret-stdin",
            "--name",
            "Sign in with Acme",
            "--domains",
            "a.example,b.example",
            "--scopes",
            "openid email",
            "--link-by",
            "none",
            "--jit",
            "off",
            "--trust-mfa",
            "--id-jag",
        ]);
        let Ok(Cli {
            command: Command::Companies(CompaniesCommand::Idps(IdpsCommand::Add(add))),
            ..
        }) = cli
        else {
            panic!("idps add");
        };
        assert!(add.oidc && !add.saml && add.client_secret_stdin && add.trust_mfa && add.id_jag);
        assert_eq!(add.domains, ["a.example", "b.example"]);
        assert_eq!(LinkBy::from(add.link_by), LinkBy::None);
        assert!(!add.jit.is_on());
        let add = |extra: &[&str]| {
            parse(&[&["companies", "idps", "add", ID, "--name", "Acme"], extra].concat())
        };
        assert!(add(&[]).is_err(), "a protocol is required");
        assert!(add(&["--oidc", "--saml"]).is_err());
        assert!(add(&["--oidc", "--client-secret", "s", "--client-secret-stdin"]).is_err());
        assert!(add(&["--oidc", "--jit", "maybe"]).is_err());
        for verb in ["list", "show", "remove"] {
            assert!(parse(&["companies", "idps", verb, ID]).is_ok(), "{verb}");
            assert!(
                parse(&["companies", "idps", verb, "nope"]).is_err(),
                "{verb}"
            );
        }
    }

    #[test]
    fn sso_and_the_users_verbs_parse() {
        assert!(parse(&["companies", "set-sso", ID, "required"]).is_ok());
        assert!(parse(&["companies", "set-sso", ID, "optional"]).is_ok());
        assert!(parse(&["companies", "set-sso", ID, "sometimes"]).is_err());
        assert!(parse(&["users", "set-local-sign-in", ID, "on"]).is_ok());
        assert!(parse(&["users", "set-local-sign-in", ID, "yes"]).is_err());
        match parse(&["users", "set-external-id", ID, "-00u1"]).map(|cli| cli.command) {
            Ok(Command::Users(UsersCommand::SetExternalId(args))) => {
                assert_eq!(args.external_id.as_deref(), Some("-00u1"));
                assert!(!args.clear);
            }
            _ => panic!("set-external-id"),
        }
        assert!(parse(&["users", "set-external-id", ID, "--clear"]).is_ok());
        assert!(parse(&["users", "set-external-id", ID]).is_err());
        assert!(parse(&["users", "set-external-id", ID, "x", "--clear"]).is_err());
        assert!(parse(&["users", "links", ID]).is_ok());
        assert!(parse(&["users", "unlink", ID, ID]).is_ok());
        assert!(parse(&["users", "unlink", ID]).is_err());
    }
}
