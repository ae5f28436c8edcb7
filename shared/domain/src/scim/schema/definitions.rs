//! The supported attributes, with the characteristics RFC 7643 §4.1, §4.2, §4.3, §3.1 and the
//! schema representations of §8.7.1 give them. Only what the service stores and serves is here.

use super::{Attribute, AttributeType, Mutability, ResourceType, Returned, Schema, Uniqueness};
use crate::scim::{ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, USER_SCHEMA};

/// The defaults of RFC 7643 §2.2 for an attribute whose characteristics are not given.
const fn attribute(
    name: &'static str,
    kind: AttributeType,
    description: &'static str,
) -> Attribute {
    Attribute {
        name,
        kind,
        multi_valued: false,
        required: false,
        case_exact: false,
        mutability: Mutability::ReadWrite,
        returned: Returned::Default,
        uniqueness: Uniqueness::None,
        canonical_values: &[],
        reference_types: &[],
        sub_attributes: &[],
        description,
    }
}

const fn string(name: &'static str, description: &'static str) -> Attribute {
    attribute(name, AttributeType::String, description)
}

const fn complex(
    name: &'static str,
    sub_attributes: &'static [Attribute],
    description: &'static str,
) -> Attribute {
    Attribute {
        sub_attributes,
        ..attribute(name, AttributeType::Complex, description)
    }
}

const fn read_only(attribute: Attribute) -> Attribute {
    Attribute {
        mutability: Mutability::ReadOnly,
        ..attribute
    }
}

const fn case_exact(attribute: Attribute) -> Attribute {
    Attribute {
        case_exact: true,
        ..attribute
    }
}

/// Common attributes (RFC 7643 §3.1): part of every resource, listed in no schema.
pub static COMMON_ATTRIBUTES: &[Attribute] = &[
    Attribute {
        returned: Returned::Always,
        uniqueness: Uniqueness::Server,
        ..read_only(case_exact(string(
            "id",
            "A unique identifier for a SCIM resource as defined by the service provider.",
        )))
    },
    case_exact(string(
        "externalId",
        "A String that is an identifier for the resource as defined by the provisioning client.",
    )),
    read_only(complex(
        "meta",
        &[
            read_only(case_exact(string(
                "resourceType",
                "The name of the resource type of the resource.",
            ))),
            read_only(attribute(
                "created",
                AttributeType::DateTime,
                "The DateTime that the resource was added to the service provider.",
            )),
            read_only(attribute(
                "lastModified",
                AttributeType::DateTime,
                "The most recent DateTime that the details of this resource were updated at the service provider.",
            )),
            Attribute {
                reference_types: &["uri"],
                ..read_only(case_exact(attribute(
                    "location",
                    AttributeType::Reference,
                    "The URI of the resource being returned.",
                )))
            },
            read_only(case_exact(string(
                "version",
                "The version of the resource being returned.",
            ))),
        ],
        "Resource metadata.",
    )),
];

static NAME: &[Attribute] = &[
    string(
        "formatted",
        "The full name, including all middle names, titles, and suffixes as appropriate, formatted for display.",
    ),
    string("familyName", "The family name of the User, or last name."),
    string("givenName", "The given name of the User, or first name."),
    string("middleName", "The middle name(s) of the User."),
    string("honorificPrefix", "The honorific prefix(es) of the User, or title."),
    string("honorificSuffix", "The honorific suffix(es) of the User."),
];

static EMAIL: &[Attribute] = &[
    string("value", "Email addresses for the user."),
    string(
        "display",
        "A human-readable name, primarily used for display purposes.",
    ),
    Attribute {
        canonical_values: &["work", "home", "other"],
        ..string(
            "type",
            "A label indicating the attribute's function, e.g., 'work' or 'home'.",
        )
    },
    attribute(
        "primary",
        AttributeType::Boolean,
        "A Boolean value indicating the 'primary' or preferred attribute value for this attribute.",
    ),
];

static USER_ATTRIBUTES: &[Attribute] = &[
    Attribute {
        required: true,
        uniqueness: Uniqueness::Server,
        ..string(
            "userName",
            "Unique identifier for the User, typically used by the user to directly authenticate to the service provider.",
        )
    },
    complex("name", NAME, "The components of the user's real name."),
    string(
        "displayName",
        "The name of the User, suitable for display to end-users.",
    ),
    Attribute {
        multi_valued: true,
        ..complex("emails", EMAIL, "Email addresses for the user.")
    },
    attribute(
        "active",
        AttributeType::Boolean,
        "A Boolean value indicating the User's administrative status.",
    ),
    Attribute {
        mutability: Mutability::WriteOnly,
        returned: Returned::Never,
        ..string("password", "The User's cleartext password.")
    },
];

static MANAGER: &[Attribute] = &[
    string(
        "value",
        "The id of the SCIM resource representing the User's manager.",
    ),
    Attribute {
        reference_types: &["User"],
        ..attribute(
            "$ref",
            AttributeType::Reference,
            "The URI of the SCIM resource representing the User's manager.",
        )
    },
    read_only(string(
        "displayName",
        "The displayName of the User's manager.",
    )),
];

static ENTERPRISE_USER_ATTRIBUTES: &[Attribute] = &[
    string(
        "employeeNumber",
        "Numeric or alphanumeric identifier assigned to a person, typically based on order of hire or association with an organization.",
    ),
    string("department", "Identifies the name of a department."),
    complex("manager", MANAGER, "The User's manager."),
];

static MEMBER: &[Attribute] = &[
    Attribute {
        mutability: Mutability::Immutable,
        ..string("value", "Identifier of the member of this Group.")
    },
    Attribute {
        mutability: Mutability::Immutable,
        reference_types: &["User", "Group"],
        ..attribute(
            "$ref",
            AttributeType::Reference,
            "The URI corresponding to a SCIM resource that is a member of this Group.",
        )
    },
    Attribute {
        mutability: Mutability::Immutable,
        canonical_values: &["User", "Group"],
        ..string(
            "type",
            "A label indicating the type of resource, e.g., 'User' or 'Group'.",
        )
    },
    read_only(string("display", "A human-readable name for the member.")),
];

static GROUP_ATTRIBUTES: &[Attribute] = &[
    Attribute {
        required: true,
        ..string("displayName", "A human-readable name for the Group.")
    },
    Attribute {
        multi_valued: true,
        ..complex("members", MEMBER, "A list of members of the Group.")
    },
];

pub static USER: Schema = Schema {
    id: USER_SCHEMA,
    name: "User",
    description: "User Account",
    attributes: USER_ATTRIBUTES,
};

pub static ENTERPRISE_USER: Schema = Schema {
    id: ENTERPRISE_USER_SCHEMA,
    name: "EnterpriseUser",
    description: "Enterprise User",
    attributes: ENTERPRISE_USER_ATTRIBUTES,
};

pub static GROUP: Schema = Schema {
    id: GROUP_SCHEMA,
    name: "Group",
    description: "Group",
    attributes: GROUP_ATTRIBUTES,
};

pub static USER_RESOURCE: ResourceType = ResourceType {
    name: "User",
    endpoint: "/Users",
    description: "User Account",
    schema: &USER,
    extensions: &[&ENTERPRISE_USER],
};

pub static GROUP_RESOURCE: ResourceType = ResourceType {
    name: "Group",
    endpoint: "/Groups",
    description: "Group",
    schema: &GROUP,
    extensions: &[],
};
