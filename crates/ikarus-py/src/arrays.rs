//! Argument checks and numpy conversions: every array argument goes through [`f64_array`] and
//! [`expect_shape`], so a wrong dtype, shape or a NaN is a `ValueError` naming the argument.

use numpy::ndarray::{ArrayViewD, Dimension, IxDyn};
use numpy::{PyArrayDyn, PyReadonlyArrayDyn, ToPyArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// `obj` as a float64 array: a float64 numpy array is borrowed as it is (any strides); other
/// integer or float arrays and nested sequences of numbers are converted once.
///
/// # Errors
/// `ValueError` naming `name` when `obj` is not numbers (strings, objects, complex, bool).
pub fn f64_array<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<PyReadonlyArrayDyn<'py, f64>> {
    if let Ok(array) = obj.extract::<PyReadonlyArrayDyn<'py, f64>>() {
        return Ok(array);
    }
    let numpy = obj.py().import("numpy")?;
    let converted = numpy
        .call_method1("asarray", (obj,))
        .map_err(|e| PyValueError::new_err(format!("{name}: not an array of numbers ({e})")))?;
    let dtype = converted.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "i" | "u" | "f") {
        return Err(PyValueError::new_err(format!(
            "{name}: expected float64 numbers, got dtype {}",
            dtype.str()?
        )));
    }
    converted
        .call_method1("astype", ("float64",))?
        .extract::<PyReadonlyArrayDyn<'py, f64>>()
        .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))
}

/// Checks that `array` has shape `expected` (`None` entries take any length) and only finite
/// values.
///
/// # Errors
/// `ValueError`: "`name`: expected shape (N, 7), got (5, 4)" or "`name`: non-finite value at
/// index (2, 1)".
pub fn expect_shape(
    array: &ArrayViewD<'_, f64>,
    name: &str,
    expected: &[Option<usize>],
) -> PyResult<()> {
    check_shape(array, name, expected)?;
    require_finite(array, name)
}

/// As [`expect_shape`], without the finiteness check (for points where NaN marks a gap).
///
/// # Errors
/// `ValueError` naming `name`, the expected and the found shape.
pub fn check_shape(
    array: &ArrayViewD<'_, f64>,
    name: &str,
    expected: &[Option<usize>],
) -> PyResult<()> {
    let shape = array.shape();
    let fits = shape.len() == expected.len()
        && shape
            .iter()
            .zip(expected)
            .all(|(&n, e)| e.is_none_or(|e| e == n));
    if !fits {
        let want: Vec<String> = expected
            .iter()
            .enumerate()
            .map(|(i, e)| {
                e.map_or_else(
                    || ["N", "J", "K", "M"][i.min(3)].to_owned(),
                    |e| e.to_string(),
                )
            })
            .collect();
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape ({}), got {}",
            want.join(", "),
            shape_text(shape)
        )));
    }
    Ok(())
}

/// `(5, 4)` for a shape.
pub fn shape_text(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(ToString::to_string).collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// # Errors
/// `ValueError` naming `name` and the first non-finite element's index.
pub fn require_finite(array: &ArrayViewD<'_, f64>, name: &str) -> PyResult<()> {
    if let Some((index, _)) = array.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{name}: non-finite value at index {}",
            shape_text(index.slice())
        )));
    }
    Ok(())
}

/// A new float64 numpy array of `shape` holding `data` (row-major).
///
/// # Panics
/// When `data.len()` is not the product of `shape` (a bug in the caller).
pub fn to_numpy<'py>(
    py: Python<'py>,
    shape: &[usize],
    data: &[f64],
) -> Bound<'py, PyArrayDyn<f64>> {
    let view = ArrayViewD::from_shape(IxDyn(shape), data).expect("data fits the shape");
    view.to_pyarray(py)
}

/// Rows of a 2-D view as vectors.
pub fn rows(array: &ArrayViewD<'_, f64>) -> Vec<Vec<f64>> {
    array
        .outer_iter()
        .map(|r| r.iter().copied().collect())
        .collect()
}
