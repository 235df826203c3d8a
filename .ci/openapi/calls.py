"""The client openapi-python-client generated from the campaign service's /openapi.json,
calling the running service: every documented response of every operation has a model, and
the allow (200), the deny (422), the defer (202) and refusals (400, 422) are read as the typed
values the document declares.

Usage: python calls.py <generated client dir> <openapi.json> <base URL> <token> <opted-out number>
"""

import importlib
import json
import pathlib
import sys

client_dir, document_path, base, token, opted_out = sys.argv[1:6]
sys.path.insert(0, client_dir)
package = next(p.name for p in pathlib.Path(client_dir).iterdir() if (p / "client.py").exists())
client_module = importlib.import_module(f"{package}.client")
models = importlib.import_module(f"{package}.models")
document = json.loads(pathlib.Path(document_path).read_text())

# A model for every response: each documented status of each operation is parsed.
for path, item in document["paths"].items():
    for method, operation in item.items():
        module = importlib.import_module(f"{package}.api.default.{operation['operationId']}")
        source = pathlib.Path(module.__file__).read_text()
        for status in operation["responses"]:
            assert f"response.status_code == {status}:" in source, (operation["operationId"], status)

client = client_module.AuthenticatedClient(base_url=base, token=token)
send_sms = importlib.import_module(f"{package}.api.default.send_sms")
send_batch = importlib.import_module(f"{package}.api.default.send_campaign_batch")


def sms(to, key):
    return send_sms.sync_detailed(client=client, body=models.SmsArgs(to=to, body="Your code is 4411"), idempotency_key=key).parsed


allowed = sms("+15550100001", '"py-allow"')
assert isinstance(allowed, models.SendSmsResponse200), allowed
assert allowed.settlement.state.value == "committed" and allowed.policy.decision.value == "allow", allowed
assert isinstance(allowed.message_id, str), allowed

denied = sms(opted_out, '"py-deny"')
assert isinstance(denied, models.PolicyDeny), denied
assert denied.status == 422 and denied.policy.decision == "deny", denied
assert denied.settlement.state.value == "not_started", denied

held = send_batch.sync_detailed(
    client=client,
    body=models.BatchArgs(recipients=["+15550100011", "+15550100012", "+15550100013"], message="Sale"),
    idempotency_key='"py-batch"',
).parsed
assert isinstance(held, models.SendCampaignBatchResponse202), held
assert held.policy.decision.value == "defer" and isinstance(held.campaign_id, str), held

malformed = sms("+15550100002", "py-unquoted")
assert isinstance(malformed, models.RefusalKeyInvalid), malformed
assert malformed.status == 400, malformed

reused = sms("+15550100003", '"py-allow"')
assert isinstance(reused, models.RefusalKeyMismatch), reused
assert reused.status == 422, reused

print("the generated Python client read 200 allow, 422 deny, 202 defer, 400 and 422 refusals as typed values")
