"""bench.lanes_split_probe: a line cut into equal parts that join end to end into the line."""

from __future__ import annotations

import numpy as np
import pytest

from bench.lanes_split_probe import cut_line


@pytest.mark.parametrize("pieces", [1, 2, 3, 4])
def test_parts_are_equal_and_rebuild_the_line(pieces: int) -> None:
    line = np.asarray([[0.0, 0.0], [100.0, 0.0], [100.0, 60.0], [40.0, 140.0]])
    parts = cut_line(line, pieces)
    lengths = [float(np.hypot(*np.diff(p, axis=0).T).sum()) for p in parts]
    assert lengths == pytest.approx([260.0 / pieces] * pieces)
    for a, b in zip(parts[:-1], parts[1:]):
        assert np.allclose(a[-1], b[0])  # each part begins where the last ended
    assert np.allclose(parts[0][0], line[0]) and np.allclose(parts[-1][-1], line[-1])
    joined = np.vstack([parts[0]] + [p[1:] for p in parts[1:]])
    for q in line:  # every corner of the line is kept
        assert np.min(np.hypot(*(joined - q).T)) < 1e-9
