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
  (at a vertex it is the zoo's expert itself); cached in the zoo's store with its training seconds.
* **evaluation**: every model through the shared trial cache (nbmerge.protocol): test on the whole
  split, validation on a fixed seeded subset of ``val_examples`` per task; a rerun evaluates nothing again.
* **P1** (fronts): hypervolume of each front's test accuracies over the base model's (the paper names no metric:
  our choice), with a paired bootstrap over test examples (resampled within each task, the same draw for every
  front and for the base); "mixture closer than X" holds when the 95% interval of HV(mixture) − HV(X) is above 0,
  for X = IVON-Hess and simple of every single run k; fronts that are all zero, identical or at chance are not
  tested.
* **P2** (gap closed): each model's α is chosen on validation among the multitask α (the same set for every
  family and for multitask); the gap closed (mixture − simple)/(multitask − simple) of test mean accuracy gets a
  paired bootstrap interval; "most" means its lower end is above 50%.
* **P3** (cost): the measured merge time of a front of many α per family against the recorded training time of one
  multitask run times as many α (evaluation excluded on both sides).
"""

from .config import (  # noqa: F401
    FAMILIES, IVON_FAMILIES, NESTED, PER_RUN, MIXTURE, PLAIN, SOURCE_THEOREM, SOURCE_EXAMPLE, SOURCE_COST,
    PAPER_EXAMPLE, MOST, SPEEDUP, REPORTED_ALPHAS, LEVEL, ParetoConfig, PREVIEW, as_dict, front_names, family_of, label
)
from .fronts import (  # noqa: F401
    prepare, MERGE_MEMORY_BYTES, alpha_chunks, merge_family, Subset, evaluate_front, choose_temperature
)
from .runs import multitask_alphas, ground_truth, run_subset, time_fronts  # noqa: F401
from .quality import (  # noqa: F401
    bootstrap_indices, resampled_accuracy, compare_fronts, gap_closed, quality, p1_decisions, p2_decisions,
    cost_rows
)
from .claims import pareto_claims, headline, temperature_rows, responsibility_rows, metrics  # noqa: F401
from .figures import STYLE, plot_front_2d, plot_front_3d, plot_responsibilities  # noqa: F401
from .preview import subset_evaluator, accuracies, tour_preview  # noqa: F401
