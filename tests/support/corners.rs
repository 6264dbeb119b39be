//! A box source for tests of `set_aabbs_from`: boxes kept as two columns
//! of corners and made as they are read, the way a game keeps its own
//! columns. Shared by the persistent crate's tests and the workspace's.

use broadphase_persistent::AabbSource;
use broadphase_storage::Aabb;
use glam::Vec3;

/// Boxes as two columns of corners.
pub(crate) struct Corners {
    mins: Vec<Vec3>,
    maxs: Vec<Vec3>,
}

impl Corners {
    /// The corners of `boxes`.
    pub(crate) fn of(boxes: &[Aabb]) -> Self {
        Self {
            mins: boxes.iter().map(|b| b.min).collect(),
            maxs: boxes.iter().map(|b| b.max).collect(),
        }
    }
}

impl AabbSource for Corners {
    fn len(&self) -> usize {
        self.mins.len()
    }

    fn write(&self, first: usize, out: &mut [Aabb]) {
        let corners = self.mins[first..].iter().zip(&self.maxs[first..]);
        for (out, (&min, &max)) in out.iter_mut().zip(corners) {
            *out = Aabb { min, max };
        }
    }
}
