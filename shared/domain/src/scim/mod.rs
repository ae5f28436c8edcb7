//! SCIM 2.0 (RFC 7643 schemas, RFC 7644 protocol) for `Users` and `Groups`: the protocol logic
//! without I/O. Resources are `serde_json::Value` objects in their SCIM JSON form; the HTTP and
//! store layers parse, check and reshape them through this module.

pub mod filter;
pub mod normalize;
pub mod patch;
pub mod path;
pub mod projection;
pub mod schema;

mod discovery;
mod error;
mod lexer;
mod value;

pub use discovery::service_provider_config;
pub use error::{ScimError, ScimType};

pub const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub const ENTERPRISE_USER_SCHEMA: &str =
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
pub const GROUP_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
pub const PATCH_OP_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
pub const LIST_RESPONSE_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
pub const ERROR_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:Error";
pub const SEARCH_REQUEST_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
pub const BULK_REQUEST_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:BulkRequest";
pub const BULK_RESPONSE_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:BulkResponse";
pub const SCHEMA_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Schema";
pub const RESOURCE_TYPE_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
pub const SERVICE_PROVIDER_CONFIG_SCHEMA: &str =
    "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
