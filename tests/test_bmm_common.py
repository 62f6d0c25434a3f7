"""What the BMM benchmark and search claims share (nbmerge.experiments.bmm_common): the two-level bootstrap of
accuracy over seeds and examples, and a claim decided by its least favourable part."""

import numpy as np
import pytest

from tests.fakes import fake


# -- the bootstrap --------------------------------------------------------------------------------------------------

def test_seeded_accuracy_is_a_two_level_bootstrap():
    from nbmerge.experiments.bmm_common import seeded_accuracy

    a, b = fake(0.62), fake(0.55, offset=0.1)
    point, samples = seeded_accuracy([[a, b], [b, a]], n_boot=500)
    assert point == pytest.approx([(0.62 + 0.55) / 2] * 2) and samples.shape == (2, 500)
    # one seed: only the examples are resampled, the same indices for both models (the difference is tight)
    point, samples = seeded_accuracy([[a, b]], n_boot=500)
    assert point == pytest.approx([0.62, 0.55])
    assert np.std(samples[0] - samples[1]) < np.std(samples[0]) + np.std(samples[1])
    # two seeds that disagree: the seed level widens the interval
    _, two = seeded_accuracy([[a], [b]], n_boot=500)
    _, one = seeded_accuracy([[a]], n_boot=500)
    assert np.std(two[0]) > np.std(one[0])


def test_combine_takes_the_least_favourable_part():
    from nbmerge.evaluate import verdicts
    from nbmerge.experiments.bmm_common import combine

    held = verdicts.decide(2.0, interval=[1.0, 3.0])
    low = verdicts.decide(1.5, interval=[0.5, 2.5])
    unsure = verdicts.decide(0.5, interval=[-1.0, 2.0])
    lost = verdicts.decide(-2.0, interval=[-3.0, -1.0])
    skipped = verdicts.not_tested("collapsed")
    assert combine({"a": held, "b": low}).outcome == "held" and combine({"a": held, "b": low}).interval == [0.5, 2.5]
    assert combine({"a": held, "b": unsure}).outcome == "inconclusive"
    both = combine({"a": held, "b": unsure, "c": lost})
    assert both.outcome == "contradicted" and both.estimate == -2.0
    part = combine({"a": held, "b": skipped})   # undecided: the recorded interval alone would say "held"
    assert part.outcome == "not tested" and "collapsed" in part.why
    mixed = combine({"a": unsure, "b": skipped})
    assert mixed.outcome == "inconclusive" and "collapsed" in mixed.why
    assert combine({"b": skipped}).outcome == "not tested" and combine({}).outcome == "not tested"
