//! Scenes that move: a start and a deterministic step per frame, for the
//! persistent broad phase's tests and benches.

use crate::boxes::{uniform, uniform1m};
use crate::rng::SplitMix64;
use broadphase_storage::Aabb;
use glam::Vec3;

/// How the moving boxes of a [`MovingScene`] move each frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Motion {
    /// Every moving box steps by a random amount on each axis, uniform in
    /// `±fraction` of its largest extent (a random walk).
    Drift {
        /// The step's bound, as a fraction of the box's size.
        fraction: f32,
    },
    /// Every moving box jumps to a random place in the start's bounds.
    Teleport,
}

/// A scene over frames: `boxes` as they are now, the first `moving` of
/// them moved by [`step`](MovingScene::step), the rest static.
///
/// # Examples
///
/// ```
/// use broadphase_scenes::drift100k;
/// let mut scene = drift100k();
/// let before = scene.boxes[0];
/// scene.step();
/// assert_ne!(scene.boxes[0], before);
/// let size = (before.max - before.min).max_element();
/// assert!((scene.boxes[0].min - before.min).abs().max_element() <= 0.02 * size);
/// ```
#[derive(Clone, Debug)]
pub struct MovingScene {
    /// Scene name, as in bench ids and docs.
    pub name: &'static str,
    /// The boxes as of the last step.
    pub boxes: Vec<Aabb>,
    /// How many boxes, from the first, move; the others are static.
    pub moving: usize,
    /// How they move.
    pub motion: Motion,
    bounds: Aabb,
    rng: SplitMix64,
}

impl MovingScene {
    fn new(name: &'static str, boxes: Vec<Aabb>, moving: usize, motion: Motion, seed: u64) -> Self {
        let bounds =
            boxes
                .iter()
                .fold(Aabb { min: Vec3::splat(f32::MAX), max: Vec3::splat(f32::MIN) }, |all, b| {
                    Aabb { min: all.min.min(b.min), max: all.max.max(b.max) }
                });
        Self { name, boxes, moving, motion, bounds, rng: SplitMix64::new(seed) }
    }

    /// Moves the moving boxes one frame; the same scene gives the same
    /// frames on every run.
    pub fn step(&mut self) {
        let rng = &mut self.rng;
        let bounds = self.bounds;
        for b in &mut self.boxes[..self.moving] {
            let offset = match self.motion {
                Motion::Drift { fraction } => {
                    let bound = fraction * (b.max - b.min).max_element();
                    Vec3::new(
                        rng.range_f32(-bound, bound),
                        rng.range_f32(-bound, bound),
                        rng.range_f32(-bound, bound),
                    )
                }
                Motion::Teleport => {
                    let to = Vec3::new(
                        rng.range_f32(bounds.min.x, bounds.max.x),
                        rng.range_f32(bounds.min.y, bounds.max.y),
                        rng.range_f32(bounds.min.z, bounds.max.z),
                    );
                    to - b.min
                }
            };
            *b = Aabb::new(b.min + offset, b.max + offset);
        }
    }
}

/// The drift step of the coherence scenes: 2% of a box's size.
pub const DRIFT_FRACTION: f32 = 0.02;

/// drift1m: [`uniform1m`]'s boxes, every one drifting by up to 2% of its
/// size per axis per frame.
pub fn drift1m() -> MovingScene {
    let boxes = uniform1m().boxes;
    let n = boxes.len();
    MovingScene::new("drift1m", boxes, n, Motion::Drift { fraction: DRIFT_FRACTION }, 0xD1F7)
}

/// drift100k: 100,000 boxes at sparse20k's density, all drifting as in
/// [`drift1m`].
pub fn drift100k() -> MovingScene {
    let boxes = uniform(100_000, 0x0D1F_7100).boxes;
    MovingScene::new(
        "drift100k",
        boxes,
        100_000,
        Motion::Drift { fraction: DRIFT_FRACTION },
        0xD1F8,
    )
}

/// static100k_dynamic1k: 101,000 boxes at sparse20k's density; the first
/// 1,000 drift as in [`drift1m`], the other 100,000 never move.
pub fn static100k_dynamic1k() -> MovingScene {
    let boxes = uniform(101_000, 0x57A7).boxes;
    MovingScene::new(
        "static100k_dynamic1k",
        boxes,
        1_000,
        Motion::Drift { fraction: DRIFT_FRACTION },
        0x57A8,
    )
}

/// dynamic1k: the 1,000 drifting boxes of [`static100k_dynamic1k`] alone,
/// moving the same way.
pub fn dynamic1k() -> MovingScene {
    let mut boxes = uniform(101_000, 0x57A7).boxes;
    boxes.truncate(1_000);
    MovingScene::new("dynamic1k", boxes, 1_000, Motion::Drift { fraction: DRIFT_FRACTION }, 0x57A8)
}

/// teleport100k: [`drift100k`]'s start, every box jumping to a random place
/// in the start's bounds every frame.
pub fn teleport100k() -> MovingScene {
    let boxes = uniform(100_000, 0x0D1F_7100).boxes;
    MovingScene::new("teleport100k", boxes, 100_000, Motion::Teleport, 0x7E1E)
}
