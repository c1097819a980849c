// The side panel: solver menu and parameters (built from the server's default configurations),
// the live report, the residual-per-iteration chart and the swivel slider (limb7, and auto on
// S-R-S robot arms).

const $ = (id) => document.getElementById(id);
/** Shortest time between two updates of the report text, milliseconds. */
const REPORT_INTERVAL_MS = 100;

/** Solver menu and parameter inputs; `apply(config)` is called with the edited configuration. */
export class SolverPanel {
  constructor(apply) {
    this.apply = apply;
    this.choices = [];
    this.config = null;
    $('solver').addEventListener('change', () => this.choose($('solver').value));
    $('swivel').addEventListener('input', () => {
      if (!this.config) return;
      this.config.swivel = { nearest_feasible: Number($('swivel').value) };
      this.show(this.config);
      this.apply(this.config);
    });
  }

  /** Fills the menu from the welcome's `solvers` and selects `kind`. */
  setChoices(choices, kind) {
    this.choices = choices;
    $('solver').replaceChildren(...choices.map((c) => new Option(c.kind, c.kind)));
    $('solver').value = kind;
    this.show(structuredClone(choices.find((c) => c.kind === kind)?.config ?? { kind }));
  }

  /** Shows `kind` (the server already uses it) without sending it back. */
  select(kind) {
    const choice = this.choices.find((c) => c.kind === kind);
    if (!choice) return;
    $('solver').value = kind;
    this.show(structuredClone(choice.config));
  }

  choose(kind) {
    const choice = this.choices.find((c) => c.kind === kind);
    if (!choice) return;
    this.show(structuredClone(choice.config));
    this.apply(this.config);
  }

  /** One input per parameter leaf (numbers, strings, booleans), nested names joined by dots. */
  show(config) {
    this.config = config;
    const inputs = [];
    const walk = (object, prefix) => {
      for (const [key, value] of Object.entries(object)) {
        if (key === 'kind' && !prefix) continue;
        const name = prefix ? `${prefix}.${key}` : key;
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
          walk(value, name);
          continue;
        }
        const input = document.createElement('input');
        input.dataset.path = name;
        if (typeof value === 'boolean') { input.type = 'checkbox'; input.checked = value; }
        else if (typeof value === 'number') { input.type = 'number'; input.step = 'any'; input.value = value; }
        else input.value = typeof value === 'string' ? value : JSON.stringify(value);
        input.addEventListener('change', () => this.edit(object, key, input));
        const label = document.createElement('label');
        label.append(name, input);
        inputs.push(label);
      }
    };
    walk(config, '');
    $('params').replaceChildren(...inputs);
    // limb7, and auto (whose closed form on an S-R-S robot arm takes the same swivel).
    $('swivel-box').hidden = config.kind !== 'limb7' && config.kind !== 'auto';
  }

  edit(object, key, input) {
    if (input.type === 'checkbox') object[key] = input.checked;
    else if (input.type === 'number') object[key] = Number(input.value);
    else {
      // Plain words are strings ("classic", "keep_current"); JSON for the rest
      // ({"fixed": 0.5}, [0, 0, 1], null).
      const text = input.value.trim();
      try { object[key] = /^[[{"\d-]|^(null|true|false)$/.test(text) ? JSON.parse(text) : text; } catch { object[key] = text; }
    }
    this.apply(this.config);
  }

  /**
   * The live report, at most every `REPORT_INTERVAL_MS`: a drag brings a report with every pose
   * (up to the display's frame rate), more than anyone reads, and each text change costs the
   * browser a layout and a repaint of the panel. The last report is always shown.
   */
  showReport(report) {
    this.report = report;
    if (this.reportTimer) return;
    const wait = Math.max(0, (this.reportShown ?? -Infinity) + REPORT_INTERVAL_MS - performance.now());
    this.reportTimer = setTimeout(() => {
      this.reportTimer = null;
      this.reportShown = performance.now();
      this.writeReport(this.report);
    }, wait);
  }

  /** The report and, for limb7, the feasible swivel ranges. */
  writeReport(report) {
    const box = $('report');
    if (!report) return;
    const fmt = (x) => (x === null || x === undefined ? '∞' : Number(x).toExponential(2));
    const lines = [
      `${report.solver}: ${report.status}`,
      `position error ${fmt(report.position_error)}  rotation ${fmt(report.rotation_error)} rad`,
      `iterations ${report.iterations}  restarts ${report.restarts ?? 0}  ${report.time_us.toFixed(1)} µs`,
    ];
    if (report.active_limits?.length) lines.push(`active limits: ${report.active_limits.join(', ')}`);
    if (report.swivel !== undefined) lines.push(`swivel ${report.swivel.toFixed(3)} rad`);
    if (report.message) lines.push(report.message);
    box.textContent = lines.join('\n');
    box.className = report.status === 'converged' ? 'converged' : 'failed';
    this.drawFeasible(report);
  }

  drawFeasible(report) {
    const canvas = $('feasible'), g = canvas.getContext('2d');
    g.clearRect(0, 0, canvas.width, canvas.height);
    const x = (a) => (a + Math.PI) / (2 * Math.PI) * canvas.width;
    g.fillStyle = '#3d6';
    for (const [start, end] of report.feasible_swivels ?? []) {
      // Counter-clockwise from start; split where it wraps past π.
      const e = end >= start ? end : end + 2 * Math.PI;
      for (const [a, b] of [[start, Math.min(e, Math.PI)], [-Math.PI, e - 2 * Math.PI]]) {
        if (b > a) g.fillRect(x(a), 0, x(b) - x(a), canvas.height);
      }
    }
    if (report.swivel !== undefined) {
      g.fillStyle = '#fff';
      g.fillRect(x(report.swivel) - 1, 0, 2, canvas.height);
    }
  }

  /** log10 of the position error after each iteration (the server's `trace`). */
  drawTrace(trace) {
    const canvas = $('chart'), g = canvas.getContext('2d');
    g.clearRect(0, 0, canvas.width, canvas.height);
    const errors = trace.position_errors.map((e) => Math.log10(Math.max(e ?? 1, 1e-12)));
    if (!errors.length) return;
    const lo = Math.min(...errors, -5), hi = Math.max(...errors, -1);
    const x = (i) => 4 + i / Math.max(errors.length - 1, 1) * (canvas.width - 8);
    const y = (v) => 4 + (hi - v) / (hi - lo) * (canvas.height - 8);
    g.strokeStyle = '#555'; g.beginPath(); g.moveTo(0, y(-4)); g.lineTo(canvas.width, y(-4)); g.stroke();
    g.strokeStyle = '#fb0'; g.beginPath();
    errors.forEach((v, i) => (i ? g.lineTo(x(i), y(v)) : g.moveTo(x(i), y(v))));
    g.stroke();
    g.fillStyle = '#8a93a0'; g.font = '10px sans-serif';
    g.fillText(`log10 residual, ${errors.length} iterations (line: 1e-4)`, 4, canvas.height - 4);
  }
}
