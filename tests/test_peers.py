"""The peer-check plumbing (FusionBench itself runs only in `make peer-fusionbench`, in its own venv)."""

import json

import torch

import nbmerge
from bench.peers import fusionbench as peer
from nbmerge.testing import openclip_vit_shapes, random_experts, random_model


def test_every_peer_job_is_a_valid_nbmerge_call():
    for job in peer.jobs(iters=3, wudi_keys=["k"]):
        method, params, walk = job["nb"]
        spec = nbmerge.get_method(method)
        spec.check_params(params)
        nbmerge.WalkOptions(**walk)
        assert job["fb"]["method"] in {"task_arithmetic", "ties", "tsv", "iso_c", "iso_cts", "regmean", "wudi"}


def test_compare_reports_difference_relative_to_the_update():
    base = {"w": torch.zeros(3)}
    theirs = {"w": torch.tensor([1.0, 2.0, 4.0])}
    ours = {"w": torch.tensor([1.0, 2.0, 4.004])}
    result = peer.compare(base, ours, theirs)
    assert abs(result["max_abs_diff"] - 0.004) < 1e-6
    assert abs(result["max_rel_diff"] - 0.001) < 1e-6
    assert result["worst_key"] == "w"


def test_report_is_written_with_every_row(tmp_path):
    row = {"job": "tsv", "method": "tsv", "params": {"scale": 1.0}, "walk": {}, "keys": "all", "nbmerge_s": 1.0,
           "fusionbench_s": 2.0, "speedup": 2.0, "max_abs_diff": 1e-7, "max_rel_diff": 1e-6, "worst_key": "w"}
    result = {"config": {"width": 768, "layers": 12, "tasks": 8, "seed": 0, "threads": 2, "wudi_iters": 10,
                         "wudi_blocks": 1},
              "versions": {"nbmerge": "0", "torch": "t", "peer_torch": "p", "fusion_bench": "0.2.33",
                           "python": "3", "machine": "x", "cpu_threads": 2},
              "date": "today", "rows": [row]}
    peer.write_report(result, tmp_path)
    text = (tmp_path / "peer_fusionbench.md").read_text()
    assert "| tsv (tsv) | scale=1.0 | 1.00e-07 | 1.00e-06 | `w` | 1.00 | 2.00 | 2.00× | — | — |" in text
    assert "deliberately differs" in text
    assert "own limit" not in text  # a result without limits (an older JSON) still makes its report
    assert json.loads((tmp_path / "peer_fusionbench.json").read_text())["rows"][0]["job"] == "tsv"


def test_report_states_each_method_against_its_own_limit(tmp_path):
    """Fabricated timings: ISO-C at its floor with 2× out of reach, RegMean away from it with its profile."""
    common = {"params": {}, "walk": {}, "keys": "all", "max_abs_diff": 0.0, "max_rel_diff": 0.0, "worst_key": "w"}
    iso = {**common, "job": "iso_c", "method": "iso_c", "nbmerge_s": 1.1, "fusionbench_s": 1.6, "speedup": 1.6 / 1.1,
           "limit": {"what": "eigh", "limit_s": 1.0, "decomposition_s": 1.0, "decomposition_gflop": 20.0,
                     "decomposition_dtype": "float64", "svd_f32_s": 1.5, "svd_f32_gflop": 60.0}}
    reg = {**common, "job": "regmean", "method": "regmean", "nbmerge_s": 3.0, "fusionbench_s": 8.0,
           "speedup": 8.0 / 3.0,
           "limit": {"what": "solve", "limit_s": 2.0, "decomposition_s": 0.5, "decomposition_gflop": 10.0,
                     "decomposition_dtype": "float32", "products_s": 1.0, "products_gflop": 80.0,
                     "check_s": 0.5, "check_gflop": 6.0,
                     "profile": [{"function": "walker.py:1 walk", "calls": 3, "own_s": 0.75}],
                     "profiled_merge_s": 3.5}}
    result = {"config": {"width": 768, "layers": 12, "tasks": 8, "seed": 0, "threads": 2, "wudi_iters": 10,
                         "wudi_blocks": 1},
              "versions": {"nbmerge": "0", "torch": "t", "peer_torch": "p", "fusion_bench": "0.2.33",
                           "python": "3", "machine": "x", "cpu_threads": 2},
              "date": "today", "load_average": {"start": 1.5, "end": 2.5},
              "matmul_gflops": {"start": {"float32": 100.0, "float64": 40.0},
                                "end": {"float32": 80.0, "float64": 50.0}},
              "rows": [iso, reg], "not_run": ["ties_mean", "ties_sum"]}
    peer.write_report(result, tmp_path)
    text = (tmp_path / "peer_fusionbench.md").read_text()
    assert "Not run this time (`--only`): ties_mean, ties_sum." in text
    assert "## Each method's own limit" in text
    assert "float32 100 / 80 GFLOP/s, float64 40 / 50 GFLOP/s" in text
    assert "Load average (1 min) 1.50 at the start of the run, 2.50 at the end" in text
    # floor 1.0 s: nbmerge 1.10×, FusionBench 1.60×, eigh 20 GFLOP in 1 s = 20 GFLOP/s = 40 % of float64's best 50
    assert "| iso_c (iso_c) | eigh | 1.00 | 1.10 | 1.10× | 1.60 | 1.60× | 20.0 | 1.00 | 20.0 | 40% (float64) |" in text
    assert ("**iso_c**: nbmerge takes 1.10 s, 1.10× the 1.00 s its floor takes alone; FusionBench 1.60 s, 1.60× the "
            "same floor. 2× FusionBench means 0.80 s, 0.80× the floor — below it, so 2× is out of reach") in text
    assert "The method is at its own limit." in text
    assert "float32 LAPACK reduced SVD, takes 1.50 s alone (60.0 nominal GFLOP, 40.0 GFLOP/s, 40% of" in text
    # RegMean: 10 GFLOP in 0.5 s = 20 GFLOP/s, 20 % of float32's best 100; 1.0 s outside its 2.0 s floor
    assert "| regmean (regmean) | solve | 2.00 | 3.00 | 1.50× | 8.00 | 4.00× | 10.0 | 0.50 | 20.0 | 20% (float32) |" in text
    assert "4.00 s, 2.00× the floor — above it: 1.00 s of nbmerge's time are spent outside the floor." in text
    assert "products Σ τ_t·G̃_t take 1.00 s (80.0 GFLOP, 80.0 GFLOP/s, 80% of the float32 matmul rate)" in text
    assert ("and the solve 0.50 s; checking each expert's Gram before it is used (symmetric, and positive "
            "semi-definite by a float64 Cholesky: 6.0 GFLOP) takes 0.50 s, 25% of the floor") in text
    assert "without the check nbmerge's floor would be 1.50 s." in text
    assert "`walker.py:1 walk` 0.75 s (3 calls). That profiled merge took 3.50 s in all." in text
    assert text.count("The method is at its own limit.") == 1


def small_inputs(tasks=3, width=32):
    shapes = openclip_vit_shapes(width=width, layers=1, patch=8, grid=2, output_dim=width // 2)
    base = random_model(shapes, seed=0, scale=0.02)
    experts = random_experts(base, tasks, seed=1, scale=0.002)
    linear = [k for k in shapes if k.endswith(("in_proj_weight", "c_fc.weight", "c_proj.weight"))]
    grams = []
    for t in range(tasks):
        g = torch.Generator().manual_seed(t)
        grams.append({k: (lambda f: f @ f.T / 8 + 0.1 * torch.eye(f.shape[0]))(torch.randn(shapes[k][1], 8,
                                                                                             generator=g))
                      for k in linear})
    return base, experts, grams


def test_own_limits_time_each_methods_linear_algebra():
    base, experts, grams = small_inputs()
    jobs = {j["name"]: j for j in peer.jobs(iters=3, wudi_keys=["k"])}
    matrices = [v.shape for v in base.values() if v.dim() == 2]
    for name in ("iso_c", "iso_cts", "regmean"):
        limit = peer.own_limit(jobs[name], base, experts, grams, nb_time=0.0)["limit"]
        assert limit["limit_s"] > 0 and limit["decomposition_s"] > 0 and "profile" not in limit
        if name == "iso_c":
            assert limit["decomposition_gflop"] == sum(peer.gram_eigh_flops(*s) for s in matrices) / 1e9
            assert limit["svd_f32_s"] > 0 and limit["svd_f32_gflop"] > 0
        if name == "iso_cts":  # the sum, T residuals and the long factor of each matrix's shape; the other r × r
            expected = sum((len(experts) + 2) * peer.gram_eigh_flops(*s) + peer.gram_eigh_flops(min(s), min(s))
                           for s in matrices) / 1e9
            assert abs(limit["decomposition_gflop"] - expected) < 1e-12
        if name == "regmean":
            assert limit["limit_s"] == limit["products_s"] + limit["decomposition_s"] + limit["check_s"]
            assert limit["check_s"] > 0 and limit["check_gflop"] == sum(
                len(grams) * g.shape[0] ** 3 / 3 for g in grams[0].values()) / 1e9
            assert limit["decomposition_dtype"] == "float32"
            key = next(iter(grams[0]))
            deltas = peer.task_vectors(key, base, experts)
            shrunk = [peer.shrink_off_diagonal(g[key], 0.95) for g in grams]
            # the floor's products and solve are regmean_matrix's, bit for bit
            from nbmerge.methods.regmean import regmean_matrix
            assert torch.equal(peer.regmean_solve(*reversed(peer.regmean_products(deltas, shrunk))),
                               regmean_matrix(deltas, grams=[g[key] for g in grams], offdiag_scale=0.95))


def test_a_method_away_from_its_floor_is_profiled():
    base, experts, grams = small_inputs()
    job = {j["name"]: j for j in peer.jobs(iters=3, wudi_keys=["k"])}["iso_c"]
    limit = peer.own_limit(job, base, experts, grams, nb_time=float("inf"))["limit"]
    assert 0 < len(limit["profile"]) <= peer.PROFILE_TOP
    assert all(p["own_s"] >= 0 and p["calls"] > 0 for p in limit["profile"])
    assert limit["profiled_merge_s"] > 0
