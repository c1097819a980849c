//! Posture from joint points (seed 004, IK overview: particle IK): the local rotations that put
//! every joint's children where a set of model-space points says, with the twist the points cannot
//! see taken from a reference pose. FABRIK recovers its posture this way, and motion capture (joint
//! positions from a camera) will too.
//!
//! Per joint, parents first, with the joint placed where its recovered parent puts it:
//! - **one child**: the rotation taking the bone's direction in the reference pose to the
//!   direction toward the child's point, applied on top of the reference rotation (the
//!   shortest arc; the twist about the bone stays the reference's, the IK overview's `a_i`, `θ_i`);
//! - **several children** (chest, pelvis: the IK overview's `(l_j l_k l_m) = R (l_j0 l_k0 l_m0)`):
//!   the rotation that best turns the rest child vectors onto the observed ones, solved as a proper
//!   rotation (Horn's quaternion method: the top eigenvector of a symmetric 4×4 matrix, so the
//!   result is orthonormal with det +1 however noisy the points are). Coplanar vectors still
//!   determine it; collinear ones leave the twist about their line free, and the rotation
//!   nearest the reference is taken (the joint is reported as degenerate);
//! - **no child**: the reference rotation.
//!
//! The root's position comes, as in the seed, from the mean of its children's points (with the
//! rest offsets' mean subtracted after rotation: the least-squares placement), or from its own
//! point ([`RootPlacement`]).
//!
//! Vectors are compared in each joint's parent space, so scaled and mirrored parents give exact
//! results too.

use glam::{DAffine3, DQuat, DVec3, DVec4};
use ikarus_core::{JointId, LocalPose, Skeleton};

/// Accumulates weighted pairs `(from, to)` and finds the proper rotation `R` maximising
/// `Σ w · to · (R from)` (Wahba's problem), falling back on a reference rotation for what the
/// pairs leave undetermined.
#[derive(Clone, Copy, Debug)]
pub struct RotationFit {
    /// `Σ w · from ⊗ to` (`s[a][b] = Σ w from_a to_b`).
    s: [[f64; 3]; 3],
    /// `Σ w · |from| · |to|`, the objective's upper bound (the scale of the eigenvalues).
    bound: f64,
    pairs: u32,
    first: (DVec3, DVec3),
}

/// What [`RotationFit::solve`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitResult {
    /// The rotation.
    pub rotation: DQuat,
    /// True when the pairs fixed all three degrees of freedom; false when part of the rotation
    /// (the twist about a single direction, or everything without pairs) came from the
    /// reference.
    pub determined: bool,
}

impl Default for RotationFit {
    fn default() -> Self {
        Self::new()
    }
}

impl RotationFit {
    /// No pairs yet.
    pub fn new() -> Self {
        Self {
            s: [[0.0; 3]; 3],
            bound: 0.0,
            pairs: 0,
            first: (DVec3::ZERO, DVec3::ZERO),
        }
    }

    /// Number of pairs kept (pairs with a zero-length vector or a weight that is not positive
    /// carry no direction and are skipped).
    pub fn pairs(&self) -> u32 {
        self.pairs
    }

    /// Adds a pair with weight `weight > 0`.
    pub fn add(&mut self, from: DVec3, to: DVec3, weight: f64) {
        let (from_length, to_length) = (from.length(), to.length());
        let usable = |l: f64| l.is_finite() && l > 1e-300;
        if !(weight.is_finite() && weight > 0.0 && usable(from_length) && usable(to_length)) {
            return;
        }
        if self.pairs == 0 {
            self.first = (from, to);
        }
        let from = from * weight;
        for (a, row) in self.s.iter_mut().enumerate() {
            for (b, cell) in row.iter_mut().enumerate() {
                *cell += from[a] * to[b];
            }
        }
        self.bound += weight * from_length * to_length;
        self.pairs += 1;
    }

    /// The best rotation. One pair gives the shortest arc applied on top of `reference`
    /// (`arc(reference · from, to) · reference`: the twist about `to` stays the reference's);
    /// several are solved with Horn's quaternion method, and when their vectors are collinear
    /// the optimal rotations form a one-parameter family from which the one nearest
    /// `reference` is taken. Without pairs, `reference`.
    pub fn solve(&self, reference: DQuat) -> FitResult {
        match self.pairs {
            0 => FitResult {
                rotation: reference,
                determined: false,
            },
            1 => FitResult {
                rotation: shortest_arc_on(reference, self.first.0, self.first.1),
                determined: false,
            },
            _ => self.horn(reference),
        }
    }

    fn horn(&self, reference: DQuat) -> FitResult {
        let s = &self.s;
        let (sxx, sxy, sxz) = (s[0][0], s[0][1], s[0][2]);
        let (syx, syy, syz) = (s[1][0], s[1][1], s[1][2]);
        let (szx, szy, szz) = (s[2][0], s[2][1], s[2][2]);
        // Horn (1987), quaternion order (w, x, y, z).
        let n = [
            [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
            [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
            [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
            [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
        ];
        let (values, vectors) = symmetric_eigen4(n);
        let column =
            |k: usize| DVec4::new(vectors[0][k], vectors[1][k], vectors[2][k], vectors[3][k]);
        let to_quat = |v: DVec4| DQuat::from_xyzw(v.y, v.z, v.w, v.x).normalize();
        let r = DVec4::new(reference.w, reference.x, reference.y, reference.z);
        let gap = values[0] - values[1];
        let top = column(0);
        if gap > 1e-9 * self.bound {
            let q = to_quat(top);
            let q = if q.dot(reference) < 0.0 { -q } else { q };
            return FitResult {
                rotation: q,
                determined: true,
            };
        }
        // Collinear vectors: every quaternion of the top two eigenvectors' plane is optimal.
        let second = column(1);
        let projection = top * r.dot(top) + second * r.dot(second);
        let rotation = if projection.length() > 1e-6 {
            to_quat(projection)
        } else {
            to_quat(top)
        };
        FitResult {
            rotation,
            determined: false,
        }
    }
}

/// `arc(reference · from, to) · reference`: the smallest rotation on top of `reference` that
/// turns `from` (in the frame `reference` rotates) onto the direction of `to`.
pub fn shortest_arc_on(reference: DQuat, from: DVec3, to: DVec3) -> DQuat {
    shortest_arc_on_with_length(reference, from, from.length(), to)
}

/// [`shortest_arc_on`] for a caller that knows `from_length = |from|` (a bone's length): one
/// square root fewer in the inner loop of FABRIK.
pub(crate) fn shortest_arc_on_with_length(
    reference: DQuat,
    from: DVec3,
    from_length: f64,
    to: DVec3,
) -> DQuat {
    let current = reference * from;
    // With c = current × to, d = current · to and n = |current| |to|, the arc is the
    // quaternion (c, n + d) normalised; normalising once after the product with `reference`
    // gives the same rotation.
    let n = from_length * to.length();
    let d = current.dot(to);
    if !(n.is_finite() && n > 0.0 && d.is_finite()) {
        return reference;
    }
    let arc = if d < (-1.0 + 1e-12) * n {
        let axis = (current / from_length).any_orthonormal_vector();
        DQuat::from_axis_angle(axis, std::f64::consts::PI)
    } else {
        let c = current.cross(to);
        DQuat::from_xyzw(c.x, c.y, c.z, n + d)
    };
    (arc * reference).normalize()
}

/// Eigen-decomposition of a symmetric 4×4 matrix by cyclic Jacobi rotations: eigenvalues in
/// decreasing order and the matching unit eigenvectors as columns (`vectors[i][k]` is component
/// `i` of vector `k`).
#[allow(clippy::needless_range_loop)] // (p, q, r) index pairs of the matrix read best as written
fn symmetric_eigen4(mut a: [[f64; 4]; 4]) -> ([f64; 4], [[f64; 4]; 4]) {
    let mut v = [[0.0; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let norm: f64 = a.iter().flatten().map(|x| x * x).sum();
    for _ in 0..32 {
        let mut off = 0.0;
        for p in 0..4 {
            for q in p + 1..4 {
                off += a[p][q] * a[p][q];
            }
        }
        if off <= 1e-32 * norm {
            break;
        }
        for p in 0..4 {
            for q in p + 1..4 {
                let apq = a[p][q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                a[p][p] -= t * apq;
                a[q][q] += t * apq;
                a[p][q] = 0.0;
                a[q][p] = 0.0;
                for r in 0..4 {
                    if r != p && r != q {
                        let (arp, arq) = (a[r][p], a[r][q]);
                        a[r][p] = c * arp - s * arq;
                        a[p][r] = a[r][p];
                        a[r][q] = s * arp + c * arq;
                        a[q][r] = a[r][q];
                    }
                }
                for row in &mut v {
                    let (vrp, vrq) = (row[p], row[q]);
                    row[p] = c * vrp - s * vrq;
                    row[q] = s * vrp + c * vrq;
                }
            }
        }
    }
    let mut order = [0, 1, 2, 3];
    order.sort_by(|&i, &j| a[j][j].total_cmp(&a[i][i]));
    let values = order.map(|k| a[k][k]);
    let mut vectors = [[0.0; 4]; 4];
    for (column, &k) in order.iter().enumerate() {
        for i in 0..4 {
            vectors[i][column] = v[i][k];
        }
    }
    (values, vectors)
}

/// Where the root goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RootPlacement {
    /// Seed 004 (particle IK): from the mean of the children's points (roots with at least two
    /// children; others use their own point). The root's own point is not read.
    #[default]
    FromChildren,
    /// At the root's own point.
    FromPoint,
}

/// Options of [`recover_posture`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RecoverConfig {
    /// Where each root goes. Default [`RootPlacement::FromChildren`].
    pub root: RootPlacement,
}

/// What [`recover_posture`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecoverReport {
    /// Largest distance between a joint of the recovered pose (by forward kinematics) and its
    /// point, model space. Zero up to rounding when the points come from a pose of the same
    /// skeleton; larger when they do not keep the bone lengths.
    pub position_error: f64,
    /// Joints with children whose points did not determine the rotation: the children's
    /// vectors were collinear or of zero length (or the parent's frame was singular), so the
    /// twist, or all of the rotation, was taken from the reference. One-child joints are not
    /// listed: their twist always comes from the reference.
    pub degenerate: Vec<JointId>,
}

/// Why points could not be turned into a posture.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RecoverError {
    /// `points` or the reference pose is not sized for the skeleton: pass one point per joint,
    /// indexed like the skeleton's joints.
    #[error("expected {expected} entries (one per joint), found {found}")]
    WrongLength {
        /// Joints in the skeleton.
        expected: usize,
        /// Entries given.
        found: usize,
    },
    /// A point is NaN or infinite; drop or fill in the joint first.
    #[error("the point of joint `{joint}` is not finite")]
    NonFinitePoint {
        /// The joint's name.
        joint: String,
    },
    /// The reference pose holds NaN or infinite values.
    #[error("the reference pose is not finite")]
    NonFiniteReference,
}

/// Buffers for [`recover_posture_with`]: with a warm workspace recovery allocates nothing
/// (except the list of degenerate joints when there are some).
#[derive(Clone, Debug, Default)]
pub struct RecoverWorkspace {
    model: Vec<DAffine3>,
}

impl RecoverWorkspace {
    /// An empty workspace; it sizes itself on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The posture whose joints sit at `points` (model space, one per joint), twist and childless
/// joints from `reference` (see the module docs). Writes it into `pose`.
///
/// # Errors
/// [`RecoverError`] for points or a reference that do not fit the skeleton or are not finite;
/// `pose` is then untouched.
pub fn recover_posture(
    skeleton: &Skeleton,
    reference: &LocalPose,
    points: &[DVec3],
    config: &RecoverConfig,
    pose: &mut LocalPose,
) -> Result<RecoverReport, RecoverError> {
    recover_posture_with(
        skeleton,
        reference,
        points,
        config,
        &mut RecoverWorkspace::new(),
        pose,
    )
}

/// [`recover_posture`] with reusable buffers.
///
/// # Errors
/// As [`recover_posture`].
pub fn recover_posture_with(
    skeleton: &Skeleton,
    reference: &LocalPose,
    points: &[DVec3],
    config: &RecoverConfig,
    workspace: &mut RecoverWorkspace,
    pose: &mut LocalPose,
) -> Result<RecoverReport, RecoverError> {
    let n = skeleton.len();
    for found in [points.len(), reference.len()] {
        if found != n {
            return Err(RecoverError::WrongLength { expected: n, found });
        }
    }
    if let Some(j) = points.iter().position(|p| !p.is_finite()) {
        return Err(RecoverError::NonFinitePoint {
            joint: skeleton.name(JointId::from_index(j)).to_owned(),
        });
    }
    if !reference.is_finite() {
        return Err(RecoverError::NonFiniteReference);
    }
    if pose.len() == n {
        pose.transforms_mut()
            .copy_from_slice(reference.transforms());
    } else {
        *pose = reference.clone();
    }

    let model = &mut workspace.model;
    model.clear();
    model.resize(n, DAffine3::IDENTITY);
    let mut report = RecoverReport::default();
    for j in skeleton.joints() {
        let model_from_parent = skeleton
            .parent(j)
            .map_or(DAffine3::IDENTITY, |p| model[p.index()]);
        let determined = place_joint(skeleton, j, &model_from_parent, points, *config, pose);
        if !determined {
            report.degenerate.push(j);
        }
        model[j.index()] = model_from_parent * pose[j].to_affine();
        let error = (model[j.index()].translation - points[j.index()]).length();
        report.position_error = report.position_error.max(error);
    }
    Ok(report)
}

/// Sets joint `j`'s rotation (and a root's translation) from its children's points. Returns
/// false when children exist but did not determine the rotation.
fn place_joint(
    skeleton: &Skeleton,
    j: JointId,
    model_from_parent: &DAffine3,
    points: &[DVec3],
    config: RecoverConfig,
    pose: &mut LocalPose,
) -> bool {
    let local = pose[j];
    let parent_from_model = model_from_parent.matrix3.inverse();
    if !parent_from_model.is_finite() || model_from_parent.matrix3.determinant() == 0.0 {
        return skeleton.children(j).next().is_none();
    }
    let children = skeleton.children(j).count();
    let mut fit = RotationFit::new();
    if skeleton.parent(j).is_none() {
        if config.root == RootPlacement::FromChildren && children >= 2 {
            return place_root_from_children(skeleton, j, points, pose);
        }
        pose[j].translation = points[j.index()];
    }
    let at = model_from_parent.transform_point3(pose[j].translation);
    for c in skeleton.children(j) {
        // Parent-space vectors: the child's offset in the joint's frame, scaled, turns into
        // `rotation · (scale ⊙ translation)`.
        let to = parent_from_model * (points[c.index()] - at);
        fit.add(local.scale * pose[c].translation, to, 1.0);
    }
    let result = fit.solve(local.rotation);
    pose[j].rotation = result.rotation;
    children == 0 || result.determined || (children == 1 && fit.pairs() == 1)
}

/// A root with two or more children: rotation from the centred child vectors, translation from
/// the mean of the children's points (the IK overview's `p_root = (p_j + p_k + p_m) / 3`, less the
/// rotated mean rest offset).
fn place_root_from_children(
    skeleton: &Skeleton,
    root: JointId,
    points: &[DVec3],
    pose: &mut LocalPose,
) -> bool {
    let local = pose[root];
    let mut count = 0.0;
    let (mut mean_point, mut mean_offset) = (DVec3::ZERO, DVec3::ZERO);
    for c in skeleton.children(root) {
        mean_point += points[c.index()];
        mean_offset += local.scale * pose[c].translation;
        count += 1.0;
    }
    mean_point /= count;
    mean_offset /= count;
    let mut fit = RotationFit::new();
    for c in skeleton.children(root) {
        let from = local.scale * pose[c].translation - mean_offset;
        fit.add(from, points[c.index()] - mean_point, 1.0);
    }
    let result = fit.solve(local.rotation);
    pose[root].rotation = result.rotation;
    pose[root].translation = mean_point - result.rotation * mean_offset;
    result.determined
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DMat3;

    #[test]
    fn horn_recovers_a_known_rotation_and_rejects_reflections() {
        let truth = DQuat::from_axis_angle(DVec3::new(0.3, -0.5, 0.8).normalize(), 2.3);
        let mut fit = RotationFit::new();
        for f in [
            DVec3::new(1.0, 0.2, -0.3),
            DVec3::new(-0.4, 1.1, 0.5),
            DVec3::new(0.2, -0.7, 0.9),
        ] {
            fit.add(f, truth * f, 1.0);
        }
        let result = fit.solve(DQuat::IDENTITY);
        assert!(result.determined);
        assert!(result.rotation.angle_between(truth) < 1e-12);
        // Mirrored targets: the best proper rotation, never a reflection.
        let mut fit = RotationFit::new();
        for f in [DVec3::X, DVec3::Y, DVec3::Z] {
            fit.add(f, DVec3::new(-f.x, f.y, f.z), 1.0);
        }
        let q = fit.solve(DQuat::IDENTITY).rotation;
        assert!((q.length() - 1.0).abs() < 1e-12);
        assert!((DMat3::from_quat(q).determinant() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn collinear_pairs_keep_the_reference_twist() {
        let reference = DQuat::from_axis_angle(DVec3::new(1.0, 1.0, 0.0).normalize(), 0.7);
        let mut fit = RotationFit::new();
        let to = DVec3::new(0.2, 0.9, -0.4);
        fit.add(DVec3::X, to, 1.0);
        fit.add(DVec3::X * 2.0, to * 3.0, 0.5);
        let result = fit.solve(reference);
        assert!(!result.determined);
        let single = shortest_arc_on(reference, DVec3::X, to);
        assert!(result.rotation.angle_between(single) < 1e-7);
        assert!((result.rotation * DVec3::X - to.normalize()).length() < 1e-9);
    }
}
