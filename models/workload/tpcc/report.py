"""What DBT-2 reports at the end of a run (its ``mix.log`` analysis): per transaction
type the count, the share of the mix, the response time average and 90th percentile,
and the rollbacks; NOTPM, New-Order transactions per minute over the measured
interval.

``notpm`` counts every New-Order that ended in the interval, the 1 % rolled back
included (TPC-C clause 5.4.2 counts them as completed business transactions; DBT-2
shows them as its "Rollback transactions" column as well). ``tpmc`` is the same
rate under TPC-C's name, not an audited result; ``response_time_ok`` says whether
every type's 90th percentile is within the specification's limit (clause 5.2.5.3:
5 s, Stock-Level 20 s).

NOTPM over time (``notpm_over_time``; DBT-2's report draws New-Orders per minute over
the run): from the New-Orders that ended in each second of the measured interval, the
warm-up found from that series by ``models.metrics.warmup``'s rule (not assumed: a
run that starts from a replayed pool or an empty controller cache carries transients
of its own), ``notpm_burst`` over the first minutes and ``notpm_sustained`` after the
warm-up, each as New-Orders per minute.
"""
from __future__ import annotations

import numpy as np

from ...metrics.warmup import burst_sustained
from .txns import TYPES

LIMIT_P90_S = {"new_order": 5.0, "payment": 5.0, "order_status": 5.0, "delivery": 5.0,
               "stock_level": 20.0}


def final_report(lat_ns: dict[str, list], rollbacks: int, seconds: float,
                 pct: int = 90) -> dict:
    """``lat_ns``: per type, the response times (ns) of transactions that ended in the
    measured ``seconds``; ``rollbacks``: New-Orders among them that rolled back."""
    total = sum(len(v) for v in lat_ns.values())
    out: dict = {"transactions": total, "seconds": seconds}
    ok = True
    for t in TYPES:
        ms = np.asarray(lat_ns.get(t, ()), dtype=np.float64) / 1e6
        n = int(ms.size)
        out[f"{t}.count"] = n
        out[f"{t}.mix_pct"] = 100.0 * n / total if total else 0.0
        out[f"{t}.latency_avg_ms"] = float(ms.mean()) if n else 0.0
        p = float(np.percentile(ms, pct)) if n else 0.0
        out[f"{t}.latency_p{pct}_ms"] = p
        ok = ok and p <= LIMIT_P90_S[t] * 1e3
    minutes = seconds / 60.0
    no = out["new_order.count"]
    out["notpm"] = no / minutes if minutes > 0 else 0.0
    out["tpmc"] = out["notpm"]
    out["tpm_total"] = total / minutes if minutes > 0 else 0.0
    out["rollbacks"] = rollbacks
    out["rollback_pct"] = 100.0 * rollbacks / no if no else 0.0
    out["response_time_ok"] = ok
    return out


def notpm_over_time(new_orders_per_s, last_s: float = 1.0) -> dict:
    """``warmup_s``, ``notpm_burst``, ``notpm_sustained`` of the per-second New-Order
    counts of the measured interval (``burst_sustained``'s rule, per minute). The last
    count may cover ``last_s`` seconds (a run of 10.5 s: its last 1.5; of 0.5 s: 0.5):
    it is taken as the rate over that span."""
    rates = list(new_orders_per_s)
    if not rates:
        return {}
    if last_s != 1.0:
        rates[-1] = rates[-1] / last_s
    b = burst_sustained(rates)
    return {"warmup_s": b["warmup_s"], "notpm_burst": 60.0 * b["burst_tps"],
            "notpm_sustained": 60.0 * b["sustained_tps"]}
