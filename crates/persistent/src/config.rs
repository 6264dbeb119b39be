//! Plain configuration for the persistent broad phase.

use broadphase_partition::GridTreeConfig;

/// Tuning of [`PersistentBroadPhase`](super::PersistentBroadPhase). Every
/// value is safe: none makes it drop, repeat or invent a pair (a negative
/// or NaN margin counts as 0).
///
/// # Examples
///
/// ```
/// use broadphase_persistent::{PersistentBroadPhase, PersistentConfig};
/// let config = PersistentConfig { margin: 0.5, ..Default::default() };
/// let world = PersistentBroadPhase::with_config(config);
/// assert_eq!(world.config().margin, 0.5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PersistentConfig {
    /// A dynamic proxy is indexed by its box enlarged on every side by this
    /// fraction of the box's largest extent; while its box stays inside,
    /// moving it costs nothing but the exact test of its candidate pairs.
    /// Bigger margins mean fewer re-indexed proxies and more candidates.
    pub margin: f32,
    /// The least margin, in world units, for boxes too small for `margin`
    /// to matter (points, thin walls).
    pub min_margin: f32,
    /// When more than this fraction of the live proxies were inserted or
    /// left their enlarged boxes since the last update, the update
    /// recomputes every candidate pair on all threads instead of
    /// re-indexing them one by one. The first update re-indexes every
    /// proxy, so it is full unless this is 1 or more
    /// ([`UpdatePath::Full`](super::UpdatePath::Full)).
    pub full_rebuild_fraction: f32,
    /// The grid tree that finds pairs among many boxes at once (the full
    /// recomputation, and the re-indexed proxies among themselves); its
    /// `grid` also configures the index of enlarged boxes.
    pub tree: GridTreeConfig,
}

impl Default for PersistentConfig {
    fn default() -> Self {
        Self {
            margin: 0.5,
            min_margin: 0.0,
            full_rebuild_fraction: 0.25,
            tree: GridTreeConfig::default(),
        }
    }
}
