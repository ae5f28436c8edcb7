//! The request bodies as the OpenAPI document describes them. The handlers read every body as
//! `TokenParams` (a form or a JSON object, `http::body`), which checks each parameter itself and
//! answers a catalogue code for a missing one; these types give the document the parameters'
//! names and meanings, and are never built.

use utoipa::ToSchema;

/// A parameter's value in a form or JSON body. JSON bodies may give numbers and booleans, taken as
/// their text, and `null` or an empty string, taken as absent (`TokenParams::from_json`).
fn parameter_value() -> utoipa::openapi::Object {
    parameter_value_builder().build()
}

fn parameter_value_builder() -> utoipa::openapi::schema::ObjectBuilder {
    use utoipa::openapi::schema::{SchemaType, Type};
    utoipa::openapi::ObjectBuilder::new().schema_type(SchemaType::from_iter([
        Type::String,
        Type::Number,
        Type::Boolean,
        Type::Null,
    ]))
}

/// The one channel, as an example, so that the fuzzer's example requests reach the mailer.
fn email_channel_type() -> utoipa::openapi::Object {
    parameter_value_builder().examples(["email"]).build()
}

/// The demo user's address (shared/local-server), as an example.
fn email_channel_handle() -> utoipa::openapi::Object {
    parameter_value_builder()
        .examples(["user@demo.example"])
        .build()
}

/// A form of an endpoint that authenticates its client: the client's credentials (a secret, or a
/// `private_key_jwt` assertion) come first, then the endpoint's own parameters. One declaration of
/// the credentials, so that a new client authentication method reaches every such endpoint.
macro_rules! client_form {
    (
        $(#[$attribute:meta])*
        pub struct $name:ident { $($(#[$field_attribute:meta])* pub $field:ident: $type:ty,)* }
    ) => {
        $(#[$attribute])*
        #[derive(ToSchema)]
        pub struct $name {
            #[schema(schema_with = parameter_value)]
            pub client_id: Option<String>,
            #[schema(schema_with = parameter_value)]
            pub client_secret: Option<String>,
            /// `private_key_jwt` (RFC 7523): `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`.
            #[schema(schema_with = parameter_value)]
            pub client_assertion_type: Option<String>,
            /// `private_key_jwt`: the client's signed JWT, instead of `client_secret`.
            #[schema(schema_with = parameter_value)]
            pub client_assertion: Option<String>,
            $($(#[$field_attribute])* pub $field: $type,)*
        }
    };
}

client_form! {
/// Parameters of the token endpoint (form or JSON; all optional here because each missing one
/// has its own catalogue code).
pub struct TokenRequestForm {
    #[schema(schema_with = parameter_value)]
    pub grant_type: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub username: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub password: Option<String>,
    /// `password` (the default) or `authtoken`.
    #[schema(schema_with = parameter_value)]
    pub credtype: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub refresh_token: Option<String>,
}
}

client_form! {
/// Parameters of revocation and introspection (form or JSON).
pub struct ClientTokenForm {
    #[schema(schema_with = parameter_value)]
    pub token: Option<String>,
    /// `access_token` or `refresh_token`; only a hint.
    #[schema(schema_with = parameter_value)]
    pub token_type_hint: Option<String>,
}
}

/// Parameters of the old-token exchange (form or JSON).
#[derive(ToSchema)]
pub struct ExchangeForm {
    /// The old refresh token.
    #[schema(schema_with = parameter_value)]
    pub token: Option<String>,
    /// The calling app's client secret.
    #[schema(schema_with = parameter_value)]
    pub secret: Option<String>,
}

/// Parameters of the company auth-token endpoint's body (form or JSON).
#[derive(ToSchema)]
pub struct CompanyAuthTokenForm {
    #[schema(schema_with = parameter_value)]
    pub client_id: Option<String>,
}

/// The sign-in and consent forms of `POST /oauth2/v0/authorize` (`flows::authorize::SubmittedForm`).
#[derive(ToSchema)]
pub struct AuthorizeForm {
    /// The page's anti-forgery token, checked against the pending-request cookie.
    pub csrf_token: Option<String>,
    /// Sign-in form.
    pub login: Option<String>,
    /// Sign-in form.
    pub password: Option<String>,
    /// The consent form's button: `approve` or `deny`.
    pub decision: Option<String>,
}

client_form! {
/// Parameters of `POST /oauth2/v0/otp` (form or JSON; all optional here because each missing one
/// has its own catalogue code).
pub struct OtpRequestForm {
    /// `email`, the only channel.
    #[schema(schema_with = email_channel_type)]
    pub channel_type: Option<String>,
    /// The e-mail address.
    #[schema(schema_with = email_channel_handle)]
    pub channel_handle: Option<String>,
    /// Shown in the mail, and bound to the one-time password (the `otp` grant repeats it).
    #[schema(schema_with = parameter_value)]
    pub name: Option<String>,
    /// Shown in the mail, and bound to the one-time password.
    #[schema(schema_with = parameter_value)]
    pub company: Option<String>,
    /// Shown in the mail, and bound to the one-time password.
    #[schema(schema_with = parameter_value)]
    pub link: Option<String>,
}
}
