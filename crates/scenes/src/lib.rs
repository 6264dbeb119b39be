//! Deterministic scenes shared by broadphase's tests, benches and docs.
//!
//! Every scene comes from a fixed seed and the crate's own [`SplitMix64`], so
//! the same call gives the same boxes on every run, platform and crate
//! version; the tests pin a fingerprint of each box scene, and changing one
//! is a breaking change (bench history and recorded pair counts refer to
//! them).
//!
//! An *object* is a point cloud whose box spans `[c - 2.5, c + 1.5]` on each
//! axis (width 4, see [`object_box`]). The *teapots* are three objects
//! centred at (9000, 9000, 9000), (9001, 9001, 9001) and (9002, 9002, 9002),
//! appended after the random ones: far outliers that overlap each other.
//!
//! | scene | what | count |
//! |---|---|---|
//! | [`sparse20k`] | 20,001 objects, centers in `[0, 900)³`, + teapots | 20,004 |
//! | [`dense20k`] | as sparse20k, centers in `[0, 150)³` | 20,004 |
//! | [`stretched40k`] | 40,001 objects in `[0, 1500) × [0, 150)²`, + teapots | 40,004 |
//! | [`clusters16_40k`] | 16 clusters of 2,500 objects, + teapots | 40,003 |
//! | [`uniform1m`] | 1,000,000 objects at sparse20k's density | 1,000,000 |
//! | [`mixed100k`] | cubes, widths log-uniform in `[0.5, 50)`, centers in `[0, 2000)³` | 100,000 |
//! | [`pile`] | identical objects (1,999,000 pairs) | 2,000 |
//! | [`cluster88k`] | a dense cluster beside a sparse world | 88,000 |
//! | [`query10k`] | static set for queries, sparse20k's density, + teapots | 10,003 |
//! | [`particles5k`] | spheres of radii in `[1, 4)`, ~2 contacts each | 5,000 |
//! | [`sph1m`] | jittered 100³ lattice, [`SPH1M_RADIUS`] for ~31 neighbors | 1,000,000 |
//!
//!
//! Moving scenes ([`MovingScene`]: a start and a deterministic
//! [`step`](MovingScene::step) per frame): [`drift1m`] and [`drift100k`]
//! (every box drifts by up to 2% of its size per axis per frame),
//! [`static100k_dynamic1k`] (1,000 drifting among 100,000 static),
//! [`dynamic1k`] (those 1,000 alone), [`teleport100k`] (every box jumps
//! anywhere every frame).
//!
//! Helpers: [`uniform`] (any count at sparse20k's density), [`query_boxes`]
//! (queries for query10k), [`sph`] (smaller lattices) and
//! [`all_box_scenes_up_to_100k`] (what oracle tests loop over).
//!
//! # Examples
//!
//! Query the static set of query10k with boxes from the same distribution,
//! by brute force:
//!
//! ```
//! use broadphase_scenes::{query_boxes, query10k};
//!
//! let scene = query10k();
//! let mut hits = 0usize;
//! for q in query_boxes(100, 1) {
//!     hits += scene.boxes.iter().filter(|b| b.overlaps(&q)).count();
//! }
//! assert!(hits > 0 && hits < 1_000); // sparse: a query meets few boxes
//! //! ```

mod boxes;
mod motion;
mod points;
mod rng;

pub use boxes::{
    Scene, all_box_scenes_up_to_100k, cluster88k, clusters16_40k, cubes_under_one_box, dense20k,
    mixed100k, object_box, pile, query_boxes, query10k, sparse20k, stretched40k, touching_cubes,
    uniform, uniform1m,
};
pub use motion::{
    DRIFT_FRACTION, Motion, MovingScene, drift1m, drift100k, dynamic1k, static100k_dynamic1k,
    teleport100k,
};
pub use points::{SPH1M_RADIUS, Spheres, particles5k, sph, sph1m};
pub use rng::SplitMix64;
