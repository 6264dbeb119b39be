//! The persistent broad phase's calls one by one: stable handles and their
//! staleness, typed errors that change nothing, bulk calls on both the
//! calling thread and all threads, the no-margin rule for jumping proxies,
//! boxes at the ends of the `f32` range, static proxies, groups, and the
//! update's times.

use crate::corners::Corners;
use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, AdaptiveGrid, InputError};
use broadphase_persistent::{
    PersistentBroadPhase, PersistentConfig, Proxy, ProxyError, ProxyKind, UpdatePath, UpdateTimes,
};
use core::time::Duration;
use glam::Vec3;

fn unit_at(x: f32) -> Aabb {
    Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0))
}

#[test]
fn a_removed_handle_is_stale_and_its_slot_comes_back_with_a_new_generation() {
    let jobs = JobSystem::new(1);
    let mut world = PersistentBroadPhase::default();
    let a = world.insert(unit_at(0.0), ProxyKind::Dynamic).unwrap();
    let b = world.insert(unit_at(0.5), ProxyKind::Dynamic).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.pairs(), [[a, b]]);

    world.remove(a).unwrap();
    let stale = ProxyError::Stale { proxy: a, position: 0 };
    assert_eq!(world.remove(a), Err(stale.clone()));
    assert_eq!(world.set_aabb(a, unit_at(3.0)), Err(stale.clone()));
    assert_eq!(world.aabb(a), Err(stale.clone()));
    assert_eq!(world.kind(a), Err(stale.clone()));
    assert!(!world.contains(a));

    // Not reused before the update that ends its pairs.
    let c = world.insert(unit_at(0.25), ProxyKind::Dynamic).unwrap();
    assert_ne!(c.index(), a.index());
    world.update(&jobs).unwrap();
    assert_eq!(world.ended(), [[a, b]], "the removed proxy's pair ends under its old handle");
    assert_eq!(world.started(), [[b, c]]);

    let d = world.insert(unit_at(0.75), ProxyKind::Dynamic).unwrap();
    assert_eq!(d.index(), a.index(), "the freed slot is reused");
    assert_eq!(d.generation(), a.generation() + 1);
    assert!(!world.contains(a), "the old handle stays stale after reuse");
    assert!(world.contains(d));
    world.update(&jobs).unwrap();
    assert_eq!(world.started(), [[d, b], [d, c]]);
    assert_eq!(world.pairs(), [[d, b], [d, c], [b, c]]);
}

#[test]
fn a_handle_from_another_broad_phase_is_stale() {
    let mut other = PersistentBroadPhase::default();
    let foreign = other.insert(unit_at(0.0), ProxyKind::Dynamic).unwrap();
    let mut world = PersistentBroadPhase::default();
    assert!(matches!(world.set_aabb(foreign, unit_at(1.0)), Err(ProxyError::Stale { .. })));
}

#[test]
fn bad_boxes_are_typed_errors_that_change_nothing() {
    let mut world = PersistentBroadPhase::default();
    let nan = Aabb::new(Vec3::ZERO, Vec3::new(1.0, f32::NAN, 1.0));
    let inf = Aabb::new(Vec3::new(f32::NEG_INFINITY, 0.0, 0.0), Vec3::ONE);
    let inverted = Aabb { min: Vec3::ONE, max: Vec3::ZERO };
    for bad in [nan, inf, inverted] {
        assert!(matches!(world.insert(bad, ProxyKind::Dynamic), Err(ProxyError::Input(_))));
    }
    assert!(world.is_empty());

    let mut handles = Vec::new();
    let boxes = [unit_at(0.0), unit_at(1.0), inverted, unit_at(3.0)];
    let err = world.insert_many(&boxes, ProxyKind::Static, &mut handles).unwrap_err();
    assert!(matches!(err, ProxyError::Input(InputError::Inverted { index: 2, .. })), "{err:?}");
    assert!(world.is_empty() && handles.is_empty(), "nothing inserted");

    world.insert_many(&boxes[..2], ProxyKind::Dynamic, &mut handles).unwrap();
    let p = handles[0];
    assert!(matches!(world.set_aabb(p, nan), Err(ProxyError::Input(_))));
    assert_eq!(world.aabb(p).unwrap(), unit_at(0.0), "a rejected box is not applied");
}

/// A broad phase of `count` dynamic unit cubes 3 apart along x, updated
/// once on `jobs`, with their boxes and handles.
fn updated_row(jobs: &JobSystem, count: usize) -> (PersistentBroadPhase, Vec<Aabb>, Vec<Proxy>) {
    let mut world = PersistentBroadPhase::default();
    let boxes: Vec<Aabb> = (0..count).map(|i| unit_at(i as f32 * 3.0)).collect();
    let mut handles = Vec::new();
    world.insert_many(&boxes, ProxyKind::Dynamic, &mut handles).unwrap();
    world.update(jobs).unwrap();
    (world, boxes, handles)
}

#[test]
fn bulk_calls_check_everything_before_changing_anything() {
    for (threads, count) in [(1, 10), (2, 40_000), (4, 40_000)] {
        let jobs = JobSystem::new(threads);
        let (mut world, boxes, handles) = updated_row(&jobs, count);
        let moved: Vec<Aabb> = boxes.iter().map(|b| unit_at(b.min.x + 0.1)).collect();

        assert_eq!(
            world.set_aabbs(&jobs, &handles[1..], &moved),
            Err(ProxyError::LengthMismatch { proxies: count - 1, boxes: count })
        );

        let mut bad = moved.clone();
        bad[count - 3] = Aabb { min: Vec3::ONE, max: Vec3::ZERO };
        bad[count - 2].max.y = f32::NAN;
        let err = world.set_aabbs(&jobs, &handles, &bad).unwrap_err();
        assert!(
            matches!(err, ProxyError::Input(InputError::Inverted { index, .. }) if index == count - 3),
            "{threads} threads: {err:?}"
        );

        world.remove(handles[count / 2]).unwrap();
        let err = world.set_aabbs(&jobs, &handles, &moved).unwrap_err();
        assert_eq!(err, ProxyError::Stale { proxy: handles[count / 2], position: count / 2 });

        // Nothing moved: the update finds only the removal.
        world.update(&jobs).unwrap();
        assert_eq!(world.stats().reindexed, 0);
        assert_eq!(world.aabb(handles[0]).unwrap(), boxes[0]);

        // A handle given twice gets its last box.
        let live: Vec<Proxy> = handles.iter().copied().filter(|&h| world.contains(h)).collect();
        let mut twice = live.clone();
        twice.push(live[0]);
        let mut targets: Vec<Aabb> = live.iter().map(|&h| world.aabb(h).unwrap()).collect();
        targets.push(unit_at(-50.0));
        world.set_aabbs(&jobs, &twice, &targets).unwrap();
        assert_eq!(world.aabb(live[0]).unwrap(), unit_at(-50.0));
    }
}

#[test]
fn a_source_sets_its_good_boxes_and_names_its_first_bad_one() {
    // Below and above the parallel threshold, in slot order (each thread
    // reads its part of the call) and reversed (each reads all of it),
    // with bad boxes in more than one thread's range.
    for (count, threads) in [(100, 1), (40_000, 2), (40_000, 3)] {
        let jobs = JobSystem::new(threads);
        let (mut world, _, handles) = updated_row(&jobs, count);
        let reversed: Vec<Proxy> = handles.iter().rev().copied().collect();
        for (round, order) in [&handles, &reversed].into_iter().enumerate() {
            let before: Vec<Aabb> = order.iter().map(|&h| world.aabb(h).unwrap()).collect();
            let mut moved: Vec<Aabb> = before.iter().map(|b| unit_at(b.min.x + 2.5)).collect();
            let bad = [count / 3, count - 2, count - 1];
            moved[bad[0]].max.y = f32::NAN;
            moved[bad[1]] = Aabb { min: Vec3::ONE, max: Vec3::ZERO };
            moved[bad[2]].min.z = f32::NEG_INFINITY;

            assert_eq!(
                world.set_aabbs_from(&jobs, &order[1..], &Corners::of(&moved)),
                Err(ProxyError::LengthMismatch { proxies: count - 1, boxes: count })
            );
            let err = world.set_aabbs_from(&jobs, order, &Corners::of(&moved)).unwrap_err();
            assert!(
                matches!(err, ProxyError::Input(InputError::NotFinite { index, .. }) if index == bad[0]),
                "{threads} threads, round {round}: {err:?}"
            );
            for (i, &h) in order.iter().enumerate() {
                let expected = if bad.contains(&i) { before[i] } else { moved[i] };
                assert_eq!(world.aabb(h).unwrap(), expected, "{threads} threads, item {i}");
            }
            // The update pairs the boxes as they now are: a box left
            // behind meets the one that moved onto it.
            world.update(&jobs).unwrap();
            let now: Vec<Aabb> = handles.iter().map(|&h| world.aabb(h).unwrap()).collect();
            let mut expected = Vec::new();
            AdaptiveGrid::default().find_pairs(&now, &mut expected).unwrap();
            expected.sort_unstable();
            let found: Vec<[u32; 2]> =
                world.pairs().iter().map(|&[a, b]| [a.index(), b.index()]).collect();
            assert_eq!(found, expected, "{threads} threads, round {round}");
            assert!(!found.is_empty());
        }

        // A stale handle changes nothing, whatever the boxes.
        world.remove(handles[count / 2]).unwrap();
        let far: Vec<Aabb> = (0..count).map(|_| unit_at(-100.0)).collect();
        let err = world.set_aabbs_from(&jobs, &handles, &Corners::of(&far)).unwrap_err();
        assert_eq!(err, ProxyError::Stale { proxy: handles[count / 2], position: count / 2 });
        assert_ne!(world.aabb(handles[0]).unwrap(), far[0]);

        // The last good box given for a handle wins; a bad one after it
        // leaves it.
        let live: Vec<Proxy> = handles.iter().copied().filter(|&h| world.contains(h)).collect();
        let mut given = vec![live[0], live[1], live[0], live[1]];
        let mut targets = vec![unit_at(-50.0), unit_at(-60.0), unit_at(-70.0), unit_at(-80.0)];
        targets[3].max.x = f32::NAN;
        given.extend_from_slice(&live[2..]);
        targets.extend(live[2..].iter().map(|&h| world.aabb(h).unwrap()));
        let err = world.set_aabbs_from(&jobs, &given, &Corners::of(&targets)).unwrap_err();
        assert!(matches!(err, ProxyError::Input(InputError::NotFinite { index: 3, .. })));
        assert_eq!(world.aabb(live[0]).unwrap(), unit_at(-70.0));
        assert_eq!(world.aabb(live[1]).unwrap(), unit_at(-60.0));
    }
}

#[test]
fn remove_many_rejects_a_handle_given_twice() {
    let mut world = PersistentBroadPhase::default();
    let mut handles = Vec::new();
    world.insert_many(&[unit_at(0.0), unit_at(5.0)], ProxyKind::Dynamic, &mut handles).unwrap();
    let twice = [handles[1], handles[0], handles[1]];
    assert_eq!(
        world.remove_many(&twice),
        Err(ProxyError::Stale { proxy: handles[1], position: 2 })
    );
    assert_eq!(world.len(), 2, "nothing removed");
    world.remove_many(&handles).unwrap();
    assert!(world.is_empty());
}

#[test]
fn a_drifting_proxy_keeps_its_margin_and_a_jumping_one_gets_none() {
    let jobs = JobSystem::new(1);
    let config = PersistentConfig { margin: 0.25, ..Default::default() };
    let mut world = PersistentBroadPhase::with_config(config);
    let p = world.insert(unit_at(0.0), ProxyKind::Dynamic).unwrap();
    world.update(&jobs).unwrap();
    let fat = world.enlarged_aabb(p).unwrap();
    assert_eq!(fat, Aabb::new(Vec3::splat(-0.25), Vec3::new(1.25, 1.25, 1.25)));

    // Inside the margin: nothing re-indexed.
    world.set_aabb(p, unit_at(0.2)).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.stats().reindexed, 0);
    assert_eq!(world.enlarged_aabb(p).unwrap(), fat);

    // Out by a small step: re-indexed with a margin.
    world.set_aabb(p, unit_at(0.4)).unwrap();
    assert_eq!(world.enlarged_aabb(p).unwrap().min.x, 0.4 - 0.25);
    world.update(&jobs).unwrap();
    assert_eq!(world.stats().reindexed, 1);

    // A jump farther than the margin: no margin.
    world.set_aabb(p, unit_at(100.0)).unwrap();
    assert_eq!(world.enlarged_aabb(p).unwrap(), unit_at(100.0));
    world.update(&jobs).unwrap();
    assert_eq!(world.stats().reindexed, 1);
}

#[test]
fn boxes_at_the_ends_of_the_f32_range_stay_exact() {
    let jobs = JobSystem::new(2);
    let config = PersistentConfig { margin: 10.0, min_margin: f32::MAX, ..Default::default() };
    let mut world = PersistentBroadPhase::with_config(config);
    let huge = Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX));
    let far = Aabb::new(Vec3::splat(3.0e38), Vec3::splat(f32::MAX));
    let near = unit_at(0.0);
    let h = world.insert(huge, ProxyKind::Dynamic).unwrap();
    let f = world.insert(far, ProxyKind::Dynamic).unwrap();
    let n = world.insert(near, ProxyKind::Dynamic).unwrap();
    world.update(&jobs).unwrap();
    for p in [h, f, n] {
        let fat = world.enlarged_aabb(p).unwrap();
        assert!(fat.is_valid(), "{fat:?}");
    }
    assert_eq!(world.pairs(), [[h, f], [h, n]]);
    world.set_aabb(n, Aabb::new(Vec3::splat(3.0e38), Vec3::splat(3.1e38))).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.pairs(), [[h, f], [h, n], [f, n]]);
}

#[test]
fn negative_and_nan_margins_count_as_zero() {
    let jobs = JobSystem::new(1);
    for margin in [-1.0, f32::NAN] {
        let config = PersistentConfig { margin, min_margin: margin, ..Default::default() };
        let mut world = PersistentBroadPhase::with_config(config);
        let p = world.insert(unit_at(0.0), ProxyKind::Dynamic).unwrap();
        world.update(&jobs).unwrap();
        assert_eq!(world.enlarged_aabb(p).unwrap(), unit_at(0.0));
    }
}

#[test]
fn static_proxies_never_pair_with_each_other() {
    let jobs = JobSystem::new(1);
    let mut world = PersistentBroadPhase::default();
    let wall = world.insert(unit_at(0.0), ProxyKind::Static).unwrap();
    let floor = world.insert(unit_at(0.5), ProxyKind::Static).unwrap();
    let ball = world.insert(unit_at(10.0), ProxyKind::Dynamic).unwrap();
    world.update(&jobs).unwrap();
    assert!(world.pairs().is_empty());

    // A static proxy that wakes up pairs with the other static one.
    world.set_kind(floor, ProxyKind::Dynamic).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.started(), [[wall, floor]]);
    assert_eq!(world.kind(floor).unwrap(), ProxyKind::Dynamic);

    // Both static again: the pair ends though the boxes still touch.
    world.set_kind(floor, ProxyKind::Static).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.ended(), [[wall, floor]]);

    // A moved static proxy is re-indexed exactly, with no margin.
    world.set_aabb(wall, unit_at(10.5)).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.enlarged_aabb(wall).unwrap(), unit_at(10.5));
    assert_eq!(world.pairs(), [[wall, ball]]);
    assert_eq!(world.stats().path, UpdatePath::Full, "one of three re-indexed is over a quarter");
}

#[test]
fn proxies_of_one_group_never_pair_and_a_group_change_moves_nothing() {
    let jobs = JobSystem::new(2);
    // The incremental path alone, so each change below is re-indexed
    // like a kind change rather than recomputed by a full update.
    let config = PersistentConfig { full_rebuild_fraction: f32::INFINITY, ..Default::default() };
    let mut world = PersistentBroadPhase::with_config(config);
    let hull = world.insert(unit_at(0.0), ProxyKind::Dynamic).unwrap();
    let wing = world.insert(unit_at(0.5), ProxyKind::Dynamic).unwrap();
    let dock = world.insert(unit_at(0.75), ProxyKind::Static).unwrap();
    world.set_group(hull, 1).unwrap();
    world.set_group(wing, 1).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.pairs(), [[hull, dock], [wing, dock]], "one ship's parts never pair");

    // The wing leaves the ship: the pair starts, though nothing moved.
    world.set_group(wing, 0).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.started(), [[hull, wing]]);
    assert!(world.ended().is_empty());

    // The dock joins the hull's group: a static proxy's group counts too.
    world.set_group(dock, 1).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.ended(), [[hull, dock]]);
    assert_eq!(world.pairs(), [[hull, wing], [wing, dock]]);

    // Setting the group a proxy has is no change at all.
    world.set_group(dock, 1).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.stats().path, UpdatePath::Unchanged);

    // A removed proxy's handle is refused, and its group goes with it.
    world.remove(wing).unwrap();
    let stale = ProxyError::Stale { proxy: wing, position: 0 };
    assert_eq!(world.set_group(wing, 1), Err(stale.clone()));
    assert_eq!(world.group(wing), Err(stale));
    world.update(&jobs).unwrap();
    let again = world.insert(unit_at(0.5), ProxyKind::Dynamic).unwrap();
    assert_eq!((again.index(), world.group(again).unwrap()), (wing.index(), 0));
    world.update(&jobs).unwrap();
    assert_eq!(world.started(), [[hull, again], [again, dock]]);
}

/// Regression: slots that never held a proxy (an ECS's ids of entities
/// without a box, such as compound bodies' body entities, one in five
/// here) all hold the default box, one point. A full update that ran the
/// tree over the slots in place paired every one of them with every
/// other: 400 million pairs for 30,000 of them, found and then dropped.
#[test]
fn many_never_used_slots_do_not_make_a_full_update_quadratic() {
    broadphase_testkit::within(60, || {
        let jobs = JobSystem::new(2);
        let mut world = PersistentBroadPhase::default();
        let mut live = Vec::new();
        for k in 0..150_000u32 {
            if k % 5 != 0 {
                let x = (k % 1000) as f32 * 2.0;
                let y = (k / 1000) as f32 * 2.0;
                let aabb = Aabb::new(Vec3::new(x, y, 0.0), Vec3::new(x + 1.5, y + 1.5, 1.0));
                live.push(world.insert_at(k, aabb, ProxyKind::Dynamic).unwrap());
            }
        }
        world.update(&jobs).unwrap();
        assert_eq!(world.stats().path, UpdatePath::Full);
        assert!(world.pairs().is_empty(), "no box touches another");
        // Every box moves: full updates again, each as cheap as the first.
        for step in 1..4 {
            let boxes: Vec<Aabb> = live
                .iter()
                .map(|&p| {
                    let b = world.aabb(p).unwrap();
                    Aabb::new(b.min + Vec3::Z * step as f32, b.max + Vec3::Z * step as f32)
                })
                .collect();
            world.set_aabbs(&jobs, &live, &boxes).unwrap();
            world.update(&jobs).unwrap();
            assert_eq!(world.stats().path, UpdatePath::Full);
        }
    });
}

#[test]
fn bulk_sets_on_all_threads_write_every_box_in_any_order() {
    use broadphase_scenes::SplitMix64;
    // Handles in slot order let each thread read only its part of the
    // call; any other order makes it read all of it. Both must write
    // every box, with gaps in the slots and at the ranges' edges.
    let count = 40_000;
    let mut rng = SplitMix64::new(5);
    for threads in [2, 3, 4] {
        let jobs = JobSystem::new(threads);
        let (mut world, _, handles) = updated_row(&jobs, count);
        let every_third: Vec<Proxy> = handles.iter().copied().step_by(3).collect();
        let mut shuffled = handles.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i + 1));
        }
        let reversed: Vec<Proxy> = handles.iter().rev().copied().collect();
        for (round, order) in [&handles, &every_third, &shuffled, &reversed].into_iter().enumerate()
        {
            let targets: Vec<Aabb> = order
                .iter()
                .map(|h| unit_at(h.index() as f32 * 3.0 + 0.25 * (round + 1) as f32))
                .collect();
            world.set_aabbs(&jobs, order, &targets).unwrap();
            for (&h, &target) in order.iter().zip(&targets) {
                assert_eq!(world.aabb(h).unwrap(), target, "{threads} threads, order {round}");
            }
            world.update(&jobs).unwrap();
        }
    }
}

#[test]
fn a_big_index_split_over_threads_finds_the_same_pairs() {
    use broadphase_kernel::AdaptiveGrid;
    use broadphase_scenes::{SplitMix64, uniform};
    // 140,000 proxies on 2 threads: the index is two grids, each over a
    // slab of space; small margins so that proxies are re-indexed and
    // queried every frame, those near the cut against both grids.
    let jobs = JobSystem::new(2);
    let mut boxes = uniform(140_000, 11).boxes;
    let config = PersistentConfig { margin: 0.01, ..Default::default() };
    let mut world = PersistentBroadPhase::with_config(config);
    let mut handles = Vec::new();
    world.insert_many(&boxes, ProxyKind::Dynamic, &mut handles).unwrap();
    world.update(&jobs).unwrap();
    let mut rng = SplitMix64::new(3);
    let mut rebuilt = false;
    for frame in 0..6 {
        for b in boxes.iter_mut().step_by(7) {
            let step = Vec3::splat(rng.range_f32(-0.3, 0.3));
            *b = Aabb::new(b.min + step, b.max + step);
        }
        world.set_aabbs(&jobs, &handles, &boxes).unwrap();
        world.update(&jobs).unwrap();
        rebuilt |= world.stats().index_rebuilt;
        assert_eq!(world.stats().path, UpdatePath::Incremental, "frame {frame}");
        let mut expected = Vec::new();
        AdaptiveGrid::default().find_pairs(&boxes, &mut expected).unwrap();
        expected.sort_unstable();
        let got: Vec<[u32; 2]> =
            world.pairs().iter().map(|[a, b]| [a.index(), b.index()]).collect();
        assert_eq!(got, expected, "frame {frame}");
    }
    assert!(rebuilt, "the index was built in parts");
}

#[test]
fn update_times_split_each_update_and_an_idle_one_is_zero() {
    let jobs = JobSystem::new(2);
    let mut world = PersistentBroadPhase::default();
    let boxes: Vec<Aabb> = (0..2_000).map(|i| unit_at(0.5 * i as f32)).collect();
    let mut handles = Vec::new();
    world.insert_many(&boxes, ProxyKind::Dynamic, &mut handles).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.stats().path, UpdatePath::Full);
    let full = *world.update_times();
    // A tree over 2,000 boxes and a merge of ~4,000 pairs take time.
    assert!(full.candidates > Duration::ZERO && full.merge > Duration::ZERO, "{full:?}");
    assert!(full.candidates + full.merge <= full.total, "{full:?}");

    world.set_aabb(handles[7], unit_at(10_000.0)).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.stats().path, UpdatePath::Incremental);
    let incremental = *world.update_times();
    assert!(incremental.total > Duration::ZERO, "{incremental:?}");
    assert!(incremental.candidates + incremental.merge <= incremental.total, "{incremental:?}");

    // Nothing changed: no work, and last update's times are not kept.
    world.update(&jobs).unwrap();
    assert_eq!(*world.update_times(), UpdateTimes::default());
}

/// `UpdateStats::reindexed` counts the live proxies re-indexed: a proxy
/// moved and then removed before the update is not one, on the
/// incremental path and on the full one.
#[test]
fn reindexed_counts_live_moved_proxies_on_both_paths() {
    let jobs = JobSystem::new(2);
    for moved in [2usize, 150] {
        let mut world = PersistentBroadPhase::default();
        let boxes: Vec<Aabb> = (0..200).map(|i| unit_at(3.0 * i as f32)).collect();
        let mut handles = Vec::new();
        world.insert_many(&boxes, ProxyKind::Dynamic, &mut handles).unwrap();
        world.update(&jobs).unwrap();
        for &h in &handles[..moved] {
            let aabb = world.aabb(h).unwrap();
            world.set_aabb(h, Aabb::new(aabb.min + 1_000.0, aabb.max + 1_000.0)).unwrap();
        }
        world.remove(handles[0]).unwrap();
        world.update(&jobs).unwrap();
        let path = if moved > 100 { UpdatePath::Full } else { UpdatePath::Incremental };
        assert_eq!(world.stats().path, path);
        assert_eq!(world.stats().reindexed, moved - 1, "{path:?}");
    }
}
