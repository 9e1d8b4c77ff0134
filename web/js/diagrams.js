// The user's diagrams beside the editor: each with its status and, while it runs, small live
// charts of its progress (rows per second over all its outputs, and the slowest output's last
// end-to-end latency), polled from the status endpoint.
import * as api from "./api.js";
import { Sparkline } from "./charts.js";
import { el, fill } from "./dom.js";

const POLL_MS = 2000;

export class DiagramList {
  constructor(onOpen) {
    this.onOpen = onOpen;
    this.names = new Set();
    this.charts = new Map();   // diagram name -> {rate, latency}
    this.body = el("ul", { class: "diagram-list" });
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
    for (const name of this.charts.keys()) if (!this.names.has(name)) this.charts.delete(name);
    fill(this.body, diagrams.length ? diagrams.map((d) => this.row(d))
      : el("li", { class: "hint" }, "No diagrams yet."));
    this.poll(diagrams.filter((d) => d.status === "running").map((d) => d.name));
  }

  row(diagram) {
    const charts = diagram.status === "running" ? this.chartsOf(diagram.name) : null;
    return el("li", { "data-diagram": diagram.name },
      el("button", { type: "button", class: "link", onclick: () => this.onOpen(diagram.name) }, diagram.name),
      " ", el("span", { class: `status status-${diagram.status}` }, diagram.status),
      el("span", { class: "owner" }, `owner ${diagram.owner.user} (${diagram.owner.role})`),
      charts ? el("div", { class: "charts" }, charts.rate.element, charts.latency.element) : null);
  }

  chartsOf(name) {
    if (!this.charts.has(name)) {
      this.charts.set(name, {
        rate: new Sparkline("rows/s", { width: 120, height: 28 }),
        latency: new Sparkline("latency", { width: 120, height: 28, unit: " ms" }),
      });
    }
    return this.charts.get(name);
  }

  /** Poll the running diagrams' progress until none runs. */
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
      const outputs = Object.values(progress?.outputs || {});
      const charts = this.chartsOf(name);
      charts.rate.push(outputs.reduce((sum, o) => sum + (o.processed_rows_per_second || 0), 0));
      charts.latency.push(Math.max(...outputs.map((o) => o.latency_ms).filter(Number.isFinite)));
    } catch (error) {
      this.charts.delete(name);   // gone or no longer visible: the next refresh redraws the list
    }
  }

  stop() {
    clearTimeout(this.timer);
  }
}
