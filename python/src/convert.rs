//! numpy arrays in and out: shapes, dtypes, the float64 → float32 rules,
//! and the errors that name the first bad row.
//!
//! Everything is copied into the crates' own types while the interpreter
//! is held: the work then runs detached on data no Python thread can
//! change under it.

use broadphase::Aabb;
use broadphase::glam::Vec3;
use broadphase::neighbors::{CheckedPoints, PointError};
use numpy::ndarray::ArrayView2;
use numpy::{
    PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray2, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// How a float64 coordinate becomes a float32 one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// To the nearest float32 (points, ray origins and directions).
    Nearest,
    /// To the float32 at or below it (a box's min corner).
    Down,
    /// To the float32 at or above it (a box's max corner, a ray's end).
    Up,
}

/// `x` as float32, rounded as `round` says; ±inf where it lies beyond the
/// float32 range in that direction.
fn narrow(x: f64, round: Round) -> f32 {
    let y = x as f32;
    match round {
        Round::Down if f64::from(y) > x => y.next_down(),
        Round::Up if f64::from(y) < x => y.next_up(),
        _ => y,
    }
}

/// An element type a coordinate array may have.
trait Coord: numpy::Element + Copy {
    const ZERO: Self;
    fn narrow(self, round: Round) -> f32;
    fn wide(self) -> f64;
    /// The slice itself if its values are float32 already.
    fn as_float32(values: &[Self]) -> Option<&[f32]>;
}

impl Coord for f32 {
    const ZERO: Self = 0.0;
    fn narrow(self, _: Round) -> f32 {
        self
    }
    fn wide(self) -> f64 {
        f64::from(self)
    }
    fn as_float32(values: &[Self]) -> Option<&[f32]> {
        Some(values)
    }
}

impl Coord for f64 {
    const ZERO: Self = 0.0;
    fn narrow(self, round: Round) -> f32 {
        narrow(self, round)
    }
    fn wide(self) -> f64 {
        self
    }
    fn as_float32(_: &[Self]) -> Option<&[f32]> {
        None
    }
}

/// A float value as Python's `repr` prints it, for messages.
pub(crate) fn show(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    python_exponent(format!("{v:?}"))
}

/// A float32 value as numpy prints it: its shortest decimal form, not
/// that of its float64 widening (`0.6`, not `0.6000000238418579`).
pub(crate) fn show32(v: f32) -> String {
    if v.is_finite() { python_exponent(format!("{v:?}")) } else { show(v.into()) }
}

/// Rust's debug form of a float is Python's but for the exponent: `1e39`
/// and `1e-5` where Python writes `1e+39` and `1e-05`.
fn python_exponent(text: String) -> String {
    match text.split_once('e') {
        Some((mantissa, exponent)) => {
            let (sign, digits) = match exponent.strip_prefix('-') {
                Some(digits) => ('-', digits),
                None => ('+', exponent),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => text,
    }
}

/// `obj` itself, or a copy of it if it is a numpy array whose data is not
/// aligned for its dtype (views into it are only sound on aligned data)
/// or not in this machine's byte order (a big-endian file read on a
/// little-endian machine): the copy has the same values, aligned, in
/// native order.
fn aligned<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let Ok(array) = obj.cast::<PyUntypedArray>() else {
        return Ok(obj.clone());
    };
    let dtype = array.dtype();
    if dtype.is_native_byteorder() == Some(false) {
        let native = dtype.call_method1("newbyteorder", ("=",))?;
        return obj.call_method1("astype", (native,));
    }
    if !array.is_aligned() {
        return obj.call_method0("copy");
    }
    Ok(obj.clone())
}

/// A shape as Python prints it.
fn show_shape(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// The `ValueError` for row `row` of what a call takes (`box 3: ...`).
pub(crate) fn bad_row(what: &str, row: usize, message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{what} {row}: {message}"))
}

/// A refused row, kept with its number so that a call checking several
/// arrays of one row each can report the first bad row of all of them.
#[derive(Debug)]
pub(crate) struct RowError {
    row: usize,
    error: PyErr,
}

impl RowError {
    /// The refusal `error` of row `row`.
    pub(crate) fn new(row: usize, error: PyErr) -> Self {
        Self { row, error }
    }
}

impl From<RowError> for PyErr {
    fn from(e: RowError) -> Self {
        e.error
    }
}

/// All three values, or the error of the lowest row (on a tie, the first
/// argument's: the order in which a ray's parts are checked).
pub(crate) fn first_bad_row<A, B, C>(
    a: Result<A, RowError>,
    b: Result<B, RowError>,
    c: Result<C, RowError>,
) -> PyResult<(A, B, C)> {
    match (a, b, c) {
        (Ok(a), Ok(b), Ok(c)) => Ok((a, b, c)),
        (a, b, c) => {
            let first = [a.err(), b.err(), c.err()].into_iter().flatten().min_by_key(|e| e.row);
            Err(first.map_or_else(|| crate::threads::failed("no error found"), |e| e.error))
        }
    }
}

/// Rows of an `(n, 2)` or `(n, 3)` view, read as three values (z = 0 for
/// two columns), through the flat slice when the array is C-contiguous.
struct Rows<'a, T> {
    flat: Option<&'a [T]>,
    view: ArrayView2<'a, T>,
    dims: usize,
}

impl<'a, T: Coord> Rows<'a, T> {
    fn new(view: ArrayView2<'a, T>) -> Self {
        Self { flat: view.to_slice(), dims: view.ncols(), view }
    }

    /// The values as one flat float32 slice, when they are float32 rows of
    /// three in C order: the form that needs no conversion.
    fn float32_xyz(&self) -> Option<&'a [f32]> {
        let flat = self.flat.filter(|_| self.dims == 3)?;
        T::as_float32(flat)
    }

    #[inline(always)]
    fn row(&self, i: usize) -> [T; 3] {
        let d = self.dims;
        match self.flat {
            Some(flat) => {
                let r = &flat[i * d..i * d + d];
                [r[0], r[1], if d == 3 { r[2] } else { T::ZERO }]
            }
            None => [
                self.view[[i, 0]],
                self.view[[i, 1]],
                if d == 3 { self.view[[i, 2]] } else { T::ZERO },
            ],
        }
    }
}

enum Data<'py> {
    F32(PyReadonlyArray2<'py, f32>),
    F64(PyReadonlyArray2<'py, f64>),
}

/// An `(n, 3)` or `(n, 2)` float32 or float64 array, as given, with the
/// name of the argument it came from.
pub(crate) struct Coords<'py> {
    name: &'static str,
    shape: [usize; 2],
    data: Data<'py>,
}

impl<'py> Coords<'py> {
    /// Checks that `obj` is a numpy array of shape `(n, 3)` or `(n, 2)` and
    /// dtype float32 or float64.
    pub(crate) fn extract(obj: &Bound<'py, PyAny>, name: &'static str) -> PyResult<Self> {
        let Ok(array) = obj.cast::<PyUntypedArray>() else {
            return Err(PyTypeError::new_err(format!(
                "{name} must be a numpy array, got {}",
                obj.get_type().name()?
            )));
        };
        let shape = array.shape();
        if shape.len() != 2 || !matches!(shape[1], 2 | 3) {
            return Err(PyValueError::new_err(format!(
                "{name} must have shape (n, 3) or (n, 2), got {}",
                show_shape(shape)
            )));
        }
        let shape = [shape[0], shape[1]];
        let obj = &aligned(obj)?;
        let borrowed = |e| PyValueError::new_err(format!("{name} is being written elsewhere: {e}"));
        let data = if let Ok(a) = obj.cast::<PyArray2<f32>>() {
            Data::F32(a.try_readonly().map_err(borrowed)?)
        } else if let Ok(a) = obj.cast::<PyArray2<f64>>() {
            Data::F64(a.try_readonly().map_err(borrowed)?)
        } else {
            return Err(PyValueError::new_err(format!(
                "{name} has dtype {}, expected float32 or float64",
                array.dtype()
            )));
        };
        Ok(Self { name, shape, data })
    }

    /// Rows.
    pub(crate) fn len(&self) -> usize {
        self.shape[0]
    }

    /// Columns: 2 or 3.
    pub(crate) fn dims(&self) -> usize {
        self.shape[1]
    }

    /// Checks that `other` has this array's shape.
    pub(crate) fn same_shape(&self, other: &Coords<'_>) -> PyResult<()> {
        if self.shape == other.shape {
            return Ok(());
        }
        Err(PyValueError::new_err(format!(
            "{} has shape {} but {} has shape {}",
            self.name,
            show_shape(&self.shape),
            other.name,
            show_shape(&other.shape)
        )))
    }

    /// Every row as a point, rounded to the nearest float32; `what` names
    /// a row in errors (`point 3: ...`). A NaN or infinite value, or one
    /// beyond the float32 range, is a `ValueError` naming the first.
    pub(crate) fn points(&self, what: &str) -> PyResult<Vec<Vec3>> {
        Ok(self.points_by_row(what)?)
    }

    /// [`points`](Self::points), checked as the neighbor searches check
    /// their input and with their bounds, so that a build need not read
    /// them again ([`CheckedPoints`]). float32 rows are copied, checked and
    /// bounded in one pass.
    pub(crate) fn checked_points(&self, what: &str) -> PyResult<CheckedPoints> {
        if let Data::F32(a) = &self.data
            && let Some(flat) = Rows::new(a.as_array()).float32_xyz()
        {
            return Ok(copy_float32(self.name, what, flat)?);
        }
        let points = self.points(what)?;
        // Finite already: only a count beyond u32 can be refused here.
        CheckedPoints::check(points).map_err(|(error, buffer)| {
            crate::pool::give_back_points(buffer);
            crate::threads::failed(error)
        })
    }

    /// [`points`](Self::points), the error keeping its row.
    pub(crate) fn points_by_row(&self, what: &str) -> Result<Vec<Vec3>, RowError> {
        match &self.data {
            Data::F32(a) => points_of(self.name, &Rows::new(a.as_array()), self.len(), what),
            Data::F64(a) => points_of(self.name, &Rows::new(a.as_array()), self.len(), what),
        }
    }
}

fn points_of<T: Coord>(
    name: &str,
    rows: &Rows<'_, T>,
    n: usize,
    what: &str,
) -> Result<Vec<Vec3>, RowError> {
    if let Some(flat) = rows.float32_xyz() {
        return copy_float32(name, what, flat).map(CheckedPoints::into_buffer);
    }
    let mut out = crate::pool::take_points(n);
    for i in 0..n {
        let row = rows.row(i);
        let p = row.map(|v| v.narrow(Round::Nearest));
        if !p.iter().all(|v| v.is_finite()) {
            let axis = (0..3).find(|&a| !p[a].is_finite()).unwrap_or(0);
            return Err(RowError {
                row: i,
                error: not_finite(what, name, i, axis, row[axis].wide()),
            });
        }
        out.push(Vec3::from_array(p));
    }
    Ok(out)
}

/// float32 rows `(x, y, z)` copied into a pooled buffer, checked and
/// bounded in the same pass ([`CheckedPoints::copy_from_xyz`]); a refusal
/// names the first bad coordinate's row.
fn copy_float32(name: &str, what: &str, flat: &[f32]) -> Result<CheckedPoints, RowError> {
    let (xyz, _) = flat.as_chunks::<3>();
    let mut checked = CheckedPoints::with_buffer(crate::pool::take_points(xyz.len()));
    match checked.copy_from_xyz(xyz) {
        Ok(()) => Ok(checked),
        Err(error) => {
            crate::pool::give_back_points(checked.into_buffer());
            Err(match error {
                PointError::NotFinite { index, axis, value } => RowError {
                    row: index,
                    error: not_finite(what, name, index, axis as usize, f64::from(value)),
                },
                other => RowError { row: 0, error: crate::threads::failed(other) },
            })
        }
    }
}

/// Why `name[row, axis]` (the value `v`) was refused: not finite, or
/// finite but beyond float32.
fn not_finite(what: &str, name: &str, row: usize, axis: usize, v: f64) -> PyErr {
    let why = if v.is_finite() { "is outside the float32 range" } else { "is not a finite number" };
    bad_row(what, row, format!("{name}[{row}, {axis}] = {} {why}", show(v)))
}

/// The boxes of two corner arrays of one shape, `min` rounded down and
/// `max` up, so a box never shrinks in float32: no overlap is lost. `what`
/// names a row in errors (`box 3: ...`). The first box with a NaN or
/// infinite coordinate, `min > max` (compared as given, before rounding)
/// or a coordinate beyond float32 is a `ValueError`.
pub(crate) fn boxes(mins: &Coords<'_>, maxs: &Coords<'_>, what: &str) -> PyResult<Vec<Aabb>> {
    mins.same_shape(maxs)?;
    let names = [mins.name, maxs.name];
    let n = mins.len();
    match (&mins.data, &maxs.data) {
        (Data::F32(a), Data::F32(b)) => {
            boxes_of(names, &Rows::new(a.as_array()), &Rows::new(b.as_array()), n, what)
        }
        (Data::F32(a), Data::F64(b)) => {
            boxes_of(names, &Rows::new(a.as_array()), &Rows::new(b.as_array()), n, what)
        }
        (Data::F64(a), Data::F32(b)) => {
            boxes_of(names, &Rows::new(a.as_array()), &Rows::new(b.as_array()), n, what)
        }
        (Data::F64(a), Data::F64(b)) => {
            boxes_of(names, &Rows::new(a.as_array()), &Rows::new(b.as_array()), n, what)
        }
    }
}

fn boxes_of<A: Coord, B: Coord>(
    names: [&str; 2],
    lo: &Rows<'_, A>,
    hi: &Rows<'_, B>,
    n: usize,
    what: &str,
) -> PyResult<Vec<Aabb>> {
    if let (Some(a), Some(b)) = (lo.float32_xyz(), hi.float32_xyz()) {
        // Float32 rows of three, as given: checked whole with folds the
        // compiler vectorizes (no early exit), then copied as they lie.
        // Only a refused input looks for its first bad row.
        let fine = a
            .iter()
            .zip(b)
            .fold(true, |ok, (x, y)| ok & (x.is_finite() & y.is_finite() & (x <= y)));
        if !fine {
            let i = (0..n)
                .find(|&i| {
                    (0..3).any(|k| {
                        !(a[3 * i + k].is_finite()
                            && b[3 * i + k].is_finite()
                            && a[3 * i + k] <= b[3 * i + k])
                    })
                })
                .unwrap_or(0);
            return Err(box_error(names, lo.row(i), hi.row(i), i, what));
        }
        return Ok(a
            .chunks_exact(3)
            .zip(b.chunks_exact(3))
            .map(|(a, b)| Aabb::new(Vec3::from_slice(a), Vec3::from_slice(b)))
            .collect());
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (lo.row(i), hi.row(i));
        let min = a.map(|v| v.narrow(Round::Down));
        let max = b.map(|v| v.narrow(Round::Up));
        let fine = (0..3).all(|k| min[k].is_finite() && max[k].is_finite())
            && (0..3).all(|k| a[k].wide() <= b[k].wide());
        if !fine {
            return Err(box_error(names, a, b, i, what));
        }
        out.push(Aabb::new(Vec3::from_array(min), Vec3::from_array(max)));
    }
    Ok(out)
}

/// The first thing wrong with box `row`, in the order the crates check a
/// box (per axis: min, max, min ≤ max), then the float32 range.
#[cold]
fn box_error<A: Coord, B: Coord>(
    names: [&str; 2],
    a: [A; 3],
    b: [B; 3],
    row: usize,
    what: &str,
) -> PyErr {
    for k in 0..3 {
        let (lo, hi) = (a[k].wide(), b[k].wide());
        if !lo.is_finite() {
            return not_finite(what, names[0], row, k, lo);
        }
        if !hi.is_finite() {
            return not_finite(what, names[1], row, k, hi);
        }
        if lo > hi {
            let [min, max] = names;
            return bad_row(
                what,
                row,
                format!("{min}[{row}, {k}] = {} > {max}[{row}, {k}] = {}", show(lo), show(hi)),
            );
        }
    }
    for k in 0..3 {
        if !a[k].narrow(Round::Down).is_finite() {
            return not_finite(what, names[0], row, k, a[k].wide());
        }
        if !b[k].narrow(Round::Up).is_finite() {
            return not_finite(what, names[1], row, k, b[k].wide());
        }
    }
    bad_row(what, row, "is not a valid box")
}

/// Per-row lengths (a ray's `max_t`, a sphere's radius): one float for
/// every row, or a 1-D float32 or float64 array of `n`. Rounded up to
/// float32; NaN or negative is a `ValueError` naming the first (as `what`
/// `row`), in the inner result, and so is infinity or a value beyond
/// float32 where `finite`; a wrong type or shape is the outer one.
pub(crate) fn lengths(
    obj: &Bound<'_, PyAny>,
    n: usize,
    name: &str,
    what: &str,
    finite: bool,
) -> PyResult<Result<Vec<f32>, RowError>> {
    let check = |row: usize, v: f64| -> Result<f32, RowError> {
        let at = || {
            if obj.cast::<PyUntypedArray>().is_ok() {
                format!("{name}[{row}]")
            } else {
                name.to_owned()
            }
        };
        if v.is_nan() || v < 0.0 {
            let error = bad_row(what, row, format!("{} = {} must be >= 0", at(), show(v)));
            return Err(RowError { row, error });
        }
        let length = narrow(v, Round::Up);
        if finite && length.is_infinite() {
            let why = if v.is_finite() { "is outside the float32 range" } else { "is not finite" };
            let error = bad_row(what, row, format!("{} = {} {why}", at(), show(v)));
            return Err(RowError { row, error });
        }
        Ok(length)
    };
    let obj = &aligned(obj)?;
    if let Ok(array) = obj.cast::<PyUntypedArray>() {
        if array.shape() != [n] {
            return Err(PyValueError::new_err(format!(
                "{name} must be a float or an array of shape ({n},), got shape {}",
                show_shape(array.shape())
            )));
        }
        let values: Vec<f64> = if let Ok(a) = obj.cast::<PyArray1<f32>>() {
            a.try_readonly()?.as_array().iter().map(|&v| f64::from(v)).collect()
        } else if let Ok(a) = obj.cast::<PyArray1<f64>>() {
            a.try_readonly()?.as_array().to_vec()
        } else {
            return Err(PyValueError::new_err(format!(
                "{name} has dtype {}, expected float32 or float64",
                array.dtype()
            )));
        };
        return Ok(values.into_iter().enumerate().map(|(i, v)| check(i, v)).collect());
    }
    let v: f64 = obj.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name} must be a float or a numpy array, got {}",
            obj.get_type().name().map(|s| s.to_string()).unwrap_or_default()
        ))
    })?;
    Ok(match n {
        0 => Ok(Vec::new()),
        _ => check(0, v).map(|one| vec![one; n]),
    })
}

/// A 1-D array of integer ids in `0..=max` (any signed or unsigned numpy
/// integer dtype of 8 to 64 bits); `what` names a position in errors.
pub(crate) fn ids(obj: &Bound<'_, PyAny>, name: &str, what: &str, max: u32) -> PyResult<Vec<u32>> {
    let Ok(array) = obj.cast::<PyUntypedArray>() else {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a numpy array of integers, got {}",
            obj.get_type().name()?
        )));
    };
    if array.ndim() != 1 {
        return Err(PyValueError::new_err(format!(
            "{name} must have shape (n,), got {}",
            show_shape(array.shape())
        )));
    }
    let obj = &aligned(obj)?;
    macro_rules! try_int {
        ($($t:ty),*) => {$(
            if let Ok(a) = obj.cast::<PyArray1<$t>>() {
                let a = a.try_readonly()?;
                let mut out = Vec::with_capacity(a.len());
                for (i, &v) in a.as_array().iter().enumerate() {
                    match u32::try_from(v) {
                        Ok(id) if id <= max => out.push(id),
                        _ => {
                            return Err(bad_row(what, i, format!(
                                "{name}[{i}] = {v} is not an id in 0..={max}"
                            )));
                        }
                    }
                }
                return Ok(out);
            }
        )*};
    }
    try_int!(i64, i32, u64, u32, i16, u16, i8, u8);
    Err(PyValueError::new_err(format!("{name} has dtype {}, expected integers", array.dtype())))
}

/// Pairs as an `(m, 2)` uint32 array, without a copy: the array owns
/// `pairs`' memory, which goes back to the pool when Python frees it.
pub(crate) fn pairs_array(
    py: Python<'_>,
    pairs: Vec<[u32; 2]>,
) -> PyResult<Bound<'_, PyArray2<u32>>> {
    crate::pool::pairs_array(py, pairs)
}
