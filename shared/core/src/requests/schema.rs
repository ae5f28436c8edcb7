//! How the OpenAPI document describes the request types: each parameter as a value of a form or
//! a JSON object, and a request with a client's credentials as one flat object.

use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{Object, RefOr};

/// A parameter's value in a form or JSON body. JSON bodies may give numbers and booleans, taken
/// as their text, and `null` or an empty string, taken as absent.
pub fn parameter_value() -> Object {
    parameter_value_builder().build()
}

fn parameter_value_builder() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::from_iter([
        Type::String,
        Type::Number,
        Type::Boolean,
        Type::Null,
    ]))
}

/// The one channel, as an example, so that the fuzzer's example requests reach the mailer.
pub(super) fn email_channel_type() -> Object {
    parameter_value_builder().examples(["email"]).build()
}

/// The demo user's address (shared/local-server), as an example.
pub(super) fn email_channel_handle() -> Object {
    parameter_value_builder()
        .examples(["user@demo.example"])
        .build()
}

/// An object with the one parameter `name`, for a parameter no request type holds as sent.
pub(super) fn parameter(name: &str, description: &str) -> RefOr<Schema> {
    let value = parameter_value_builder()
        .description(Some(description))
        .build();
    Schema::Object(ObjectBuilder::new().property(name, value).build()).into()
}

/// One object with the properties of every part (each a request type's derived schema, whose
/// fields are parameters of the same body), none required: a missing parameter is answered
/// with its own catalogue code, not refused by the document.
pub(super) fn flat_form(
    description: &str,
    parts: impl IntoIterator<Item = RefOr<Schema>>,
) -> RefOr<Schema> {
    let mut form = ObjectBuilder::new().description(Some(description));
    for part in parts {
        let RefOr::T(Schema::Object(object)) = part else {
            unreachable!("request types are structs, described inline as objects")
        };
        for (name, property) in object.properties {
            form = form.property(name, property);
        }
    }
    Schema::Object(form.build()).into()
}
