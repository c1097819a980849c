//! Status codes, the error object with its message, and the guard every exported function
//! runs its body in (null checks reported, panics caught).

use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What an ikarus function returns: [`IKARUS_OK`] or one of the `IKARUS_ERR_*` codes. The
/// error object, when asked for, says what exactly went wrong.
pub type IkarusStatus = i32;

/// Success.
pub const IKARUS_OK: IkarusStatus = 0;
/// A required pointer argument was NULL.
pub const IKARUS_ERR_NULL: IkarusStatus = 1;
/// A file could not be read (missing, unreadable).
pub const IKARUS_ERR_IO: IkarusStatus = 2;
/// A file or a JSON text could not be parsed; the message names the file or JSON position.
pub const IKARUS_ERR_PARSE: IkarusStatus = 3;
/// An argument is out of range or does not fit: an unknown joint name, a pose of another
/// skeleton, a buffer too small, a non-finite number, a solver that does not fit the task.
pub const IKARUS_ERR_INVALID: IkarusStatus = 4;
/// A string argument is not valid UTF-8.
pub const IKARUS_ERR_UTF8: IkarusStatus = 5;
/// The library panicked (a bug in ikarus: please report it with the message). The panic was
/// caught at the boundary; the handles passed in may hold a partial result but stay valid.
pub const IKARUS_ERR_PANIC: IkarusStatus = 6;

/// An error: a status code and a message. Created by the library through an
/// `IkarusError** err` argument, owned by the caller, freed with `ikarus_error_free`.
pub struct IkarusError {
    code: IkarusStatus,
    message: CString,
}

/// A failure inside the library, before it becomes an [`IkarusError`].
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: IkarusStatus,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(code: IkarusStatus, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn null(argument: &str) -> Self {
        Self::new(IKARUS_ERR_NULL, format!("`{argument}` is NULL"))
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(IKARUS_ERR_INVALID, message)
    }
}

impl From<ikarus_jobs::TaskError> for Failure {
    fn from(e: ikarus_jobs::TaskError) -> Self {
        let code = match &e {
            ikarus_jobs::TaskError::Parse { .. }
            | ikarus_jobs::TaskError::PostureModelParse { .. } => IKARUS_ERR_PARSE,
            ikarus_jobs::TaskError::PostureModelRead { .. } => IKARUS_ERR_IO,
            _ => IKARUS_ERR_INVALID,
        };
        Self::new(code, e.to_string())
    }
}

impl From<ikarus_formats::FormatError> for Failure {
    fn from(e: ikarus_formats::FormatError) -> Self {
        let code = if matches!(e, ikarus_formats::FormatError::Io { .. }) {
            IKARUS_ERR_IO
        } else {
            IKARUS_ERR_PARSE
        };
        Self::new(code, e.to_string())
    }
}

/// Runs `body` for an exported function: a panic becomes [`IKARUS_ERR_PANIC`], a failure is
/// stored into `*err` when `err` is not NULL (NULL is stored on success), and the status is
/// returned.
pub(crate) fn guard(
    err: *mut *mut IkarusError,
    body: impl FnOnce() -> Result<(), Failure>,
) -> IkarusStatus {
    match guard_value(err, body) {
        Ok(()) => IKARUS_OK,
        Err(code) => code,
    }
}

/// [`guard`] for a function returning a value: the failure's or panic's code instead of the
/// value, reported through `err` as [`guard`] does.
pub(crate) fn guard_value<T>(
    err: *mut *mut IkarusError,
    body: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, IkarusStatus> {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".to_owned());
        Err(Failure::new(
            IKARUS_ERR_PANIC,
            format!("ikarus panicked (a bug, please report it): {what}"),
        ))
    });
    let (value, error) = match outcome {
        Ok(value) => (Ok(value), std::ptr::null_mut()),
        Err(failure) if err.is_null() => (Err(failure.code), std::ptr::null_mut()),
        Err(failure) => {
            let message = CString::new(failure.message.replace('\0', "\\0")).unwrap_or_default();
            let error = Box::new(IkarusError {
                code: failure.code,
                message,
            });
            (Err(failure.code), Box::into_raw(error))
        }
    };
    if !err.is_null() {
        // SAFETY: the caller passes either NULL (checked) or a pointer to writable storage
        // for one `IkarusError*`, as every function's documentation requires.
        unsafe { err.write(error) };
    }
    value
}

/// A borrowed C string argument as UTF-8.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, argument: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::null(argument));
    }
    // SAFETY: not NULL (checked), NUL-terminated and valid by this function's contract.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str().map_err(|e| {
        Failure::new(
            IKARUS_ERR_UTF8,
            format!("`{argument}` is not valid UTF-8: {e}"),
        )
    })
}

/// A borrowed handle argument.
///
/// # Safety
/// `ptr` is NULL or a live handle of type `T` returned by this library, not used mutably
/// elsewhere during `'a`.
pub(crate) unsafe fn ref_arg<'a, T>(ptr: *const T, argument: &str) -> Result<&'a T, Failure> {
    // SAFETY: by this function's contract a non-NULL `ptr` is a live, shared handle.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::null(argument))
}

/// A borrowed mutable handle argument.
///
/// # Safety
/// `ptr` is NULL or a live handle of type `T` returned by this library, used by nothing else
/// during `'a`.
pub(crate) unsafe fn mut_arg<'a, T>(ptr: *mut T, argument: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: by this function's contract a non-NULL `ptr` is a live, exclusive handle.
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::null(argument))
}

/// Checks a buffer argument: not NULL, and `len` at least `needed` (`detail`, if not empty,
/// says what the count is made of, e.g. " (3 trackers)").
fn check_buffer(
    is_null: bool,
    len: usize,
    needed: usize,
    argument: &str,
    detail: &str,
) -> Result<(), Failure> {
    if is_null {
        return Err(Failure::null(argument));
    }
    if len < needed {
        return Err(Failure::invalid(format!(
            "`{argument}` holds {len} doubles; {needed} are needed{detail}"
        )));
    }
    Ok(())
}

/// A `double` array argument of at least `needed` values (see [`check_buffer`] for `detail`).
///
/// # Safety
/// `ptr` is NULL or points to `len` readable doubles that stay valid for `'a`.
pub(crate) unsafe fn in_slice<'a>(
    ptr: *const f64,
    len: usize,
    needed: usize,
    argument: &str,
    detail: &str,
) -> Result<&'a [f64], Failure> {
    check_buffer(ptr.is_null(), len, needed, argument, detail)?;
    // SAFETY: not NULL (checked); `len` readable doubles by this function's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A writable `double` array argument of at least `needed` values.
///
/// # Safety
/// `ptr` is NULL or points to `len` writable doubles used by nothing else during `'a`.
pub(crate) unsafe fn out_slice<'a>(
    ptr: *mut f64,
    len: usize,
    needed: usize,
    argument: &str,
) -> Result<&'a mut [f64], Failure> {
    check_buffer(ptr.is_null(), len, needed, argument, "")?;
    // SAFETY: not NULL (checked); `len` writable, exclusive doubles by this function's
    // contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Checks that two joint counts agree: "`subject` has `has` joints but `other` `joints`:
/// `advice`".
pub(crate) fn same_joints(
    (subject, has): (&str, usize),
    (other, joints): (&str, usize),
    advice: &str,
) -> Result<(), Failure> {
    if has == joints {
        Ok(())
    } else {
        Err(Failure::invalid(format!(
            "{subject} has {has} joints but {other} {joints}: {advice}"
        )))
    }
}

/// Frees a handle the library gave out with `Box::into_raw`. NULL is ignored.
///
/// # Safety
/// `ptr` is NULL or a `T` created by `Box::into_raw` in this library, not yet freed; it is
/// invalid after this call.
pub(crate) unsafe fn free_handle<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: created by `Box::into_raw`, freed only here, by this function's contract.
        drop(unsafe { Box::from_raw(ptr) });
    }
}

/// A string for C: owned by the caller, freed with `ikarus_string_free`.
pub(crate) fn c_string(text: &str) -> *mut c_char {
    CString::new(text.replace('\0', "\\0"))
        .unwrap_or_default()
        .into_raw()
}

/// The status code of an error; [`IKARUS_ERR_NULL`] for a NULL `err`.
///
/// # Safety
/// `err` is NULL or an error returned by this library and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_error_code(err: *const IkarusError) -> IkarusStatus {
    // SAFETY: NULL or a live error, by this function's contract.
    unsafe { err.as_ref() }.map_or(IKARUS_ERR_NULL, |e| e.code)
}

/// The message of an error: what went wrong and how to fix it (a file name with line and
/// column, an unknown joint, which argument was NULL). Borrowed from `err`: valid until
/// `ikarus_error_free(err)`, never freed by the caller. A NULL `err` gives a static message.
///
/// # Safety
/// `err` is NULL or an error returned by this library and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_error_message(err: *const IkarusError) -> *const c_char {
    // SAFETY: NULL or a live error, by this function's contract.
    match unsafe { err.as_ref() } {
        Some(e) => e.message.as_ptr(),
        None => c"no error (NULL)".as_ptr(),
    }
}

/// Frees an error. NULL is ignored.
///
/// # Safety
/// `err` is NULL or an error returned by this library, not yet freed; it is invalid after
/// this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_error_free(err: *mut IkarusError) {
    if !err.is_null() {
        // SAFETY: a live error created by `Box::into_raw` in `guard_value`, freed only here.
        drop(unsafe { Box::from_raw(err) });
    }
}

/// Frees a string returned by the library (a report's JSON). NULL is ignored.
///
/// # Safety
/// `s` is NULL or a string returned by this library, not yet freed; it is invalid after this
/// call. Strings from anywhere else must not be passed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: a live string created by `CString::into_raw` in `c_string`, freed only here.
        drop(unsafe { CString::from_raw(s) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let mut err = std::ptr::null_mut();
        let status = guard(&raw mut err, || panic!("boom at joint 3"));
        assert_eq!(status, IKARUS_ERR_PANIC);
        // SAFETY: the error just created, freed once.
        unsafe {
            assert_eq!(ikarus_error_code(err), IKARUS_ERR_PANIC);
            let message = CStr::from_ptr(ikarus_error_message(err)).to_str().unwrap();
            assert!(message.contains("boom at joint 3"), "{message}");
            ikarus_error_free(err);
        }
        // Without an error pointer only the status comes back; success clears `*err`.
        let status = guard(std::ptr::null_mut(), || Err(Failure::invalid("x")));
        assert_eq!(status, IKARUS_ERR_INVALID);
        let mut err = std::ptr::dangling_mut();
        assert_eq!(guard(&raw mut err, || Ok(())), IKARUS_OK);
        assert!(err.is_null());
    }
}
