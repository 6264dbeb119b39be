//! `serde` for the buffers (the `serde` feature): a [`Pool`] and an
//! [`AlignedColumn`] are written as the sequence of their elements, with
//! neither capacity nor alignment, and read back through their own
//! appends, so a column read from bytes is 64-byte aligned and padded as
//! one built by pushes is.

use super::column::{AlignedColumn, Lane};
use super::pool::Pool;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

impl<T: Copy + Serialize> Serialize for Pool<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}

impl<'de, T: Copy + Deserialize<'de>> Deserialize<'de> for Pool<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(deserializer)?;
        let mut pool = Pool::with_capacity(items.len());
        pool.extend_from_slice(&items);
        Ok(pool)
    }
}

impl<T: Lane + Serialize> Serialize for AlignedColumn<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}

impl<'de, T: Lane + Deserialize<'de>> Deserialize<'de> for AlignedColumn<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(deserializer)?;
        let mut column = AlignedColumn::new();
        column.extend_from_slice(&items);
        Ok(column)
    }
}
