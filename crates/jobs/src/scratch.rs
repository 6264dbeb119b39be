//! Per-thread scratch memory, one value per type.

use core::fmt;
use std::any::{Any, TypeId};

/// A small map from type to one value of that type, owned by one thread
/// that runs jobs; values live until the job system is dropped.
#[derive(Default)]
pub(crate) struct ScratchMap {
    slots: Vec<Box<dyn Any + Send>>,
}

impl fmt::Debug for ScratchMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScratchMap").field("values", &self.slots.len()).finish()
    }
}

impl ScratchMap {
    /// The value of type `T`, made with `T::default()` on first use.
    pub(crate) fn get<T: Default + Send + 'static>(&mut self) -> &mut T {
        // `(**slot)` is the `dyn Any` itself, not the `Box` (which is `Any` too).
        let found = self.slots.iter().position(|slot| (**slot).type_id() == TypeId::of::<T>());
        let index = found.unwrap_or_else(|| {
            self.slots.push(Box::new(T::default()));
            self.slots.len() - 1
        });
        match (*self.slots[index]).downcast_mut::<T>() {
            Some(value) => value,
            None => unreachable!("slot {index} holds a T by construction"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ScratchMap;

    #[test]
    fn one_value_per_type_kept_across_calls() {
        let mut map = ScratchMap::default();
        map.get::<Vec<u32>>().push(3);
        *map.get::<u64>() += 5;
        map.get::<Vec<u32>>().push(4);
        assert_eq!(map.get::<Vec<u32>>(), &[3, 4]);
        assert_eq!(*map.get::<u64>(), 5);
    }
}
