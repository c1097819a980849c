//! The degrees of freedom of a task's [`JointPath`] as the columns of a Jacobian, the stacked
//! residual of its goals, and the Jacobian itself: the assembly every Jacobian-based solver
//! ([`jacobian`](crate::iterative::jacobian), Levenberg–Marquardt) shares.
//!
//! # Columns
//! Each path joint contributes columns by its limit:
//! - [`JointLimit::Hinge`]: one column, the angle the effector side turns about the hinge's
//!   model-space axis. It is applied through [`Iteration::rotate_hinge`], so the hinge's
//!   `[min, max]` act as a box; [`Dofs::hinge_value`] / [`Dofs::hinge_bounds`] /
//!   [`Dofs::set_hinge_value`] give box-constrained solvers the value and its bounds.
//! - [`JointLimit::Locked`]: no column.
//! - anything else: three columns, a model-space rotation vector `(ωx, ωy, ωz)` about the
//!   joint's origin, applied through [`Iteration::rotate`]; the driver then projects the
//!   joint onto its limit (the columns are the unconstrained derivative).
//!
//! Every column is the motion of the **effector side**: for a [`Side::Base`] joint the driver
//! turns the joint the other way and moves the root to keep the base in place, and the
//! effectors then turn by `+ω` about the joint, so base-side columns have the same form as
//! effector-side ones (no sign to flip; checked against finite differences through the root
//! in `tests/jacobian.rs`).
//!
//! # Rows
//! For each effector of weight `w > 0`, in task order: three rows `w · (target − position)`
//! for a position goal (model space), then three rows `w · log(goal · current⁻¹)` (the
//! model-space rotation vector, radians) for an orientation goal. Weight-0 effectors get no
//! rows. `J` holds the matching derivatives: `∂position/∂q` and the effector's model-space
//! angular velocity per unit `q`, each times `w`, so a step `Δq` with `J Δq = e` moves every
//! goal's residual to zero to first order.
//!
//! # Parents with scale
//! With rigid parents (any rotation and translation) and under uniform scale or mirroring the
//! Jacobian is exact. Under a non-uniform parent scale the position rows of effector-side
//! joints stay exact (`A (a × A⁻¹ d)` with the parent's linear map `A`); the orientation rows
//! and base-side joints then use the rotational part of that motion, a first-order
//! approximation (orientation is not even well defined under shear).
//!
//! # Layout and cost
//! `J` is row-major, `rows × columns`: entry `(r, c)` at `j[r * columns + c]`; `e` has
//! `rows` entries, `Δq` `columns`. Building `J` costs one pass over the path joints and their
//! effectors and allocates nothing; [`Dofs::rebuild`] sizes the layout once per solve.

use glam::{DMat3, DQuat, DVec3};
use ikarus_core::{HingeLimit, JointId, JointLimit, Skeleton};

use crate::IkTask;
use crate::iterative::driver::Iteration;
use crate::iterative::path::{JointPath, PathJoint, Side};

/// What one column turns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DofKind {
    /// The angle of a hinge (radians, effector side), within the hinge's range.
    Hinge(HingeLimit),
    /// Component `0`, `1` or `2` (x, y, z) of a model-space rotation vector about the joint.
    Rotation(u8),
}

/// One column of the Jacobian.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dof {
    /// Index of the path joint in [`JointPath::joints`].
    pub path_index: usize,
    /// The path joint.
    pub joint: PathJoint,
    /// What the column turns.
    pub kind: DofKind,
}

/// Whether a block of three rows measures a position or an orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// `w · (target − position)`, model space.
    Position,
    /// `w · log(goal · current⁻¹)`, a model-space rotation vector.
    Orientation,
}

/// Three consecutive rows: one goal of one effector.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowBlock {
    /// Index of the effector in the task.
    pub effector: usize,
    /// Position or orientation.
    pub kind: RowKind,
    /// First of the three rows.
    pub row: usize,
}

/// The column and row layout of a task's path (see the module docs), rebuilt per solve and
/// reused across solves without allocating once warm.
#[derive(Clone, Debug, Default)]
pub struct Dofs {
    columns: Vec<Dof>,
    /// Per path joint: its first column and how many it has (0, 1 or 3).
    per_joint: Vec<(usize, usize)>,
    blocks: Vec<RowBlock>,
    /// Per effector: its row blocks as a range into `blocks`.
    per_effector: Vec<(usize, usize)>,
}

impl Dofs {
    /// An empty layout; [`Dofs::rebuild`] fills it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lays out the columns of `path`'s joints and the rows of `task`'s goals.
    pub fn rebuild(&mut self, skeleton: &Skeleton, task: &IkTask, path: &JointPath) {
        self.columns.clear();
        self.per_joint.clear();
        for (k, &pj) in path.joints().iter().enumerate() {
            let first = self.columns.len();
            let mut push = |kind| {
                self.columns.push(Dof {
                    path_index: k,
                    joint: pj,
                    kind,
                });
            };
            match skeleton.limit(pj.joint) {
                JointLimit::Locked => {}
                JointLimit::Hinge(h) => push(DofKind::Hinge(*h)),
                _ => (0..3).for_each(|axis| push(DofKind::Rotation(axis))),
            }
            self.per_joint.push((first, self.columns.len() - first));
        }
        self.blocks.clear();
        self.per_effector.clear();
        for (i, e) in task.effectors.iter().enumerate() {
            let first = self.blocks.len();
            if e.weight > 0.0 {
                for (goal, kind) in [
                    (e.goal.position.is_some(), RowKind::Position),
                    (e.goal.orientation.is_some(), RowKind::Orientation),
                ] {
                    if goal {
                        let row = 3 * self.blocks.len();
                        self.blocks.push(RowBlock {
                            effector: i,
                            kind,
                            row,
                        });
                    }
                }
            }
            self.per_effector.push((first, self.blocks.len()));
        }
    }

    /// Number of columns (degrees of freedom).
    pub fn columns(&self) -> usize {
        self.columns.len()
    }

    /// Number of rows (three per goal of every effector with a positive weight).
    pub fn rows(&self) -> usize {
        3 * self.blocks.len()
    }

    /// The columns, in path order (tip first), three per ball-like joint.
    pub fn dofs(&self) -> &[Dof] {
        &self.columns
    }

    /// The row blocks, in task order.
    pub fn blocks(&self) -> &[RowBlock] {
        &self.blocks
    }

    /// Path joint `k`'s columns as `(first, count)`.
    pub fn joint_columns(&self, k: usize) -> (usize, usize) {
        self.per_joint[k]
    }

    /// Writes the weighted residual `e` (see the module docs) of the current model pose. It
    /// reads only the effectors, which the driver keeps current after every joint update, so
    /// it is valid right after [`Dofs::apply`] or [`Dofs::restore`] (a trial step) without
    /// [`Iteration::update_model`].
    ///
    /// # Panics
    /// When `e` is shorter than [`Dofs::rows`].
    pub fn residual(&self, ctx: &Iteration<'_>, e: &mut [f64]) {
        let (task, model) = (ctx.task(), ctx.model());
        for block in &self.blocks {
            let effector = &task.effectors[block.effector];
            let v = match block.kind {
                RowKind::Position => {
                    effector.goal.position.unwrap_or_default() - model.position(effector.joint)
                }
                RowKind::Orientation => rotation_vector(
                    effector.goal.orientation.unwrap_or_default()
                        * model.rotation(effector.joint).conjugate(),
                ),
            };
            e[block.row..block.row + 3].copy_from_slice(&(v * effector.weight).to_array());
        }
    }

    /// Writes the Jacobian of the residual's goals (row-major `rows × columns`, see the module
    /// docs) at the current model pose. The model must be up to date (it is at the start of a
    /// sweep; mid-sweep call [`Iteration::update_model`] first).
    ///
    /// # Panics
    /// When `j` is shorter than `rows × columns`.
    pub fn jacobian(&self, ctx: &Iteration<'_>, j: &mut [f64]) {
        let n = self.columns.len();
        j[..self.rows() * n].fill(0.0);
        let (skeleton, task, model, path) = (ctx.skeleton(), ctx.task(), ctx.model(), ctx.path());
        for (k, &pj) in path.joints().iter().enumerate() {
            let (first, count) = self.per_joint[k];
            if count == 0 {
                continue;
            }
            let origin = model.position(pj.joint);
            let motion = ParentMotion::new(skeleton, ctx, pj.joint);
            for c in first..first + count {
                // The axis in model space as if the parent were rigid.
                let axis = match self.columns[c].kind {
                    DofKind::Hinge(h) => {
                        motion.rotation * (skeleton.rest(pj.joint).rotation * h.axis)
                    }
                    DofKind::Rotation(i) => DVec3::AXES[usize::from(i)],
                };
                let column = motion.column(axis, pj.side);
                for &i in path.affects(k) {
                    let (from, to) = self.per_effector[usize::from(i)];
                    let effector = &task.effectors[usize::from(i)];
                    for block in &self.blocks[from..to] {
                        let v = match block.kind {
                            RowKind::Position => {
                                column.velocity(model.position(effector.joint) - origin)
                            }
                            RowKind::Orientation => column.angular,
                        } * effector.weight;
                        for (r, x) in v.to_array().into_iter().enumerate() {
                            j[(block.row + r) * n + c] = x;
                        }
                    }
                }
            }
        }
    }

    /// Turns every joint by its entries of `dq` (effector side: hinge columns in radians,
    /// rotation columns as a model-space rotation vector), tip first, through the driver
    /// (per-step clamp, limits, base kept in place). Returns nothing: the driver records the
    /// largest step.
    ///
    /// # Panics
    /// When `dq` is shorter than [`Dofs::columns`].
    pub fn apply(&self, ctx: &mut Iteration<'_>, dq: &[f64]) {
        for (k, &(first, count)) in self.per_joint.iter().enumerate() {
            let pj = ctx.path().joints()[k];
            match (count, self.columns.get(first).map(|d| d.kind)) {
                (1, Some(DofKind::Hinge(h))) => {
                    ctx.rotate_hinge(pj, &h, dq[first]);
                }
                (3, _) => {
                    let w = DVec3::new(dq[first], dq[first + 1], dq[first + 2]);
                    if w != DVec3::ZERO {
                        ctx.rotate(pj, DQuat::from_scaled_axis(w));
                    }
                }
                _ => {}
            }
        }
    }

    /// For a hinge column: its current value (the effector-side angle, radians: the joint's
    /// own angle for an effector-side joint, minus it for a base-side one). `None` for
    /// rotation columns.
    pub fn hinge_value(&self, ctx: &Iteration<'_>, c: usize) -> Option<f64> {
        let dof = self.columns[c];
        let DofKind::Hinge(h) = dof.kind else {
            return None;
        };
        Some(side_sign(dof.joint.side) * ctx.hinge_angle(dof.joint, &h))
    }

    /// For a hinge column: the `[low, high]` bounds of its value (see [`Dofs::hinge_value`]);
    /// infinite for a full-circle hinge. `None` for rotation columns.
    pub fn hinge_bounds(&self, c: usize) -> Option<(f64, f64)> {
        let dof = self.columns[c];
        let DofKind::Hinge(h) = dof.kind else {
            return None;
        };
        if h.is_full_circle() {
            return Some((f64::NEG_INFINITY, f64::INFINITY));
        }
        Some(match dof.joint.side {
            Side::Effector => (h.min, h.max),
            Side::Base => (-h.max, -h.min),
        })
    }

    /// Sets a hinge column to `value` (clamped to its bounds), updating forward kinematics;
    /// returns the value set. `None` (and nothing changes) for rotation columns.
    pub fn set_hinge_value(&self, ctx: &mut Iteration<'_>, c: usize, value: f64) -> Option<f64> {
        let dof = self.columns[c];
        let DofKind::Hinge(h) = dof.kind else {
            return None;
        };
        let sign = side_sign(dof.joint.side);
        Some(sign * ctx.set_hinge_angle(dof.joint, &h, sign * value))
    }

    /// Copies every path joint's local rotation into `saved` (one per path joint), so that a
    /// trial step can be undone with [`Dofs::restore`].
    ///
    /// # Panics
    /// When `saved` is shorter than the path.
    pub fn save(ctx: &Iteration<'_>, saved: &mut [DQuat]) {
        for (k, pj) in ctx.path().joints().iter().enumerate() {
            saved[k] = ctx.pose()[pj.joint].rotation;
        }
    }

    /// Puts back the rotations [`Dofs::save`] copied (through [`Iteration::set_rotation`], so
    /// the base stays in place), then brings the whole model up to date
    /// ([`Iteration::update_model`]): after a restore every joint's model transform is exact,
    /// and a new trial step may start.
    ///
    /// # Panics
    /// When `saved` is shorter than the path.
    pub fn restore(ctx: &mut Iteration<'_>, saved: &[DQuat]) {
        let n = ctx.path().len();
        for (k, &rotation) in saved[..n].iter().enumerate() {
            let pj = ctx.path().joints()[k];
            if ctx.pose()[pj.joint].rotation != rotation {
                ctx.set_rotation(pj, rotation);
            }
        }
        // Mid-sweep, effector-side updates only carry the effectors along, each relative to
        // the model of the joint's parent as it was when the sweep began; undoing them in any
        // order leaves the effectors off by the turns' non-commutativity. One forward
        // kinematics pass makes every joint right again.
        ctx.update_model();
    }
}

fn side_sign(side: Side) -> f64 {
    match side {
        Side::Effector => 1.0,
        Side::Base => -1.0,
    }
}

/// The rotation vector (axis × angle, angle in `[0, π]`) of `q`.
pub fn rotation_vector(q: DQuat) -> DVec3 {
    let q = if q.w < 0.0 { -q } else { q };
    let v = q.xyz();
    let s = v.length();
    if s < 1e-12 {
        // angle / sin(angle / 2) → 2 as the angle goes to 0.
        return 2.0 * v;
    }
    v * (2.0 * s.atan2(q.w) / s)
}

/// How a joint's rotation moves its subtree, given its parent's model transform.
struct ParentMotion {
    /// The parent's model rotation (scale and mirroring removed).
    rotation: DQuat,
    /// `B = A · rotationᵀ` and `B⁻¹` when the parent's linear map `A` is not a rotation.
    stretch: Option<(DMat3, DMat3)>,
}

/// One column's motion: the angular velocity and, under a stretched parent, the linear map.
struct ColumnMotion {
    angular: DVec3,
    /// `M = B [m]× B⁻¹` for stretched parents (`None`: `M = [angular]×`).
    linear: Option<DMat3>,
}

impl ColumnMotion {
    /// Velocity of a point at offset `d` from the joint's origin.
    fn velocity(&self, d: DVec3) -> DVec3 {
        match self.linear {
            None => self.angular.cross(d),
            Some(m) => m * d,
        }
    }
}

impl ParentMotion {
    fn new(skeleton: &Skeleton, ctx: &Iteration<'_>, joint: JointId) -> Self {
        let Some(parent) = skeleton.parent(joint) else {
            return Self {
                rotation: DQuat::IDENTITY,
                stretch: None,
            };
        };
        let model = ctx.model();
        let rotation = model.rotation(parent);
        let r = DMat3::from_quat(rotation);
        let a = model[parent].matrix3;
        let stretch = if a.abs_diff_eq(r, 1e-12) {
            None
        } else {
            let b = a * r.transpose();
            Some((b, b.inverse()))
        };
        Self { rotation, stretch }
    }

    /// The motion of turning about model axis `m` (as if the parent were rigid).
    fn column(&self, m: DVec3, side: Side) -> ColumnMotion {
        let Some((b, b_inv)) = self.stretch else {
            return ColumnMotion {
                angular: m,
                linear: None,
            };
        };
        let skew = DMat3::from_cols(
            DVec3::new(0.0, m.z, -m.y),
            DVec3::new(-m.z, 0.0, m.x),
            DVec3::new(m.y, -m.x, 0.0),
        );
        let linear = b * skew * b_inv;
        // The rotational (skew) part's axial vector.
        let angular = 0.5
            * DVec3::new(
                linear.y_axis.z - linear.z_axis.y,
                linear.z_axis.x - linear.x_axis.z,
                linear.x_axis.y - linear.y_axis.x,
            );
        ColumnMotion {
            angular,
            linear: (side == Side::Effector).then_some(linear),
        }
    }
}
