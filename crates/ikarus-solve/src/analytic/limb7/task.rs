//! The 7-DOF limb as a [`SolverConfig`](crate::SolverConfig) kind: the task engine\n//! ([`solve_task`], the prepared `Limb7Task`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// The 7-DOF limb as a [`SolverConfig`](crate::SolverConfig) kind: `{"kind": "limb7",
/// "swivel": "keep_current" | "middle_of_feasible" | {"fixed": 0.3} | {"nearest_feasible":
/// 0.3}}`. The chain is the task's single effector (wrist), its parent (elbow) and grandparent
/// (shoulder).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limb7Config {
    /// How the swivel is chosen. Default `keep_current`.
    pub swivel: SwivelPolicy,
    /// The elbow's hinge axis in its rest frame when it has no hinge limit; `None` (default)
    /// reads the hinge limit, or takes the current bend's normal (range then the whole circle,
    /// the current bend direction kept).
    pub elbow_axis: Option<[f64; 3]>,
}

/// Solves `task` (one effector: a position goal, and an orientation goal solved by the wrist)
/// as a 7-DOF limb. The report carries the swivel used and, for the feasible policies or when a
/// limit had to be enforced, the feasible swivel intervals.
pub fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &Limb7Config,
    pose: &mut LocalPose,
) -> SolveReport {
    analytic::solve_task(Limb7Task::new(skeleton, task, config), skeleton, task, pose)
}

/// A limb7 task's shape compiled once (the engine of [`solve_task`] and of a
/// [`PreparedTask`](crate::PreparedTask)): the chain validated, the frames it reads listed, and
/// the [`Limb7`] of the last solve kept while the bones it was built from stay the same.
#[derive(Clone, Debug)]
pub(crate) struct Limb7Task {
    /// Shoulder, elbow, wrist.
    pub(super) joints: [JointId; 3],
    /// The shoulder's strict ancestors and then the shoulder → wrist path, root first.
    pub(super) path: Vec<JointId>,
    /// Where the shoulder → wrist part of `path` begins.
    pub(super) chain_from: usize,
    /// The chain, unless its elbow axis is taken from the current bend at each solve.
    pub(super) chain: Option<Limb7Chain>,
    pub(super) config: Limb7Config,
    /// The limb of the last solve, and the local transforms of the shoulder → wrist path it
    /// was built from (the chain joints' rotations, which it does not depend on, as identity).
    pub(super) limb: Option<(Limb7, Vec<Transform>)>,
}

impl Limb7Task {
    /// Validates the task's shape (one effector with two ancestors, no base) and the chain.
    pub(crate) fn new(
        skeleton: &Skeleton,
        task: &IkTask,
        config: &Limb7Config,
    ) -> Result<Self, FitError> {
        let (_, joints) = analytic::chain_of::<3>(skeleton, task, "limb7")?;
        let [shoulder, elbow, wrist] = joints;
        let chain = match (config.elbow_axis, skeleton.limit(elbow)) {
            (None, JointLimit::Hinge(_)) => Some(Limb7Chain::new(skeleton, shoulder, elbow, wrist)),
            (Some(axis), _) => Some(Limb7Chain::with_hinge(
                skeleton,
                joints,
                DVec3::from_array(axis),
                [-PI, PI],
            )),
            (None, _) => None,
        }
        .transpose()?;
        let (path, chain_from) = analytic::frames_path(skeleton, shoulder, wrist);
        Ok(Self {
            joints,
            path,
            chain_from,
            chain,
            config: *config,
            limb: None,
        })
    }

    /// The part of `pose` the limb is built from, for joint `j` of the shoulder → wrist path:
    /// the shoulder's scale, the elbow's and wrist's translation and scale, every transform
    /// between them.
    pub(super) fn bone(&self, pose: &LocalPose, j: JointId) -> Transform {
        let t = pose[j];
        if j == self.joints[0] {
            Transform {
                translation: DVec3::ZERO,
                rotation: DQuat::IDENTITY,
                scale: t.scale,
            }
        } else if self.joints.contains(&j) {
            Transform {
                rotation: DQuat::IDENTITY,
                ..t
            }
        } else {
            t
        }
    }
}

impl ChainEngine for Limb7Task {
    /// The chain's joints, shoulder first.
    fn chain(&self) -> &[JointId] {
        &self.path[self.chain_from..]
    }

    /// Computes into `model` the frames [`solve`](Self::solve) reads: the shoulder's
    /// ancestors, and the chain when the elbow axis comes from its current bend.
    fn update_frames(&self, skeleton: &Skeleton, pose: &LocalPose, model: &mut ModelPose) {
        let read = if self.chain.is_some() {
            &self.path[..self.chain_from]
        } else {
            &self.path[..]
        };
        fk::update_joints(skeleton, pose, model, read);
    }

    /// Solves `task` (the shape given to [`new`](Self::new), its goals now) on `pose`, with
    /// `model` holding the frames [`update_frames`](Self::update_frames) computes (or the
    /// caller's forward kinematics of `pose`); afterwards `model` holds the chain's new frames
    /// (the rest of its subtree is stale).
    fn solve_chain(
        &mut self,
        skeleton: &Skeleton,
        task: &IkTask,
        pose: &mut LocalPose,
        model: &mut ModelPose,
    ) -> SolveReport {
        let effector = task.effectors[0];
        let Some(position) = effector.goal.position else {
            return SolveReport::invalid("`limb7` needs a position goal");
        };
        let [shoulder, elbow, wrist] = self.joints;
        let chain_path = &self.path[self.chain_from..];
        let rebuilt;
        let chain = if let Some(chain) = &self.chain {
            chain
        } else {
            // The elbow axis from the current bend (range the whole circle).
            let (s, e, w) = (
                model.position(shoulder),
                model.position(elbow),
                model.position(wrist),
            );
            let current = model.rotation(elbow).inverse() * (e - s).cross(w - e);
            let axis = skeleton.rest(elbow).rotation.inverse() * (pose[elbow].rotation * current);
            rebuilt = match Limb7Chain::with_hinge(skeleton, self.joints, axis, [-PI, PI]) {
                Ok(chain) => chain,
                Err(error) => return SolveReport::invalid(error.to_string()),
            };
            &rebuilt
        };
        // The kept limb stays in place (a `Limb7` is a few hundred bytes: no move per solve).
        let kept = self.limb.as_ref().is_some_and(|(_, bones)| {
            chain_path
                .iter()
                .zip(bones)
                .all(|(&j, bone)| self.bone(pose, j) == *bone)
        });
        let rebuilt_limb;
        let limb = match (&self.limb, kept) {
            (Some((limb, _)), true) => limb,
            _ => match chain.limb(skeleton, pose) {
                Ok(limb) => {
                    rebuilt_limb = limb;
                    &rebuilt_limb
                }
                Err(error) => return SolveReport::invalid(error.to_string()),
            },
        };
        let goal = Limb7Goal {
            position,
            orientation: effector.goal.orientation,
        };
        let outcome = match solve_chain_in(
            skeleton,
            chain,
            limb,
            &goal,
            self.config.swivel,
            pose,
            model,
        ) {
            Ok(outcome) => outcome,
            Err(error) => return SolveReport::invalid(error.to_string()),
        };
        if self.chain.is_some() && !kept {
            let bones = chain_path.iter().map(|&j| self.bone(pose, j)).collect();
            self.limb = Some((*limb, bones));
        }
        fk::update_joints(skeleton, pose, model, chain_path);
        // `solve_chain_in` enforced the three limits already.
        let mut report = analytic::report(task, outcome.reached, outcome.limited, model);
        if let (SolveStatus::Unreachable, SwivelPolicy::Fixed(_), Some(feasible)) =
            (report.status, self.config.swivel, &outcome.feasible)
            && !feasible.is_empty()
            && outcome.in_reach
        {
            // Only the swivel was in the way: another one is feasible. Not "unreachable".
            report.status = SolveStatus::MaxIterations;
            report.message = Some(format!(
                "the fixed swivel {:.4} rad puts {} outside the limits (projected); feasible \
                 swivels exist, use `nearest_feasible` or `keep_current`",
                outcome.swivel,
                report.active_limits.join(", ")
            ));
        }
        report.swivel = Some(outcome.swivel);
        report.feasible_swivels = outcome
            .feasible
            .map(|intervals| intervals.iter().map(|i| [i.start, i.end]).collect());
        report
    }
}
