"""sphere_pairs: touching spheres, radii of any spread, against a numpy
brute force written to the crate's float32 rule."""

import numpy as np
import pytest

import broadphase as bp
from conftest import squared_distances, upper_pairs

F32 = np.float32


def brute_contacts(centers, radii):
    """Every pair i < j with dx*dx + dy*dy + dz*dz <= (r_i + r_j)**2, all
    in float32 from left to right."""
    c = np.asarray(centers).astype(F32)
    r = np.broadcast_to(np.asarray(radii, dtype=F32), (len(c),))

    def hits(rows):
        with np.errstate(over="ignore"):
            t = r[rows, None] + r[None, :]
            return squared_distances(c[rows], c) <= t * t

    return upper_pairs(len(c), hits)


def rounded_up(values):
    """float64 values as the package rounds a radius: up to float32."""
    values = np.asarray(values, dtype=np.float64)
    down = values.astype(F32)
    return np.where(down.astype(np.float64) < values, np.nextafter(down, F32(np.inf)), down)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("n", [0, 1, 2, 300, 3000])
def test_radii_over_orders_of_magnitude_match_brute_force(dims, n):
    rng = np.random.default_rng(200 + n + dims)
    centers = (rng.random((n, dims)) * 40).astype(F32)
    # Pebbles to boulders: several levels of radii.
    radii = (10.0 ** rng.uniform(-2, 0.7, n)).astype(F32)
    radii[: n // 10] = 0
    expected = brute_contacts(centers, radii)
    if n == 3000:
        assert len(expected) > 1000
    got = bp.sphere_pairs(centers, radii)
    assert got.dtype == np.uint32 and got.shape == (len(expected), 2)
    assert np.all(got[:, 0] < got[:, 1])
    np.testing.assert_array_equal(bp.sphere_pairs(centers, radii, sort=True), expected)
    np.testing.assert_array_equal(got, bp.sphere_pairs(centers, radii))  # same order again
    got_rows = got[np.lexsort((got[:, 1], got[:, 0]))] if len(got) else got
    np.testing.assert_array_equal(got_rows, expected)


def test_touching_exactly_duplicates_and_points():
    lattice = np.stack(np.meshgrid(*[np.arange(6)] * 3, indexing="ij"), -1).reshape(-1, 3)
    centers = np.concatenate(
        [
            lattice.astype(F32),  # radius 0.5 each: neighbors touch exactly
            np.zeros((4, 3), F32),  # duplicates of a lattice point
            np.array([[100, 100, 100], [100, 100, 100], [100, 100, 100.5]], F32),
        ]
    )
    radii = np.full(len(centers), 0.5, F32)
    radii[-3:-1] = 0  # two points at one place touch (0 <= 0)
    expected = brute_contacts(centers, radii)
    np.testing.assert_array_equal(bp.sphere_pairs(centers, radii, sort=True), expected)
    # Lattice neighbors touch at exactly 1 = 0.5 + 0.5; just short, they do not.
    assert len(bp.sphere_pairs(lattice.astype(F32), 0.5)) == 3 * 5 * 36
    assert len(bp.sphere_pairs(lattice.astype(F32), np.nextafter(F32(0.5), F32(0)))) == 0
    # A scalar radius is every sphere's.
    np.testing.assert_array_equal(bp.sphere_pairs(centers, 0.5, sort=True), brute_contacts(centers, 0.5))
    # A boulder and a pebble touching across levels.
    two = np.array([[0, 0, 0], [10.5, 0, 0], [10.75, 0, 0]], F32)
    assert bp.sphere_pairs(two, np.array([10, 0.5, 0.125], F32), sort=True).tolist() == [[0, 1], [1, 2]]


def test_float64_centers_to_nearest_and_radii_up():
    rng = np.random.default_rng(9)
    centers = rng.random((1500, 3)) * 10
    radii = 10.0 ** rng.uniform(-2, 0, 1500)
    expected = brute_contacts(centers.astype(F32), rounded_up(radii))
    np.testing.assert_array_equal(bp.sphere_pairs(centers, radii, sort=True), expected)


def test_errors_name_the_first_bad_sphere():
    centers = np.zeros((4, 3))
    with pytest.raises(ValueError, match="sphere 2: radii\\[2\\] = -1.0 must be >= 0"):
        bp.sphere_pairs(centers, np.array([1.0, 1.0, -1.0, np.nan]))
    # Shown as float32, rounded up.
    with pytest.raises(ValueError, match="sphere 1: radii\\[1\\] = 6.0000003e\\+18 is above 5e18"):
        bp.sphere_pairs(centers, np.array([1.0, 6e18, 1.0, 1.0]))
    with pytest.raises(ValueError, match="sphere 0: radii = inf is not finite"):
        bp.sphere_pairs(centers, np.inf)
    bad = centers.copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="sphere 1: centers\\[1, 0\\] = nan"):
        bp.sphere_pairs(bad, np.array([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="radii must be a float or an array of shape \\(4,\\)"):
        bp.sphere_pairs(centers, np.ones(3))
    with pytest.raises(ValueError, match="centers must have shape"):
        bp.sphere_pairs(np.zeros((4, 4)), 1.0)
    # The largest radius is accepted: float32 5e18; float64 5e18 rounds
    # up past it.
    assert bp.sphere_pairs(centers[:2], np.full(2, 5e18, F32)).tolist() == [[0, 1]]
    with pytest.raises(ValueError, match="sphere 0: radii = 5.0000005e\\+18 is above 5e18"):
        bp.sphere_pairs(centers, 5e18)
