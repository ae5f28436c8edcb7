//! The command line. Verbs, argument names and value spellings are fixed, because operators script
//! them; only global flags may be added.
//!
//! No `Debug` derives: `users create --password` must never end up in a debug print.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use token_domain::audit::rfc3339;
use token_domain::clock::UnixTime;
use token_domain::{
    ClientId, CompanyStatus, ConsumerKey, FamilyId, Geolocation, GrantType, Login, MfaPolicy,
    PrincipalId, Resource, Scopes,
};

#[derive(Parser)]
#[command(
    name = "tokenctl",
    version,
    about = "Administration of the OAuth 2.0 token service: applications, companies, users, \
             the legacy-token migration, token families, the table and the signing keys",
    after_help = "Configuration comes from the same environment as the services (STORE, DATA_DIR, \
                  TABLE_NAME, DYNAMODB_ENDPOINT, GEOLOCATION, ...); the global flags override it.\n\
                  Exit status: 0 success, 1 failure, 2 invalid arguments or configuration, \
                  3 not found, 4 conflict, 5 store unavailable."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args)]
pub struct GlobalArgs {
    /// Print one JSON object on stdout instead of readable text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Which store to use: sqlite or dynamodb.
    #[arg(long, global = true, value_name = "KIND", env = "STORE")]
    pub store: Option<String>,
    /// Directory of the embedded store and the local signing key.
    #[arg(long, global = true, value_name = "DIR", env = "DATA_DIR")]
    pub data_dir: Option<String>,
    /// DynamoDB table.
    #[arg(long, global = true, value_name = "NAME", env = "TABLE_NAME")]
    pub table_name: Option<String>,
    /// A local DynamoDB endpoint.
    #[arg(long, global = true, value_name = "URL", env = "DYNAMODB_ENDPOINT")]
    pub dynamodb_endpoint: Option<String>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Applications (OAuth clients).
    #[command(subcommand)]
    Clients(ClientsCommand),
    /// Companies (top-level principals).
    #[command(subcommand)]
    Companies(CompaniesCommand),
    /// Users.
    #[command(subcommand)]
    Users(UsersCommand),
    /// Consumer keys of the deprecated framework.
    #[command(subcommand)]
    LegacyApps(LegacyAppsCommand),
    /// Old refresh tokens to migrate.
    #[command(subcommand)]
    LegacyTokens(LegacyTokensCommand),
    /// Issued token families.
    #[command(subcommand)]
    Tokens(TokensCommand),
    /// Users' sign-in sessions on the pages (single sign-on).
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Initial access tokens for dynamic client registration (`DYNAMIC_REGISTRATION=token`).
    #[command(subcommand)]
    RegistrationTokens(RegistrationTokensCommand),
    /// The DynamoDB table.
    #[command(subcommand)]
    Table(TableCommand),
    /// The ES256 signing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Audit events about a principal, a client or a token family, newest first (with --json,
    /// one object a line).
    Audit(AuditArgs),
}

#[derive(Args)]
#[command(group(
    ArgGroup::new("subject")
        .required(true)
        .args(["principal", "client", "family", "deployment"])
))]
pub struct AuditArgs {
    /// A user or company id.
    #[arg(long, value_name = "ID")]
    pub principal: Option<PrincipalId>,
    /// A client id, or a client ID metadata document's URL (the client its id is derived from).
    #[arg(long, value_name = "ID", value_parser = parse_wire_client_id)]
    pub client: Option<ClientId>,
    #[arg(long, value_name = "ID")]
    pub family: Option<FamilyId>,
    /// Events about no principal, client or family (key rotations, lockouts of unknown logins).
    #[arg(long)]
    pub deployment: bool,
    /// Only events at or after this time (RFC 3339, e.g. 2026-11-25T09:00:00Z, or a date).
    #[arg(long, value_parser = parse_time, value_name = "RFC3339")]
    pub since: Option<UnixTime>,
}

mod clients;
mod idps;
mod users;

pub use clients::*;
pub use idps::*;
pub use users::*;

#[derive(Subcommand)]
pub enum CompaniesCommand {
    /// Create a company; prints its company_id.
    Create {
        #[arg(long)]
        name: String,
        /// The company's home deployment [default: GEOLOCATION].
        #[arg(long, value_parser = parse_geolocation, value_name = "URL")]
        geolocation: Option<Geolocation>,
    },
    /// Allow an application to obtain tokens for a company.
    EnableClient {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
    },
    /// Set a company's status.
    SetStatus {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
        #[arg(value_enum)]
        status: CompanyStatusArg,
    },
    /// Whether the company's users must finish every page sign-in with a passkey or an
    /// authenticator-app code (and are refused the password grant).
    SetMfa {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
        #[arg(value_enum)]
        policy: MfaPolicyArg,
    },
    /// Whether the company's users sign in only through its identity providers (required: the
    /// password and one-time password grants refuse them, code 181, except users set with
    /// `users set-local-sign-in USER_ID on`).
    SetSso {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
        #[arg(value_enum)]
        policy: SsoPolicyArg,
    },
    /// Whether the company's users' agents may be given identity assertions (ID-JAG) for other
    /// apps by token exchange (default on; off: code 182).
    SetIdJag {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
        #[arg(value_enum)]
        switch: OnOff,
    },
    /// The company's identity providers (its own OpenID Connect IdPs).
    #[command(subcommand)]
    Idps(IdpsCommand),
    /// The company's SCIM provisioning tokens (`/scim/v2`).
    #[command(subcommand)]
    ScimTokens(ScimTokensCommand),
    /// The directory group whose members administer the company (SCIM `Groups`); `--none`
    /// names none.
    SetAdminGroup {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
        #[arg(value_name = "NAME", required_unless_present = "none")]
        name: Option<String>,
        #[arg(long, conflicts_with = "name")]
        none: bool,
    },
}

#[derive(Subcommand)]
pub enum ScimTokensCommand {
    /// Prints a new provisioning token once (only its digest is kept).
    Create {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
        /// Days until it expires; without it, until revoked.
        #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u32).range(1..=3650))]
        expires_in: Option<u32>,
    },
    /// The company's tokens (ids, creation, expiry; never the tokens).
    List {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
    },
    /// Revokes one token at once.
    Revoke {
        #[arg(value_name = "COMPANY_ID")]
        company_id: PrincipalId,
        #[arg(value_name = "TOKEN_ID")]
        token_id: uuid::Uuid,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum MfaPolicyArg {
    Required,
    Optional,
}

impl From<MfaPolicyArg> for MfaPolicy {
    fn from(value: MfaPolicyArg) -> Self {
        match value {
            MfaPolicyArg::Required => Self::Required,
            MfaPolicyArg::Optional => Self::Optional,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum CompanyStatusArg {
    Active,
    Disabled,
    Maintenance,
}

impl From<CompanyStatusArg> for CompanyStatus {
    fn from(value: CompanyStatusArg) -> Self {
        match value {
            CompanyStatusArg::Active => Self::Active,
            CompanyStatusArg::Disabled => Self::Disabled,
            CompanyStatusArg::Maintenance => Self::Maintenance,
        }
    }
}

#[derive(Subcommand)]
pub enum LegacyAppsCommand {
    /// Link an old application's consumer key to the application that replaces it.
    Link {
        #[arg(value_name = "CONSUMER_KEY", value_parser = parse_consumer_key)]
        consumer_key: ConsumerKey,
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
    },
}

#[derive(Subcommand)]
pub enum LegacyTokensCommand {
    /// Import old refresh tokens from a JSON Lines file (`-` reads standard input). Invalid lines
    /// are skipped and listed; re-running the same file creates no duplicates.
    Import {
        #[arg(value_name = "FILE.jsonl")]
        file: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum TokensCommand {
    /// Revoke a token family: its refresh and access tokens stop working.
    RevokeFamily {
        #[arg(value_name = "FAMILY_ID")]
        family_id: FamilyId,
    },
}

#[derive(Subcommand)]
pub enum SessionsCommand {
    /// A user's live sign-in sessions: id (`sid`), browser, address, started, last seen, and
    /// the applications given an authorization in each.
    List {
        #[arg(long, value_name = "ID")]
        principal: PrincipalId,
    },
    /// End every live sign-in session of a user: the browsers must sign in again, and each
    /// session's applications are sent a back-channel logout.
    Revoke {
        #[arg(long, value_name = "ID")]
        principal: PrincipalId,
    },
}

#[derive(Subcommand)]
pub enum RegistrationTokensCommand {
    /// A new initial access token, printed once as {"token", "expires"}; only its hash is
    /// stored. Whoever holds it may register clients until it expires.
    Create {
        /// Days until it expires (1 to 365; default 30).
        #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u32).range(1..=365))]
        expires_in: Option<u32>,
    },
}

#[derive(Subcommand)]
pub enum TableCommand {
    /// Create the DynamoDB table with TTL on `expires_at` if it does not exist (SQLite: create
    /// the schema). Idempotent.
    Create,
}

#[derive(Subcommand)]
pub enum KeysCommand {
    /// One rotation step of the stored key ring: the `next` key becomes `active`, the active
    /// key `retired`, and a new `next` key is published (a ring without a `next` key only gets
    /// one). Refused while the `next` key is too recent. Running services see it within a
    /// minute.
    Rotate,
    /// The ring's keys, oldest first, with their states and times.
    List,
    /// Withdraws a key at once (a compromised one): it leaves the ring and the JWK Set within
    /// minutes. Revoking the active key makes the next key sign immediately; a new next key is
    /// published.
    Revoke {
        /// The key's id (`kid`), as `keys list` shows it. A kid is base64url, so one in 64
        /// starts with `-`: taken as the value, not as an option.
        #[arg(allow_hyphen_values = true)]
        kid: String,
    },
    /// Trusts the stored ring as it is and writes it back with its MAC: for a ring written
    /// before rings carried one, after checking its keys with `keys list`.
    Adopt,
}

fn parse_time(text: &str) -> Result<UnixTime, String> {
    rfc3339::parse(text).ok_or_else(|| format!("{text:?} is not an RFC 3339 time"))
}

fn parse_scopes(text: &str) -> Result<Scopes, String> {
    Scopes::parse(text).map_err(|e| e.to_string())
}

fn parse_resource(text: &str) -> Result<Resource, String> {
    Resource::parse(text).map_err(|e| format!("{e}: {text:?}"))
}

fn parse_grant(text: &str) -> Result<GrantType, String> {
    GrantType::parse(text.trim()).ok_or_else(|| {
        format!("unknown grant {text:?}: expected client_credentials, refresh_token, password, authorization_code, otp, device_code or token_exchange")
    })
}

fn parse_geolocation(text: &str) -> Result<Geolocation, String> {
    Geolocation::parse(text).map_err(|e| e.to_string())
}

fn parse_login(text: &str) -> Result<Login, String> {
    Login::parse(text).map_err(|e| e.to_string())
}

fn parse_consumer_key(text: &str) -> Result<ConsumerKey, String> {
    ConsumerKey::parse(text).map_err(|e| e.to_string())
}

/// `--client` as tokens show it: a UUID, or a client ID metadata document's URL.
fn parse_wire_client_id(text: &str) -> Result<ClientId, String> {
    ClientId::from_wire(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tokenctl").chain(args.iter().copied()))
    }

    /// A kid is base64url: one in 64 starts with `-` (one in 4,096 with `--`), and must still
    /// be revocable without a `--` before it.
    #[test]
    fn a_kid_starting_with_a_hyphen_is_a_kid() {
        for kid in ["-989ww765Jikew", "--989ww765Jikew-X1o", "plain-kid"] {
            match parse(&["keys", "revoke", kid]).map(|cli| cli.command) {
                Ok(Command::Keys(KeysCommand::Revoke { kid: parsed })) => assert_eq!(parsed, kid),
                Ok(_) => panic!("{kid}: another command"),
                Err(error) => panic!("{kid}: {error}"),
            }
        }
        assert!(parse(&["keys", "revoke"]).is_err());
    }

    #[test]
    fn scripted_spellings_parse() {
        let cli = parse(&[
            "clients",
            "create",
            "--name",
            "App",
            "--scopes",
            "a b",
            "--grants",
            "client_credentials,refresh_token",
            "--no-refresh",
            "--json",
        ])
        .unwrap();
        assert!(cli.global.json);
        match cli.command {
            Command::Clients(ClientsCommand::Create(c)) => {
                assert_eq!(c.scopes.to_string(), "a b");
                assert_eq!(
                    c.grants,
                    vec![GrantType::ClientCredentials, GrantType::RefreshToken]
                );
                assert!(c.no_refresh);
            }
            _ => panic!("wrong verb"),
        }
        let id = "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6";
        assert!(parse(&["companies", "set-status", id, "maintenance"]).is_ok());
        assert!(parse(&["companies", "set-status", id, "paused"]).is_err());
        assert!(parse(&["companies", "set-mfa", id, "required"]).is_ok());
        assert!(parse(&["companies", "set-mfa", id, "optional"]).is_ok());
        assert!(parse(&["companies", "set-mfa", id, "sometimes"]).is_err());
        assert!(parse(&["companies", "enable-client", id, id]).is_ok());
        assert!(parse(&[
            "users",
            "create",
            "--login",
            "a",
            "--password",
            "p",
            "--status",
            "logon-denied"
        ])
        .is_ok());
        assert!(parse(&["users", "create", "--login", "a"]).is_err());
        assert!(parse(&["legacy-apps", "link", "qyprd-OLD", id]).is_ok());
        assert!(parse(&["legacy-tokens", "import", "f.jsonl"]).is_ok());
        assert!(parse(&["tokens", "revoke-family", id]).is_ok());
        assert!(parse(&["tokens", "revoke-family", "nope"]).is_err());
        assert!(parse(&["--store", "dynamodb", "table", "create"]).is_ok());
        assert!(parse(&["keys", "rotate"]).is_ok());
        assert!(parse(&["keys", "list"]).is_ok());
        assert!(parse(&["keys", "rotate", "--file", "ring.json"]).is_err());
        assert!(parse(&["audit", "--family", id, "--since", "2026-11-25T09:00:00Z"]).is_ok());
        assert!(parse(&["audit", "--client", id, "--json"]).is_ok());
        assert!(parse(&["audit", "--client", "https://agent.example/client.json"]).is_ok());
        assert!(parse(&["audit", "--client", "agent"]).is_err());
        assert!(parse(&["audit", "--deployment"]).is_ok());
        assert!(parse(&["audit"]).is_err(), "a subject is required");
        assert!(parse(&["audit", "--client", id, "--family", id]).is_err());
        assert!(parse(&["audit", "--client", id, "--since", "yesterday"]).is_err());
    }
}
