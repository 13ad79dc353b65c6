# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Client throughput: the collection's client against a raw ``requests`` loop and the official SDK.

Every contender GETs the same existing v2 jobs, one after the other on one thread, over HTTPS with
the emulator's CA verified and one kept-alive connection. Rounds are interleaved: in each round every
contender (in a shuffled order) reads the same ids once, and queries per second are compared within
the round, so a noisy neighbour slows all contenders of a round alike.

Contenders (``CONTENDERS``):

* ``floor_token``: ``requests.Session().get(url, headers={'X-Auth-Token': ...}).json()``, the least
  any client must do (the emulator checks a token by a dictionary look-up).
* ``floor_signed``: the same loop, signing each request with the collection's SDK-HMAC-SHA256 signer,
  so that the emulator does the same signature check as for the AK/SK contenders below.
* ``collection_token`` / ``collection_aksk``: ``ModelArtsClient.get_training_job`` then
  ``jobs.build_item(..., validate='strict')``: authentication (token, or signing), retries wrapper,
  bounded body read, JSON decode, JSON-schema validation and normalisation.
* ``collection_aksk_novalidate``: the same with ``validate='off'``, to separate transport from validation.
* ``sdk_aksk``: the official ``huaweicloudsdkmodelarts`` client, ``show_training_job_details`` with
  ``BasicCredentials`` (AK/SK), which deserialises into model objects but does not validate.

The concurrent figure (``collection_fanout``) reads the round's ids through a new client and
``query.query_jobs`` with the default ``max_concurrency`` (16 threads over one session), TLS
handshakes of the new connections included: it is what one module task or lookup does.
"""

import random
import time

import requests

from common import door_module, iam_token, ratio_summary, summarize

CONTENDERS = ("floor_token", "floor_signed", "collection_token", "collection_aksk", "collection_aksk_novalidate", "sdk_aksk")
GOAL_VS_FLOOR = 0.8


def _connection(emu, **credentials):
    params = {"region": emu.region, "project_id": emu.project_id, "endpoint": emu.url, "iam_endpoint": emu.url, "ca_bundle": emu.ca_file}
    params.update(credentials)
    return params


def build_contenders(emu, token):
    """Return ``{name: (fetch(job_id), close())}`` for every contender."""
    # pylint: disable=import-outside-toplevel
    from ansible_collections.modelarts.training.plugins.module_utils.service import auth
    from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient

    connection_parts = door_module("options").connection_parts
    from ansible_collections.modelarts.training.plugins.module_utils.job.jobs import build_item
    from huaweicloudsdkcore.auth.credentials import BasicCredentials
    from huaweicloudsdkcore.http.http_config import HttpConfig
    from huaweicloudsdkmodelarts.v1 import ModelArtsClient as SdkClient, ShowTrainingJobDetailsRequest

    base = "%s/v2/%s/training-jobs/" % (emu.url, emu.project_id)
    contenders = {}

    raw_token = requests.Session()

    def floor_token(job_id):
        response = raw_token.get(base + job_id, headers={"X-Auth-Token": token}, verify=emu.ca_file, timeout=(10, 30))
        response.raise_for_status()
        return response.json()

    contenders["floor_token"] = (floor_token, raw_token.close)

    raw_signed = requests.Session()

    def floor_signed(job_id):
        url, headers = auth.sign_request("GET", base + job_id, {}, None, emu.ak, emu.sk, emu.project_id)
        response = raw_signed.get(url, headers=headers, verify=emu.ca_file, timeout=(10, 30))
        response.raise_for_status()
        return response.json()

    contenders["floor_signed"] = (floor_signed, raw_signed.close)

    def collection(credentials, validate):
        client = ModelArtsClient(*connection_parts(_connection(emu, **credentials)))

        def fetch(job_id):
            return build_item(client.get_training_job(job_id).data, "v2", validate=validate)

        return fetch, client.close

    contenders["collection_token"] = collection({"auth_token": token}, "strict")
    contenders["collection_aksk"] = collection({"access_key": emu.ak, "secret_key": emu.sk}, "strict")
    contenders["collection_aksk_novalidate"] = collection({"access_key": emu.ak, "secret_key": emu.sk}, "off")

    config = HttpConfig.get_default_config()
    config.timeout = (10, 30)
    config.ssl_ca_cert = emu.ca_file
    sdk = SdkClient.new_builder().with_credentials(BasicCredentials(emu.ak, emu.sk, emu.project_id)).with_http_config(config).with_endpoint(emu.url).build()

    def sdk_aksk(job_id):
        return sdk.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=job_id))

    contenders["sdk_aksk"] = (sdk_aksk, lambda: None)
    return contenders


def _check(name, result):
    """Every contender must really have read a Completed job (a silent error would look fast)."""
    if name.startswith("floor"):
        phase = result["status"]["phase"]
    elif name.startswith("collection"):
        phase = result["phase"]
    else:
        phase = result.status.phase
    if phase != "Completed":
        raise RuntimeError("%s read phase %r, expected Completed" % (name, phase))


def _collection_fanout(emu, job_ids):
    # pylint: disable=import-outside-toplevel
    from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient

    connection_parts = door_module("options").connection_parts
    query_jobs = door_module("query").query_jobs

    started = time.perf_counter()
    client = ModelArtsClient(*connection_parts(_connection(emu, access_key=emu.ak, secret_key=emu.sk)), pool_size=16)
    try:
        result = query_jobs(client, list(job_ids), validate="strict")
    finally:
        client.close()
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise RuntimeError("collection fan-out failed: %s" % result.msg)
    return len(job_ids) / elapsed


def run(emu, job_ids, rounds, block, warmup=20, seed=4, log=print):
    """``rounds`` interleaved rounds of ``block`` GETs per contender; return the raw samples and their summaries.

    Round ``r`` reads ``block`` ids starting at ``r * block`` (wrapping around ``job_ids``); every
    contender reads the same ids in that round, in a shuffled contender order.
    """
    token = iam_token(emu)
    contenders = build_contenders(emu, token)
    rng = random.Random(seed)
    for name, (fetch, _close) in contenders.items():
        for job_id in job_ids[:warmup]:
            _check(name, fetch(job_id))
    qps = dict((name, []) for name in CONTENDERS)
    qps["collection_fanout"] = []
    for round_index in range(rounds):
        ids = [job_ids[(round_index * block + offset) % len(job_ids)] for offset in range(block)]
        order = list(CONTENDERS) + ["collection_fanout"]
        rng.shuffle(order)
        for name in order:
            if name == "collection_fanout":
                qps[name].append(_collection_fanout(emu, ids))
                continue
            fetch = contenders[name][0]
            started = time.perf_counter()
            for job_id in ids:
                result = fetch(job_id)
            qps[name].append(len(ids) / (time.perf_counter() - started))
            _check(name, result)
        if (round_index + 1) % max(1, rounds // 5) == 0 or round_index + 1 == rounds:
            log("  client round %d/%d: %s" % (round_index + 1, rounds, ", ".join("%s %.0f/s" % (name, qps[name][-1]) for name in CONTENDERS)))
    for _fetch, close in contenders.values():
        close()
    summary = dict((name, summarize(values)) for name, values in qps.items())
    ratios = {
        "collection_token_vs_floor_token": ratio_summary(qps["collection_token"], qps["floor_token"]),
        "collection_aksk_vs_floor_signed": ratio_summary(qps["collection_aksk"], qps["floor_signed"]),
        "collection_aksk_vs_floor_token": ratio_summary(qps["collection_aksk"], qps["floor_token"]),
        "collection_aksk_novalidate_vs_floor_signed": ratio_summary(qps["collection_aksk_novalidate"], qps["floor_signed"]),
        "collection_aksk_vs_sdk_aksk": ratio_summary(qps["collection_aksk"], qps["sdk_aksk"]),
        "collection_aksk_novalidate_vs_sdk_aksk": ratio_summary(qps["collection_aksk_novalidate"], qps["sdk_aksk"]),
        "floor_signed_vs_floor_token": ratio_summary(qps["floor_signed"], qps["floor_token"]),
        "collection_fanout_vs_collection_aksk": ratio_summary(qps["collection_fanout"], qps["collection_aksk"]),
    }
    return {"requests_per_round": block, "rounds": rounds, "qps": qps, "summary": summary, "ratios": ratios}
