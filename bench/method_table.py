"""The README's method table, generated from the registry and the peer reports, so that it cannot drift.

    python -m bench.method_table            # print the table
    python -m bench.method_table --write    # replace the block between the README's markers

One row per registered method: the data it needs, whether it gives one model, whether LoRA adapter experts merge
with it, and the peer it was checked against with the largest relative difference and the speed ratio found there
(reports/peer_fusionbench.json, peer_baselines.json, peer_regmean_plusplus.json, peer_adamerging.json,
peer_localize.json, peer_ace.json, mergekit.json). A method with no peer row says
how it is checked instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- method-table:begin (python -m bench.method_table --write) -->", "<!-- method-table:end -->"

#: how a method without a peer row is checked (the tests named)
OTHER_CHECKS = {
    "average": "identity with task arithmetic at α = 1/T (tests/test_methods.py)",
    "bmm": "the paper's closed forms and BO protocol, against float64 solves (tests/test_bmm.py)",
    "cart": "a float64 reference of the paper's steps (tests/test_baselines.py); no runnable peer",
    "knots": "the official steps written out on LoRA adapters (tests/test_knots.py); FusionBench 0.2.33 has only "
             "the alignment",
    "tsv_c": "the official rule (⌊r/T⌋ directions per task) in tests/test_baselines.py",
    "dare": "mergekit 0.1.5 DARE-TIES on a 1.1 B Llama (reports/mergekit.md; masks differ by design)",
    "fisher": "the closed form on a toy (tests/test_methods.py)",
    "mog_em": "the EM updates on a toy (tests/test_mog_em.py)",
    "pcb": "a float64 reference of the official steps on the whole model (tests/test_baselines.py); no runnable peer",
    "wudi_closed_form": "the exact minimiser of WUDI's objective (tests/test_methods.py)",
}
DATA = {"grams": "inputs' Grams (data)", "fishers": "Fisher diagonals (data)"}
#: what a method can use beyond its statistics (a file a separate step learns)
DATA_NOTES = {"localize_stitch": "none (optional: masks learned on a few labeled examples per class)"}


def _load(name: str) -> Optional[dict]:
    path = ROOT / "reports" / name
    return json.loads(path.read_text()) if path.exists() else None


def peer_rows() -> dict[str, list[tuple[str, float, float]]]:
    """method → [(peer, max relative difference, peer time / nbmerge time)]."""
    out: dict[str, list] = {}
    fb = _load("peer_fusionbench.json")
    for r in (fb or {}).get("rows", []):
        if "fusionbench_error" in r:  # FusionBench raised on the shared inputs: no difference, no time
            error = r["fusionbench_error"].split(":")[0]
            out.setdefault(r["method"], []).append((f"FusionBench 0.2.33 (raised {error} on the shared inputs)",
                                                    None, None))
            continue
        out.setdefault(r["method"], []).append(("FusionBench 0.2.33", r["max_rel_diff"], r["speedup"]))
    baselines = _load("peer_baselines.json")
    for r in (baselines or {}).get("rows", []):
        peer = {"fusionbench": "FusionBench 0.2.33", "mergekit": "mergekit 0.1.5"}[r["peer"]]
        if r["method"] in ("consensus", "tall"):
            peer += " (its port of the official TALL-mask function)"
        out.setdefault(r["method"], []).append((peer, r["max_rel_diff"], r["speedup"]))
    for r in (_load("peer_adamerging.json") or {}).get("rows", []):   # λ's difference relative to how far λ moved
        out.setdefault("adamerging", []).append(("FusionBench 0.2.33 (its layer-wise wrapper and loss, random BERT)",
                                                 r["diff_over_movement"], r["speedup"]))
    localize = (_load("peer_localize.json") or {}).get("rows", [])
    stitched = {r["sparsity"]: r["max_abs_diff"] / r["largest_move"] for r in localize if r["task"] == "stitched"}
    for r in localize:   # the stitched model's difference relative to how far it moved; each task's learning time
        if r["task"] != "stitched":
            masks = "learned masks identical" if r["differing"] == 0 else "learned masks differ"
            peer = f"the official Localizer and Stitcher (random BERT; {masks})"
            out.setdefault("localize_stitch", []).append((peer, stitched[r["sparsity"]], r["speedup"]))
    for r in (_load("peer_regmean_plusplus.json") or {}).get("rows", []):
        out.setdefault(r["method"], []).append(("FusionBench 0.2.33 (its block-by-block driver, on a random BERT)",
                                                r["max_rel_diff"], r["speedup"]))
    ace = _load("peer_ace.json")
    for r in (ace or {}).get("rows", []):
        if r.get("dtype") == "float32":
            out.setdefault("ace", []).append(("official ACE code", r["max_rel_diff"], r["official_s"] / r["nbmerge_s"]))
    mk = _load("mergekit.json")
    for m in (mk or {}).get("methods", []):
        speed = m.get("summary", {}).get("mergekit", {}).get("speedup_best")
        name = {"dare_ties": "dare"}.get(m["method"], m["method"])
        if speed is not None and name != "dare":
            out.setdefault(name, []).append(("mergekit 0.1.5 (1.1 B Llama, bf16)", None, speed))
    return out


def _peer_cell(rows: list[tuple[str, Optional[float], Optional[float]]]) -> tuple[str, str]:
    peers, speeds = [], []
    for peer in dict.fromkeys(p for p, _, _ in rows):
        diffs = [d for p, d, _ in rows if p == peer and d is not None]
        ratio = [s for p, _, s in rows if p == peer and s is not None]
        peers.append(peer + (f": rel. diff ≤ {max(diffs):.1e}" if diffs else ""))
        if not ratio:
            speeds.append("—")
            continue
        low, high = min(ratio), max(ratio)
        speeds.append(f"{low:.2f}×" if abs(high - low) < 0.005 else f"{low:.2f}–{high:.2f}×")
    return "; ".join(peers), "; ".join(speeds)


def table() -> str:
    import nbmerge.methods  # noqa: F401 - registers every method
    from nbmerge.engine.registry import all_methods

    peers = peer_rows()
    lines = ["| method | data needed | result | LoRA experts | checked against | peer time / nbmerge time |",
             "|---|---|---|---|---|---|"]
    for m in all_methods():
        data = ", ".join(DATA[s] for s in m.needs) or (f"{m.learned} (to learn its coefficients)" if m.learned
                                                       else DATA_NOTES.get(m.name, "none"))
        if m.optional:
            data += " (optional: " + ", ".join(DATA[s] for s in m.optional) + ")"
        if m.name in peers:
            checked, speed = _peer_cell(peers[m.name])
        else:
            checked, speed = OTHER_CHECKS.get(m.name, "no peer check recorded yet (reports/)"), "—"
        result = "one model per task (task-aware)" if m.task_aware else "one model"
        lora = "only (aligns their updates)" if m.lora_only else "yes"
        lines.append(f"| [`{m.name}`]({m.paper}) | {data} | {result} | {lora} | {checked} | {speed} |")
    return "\n".join(lines) + "\n"


def block() -> str:
    return f"{BEGIN}\n{table()}{END}"


def readme_block(text: str) -> Optional[str]:
    if BEGIN not in text or END not in text:
        return None
    return text[text.index(BEGIN):text.index(END) + len(END)]


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.method_table", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="replace the block in README.md")
    args = parser.parse_args(argv)
    if not args.write:
        print(table(), end="")
        return 0
    from nbmerge.engine.io import atomic_write_text

    readme = ROOT / "README.md"
    text = readme.read_text()
    current = readme_block(text)
    if current is None:
        print(f"README.md has no {BEGIN} … {END} block", file=sys.stderr)
        return 1
    atomic_write_text(readme, text.replace(current, block()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
