"""A company's identity provider provisioning a SCIM 2.0 server, on scim2-client.

    python provision.py --base-url URL --token TOKEN lifecycle [--user-name NAME] [--password P]
    python provision.py --base-url URL --token TOKEN deprovision --user-name NAME --password P
    python provision.py --base-url URL --token TOKEN deactivate --id ID
    python provision.py --base-url URL --token TOKEN delete --id ID

URL is the SCIM base (http://127.0.0.1:8080/scim/v2), TOKEN a bearer token sent on every request
(the common options may also follow the scenario's name). Every scenario starts as a client
does, by discovering the server (/ResourceTypes, /Schemas, /ServiceProviderConfig), and builds
its User and Group models from what the server publishes; payloads are checked by scim2-client
both ways. Each prints one JSON object to stdout.

lifecycle prints {"steps": {NAME: {...}, ...}}, NAME in order: discover, create, get, query,
patch, replace, group_create, group_remove_member, group_delete, delete, get_deleted. Each step
records what it read back, and "http": the requests it sent, as {"method", "path", "status"}
(plus "if_match" when the client sent one). A step whose SCIM request failed records
{"error": {"status", "scimType", "detail"}} (and "client": the scim2-client exception's name when
the client, not the server, refused the exchange: a status code or content type the RFC does not
allow, a payload that does not validate); a step that needs what a failed step would have made
records {"skipped": "..."}. A PATCH answered 204 No Content records "body": false, and the
values it records are read back with a GET. lifecycle exits 0 whatever the server answered.

deprovision creates an active user with that password and prints {"id", "userName", "active",
"version"}; deactivate PATCHes active false the way Okta does (one replace operation with no
path, value {"active": false}) and prints {"id", "active", "body", "version"}; delete prints
{"id", "deleted": true}. These three exit 1, printing {"error": ...}, when the request failed.

Any scenario exits 3 with a message on stderr when the server cannot be reached.
"""

import argparse
import json
import secrets
import sys
from urllib.parse import urlsplit

import httpx2
from scim2_client import RequestNetworkException, SCIMClientException
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_models import Error, SCIMException, SearchRequest

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
ENTERPRISE_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


class Unreachable(Exception):
    pass


class Failed(Exception):
    """A SCIM request of a step failed; error is the JSON recorded for it."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


class Provisioner:
    """The SCIM client, with a log of the HTTP exchanges of the current step."""

    def __init__(self, base_url, token, timeout):
        self.exchanges = []
        self.base_path = urlsplit(base_url).path.rstrip("/")
        self.http = httpx2.Client(
            # The base URL must end with a slash for "Users" to stay under it.
            base_url=base_url.rstrip("/") + "/",
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            event_hooks={"response": [self._record]},
        )
        # SCIM error responses come back as Error objects rather than exceptions.
        self.scim = SyncSCIMClient(self.http, raise_scim_errors=False)

    def _record(self, response):
        path = response.request.url.path
        if path.startswith(self.base_path):
            path = path[len(self.base_path) :] or "/"
        exchange = {
            "method": response.request.method,
            "path": path,
            "status": response.status_code,
        }
        if_match = response.request.headers.get("If-Match")
        if if_match:
            exchange["if_match"] = if_match
        self.exchanges.append(exchange)

    def call(self, operation, *args, **kwargs):
        """Run one scim2-client operation; raise Failed on a SCIM error of any kind."""
        try:
            result = operation(*args, **kwargs)
        except RequestNetworkException as exc:
            raise Unreachable(" ".join([str(exc), *getattr(exc, "__notes__", [])])) from exc
        except SCIMClientException as exc:
            raise Failed(client_error(exc)) from exc
        except SCIMException as exc:
            error = scim_error(exc.to_error())
            error["client"] = type(exc).__name__
            raise Failed(error) from exc
        if isinstance(result, Error):
            raise Failed(scim_error(result))
        return result

    def close(self):
        self.http.close()


def scim_error(error):
    return {"status": error.status, "scimType": error.scim_type, "detail": error.detail}


def client_error(exc):
    source = getattr(exc, "source", None)
    status = getattr(source, "status_code", None)
    detail = " ".join([str(exc), *getattr(exc, "__notes__", [])])
    if exc.__cause__ is not None:
        detail += f" ({exc.__cause__})"
    return {"status": status, "scimType": None, "detail": detail, "client": type(exc).__name__}


def dump(resource):
    """The resource as the JSON the server sent, as scim2-models reads it."""
    return json.loads(resource.model_dump_json())


def members(group):
    return [m.get("value") for m in dump(group).get("members") or []]


def user_payload(user_name, password=None, active=True):
    """The user an identity provider pushes: core attributes and the enterprise extension."""
    payload = {
        "schemas": [USER_SCHEMA, ENTERPRISE_SCHEMA],
        "userName": user_name,
        "externalId": f"ext-{secrets.token_hex(6)}",
        "name": {"givenName": "Ada", "familyName": "Lovelace"},
        "emails": [{"value": user_name, "type": "work", "primary": True}],
        "active": active,
        ENTERPRISE_SCHEMA: {"department": "Engineering", "employeeNumber": "42"},
    }
    if password is not None:
        payload["password"] = password
    return payload


def user_summary(user):
    body = dump(user)
    return {
        "id": user.id,
        "userName": body.get("userName"),
        "displayName": body.get("displayName"),
        "active": body.get("active"),
        "givenName": (body.get("name") or {}).get("givenName"),
        "familyName": (body.get("name") or {}).get("familyName"),
        "externalId": body.get("externalId"),
        "emails": body.get("emails"),
        "department": (body.get(ENTERPRISE_SCHEMA) or {}).get("department"),
        "employeeNumber": (body.get(ENTERPRISE_SCHEMA) or {}).get("employeeNumber"),
        "version": (body.get("meta") or {}).get("version"),
        "location": (body.get("meta") or {}).get("location"),
        "password_returned": "password" in body,
    }


def discover(p):
    p.call(p.scim.discover)
    config = p.scim.provider.config

    def supported(feature):
        return bool(getattr(getattr(config, feature, None), "supported", False))

    return {
        "resource_types": sorted(rt.name for rt in p.scim.provider.resource_types),
        "endpoints": {rt.name: rt.endpoint for rt in p.scim.provider.resource_types},
        "user_extensions": sorted(
            ext.schema_
            for rt in p.scim.provider.resource_types
            if rt.name == "User"
            for ext in rt.schema_extensions or []
        ),
        "features": {
            f: supported(f) for f in ("patch", "bulk", "filter", "change_password", "sort", "etag")
        },
    }


def patch_op(*operations):
    return {"schemas": [PATCH_SCHEMA], "Operations": list(operations)}


def modify_and_read(p, resource_type, id, patch):
    """PATCH, then the resource as the server has it: from the answer, or by GET after a 204."""
    patched = p.call(p.scim.modify, resource_type, id, patch)
    if patched is None:
        return p.call(p.scim.query, resource_type, id), False
    return patched, True


SKIPPED_BECAUSE = {
    "discovered": "discovery failed",
    "user": "no user was created",
    "group": "no group was created",
    "deleted": "the user was not deleted",
}


def lifecycle(p, user_name, password):
    steps = {}
    state = {}

    def step(name, needs, action):
        p.exchanges = []
        missing = [n for n in needs if n not in state]
        if missing:
            steps[name] = {"skipped": "; ".join(SKIPPED_BECAUSE[n] for n in missing)}
            return
        try:
            record = action()
        except Failed as exc:
            record = {"error": exc.error}
        record["http"] = p.exchanges
        steps[name] = record

    def do_discover():
        record = discover(p)
        state["discovered"] = True
        return record

    def do_create():
        user = p.call(p.scim.create, "User", user_payload(user_name, password))
        state["user"] = user
        return user_summary(user)

    def do_get():
        return user_summary(p.call(p.scim.query, "User", state["user"].id))

    def do_query():
        search = SearchRequest(filter=f'userName eq "{user_name}"')
        found = p.call(p.scim.query, "User", query_parameters=search)
        return {
            "filter": search.filter,
            "totalResults": found.total_results,
            "ids": [r.id for r in found.resources or []],
        }

    def do_patch():
        user, body = modify_and_read(
            p,
            "User",
            state["user"].id,
            patch_op(
                {"op": "replace", "path": "name.familyName", "value": "Byron"},
                {"op": "replace", "path": "active", "value": False},
            ),
        )
        state["user"] = user
        summary = user_summary(user)
        return {
            "body": body,
            "active": summary["active"],
            "familyName": summary["familyName"],
            "version": summary["version"],
        }

    def do_replace():
        user = state["user"]
        user.display_name = "Ada, Countess of Lovelace"
        replaced = p.call(p.scim.replace, user)
        state["user"] = replaced
        return user_summary(replaced)

    def do_group_create():
        user_id = state["user"].id
        group = p.call(
            p.scim.create,
            "Group",
            {
                "schemas": [GROUP_SCHEMA],
                "displayName": "Engineers",
                "members": [{"value": user_id, "display": user_name}],
            },
        )
        state["group"] = group
        return {"id": group.id, "displayName": group.display_name, "members": members(group)}

    def do_group_remove_member():
        user_id = state["user"].id
        group, body = modify_and_read(
            p,
            "Group",
            state["group"].id,
            patch_op({"op": "remove", "path": f'members[value eq "{user_id}"]'}),
        )
        return {"body": body, "members": members(group)}

    def do_group_delete():
        p.call(p.scim.delete, "Group", state["group"].id)
        return {"deleted": True}

    def do_delete():
        p.call(p.scim.delete, "User", state["user"].id)
        state["deleted"] = True
        return {"deleted": True}

    def do_get_deleted():
        try:
            user = p.call(p.scim.query, "User", state["user"].id)
        except Failed as exc:
            return dict(exc.error)
        return {"status": 200, "found": user_summary(user)}

    step("discover", [], do_discover)
    step("create", ["discovered"], do_create)
    step("get", ["user"], do_get)
    step("query", ["user"], do_query)
    step("patch", ["user"], do_patch)
    step("replace", ["user"], do_replace)
    step("group_create", ["user"], do_group_create)
    step("group_remove_member", ["group"], do_group_remove_member)
    step("group_delete", ["group"], do_group_delete)
    step("delete", ["user"], do_delete)
    step("get_deleted", ["deleted"], do_get_deleted)
    return {"user_name": user_name, "steps": steps}, 0


def single(action):
    """Run a one-request scenario: its record and exit 0, or the error and exit 1."""
    try:
        return action(), 0
    except Failed as exc:
        return {"error": exc.error}, 1


def deprovision(p, user_name, password):
    def action():
        p.call(p.scim.discover)
        user = p.call(p.scim.create, "User", user_payload(user_name, password))
        summary = user_summary(user)
        return {k: summary[k] for k in ("id", "userName", "active", "version")}

    return single(action)


def deactivate(p, id):
    def action():
        p.call(p.scim.discover)
        # Okta's deactivation: a replace with no path whose value holds the attributes.
        user, body = modify_and_read(
            p, "User", id, patch_op({"op": "replace", "value": {"active": False}})
        )
        summary = user_summary(user)
        return {"id": id, "active": summary["active"], "body": body, "version": summary["version"]}

    return single(action)


def delete(p, id):
    def action():
        p.call(p.scim.discover)
        p.call(p.scim.delete, "User", id)
        return {"id": id, "deleted": True}

    return single(action)


def parse_args(argv):
    def common(parser, default):
        parser.add_argument("--base-url", default=default, help="the SCIM base URL")
        parser.add_argument("--token", default=default, help="a bearer token")
        parser.add_argument(
            "--timeout", type=float, default=default, help="per request, in seconds (30)"
        )

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common(parser, None)
    scenarios = parser.add_subparsers(dest="scenario", required=True)

    def scenario(name, help):
        sub = scenarios.add_parser(name, help=help)
        common(sub, argparse.SUPPRESS)  # given after the scenario's name, they win
        return sub

    sub = scenario("lifecycle", help="create, read, search, patch, replace, group, delete a user")
    sub.add_argument("--user-name", help="default: ada.lovelace.RANDOM@example.com")
    sub.add_argument("--password", help="set at creation (write-only)")
    sub = scenario("deprovision", help="create an active user with a password; print its id")
    sub.add_argument("--user-name", required=True)
    sub.add_argument("--password", required=True)
    sub = scenario("deactivate", help="PATCH active false the way Okta does")
    sub.add_argument("--id", required=True)
    sub = scenario("delete", help="DELETE the user")
    sub.add_argument("--id", required=True)

    args = parser.parse_args(argv)
    for required in ("base_url", "token"):
        if getattr(args, required) is None:
            parser.error(f"--{required.replace('_', '-')} is required")
    if args.timeout is None:
        args.timeout = 30.0
    return args


def main(argv=None):
    args = parse_args(argv)
    p = Provisioner(args.base_url, args.token, args.timeout)
    try:
        if args.scenario == "lifecycle":
            user_name = args.user_name or f"ada.lovelace.{secrets.token_hex(4)}@example.com"
            output, status = lifecycle(p, user_name, args.password)
        elif args.scenario == "deprovision":
            output, status = deprovision(p, args.user_name, args.password)
        elif args.scenario == "deactivate":
            output, status = deactivate(p, args.id)
        else:
            output, status = delete(p, args.id)
    except Unreachable as exc:
        print(f"provision: cannot reach {args.base_url}: {exc}", file=sys.stderr)
        return 3
    finally:
        p.close()
    json.dump(output, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
