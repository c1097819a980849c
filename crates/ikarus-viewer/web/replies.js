// The server's replies, one handler per `type`: what each changes in the state, the page and
// the test hooks.
import { $, state } from './state.js';
import { appState, overlayHook } from './hooks.js';

/**
 * The handlers by reply type, on the page's parts: `view` (the scene), `panel` (the solver
 * menu and report) and the page's actions `setMotion`, `showError`, `download`, `dragDone`
 * and `attachGizmo`.
 */
export function replyHandlers({ view, panel, setMotion, showError, download, dragDone, attachGizmo }) {
  return {
    welcome(reply) {
      panel.setChoices(reply.solvers, 'ccd');
      $('source').replaceChildren(...reply.sources.map((s) => new Option(s, s)));
      state.maxUpload = reply.max_upload;
    },
    skeleton(reply) {
      state.skeleton = reply;
      appState.skeleton = reply.name;
      appState.format = reply.format;
      appState.jointCount = reply.joints.length;
      appState.motion = reply.motion;
      // The server's solver after the load (its default for this skeleton, or the choice).
      if (reply.solver && reply.solver !== appState.solver) {
        appState.solver = reply.solver;
        panel.select(reply.solver);
      }
      if (![...$('source').options].some((o) => o.value === reply.name)) {
        // An upload: shown, but reloading it means dropping the file again.
        const option = new Option(reply.name, reply.name);
        option.disabled = true;
        $('source').add(option);
      }
      $('source').value = reply.name;
      $('terrain').value = '';
      $('grounding').hidden = true;
      appState.terrain = appState.grounding = null;
      $('report').textContent = 'no solve yet';
      panel.drawTrace({ position_errors: [] });
      $('report').className = '';
      setMotion(reply.motion);
      // MMD models: the IK switch (the server evaluates the rig with or without its chains).
      $('ik-box').hidden = !reply.ik_chains.length;
      appState.ikChains = reply.ik_chains;
      appState.mesh = null;
      state.mesh = null;
      state.pose = null;
    },
    mesh(reply) {
      // Drawn with the skeleton at the first pose after it.
      state.mesh = reply;
      appState.mesh = {
        vertices: reply.vertices, materials: reply.materials.length, textures: reply.materials.filter((m) => m.texture).length,
        // Triangles of the skin drawn while dragging on a software renderer (null: the full skin).
        get dragTriangles() { return view.skin?.lod?.triangles ?? null; },
      };
    },
    pose(reply) {
      const first = state.pose === null;
      state.pose = reply;
      if (first) {
        view.setSkeleton(state.skeleton, reply);
        if (state.mesh) view.setMesh(state.mesh);
      }
      view.queuePose(reply, !first && reply.frame !== null);
      appState.poses++;
      appState.selected = reply.effectors.map((e) => e.joint);
      appState.effectors = reply.effectors;
      appState.base = reply.base;
      appState.frame = reply.frame;
      appState.ik = reply.ik;
      // A retargeted motion's source drawn beside the target (screen positions when read).
      appState.overlay = reply.overlay ? overlayHook(reply.overlay) : null;
      if (reply.ik) $('ik').checked = reply.ik.enabled;
      if (reply.report) {
        appState.lastReport = reply.report;
        panel.showReport(reply.report);
      }
      if (reply.frame !== null) {
        $('scrub').value = reply.frame;
        $('frame').textContent = `${reply.frame + 1} / ${appState.motion?.frames ?? 0}`;
      }
      $('undo').disabled = !reply.can_undo;
      $('redo').disabled = !reply.can_redo;
      const gizmoJoint = state.selectedJoint ?? appState.selected.at(-1);
      const target = reply.effectors.find((e) => e.joint === gizmoJoint);
      if (target && $('rotate').checked && !view.gizmo.dragging) attachGizmo(target);
      if (!$('rotate').checked) view.gizmo.detach();
      state.frameInFlight = false;
      dragDone();
    },
    trace(reply) {
      panel.drawTrace(reply);
      appState.trace = reply.position_errors;
    },
    keys(reply) {
      appState.keys = reply.count;
      $('keys').textContent = `${reply.count} key${reply.count === 1 ? '' : 's'}`;
    },
    terrain(reply) {
      view.setTerrain(reply.terrain);
      const t = reply.terrain;
      appState.terrain = t ? { rows: t.heights.length, columns: t.heights[0].length, cell: t.cell, origin: t.origin } : null;
    },
    motion(reply) {
      setMotion(reply);
      // After grounding: what it measured (another motion stands on its own floor).
      appState.grounding = reply.grounding ?? null;
      if (!reply.grounding) {
        view.setTerrain(null);
        appState.terrain = null;
        $('terrain').value = '';
      }
      $('grounding').hidden = !reply.grounding;
      if (reply.grounding) {
        const g = reply.grounding;
        $('grounding').textContent = `${g.contacts} foot contacts, pelvis ${(g.pelvis_range[0] * 100).toFixed(1)} to ${(g.pelvis_range[1] * 100).toFixed(1)} cm, ${g.unreached} frames unreached`;
      }
      // After a tracker replay: what the solve measured.
      appState.tracking = reply.tracking ?? null;
      const line = $('tracking');
      line.hidden = !reply.tracking;
      if (reply.tracking) {
        const t = reply.tracking;
        const truth = t.mpjpe == null ? '' : `, ${(t.mpjpe * 100).toFixed(1)} cm from the truth`;
        line.textContent = `${t.points} trackers, scale ${t.scale.toFixed(3)}, ${t.steps} steps, ${t.held_frames} frames held, ${t.unconverged} not converged${truth}`;
      }
    },
    bvh(reply) {
      download(reply.name, reply.text);
      appState.exported = reply.text.length;
    },
    error(reply) {
      showError(reply.message);
      state.frameInFlight = false;
      dragDone();
    },
  };
}
