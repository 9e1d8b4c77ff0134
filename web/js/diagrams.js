// The user's diagrams beside the editor: each with its status and, while it runs, live charts
// of its progress over the viewer's clock, one line per output: rows processed per second and
// the last end-to-end latency, polled from the status endpoint, and a "behind" badge while one
// of its outputs falls behind (docs/editor.md, "Backlog"); each status polled is also handed to
// `onProgress(name, progress)` (the editor shows its box counts and failure on the canvas).
import * as api from "./api.js";
import { TimeChart } from "./charts.js";
import { el, KeptRows } from "./dom.js";

const POLL_MS = 2000;

export class DiagramList {
  constructor(onOpen, onProgress = () => {}) {
    this.onOpen = onOpen;
    this.onProgress = onProgress;
    this.names = new Set();
    this.charts = new Map();   // running diagram -> {rate, latency, outputs: their names}
    this.behind = new Set();   // running diagrams whose last status said they fall behind
    this.body = el("ul", { class: "diagram-list" });
    this.rows = new KeptRows(this.body, (d) => this.row(d));
    this.element = el("section", { class: "diagrams", "aria-labelledby": "diagrams-title" },
      el("h2", { id: "diagrams-title" }, "Your diagrams"), this.body);
    this.timer = null;
  }

  has(name) {
    return this.names.has(name);
  }

  async refresh() {
    const { diagrams } = await api.get("/diagrams");
    this.names = new Set(diagrams.map((d) => d.name));
    const running = new Set(diagrams.filter((d) => d.status === "running").map((d) => d.name));
    for (const name of this.charts.keys()) if (!running.has(name)) this.forget(name);
    this.rows.show(diagrams, el("li", { class: "hint" }, "No diagrams yet."));
    // a failed one (given up on) is sampled once, so the editor shows its failure
    const failed = diagrams.filter((d) => d.status === "failed").map((d) => d.name);
    this.poll([...running, ...failed]);
  }

  row(diagram) {
    const charts = diagram.status === "running" ? this.chartsOf(diagram.name) : null;
    return el("li", { "data-diagram": diagram.name },
      el("button", { type: "button", class: "link", onclick: () => this.onOpen(diagram.name) }, diagram.name),
      " ", el("span", { class: `status status-${diagram.status}` }, diagram.status),
      behindBadge(this.behind.has(diagram.name)),
      el("span", { class: "owner" }, `owner ${diagram.owner.user} (${diagram.owner.role})`),
      charts ? el("div", { class: "charts" }, charts.rate.element, charts.latency.element) : null);
  }

  chartsOf(name) {
    if (!this.charts.has(name)) {
      this.charts.set(name, {
        rate: new TimeChart("rows/s", { compact: true, height: 110 }),
        latency: new TimeChart("latency (s)", { compact: true, height: 110, unit: " s" }),
        outputs: "",
      });
    }
    return this.charts.get(name);
  }

  /** Poll the running diagrams' progress until none runs (any other is sampled once). */
  poll(running) {
    clearTimeout(this.timer);
    if (!running.length) return;
    this.timer = setTimeout(async () => {
      await Promise.all(running.map((name) => this.sample(name)));
      this.poll(running.filter((name) => this.charts.has(name)));
    }, POLL_MS);
  }

  async sample(name) {
    try {
      const { progress } = await api.get(`/diagrams/${api.seg(name)}/status`);
      this.onProgress(name, progress);
      this.markBehind(name, Boolean(progress?.behind));
      const outputs = Object.entries(progress?.outputs || {});
      const charts = this.charts.get(name);
      if (!charts) return;   // forgotten meanwhile: no longer running
      const names = outputs.map(([output]) => output);
      if (names.join("\n") !== charts.outputs) {   // first sample, or the outputs changed
        charts.outputs = names.join("\n");
        charts.rate.reset(names);
        charts.latency.reset(names);
      }
      const now = Date.now() / 1000;
      const pick = (read) => Object.fromEntries(outputs.map(([output, o]) => [output, read(o)]));
      charts.rate.add([[now, pick((o) => o.processed_rows_per_second)]]);
      charts.latency.add([[now, pick((o) => (o.latency_ms == null ? null : o.latency_ms / 1000))]]);
    } catch (error) {
      this.forget(name);   // gone or no longer visible: the next refresh redraws the list
    }
  }

  /** Show or take away a diagram's "behind" badge in its row. */
  markBehind(name, behind) {
    if (this.behind.has(name) === behind) return;
    if (behind) this.behind.add(name);
    else this.behind.delete(name);
    const row = [...this.body.children].find((li) => li.dataset.diagram === name);
    row?.querySelector(".badge-behind")?.remove();
    const badge = behindBadge(behind);
    if (badge) row?.querySelector(".status")?.after(badge);
  }

  forget(name) {
    this.markBehind(name, false);
    const charts = this.charts.get(name);
    if (!charts) return;
    charts.rate.dispose();
    charts.latency.dispose();
    this.charts.delete(name);
    this.rows.redraw((d) => d.name === name);   // its row holds the disposed charts
  }

  stop() {
    clearTimeout(this.timer);
  }
}

function behindBadge(behind) {
  return behind ? el("span", { class: "badge-behind", role: "status",
    title: "an output has more rows waiting than it reads in 10 s: see the backlog on the canvas" }, "behind") : null;
}
