"""Merges one peer's figures from several rounds into one set of figures.

The benchmark runs every peer once per round, the peers' order turning from
round to round, so that a disturbance of the shared machine (its second core
most) lands on every peer alike instead of on whichever ran at that moment.
A figure is then the median over the rounds; a round's own figures stay in
`rounds`.
"""
import statistics


def _median(values):
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _merge_latency(latencies):
    return {"median": _median([l["median"] for l in latencies]), "min": min(l["min"] for l in latencies),
            "p90": _median([l["p90"] for l in latencies])}


def merge(per_round):
    """One dict of figures from a list of them, one per round. A round that
    failed makes the whole a failure, naming the round."""
    for index, figures in enumerate(per_round):
        if "error" in figures:
            return {"error": figures["error"] + (f" (round {index + 1})" if len(per_round) > 1 else "")}
    merged = {}
    for key, first in per_round[0].items():
        values = [figures.get(key) for figures in per_round]
        if key == "latency_ms":
            merged[key] = _merge_latency(values)
        elif "peak_rss_mib" in key or key in ("relative_error", "max_abs_error"):
            merged[key] = max(v for v in values if v is not None) if any(v is not None for v in values) else None
        elif key == "check":
            merged[key] = next((v for v in values if v != "ok"), "ok")
        elif key.endswith("_s"):
            merged[key] = _median(values)
        else:
            merged[key] = first  # the same in every round: peer, version, threads, runs
    merged["rounds"] = per_round
    return merged
