//! Small linear-algebra pieces the closed-form solvers share (two-bone, aim): a joint's space
//! through the adjugate, pole twist and scale removal.

use glam::{DAffine3, DMat3, DVec3};

/// Rows of the adjugate (`det · m⁻¹`) and the determinant.
#[inline]
pub(crate) fn adjugate_rows(m: &DMat3) -> ([DVec3; 3], f64) {
    let r0 = m.y_axis.cross(m.z_axis);
    let r1 = m.z_axis.cross(m.x_axis);
    let r2 = m.x_axis.cross(m.y_axis);
    ([r0, r1, r2], m.x_axis.dot(r0))
}

/// The rows applied to `v` (`adjugate · v`).
#[inline]
pub(crate) fn apply_rows(rows: [DVec3; 3], v: DVec3) -> DVec3 {
    DVec3::new(rows[0].dot(v), rows[1].dot(v), rows[2].dot(v))
}

/// `v` itself when it is of unit length (to 1e-12), else normalized (NaN for zero).
#[inline]
pub(crate) fn unit_or_nan(v: DVec3) -> DVec3 {
    let length2 = v.length_squared();
    if (length2 - 1.0).abs() <= 1e-12 {
        v
    } else {
        v * length2.sqrt().recip()
    }
}

/// `pole` turned by `angle` about `axis` (only its part normal to `axis` matters).
#[inline(never)]
pub(crate) fn twist(pole: DVec3, axis: DVec3, angle: f64) -> DVec3 {
    let axis2 = axis.length_squared();
    if axis2 == 0.0 {
        return pole;
    }
    let k = axis * axis2.sqrt().recip();
    let (sin, cos) = angle.sin_cos();
    pole * cos + k.cross(pole) * sin
}

/// `model_from_joint` without the joint's own local scale: the frame a correction
/// post-multiplied onto the local rotation turns in.
pub(crate) fn unscaled(model: DAffine3, scale: DVec3) -> DAffine3 {
    if scale == DVec3::ONE {
        model
    } else {
        DAffine3::from_mat3_translation(
            DMat3::from_cols(
                model.matrix3.x_axis / scale.x,
                model.matrix3.y_axis / scale.y,
                model.matrix3.z_axis / scale.z,
            ),
            model.translation,
        )
    }
}
