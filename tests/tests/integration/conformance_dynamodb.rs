//! The storage conformance suite against DynamoDB Local.
