//! Reference implementations: the brute-force oracles every faster structure
//! is tested against, and a one-axis sort-and-sweep baseline.
//!
//! These favour being obviously correct over being fast. [`brute_force_pairs`]
//! and [`brute_force_query`] are O(n²) and O(n) loops over
//! [`Aabb::overlaps`]; [`SortAndSweep`] is the classic one-axis sweep, a
//! baseline for benches and a second oracle for scenes too big for brute force.

use broadphase_storage::{Aabb, InputError, Ray, validate_boxes};

/// Every overlapping pair of `boxes`, by testing all of them: the oracle.
///
/// Validates the input first (the first bad box is reported and `out` is
/// left untouched), then clears `out` and pushes each overlapping pair once
/// as `[a, b]` with `a < b`, in increasing order of `a`, then `b`. Overlap is
/// inclusive ([`Aabb::overlaps`]): touching faces, edges and corners count.
/// O(n²): meant for tests and small inputs.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{Aabb, brute_force_pairs};
/// use glam::Vec3;
///
/// let boxes = [
///     Aabb::new(Vec3::ZERO, Vec3::ONE),
///     Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0)),
///     Aabb::new(Vec3::ONE, Vec3::splat(2.0)), // touches box 0 at a corner
/// ];
/// let mut pairs = Vec::new();
/// brute_force_pairs(&boxes, &mut pairs)?;
/// assert_eq!(pairs, [[0, 2]]);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
pub fn brute_force_pairs(boxes: &[Aabb], out: &mut Vec<[u32; 2]>) -> Result<(), InputError> {
    validate_boxes(boxes)?;
    out.clear();
    for (a, box_a) in boxes.iter().enumerate() {
        for (b, box_b) in boxes.iter().enumerate().skip(a + 1) {
            if box_a.overlaps(box_b) {
                // validate_boxes guarantees at most MAX_BOXES (u32::MAX) boxes.
                out.push([a as u32, b as u32]);
            }
        }
    }
    Ok(())
}

/// The indices of the boxes that overlap `query`, by testing every box: the
/// oracle for queries.
///
/// Validates `boxes` (reporting the first bad one), then `query` (reported
/// as index 0); on error `out` is left untouched. Otherwise clears `out` and
/// pushes the indices in increasing order. Overlap is inclusive.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{Aabb, brute_force_query};
/// use glam::Vec3;
///
/// let boxes = [
///     Aabb::new(Vec3::ZERO, Vec3::ONE),
///     Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0)),
/// ];
/// let query = Aabb::new(Vec3::splat(0.5), Vec3::splat(5.0)); // touches box 1
/// let mut hits = Vec::new();
/// brute_force_query(&boxes, &query, &mut hits)?;
/// assert_eq!(hits, [0, 1]);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
pub fn brute_force_query(
    boxes: &[Aabb],
    query: &Aabb,
    out: &mut Vec<u32>,
) -> Result<(), InputError> {
    validate_boxes(boxes)?;
    query.validate(0)?;
    out.clear();
    for (index, b) in boxes.iter().enumerate() {
        if b.overlaps(query) {
            // validate_boxes guarantees at most MAX_BOXES (u32::MAX) boxes.
            out.push(index as u32);
        }
    }
    Ok(())
}

/// Every box `ray` hits, as `(index, entry t)` ([`Ray::entry`]), sorted by
/// `t` then index, by testing every box: the rays' oracle. The first
/// element is the first hit. O(n): meant for tests and small inputs.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{Aabb, Ray, brute_force_ray_hits};
/// use glam::Vec3;
/// let boxes = [Aabb::new(Vec3::splat(4.0), Vec3::splat(5.0)), Aabb::new(Vec3::splat(1.0), Vec3::splat(2.0))];
/// let hits = brute_force_ray_hits(&boxes, &Ray::new(Vec3::ZERO, Vec3::ONE, 10.0));
/// assert_eq!(hits, [(1, 1.0), (0, 4.0)]);
/// ```
pub fn brute_force_ray_hits(boxes: &[Aabb], ray: &Ray) -> Vec<(u32, f32)> {
    let mut hits: Vec<(u32, f32)> = boxes
        .iter()
        .enumerate()
        .filter_map(|(id, b)| ray.entry(b).map(|t| (id as u32, t)))
        .collect();
    hits.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    hits
}

/// One-axis sort-and-sweep: a simple baseline and a second oracle.
///
/// Sorts the boxes by `min.x`, then for each box scans the boxes after it in
/// that order while their `min.x` is at most its `max.x`, testing y and z.
/// Fast when boxes are spread along x; degrades towards O(n²) when many
/// share an x-interval (dense columns, a pile). The scratch buffers are kept
/// between calls and only grow, so a warm call allocates nothing besides
/// growth of `out`.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{Aabb, SortAndSweep};
/// use glam::Vec3;
///
/// let boxes = [
///     Aabb::new(Vec3::splat(2.0), Vec3::splat(3.0)),
///     Aabb::new(Vec3::ZERO, Vec3::splat(2.0)), // touches box 0 at a corner
///     Aabb::new(Vec3::new(0.0, 9.0, 0.0), Vec3::new(9.0, 10.0, 1.0)),
/// ];
/// let mut sweep = SortAndSweep::default();
/// let mut pairs = Vec::new();
/// sweep.find_pairs(&boxes, &mut pairs)?;
/// assert_eq!(pairs, [[0, 1]]);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct SortAndSweep {
    /// `(min.x, id)` for every box, sorted by `min.x`.
    order: Vec<(f32, u32)>,
    /// The boxes gathered in sorted order, so the sweep reads memory in order.
    sorted: Vec<Aabb>,
}

impl SortAndSweep {
    /// Every overlapping pair of `boxes`, each once as `[a, b]` with `a < b`.
    ///
    /// Validates the input first (the first bad box is reported and `out` is
    /// left untouched), then clears `out`. Overlap is inclusive. The order of
    /// the pairs in `out` is unspecified (it follows the sweep); sort them to
    /// compare with [`brute_force_pairs`].
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{Aabb, SortAndSweep, brute_force_pairs};
    /// use glam::Vec3;
    ///
    /// let boxes: Vec<Aabb> = (0..50)
    ///     .map(|i| {
    ///         let c = Vec3::new((i * 7 % 50) as f32, (i % 3) as f32, 0.0);
    ///         Aabb::new(c, c + Vec3::splat(2.0))
    ///     })
    ///     .collect();
    /// let (mut swept, mut brute) = (Vec::new(), Vec::new());
    /// SortAndSweep::default().find_pairs(&boxes, &mut swept)?;
    /// brute_force_pairs(&boxes, &mut brute)?;
    /// swept.sort_unstable();
    /// assert_eq!(swept, brute);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn find_pairs(
        &mut self,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), InputError> {
        validate_boxes(boxes)?;
        out.clear();

        self.order.clear();
        // validate_boxes guarantees at most MAX_BOXES (u32::MAX) boxes.
        self.order.extend(boxes.iter().enumerate().map(|(id, b)| (b.min.x, id as u32)));
        // Finite keys: total_cmp agrees with `<=` (it only orders -0.0 before
        // +0.0, which `<=` treats as equal), which is all the sweep needs.
        self.order.sort_unstable_by(|p, q| p.0.total_cmp(&q.0));
        self.sorted.clear();
        self.sorted.extend(self.order.iter().map(|&(_, id)| boxes[id as usize]));

        for (i, a) in self.sorted.iter().enumerate() {
            let id_a = self.order[i].1;
            for (j, b) in self.sorted.iter().enumerate().skip(i + 1) {
                // Sorted by min.x: once one box starts past a's max.x, all
                // later ones do too.
                if b.min.x > a.max.x {
                    break;
                }
                // Here a.min.x <= b.min.x <= a.max.x and b.min.x <= b.max.x,
                // so the x intervals overlap; y and z decide.
                let yz = a.min.y <= b.max.y
                    && b.min.y <= a.max.y
                    && a.min.z <= b.max.z
                    && b.min.z <= a.max.z;
                if yz {
                    let id_b = self.order[j].1;
                    out.push([id_a.min(id_b), id_a.max(id_b)]);
                }
            }
        }
        Ok(())
    }

    /// The old name of [`find_pairs`](Self::find_pairs), kept one release.
    ///
    /// # Errors
    /// As [`find_pairs`](Self::find_pairs).
    #[deprecated(since = "0.1.0", note = "renamed to `find_pairs`")]
    pub fn pairs(&mut self, boxes: &[Aabb], out: &mut Vec<[u32; 2]>) -> Result<(), InputError> {
        self.find_pairs(boxes, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use broadphase_scenes::{SplitMix64, object_box, pile};
    use broadphase_storage::{Axis, Corner};
    use glam::Vec3;

    fn unit_at(min: Vec3) -> Aabb {
        Aabb::new(min, min + Vec3::ONE)
    }

    /// Pairs from both algorithms, sorted; asserts they agree.
    fn both(boxes: &[Aabb]) -> Vec<[u32; 2]> {
        let mut brute = Vec::new();
        brute_force_pairs(boxes, &mut brute).unwrap();
        let mut swept = Vec::new();
        SortAndSweep::default().find_pairs(boxes, &mut swept).unwrap();
        swept.sort_unstable();
        assert_eq!(swept, brute, "sort-and-sweep disagrees with brute force");
        assert!(brute.windows(2).all(|w| w[0] < w[1]), "brute-force output not sorted/unique");
        assert!(brute.iter().all(|[a, b]| a < b));
        brute
    }

    #[test]
    fn touching_faces_edges_and_corners_overlap() {
        let a = unit_at(Vec3::ZERO);
        for offset in [
            Vec3::new(1.0, 0.0, 0.0),  // face
            Vec3::new(0.0, -1.0, 0.0), // face, other side
            Vec3::new(1.0, 1.0, 0.0),  // edge
            Vec3::new(0.0, 1.0, -1.0), // edge
            Vec3::new(1.0, 1.0, 1.0),  // corner
            Vec3::new(-1.0, -1.0, -1.0),
        ] {
            assert_eq!(both(&[a, unit_at(offset)]), [[0, 1]], "offset {offset}");
            assert_eq!(both(&[unit_at(offset), a]), [[0, 1]], "offset {offset}, swapped");
        }
    }

    #[test]
    fn separated_by_a_hair_do_not_overlap() {
        let a = unit_at(Vec3::ZERO);
        let hair = 1.0f32.next_up();
        for axis in 0..3 {
            let mut offset = Vec3::ZERO;
            offset[axis] = hair;
            assert_eq!(both(&[a, unit_at(offset)]), [] as [[u32; 2]; 0], "axis {axis}");
            offset[axis] = -hair;
            assert_eq!(both(&[a, unit_at(offset)]), [] as [[u32; 2]; 0], "axis {axis}");
        }
    }

    #[test]
    fn coincident_and_zero_size_boxes() {
        let p = Aabb::new(Vec3::ONE, Vec3::ONE); // a point
        let boxes = [
            p,
            p,
            unit_at(Vec3::ZERO),                            // has p on its corner
            Aabb::new(Vec3::splat(0.5), Vec3::splat(0.5)),  // inside box 2 only
            Aabb::new(Vec3::splat(-0.0), Vec3::splat(0.0)), // -0.0 vs 0.0 corner
        ];
        assert_eq!(both(&boxes), [[0, 1], [0, 2], [1, 2], [2, 3], [2, 4]]);
    }

    #[test]
    fn pile_of_identical_boxes_gives_every_pair() {
        let scene = pile();
        let mut swept = Vec::new();
        SortAndSweep::default().find_pairs(&scene.boxes, &mut swept).unwrap();
        assert_eq!(swept.len(), 2_000 * 1_999 / 2);
        swept.sort_unstable();
        swept.dedup();
        assert_eq!(swept.len(), 2_000 * 1_999 / 2);
        assert!(swept.iter().all(|[a, b]| a < b));
    }

    #[test]
    fn bad_input_names_the_first_bad_box() {
        let mut boxes = vec![unit_at(Vec3::ZERO); 6];
        boxes[3].min.y = 2.0; // inverted on y
        boxes[4].max.z = f32::NAN;
        let expected = Err(InputError::Inverted { index: 3, axis: Axis::Y, min: 2.0, max: 1.0 });

        let mut pairs = vec![[7, 8]];
        assert_eq!(brute_force_pairs(&boxes, &mut pairs), expected);
        assert_eq!(pairs, [[7, 8]], "out must be untouched on error");
        assert_eq!(SortAndSweep::default().find_pairs(&boxes, &mut pairs), expected);
        let mut hits = vec![9];
        assert_eq!(brute_force_query(&boxes, &unit_at(Vec3::ZERO), &mut hits), expected);
        assert_eq!(hits, [9]);

        boxes[3] = unit_at(Vec3::ZERO);
        let nan = brute_force_pairs(&boxes, &mut pairs);
        let Err(InputError::NotFinite { index, axis, corner, value }) = nan else {
            panic!("expected NotFinite, got {nan:?}");
        };
        assert_eq!((index, axis, corner), (4, Axis::Z, Corner::Max));
        assert!(value.is_nan());
        let nan = SortAndSweep::default().find_pairs(&boxes, &mut pairs);
        assert!(matches!(nan, Err(InputError::NotFinite { index: 4, .. })), "{nan:?}");

        boxes[1].min.x = f32::NEG_INFINITY;
        let inf = brute_force_pairs(&boxes, &mut pairs);
        assert!(
            matches!(
                inf,
                Err(InputError::NotFinite { index: 1, axis: Axis::X, corner: Corner::Min, .. })
            ),
            "{inf:?}"
        );
    }

    #[test]
    fn query_hits_in_increasing_order_and_validates_the_query() {
        let boxes = [
            unit_at(Vec3::splat(3.0)),
            unit_at(Vec3::ZERO),
            unit_at(Vec3::splat(1.0)), // touches the query's max corner
            unit_at(Vec3::splat(1.0).with_x(1.0f32.next_up())),
        ];
        let query = Aabb::new(Vec3::splat(-5.0), Vec3::ONE);
        let mut hits = Vec::new();
        brute_force_query(&boxes, &query, &mut hits).unwrap();
        assert_eq!(hits, [1, 2]);
        brute_force_query(&[], &query, &mut hits).unwrap();
        assert!(hits.is_empty());

        let inverted = Aabb::new(Vec3::ONE, Vec3::ZERO);
        assert_eq!(
            brute_force_query(&boxes, &inverted, &mut hits),
            Err(InputError::Inverted { index: 0, axis: Axis::X, min: 1.0, max: 0.0 })
        );
    }

    #[test]
    fn empty_and_single_inputs() {
        assert!(both(&[]).is_empty());
        assert!(both(&[unit_at(Vec3::ZERO)]).is_empty());
    }

    #[test]
    fn sort_and_sweep_matches_brute_force_on_random_boxes() {
        let mut rng = SplitMix64::new(0xB0C5);
        let mut sweep = SortAndSweep::default();
        let (mut swept, mut brute) = (Vec::new(), Vec::new());
        let mut total_pairs = 0;
        for round in 0..20 {
            let count = 300 + round * 10;
            let boxes: Vec<Aabb> = (0..count)
                .map(|_| {
                    let min = Vec3::new(
                        rng.range_f32(0.0, 100.0),
                        rng.range_f32(0.0, 100.0),
                        rng.range_f32(0.0, 100.0),
                    );
                    // Mostly small boxes, some long and flat ones, some points,
                    // and coordinates snapped to integers so faces touch often.
                    let size = match rng.below(4) {
                        0 => Vec3::ZERO,
                        1 => Vec3::splat(rng.range_f32(0.0, 10.0)),
                        2 => Vec3::new(
                            rng.range_f32(0.0, 60.0),
                            rng.range_f32(0.0, 3.0),
                            rng.range_f32(0.0, 30.0),
                        ),
                        _ => Vec3::splat(rng.below(8) as f32),
                    };
                    let min = if round % 2 == 0 { min.floor() } else { min };
                    Aabb::new(min, min + size)
                })
                .collect();
            // The sweep reuses its scratch across rounds of different sizes.
            sweep.find_pairs(&boxes, &mut swept).unwrap();
            brute_force_pairs(&boxes, &mut brute).unwrap();
            swept.sort_unstable();
            assert_eq!(swept, brute, "round {round}");
            total_pairs += brute.len();
        }
        assert!(total_pairs > 1_000, "the comparison must see many pairs: {total_pairs}");
    }

    #[test]
    fn sort_and_sweep_matches_brute_force_on_object_clusters() {
        let mut rng = SplitMix64::new(77);
        let boxes: Vec<Aabb> = (0..800)
            .map(|_| {
                let c = Vec3::new(
                    rng.range_f32(0.0, 40.0),
                    rng.range_f32(0.0, 40.0),
                    rng.range_f32(0.0, 40.0),
                );
                object_box(c)
            })
            .collect();
        assert!(both(&boxes).len() > 500);
    }
}
