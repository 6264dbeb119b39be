//! Space cut into regions, for running one search per region on separate
//! machines and getting every pair exactly once.
//!
//! A [`Regions`] is a grid of boxes that tiles all of space: cuts along
//! each axis, the outer regions unbounded. Region faces are half-open —
//! region `i` along an axis holds `cuts[i - 1] <= v < cuts[i]` — so every
//! point has exactly one home region, a point on a face belonging to the
//! region above it. [`Regions::from_sample`] picks the cuts: slabs along
//! the axis on which the sample spreads widest, cut at the sample's
//! quantiles, so each region gets about as many points.
//!
//! An [`Assignment`] sends each point to its home region and to the halo
//! regions within the search radius of it ([`Regions::assign_points`]),
//! or each box to every region it overlaps ([`Regions::assign_boxes`]).
//! Each region then runs an ordinary search over what it was sent and
//! keeps only the pairs it owns:
//!
//! - **Points**: a pair belongs to the home region of its lower-index
//!   point ([`Assignment::point_pair_owner`]). That region holds the other
//!   point too, in its halo, since the other point lies within the radius
//!   of it.
//! - **Boxes**: a pair belongs to the region holding the low corner of the
//!   two boxes' intersection, the per-axis max of their mins
//!   ([`Regions::box_pair_owner`]). That corner lies in both boxes, so
//!   both were sent there.
//!
//! Halos are conservative: a point is sent to every region whose box
//! comes within the radius of it along each axis, widened by a few units
//! in the last place so float32 rounding in the search never loses a
//! pair. A region may therefore see a few points it did not need; the
//! ownership rule keeps their pairs from counting twice.
//!
//! In a [`PeriodicDomain`](broadphase_neighbors::PeriodicDomain) the halo wraps: a point near one face is also
//! sent to the regions near the opposite face, and each region runs the
//! periodic search over the same domain.
//!
//! # Example
//!
//! ```
//! use broadphase_neighbors::brute_force_neighbor_pairs;
//! use broadphase_partition::{Assignment, Regions};
//! use glam::Vec3;
//!
//! let points: Vec<Vec3> =
//!     (0..500).map(|i| Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32)).collect();
//! let r = 1.5;
//! let regions = Regions::from_sample(&points, 4)?;
//! let mut assignment = Assignment::default();
//! regions.assign_points(&points, r, None, &mut assignment)?;
//!
//! // Each region searches what it was sent and keeps the pairs it owns.
//! let mut found = Vec::new();
//! for region in 0..regions.count() {
//!     let members: Vec<u32> =
//!         (0..points.len() as u32).filter(|&i| assignment.regions_of(i as usize).contains(&region)).collect();
//!     let local: Vec<Vec3> = members.iter().map(|&i| points[i as usize]).collect();
//!     let mut pairs = Vec::new();
//!     brute_force_neighbor_pairs(&local, r, &mut pairs)?;
//!     for [a, b] in pairs {
//!         let (i, j) = (members[a as usize], members[b as usize]);
//!         if assignment.point_pair_owner(i as usize, j as usize) == region {
//!             found.push([i.min(j), i.max(j)]);
//!         }
//!     }
//! }
//! let mut expected = Vec::new();
//! brute_force_neighbor_pairs(&points, r, &mut expected)?;
//! found.sort_unstable();
//! assert_eq!(found, expected);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod assign;
mod cuts;
mod error;

pub use assign::Assignment;
pub use cuts::Regions;
pub use error::RegionError;
