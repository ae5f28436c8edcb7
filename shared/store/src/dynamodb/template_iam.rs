//! The deployment template against the code: each function's IAM role may write exactly the
//! partition-key prefixes [`FUNCTION_WRITES`] declares for it, and no other role may write the
//! table. The prefixes come from the same constants the keys are built from, so a new item kind
//! or a changed writer fails here until the template follows.

use std::collections::{BTreeMap, BTreeSet};

use serde_norway::Value;

use super::clients::SECRET_ATTRIBUTES;
use super::codec::keys::{FUNCTION_READS, FUNCTION_WRITES};

/// Every DynamoDB action that writes an item (a transaction's items are authorised as these).
const WRITE_ACTIONS: &[&str] = &[
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:PartiQLInsert",
    "dynamodb:PartiQLUpdate",
    "dynamodb:PartiQLDelete",
];

fn template() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../template.yaml");
    let text = std::fs::read_to_string(path).expect("read template.yaml");
    serde_norway::from_str(&text).expect("parse template.yaml")
}

fn as_list(value: &Value) -> Vec<&Value> {
    match value {
        Value::Sequence(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        single => vec![single],
    }
}

/// A policy's statements, both branches of an `!If` included.
fn statements(document: &Value) -> Vec<&Value> {
    as_list(&document["Statement"])
        .into_iter()
        .flat_map(|statement| match statement {
            Value::Tagged(tagged) if tagged.tag == "If" => as_list(&tagged.value)
                .into_iter()
                .skip(1)
                .filter(|branch| branch.is_mapping())
                .collect(),
            other => vec![other],
        })
        .collect()
}

/// Every DynamoDB action that reads items.
const READ_ACTIONS: &[&str] = &[
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:PartiQLSelect",
];

fn reads_the_table(statement: &Value) -> bool {
    statement["Effect"].as_str() == Some("Allow")
        && as_list(&statement["Action"])
            .iter()
            .filter_map(|action| action.as_str())
            .any(|action| READ_ACTIONS.contains(&action) || action == "dynamodb:*" || action == "*")
}

fn writes_the_table(statement: &Value) -> bool {
    statement["Effect"].as_str() == Some("Allow")
        && as_list(&statement["Action"])
            .iter()
            .filter_map(|action| action.as_str())
            .any(|action| {
                WRITE_ACTIONS.contains(&action) || action == "dynamodb:*" || action == "*"
            })
}

/// The prefixes of a statement's `ForAllValues:StringLike` `dynamodb:LeadingKeys` condition,
/// `PREFIX#*` each, without the `*`.
fn leading_key_prefixes(role: &str, statement: &Value) -> BTreeSet<String> {
    let patterns = &statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"];
    assert!(
        patterns.is_sequence(),
        "{role}: a table write without a ForAllValues:StringLike dynamodb:LeadingKeys condition"
    );
    as_list(patterns)
        .into_iter()
        .map(|pattern| {
            let pattern = pattern.as_str().unwrap_or_default();
            let prefix = pattern.strip_suffix('*').unwrap_or_default();
            assert!(
                prefix.ends_with('#') && !prefix[..prefix.len() - 1].contains(['*', '#']),
                "{role}: LeadingKeys pattern {pattern:?} is not one concrete PREFIX#*"
            );
            prefix.to_owned()
        })
        .collect()
}

#[test]
fn each_role_writes_exactly_the_prefixes_its_function_writes() {
    assert_eq!(
        prefixes_by_role(writes_the_table),
        declared(FUNCTION_WRITES),
        "template.yaml's LeadingKeys conditions (left) against FUNCTION_WRITES in codec.rs (right)"
    );
}

/// A managed policy could grant the table's writes without a LeadingKeys condition, out of the
/// other test's sight.
#[test]
fn no_role_is_granted_dynamodb_by_a_managed_policy() {
    for role in roles(&template()) {
        let managed = format!("{:?}", role.1["Properties"]["ManagedPolicyArns"]);
        assert!(
            !managed.to_lowercase().contains("dynamodb"),
            "{}: a managed policy grants DynamoDB; use inline statements",
            role.0
        );
    }
}

/// The template's IAM roles: logical id and resource.
fn roles(template: &Value) -> Vec<(&str, &Value)> {
    template["Resources"]
        .as_mapping()
        .expect("the template's Resources")
        .iter()
        .filter(|(_, resource)| resource["Type"].as_str() == Some("AWS::IAM::Role"))
        .map(|(name, resource)| (name.as_str().expect("a logical id"), resource))
        .collect()
}

/// A declaration of `codec.rs` (role, prefixes), as the sets the template is compared with.
fn declared(table: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
    table
        .iter()
        .map(|(role, prefixes)| {
            let prefixes = prefixes.iter().map(|p| (*p).to_owned()).collect();
            ((*role).to_owned(), prefixes)
        })
        .collect()
}

/// Each role's prefixes, from the statements `selects` picks.
fn prefixes_by_role(selects: fn(&Value) -> bool) -> BTreeMap<String, BTreeSet<String>> {
    let template = template();
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (role, resource) in roles(&template) {
        for policy in as_list(&resource["Properties"]["Policies"]) {
            for statement in statements(&policy["PolicyDocument"]) {
                if selects(statement) {
                    let prefixes = leading_key_prefixes(role, statement);
                    found.entry(role.to_owned()).or_default().extend(prefixes);
                }
            }
        }
    }
    found
}

#[test]
fn each_role_reads_exactly_the_prefixes_its_function_reads() {
    assert_eq!(
        prefixes_by_role(reads_the_table),
        declared(FUNCTION_READS),
        "template.yaml's read LeadingKeys conditions (left) against FUNCTION_READS in codec.rs (right)"
    );
}

/// The role that may write whole client items: registration's, and only while it is on.
const REGISTRATION_ROLE: &str = "RegistrationFunctionRole";

/// The only write of client items a function may make is an update of a client's secrets: a
/// leaked function role must not rewrite a client's redirect URIs, grants or keys, nor create a
/// client by upsert with whatever attributes it likes. The registration function is the one
/// exception (it creates and replaces self-registered clients), checked below.
#[test]
fn client_items_are_writable_only_in_their_secrets_attributes() {
    let template = template();
    let mut found = 0;
    for (role, resource) in roles(&template) {
        for policy in as_list(&resource["Properties"]["Policies"]) {
            for statement in statements(&policy["PolicyDocument"]) {
                if !writes_the_table(statement)
                    || !leading_key_prefixes(role, statement).contains("CLIENT#")
                    || role == REGISTRATION_ROLE
                {
                    continue;
                }
                found += 1;
                let actions: Vec<&str> = as_list(&statement["Action"])
                    .into_iter()
                    .filter_map(Value::as_str)
                    .collect();
                assert_eq!(actions, ["dynamodb:UpdateItem"], "{role}: client writes");
                let condition = &statement["Condition"];
                let attributes: BTreeSet<&str> =
                    as_list(&condition["ForAllValues:StringEquals"]["dynamodb:Attributes"])
                        .into_iter()
                        .filter_map(Value::as_str)
                        .collect();
                assert_eq!(
                    attributes,
                    SECRET_ATTRIBUTES.iter().copied().collect(),
                    "{role}: the client attributes it may update"
                );
                let returned: BTreeSet<&str> =
                    as_list(&condition["StringEqualsIfExists"]["dynamodb:ReturnValues"])
                        .into_iter()
                        .filter_map(Value::as_str)
                        .collect();
                assert!(
                    !returned.is_empty()
                        && !returned.contains("ALL_OLD")
                        && !returned.contains("ALL_NEW"),
                    "{role}: an update must not return the client's other attributes: {returned:?}"
                );
            }
        }
    }
    assert_eq!(
        found, 1,
        "one statement writes client items (the token function's)"
    );
}

/// The registration function writes whole client items with `PutItem` only, in a statement of
/// its own that exists only while `DynamicRegistration` is not `off`.
#[test]
fn whole_client_items_are_written_only_by_registration_while_it_is_on() {
    let template = template();
    let role = &template["Resources"][REGISTRATION_ROLE];
    let mut guarded = Vec::new();
    for policy in as_list(&role["Properties"]["Policies"]) {
        for statement in as_list(&policy["PolicyDocument"]["Statement"]) {
            let conditional = match statement {
                Value::Tagged(tagged) if tagged.tag == "If" => as_list(&tagged.value),
                plain => {
                    assert!(
                        !(writes_the_table(plain)
                            && leading_key_prefixes(REGISTRATION_ROLE, plain).contains("CLIENT#")),
                        "client writes outside the RegistrationOn condition"
                    );
                    continue;
                }
            };
            let (condition, granted) = (conditional[0], conditional[1]);
            if writes_the_table(granted)
                && leading_key_prefixes(REGISTRATION_ROLE, granted).contains("CLIENT#")
            {
                assert_eq!(condition.as_str(), Some("RegistrationOn"));
                let actions: Vec<&str> = as_list(&granted["Action"])
                    .into_iter()
                    .filter_map(Value::as_str)
                    .collect();
                assert_eq!(
                    actions,
                    ["dynamodb:PutItem"],
                    "registration's client writes"
                );
                guarded.push(granted);
            }
        }
    }
    assert_eq!(
        guarded.len(),
        1,
        "one conditional statement writes client items"
    );
    assert_eq!(
        template["Conditions"]["RegistrationOn"],
        serde_norway::from_str::<Value>("!Not [!Equals [!Ref DynamicRegistration, \"off\"]]")
            .unwrap(),
        "the condition is registration being on"
    );
}
