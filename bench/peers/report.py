"""Turns the peer benchmark's rows into ratios and a Markdown table."""
import math

from switchyard_peer import TOLERANCE

COLUMNS = ["model", "threads", "Switchyard ms", "ORT ms", "PyTorch ms", "SY/ORT", "SY/PyTorch", "SY check",
           "compile cold s", "compile cached s", "SY load + first run s", "ORT session s", "SY peak MiB", "ORT peak MiB",
           "PyTorch peak MiB"]


def median_ms(figures):
    return figures["latency_ms"]["median"] if "latency_ms" in figures else None


def add_ratios(row):
    """Switchyard's median latency over each peer's, where both ran."""
    sy = median_ms(row["switchyard"])
    for peer in ("ort", "pytorch"):
        other = median_ms(row[peer])
        row[f"ratio_sy_{peer}"] = sy / other if sy is not None and other else None


def geometric_means(rows):
    means = {}
    for peer in ("ort", "pytorch"):
        ratios = [r[f"ratio_sy_{peer}"] for r in rows if r.get(f"ratio_sy_{peer}")]
        means[peer] = {"value": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None,
                       "rows": len(ratios)}
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


def table_row(row):
    sy, ort, pt, compiled = row["switchyard"], row["ort"], row["pytorch"], row["compile"]
    ratio = lambda r: "—" if r is None else f"{r:.2f}x"  # noqa: E731
    check = "—" if "error" in sy else ("ok" if sy["check"] == "ok" else "FAIL") + f" {sy['relative_error']:.1e}"
    cells = [row["model"], str(row["threads"]), _latency(sy), _latency(ort), _latency(pt),
             ratio(row["ratio_sy_ort"]), ratio(row["ratio_sy_pytorch"]), check,
             _cell(compiled, "compile_cold_s", "{:.2f}"), _cell(compiled, "compile_cached_s", "{:.2f}"),
             _cell(sy, "load_plus_first_run_s", "{:.3f}"), _cell(ort, "session_s", "{:.3f}"), _cell(sy, "peak_rss_mib", "{:.0f}"),
             _cell(ort, "process_peak_rss_mib", "{:.0f}"), _cell(pt, "process_peak_rss_mib", "{:.0f}")]
    return "| " + " | ".join("—" if c is None else c for c in cells) + " |"


def markdown(result):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += [table_row(r) for r in result["rows"]]
    lines.append("")
    for peer, label in (("ort", "ONNX Runtime"), ("pytorch", "PyTorch")):
        g = result["geometric_mean"][peer]
        value = "—" if g["value"] is None else f"{g['value']:.2f}x"
        lines.append(f"Geometric mean of Switchyard / {label} median latency: {value} over {g['rows']} rows.")
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
    peak = result.get("fma_peak_gflops")
    peak_text = f"; FMA peak {peak} GFLOP/s on one core (bench/fma_peak_bench.cc)" if peak else ""
    lines.append(f"CPU: {result['cpu']}; {result['cores']} cores{peak_text}; load average {result['load_average_start']} "
                 f"before, {result['load_average_end']} after. Switchyard {result['commit']}, "
                 f"onnxruntime-node {result['versions'].get('onnxruntime-node', '?')}, "
                 f"PyTorch {result['versions'].get('pytorch', '?')}; times are medians over {result['rounds']} rounds "
                 f"(peers in turned order), a latency that of the median of {result['runs']} runs after warm-up; "
                 f"peak memory the largest of the rounds'; {result['date']}.")
    return "\n".join(lines) + "\n"
