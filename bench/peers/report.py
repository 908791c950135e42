"""Turns the peer benchmark's rows into ratios and a Markdown table."""
import math

import core_share
from switchyard_peer import TOLERANCE

COLUMNS = ["model", "threads", "Switchyard ms", "ORT ms", "PyTorch ms", "SY/ORT", "SY/PyTorch", "SY check",
           "ORT error", "compile cold s", "compile cached s", "SY load + first run s", "ORT session s", "SY peak MiB",
           "ORT peak MiB", "PyTorch peak MiB"]


def median_ms(figures):
    return figures["latency_ms"]["median"] if "latency_ms" in figures else None


def add_ratios(row):
    """Switchyard's median latency over each peer's, where both ran."""
    sy = median_ms(row["switchyard"])
    for peer in ("ort", "pytorch"):
        other = median_ms(row[peer])
        row[f"ratio_sy_{peer}"] = sy / other if sy is not None and other else None


def _geometric_mean(values):
    return {"value": math.exp(sum(map(math.log, values)) / len(values)) if values else None, "rows": len(values)}


def geometric_means(rows):
    """Per peer: over every row, and per thread count ("by_threads")."""
    means = {}
    for peer in ("ort", "pytorch"):
        key = f"ratio_sy_{peer}"
        means[peer] = _geometric_mean([r[key] for r in rows if r.get(key)])
        means[peer]["by_threads"] = {
            str(t): _geometric_mean([r[key] for r in rows if r.get(key) and r["threads"] == t])
            for t in sorted({r["threads"] for r in rows})}
    return means


def _cell(figures, key, fmt):
    if "error" in figures:
        return None
    value = figures.get(key)
    return None if value is None else fmt.format(value)


def _error(figures):
    # A cell must stay one printable line and must not end its column early.
    if "error" not in figures:
        return None
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in figures["error"])
    return text.replace("|", "\\|")


# A median this far above the fastest run means the runs were disturbed (the
# machine is shared); such cells are marked rather than silently trusted.
NOISY_SPREAD = 2.0


def is_noisy(figures):
    latency = figures.get("latency_ms")
    return bool(latency) and latency["median"] > NOISY_SPREAD * latency["min"]


def _latency(figures):
    return _error(figures) or "{:.3f}{}".format(median_ms(figures), " *" if is_noisy(figures) else "")


# Below this share of a core each (bench/peers/core_share.py), two cores
# were not two cores while a row ran: its two-thread figures are marked.
SHARED_CORES = 0.8


def on_shared_cores(row):
    """Whether a row of two or more threads ran while the two-core probe
    found the cores sharing one core's FMA units."""
    probe = row.get("two_core_share")
    return row["threads"] > 1 and probe is not None and probe["share"] < SHARED_CORES


def table_row(row):
    sy, ort, pt, compiled = row["switchyard"], row["ort"], row["pytorch"], row["compile"]
    mark = " ‡" if on_shared_cores(row) else ""
    ratio = lambda r: "—" if r is None else f"{r:.2f}x{mark}"  # noqa: E731
    check = "—" if "error" in sy else ("ok" if sy["check"] == "ok" else "FAIL") + f" {sy['relative_error']:.1e}"
    cells = [row["model"], str(row["threads"]), _latency(sy), _latency(ort), _latency(pt),
             ratio(row["ratio_sy_ort"]), ratio(row["ratio_sy_pytorch"]), check, _cell(ort, "relative_error", "{:.1e}"),
             _cell(compiled, "compile_cold_s", "{:.2f}"), _cell(compiled, "compile_cached_s", "{:.2f}"),
             _cell(sy, "load_plus_first_run_s", "{:.3f}"), _cell(ort, "session_s", "{:.3f}"), _cell(sy, "peak_rss_mib", "{:.0f}"),
             _cell(ort, "process_peak_rss_mib", "{:.0f}"), _cell(pt, "process_peak_rss_mib", "{:.0f}")]
    return "| " + " | ".join("—" if c is None else c for c in cells) + " |"


# What the findings below the table list: the targets of issue 35.
SLOW_COLD_COMPILE_S = 2.0
SLOW_CACHED_COMPILE_S = 0.1


def _at(model, threads):
    return f"{model} at {threads} thread{'s' if threads != 1 else ''}"


def findings(result):
    """Lines listing every row slower than ONNX Runtime, every slow compile,
    Switchyard's peak memory against ONNX Runtime's, and every failure."""
    rows = result["rows"]
    lines = []
    slower = sorted((r for r in rows if (r.get("ratio_sy_ort") or 0) > 1), key=lambda r: -r["ratio_sy_ort"])
    lines.append(f"Slower than ONNX Runtime ({len(slower)} of {sum(1 for r in rows if r.get('ratio_sy_ort'))} rows): "
                 + (", ".join(f"{_at(r['model'], r['threads'])} ({r['ratio_sy_ort']:.2f}x)" for r in slower) or "none")
                 + ".")
    shared = [r for r in rows if on_shared_cores(r)]
    if shared:
        lines.append(f"‡ measured while two cores kept under {SHARED_CORES:g} of a core each (two_core_share in the "
                     "JSON, bench/peers/core_share.py): their two threads had about one core's FMA units: "
                     + ", ".join(f"{_at(r['model'], r['threads'])} ({r['two_core_share']['share']:.2f})" for r in shared)
                     + ".")
    compiles = {r["model"]: r["compile"] for r in rows if "error" not in r["compile"]}
    for key, limit, label in (("compile_cold_s", SLOW_COLD_COMPILE_S, "Cold compiles above"),
                              ("compile_cached_s", SLOW_CACHED_COMPILE_S, "Cached compiles above")):
        slow = sorted(((m, c[key]) for m, c in compiles.items() if c.get(key) and c[key] > limit), key=lambda x: -x[1])
        lines.append(f"{label} {limit:g} s: " + (", ".join(f"{m} {s:.2f} s" for m, s in slow) or "none") + ".")
    memory = [(r["model"], r["threads"], r["switchyard"]["peak_rss_mib"], r["ort"]["process_peak_rss_mib"])
              for r in rows if r["switchyard"].get("peak_rss_mib") and r["ort"].get("process_peak_rss_mib")]
    if memory:
        ratios = [sy / ort for _, _, sy, ort in memory]
        over = sorted((m for m in memory if m[2] > m[3]), key=lambda m: -m[2] / m[3])
        lines.append(f"Peak memory, Switchyard / ONNX Runtime: geometric mean "
                     f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x over {len(memory)} rows; above ORT's: "
                     + (", ".join(f"{_at(m, t)} ({sy:.0f} vs {ort:.0f} MiB)" for m, t, sy, ort in over) or "none") + ".")
    failed = {}
    for r in rows:
        for peer in ("switchyard", "ort", "pytorch"):
            if "error" in r[peer]:
                failed.setdefault((r["model"], peer), _error(r[peer]))
    for (model, peer), error in failed.items():
        lines.append(f"{peer} failed on {model}: {error}")
    return lines


def markdown(result):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += [table_row(r) for r in result["rows"]]
    lines.append("")
    mean = lambda g: "—" if g["value"] is None else f"{g['value']:.2f}x over {g['rows']} rows"  # noqa: E731
    for peer, label in (("ort", "ONNX Runtime"), ("pytorch", "PyTorch")):
        g = result["geometric_mean"][peer]
        per_threads = "; ".join(f"{t} thread{'s' if t != '1' else ''}: {mean(m)}"
                                for t, m in g.get("by_threads", {}).items())
        lines.append(f"Geometric mean of Switchyard / {label} median latency: {mean(g)}"
                     + (f" ({per_threads})." if per_threads else "."))
    if any(is_noisy(r[p]) for r in result["rows"] for p in ("switchyard", "ort", "pytorch")):
        lines.append(f"\\* median over {NOISY_SPREAD:g}x the fastest run: disturbed runs (a busy machine?); "
                     "see min and p90 in the JSON.")
    for row in result["rows"]:
        for peer in ("ort", "pytorch"):
            error = row[peer].get("relative_error", 0)
            if error > TOLERANCE:
                lines.append(f"Warning: {peer} on {row['model']} is off PyTorch's exported output by {error:.2g} "
                             "(relative): the export itself may be wrong.")
    lines.append("")
    lines += findings(result)
    lines.append("")
    peak = result.get("fma_peak_gflops")
    peak_text = f"; FMA peak {peak} GFLOP/s on one core (bench/fma_peak_bench.cc)" if peak else ""
    if "two_core_share_start" in result:
        peak_text += "; at the start " + core_share.describe(result["two_core_share_start"])
    lines.append(f"CPU: {result['cpu']}; {result['cores']} cores{peak_text}; load average {result['load_average_start']} "
                 f"before, {result['load_average_end']} after. Switchyard {result['commit']}, "
                 f"onnxruntime-node {result['versions'].get('onnxruntime-node', '?')}, "
                 f"PyTorch {result['versions'].get('pytorch', '?')}; times are medians over {result['rounds']} rounds "
                 f"(peers in turned order), a latency that of the median of {result['runs']} runs after warm-up "
                 f"(more where they would span under 0.2 s); "
                 f"peak memory the largest of the rounds'; {result['date']}.")
    return "\n".join(lines) + "\n"
