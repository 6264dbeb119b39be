//! `serde` for the grid (the `serde` feature). A grid is written as its
//! configuration and the boxes of its kept build, not as its nodes and
//! leaves: reading it back runs [`build`](AdaptiveGrid::build) on those
//! boxes, which gives the same nodes and leaves (the build is
//! deterministic) and checks the boxes as any build does. So a grid read
//! from bytes holds every invariant a built one does, whatever the bytes
//! were, at the cost of one build.

use super::config::GridConfig;
use super::hierarchy::AdaptiveGrid;
use broadphase_storage::Aabb;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize)]
struct GridRef<'a> {
    config: &'a GridConfig,
    /// The kept build's boxes; `None` when the grid keeps no build.
    kept: Option<&'a [Aabb]>,
}

#[derive(Deserialize)]
struct GridOwned {
    config: GridConfig,
    kept: Option<Vec<Aabb>>,
}

impl Serialize for AdaptiveGrid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let kept = self.kept.then_some(self.kept_boxes());
        GridRef { config: &self.config, kept }.serialize(serializer)
    }
}

/// Fails where a build of the kept boxes would: a NaN, infinite or
/// inverted box, or too many boxes.
impl<'de> Deserialize<'de> for AdaptiveGrid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let GridOwned { config, kept } = GridOwned::deserialize(deserializer)?;
        let mut grid = AdaptiveGrid::with_config(config);
        if let Some(boxes) = kept {
            grid.build(&boxes).map_err(D::Error::custom)?;
        }
        Ok(grid)
    }
}
