"""Least-privilege check of the functions' DynamoDB permissions.

The rule and its reasons: docs/decisions.md, Least privilege.

Every IAM statement of the template that allows a DynamoDB write or read must carry a
`ForAllValues:StringLike` `dynamodb:LeadingKeys` condition of concrete `PREFIX#*` patterns, and no
role may get DynamoDB from a managed policy. Run by infra/lint-template.sh on the template as
written and on its SAM transform (which also holds any role that SAM generates), with the
virtualenv's Python: cfn-lint's decoder reads the CloudFormation tags (!If, !Sub, ...).

Which prefixes each role may write or read is not repeated here: the store's code declares it next
to its key constants (`FUNCTION_WRITES`, `FUNCTION_READS` in
shared/store/src/dynamodb/codec.rs), and the unit test
`store::dynamodb::template_iam` checks template.yaml against it (`cargo test -p token-store`).

Usage: check-iam.py TEMPLATE...   Exit status 1 and one line per finding when a rule is broken.
"""

import fnmatch
import re
import sys

from cfnlint.decode import decode

# Every DynamoDB action that writes an item. TransactWriteItems is no IAM action: each item of a
# transaction is authorised as PutItem / UpdateItem / DeleteItem / ConditionCheckItem.
WRITE_ACTIONS = [
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:PartiQLInsert",
    "dynamodb:PartiQLUpdate",
    "dynamodb:PartiQLDelete",
]

# Every DynamoDB action that reads items.
READ_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:PartiQLSelect",
]

# One concrete prefix per pattern: upper-case kind, '#', then anything.
PREFIX_PATTERN = re.compile(r"^([A-Z]+#)\*$")


def as_list(value):
    return value if isinstance(value, list) else [value]


def statements(document):
    """The statements of a policy document, both branches of an Fn::If included."""
    for statement in as_list((document or {}).get("Statement", [])):
        if isinstance(statement, dict) and "Fn::If" in statement:
            for branch in statement["Fn::If"][1:]:
                if isinstance(branch, dict) and "Ref" not in branch:
                    yield branch
        elif isinstance(statement, dict):
            yield statement


def allowed(statement, actions):
    """The actions of `actions` a statement names, wildcards expanded."""
    if "NotAction" in statement:
        # "everything except ..." would include them; never used for this table.
        return list(actions)
    named = [a for a in as_list(statement.get("Action", [])) if isinstance(a, str)]
    return [w for w in actions if any(fnmatch.fnmatchcase(w, a) for a in named)]


def writes(statement):
    """The DynamoDB write actions a statement names, wildcards expanded."""
    return allowed(statement, WRITE_ACTIONS)


def reads(statement):
    """The DynamoDB read actions a statement names, wildcards expanded."""
    return allowed(statement, READ_ACTIONS)


def leading_key_prefixes(statement):
    """The prefixes of the statement's LeadingKeys condition, or a finding."""
    condition = statement.get("Condition") or {}
    operators = [op for op in condition if "dynamodb:LeadingKeys" in (condition[op] or {})]
    if operators != ["ForAllValues:StringLike"]:
        return None, "no ForAllValues:StringLike dynamodb:LeadingKeys condition"
    prefixes = set()
    for pattern in as_list(condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]):
        match = PREFIX_PATTERN.match(pattern) if isinstance(pattern, str) else None
        if not match:
            return None, f"LeadingKeys pattern {pattern!r} is not one concrete PREFIX#*"
        prefixes.add(match.group(1))
    return prefixes, None


def policy_documents(resources):
    """(role logical id, policy document) for inline and attached policies."""
    for name, resource in resources.items():
        kind = resource.get("Type")
        properties = resource.get("Properties") or {}
        if kind == "AWS::IAM::Role":
            for policy in as_list(properties.get("Policies", [])):
                yield name, (policy or {}).get("PolicyDocument")
        elif kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy"):
            roles = as_list(properties.get("Roles", properties.get("RoleName", [])))
            for role in roles:
                role_name = role.get("Ref") if isinstance(role, dict) else role
                yield role_name, properties.get("PolicyDocument")


def check(path):
    template, errors = decode(path)
    if errors:
        return [f"{path}: cannot read: {e}" for e in errors]
    resources = template.get("Resources", {})
    findings = []
    for name, resource in resources.items():
        arns = (resource.get("Properties") or {}).get("ManagedPolicyArns", [])
        if resource.get("Type") == "AWS::IAM::Role" and "dynamodb" in str(arns).lower():
            findings.append(f"{name}: a managed policy grants DynamoDB; use inline statements")
    for role, document in policy_documents(resources):
        for statement in statements(document):
            if statement.get("Effect") != "Allow":
                continue
            if not writes(statement) and not reads(statement):
                continue
            where = f"{role} statement {statement.get('Sid', '(no Sid)')}"
            _, problem = leading_key_prefixes(statement)
            if problem:
                findings.append(f"{where}: {problem}")
    return [f"{path}: {finding}" for finding in findings]


def main(paths):
    findings = [finding for path in paths for finding in check(path)]
    for finding in findings:
        print(f"check-iam: {finding}", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
