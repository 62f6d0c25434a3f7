"""The logic behind ``notebooks/30_pareto.ipynb``, one module per step (config, fronts, runs, quality, claims,
figures; preview for the tour); this package names what the notebook calls.

Pareto-front previews by variational merging (arXiv 2412.08147) against multitask fine-tuning, on a 2-task (and optionally a 3-task) subset of a zoo.

Protocol (decided here, stated in the report; the paper's own protocol could not be checked):
* **posteriors** (nbmerge.pools.posteriors): K IVON runs per task from the zoo's base. Every single run k gives its
  own simple (isotropic, the IVON mean) and IVON-Hess (diagonal Gaussian) front, so the mixture is compared with
  each run it is made of, not with one lucky or unlucky seed; all K runs form SoupIVON-Hess (collapsed) and
  MultiIVON-Hess (the mixture, merged by EM). Optionally the zoo's AdamW experts, averaged or squared-gradient
  weighted.
* **informative responsibilities**: at τ = 1 the mixture's log-densities differ by ~10⁵ nats on MiniLM's 22.7 M
  parameters, every responsibility is 0 or 1 and EM stops after one step. We divide the log-densities by a
  temperature τ = f·G, G the largest spread (max_k − min_k, in nats) of a task's component log-densities at EM's
  starting point at uniform α (:func:`nbmerge.solvers.pareto.log_density_spread`), and choose f on a grid by the front's
  mean validation accuracy. Why a temperature rather than a precision scale or per-tensor responsibilities: a
  precision scale leaves the log-determinant gaps (½Σ log S, ~10⁵ nats from a 2% Hessian difference) untouched,
  and per-tensor responsibilities are still one-hot on MiniLM's 11.7 M-entry embedding matrix; the temperature
  family runs from the hard mixture (f → 0) to SoupIVON-Hess (f → ∞) and keeps EM monotone. The plain τ = 1
  mixture is reported beside it, and every responsibility (which run each task's mixture picks) is logged.
* **ground truth**: AdamW fine-tuning on Σ_t α_t ℓ_t from the base with the experts' recipe at the multitask α
  (at a vertex it is the zoo's expert itself); cached in the zoo's store with its training seconds. Beside it the
  **IVON multitask reference**: IVON with the posteriors' recipe and steps on Σ_t α_t ℓ_t (at a vertex, IVON run 0
  of that task), so that the posteriors and a reference share optimizer and budget. The IVON runs take the
  experts' steps (``ivon_steps`` 0), as the multitask runs do.
* **evaluation**: every model through the shared trial cache (nbmerge.evaluate.protocol): test on the whole
  split, validation on a fixed seeded subset of ``val_examples`` per task; a rerun evaluates nothing again.
* **collapse**: when at the chosen τ every responsibility is ≥ 0.99 on one run (:func:`runs.collapsed`), the
  mixture is one IVON run per task; this is logged, and P1a, P1b and P2 are "not tested" (the comparison would be
  of training runs, not of posterior families).
* **P1a/P1b** (fronts): hypervolume of each front's test accuracies over the base model's (the paper names no
  metric: our choice), in pts². The estimate HV(mixture) − mean_k HV(X@k), X = IVON-Hess (P1a) or simple (P1b),
  gets a two-level bootstrap interval (the K runs with replacement, then the test examples within each task, one
  draw shared by every front and the base) and is decided against 0 by :func:`nbmerge.evaluate.verdicts.decide`; fronts
  all zero, identical or at chance are not tested.
* **P2** (gap closed): each model's α is chosen on validation among the multitask α (the same set for every
  family and for multitask); the share (mixture − simple)/(multitask − simple) of test mean accuracy, simple over
  the K runs, gets the same two-level interval, against 50% with the paper's 76% as the effect; the reference is
  the IVON multitask run (AdamW's share given beside).
* **P3** (cost): ``timing_repeats`` timings of the mixture's per-α merge interleaved with as many timings of one
  AdamW multitask training step, on one machine state; a run costs the median step × its steps; the speedup of a
  front over as many runs (run / per-α merge) is decided against 100× (the paper's ~1000× as the effect), with a
  bootstrap over the repeats and FLOP counts beside; the evidence says how many runs a 101-α front costs.
"""

from .config import (  # noqa: F401
    FAMILIES, IVON_FAMILIES, NESTED, PER_RUN, MIXTURE, PLAIN, SOURCE_THEOREM, SOURCE_EXAMPLE, SOURCE_COST,
    PAPER_EXAMPLE, PAPER_SHARE, PAPER_SPEEDUP, MOST, SPEEDUP, REPORTED_ALPHAS, COLLAPSED_RESPONSIBILITY, MULTITASK_IVON,
    LEVEL, ParetoConfig, PREVIEW, as_dict, front_names, family_of, label
)
from .fronts import (  # noqa: F401
    prepare, MERGE_MEMORY_BYTES, alpha_chunks, merge_family, Subset, evaluate_front, choose_temperature
)
from .runs import (  # noqa: F401
    multitask_alphas, ground_truth, ivon_ground_truth, ivon_multitask_run, run_subset, time_fronts, time_cost, collapsed
)
from .quality import (  # noqa: F401
    bootstrap_indices, resampled_accuracy, compare_fronts, gap_closed, quality, p1_decisions, p2_decisions,
    cost_rows, p3_measure
)
from .claims import pareto_claims, p3_claim, headline, temperature_rows, responsibility_rows, metrics  # noqa: F401
from .figures import (  # noqa: F401
    STYLE, plot_front_2d, plot_front_3d, plot_responsibilities, alt_front_2d, alt_front_3d, alt_responsibilities
)
from .preview import subset_evaluator, accuracies, tour_preview  # noqa: F401
